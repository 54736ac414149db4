"""K-fold cross-validation of the closed-form KPL ridge on arrays, by shared eigendecompositions.

:func:`kfold_grid` scores every (dictionary, output matrix ``B``, fold, lambda) of a grid at once:

* each fold's training kernel matrix ``K_tr = U diag(s) U^T`` is decomposed once and serves every
  dictionary, every ``B`` and every lambda;
* the output side of each (dictionary, ``B``), ``B^{1/2} G B^{1/2} = V diag(e) V^T`` and the rotated atoms
  ``phi B^{1/2} V`` on the response grid, is computed once and serves every fold whose dictionary has the
  same atoms (any dictionary that does not depend on the data, on a shared response grid);
* the held-out predictions at every lambda follow from the spectral formula
  ``Yhat(lam) = K_te,tr U [Nt / (s e^T + n_tr lam)] (phi B^{1/2} V)^T + mean``, with
  ``Nt = U^T (C (Y_tr - mean)) phi B^{1/2} V`` (``C``: the integration weights), two matrix products for the
  whole lambda path.

:func:`kfold_labelled` is the bridge from an estimator and labelled data (what
:func:`fdakpl.tuning.kfold.kfold_path` receives) to :func:`kfold_grid`: it prepares the inputs and responses once,
computes one kernel matrix per distinct kernel of the grid, and returns None when the grid or the data need
the generic per-fold fits (another solver or loss, irregular responses, other parameters).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
from sklearn.base import clone

from ..data.functional import Observations
from ..data.integration import projection_points
from ..data.preprocessing import center_responses, check_same_samples, n_samples_of, prepare_inputs, prepare_response
from ..data.validation import check_grid
from ..dictionaries import Dictionary, output_dictionary
from ..kernels import Kernel, kernel_or_default, make_output_matrix
from ..losses import is_square
from ..solvers.closed_form import output_side, psd_eigh, sym_sqrt
from ..solvers.memory import check_exact_memory
from ..utils.notices import silenced
from ..utils.progress import progress as show_progress

__all__ = ["CLOSED_FORM_PARAMS", "kfold_grid", "kfold_labelled"]

#: parameters of a grid that :func:`kfold_labelled` scores by :func:`kfold_grid` (with ``kernel__<name>``)
CLOSED_FORM_PARAMS = ("dictionary", "output_matrix", "kernel")
#: stacked held-out predictions are computed for blocks of lambdas of at most this many values (memory bound)
_BLOCK_VALUES = 2**21


def kfold_grid(K: np.ndarray, Y: np.ndarray, locations: np.ndarray, dictionaries: Sequence[Dictionary | str],
               output_matrices: Sequence[Any], lams: Iterable[float],
               folds: Sequence[tuple[np.ndarray, np.ndarray]], *, domain: tuple[float, float] | None = None,
               center: bool = True, integration: str = "auto", progress: bool | None = None,
               n_threads: int = 1) -> np.ndarray:
    """Held-out error of the closed-form KPL ridge for every dictionary, output matrix, fold and lambda.

    Each fold fits, on its training curves, what :class:`fdakpl.KPLRegressor` fits with the square loss
    (closed form, plug-in inner products for partially observed curves, training mean function), and scores
    the paper's test MSE on its held-out curves (mean over curves of the mean squared error over their
    observed points). One eigendecomposition of each fold's kernel matrix serves every setting and lambda;
    one decomposition of ``B^{1/2} G B^{1/2}`` per (dictionary, ``B``) serves every fold (see the module
    docstring for the formulas). Cost: ``O(F (n^3 + S (n_te n d L + n_te d m L)))`` for ``F`` folds, ``S``
    settings, ``L`` lambdas, ``d`` atoms, ``m`` grid points, plus ``O(d^3)`` per setting.

    Parameters
    ----------
    K : numpy.ndarray, shape (n, n)
        Input kernel matrix of all curves (the folds take its rows and columns).
    Y : numpy.ndarray, shape (n, m)
        Responses on a common grid, NaN where unobserved (every curve needs an observed point).
    locations : numpy.ndarray, shape (m,)
        The grid, increasing.
    dictionaries : sequence of Dictionary or str
        Dictionaries (or names for :func:`fdakpl.dictionaries.make_dictionary`; ``"auto"`` as in
        :class:`~fdakpl.KPLRegressor`), each fitted on every fold's training responses.
    output_matrices : sequence
        Output matrices ``B`` as ``KPLRegressor(output_matrix=...)`` takes them: None (identity), a scale
        decay ``b``, an array or an :class:`~fdakpl.kernels.OutputMatrix`.
    lams : iterable of float
        Regularisation values, each > 0.
    folds : sequence of (train, test) index arrays
        E.g. ``list(sklearn.model_selection.KFold(5).split(Y))``.
    domain : (float, float), optional
        Domain of the response curves (default: the range of ``locations``).
    center : bool
        Centre the responses with each fold's training mean function.
    integration : {"auto", "interpolate", "quadrature", "plugin"}
        As in :class:`~fdakpl.KPLRegressor`.
    progress : bool or None, default None
        A progress bar over the folds; ``None`` follows the package default (``FDAKPL_PROGRESS``).
    n_threads : int
        Folds run in this many threads (their eigendecompositions and matrix products release the GIL; keep
        BLAS on one thread then). Same numbers bit for bit. It pays only with idle cores: at 1,000 curves on two
        cores shared with other work (load 3.8) two threads were 1.2x slower (``benchmarks/bench_cv.py``).

    Returns
    -------
    numpy.ndarray, shape (n_dictionaries, n_output_matrices, n_folds, n_lams)
        The held-out error of each setting, fold and lambda.

    Examples
    --------
    >>> from sklearn.model_selection import KFold
    >>> from fdakpl import Fourier, Gaussian
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(30, 2)); grid = np.linspace(0, 1, 12)
    >>> Y = np.sin(np.outer(X[:, 0], grid)) + 0.1 * rng.normal(size=(30, 12))
    >>> Y[0, 3] = np.nan  # an unobserved point
    >>> folds = list(KFold(3, shuffle=True, random_state=0).split(X))
    >>> err = kfold_grid(Gaussian(1.0)(X), Y, grid, [Fourier(2), Fourier(3)], [None, 2.0], [1e-4, 1e-2], folds)
    >>> err.shape
    (2, 2, 3, 2)
    """
    K = np.asarray(K, dtype=float)
    Y = np.array(Y, dtype=float)
    grid = np.asarray(locations, dtype=float)
    lams = check_grid(list(lams), "lams", sort=False)
    n = Y.shape[0] if Y.ndim == 2 else -1
    if Y.ndim != 2 or grid.shape != (Y.shape[1],):
        raise ValueError(f"Y must be (n_samples, n_locations) matching locations {grid.shape}, got {Y.shape}")
    if K.shape != (n, n):
        raise ValueError(f"K must be the ({n}, {n}) kernel matrix of the {n} curves of Y, got shape {K.shape}")
    if np.isinf(Y).any():
        raise ValueError("Y has infinite values; replace them by NaN to mark them unobserved")
    observed = ~np.isnan(Y)
    empty = np.nonzero(~observed.any(axis=1))[0]
    if empty.size:
        raise ValueError(f"Y has no observed point for curves at positions {empty[:10].tolist()}; drop them")
    dom = (float(grid[0]), float(grid[-1])) if domain is None else (float(domain[0]), float(domain[1]))
    out = np.empty((len(dictionaries), len(output_matrices), len(folds), lams.size))
    # output side of each (dictionary, B): kept while the fold's fitted dictionary has the same atoms and Gram
    cache: dict[tuple[int, int], tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = {}
    prepared = []  # per fold: training side, held-out side and the (e, phi B^1/2 V) of every setting
    for tr, te in folds:
        tr, te = np.asarray(tr), np.asarray(te)
        obs_c, mean, Yw = _training_side(Y[tr], grid, dom, center, integration)
        settings = []
        for j, spec in enumerate(dictionaries):
            dic = _fold_dictionary(spec, obs_c, dom)
            phi, G = dic.evaluate(grid), dic.gram()
            for k, b_spec in enumerate(output_matrices):
                hit = cache.get((j, k))
                if hit is None or not (np.array_equal(hit[0], phi) and np.array_equal(hit[1], G)):
                    B = make_output_matrix(b_spec).checked(dic.scales_)
                    Bs = sym_sqrt(B)
                    Bh, _, e, V = output_side(G, B, Bs, dic.scaled_gram_eigh(Bs[0]))
                    hit = cache[(j, k)] = (phi, G, e, phi @ (Bh @ V))
                settings.append((j, k, hit[2], hit[3], dic.lambda_unit()))
        # held-out curves, centred by the training mean, weighted 1 / m_i at their observed points
        obs_te = observed[te]
        R_te = np.where(obs_te, Y[te] - mean, 0.0)
        w_te = obs_te / obs_te.sum(axis=1, keepdims=True) / te.size
        prepared.append((tr, te, Yw, R_te, w_te, settings))

    def fold_scores(f: int) -> None:
        """The eigendecomposition of fold ``f``'s ``K`` and the held-out path of every setting (NumPy and LAPACK
        release the GIL: folds can run in threads)."""
        tr, te, Yw, R_te, w_te, settings = prepared[f]
        Kt = K[np.ix_(tr, tr)]
        s, U = psd_eigh(Kt)
        KU = K[np.ix_(te, tr)] @ U
        UtYw = U.T @ Yw
        for j, k, e, phiBV, unit in settings:  # lambda in the unit of the atoms' norms (KPLProblem.lam_unit)
            out[j, k, f] = _heldout_path(KU, s, e, UtYw @ phiBV, phiBV, R_te, w_te, tr.size * unit * lams)

    if n_threads > 1 and len(folds) > 1:
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(min(n_threads, len(folds))) as pool:
            for _ in show_progress(pool.map(fold_scores, range(len(folds))), desc="cross-validation",
                                   enabled=progress, total=len(folds)):
                pass
    else:
        for f in show_progress(range(len(folds)), desc="cross-validation", enabled=progress, total=len(folds)):
            fold_scores(f)
    return out


def _training_side(Y_tr: np.ndarray, grid: np.ndarray, dom: tuple[float, float], center: bool,
                   integration: str) -> tuple[Observations, np.ndarray, np.ndarray]:
    """A fold's centred training observations, its mean at the grid and the weighted responses ``C (Y - mean)``
    as a dense ``(n_tr, m)`` array (zero where unobserved), as :class:`~fdakpl.KPLRegressor` computes them."""
    obs = Observations.from_dense(Y_tr, grid)
    mean_fn, obs_c = center_responses(obs, dom, center)
    pts, w, _ = projection_points(obs_c, dom, integration)  # the interpolants with "interpolate"
    Yw = np.zeros(Y_tr.shape)
    cols = pts.grid_index if pts is obs_c else np.searchsorted(grid, pts.grid)[pts.grid_index]  # on the grid
    Yw[pts.index, cols] = w * pts.value
    return obs_c, (mean_fn(grid) if mean_fn is not None else np.zeros(grid.size)), Yw


def _fold_dictionary(spec: Dictionary | str, obs: Observations, dom: tuple[float, float]) -> Dictionary:
    """The dictionary a fold's fit uses (fitted states of data-independent dictionaries are shared)."""
    return output_dictionary(spec, obs.location).fit(obs, domain=dom)


