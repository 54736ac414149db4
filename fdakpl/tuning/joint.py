"""Curve-level tuning: exact leave-one-curve-out over lambda, kernel widths and the output decay ``b``.

Points within a curve are dependent, so criteria that leave out single points
(pointwise GCV) undersmooth: they favour models that nearly interpolate every
training curve. The criterion here leaves out whole curves, exactly, in closed
form (:func:`curve_loo_path`), and the same criterion chooses the widths of the
Gaussian kernels and the scale decay of ``B`` (:func:`tune_closed_form`).

Closed form (rows are curves; notation of :mod:`fdakpl.tuning.selection`): with
``K = U diag(s) U^T``, ``B^{1/2} G B^{1/2} = V diag(e) V^T`` and ``P = B^{1/2} V``,
the fitted coefficients of curve ``i`` in the rotated basis are
``R_i = sum_k U_ik s_k (U^T N P)_k / (s_k e + n lam)``; leaving curve ``i`` out
(penalty ``n lam`` and mean function held fixed) gives
``C_i = R_i - t_i * g_i / (1 - e * t_i)`` with ``t_il = sum_k U_ik^2 s_k / (s_k e_l + n lam)``
and ``g_i = (N P)_i - e * R_i``. Its weighted squared error on curve ``i``'s
observed points is the quadratic form

    ``sum_p c_ip (y_ip - phi_ip^T P C_i)^2 = yy_i - 2 C_i^T (N P)_i + C_i^T (P^T M_i P) C_i``

with ``yy_i = sum_p c_ip y_ip^2`` and ``M_i = sum_p c_ip phi_ip phi_ip^T``
(:class:`CurveQuadratics`), so the whole lambda path costs ``O(L n^2 d + L n d^2)``
and never touches the points again. Per width: one eigendecomposition of ``K``;
per ``b``: one of the ``d x d`` matrix.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import product

import numpy as np
import scipy.sparse as sp

from ..data.functional import Observations
from ..solvers.closed_form import RidgeDecomposition, output_side, psd_eigh

__all__ = [
    "DEFAULT_B_GRID",
    "DEFAULT_FACTOR_MULTIPLES",
    "DEFAULT_WIDTH_MULTIPLES",
    "CurveQuadratics",
    "TuningResult",
    "chunk_quadratics",
    "curve_loo_path",
    "curve_quadratics",
    "group_indices",
    "primal_loo_block",
    "primal_loo_terms",
    "product_grid",
    "tune_closed_form",
    "warn_on_edge",
]

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
#: default scale decays ``b`` of ``B = diag(b^-scale)`` for dictionaries with scales (1 = identity)
DEFAULT_B_GRID = np.array([1.0, 1.5, 2.0])


@dataclass(frozen=True)
class CurveQuadratics:
    """Per-curve pieces of the weighted squared error of a coefficient vector.

    ``sum_p c_ip (y_ip - phi_ip^T h)^2 = yy_i - 2 h^T nu_i + h^T M_i h``.

    Attributes
    ----------
    yy : numpy.ndarray, shape (n,)
        ``sum_p c_ip y_ip^2``.
    M : numpy.ndarray, shape (n, d, d), or (d, d) when every curve shares it
        ``sum_p c_ip phi(theta_ip) phi(theta_ip)^T`` (fully observed curves on
        quadrature weights share one matrix).
    W, phi : numpy.ndarray or None
        For curves on a common grid: the weights ``(n, m)`` (0 where unobserved) and the
        atoms on the grid ``(m, d)``, so that ``M_i = phi^T diag(W_i) phi``.
    """

    yy: np.ndarray
    M: np.ndarray
    W: np.ndarray | None = None
    phi: np.ndarray | None = None

    @property
    def shared(self) -> bool:
        return self.M.ndim == 2

    def rotated(self, P: np.ndarray) -> np.ndarray:
        """``P^T M_i P`` for every curve (or once when shared)."""
        if self.shared:
            return P.T @ self.M @ P
        if self.W is not None and self.phi is not None:  # one (n, m) x (m, d^2) product
            F = self.phi @ P
            d = F.shape[1]
            return (self.W @ (F[:, :, None] * F[:, None, :]).reshape(-1, d * d)).reshape(-1, d, d)
        return np.einsum("dk,ndf,fl->nkl", P, self.M, P, optimize=True)


def curve_quadratics(obs: Observations, phi_obs: np.ndarray, weights: np.ndarray) -> CurveQuadratics:
    """Build :class:`CurveQuadratics` from the (centred) observations.

    Parameters
    ----------
    obs : Observations
    phi_obs : numpy.ndarray
        Atoms at the observed points ``(N, d)``, or on ``obs.grid`` ``(m, d)``.
    weights : numpy.ndarray, shape (N,)
        Integration weights ``c_ip``.

    Examples
    --------
    >>> obs = Observations.from_dense(np.array([[1.0, 2.0], [3.0, np.nan]]), np.array([0.0, 1.0]))
    >>> q = curve_quadratics(obs, np.ones((2, 1)), np.array([0.5, 0.5, 1.0]))
    >>> q.yy, q.M[:, 0, 0]
    (array([2.5, 9. ]), array([1., 1.]))
    """
    n = obs.n_samples
    on_grid = obs.grid is not None and obs.grid_index is not None and phi_obs.shape[0] == obs.grid.size
    yy = np.bincount(obs.index, weights=weights * obs.value**2, minlength=n)
    if on_grid:
        assert obs.grid is not None and obs.grid_index is not None
        W = np.zeros((n, obs.grid.size))
        W[obs.index, obs.grid_index] = weights
        d = phi_obs.shape[1]
        if obs.fully_observed and np.allclose(W, W[0]):
            return CurveQuadratics(yy, (phi_obs * W[0][:, None]).T @ phi_obs)
        M = (W @ (phi_obs[:, :, None] * phi_obs[:, None, :]).reshape(-1, d * d)).reshape(n, d, d)
        return CurveQuadratics(yy, M, W, phi_obs)
    d = phi_obs.shape[1]
    S = sp.csr_matrix((weights, (obs.index, np.arange(obs.index.size))), shape=(n, obs.index.size))
    M = np.asarray(S @ (phi_obs[:, :, None] * phi_obs[:, None, :]).reshape(-1, d * d)).reshape(n, d, d)
    return CurveQuadratics(yy, M)


def _loo_errors(s: np.ndarray, U: np.ndarray, e: np.ndarray, NP: np.ndarray, Mrot: np.ndarray,
                yy: np.ndarray, lams: np.ndarray) -> np.ndarray:
    """Mean over curves of the leave-one-curve-out weighted error, at every lambda (see the module notes)."""
    n, d = NP.shape
    Q = U**2
    UtNP = U.T @ NP
    out = np.empty(lams.size)
    block = max(1, int(4e6 // (n * n + n * d)))
    for start in range(0, lams.size, block):
        lam_b = lams[start:start + block]
        L = lam_b.size
        sd = np.outer(s, e)[:, None, :] + (n * lam_b)[None, :, None]  # (n, L, d), the layout of the products
        np.divide(s[:, None, None], sd, out=sd)  # s_k / (s_k e_l + n lam)
        R = (U @ (sd * UtNP[:, None, :]).reshape(n, L * d)).reshape(n, L, d)
        T = (Q @ sd.reshape(n, L * d)).reshape(n, L, d)
        C = NP[:, None, :] - e * R  # g
        C *= T
        T *= e
        np.subtract(1.0, T, out=T)
        C /= T
        np.subtract(R, C, out=C)  # R - t g / (1 - e t): the left-out fits
        lin = np.einsum("nld,nd->nl", C, NP)
        quad = np.einsum("nld,nld->nl", C @ Mrot if Mrot.ndim == 2 else np.matmul(C, Mrot), C)
        out[start:start + block] = np.mean(yy[:, None] - 2.0 * lin + quad, axis=0)
    return out


def _group_loo_errors(s: np.ndarray, U: np.ndarray, e: np.ndarray, NP: np.ndarray, Mrot: np.ndarray,
                      yy: np.ndarray, lams: np.ndarray, groups: list[np.ndarray]) -> np.ndarray:
    """Mean over curves of the leave-one-GROUP-out weighted error, at every lambda.

    Per direction ``l`` the rotated problem is a linear smoother ``R = T NP`` with
    ``T = U diag(s / (s e_l + n lam)) U^T``; leaving the curves of group ``g`` out gives
    ``C_g = (I - e_l T_gg)^{-1} (R_g - T_gg NP_g)`` (one ``|g| x |g|`` solve per direction).
    """
    n, d = NP.shape
    UtNP = U.T @ NP
    out = np.empty(lams.size)
    for k, lam in enumerate(lams):
        sd = s[:, None] / (np.outer(s, e) + n * lam)  # (n, d)
        R = U @ (sd * UtNP)
        total = 0.0
        for idx in groups:
            Ug = U[idx]  # (m, n)
            T = np.einsum("gk,kl,hk->lgh", Ug, sd, Ug)  # (d, m, m)
            rhs = R[idx].T - np.einsum("lgh,hl->lg", T, NP[idx])  # (d, m)
            A = np.eye(idx.size)[None] - e[:, None, None] * T
            C = np.linalg.solve(A, rhs[..., None])[..., 0].T  # (m, d): the left-out fits of the group
            lin = np.einsum("gd,gd->g", C, NP[idx])
            quad = np.einsum("gd,gd->g", C @ Mrot if Mrot.ndim == 2 else np.matmul(C[:, None, :], Mrot[idx])[:, 0], C)
            total += float(np.sum(yy[idx] - 2.0 * lin + quad))
        out[k] = total / n
    return out


def group_indices(groups: Sequence) -> list[np.ndarray] | None:
    """Positions of the curves of each group (None when every group is one curve).

    Examples
    --------
    >>> [g.tolist() for g in group_indices(["a", "b", "a"])]
    [[0, 2], [1]]
    """
    labels = np.asarray(groups)
    _, inv = np.unique(labels, return_inverse=True)
    if inv.max() + 1 == labels.size:
        return None
    return [np.flatnonzero(inv == g) for g in range(inv.max() + 1)]


def curve_loo_path(dec: RidgeDecomposition, quad: CurveQuadratics, lams: Sequence[float],
                   groups: Sequence | None = None) -> np.ndarray:
    """Exact leave-one-curve-out error along a lambda path, from one decomposition.

    The error of a left-out curve is its weighted squared error
    ``sum_p c_ip r_ip^2`` (the weights of the fit), averaged over curves; the
    mean function and the penalty ``n lam`` are held at their full-data values,
    so each value equals a refit without that curve at ``lam * n / (n - 1)``.

    Parameters
    ----------
    dec : RidgeDecomposition
        From :func:`fdakpl.solvers.closed_form.decompose` on the (centred) training data.
    quad : CurveQuadratics
        From :func:`curve_quadratics` on the same data.
    lams : sequence of float
    groups : sequence, optional
        A label per curve: curves with the same label (one subject's curves, say) are left out
        together (exact leave-one-group-out), because dependent curves predict each other.

    Returns
    -------
    numpy.ndarray, shape (len(lams),)

    Examples
    --------
    >>> from fdakpl.solvers.closed_form import decompose
    >>> rng = np.random.default_rng(0)
    >>> grid = np.linspace(0, 1, 6); phi = np.stack([np.ones(6), grid], axis=1)
    >>> Y = rng.normal(size=(8, 6)); obs = Observations.from_dense(Y, grid); w = np.full(48, 1 / 6)
    >>> q = curve_quadratics(obs, phi, w)
    >>> N = (Y / 6) @ phi; X = rng.normal(size=(8, 1)); K = np.exp(-(X - X.T) ** 2)
    >>> curve_loo_path(decompose(K, q.M, np.eye(2), N), q, [1e-3, 1.0]).shape
    (2,)
    """
    lams = _check_lams(lams)
    P = dec.B_half @ dec.V
    NP = dec.U @ dec.Nt
    idx = None if groups is None else group_indices(groups)
    if idx is not None:
        return _group_loo_errors(dec.s, dec.U, dec.e, NP, quad.rotated(P), quad.yy, lams, idx)
    return _loo_errors(dec.s, dec.U, dec.e, NP, quad.rotated(P), quad.yy, lams)


def _check_lams(lams: Sequence[float]) -> np.ndarray:
    lams = np.atleast_1d(np.asarray(lams, dtype=float))
    if lams.size == 0 or np.any(~np.isfinite(lams)) or np.any(lams <= 0):
        raise ValueError("every lambda of the grid must be a finite number > 0")
    return lams


def warn_on_edge(name: str, grid: Sequence[float], index: int, criterion: str, fix: str,
                 lower_is_natural: bool = False, stacklevel: int = 3) -> bool:
    """Warn when a tuned hyper-parameter sits on the edge of its grid; return whether it does.

    Parameters
    ----------
    name : str
        What was tuned, e.g. ``"lambda"``, ``"width multiple of 'cca'"``, ``"b"``.
    grid : sequence of float
    index : int
        Index of the chosen value in ``grid`` (sorted or not).
    criterion : str
        Which criterion chose it (for the message).
    fix : str
        How to extend the grid (for the message).
    lower_is_natural : bool
        The smallest value is a natural bound (``b = 1``: no decay) and gets no warning.

    Examples
    --------
    >>> warn_on_edge("b", [1.0, 1.5, 2.0], 0, "LOO", "b_grid=[...]", lower_is_natural=True)
    False
    """
    g = np.asarray(grid, dtype=float)
    if g.size < 2:
        return False
    val = g[index]
    at_low, at_high = val == g.min(), val == g.max()
    if at_low and lower_is_natural:
        return False
    if at_low or at_high:
        side = "smallest" if at_low else "largest"
        warnings.warn(f"the {criterion}-chosen {name} {val:.3g} is the {side} value of its grid "
                      f"[{g.min():.3g}, {g.max():.3g}]; extend the grid ({fix})", stacklevel=stacklevel)
        return True
    return False


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
        Criterion values (NaN where not evaluated).
    index : (int, int, int)
        Position of the minimum in ``scores``.
    criterion : str
        ``"loo"`` or ``"gcv"``.
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
        return self.candidates[self.index[0]]

    @property
    def b(self) -> float:
        return float(self.b_grid[self.index[1]])

    @property
    def lam(self) -> float:
        return float(self.lams[self.index[2]])

    @property
    def score(self) -> float:
        return float(self.scores[self.index])


def tune_closed_form(kernel_matrix: Callable[[tuple[float, ...]], np.ndarray],
                     width_grid: Sequence[float] | Sequence[Sequence[float]],
                     n_terms: int, output_matrix: Callable[[float], np.ndarray], b_grid: Sequence[float],
                     G: np.ndarray, N: np.ndarray, lams: Sequence[float],
                     score_path: Callable[[RidgeDecomposition, np.ndarray, np.ndarray], np.ndarray] | None = None,
                     quad: CurveQuadratics | None = None, criterion: str = "loo",
                     groups: Sequence | None = None) -> TuningResult:
    """Choose width multiples, ``b`` and lambda jointly by a closed-form criterion over a grid.

    With one tuned term, every (width, ``b``, lambda) of the grid is scored.
    With several, the search first scales every term by a common multiple,
    then, from the best common multiple, moves one term at a time over the
    grid (one sweep of coordinate search): ``len(width_grid) * (1 + n_terms)``
    widths instead of ``len(width_grid) ** n_terms``. Terms may have grids of
    their own (one per term): the common step then moves every term to the
    same relative position of its grid (the nearest one for grids of different
    lengths), and the sweep moves each term over its own grid.

    Parameters
    ----------
    kernel_matrix : callable
        ``multiples -> K`` (``n x n``) for a tuple of ``n_terms`` multiples.
    width_grid : sequence of float, or one sequence per term
        Multiples tried for each term (``[1.0]`` with ``n_terms = 0`` to tune nothing).
    n_terms : int
        Number of tuned kernel terms (0: the kernel is fixed).
    output_matrix : callable
        ``b -> B`` (``d x d``).
    b_grid : sequence of float
        ``b`` values (``[nan]`` and a constant ``output_matrix`` to tune nothing).
    G, N : numpy.ndarray
        Gram matrix ``(d, d)`` and inner products ``(n, d)`` of the centred responses.
    lams : sequence of float
    score_path : callable, optional
        ``(decomposition, lams, B) -> scores`` for another criterion (e.g. pointwise GCV).
    quad : CurveQuadratics
        Needed for the default criterion (exact leave-one-curve-out).
    criterion : str
        Name recorded in the result.
    groups : sequence, optional
        A label per curve for leave-one-group-out (see :func:`curve_loo_path`).

    Returns
    -------
    TuningResult

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> grid = np.linspace(0, 1, 6); phi = np.stack([np.ones(6), grid], axis=1)
    >>> X = rng.normal(size=(15, 1)); Y = np.sin(X) * grid + 0.1 * rng.normal(size=(15, 6))
    >>> q = curve_quadratics(Observations.from_dense(Y, grid), phi, np.full(90, 1 / 6))
    >>> D = (X - X.T) ** 2
    >>> res = tune_closed_form(lambda m: np.exp(-D / (2 * m[0] ** 2)), [0.5, 1.0, 2.0], 1,
    ...                        lambda b: np.eye(2), [np.nan], q.M, (Y / 6) @ phi, [1e-4, 1e-2, 1.0], quad=q)
    >>> res.scores.shape
    (3, 1, 3)
    """
    lams = _check_lams(lams)
    grids = _term_grids(width_grid, n_terms)
    b_grid = np.atleast_1d(np.asarray(b_grid, dtype=float))
    if score_path is None and quad is None:
        raise ValueError("tune_closed_form needs quad= for the leave-one-curve-out criterion")
    gidx = None if groups is None else group_indices(groups)
    # per b: the d x d eigendecomposition and what depends on it alone
    per_b = []
    for b in b_grid:
        B = output_matrix(float(b))
        Bh, _, e, V = output_side(G, B)
        P = Bh @ V
        per_b.append((B, Bh, e, V, P, N @ P, None if quad is None else quad.rotated(P)))
    cache: dict[tuple[float, ...], np.ndarray] = {}

    def scores_of(mult: tuple[float, ...]) -> np.ndarray:
        if mult in cache:
            return cache[mult]
        K = kernel_matrix(mult)
        s, U = psd_eigh(K)
        out = np.empty((b_grid.size, lams.size))
        for j, (B, Bh, e, V, _P, NP, Mrot) in enumerate(per_b):
            if score_path is None and gidx is not None:
                out[j] = _group_loo_errors(s, U, e, NP, Mrot, quad.yy, lams, gidx)  # type: ignore[union-attr]
            elif score_path is None:
                out[j] = _loo_errors(s, U, e, NP, Mrot, quad.yy, lams)  # type: ignore[union-attr]
            else:
                dec = RidgeDecomposition(s, U, e, V, Bh, np.empty((0, 0)), U.T @ NP, K.shape[0], V.T @ Bh,
                                         np.empty((0, 0)))
                out[j] = score_path(dec, lams, B)
        cache[mult] = out
        return out

    if n_terms <= 1:
        for c in ([(m,) for m in grids[0]] if n_terms == 1 else [()]):
            scores_of(c)
    else:
        steps = max(len(g) for g in grids)
        common = [tuple(g[round(j * (len(g) - 1) / max(steps - 1, 1))] for g in grids) for j in range(steps)]
        best = min(common, key=lambda c: float(np.nanmin(scores_of(c))))
        cur = list(best)
        for t in range(n_terms):
            opts = [(*cur[:t], m, *cur[t + 1:]) for m in grids[t]]
            cur = list(min(opts, key=lambda c: float(np.nanmin(scores_of(c)))))
    candidates = list(cache)
    scores = np.stack([cache[c] for c in candidates])
    with np.errstate(invalid="ignore"):
        flat = np.where(np.isfinite(scores), scores, np.inf)
    index = tuple(int(i) for i in np.unravel_index(int(np.argmin(flat)), scores.shape))
    return TuningResult(candidates, b_grid, lams, scores, index, criterion)  # type: ignore[arg-type]


def _term_grids(width_grid: Sequence[float] | Sequence[Sequence[float]], n_terms: int) -> list[list[float]]:
    """One grid of multiples per term: the same for every term, or the term's own."""
    if len(width_grid) and all(np.ndim(g) == 1 for g in width_grid):
        if len(width_grid) != n_terms:
            raise ValueError(f"width_grid gives {len(width_grid)} grids for {n_terms} tuned terms")
        return [[float(m) for m in g] for g in width_grid]
    return [[float(m) for m in width_grid]] * max(n_terms, 1)


def product_grid(grids: Sequence[Sequence[float]]) -> list[tuple[float, ...]]:
    """All combinations of per-term multiples (for brute-force checks).

    Examples
    --------
    >>> product_grid([[1.0, 2.0], [3.0]])
    [(1.0, 3.0), (2.0, 3.0)]
    """
    return [tuple(float(v) for v in c) for c in product(*grids)]


# ----------------------------------------------------------------------------- approximate (primal) route
def primal_loo_terms(Z: np.ndarray, N: np.ndarray, yy: np.ndarray, Mrot: np.ndarray, primal: object,
                     lams: np.ndarray) -> np.ndarray:
    """Sum over a chunk of curves of their exact leave-one-curve-out errors, at every lambda (primal form).

    With features ``z_i`` and ``S = Z^T Z = P diag(t) P^T`` (all ``n`` curves), the
    rotated coefficient of curve ``i`` is ``c_il = sum_j a_ij Q_jl / (t_j e_l + n lam)``
    with ``a_i = P^T z_i``; its leverage in direction ``l`` is
    ``e_l tau_il``, ``tau_il = sum_j a_ij^2 / (t_j e_l + n lam)``, so leaving it out gives
    ``c_i - tau_i * g_i / (1 - e * tau_i)`` with ``g_i = (N B^{1/2} V)_i - e * c_i``
    (the feature map, mean function and penalty ``n lam`` held fixed), scored by
    the quadratic form of :class:`CurveQuadratics` (``Mrot``: already rotated by ``B^{1/2} V``).

    Parameters
    ----------
    Z : numpy.ndarray, shape (b, r)
    N : numpy.ndarray, shape (b, d)
    yy : numpy.ndarray, shape (b,)
    Mrot : numpy.ndarray, shape (b, d, d) or (d, d)
    primal : PrimalDecomposition
        Of all the curves (:func:`fdakpl.estimators.approx.primal_decompose`).
    lams : numpy.ndarray

    Returns
    -------
    numpy.ndarray, shape (len(lams),)

    Examples
    --------
    >>> from fdakpl.solvers.primal import SufficientStats, primal_decompose
    >>> rng = np.random.default_rng(0); Z = rng.normal(size=(10, 3)); N = rng.normal(size=(10, 2))
    >>> dec = primal_decompose(SufficientStats.from_chunk(Z, N), np.eye(2), np.eye(2))
    >>> primal_loo_terms(Z, N, (N ** 2).sum(1), np.eye(2), dec, np.array([0.1, 1.0])).shape
    (2,)
    """
    t, P, e, Q, n = primal.t, primal.P, primal.e, primal.Q, primal.n  # type: ignore[attr-defined]
    NP = N @ (primal.B_half @ primal.V)  # type: ignore[attr-defined]
    A = Z @ P  # (b, r)
    b, d = NP.shape
    out = np.empty(lams.size)
    for k, lam in enumerate(lams):
        denom = np.outer(t, e) + n * lam  # (r, d)
        c = A @ (Q / denom)
        tau = (A**2) @ (1.0 / denom)
        C = c - tau * (NP - e * c) / (1.0 - e * tau)
        lin = np.einsum("bd,bd->b", C, NP)
        quad = np.einsum("bd,bd->b", C @ Mrot, C) if Mrot.ndim == 2 else np.einsum("bd,bde,be->b", C, Mrot, C)
        out[k] = float(np.sum(yy - 2.0 * lin + quad))
    return out


def chunk_quadratics(y: np.ndarray, mean: np.ndarray | None, phiP: np.ndarray, quad_weights: np.ndarray,
                     length: float, mode: str) -> tuple[np.ndarray, np.ndarray]:
    """``yy_i`` and rotated ``M_i`` of a chunk of dense responses (NaN = unobserved) on a grid.

    ``phiP`` holds the atoms on the grid already rotated (``phi B^{1/2} V``);
    weights are the quadrature weights (``mode="quadrature"``) or
    ``|Theta| / m_i`` on the observed points (``"plugin"``).

    Examples
    --------
    >>> yy, M = chunk_quadratics(np.array([[1.0, np.nan]]), None, np.ones((2, 1)), np.array([.5, .5]), 1.0, "plugin")
    >>> yy, M.ravel()
    (array([1.]), array([1.]))
    """
    ok = ~np.isnan(y)
    yc = np.where(ok, y - mean if mean is not None else y, 0.0)
    if mode == "quadrature":
        W = np.broadcast_to(quad_weights, y.shape)
    else:
        W = ok * (length / np.maximum(ok.sum(axis=1), 1))[:, None]
    yy = np.sum(W * yc**2, axis=1)
    if mode == "quadrature":
        return yy, (phiP * quad_weights[:, None]).T @ phiP
    return yy, np.einsum("bp,pk,pl->bkl", W, phiP, phiP, optimize=True)


def primal_loo_block(ctx: tuple, start: int, limit: bool, *blocks: np.ndarray) -> np.ndarray:
    """One chunk's leave-one-curve-out sums (for :func:`fdakpl.solvers.streaming.reduce_pass`).

    ``ctx`` is ``(StatsContext, PrimalDecomposition, lams)``.

    Examples
    --------
    >>> from fdakpl.estimators.approx import Nystroem
    >>> from fdakpl.solvers.primal import SufficientStats, primal_decompose
    >>> from fdakpl.kernels import Gaussian
    >>> from fdakpl.solvers import streaming as st
    >>> X, Y = np.arange(4.0)[:, None], np.ones((4, 2)); inp = st.as_inputs(X)
    >>> fm = Nystroem(4).fit(Gaussian(), inp.take, 4)
    >>> sc = st.StatsContext(fm, inp.layout, None, np.ones((2, 1)), np.array([0.5, 0.5]), 1.0, "quadrature")
    >>> dec = primal_decompose(st.stats_pass(st.ChunkPlan.of(inp, st.as_response(Y), 4), sc), np.eye(1), np.eye(1))
    >>> primal_loo_block((sc, dec, np.array([1.0])), 0, False, X, Y).shape
    (1,)
    """
    from contextlib import nullcontext

    from threadpoolctl import threadpool_limits

    from ..solvers.streaming import chunk_nu

    sctx, primal, lams = ctx
    with threadpool_limits(1) if limit else nullcontext():  # dask tasks: one BLAS thread each
        Z = sctx.features.transform(sctx.layout.assemble(blocks[:-1], start), sctx.layout.weights)
        N = chunk_nu(sctx, blocks[-1], start)
        phiP = sctx.phi @ (primal.B_half @ primal.V)
        yy, Mrot = chunk_quadratics(np.asarray(blocks[-1], dtype=float), sctx.mean, phiP, sctx.quad_weights,
                                    sctx.length, sctx.mode)
        return primal_loo_terms(Z, N, yy, Mrot, primal, lams)
