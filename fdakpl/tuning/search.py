"""Joint choice of kernel widths, the output decay ``b`` and lambda by a closed-form criterion.

Every candidate (width multiples, ``b``) is a :class:`~fdakpl.ridge.path.RidgePath` of the same
:class:`~fdakpl.ridge.problem.KPLProblem`, scored along the whole lambda grid by a
:class:`~fdakpl.tuning.criteria.Criterion` (exact leave-one-curve-out by default). The kernel matrix of
each width candidate is decomposed once and serves every ``b`` and lambda; the path of the chosen
candidate is returned, so the fitted model reuses its decomposition: one eigendecomposition of an
``n x n`` matrix per width tried, none more.

With one tuned term every (width, ``b``, lambda) of the grid is scored. With several, the search first
scales every term by a common multiple, then, from the best common multiple, moves one term at a time over
the grid (one sweep of coordinate search): ``len(width_grid) * (1 + n_terms)`` widths instead of
``len(width_grid) ** n_terms``. Terms may have grids of their own (factor terms:
:data:`DEFAULT_FACTOR_MULTIPLES`): the common step then moves every term to the same relative position of
its grid (the nearest for grids of other lengths), and the sweep moves each term over its own grid.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..kernels import Kernel
from ..ridge.path import RidgePath
from ..ridge.problem import KPLProblem
from ..solvers.closed_form import psd_eigh
from ..utils.saved import saved
from .criteria import Criterion

__all__ = ["DEFAULT_B_GRID", "DEFAULT_FACTOR_MULTIPLES", "DEFAULT_SUBJECT_WEIGHTS", "DEFAULT_WIDTH_MULTIPLES",
           "Scorer", "TuningResult", "search"]

#: default multiples of the median-heuristic width of every Gaussian term, chosen by held-out error on DTI
#: (benchmarks/results/tuning_grids.json; the guide's tuning page): curve-level LOO prefers narrower
#: kernels than held-out error does there, so the grid starts at 4 and its lower end raises no warning
DEFAULT_WIDTH_MULTIPLES = np.array([4.0, 8.0, 16.0])
#: default multiples of the median-heuristic width (sqrt 2) of every factor term's Categorical kernel: the
#: correlation between two levels goes from 0.0003 (levels unrelated) to 0.9999 (the factor hardly enters), both
#: natural ends (no edge warning); held-out error on emotion, poblenou and DTI with sex was lower than with the
#: treatment-coded design on all three, as with grids of 7 or 9 values at up to 1.6x the fit time
#: (benchmarks/factor_kernels.py)
DEFAULT_FACTOR_MULTIPLES = np.array([0.25, 1.0, 4.0, 16.0, 64.0])
#: default weights ``w`` of a subject term's :class:`~fdakpl.factor_kernels.RandomEffect` kernel
#: (``K = K_rest + w K_subject``; 0: no subject effect), chosen by held-out error on DTI and emotion
#: (benchmarks/subject_effects.py)
DEFAULT_SUBJECT_WEIGHTS = np.array([0.0, 1 / 64, 1 / 16, 1 / 4, 1.0, 4.0])
#: default scale decays ``b`` of ``B = diag(b^-scale)`` for dictionaries with scales (1 = identity)
DEFAULT_B_GRID = np.array([1.0, 1.5, 2.0])


@saved("candidates", "b_grid", "lams", "scores", "index", "criterion", "terms")
@dataclass
class TuningResult:
    """The joint choice of width multiples, ``b`` and lambda, with the whole score table.

    Attributes
    ----------
    candidates : list of tuple of float
        Width multiples tried, one tuple per candidate (one entry per tuned term).
    b_grid : numpy.ndarray
        ``b`` values tried (``[nan]`` when ``b`` was not tuned).
    lams : numpy.ndarray
    scores : numpy.ndarray, shape (n_candidates, n_b, n_lams)
        Criterion values (NaN where not evaluated), in the responses' units (``inf`` or 0 where the responses
        are so large or small that the values are not representable; the choice was made in exact units).
    index : (int, int, int)
        Position of the minimum in ``scores``.
    criterion : str
        The criterion's key (``"loo"``, ``"group_loo"`` or ``"gcv"``).
    terms : list of str
        The tuned terms, in the order of the multiples.
    """

    candidates: list[tuple[float, ...]]
    b_grid: np.ndarray
    lams: np.ndarray
    scores: np.ndarray
    index: tuple[int, int, int]
    criterion: str
    terms: list[str] = field(default_factory=list)

    @property
    def multiples(self) -> tuple[float, ...]:
        """The chosen width multiples."""
        return self.candidates[self.index[0]]

    @property
    def b(self) -> float:
        """The chosen ``b`` (NaN when not tuned)."""
        return float(self.b_grid[self.index[1]])

    @property
    def lam(self) -> float:
        """The chosen lambda."""
        return float(self.lams[self.index[2]])

    @property
    def score(self) -> float:
        """The criterion at the choice."""
        return float(self.scores[self.index])


#: ``scorer(kernel, K, [(B, identity), ...]) -> [(scores along the lambdas, fitted), ...]``: another way of scoring
#: the candidates of :func:`search` (the exact partial ridge's criteria, :func:`fdakpl.tuning.partial.partial_scorer`);
#: its scores are in the responses' units
Scorer = Callable[[Kernel, np.ndarray, list[tuple[np.ndarray, bool]]], list[tuple[np.ndarray, Any]]]


def search(problem: KPLProblem, kernel_of: Callable[[tuple[float, ...]], tuple[Kernel, np.ndarray]],
           width_grid: Sequence[float] | Sequence[Sequence[float]], n_terms: int,
           output_of: Callable[[float], tuple[np.ndarray, bool]], b_grid: Sequence[float],
           lams: np.ndarray, criterion: Criterion, terms: Sequence[str] = (),
           scorer: Scorer | None = None, shared: dict | None = None) -> tuple[TuningResult, Any]:
    """Score every candidate on the lambda grid; return the table and the chosen candidate's path.

    Parameters
    ----------
    problem : KPLProblem
    kernel_of : callable
        ``multiples -> (kernel, K)``: the kernel for a tuple of ``n_terms`` multiples and its matrix on the
        problem's inputs.
    width_grid : sequence of float, or one sequence per term
        Multiples tried for each term (``[1.0]`` with ``n_terms = 0`` to tune nothing).
    n_terms : int
        Number of tuned kernel terms (0: the kernel is fixed).
    output_of : callable
        ``b -> (B, identity)`` (:meth:`KPLProblem.output_matrix`).
    b_grid : sequence of float
        ``b`` values (``[nan]`` and a constant ``output_of`` to tune nothing).
    lams : numpy.ndarray
    criterion : Criterion
        A closed-form criterion.
    terms : sequence of str
        Names of the tuned terms (recorded in the result).
    scorer : callable, optional
        Scores the candidates otherwise than by ``criterion`` on closed-form ridge paths (see :data:`Scorer`);
        the second value returned is then what the scorer gave for the chosen candidate.
    shared : dict, optional
        A cache of kernel matrices and their eigendecompositions by width multiples, shared by searches on
        problems with the same inputs (dictionaries tried by ``dictionary="auto"``, at the widths the first one
        chose): the chosen candidate's are put there (one ``n x n`` pair, not one per candidate).

    Returns
    -------
    TuningResult, RidgePath

    Examples
    --------
    >>> from fdakpl.kernels import Gaussian
    >>> from fdakpl.ridge.problem import prepare_problem
    >>> from fdakpl.tuning.criteria import LOO
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(15, 1)); grid = np.linspace(0, 1, 6)
    >>> p = prepare_problem(X, np.sin(X) * grid + 0.1 * rng.normal(size=(15, 6)), grid, dictionary="bspline")
    >>> def kernel_of(m):
    ...     k = Gaussian(m[0]); return k, p.kernel_matrix(k)
    >>> res, path = search(p, kernel_of, [0.5, 1.0, 2.0], 1, lambda b: p.output_matrix(None), [np.nan],
    ...                    np.array([1e-4, 1e-2, 1.0]), LOO())
    >>> res.scores.shape, path.kernel == Gaussian(res.multiples[0])
    ((3, 1, 3), True)
    """
    if not criterion.closed_form and scorer is None:
        raise ValueError(f"search scores ridge paths in closed form; {criterion.name} refits")
    grids = _term_grids(width_grid, n_terms)
    b_grid = np.atleast_1d(np.asarray(b_grid, dtype=float))
    outputs = [output_of(float(b)) for b in b_grid]
    cache: dict[tuple[float, ...], np.ndarray] = {}
    best: list = [np.inf, None, None, None]  # score, path, multiples, (kernel, K, eigendecomposition)

    def scores_of(mult: tuple[float, ...]) -> np.ndarray:
        if mult in cache:
            return cache[mult]
        if shared is not None and mult in shared:
            kernel, K, eig = shared[mult]
        else:
            kernel, K = kernel_of(mult)
            eig = None
        out = np.empty((b_grid.size, lams.size))
        held = [eig]
        scored = path_scorer(kernel, K, outputs, held) if scorer is None else scorer(kernel, K, outputs)
        for j, (scores, path) in enumerate(scored):
            out[j] = scores
            with np.errstate(invalid="ignore"):
                low = float(np.min(np.where(np.isfinite(out[j]), out[j], np.inf)))
            if low < best[0] or best[1] is None:
                best[0], best[1] = low, path
                best[2], best[3] = mult, (kernel, K, held[0])
        cache[mult] = out
        return out

    def path_scorer(kernel: Kernel, K: np.ndarray, outs: list[tuple[np.ndarray, bool]],
                    held: list) -> Iterator[tuple[Any, Any]]:
        if held[0] is None:
            held[0] = psd_eigh(K, kernel.exact_symmetric())  # one eigendecomposition per width candidate
        eig = held[0]
        for B, identity in outs:
            path = RidgePath.fit(problem, kernel, B, identity, K=K, K_eigh=eig)
            yield criterion.path_scores(path, lams), path

    if n_terms <= 1:
        for c in ([(m,) for m in grids[0]] if n_terms == 1 else [()]):
            scores_of(c)
    else:
        steps = max(len(g) for g in grids)
        common = [tuple(g[round(j * (len(g) - 1) / max(steps - 1, 1))] for g in grids) for j in range(steps)]
        start = min(common, key=lambda c: float(np.nanmin(scores_of(c))))
        cur = list(start)
        for t in range(n_terms):
            opts = [(*cur[:t], m, *cur[t + 1:]) for m in grids[t]]
            cur = list(min(opts, key=lambda c: float(np.nanmin(scores_of(c)))))
    candidates = list(cache)
    scores = np.stack([cache[c] for c in candidates])
    with np.errstate(invalid="ignore"):
        flat = np.where(np.isfinite(scores), scores, np.inf)
    index = tuple(int(i) for i in np.unravel_index(int(np.argmin(flat)), scores.shape))
    if shared is not None and best[2] == candidates[index[0]]:
        # only the chosen candidate's matrices are kept for the next dictionary (which tries the chosen widths):
        # one n x n kernel matrix and its eigendecomposition, not one per candidate (memory planned by
        # fdakpl.solvers.memory.check_exact_memory)
        shared[best[2]] = best[3]
    best[3] = None
    if scorer is None:
        scores = best[1].in_units(scores)  # chosen in the forms' units (no overflow), reported in the responses' units
    result = TuningResult(candidates, b_grid, lams, scores, index, criterion.key, list(terms))  # type: ignore[arg-type]
    return result, best[1]


def _term_grids(width_grid: Sequence[float] | Sequence[Sequence[float]], n_terms: int) -> list[list[float]]:
    """One grid of multiples per term: the same for every term, or the term's own."""
    if len(width_grid) and all(np.ndim(g) == 1 for g in width_grid):
        if len(width_grid) != n_terms:
            raise ValueError(f"width_grid gives {len(width_grid)} grids for {n_terms} tuned terms")
        return [[float(m) for m in g] for g in width_grid]
    return [[float(m) for m in width_grid]] * max(n_terms, 1)
