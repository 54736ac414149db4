"""Shared machinery of the competitor estimators: input/response handling, centring, predict, score.

Every competitor follows :class:`~fdakpl.KPLRegressor`'s conventions:
``fit(X, Y, locations=None)`` with arrays, functional DataArrays (dense with
NaN for unobserved points) or long DataFrames as responses, and
``predict(X, at=None)`` returning curves at ``at`` (default: the training
grid), labelled when the training response was labelled. Subclasses implement
``_fit(Xv, Xw, obs, domain)`` on centred observations and
``_predict_centered(Xv, Xw, theta)``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.utils.validation import check_is_fitted

from ..data.functional import Observations, interpolate_missing, quadrature_weights
from ..data.preprocessing import (
    InputSpec,
    MeanFunction,
    prepare_inputs,
)
from ..data.validation import check_grid, check_int, check_number
from ..estimators.base import FIT_PARAMETERS_DOC, PREDICT_RETURNS_DOC, FunctionalEstimator
from ..utils.docstrings import fill_doc

__all__ = ["FunctionalBaseline", "GridRidgeBaseline", "curve_inputs", "responses_on_grid"]


def curve_inputs(Xv: Any, Xw: Any, spec: InputSpec,
                 method: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, tuple[float, float]]:
    """Functional inputs as (values ``(n, t)``, grid ``(t,)``, quadrature weights ``(t,)``, domain).

    A functional DataArray keeps its location coordinate; a plain ``(n, t)``
    array is read as curves observed at the midpoints ``(j + 0.5) / t`` of
    ``[0, 1]`` (the convention of array responses).

    Examples
    --------
    >>> from fdakpl.data.preprocessing import prepare_inputs
    >>> vals, w, spec, _ = prepare_inputs(np.zeros((2, 4)))
    >>> curve_inputs(vals, w, spec, "3BE")[1]
    array([0.125, 0.375, 0.625, 0.875])
    """
    if spec.kind == "curve":
        assert spec.grid is not None
        grid = spec.grid
        return np.asarray(Xv, dtype=float), grid, np.asarray(Xw, dtype=float), (float(grid[0]), float(grid[-1]))
    if spec.kind == "array" and isinstance(Xv, np.ndarray) and Xv.ndim == 2:
        t = Xv.shape[1]
        grid = (np.arange(t) + 0.5) / t
        return Xv, grid, quadrature_weights(grid, (0.0, 1.0)), (0.0, 1.0)
    raise TypeError(
        f"{method} regresses on input curves: pass X as a functional DataArray (sample, location) or an "
        "(n_samples, n_locations) array of curves on a regular grid, not a mapping of terms or a 3-d array"
    )


def responses_on_grid(obs: Observations, domain: tuple[float, float],
                      n_grid: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Responses completed on a grid by linear interpolation ("linear smoothing").

    Dense responses keep their grid and have their NaN filled by linear
    interpolation along the grid (constant beyond the first and last observed
    points); irregular (long) responses are interpolated on a uniform grid of
    ``n_grid`` points (default 100) of the domain.

    Returns
    -------
    grid : numpy.ndarray, shape (m,)
    values : numpy.ndarray, shape (n, m)

    Examples
    --------
    >>> obs = Observations.from_dense(np.array([[1.0, np.nan, 3.0]]), np.array([0.0, 0.5, 1.0]))
    >>> responses_on_grid(obs, (0.0, 1.0))[1]
    array([[1., 2., 3.]])
    """
    if obs.grid is not None and obs.grid_index is not None:
        return obs.grid, interpolate_missing(obs.to_dense(), obs.grid, "response")
    grid = np.linspace(domain[0], domain[1], 100 if n_grid is None else int(n_grid))
    out = np.empty((obs.n_samples, grid.size))
    starts = np.searchsorted(obs.index, np.arange(obs.n_samples + 1))
    for i in range(obs.n_samples):
        loc, val = obs.location[starts[i]:starts[i + 1]], obs.value[starts[i]:starts[i + 1]]
        order = np.argsort(loc, kind="stable")
        out[i] = np.interp(grid, loc[order], val[order])
    return grid, out


