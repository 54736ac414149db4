"""Approximate KPL for many curves: Nyström and random Fourier features, solved in primal form.

Exact KPL needs the ``n x n`` kernel matrix and its eigendecomposition
(``O(n^3)``). With an explicit feature map ``z: X -> R^r`` such that
``k(x, x') ~ z(x)^T z(x')``, the vector-valued RKHS of ``z(x)^T z(x') B`` is the
set of linear maps ``h(x) = M^T z(x)`` (``M`` is ``r x d``) with norm
``||h||^2 = tr(M B^{-1} M^T)``. The KPL ridge objective (the paper's
Proposition 4.2, with inner products ``nu_i = <y_i, phi>`` of the centred
responses)::

    (1/n) sum_i [ h(x_i)^T G h(x_i) - 2 nu_i^T h(x_i) ] + lam ||h||^2

has the normal equations ``S M G + n lam M B^{-1} = Z^T N`` with
``S = Z^T Z`` (``r x r``) and ``Z^T N`` (``r x d``). Writing
``M = W B^{1/2}`` gives ``S W C + n lam W = Z^T N B^{1/2}`` with
``C = B^{1/2} G B^{1/2}``; with ``S = P diag(t) P^T`` and
``C = V diag(e) V^T``::

    M = P [ Q / (t e^T + n lam) ] V^T B^{1/2},   Q = P^T (Z^T N) B^{1/2} V,

so one pair of eigendecompositions (``r x r`` and ``d x d``) serves the whole
lambda path, and the data enter only through the sufficient statistics
``Z^T Z``, ``Z^T N`` (and ``N^T N`` for GCV), which are sums over samples and
therefore accumulate over chunks (:mod:`fdakpl.solvers.streaming`). Predicted
coefficients at new inputs are ``Z_new M``. If ``Z Z^T = K`` and
``Z_new Z^T = K_new`` (Nyström with every training point as a landmark and an
invertible ``K``), then ``M = Z^T A B`` for the exact solution ``A`` and the
predictions coincide with exact KPL.

GCV (:meth:`PrimalDecomposition.gcv`) is computed on coefficient-space
residuals; see that method for the exact definition.

Feature maps
------------
* :class:`Nystroem` -- any fdakpl kernel; ``z(x) = k(x, L) U diag(s)^{-1/2}``
  for landmarks ``L`` (uniformly drawn training inputs or k-means centroids)
  with ``k(L, L) = U diag(s) U^T`` (eigenvalues below ``rcond * max(s)``
  dropped, so the rank can be below ``n_components``).
* :class:`RandomFourierFeatures` -- Gaussian kernels ``exp(-d^2 / (2 sigma^2))``
  (and products of Gaussian kernels over terms):
  ``z(x) = sqrt(2 / r) cos(Omega^T x~ + b)`` with ``x~ = sqrt(w) x / sigma``
  (``w`` the quadrature weights of a curve input, so the L2 geometry is kept),
  ``Omega ~ N(0, I)``, ``b ~ U(0, 2 pi)``.

The estimator :class:`ApproxKPLRegressor` (``FunctionalRegression(..., approx=Nystroem(...))`` fits
through it) fits in-memory arrays chunk by chunk
and dask-backed xarray data without loading them, on the local dask scheduler
or on a ``dask.distributed`` cluster.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import clone
from sklearn.utils.validation import check_is_fitted

from ..data.functional import Observations
from ..data.integration import MODES, integration_rule
from ..data.preprocessing import MeanFunction, check_same_samples
from ..data.validation import check_bool, check_grid, check_lam
from ..dictionaries import (
    Dictionary,
    Fourier,  # noqa: F401  (the examples in the docstrings use it)
    output_dictionary,
)
from ..kernels import Kernel, make_output_matrix
from ..losses import is_square
from ..ridge.problem import unsupported_atoms_message
from ..solvers.features import (
    FeatureMap,
    Nystroem,
    RandomFourierFeatures,
    as_generator,
)
from ..solvers.primal import PrimalDecomposition, SufficientStats, primal_decompose
from ..tuning.criteria import DEFAULT_LAMBDAS
from ..utils.notices import warn
from ..utils.saved import saved
from .base import FunctionalEstimator

__all__ = [
    "ApproxKPLRegressor",
    "Nystroem",
    "PrimalDecomposition",
    "RandomFourierFeatures",
    "SufficientStats",
    "check_square_loss",
    "primal_decompose",
]


# --------------------------------------------------------------------------
# estimator
# --------------------------------------------------------------------------


@saved("dictionary", "kernel", "output_matrix", "lam", "center", "integration", "domain", "interpolate_inputs",
       "approx", "chunk_size", "dictionary_sample", "random_state", "progress", "criterion", "loss",
       "coef_", "kernel_", "approx_", "approx_description_", "primal_", "stats_", "lam_", "lams_", "gcv_", "scores_",
       "criterion_", "edf_", "dictionary_", "B_", "gram_", "mean_", "integration_", "grid_", "response_info_",
       "input_spec_", "n_features_in_", "n_samples_fit_")
class ApproxKPLRegressor(FunctionalEstimator):
    """KPL with an approximate feature map, for many curves, in memory or on dask.

    Same model and API as :class:`~fdakpl.estimators.kpl.KPLRegressor` (square
    loss, closed form), with ``k(x, x') ~ z(x)^T z(x')`` from ``approx``; the
    fit costs ``O(n r (p + r + d) + r^3)`` time (``p``: input size) and ``O((r + d)^2)`` memory beyond
    one chunk. Inputs and responses may be NumPy arrays (processed
    ``chunk_size`` samples at a time), labelled DataArrays / Datasets of terms,
    or dask-backed DataArrays (e.g. ``xr.open_zarr(path)`` or
    ``xr.open_dataset(path, chunks={"sample": 50_000})``): their chunks along
    ``sample`` are reduced by dask, so nothing is loaded whole, on the local
    scheduler or on a ``dask.distributed`` cluster when a ``Client`` is
    active. Partially observed responses (NaN = unobserved) are integrated as
    the exact fits integrate them: ``integration="auto"`` chooses from the
    first pass's counts, per chunk, each curve's linear interpolant on the
    observed grid points (``"interpolate"``, dense curves with gaps) or the
    plug-in inner products (``"plugin"``, sparse curves); ``"quadrature"``
    needs complete curves here. The mean function for centring is computed in
    the first streaming pass (sums and counts per grid point).

    Parameters
    ----------
    dictionary, kernel, output_matrix, center, integration, domain, interpolate_inputs
        As in :class:`~fdakpl.estimators.kpl.KPLRegressor`. A data-dependent
        dictionary (FPCA, learnt) is fitted on a uniform subsample of at most
        ``dictionary_sample`` centred curves.
    lam : float, "loo", "gcv" or array-like
        A fixed ``lambda > 0``, or candidates chosen by ``criterion``; ``"loo"`` / ``"gcv"``
        use :data:`fdakpl.tuning.criteria.DEFAULT_LAMBDAS` with that criterion.
    criterion : {"loo", "gcv"}
        How candidates are chosen: exact leave-one-curve-out given the feature map
        (:func:`fdakpl.tuning.primal.primal_loo_terms`; one more streaming pass), or GCV on
        coefficient-space residuals (:meth:`PrimalDecomposition.gcv`; from the statistics alone,
        but it leaves out single points of dependent curves and undersmooths).
    approx : Nystroem or RandomFourierFeatures, optional
        Default: ``Nystroem(min(300, n))`` with uniform landmarks.
    chunk_size : int
        Samples per chunk for in-memory inputs (dask inputs keep their own chunks).
    dictionary_sample : int
        Subsample size for data-dependent dictionaries.
    random_state : int, numpy.random.Generator or None, default 0
        Seed of that subsample; the default 0 gives the same result on every run, ``None`` draws
        fresh randomness.
    progress : bool or None
        Progress bar over chunks (in-memory inputs) or dask's progress bar
        (local scheduler); ``None`` follows ``FDAKPL_PROGRESS``.
    loss : str, GroundLoss or None, default "square"
        The square loss only (the primal closed form solves it): ``"square"``, ``"l2"``,
        ``None`` or ``Square()`` (:func:`fdakpl.losses.is_square`); accepted so that the
        parameters of :class:`~fdakpl.estimators.kpl.KPLRegressor` carry over. A robust loss
        raises, pointing to the exact iterative solver.

    Attributes
    ----------
    coef_ : numpy.ndarray, shape (r, d)
        Primal weights ``M`` at ``lam_`` (feature x atom): predicted coefficients are ``z(x)^T M``.
        There is no ``dual_coef_``: the representer coefficients of exact fits are never formed.
    approx_ : fitted feature map
    primal_ : PrimalDecomposition
    stats_ : SufficientStats
    lam_ : float
    lams_, gcv_, scores_ : numpy.ndarray or None
        The candidate lambdas, their GCV values and the values of the criterion that chose
        lambda, when lambda was selected.
    criterion_ : str or None
    edf_ : float
    approx_description_ : str
        E.g. ``"Nyström, 300 uniform landmarks"``.
    dictionary_, B_, gram_, mean_, integration_, grid_, response_info_, input_spec_, n_samples_fit_
        As in :class:`~fdakpl.estimators.kpl.KPLRegressor`.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, size=(400, 2)); grid = np.linspace(0, 1, 30)
    >>> Y = np.sin(np.pi * X[:, :1] * grid) + 0.05 * rng.normal(size=(400, 30))
    >>> model = ApproxKPLRegressor(dictionary=Fourier(4), approx=Nystroem(50), lam="gcv", chunk_size=100)
    >>> model.fit(X, Y, locations=grid).predict(X[:2]).shape
    (2, 30)
    >>> model.approx_description_  # the landmarks' kernel matrix is numerically rank deficient here
    'Nyström, 50 uniform landmarks (rank ...)'
    """

    def __init__(self, dictionary: str | Dictionary = "auto", kernel: Kernel | None = None,
                 output_matrix: Any = None, lam: Any = 1e-3, center: bool = True, integration: str = "auto",
                 domain: tuple[float, float] | None = None, interpolate_inputs: bool = False,
                 approx: Any = None, chunk_size: int = 20_000, dictionary_sample: int = 10_000,
                 random_state: Any = 0, progress: bool | None = None, criterion: str = "loo",
                 loss: Any = "square") -> None:
        self.dictionary = dictionary
        self.kernel = kernel
        self.output_matrix = output_matrix
        self.lam = lam
        self.center = center
        self.integration = integration
        self.domain = domain
        self.interpolate_inputs = interpolate_inputs
        self.approx = approx
        self.chunk_size = chunk_size
        self.dictionary_sample = dictionary_sample
        self.random_state = random_state
        self.progress = progress
        self.criterion = criterion
        self.loss = loss

    # ------------------------------------------------------------------
    def _lams(self) -> np.ndarray | None:
        lam = self.lam
        if isinstance(lam, str):
            if lam not in {"gcv", "loo"}:
                raise ValueError(f"lam must be a number > 0, 'loo', 'gcv' or a sequence of candidates, got {lam!r}")
            return DEFAULT_LAMBDAS
        if np.ndim(lam) == 0:
            check_lam(lam)
            return None
        return check_grid(np.ravel(lam), "lam", sort=False)

    def _criterion(self) -> str:
        crit = self.lam if isinstance(self.lam, str) else self.criterion
        if crit not in {"loo", "gcv"}:
            raise ValueError(f"criterion must be 'loo' or 'gcv', got {crit!r}")
        return str(crit)

    def _check_params(self) -> None:
        check_square_loss(self.loss)
        check_bool(self.center, "center")
        check_bool(self.interpolate_inputs, "interpolate_inputs")
        check_bool(self.progress, "progress", none=True)
        self._kernel()
        self._lams()
        self._criterion()
        if self.integration not in MODES:
            raise ValueError(f"integration must be one of {', '.join(map(repr, MODES))}, got {self.integration!r}")
        for name in ("chunk_size", "dictionary_sample"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
                raise ValueError(f"{name} must be an integer >= 1, got {v!r}")
        if self.approx is not None and not isinstance(self.approx, FeatureMap):
            raise TypeError(f"approx must be Nystroem(...) or RandomFourierFeatures(...), got {self.approx!r}")

    # ------------------------------------------------------------------
    def fit(self, X: Any, Y: Any, locations: Any = None) -> ApproxKPLRegressor:
        """Fit by streaming passes over the samples.

        Parameters
        ----------
        X : array-like, DataArray, Dataset or mapping of terms (NumPy- or dask-backed)
        Y : DataArray or array ``(n, m)`` (NumPy- or dask-backed), NaN = unobserved
        locations : array-like, optional
            Locations of the columns of an array ``Y``.

        Returns
        -------
        self
        """
        from ..solvers import streaming as st

        self._check_fit_arguments(Y)
        kernel = self.kernel_ = self._kernel()
        inputs = st.as_inputs(X, interpolate=self.interpolate_inputs)
        resp = st.as_response(Y, locations, self.domain)
        n = resp.n
        check_same_samples(inputs.n, inputs.labels, n, resp.info.labels)
        plan = st.ChunkPlan.of(inputs, resp, self.chunk_size)
        info = resp.info
        grid = info.grid
        assert grid is not None
        dom = info.domain
        self._set_training_info(info, inputs.spec)

        # pass 1: sums and counts per grid point (mean function, fully observed or not)
        sums, counts, per_curve = st.mean_pass(plan, progress=self.progress)
        complete = bool(np.all(counts == n))
        seen = np.flatnonzero(counts > 0)  # the grid columns some curve observes
        if self.integration == "auto":  # as the exact fits choose (fdakpl.data.integration.auto_integration)
            mode = "quadrature" if complete else integration_rule(per_curve, seen.size)
        else:
            mode = self.integration
        if mode == "interpolate" and complete:
            mode = "quadrature"  # nothing to fill: the same numbers
        if mode == "quadrature" and not complete:
            raise ValueError("integration='quadrature' needs every curve observed on the whole grid in the approximate "
                             "fit (it streams the curves); use 'interpolate' (each curve's linear interpolant) or "
                             "'plugin'")
        self.integration_ = mode
        self.mean_ = _mean_function(grid, sums, counts, dom) if self.center else None
        mean_on_grid = self.mean_(grid) if self.mean_ is not None else None

        # dictionary, Gram, B
        dic = output_dictionary(self.dictionary, grid)
        if dic.data_dependent:
            sample = st.take_rows(resp.values, _subsample(n, self.dictionary_sample, self.random_state))
            if mean_on_grid is not None:
                sample = sample - mean_on_grid
            dic.fit(Observations.from_dense(sample, grid), domain=dom)
        else:
            dic.fit(Observations.from_dense(np.zeros((1, grid.size)), grid), domain=dom)
        self.dictionary_ = dic
        G = dic.gram()
        B = make_output_matrix(self.output_matrix).checked(dic.scales_)
        self.gram_, self.B_ = G, B
        _warn_unsupported_atoms(grid.size, G)

        # feature map
        fmap = clone(self.approx) if self.approx is not None else Nystroem(min(300, n))
        fmap.fit(kernel, inputs.take, n)
        self.approx_ = fmap
        self.approx_description_ = fmap.describe()

        # pass 2: sufficient statistics
        from ..data.functional import quadrature_weights

        filled = mode == "interpolate"  # the interpolants on the observed columns, as the exact fits (fill_gaps)
        cols = seen if filled else np.arange(grid.size)
        ctx = st.StatsContext(
            features=fmap, layout=inputs.layout, mean=None if mean_on_grid is None else mean_on_grid[cols],
            phi=dic.evaluate(grid[cols]), quad_weights=quadrature_weights(grid[cols], dom), length=dom[1] - dom[0],
            mode=mode, columns=seen if filled else None, locations=grid[seen] if filled else None)
        self.stats_ = st.stats_pass(plan, ctx, progress=self.progress)
        self.primal_ = primal_decompose(self.stats_, G, B)

        lams = self._lams()
        unit = dic.lambda_unit()  # lambda in the unit of the atoms' norms, as the exact fits (KPLProblem.lam_unit)
        if lams is None:
            self.lam_, self.lams_, self.gcv_, self.scores_, self.criterion_ = float(self.lam), None, None, None, None
        else:
            from ..tuning.primal import primal_loo_block

            g = self.primal_.gcv(lams * unit)
            self.criterion_ = self._criterion()
            sc = g if self.criterion_ == "gcv" else st.reduce_pass(
                plan, primal_loo_block, (ctx, self.primal_, lams * unit), self.progress, "leave-one-curve-out") / n
            self.lam_, self.lams_, self.gcv_, self.scores_ = float(lams[int(np.argmin(sc))]), lams, g, sc
        self.coef_ = self.primal_.coef(self.lam_ * unit)
        self.edf_ = self.primal_.edf(self.lam_ * unit)
        self.grid_ = grid
        self.n_samples_fit_ = n
        return self

    # ------------------------------------------------------------------
    def predict_coefficients(self, X: Any) -> Any:
        """Predicted dictionary coefficients ``z(x)^T M``, shape ``(n_new, d)``.

        A NumPy array, or a lazy dask array for dask-backed inputs.

        Examples
        --------
        >>> X = np.linspace(0, 1, 10)[:, None]; Y = X * np.linspace(0, 1, 5)
        >>> m = ApproxKPLRegressor(dictionary=Fourier(1), approx=Nystroem(10), lam=1e-2).fit(X, Y)
        >>> m.predict_coefficients(X[:3]).shape
        (3, 3)
        """
        from ..solvers import streaming as st

        check_is_fitted(self, "coef_")
        inputs = st.as_inputs(X, interpolate=self.interpolate_inputs, spec=self.input_spec_)
        ctx = st.PredictContext(self.approx_, inputs.layout, self.coef_, None, None)
        return st.predict_pass(st.ChunkPlan.of(inputs, None, self.chunk_size), ctx, progress=self.progress)

    def predict(self, X: Any, at: Any = None) -> Any:
        """Predicted curves at ``at`` (default: the training grid), chunk by chunk.

        Same return types as :meth:`KPLRegressor.predict <fdakpl.estimators.kpl.KPLRegressor.predict>`;
        for dask-backed inputs the values are a lazy dask array (call
        ``.compute()``, or write them with ``.to_zarr``).

        Examples
        --------
        >>> X = np.linspace(0, 1, 10)[:, None]; Y = np.hstack([X, 2 * X])
        >>> m = ApproxKPLRegressor(approx=Nystroem(10), lam=1e-3).fit(X, Y)
        >>> m.predict(X[:2], at=[0.1, 0.5, 0.9]).shape
        (2, 3)
        """
        from ..solvers import streaming as st

        check_is_fitted(self, "coef_")
        theta = self.grid_ if at is None else np.atleast_1d(np.asarray(at, dtype=float))
        inputs = st.as_inputs(X, interpolate=self.interpolate_inputs, spec=self.input_spec_)
        mean = self.mean_(theta) if self.mean_ is not None else np.zeros(theta.size)
        ctx = st.PredictContext(self.approx_, inputs.layout, self.coef_, self.dictionary_.evaluate(theta), mean)
        Yhat = st.predict_pass(st.ChunkPlan.of(inputs, None, self.chunk_size), ctx, progress=self.progress)
        return self._as_given(Yhat, theta, inputs.labels, at, add_mean=False)  # the pass added the mean

    def predict_array(self, X: Any, at: Any = None) -> np.ndarray:
        """Predicted curves as a plain ``(n_new, n_locations)`` array (computed, for dask-backed inputs too).

        Examples
        --------
        >>> X = np.linspace(0, 1, 10)[:, None]; Y = np.hstack([X, 2 * X])
        >>> m = ApproxKPLRegressor(approx=Nystroem(10), lam=1e-3).fit(X, Y)
        >>> m.predict_array(X[:2]).shape
        (2, 2)
        """
        pred = self.predict(X, at)
        values = np.asarray(pred.values if hasattr(pred, "values") else pred, dtype=float)
        return values[:, None] if values.ndim == 1 else values


def check_square_loss(loss: Any) -> None:
    """Refuse a loss other than the square loss for the approximate (primal closed-form) solver.

    Examples
    --------
    >>> check_square_loss("l2")
    >>> check_square_loss("logcosh")
    Traceback (most recent call last):
    ...
    ValueError: approx= solves the square loss only (primal closed form), got loss='logcosh'; use loss='square', ...
    """
    if not is_square(loss):
        raise ValueError(f"approx= solves the square loss only (primal closed form), got loss={loss!r}; use "
                         "loss='square', or drop approx= to fit a robust loss with the exact iterative solver")


def _subsample(n: int, size: int, random_state: Any) -> np.ndarray:
    if n <= size:
        return np.arange(n)
    return np.sort(as_generator(random_state).choice(n, size=size, replace=False))


def _mean_function(grid: np.ndarray, sums: np.ndarray, counts: np.ndarray, domain: tuple[float, float]) -> MeanFunction:
    """The :class:`MeanFunction` of the observed values from their ``sums`` and ``counts`` on ``grid``."""
    return MeanFunction.from_sums(grid, sums, counts, domain)


def _warn_unsupported_atoms(q: int, G: np.ndarray) -> None:
    rank = np.linalg.matrix_rank(G, tol=1e-10 * max(np.abs(G).max(), 1e-300) * G.shape[0])
    if rank > q:
        warn(unsupported_atoms_message(rank, q), stacklevel=3)