def _heldout_path(KU: np.ndarray, s: np.ndarray, e: np.ndarray, Nt: np.ndarray, phiBV: np.ndarray,
                  R_te: np.ndarray, w_te: np.ndarray, shifts: np.ndarray) -> np.ndarray:
    """Weighted held-out squared error at every ``n lam`` of ``shifts``: two matrix products per block of lambdas."""
    n_tr, d = Nt.shape
    n_te, m = R_te.shape
    se = np.multiply.outer(s, e)  # (n_tr, d)
    scores = np.empty(shifts.size)
    block = max(1, _BLOCK_VALUES // (n_tr * d + n_te * max(d, m)))
    for a in range(0, shifts.size, block):
        sh = shifts[a:a + block]
        L = sh.size
        # in place: fresh large temporaries cost more (page faults) than the arithmetic at this size
        Z = np.add(se[:, None, :], sh[None, :, None])
        np.divide(Nt[:, None, :], Z, out=Z)  # (n_tr, L, d): rotated coefficients at every lambda
        H = (KU @ Z.reshape(n_tr, L * d)).reshape(n_te * L, d)  # predicted rotated coefficients
        r = (H @ phiBV.T).reshape(n_te, L, m)
        np.subtract(r, R_te[:, None, :], out=r)
        np.square(r, out=r)
        scores[a:a + L] = np.einsum("ilp,ip->l", r, w_te)
    return scores


def _key(value: Any) -> Any:
    """A hashable key for a grid value (arrays by their bytes)."""
    if isinstance(value, np.ndarray):
        return ("array", value.shape, value.dtype.str, value.tobytes())
    return repr(value)


def kfold_labelled(estimator: Any, X: Any, Y: Any, lams: np.ndarray, params: list[dict[str, Any]],
                   folds: Sequence[tuple[np.ndarray, np.ndarray]], fit_params: Mapping[str, Any] | None = None,
                   progress: bool | None = None, n_threads: int = 1) -> np.ndarray | None:
    """Fold scores ``(n_params, n_folds, n_lams)`` of a :class:`~fdakpl.KPLRegressor` grid by :func:`kfold_grid`,
    with the data prepared once; None when the per-fold fits are needed instead.

    The closed form applies when ``estimator`` is a plain ``KPLRegressor`` with the square loss and the
    closed-form solver (``"auto"`` or ``"eig"``), no kernel approximation, responses on a common grid (arrays,
    DataArrays; NaN allowed), and the grid varies only ``dictionary``, ``output_matrix``, ``kernel`` and
    ``kernel__<parameter>``. One kernel matrix is computed per distinct kernel of the grid; ``progress`` and
    ``n_threads`` are passed to :func:`kfold_grid`.

    Examples
    --------
    >>> from fdakpl import Fourier, KPLRegressor
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(20, 2)); Y = np.sin(np.outer(X[:, 0], np.linspace(0, 1, 8)))
    >>> folds = [(np.arange(10, 20), np.arange(10)), (np.arange(10), np.arange(10, 20))]
    >>> est = KPLRegressor(dictionary=Fourier(2))
    >>> kfold_labelled(est, X, Y, np.array([1e-3]), [{"output_matrix": None}, {"output_matrix": 2.0}], folds).shape
    (2, 2, 1)
    >>> kfold_labelled(est.set_params(loss="logcosh"), X, Y, np.array([1e-3]), [{}], folds) is None
    True
    """
    fit_params = dict(fit_params or {})
    if type(estimator).__name__ != "KPLRegressor" or not type(estimator).__module__.startswith("fdakpl."):
        return None  # subclasses may fit otherwise
    base = estimator.get_params(deep=False)
    if base.get("approx") is not None or base.get("solver") not in {"auto", "eig"} or \
            not is_square(base.get("loss")) or set(fit_params) - {"locations"}:
        return None
    if any(k not in CLOSED_FORM_PARAMS and not k.startswith("kernel__") for p in params for k in p):
        return None
    with silenced():  # the folds' notices are not repeated: the final fit says them
        Xv, Xw, _, x_labels = prepare_inputs(X, interpolate=base["interpolate_inputs"])
        obs, info = prepare_response(Y, fit_params.get("locations"), base["domain"])
    if obs.grid is None or obs.grid_index is None:
        return None  # irregular responses: per-fold fits
    check_same_samples(n_samples_of(Xv), x_labels, obs.n_samples, info.labels)
    check_exact_memory(obs.n_samples, obs.index.size, base.get("memory_limit"))  # before the n x n kernel matrix
    Yd = np.full((obs.n_samples, obs.grid.size), np.nan)
    Yd[obs.index, obs.grid_index] = obs.value
    # settings grouped by kernel; dictionaries and output matrices by value
    kernels: list[Kernel] = []
    dics: dict[Any, Any] = {}
    bs: dict[Any, Any] = {}
    where: list[tuple[int, int, int]] = []
    for p in params:
        est_p = clone(estimator).set_params(**p) if any(k.startswith("kernel") for k in p) else None
        kern = kernel_or_default(est_p.kernel if est_p is not None else base["kernel"])  # KPLRegressor's default
        kernel_index = next((i for i, k in enumerate(kernels) if k == kern), None)
        if kernel_index is None:
            kernels.append(kern)
            kernel_index = len(kernels) - 1
        dic = p.get("dictionary", base["dictionary"])
        b = p.get("output_matrix", base["output_matrix"])
        where.append((kernel_index, dics.setdefault(_key(dic), (len(dics), dic))[0],
                      bs.setdefault(_key(b), (len(bs), b))[0]))
    dic_list = [v for _, v in sorted(dics.values(), key=lambda t: t[0])]
    b_list = [v for _, v in sorted(bs.values(), key=lambda t: t[0])]
    out = np.empty((len(params), len(folds), lams.size))
    for i, kern in enumerate(kernels):
        K = kern(Xv, None, Xw)
        used = [q for q, w in enumerate(where) if w[0] == i]
        scores = kfold_grid(K, Yd, obs.grid, dic_list, b_list, lams, folds, domain=info.domain,
                            center=base["center"], integration=base["integration"], progress=progress,
                            n_threads=n_threads)
        for q in used:
            out[q] = scores[where[q][1], where[q][2]]
    return out