class FunctionalBaseline(FunctionalEstimator):
    """Base class of the competitors (not for direct use).

    Subclasses list ``center``, ``domain`` and ``interpolate_inputs`` among
    their parameters, pass them on to this class's ``__init__`` (which stores
    them) and implement ``_fit`` and ``_predict_centered``; the
    base class handles inputs, responses (dense with NaN, arrays, long
    DataFrames), centring, labels, ``predict``, ``predict_path`` and ``score``.

    Examples
    --------
    >>> from fdakpl.baselines import FunctionalKRR
    >>> issubclass(FunctionalKRR, FunctionalBaseline)
    True
    """

    #: name used in error messages
    _method = "baseline"

    def __init__(self, center: bool = True, domain: tuple[float, float] | None = None,
                 interpolate_inputs: bool = False) -> None:
        """The parameters of the data handling, which every baseline passes on."""
        self.center = center
        self.domain = domain
        self.interpolate_inputs = interpolate_inputs

    # -- to be provided by subclasses -------------------------------------
    def _check_params(self) -> None:  # pragma: no cover - trivial default
        pass

    def _fit(self, Xv: Any, Xw: Any, obs: Observations, domain: tuple[float, float]) -> None:  # pragma: no cover
        raise NotImplementedError

    def _predict_centered(self, Xv: Any, Xw: Any, theta: np.ndarray) -> np.ndarray:  # pragma: no cover
        raise NotImplementedError

    # -- public API -------------------------------------------------------
    @fill_doc(fit_parameters=FIT_PARAMETERS_DOC)
    def fit(self, X: Any, Y: Any, locations: Any = None) -> FunctionalBaseline:
        """Fit the model.

        %(fit_parameters)s
        """
        Xv, Xw, spec, obs, info = self._prepare_training_data(X, Y, locations, type(self).__name__)
        self._set_training_info(info, spec)
        if self.center:
            self.mean_: MeanFunction | None = MeanFunction(obs, info.domain)
            obs = obs.with_values(obs.value - self.mean_(obs.location))
        else:
            self.mean_ = None
        self._fit(Xv, Xw, obs, info.domain)
        if info.grid is not None:
            self.grid_ = info.grid
        else:
            uniq = np.unique(obs.location)
            self.grid_ = uniq if uniq.size <= 1000 else np.linspace(info.domain[0], info.domain[1], 200)
        self.n_samples_fit_ = obs.n_samples
        return self

    def _inputs(self, X: Any) -> tuple[Any, Any, Any]:
        check_is_fitted(self, "response_info_")
        Xv, Xw, _, labels = prepare_inputs(X, interpolate=self.interpolate_inputs, spec=self.input_spec_)
        return Xv, Xw, labels

    @fill_doc(predict_returns=PREDICT_RETURNS_DOC)
    def predict(self, X: Any, at: Any = None) -> Any:
        """Predicted curves at ``at`` (default: the training grid).

        %(predict_returns)s

        Examples
        --------
        >>> from fdakpl.baselines import KernelEstimator
        >>> X = np.linspace(0, 1, 10)[:, None]; Y = np.hstack([X, 2 * X])
        >>> KernelEstimator(0.1).fit(X, Y).predict(X[:2], at=[0.1, 0.5, 0.9]).shape
        (2, 3)
        """
        Xv, Xw, labels = self._inputs(X)
        theta = self.grid_ if at is None else np.atleast_1d(np.asarray(at, dtype=float))
        if theta.ndim != 1 or not np.all(np.isfinite(theta)):
            raise ValueError("at must be a 1-d array of finite locations")
        Yhat = self._predict_centered(Xv, Xw, theta)
        return self._as_given(Yhat, theta, labels, at)

    def _centered_path(self, Xv: Any, Xw: Any, theta: np.ndarray, lams: np.ndarray) -> np.ndarray:
        raise NotImplementedError(f"{type(self).__name__} has no regularisation path")  # pragma: no cover

    def predict_path(self, X: Any, lams: Any, at: Any = None) -> np.ndarray:
        """Predictions for several ``lam`` from one fit, shape ``(len(lams), n_new, len(at))``.

        The factorisations computed at fit time are reused, so a whole
        regularisation path costs about one fit (what cross-validation over
        ``lam`` needs). Equal to refitting with each ``lam``; ``at`` defaults
        to the training grid; plain arrays are returned.

        Examples
        --------
        >>> from fdakpl.baselines import FunctionalKRR
        >>> rng = np.random.default_rng(0)
        >>> X = rng.uniform(-1, 1, size=(20, 2)); Y = np.sin(np.pi * X[:, :1] * np.linspace(0, 1, 10))
        >>> FunctionalKRR().fit(X, Y).predict_path(X[:3], [1e-4, 1e-2]).shape
        (2, 3, 10)
        """
        Xv, Xw, _ = self._inputs(X)
        lams = check_grid(lams, "lams", sort=False)
        theta = self.grid_ if at is None else np.atleast_1d(np.asarray(at, dtype=float))
        out = self._centered_path(Xv, Xw, theta, lams)
        if self.mean_ is not None:
            out = out + self.mean_(theta)[None, None, :]
        return out


class GridRidgeBaseline(FunctionalBaseline):
    """A baseline solved as a ridge problem on a grid of ``n_grid`` output points (FKRR, KAM).

    Holds the parameters such baselines share and their checks: ``lam`` (> 0), ``solver`` (``"eig"``
    or ``"sylvester"``) and ``n_grid`` (at least 2), with the data handling of
    :class:`FunctionalBaseline`.

    Examples
    --------
    >>> from fdakpl.baselines import FunctionalKRR
    >>> issubclass(FunctionalKRR, GridRidgeBaseline)
    True
    >>> FunctionalKRR(solver="lu").fit([[0.0], [1.0]], [[0.0, 1.0], [1.0, 0.0]])
    Traceback (most recent call last):
    ...
    ValueError: solver must be 'eig' or 'sylvester', got 'lu'
    """

    def __init__(self, lam: float, solver: str, n_grid: int, center: bool = True,
                 domain: tuple[float, float] | None = None, interpolate_inputs: bool = False) -> None:
        super().__init__(center, domain, interpolate_inputs)
        self.lam = lam
        self.solver = solver
        self.n_grid = n_grid

    def _check_params(self) -> None:
        check_number(self.lam, "lam")
        check_int(self.n_grid, "n_grid", 2)
        if self.solver not in {"eig", "sylvester"}:
            raise ValueError(f"solver must be 'eig' or 'sylvester', got {self.solver!r}")
