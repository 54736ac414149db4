"""The steps of :meth:`fdakpl.FunctionalRegression.fit`, as functions of the model's options and one
prepared problem: which solver runs and why, how lambda is chosen (a criterion object), which kernel
widths and ``b`` are tried, and the tuning itself, which returns the ridge path it scored.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..data.scaling import median
from ..factor_kernels import Categorical
from ..kernels import Gaussian, Kernel, Product, ScaleDecay, Sum
from ..losses import is_square, make_loss
from ..ridge.path import PathCriteria, RidgePath
from ..ridge.problem import KPLProblem
from ..solvers.dispatch import resolve_solver
from ..tuning.criteria import DEFAULT_LAMBDAS, GCV, LOO, Criterion, Fixed, GroupLOO, KFold, check_grid, edge_notice
from ..tuning.partial import exact_partial_path
from ..tuning.search import DEFAULT_FACTOR_MULTIPLES, TuningResult, search
from ..utils.notices import warn

__all__ = ["SPARSE_ATOMS", "SPARSE_POINTS", "combine", "criterion_of", "curvature_ratio", "default_widths",
           "exact_partial_choice", "is_sparse", "routing", "tune", "tuning_grid"]

#: responses observed at fewer points per curve (median) than this are "sparse" (the default dictionary's size)
SPARSE_POINTS = 21
#: atoms of the default dictionary for sparse responses (a cubic B-spline basis; benchmarks/sparse_responses.py)
SPARSE_ATOMS = 8


def is_sparse(counts: np.ndarray, n_locations: int) -> bool:
    """Whether responses observed at ``counts`` points per curve, among ``n_locations`` distinct locations, are sparse.

    Sparse: on median, a curve is observed at fewer than ``SPARSE_POINTS``
    points (the size of the default dictionary) and at fewer than half of the
    distinct locations. The plug-in inner products of such a curve with the
    atoms are too noisy; the front end then fits the exact partial ridge on a
    small B-spline dictionary (``benchmarks/sparse_responses.py``).

    Examples
    --------
    >>> is_sparse(np.array([3, 5, 8]), 16), is_sparse(np.array([55, 50, 55]), 55), is_sparse(np.array([13, 14]), 15)
    (True, False, False)
    """
    counts = np.asarray(counts)
    if counts.size == 0 or counts.min() >= SPARSE_POINTS:  # the median is at least the minimum: no median needed
        return False
    mid = median(counts)
    return bool(mid < SPARSE_POINTS and mid < 0.5 * n_locations)


def routing(loss: Any, solver: str, fully_observed: bool, sparse: bool, approx: bool = False) -> tuple[str, str]:
    """Which solver the front end runs, and why (the one place for that decision).

    The pair (solver, loss) is checked by :func:`fdakpl.solvers.dispatch.resolve_solver`; ``"auto"`` is the
    closed-form ridge for the square loss (plug-in estimator for partially observed responses, the exact
    partial ridge for sparse ones unless ``approx``) and the iterative solver for other losses.

    Examples
    --------
    >>> routing("square", "auto", fully_observed=True, sparse=False)[0]
    'eig'
    >>> routing("square", "auto", fully_observed=False, sparse=True)[0]
    'exact_partial'
    >>> routing("logcosh", "auto", fully_observed=True, sparse=False)[1]
    'logcosh loss: iterative solver (L-BFGS-B, section 4.3)'
    """
    loss_obj = make_loss(loss)
    loss_name = loss if isinstance(loss, str) else type(loss).__name__.lower()
    if solver in {"eig", "sylvester", "exact_partial"} and not is_square(loss_obj):  # in the user's words
        raise ValueError(f"solver={solver!r} solves the square loss only; with loss={loss!r} use solver='iterative' "
                         "(or 'auto')")
    resolved, _ = resolve_solver(solver, loss_obj)
    if solver != "auto":
        return resolved, {
            "eig": "closed-form ridge by eigendecompositions (requested)",
            "sylvester": "closed-form ridge by a Sylvester solver (requested)",
            "exact_partial": "exact minimiser of the partially observed square loss (requested)",
            "iterative": "iterative solver (requested)",
        }[resolved]
    if not is_square(loss_obj):
        return "iterative", f"{loss_name} loss: iterative solver (L-BFGS-B, section 4.3)"
    if fully_observed:
        return "eig", "square loss, fully observed responses: closed-form ridge (Prop. 4.2)"
    if sparse and not approx:  # approx= has no exact partial route: plug-in
        return "exact_partial", ("square loss, sparse responses (on median a curve has under "
                                 f"{SPARSE_POINTS} points and under half the locations): exact partial "
                                 "ridge (ridge-iter-KPL, section 4.3)")
    return "eig", "square loss, partially observed responses: plug-in ridge estimator (Def. 4.1)"


def criterion_of(lam: Any, lam_grid: Any, groups: np.ndarray | None, groups_label: str, n_splits: int,
                 random_state: Any) -> tuple[Criterion, np.ndarray]:
    """The criterion of a ``lam`` option and the lambda grid it searches (checked once, here).

    ``"loo"`` (or a grid): exact leave-one-curve-out, leave-one-group-out with ``groups``; ``"gcv"``;
    ``"cv"``: K-fold; a number: fixed (the grid is then the one value).

    Examples
    --------
    >>> crit, grid = criterion_of("loo", None, None, "", 5, 0)
    >>> crit.name, grid.size
    ('leave-one-curve-out', 21)
    >>> criterion_of(1e-3, None, None, "", 5, 0)[0].name
    'fixed'
    """
    if isinstance(lam, str):
        how = lam.lower()
        if how not in {"gcv", "loo", "cv"}:
            raise ValueError(f"lam must be 'loo', 'gcv', 'cv', a number > 0 or a grid, got {lam!r}")
        grid = DEFAULT_LAMBDAS.copy() if lam_grid is None else check_grid(lam_grid, "lam_grid")
        if how == "gcv":
            return GCV(), grid
        if how == "cv":
            return KFold(n_splits, random_state, groups), grid
        return (LOO() if groups is None else GroupLOO(groups, groups_label)), grid
    if isinstance(lam, (bool, np.bool_)):
        raise TypeError(f"lam must be 'loo', 'gcv', 'cv', a number > 0 or a grid, got {lam!r}")
    if np.ndim(lam) == 0:
        try:
            value = float(lam)
        except (TypeError, ValueError):
            raise TypeError(f"lam must be 'loo', 'gcv', 'cv', a number > 0 or a grid, got {lam!r}") from None
        if not np.isfinite(value) or value <= 0:
            raise ValueError(f"lam must be a number > 0, got {lam}")
        if lam_grid is not None:  # the user's grid is checked even if unused
            check_grid(lam_grid, "lam_grid")
        return Fixed(value), np.array([value])
    grid = check_grid(lam, "lam")
    return (LOO() if groups is None else GroupLOO(groups, groups_label)), grid


def tuning_grid(value: Any, default: np.ndarray, name: str) -> np.ndarray | None:
    """A width or ``b`` grid option: ``"auto"`` (the default grid), None (nothing tuned) or numbers > 0.

    Examples
    --------
    >>> tuning_grid("auto", np.array([4.0, 8.0]), "width_grid"), tuning_grid(None, np.ones(1), "b_grid")
    (array([4., 8.]), None)
    """
    if value is None:
        return None
    if isinstance(value, str):
        if value == "auto":
            return default.copy()
        raise ValueError(f"{name} must be 'auto', None or a sequence of numbers > 0, got {value!r}")
    return check_grid(value, name, example="[4, 8, 16]")


def default_widths(inputs: Mapping[str, np.ndarray], weights: Mapping[str, Any] | None,
                   kernels: Mapping[str, Kernel | None], factors: Sequence[str] = ()) -> dict[str, Kernel]:
    """Kernels with median-heuristic widths for the terms without a kernel (None in ``kernels``): Gaussian, and
    :class:`~fdakpl.factor_kernels.Categorical` for the ``factors`` (terms made only of factors, whose inputs are
    indicator rows: width ``sqrt(2)``, the distance between two levels).

    The width of a term is the median pairwise L2 distance of its prepared inputs
    (:func:`fdakpl.formula.terms.median_heuristic`; curves weighted by their quadrature weights, filled
    when ``interpolate_inputs`` asked for it).

    Examples
    --------
    >>> default_widths({"x": np.array([[0.0], [1.0], [3.0]])}, None, {"x": None})
    {'x': Gaussian(sigma=2.0)}
    >>> default_widths({"C(g)": np.eye(3)}, None, {"C(g)": None}, factors=["C(g)"])
    {'C(g)': Categorical(sigma=1.4142135623730951)}
    """
    from ..formula.terms import median_heuristic

    weights = weights or {}
    return {term: kernel if kernel is not None else
            (Categorical if term in factors else Gaussian)(median_heuristic(inputs[term], weights.get(term)))
            for term, kernel in kernels.items()}


def combine(kernels: Mapping[str, Kernel], how: str) -> Kernel:
    """The product or sum of per-term kernels (in the formula's order).

    Examples
    --------
    >>> combine({"a": Gaussian(1.0)}, "product")
    a:Gaussian(sigma=1.0)
    """
    return Product(dict(kernels)) if how == "product" else Sum(dict(kernels))


def tune(problem: KPLProblem, kernels: dict[str, Kernel], tuned: list[str], widths: np.ndarray | None,
         bs: np.ndarray | None, output_matrix: Any, how: str, lams: np.ndarray, criterion: Criterion,
         width_default: bool, b_default: bool, notes: list[str]
         ) -> tuple[TuningResult, RidgePath, dict[str, Kernel], Any]:
    """Choose the widths of the ``tuned`` Gaussian (and Categorical) terms (multiples of their current widths), ``b``
    and lambda.

    Returns the tuning table, the chosen candidate's ridge path, the
    chosen kernels per term and output matrix. Edge notices go through :func:`fdakpl.utils.notices.warn`;
    a ``b`` at the top of the default grid is a note (``notes``).
    """
    tune_b = output_matrix is None and bs is not None and np.ptp(problem.dictionary.scales_) > 0
    terms = tuned if widths is not None else []
    # a factor term's Categorical kernel has its own default grid, whose two ends are natural (levels unrelated,
    # or the factor hardly entering); a width_grid given applies to every term
    grids = [DEFAULT_FACTOR_MULTIPLES if width_default and isinstance(kernels[t], Categorical) else widths
             for t in terms]
    b_grid = bs if tune_b else np.array([np.nan])

    def width(t: str, m: float) -> Kernel:  # a Gaussian or a Categorical (factor) kernel m times as wide
        return type(kernels[t])(m * kernels[t].sigma)  # type: ignore[attr-defined]

    def kernel_of(mult: tuple[float, ...]) -> tuple[Kernel, np.ndarray]:
        chosen = dict(kernels)
        for t, m in zip(terms, mult, strict=True):
            chosen[t] = width(t, m)
        kernel = combine(chosen, how)
        return kernel, problem.kernel_matrix(kernel)

    def output_of(b: float) -> tuple[np.ndarray, bool]:
        return problem.output_matrix(ScaleDecay(b) if tune_b else output_matrix)

    result, path = search(problem, kernel_of, grids if terms else [1.0], len(terms), output_of, b_grid, lams,
                          criterion, terms)
    chosen = dict(kernels)
    for t, m, g in zip(terms, result.multiples, grids, strict=True):
        chosen[t] = width(t, m)
        if g is DEFAULT_FACTOR_MULTIPLES:
            if m in (g.min(), g.max()):
                end = "levels unrelated" if m == g.min() else "the factor hardly changes the predictions"
                rho = Categorical(m * kernels[t].sigma).correlation  # type: ignore[attr-defined]
                notes.append(f"the factor term {t!r}: correlation {rho:.4f} between its levels by {criterion.name}, "
                             f"an end of the default grid ({end})")
            continue
        msg = edge_notice(f"width multiple (of the median heuristic) of {t!r}", g, m, criterion,
                          "width_grid=[...], multiples of the median heuristic", natural_low=width_default)
        if msg:
            warn(msg)
    if tune_b and b_default and result.index[1] == len(b_grid) - 1:
        # the default grid's upper end: extending it to b = 4 raised the held-out error on DTI (20/20 splits)
        # and changed nothing on aemet, emotion and poblenou (benchmarks/grid_edges.py), so no warning
        notes.append(f"scale decay b = {result.b:g} chosen by {criterion.name}, the largest of the default grid "
                     f"{list(map(float, b_grid))}; larger b (smoother fitted curves) did not lower the held-out "
                     "error on the benchmark data sets (benchmarks/README.md, 'Grid edges'); b_grid=[...] tries "
                     "others")
    elif tune_b:
        msg = edge_notice("scale decay b", b_grid, result.b, criterion, "b_grid=[...]", natural_low=True)
        if msg:
            warn(msg)
    return result, path, chosen, ScaleDecay(result.b) if tune_b else output_matrix


def exact_partial_choice(problem: KPLProblem, kernel: Kernel, B: np.ndarray, grid: np.ndarray,
                         criterion: Criterion, sparse: bool, notes: list[str]) -> tuple[PathCriteria, float, Criterion]:
    """Lambda of the exact partial ridge by its own exact path (GCV or leave-one-curve-out).

    For sparse responses GCV is replaced by leave-one-curve-out (with a note): GCV leaves out single points
    of curves whose few other points stay in, and on sparsified DTI it undersmoothed (worse than the training
    mean, ``benchmarks/sparse_responses.py``); the exact curve-level criterion costs the same.

    Returns
    -------
    criteria : PathCriteria
    lam : float
    criterion : Criterion
        The criterion used.
    """
    K = problem.kernel_matrix(kernel)
    obs = problem.centred
    phi_points = problem.dictionary.evaluate(obs.location)
    criteria = exact_partial_path(K, B, phi_points, obs, problem.weights, grid)
    if criterion.key == "gcv" and sparse:
        criterion = LOO()
        notes.append("sparse responses: lambda by exact leave-one-curve-out instead of GCV, which leaves out "
                     "single points and undersmooths (benchmarks/sparse_responses.py)")
    _, lam = criteria.best("gcv" if criterion.key == "gcv" else "loo")
    return criteria, lam, criterion


def curvature_ratio(loss: Any) -> float:
    """``l''(0) / 2`` of a ground loss: its quadratic part relative to the square loss ``a**2`` (1 for the square).

    Examples
    --------
    >>> curvature_ratio("square"), curvature_ratio("logcosh(3)"), curvature_ratio("huber")
    (1.0, 1.5, 0.5)
    """
    zero = np.zeros(1)
    return float(make_loss(loss).second_derivative(zero, zero)[0]) / 2.0
