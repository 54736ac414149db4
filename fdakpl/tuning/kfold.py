"""K-fold cross-validation over curves by refitting: :func:`kfold_path`.

For any grid of estimator parameters, each fit serves the whole lambda path; a closed-form
:class:`~fdakpl.KPLRegressor` on responses with a common grid is scored without refitting
(:func:`fdakpl.tuning.kfold_grid.kfold_labelled`, one eigendecomposition per fold), other estimators and
grids fit in parallel processes with one BLAS thread each, with a progress bar.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager, nullcontext
from itertools import product
from typing import Any

import numpy as np

from ..data.functional import Observations
from ..data.pairing import pair_long_with
from ..data.preprocessing import prepare_response
from ..utils.notices import silenced
from .kfold_grid import kfold_labelled

__all__ = ["PARALLEL_MIN_SAMPLES", "kfold_path"]



def _param_grid(grid: Mapping[str, Sequence[Any]] | None) -> list[dict[str, Any]]:
    if not grid:
        return [{}]
    keys = list(grid)
    return [dict(zip(keys, vals, strict=True)) for vals in product(*(grid[k] for k in keys))]


#: set in a worker process once its BLAS pools are limited to one thread (entering threadpool_limits per task
#: re-reads the process's library map: milliseconds per task)
_WORKER_LIMITED = False


#: below this many curves kfold_path runs in this process whatever n_jobs says (see kfold_path)
PARALLEL_MIN_SAMPLES = 500


@functools.cache
def _blas() -> Any:
    """One ``ThreadpoolController`` for this process: building one reads the process's library map (milliseconds,
    as much as the DTI CV protocol's slowest fold), its ``limit`` does not."""
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


def _limit_worker_threads() -> None:
    global _WORKER_LIMITED
    if not _WORKER_LIMITED:
        from threadpoolctl import threadpool_limits

        threadpool_limits(1)  # for the life of this (loky) worker process
        _WORKER_LIMITED = True


def _fold_scores(estimator: Any, params: dict[str, Any], fold: tuple[Any, Any, Any, Any], lams: np.ndarray,
                 fit_params: dict[str, Any], in_worker: bool) -> np.ndarray:
    """Test error (mean over test curves of the weighted error) at every lambda for one fold.

    ``fold`` holds the training inputs, training responses, test inputs and test responses (sliced once per
    fold by :func:`kfold_path`). In a worker process the BLAS pools are limited to one thread once.
    """
    from sklearn.base import clone

    if in_worker:
        _limit_worker_threads()
    X_tr, Y_tr, Xte, Y_te = fold
    with silenced():  # a fold's warnings are not repeated (and no global filter changes)
        est = clone(estimator).set_params(**params, lam=float(lams[0]))
        est.fit(X_tr, Y_tr, **fit_params)
        obs_te, _info = _test_obs(est, Y_te)
        theta = obs_te.grid if obs_te.grid is not None else obs_te.location
        phi = est.dictionary_.evaluate(theta)
        mean = est.mean_(theta) if est.mean_ is not None else np.zeros(theta.size)
        from ..data.preprocessing import prepare_inputs

        Xv, Xw, _, _ = prepare_inputs(Xte, interpolate=est.interpolate_inputs, spec=est.input_spec_)
        Kn = est.kernel_(Xv, est.X_fit_, Xw)
        scores = np.empty(lams.size)
        w_te = _test_weights(obs_te)
        for j, lam in enumerate(lams):
            if est.path_ is not None:  # the closed form's path: any lambda without refitting
                W = est.path_.coef(float(lam), times_B=True)
            else:
                W = est.set_params(lam=float(lam)).fit(X_tr, Y_tr, **fit_params).dual_coef_B_
            pred_c = (Kn @ W) @ phi.T + mean  # (n_test, m) on grid, or (n_test, N) at points
            pred = pred_c[obs_te.index, obs_te.grid_index] if obs_te.grid_index is not None else \
                pred_c[obs_te.index, np.arange(obs_te.index.size)]
            scores[j] = float(np.sum(w_te * (obs_te.value - pred) ** 2) / obs_te.n_samples)
    return scores


def _test_obs(est: Any, Y: Any) -> tuple[Observations, Any]:

    info = est.response_info_
    loc = info.grid if info.kind in {"array", "vector"} else None
    return prepare_response(Y, loc, info.domain)


def _test_weights(obs: Observations) -> np.ndarray:
    """Per-point weights ``1 / m_i`` of the paper's test MSE (mean over curves of the mean over points)."""
    return (1.0 / obs.counts)[obs.index]


