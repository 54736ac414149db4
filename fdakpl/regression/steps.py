"""Steps of the formula front end's fit: lambda grids, refits with another kernel or lambda without preparing
the data again, the curvature ratio of a robust loss, and the exact partial ridge's own lambda path."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..data.integration import integration_weights
from ..estimators.kpl import KPLRegressor
from ..kernels import Kernel
from ..losses import make_loss
from ..tuning.partial import exact_partial_path
from ..tuning.selection import check_edge

__all__ = ["check_lam_grid", "curvature_ratio", "exact_partial_choice", "move_to", "set_lambda", "sq_distances"]


def sq_distances(values: np.ndarray, weights: np.ndarray | None, sigma: float = 1.0) -> np.ndarray:
    """Squared (weighted L2) distances between rows divided by ``sigma^2``, as the Gaussian kernel uses them.

    The rows are divided by ``sigma`` (the median-heuristic width, on the inputs' scale) before the
    distances are taken, so inputs near 1e-200 or 1e160 neither underflow nor overflow.
    """
    from scipy.spatial.distance import cdist

    X = np.asarray(values, dtype=float)
    X = X[:, None] if X.ndim == 1 else X
    if weights is not None:
        X = X * np.sqrt(np.asarray(weights, dtype=float))
    X = X / sigma
    return cdist(X, X, "sqeuclidean")


def move_to(est: KPLRegressor, kernel: Kernel, output_matrix: Any, lam: float) -> None:
    """Refit a fitted closed-form estimator with another kernel and ``B`` (exactly what ``fit`` would give).

    The centring, dictionary, integration weights and inner products do not depend on them,
    so only the kernel matrix and the decompositions are recomputed.
    """
    from ..kernels import check_spd, make_output_matrix
    from ..solvers.closed_form import decompose

    B = check_spd(make_output_matrix(output_matrix).matrix(est.dictionary_.scales_), "output_matrix")
    est.set_params(kernel=kernel, output_matrix=output_matrix)
    est.K_, est.B_ = kernel(est.X_fit_, None, est.X_weights_), B
    est.decomposition_ = decompose(est.K_, est.gram_, B, est.nu_)
    set_lambda(est, lam)


def curvature_ratio(loss: Any) -> float:
    """``l''(0) / 2`` of a ground loss: its quadratic part relative to the square loss ``a**2`` (1 for the square).

    Examples
    --------
    >>> curvature_ratio("square"), curvature_ratio("logcosh(3)"), curvature_ratio("huber")
    (1.0, 1.5, 0.5)
    """
    zero = np.zeros(1)
    return float(make_loss(loss).second_derivative(zero, zero)[0]) / 2.0


def set_lambda(est: KPLRegressor, lam: float) -> None:
    """Move a fitted closed-form estimator to another lambda (exactly what a refit would give)."""
    from ..solvers.closed_form import ridge_coef

    est.set_params(lam=float(lam))
    est.dual_coef_ = ridge_coef(est.decomposition_, float(lam))
    est.dual_coef_B_ = est.dual_coef_ @ est.B_


def check_lam_grid(grid: Any, name: str) -> np.ndarray:
    """A lambda grid: a non-empty 1-d list of finite numbers > 0."""
    try:
        arr = np.asarray(grid, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a list of numbers > 0, got {grid!r}") from None
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-d list of numbers > 0 (e.g. np.geomspace(1e-8, 1, 41)), got "
                         f"shape {arr.shape}")
    bad = arr[~(np.isfinite(arr) & (arr > 0))]
    if bad.size:
        raise ValueError(f"lam must be a finite number > 0, got {bad[0]} (in {name})")
    return arr


def exact_partial_choice(fitted: KPLRegressor, Y: Any, grid: np.ndarray, how: str, sparse: bool,
                          notes: list[str]) -> tuple[Any, float, str, bool]:
    """Lambda of the exact partial ridge by its own exact path (GCV or leave-one-curve-out).

    ``fitted`` is any fit with the final kernel, dictionary, ``B`` and centre (they do not depend on the
    solver). For sparse responses GCV is replaced by leave-one-curve-out (with a note): GCV leaves out
    single points of curves whose few other points stay in, and on sparsified DTI it undersmoothed (worse
    than the training mean, ``benchmarks/sparse_responses.py``); the exact curve-level criterion costs the same.

    Returns
    -------
    criteria : PathCriteria
    lam : float
    how : str
        The criterion used.
    edge : bool
    """
    from ..data.preprocessing import prepare_response

    obs, info = prepare_response(Y, None, fitted.response_info_.domain)
    if fitted.mean_ is not None:
        obs = obs.with_values(obs.value - fitted.mean_(obs.location))
    w, _ = integration_weights(obs, info.domain, fitted.integration_)
    criteria = exact_partial_path(fitted.K_, fitted.B_, fitted.dictionary_.evaluate(obs.location), obs, w, grid)
    if how == "gcv" and sparse:
        how = "loo"
        notes.append("sparse responses: lambda by exact leave-one-curve-out instead of GCV, which leaves out "
                     "single points and undersmooths (benchmarks/sparse_responses.py)")
    idx, lam = criteria.best(how)
    return criteria, lam, how, check_edge(grid, idx, how, stacklevel=5)
