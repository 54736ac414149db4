"""The steps of :meth:`fdakpl.FunctionalRegression.fit`, as functions of the model's options and one
prepared problem: which solver runs and why, how lambda is chosen (a criterion object), which kernel
widths and ``b`` are tried, and the tuning itself, which returns the ridge path it scored.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from ..data.scaling import median
from ..dictionaries import Dictionary, Fourier
from ..factor_kernels import Categorical, RandomEffect
from ..formula.terms import SCALARS
from ..kernels import Gaussian, Kernel, Product, ScaleDecay, Sum
from ..losses import is_square, make_loss
from ..ridge.path import PathCriteria
from ..ridge.problem import KPLProblem
from ..solvers.dispatch import resolve_solver
from ..tuning.criteria import DEFAULT_LAMBDAS, GCV, LOO, Criterion, Fixed, GroupLOO, KFold, check_grid, edge_notice
from ..tuning.partial import partial_scorer
from ..tuning.search import DEFAULT_FACTOR_MULTIPLES, DEFAULT_SUBJECT_WEIGHTS, Scorer, TuningResult, search
from ..utils.notices import warn

__all__ = ["AUTO_FOURIER_FREQS", "SPARSE_ATOMS", "SPARSE_POINTS", "atom_candidates", "combine", "criterion_of",
           "curvature_ratio", "default_widths", "exact_partial_choice", "group_labels", "is_sparse", "kfold_scorer",
           "routing", "term_grids", "tune", "tuning_grid", "tuning_notices", "widened"]

#: responses observed at fewer points per curve (median) than this are "sparse" (the default dictionary's size)
SPARSE_POINTS = 21
#: atoms of the default dictionary for sparse responses (a cubic B-spline basis; benchmarks/sparse_responses.py)
SPARSE_ATOMS = 8
#: frequencies of the Fourier bases among which ``dictionary="auto"`` chooses on more than 21 response locations
#: (:func:`atom_candidates`; benchmarks/atoms_and_cv.py)
AUTO_FOURIER_FREQS = (10, 20, 40)


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
    closed-form ridge for the square loss (on estimated inner products for partially observed responses, the exact
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
    return "eig", ("square loss, partially observed responses: closed-form ridge on the estimated inner products "
                   "(Def. 4.1; how they are estimated: the Integration line)")


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
        who = "groups" if groups_label in {"", "groups"} else f"groups={groups_label!r}"
        if how == "gcv":
            if groups is not None:
                raise ValueError(f"{who} would be ignored by lam='gcv', which leaves out single "
                                 "points; use lam='loo' (leave-one-group-out) or lam='cv' (whole groups in a fold), "
                                 "or drop groups=")
            return GCV(), grid
        if how == "cv":
            n_groups = 0 if groups is None else int(np.unique(groups).size)
            if groups is not None and n_groups < n_splits:
                raise ValueError(f"lam='cv' keeps each group in one fold, so cv={n_splits} folds need at least "
                                 f"{n_splits} groups; {who} has {n_groups}: lower cv= or use "
                                 "lam='loo' (leave-one-group-out)")
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


def group_labels(values: Any, n: int, label: str, samples: np.ndarray | None = None) -> np.ndarray:
    """One group code per curve (0, 1, ... in order of first appearance) from the labels of ``groups=``, checked.

    Missing labels (None, NaN, ``pd.NA``, NaT, in any column type) are named by sample; a single group is refused
    (leaving it out leaves nothing to train on, so the criterion cannot choose); labels of mixed types are
    compared as they are (``1`` and ``"1"`` are two groups).

    Parameters
    ----------
    values : array-like
        One label per curve.
    n : int
        Number of curves.
    label : str
        How the message names the groups (``"groups='subject'"``).
    samples : numpy.ndarray, optional
        The curves' sample labels, to name curves without a group.

    Examples
    --------
    >>> group_labels(["b", "a", "b", 3], 4, "groups")
    array([0, 1, 0, 2])
    >>> group_labels(["a", None, "b"], 3, "groups='subject'", np.array(["s1", "s2", "s3"]))
    Traceback (most recent call last):
    ...
    ValueError: groups='subject' has no label for samples ['s2']; give every curve a group, or drop those ...
    """
    import pandas as pd

    from ..data.labels import samples_text

    arr = np.asarray(values, dtype=object) if not isinstance(values, np.ndarray) else values
    if arr.shape != (n,):
        raise ValueError(f"{label} must give one label per curve ({n}), got shape {arr.shape}")
    missing = np.flatnonzero(pd.isna(pd.Series(arr, dtype=object)).to_numpy())
    if missing.size:
        how = f" (e.g. ds.dropna('sample', subset=[{label.split('=', 1)[1]}]))" if "=" in label else ""
        raise ValueError(f"{label} has no label for {samples_text(missing, samples)}; give every curve a group, or "
                         f"drop those curves{how}")
    codes = pd.factorize(pd.Series(arr, dtype=object))[0].astype(np.int64)
    if codes.max() == 0:
        raise ValueError(f"{label} puts every curve in one group: leaving it out leaves no curve to fit, so no "
                         "criterion can choose lambda; give at least two groups, or drop groups=")
    return codes


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
                   kernels: Mapping[str, Kernel | None], factors: Sequence[str] = (),
                   subjects: Sequence[str] = ()) -> dict[str, Kernel]:
    """Kernels with median-heuristic widths for the terms without a kernel (None in ``kernels``): Gaussian, and
    :class:`~fdakpl.factor_kernels.Categorical` for the ``factors`` (terms made only of factors, whose inputs are
    indicator rows: width ``sqrt(2)``, the distance between two levels); the ``subjects`` (``re(ID)`` terms) get
    ``RandomEffect(1.0)`` (weight multiples tried: :data:`~fdakpl.tuning.search.DEFAULT_SUBJECT_WEIGHTS`).

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
    return {term: kernel if kernel is not None else RandomEffect(1.0) if term in subjects else
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


def term_grids(kernels: Mapping[str, Kernel], terms: Sequence[str], widths: np.ndarray | None,
               width_default: bool) -> list[np.ndarray]:
    """The width multiples tried for each tuned term: the width grid, except that a factor term's
    :class:`~fdakpl.factor_kernels.Categorical` kernel has its own default grid
    (:data:`~fdakpl.tuning.search.DEFAULT_FACTOR_MULTIPLES`, whose two ends are natural: levels unrelated, or the
    factor hardly entering); a ``width_grid`` given applies to every such term. A subject term's
    :class:`~fdakpl.factor_kernels.RandomEffect` always has its grid of weights
    (:data:`~fdakpl.tuning.search.DEFAULT_SUBJECT_WEIGHTS`, multiples of its weight).

    Examples
    --------
    >>> term_grids({"x": Gaussian(1.0), "C(g)": Categorical(1.0)}, ["x", "C(g)"], np.array([4.0, 8.0]), True)[1].size
    5
    """
    if widths is not None and len(widths) and np.ndim(widths[0]) == 1:  # one grid per term already
        return [np.asarray(g, dtype=float) for g in widths]
    return [DEFAULT_SUBJECT_WEIGHTS if isinstance(kernels[t], RandomEffect) else
            DEFAULT_FACTOR_MULTIPLES if width_default and isinstance(kernels[t], Categorical) else widths
            for t in terms]  # type: ignore[misc]


def tune(problem: KPLProblem, kernels: dict[str, Kernel], tuned: list[str], widths: np.ndarray | None,
         bs: np.ndarray | None, output_matrix: Any, how: str, lams: np.ndarray, criterion: Criterion,
         width_default: bool, b_default: bool, notes: list[str], scorer: Scorer | None = None, say: bool = True,
         shared: dict | None = None) -> tuple[TuningResult, Any, dict[str, Kernel], Any]:
    """Choose the widths of the ``tuned`` Gaussian (and Categorical) terms (multiples of their current widths), ``b``
    and lambda.

    Returns the tuning table, the chosen candidate's ridge path (what ``scorer`` gives for it, when given: see
    :func:`fdakpl.tuning.search.search`), the chosen kernels per term and output matrix. Edge notices go through
    :func:`fdakpl.utils.notices.warn`; a ``b`` at the top of the default grid is a note (``notes``); with
    ``say=False`` neither (:func:`tuning_notices` says them for the candidate finally chosen). ``shared`` caches the
    kernel matrices and their eigendecompositions across problems with the same inputs (see ``search``).
    """
    tune_b = output_matrix is None and bs is not None and np.ptp(problem.dictionary.scales_) > 0
    terms = tuned if widths is not None else []
    grids = term_grids(kernels, terms, widths, width_default)
    b_grid = bs if tune_b else np.array([np.nan])

    def kernel_of(mult: tuple[float, ...]) -> tuple[Kernel, np.ndarray]:
        kernel = combine(widened(kernels, terms, mult), how)
        return kernel, problem.kernel_matrix(kernel)

    def output_of(b: float) -> tuple[np.ndarray, bool]:
        return problem.output_matrix(ScaleDecay(b) if tune_b else output_matrix)

    result, path = search(problem, kernel_of, grids if terms else [1.0], len(terms), output_of, b_grid, lams,
                          criterion, terms, scorer, shared)
    chosen = widened(kernels, terms, result.multiples)
    if say:
        tuning_notices(result, grids, b_grid if tune_b else None, criterion, width_default, b_default, notes, kernels)
    return result, path, chosen, ScaleDecay(result.b) if tune_b else output_matrix


def widened(kernels: Mapping[str, Kernel], terms: Sequence[str], multiples: Sequence[float]) -> dict[str, Kernel]:
    """The kernels with the ``terms``' widths multiplied by ``multiples`` (Gaussian or Categorical, kept as they are;
    the weight of a :class:`~fdakpl.factor_kernels.RandomEffect`).

    Examples
    --------
    >>> widened({"x": Gaussian(1.0), "C(g)": Categorical(2.0)}, ["C(g)"], [4.0])["C(g)"]
    Categorical(sigma=8.0)
    """
    out = dict(kernels)
    for t, m in zip(terms, multiples, strict=True):
        k = kernels[t]
        out[t] = RandomEffect(m * k.weight) if isinstance(k, RandomEffect) else \
            type(k)(m * k.sigma)  # type: ignore[attr-defined]
    return out


def tuning_notices(result: TuningResult, grids: Sequence[np.ndarray], b_grid: np.ndarray | None,
                   criterion: Criterion, width_default: bool, b_default: bool, notes: list[str],
                   kernels: Mapping[str, Kernel]) -> None:
    """The edge notices of a tuning result (widths on each term's grid, ``b``; ``b_grid`` None when ``b`` was not
    tuned); a ``b`` at the top of the default grid, a factor term at an end of its default grid, and the numeric
    scalar covariates at the widest default width (they change the predictions little: nothing to extend), are
    notes."""
    for t, m, g in zip(result.terms, result.multiples, grids, strict=True):
        if g is DEFAULT_SUBJECT_WEIGHTS:
            w = m * kernels[t].weight  # type: ignore[attr-defined]
            if m == g.min():
                notes.append(f"the subject term {t!r}: weight 0 chosen by {criterion.name} (the subjects' effects did "
                             "not lower the criterion; with new_subjects=True they cannot)")
            elif m == g.max():
                notes.append(f"the subject term {t!r}: weight {w:g} chosen by {criterion.name}, the largest of its "
                             f"grid {list(map(float, g))} (the subject effects are large next to the other terms)")
            continue
        if g is DEFAULT_FACTOR_MULTIPLES:
            if m in (g.min(), g.max()):
                end = "levels unrelated" if m == g.min() else "the factor hardly changes the predictions"
                rho = Categorical(m * kernels[t].sigma).correlation  # type: ignore[attr-defined]
                notes.append(f"the factor term {t!r}: correlation {rho:.4f} between its levels by {criterion.name}, "
                             f"an end of the default grid ({end})")
            continue
        if t == SCALARS and width_default and m >= np.max(g):
            # the widest kernel on the scalar covariates is nearly constant over them: they change the predictions
            # little (a fact about the data, not a grid to extend); the term table's importance says how little
            shown = ", ".join(f"{v:g}" for v in np.unique(np.asarray(g, dtype=float)))
            notes.append(f"the numeric scalar covariates ({t!r}) got the widest kernel of the grid, {m:g} x the "
                         f"median heuristic (grid [{shown}]), by {criterion.name}: the kernel is nearly constant "
                         "over them, so they change the predictions little")
            continue
        msg = edge_notice(f"width multiple (of the median heuristic) of {t!r}", g, m, criterion,
                          "width_grid=[...], multiples of the median heuristic", natural_low=width_default)
        if msg:
            warn(msg)
    if b_grid is None:
        return
    if b_default and result.index[1] == len(b_grid) - 1:
        # the default grid's upper end: extending it to b = 4 raised the held-out error on DTI (20/20 splits)
        # and changed nothing on aemet, emotion and poblenou (benchmarks/grid_edges.py), so no warning
        notes.append(f"scale decay b = {result.b:g} chosen by {criterion.name}, the largest of the default grid "
                     f"{list(map(float, b_grid))}; larger b (smoother fitted curves) did not lower the held-out "
                     "error on the benchmark data sets (benchmarks/README.md, 'Grid edges'); b_grid=[...] tries "
                     "others")
    else:
        msg = edge_notice("scale decay b", b_grid, result.b, criterion, "b_grid=[...]", natural_low=True)
        if msg:
            warn(msg)


def atom_candidates(spec: Any, problem: KPLProblem) -> list[Dictionary]:
    """The dictionaries among which ``dictionary="auto"`` chooses, with the widths, ``b`` and lambda, by the fit's
    criterion; ``[]`` when there is no choice.

    ``"auto"`` on more than 21 response locations is a Fourier basis; its number of frequencies is chosen among
    :data:`AUTO_FOURIER_FREQS` (at most one atom per observed location), so that the dictionary can follow steep or
    peaked curves that 21 atoms cannot (the representation error shown by the summary). Explicit dictionaries,
    hat functions (one per location already) and sparse responses' B-splines are not changed.

    Examples
    --------
    >>> from fdakpl.ridge.problem import prepare_problem
    >>> p = prepare_problem(np.arange(4.0)[:, None], np.ones((4, 50)), np.linspace(0, 1, 50))
    >>> [d.n_freqs for d in atom_candidates("auto", p)], atom_candidates("fourier", p)
    ([10, 20], [])
    """
    if not (isinstance(spec, str) and spec == "auto") or not isinstance(problem.dictionary, Fourier):
        return []
    obs = problem.obs
    if obs.grid is not None and obs.grid_index is not None:
        q = int(np.count_nonzero(np.bincount(obs.grid_index, minlength=obs.grid.size)))
    else:
        q = int(np.unique(obs.location).size)
    freqs = [k for k in AUTO_FOURIER_FREQS if 2 * k + 1 <= q]
    return [Fourier(k) for k in freqs] if len(freqs) > 1 else []


def kfold_scorer(estimator: Any, X: Any, Y: Any, lams: np.ndarray, criterion: KFold, n_jobs: int,
                 progress: bool | None) -> Scorer:
    """A scorer for :func:`fdakpl.tuning.search.search`: each candidate kernel and ``B`` by K-fold cross-validation
    of ``estimator`` (:func:`fdakpl.tuning.kfold.kfold_path`: same folds for every candidate, groups kept in one
    fold), mean held-out error along ``lams``; the fitted value of a candidate is its CV table."""
    from sklearn.base import clone

    from ..tuning.kfold import kfold_path

    def score(kernel: Kernel, K: np.ndarray, outputs: list[tuple[np.ndarray, bool]]
              ) -> Iterator[tuple[np.ndarray, Any]]:
        est = clone(estimator).set_params(kernel=kernel)
        res = kfold_path(est, X, Y, lams=lams, param_grid={"output_matrix": [B for B, _ in outputs]},
                         n_splits=criterion.n_splits, random_state=criterion.random_state, n_jobs=n_jobs,
                         progress=progress, groups=criterion.groups)
        for row in res["scores"]:
            yield row, res

    return score


def exact_partial_choice(problem: KPLProblem, kernels: dict[str, Kernel], tuned: list[str], widths: np.ndarray | None,
                         bs: np.ndarray | None, output_matrix: Any, how: str, grid: np.ndarray, criterion: Criterion,
                         sparse: bool, notes: list[str]
                         ) -> tuple[TuningResult, PathCriteria, dict[str, Kernel], Any, Criterion]:
    """Widths of the ``tuned`` terms, ``b`` and lambda of the exact partial ridge by its own exact criteria (GCV,
    leave-one-curve-out or leave-one-group-out along its exact path; one ``N x N`` eigendecomposition per
    candidate), by the search of :func:`tune`.

    For sparse responses GCV is replaced by leave-one-curve-out (with a note): GCV leaves out single points
    of curves whose few other points stay in, and on sparsified DTI it undersmoothed (worse than the training
    mean, ``benchmarks/sparse_responses.py``); the exact curve-level criterion costs the same.

    Returns
    -------
    result : TuningResult
    criteria : PathCriteria
        The chosen candidate's criteria along ``grid``.
    kernels : dict
        The chosen kernel of every term.
    output_matrix : Any
        The chosen output matrix.
    criterion : Criterion
        The criterion used.
    """
    if criterion.key == "gcv" and sparse:
        criterion = LOO()
        notes.append("sparse responses: lambda by exact leave-one-curve-out instead of GCV, which leaves out "
                     "single points and undersmooths (benchmarks/sparse_responses.py)")
    groups = criterion.labels if isinstance(criterion, GroupLOO) else None
    key = {"gcv": "gcv", "group_loo": "group_loo"}.get(criterion.key, "loo")
    scorer = partial_scorer(problem, grid, key, groups)
    result, criteria, chosen, out = tune(problem, kernels, tuned, widths, bs, output_matrix, how, grid, criterion,
                                         width_default=False, b_default=False, notes=notes, scorer=scorer)
    return result, criteria, chosen, out, criterion


def curvature_ratio(loss: Any) -> float:
    """``l''(0) / 2`` of a ground loss: its quadratic part relative to the square loss ``a**2`` (1 for the square).

    Examples
    --------
    >>> curvature_ratio("square"), curvature_ratio("logcosh(3)"), curvature_ratio("huber")
    (1.0, 1.5, 0.5)
    """
    zero = np.zeros(1)
    return float(make_loss(loss).second_derivative(zero, zero)[0]) / 2.0