@contextmanager
def _child_process_env() -> Iterator[None]:
    """Drop R's library directories from LD_LIBRARY_PATH while worker processes start.

    rpy2 (imported by the user or by fdakpl.r.convert) prepends them when it starts R; a fresh Python
    worker would then load the system libpython instead of this interpreter's and fail.
    """
    saved = os.environ.get("LD_LIBRARY_PATH")
    r_home = os.environ.get("R_HOME")
    if saved and r_home:
        keep = [p for p in saved.split(os.pathsep) if p and not p.startswith(r_home)
                and p not in {"/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu"}
                and "/jvm/" not in p]
        os.environ["LD_LIBRARY_PATH"] = os.pathsep.join(keep)
    try:
        yield
    finally:
        if saved is not None:
            os.environ["LD_LIBRARY_PATH"] = saved


def kfold_path(estimator: Any, X: Any, Y: Any, *, lams: Iterable[float], param_grid: Mapping[str, Sequence[Any]]
               | None = None, n_splits: int = 5, random_state: Any = 0, n_jobs: int = 2,
               progress: bool | None = None, subset_x=None, subset_y=None,
               fit_params: dict[str, Any] | None = None, groups: Any = None) -> dict[str, Any]:
    """K-fold cross-validation over samples for a parameter grid, each fit serving the whole lambda path.

    The score of a fold is the paper's MSE on the held-out curves (mean over
    curves of the mean squared error over their observed points).

    A :class:`~fdakpl.KPLRegressor` with the square loss and the closed-form solver, on responses with a common
    grid, over a grid of ``dictionary``, ``output_matrix`` and ``kernel`` (or ``kernel__<parameter>``), is scored
    without refitting: the data are prepared once and :func:`fdakpl.tuning.kfold_grid.kfold_grid` decomposes each
    fold's kernel matrix once for every setting and lambda (same scores as the fits, to rounding). Other
    estimators and grids fit the estimator for every (setting, fold).

    Parameters
    ----------
    estimator : KPLRegressor
    X, Y : inputs and responses (as accepted by ``estimator.fit``)
    lams : iterable of float
    param_grid : mapping name -> list of values, optional
        Other parameters of ``estimator`` (``kernel__sigma``, ``output_matrix``, ``dictionary``...).
    n_splits : int
    random_state : int, numpy.random.Generator or None, default 0
        Seed of the fold assignment; the default 0 gives the same folds on every run, ``None``
        draws fresh randomness.
    n_jobs : int
        Worker processes (joblib/loky) for the per-fold fits from ``PARALLEL_MIN_SAMPLES`` (500) curves, each on
        one BLAS thread; below, the folds run in this process on one BLAS thread, where processes were measured
        not to pay. The closed form runs in this process on one BLAS thread whatever ``n_jobs`` says: neither two
        BLAS threads nor folds in two threads paid reliably on two shared cores (``benchmarks/bench_cv.py``;
        :func:`fdakpl.tuning.kfold_grid.kfold_grid` takes ``n_threads`` for machines with idle cores).
    progress : bool or None, default None
        Show a progress bar; ``None`` follows the package default (``FDAKPL_PROGRESS``, see
        :mod:`fdakpl.utils.progress`).
    subset_x, subset_y : callables ``(data, rows) -> data``, optional
        How to take rows of ``X`` and ``Y`` (defaults handle arrays,
        DataArrays, mappings of terms and long DataFrames).
    fit_params : dict, optional
        Extra arguments of ``estimator.fit`` (e.g. ``locations``).
    groups : array-like, optional
        A label per sample: the curves of a group stay in one fold (scikit-learn's ``GroupKFold``).

    Returns
    -------
    dict
        ``scores`` (n_params, n_lams) mean CV error, ``scores_std``, ``params``,
        ``lams``, ``best_params``, ``best_lam``, ``best_index``.

    Examples
    --------
    >>> from fdakpl import KPLRegressor, Fourier, Gaussian
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(30, 2)); grid = np.linspace(0, 1, 12)
    >>> Y = np.sin(np.outer(X[:, 0], grid))
    >>> cv = kfold_path(KPLRegressor(dictionary=Fourier(2), kernel=Gaussian(1.0)), X, Y,
    ...                 lams=[1e-4, 1e-2], param_grid={"kernel__sigma": [0.5, 2.0]},
    ...                 n_splits=3, random_state=0, n_jobs=1, progress=False)
    >>> cv["scores"].shape
    (2, 2)
    """
    from sklearn.model_selection import KFold

    lams = np.asarray(list(lams), dtype=float)
    subset_x = subset_x or _subset
    subset_y = subset_y or _subset
    Y = pair_long_with(X, Y)  # long-form curves in the order of X's samples (by label): folds take the same rows
    n = _n_samples(Y)
    if n_splits < 2 or n_splits > n:
        raise ValueError(f"n_splits must be between 2 and the number of samples ({n}), got {n_splits}")
    if groups is not None:
        from sklearn.model_selection import GroupKFold

        folds = list(GroupKFold(n_splits).split(np.arange(n), groups=np.asarray(groups)))
    else:
        folds = list(KFold(n_splits, shuffle=True, random_state=random_state).split(np.arange(n)))
    params = _param_grid(param_grid)
    scores = None
    if subset_x is _subset and subset_y is _subset:
        # the closed form: data prepared once, one eigendecomposition per fold for every setting and lambda, in this
        # process on one BLAS thread: at 1,000 curves on the shared 2-core machine two BLAS threads were 1.42x faster
        # at load 1 but 3.4x slower at load 3.8, folds in two threads 1.2x slower at load 3.8
        # (benchmarks/bench_cv.py); parallelism that does not pay on two cores stays off
        with _blas().limit(limits=1):
            scores = kfold_labelled(estimator, X, Y, lams, params, folds, fit_params, progress=progress)
    if scores is None:
        sequential = n_jobs == 1 or n < PARALLEL_MIN_SAMPLES
        scores = _fold_fits(estimator, X, Y, lams, params, folds, subset_x, subset_y, fit_params, n_jobs,
                            sequential, progress)
    mean, std = scores.mean(axis=1), scores.std(axis=1)
    bp, bl = np.unravel_index(int(np.nanargmin(mean)), mean.shape)
    return {"scores": mean, "scores_std": std, "fold_scores": scores, "params": params, "lams": lams,
            "best_params": params[bp], "best_lam": float(lams[bl]), "best_index": (int(bp), int(bl)),
            "n_splits": n_splits}


def _fold_fits(estimator: Any, X: Any, Y: Any, lams: np.ndarray, params: list[dict[str, Any]],
               folds: list[tuple[np.ndarray, np.ndarray]], subset_x: Any, subset_y: Any,
               fit_params: dict[str, Any] | None, n_jobs: int, sequential: bool, progress: bool | None) -> np.ndarray:
    """Fold scores ``(n_params, n_folds, n_lams)`` by fitting the estimator on every (setting, fold)."""
    from joblib import Parallel, delayed

    from ..utils.progress import progress as progress_bar

    tasks = [(p, f) for p in range(len(params)) for f in range(len(folds))]
    it = progress_bar(tasks, desc="cross-validation", enabled=progress, total=len(tasks))
    # the rows of each fold are taken once, not once per parameter setting
    fold_data = [(subset_x(X, tr), subset_y(Y, tr), subset_x(X, te), subset_y(Y, te)) for tr, te in folds]
    # processes pay only when a fold's fit outweighs shipping the task: at DTI size (70 curves, 220 fits)
    # two loky workers were measured no faster than one (the paper's CV protocol, 2 shared cores; issue 15)
    runner = Parallel(n_jobs=n_jobs, backend="sequential" if sequential else "loky", return_as="list")
    with _child_process_env(), _blas().limit(limits=1) if sequential else nullcontext():
        results = runner(delayed(_fold_scores)(estimator, params[p], fold_data[f], lams, fit_params or {},
                                               not sequential) for p, f in it)
    scores = np.empty((len(params), len(folds), lams.size))
    for (p, f), s in zip(tasks, results, strict=True):
        scores[p, f] = s
    return scores


def _n_samples(Y: Any) -> int:
    import pandas as pd

    if isinstance(Y, pd.DataFrame):
        return int(_long_samples(Y).size)
    return int(np.shape(Y)[0])


def _long_samples(df: Any) -> np.ndarray:
    """The curves of a long DataFrame in its declared order (``attrs["samples"]``), else by first appearance."""
    import pandas as pd

    declared = df.attrs.get("samples")
    return np.asarray(declared, dtype=object) if declared is not None else pd.unique(df["sample"])


def _subset(data: Any, rows: np.ndarray) -> Any:
    import pandas as pd
    import xarray as xr

    if isinstance(data, Mapping):
        return {k: _subset(v, rows) for k, v in data.items()}
    if isinstance(data, xr.Dataset | xr.DataArray):
        return data.isel(sample=rows)
    if isinstance(data, pd.DataFrame):
        keep = _long_samples(data)[rows]
        sub = data[data["sample"].isin(keep)]
        sub = sub.set_index("sample").loc[keep].reset_index()
        sub.attrs = {**data.attrs, "samples": list(keep)}
        return sub
    return np.asarray(data)[rows]
