"""Many shifted systems ``(K + t_j I) z_j = b_j`` with one symmetric positive semi-definite ``K`` (pure functions
on arrays).

The single-lambda closed form (:func:`fdakpl.solvers.closed_form.ridge_single`) needs one such system per atom,
with shifts ``t_j = n lam / e_j`` that take as many values as ``B^{1/2} G B^{1/2}`` has distinct eigenvalues
(eleven for ``B = 1.5^-scale`` on a Fourier dictionary of ten frequencies). A Cholesky factorisation per value
costs ``n^3 / 3`` flops each, and the reduction of ``K`` to tridiagonal form (LAPACK ``dsytrd``, half of it
matrix-vector products) costs several. Instead the shifts are grouped; each group is factorised once at an
anchor shift, ``K + t_0 I = L L^T``, and its other columns are solved by conjugate gradients on the
split-preconditioned operator::

    L^{-1} (K + t I) L^{-T} = I + (t - t_0) (L^T L)^{-1},

whose eigenvalues ``(s_i + t) / (s_i + t_0)`` (``s_i >= 0`` those of ``K``) lie between ``1`` and ``t / t_0``,
whatever ``K``: the condition number is at most ``max(t / t_0, t_0 / t)``, so an anchor in the middle of a group
of span ``rho`` gives at most ``sqrt(rho)``. An iteration is two triangular solves on the block of the group's
columns (BLAS-3, ``2 n^2`` flops a column). Shifts above ``||K||`` are solved without a factorisation, on
``I + K / t`` (condition number at most ``1 + ||K|| / t``, one matrix product per iteration).

Because the condition numbers are known before any work, so are the iteration counts (the Chebyshev bound of
:func:`cg_iterations`), and :func:`plan_shifts` chooses the groups by minimising a cost model (factorisations
against iterations, with the tridiagonal reduction as the alternative). The stopping rule is a residual bound,
not a count: column ``j`` stops when ``||r_j|| <= rtol lo_j ||y_j||``, with ``lo_j`` the lower end of its
operator's spectrum, which guarantees ``||y_j - y_j^*|| <= rtol ||y_j||`` (relative error in the norm of
``K + t_0 I``). A column that has not met it within its bound plus a margin, or whose true residual on the
original system is then not small, is solved again by a Cholesky factorisation at its own shift.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import scipy.linalg as sla
from scipy.linalg import blas, lapack

__all__ = ["ShiftPlan", "cg_iterations", "plan_shifts", "solve_shifted"]

#: relative error bound of the iterative columns (in the norm of the group's factorised matrix)
RTOL = 1e-12
#: cost model (measured, one OpenBLAS thread, n = 500 to 3000, in Cholesky factorisations of ``n^3 / 3`` flops):
#: an iteration on a block of ``c`` columns (two triangular solves, ``2 n^2 c`` flops) costs
#: ``ITERATION_WEIGHT * (c + ITERATION_COLUMNS) * 6 / n`` (narrow blocks are bound by reading the factor:
#: a 20-column block runs at 1.1 to 1.5 times the factorisation's flop rate a column, a 2-column block at 3.5 to
#: 8 times), plus ``ITERATION_OVERHEAD`` flops of vector operations and Python
ITERATION_WEIGHT = 0.8
ITERATION_COLUMNS = 10
ITERATION_OVERHEAD = 1e6
#: the tridiagonal reduction (LAPACK dsytrd, half of it matrix-vector products) in factorisations: 4.2 to 4.5
#: up to n = 1000, 5.7 at 2000, 8.1 at 3000 (measured, one thread); modelled as ``4.5 + 3.5 log2(n / 1500)``
TRIDIAGONAL_WEIGHT = 4.5
TRIDIAGONAL_GROWTH = 3.5
#: candidate spans (largest / smallest shift) of a group; 1 factorises every distinct shift
SPANS = (1.0, 1.5, 2.0, 3.0, 5.0, 10.0, 30.0, 100.0, 1e3, 1e4)
#: iterations allowed beyond the bound (rounding slows conjugate gradients down) before falling back
ITERATION_MARGIN = 10
#: backward error of the true residual above which an iterative column is factorised again
BACKWARD_TOL = 1e-10


def cg_iterations(kappa: float, rtol: float = RTOL) -> int:
    """Iterations after which conjugate gradients meet the stopping rule ``||r|| <= rtol lo ||y||`` on any
    operator whose condition number is at most ``kappa``.

    From ``||r_k|| <= 2 sqrt(kappa) rho^k ||b||`` (``rho = (sqrt(kappa) - 1) / (sqrt(kappa) + 1)``) and
    ``lo ||y|| >= ||b|| / kappa``.

    Examples
    --------
    >>> cg_iterations(1.0), cg_iterations(4.0), cg_iterations(100.0)
    (1, 28, 176)
    """
    if kappa <= 1.0 + 1e-12:
        return 1
    sk = math.sqrt(kappa)
    return max(1, math.ceil(math.log(2.0 * kappa**1.5 / rtol) / math.log((sk + 1.0) / (sk - 1.0))))


@dataclass(frozen=True)
class ShiftPlan:
    """How :func:`solve_shifted` solves a set of distinct shifts (from :func:`plan_shifts`).

    Attributes
    ----------
    route : {"cholesky", "cholesky_cg", "tridiagonal"}
        ``"cholesky"``: one factorisation per distinct shift; ``"cholesky_cg"``: factorisations at the anchors
        and conjugate gradients for the other shifts; ``"tridiagonal"``: one reduction of ``K``.
    anchors : list of int or None
        For each group, the index (into the distinct shifts) of its factorised shift; None: no factorisation
        (shifts above ``||K||``).
    groups : list of numpy.ndarray
        Indices of the distinct shifts of each group.
    cost : float
        Modelled cost in Cholesky factorisations.

    Examples
    --------
    >>> plan = ShiftPlan("cholesky_cg", [1], [np.array([0, 1, 2])], 1.2)  # factorise at the middle shift
    >>> plan.anchors, plan.groups[0].tolist()
    ([1], [0, 1, 2])
    """

    route: str
    anchors: list
    groups: list
    cost: float


def _block_cost(counts: np.ndarray, iterations: np.ndarray, n: int) -> float:
    """Modelled cost, in factorisations, of conjugate gradients on one block whose columns (``counts`` of them
    at each shift) need ``iterations`` each."""
    if counts.size == 0:
        return 0.0
    k = int(iterations.max())
    return (6.0 * ITERATION_WEIGHT / n * (float(np.sum(counts * iterations)) + ITERATION_COLUMNS * k)
            + 3.0 * ITERATION_OVERHEAD / n**3 * k)


def _grouping(t: np.ndarray, counts: np.ndarray, n: int, knorm: float, span: float,
              rtol: float) -> ShiftPlan:
    """Greedy groups of span at most ``span`` (anchored at the shift nearest their geometric middle); shifts
    whose unpreconditioned condition number ``1 + knorm / t`` is at most ``sqrt(span)`` need no factorisation."""
    free = (1.0 + knorm / t <= math.sqrt(span)) if span > 1.0 else np.zeros(t.size, bool)
    anchors: list = []
    groups: list = []
    cost = 0.0
    i, m = 0, int(np.count_nonzero(~free))  # t is sorted: the free shifts are the largest
    while i < m:
        j = int(np.searchsorted(t[:m], t[i] * span * (1 + 1e-12), side="right"))
        g = np.arange(i, j)
        a = i + int(np.argmin(np.abs(np.log(t[g]) - 0.5 * (math.log(t[i]) + math.log(t[j - 1])))))
        it = np.array([cg_iterations(float(max(s / t[a], t[a] / s)), rtol) for s in t[g] if s != t[a]], int)
        cost += 1.0 + 2.0 * counts[a] * 3.0 / n + _block_cost(counts[g][g != a], it, n)
        anchors.append(a)
        groups.append(g)
        i = j
    if m < t.size:
        g = np.arange(m, t.size)
        cost += _block_cost(counts[g], np.array([cg_iterations(1.0 + knorm / float(s), rtol) for s in t[g]]), n)
        anchors.append(None)
        groups.append(g)
    one_each = all(a is not None and g.size == 1 for a, g in zip(anchors, groups, strict=True))
    route = "cholesky" if one_each else "cholesky_cg"
    return ShiftPlan(route, anchors, groups, cost)


def plan_shifts(t: np.ndarray, counts: np.ndarray, n: int, knorm: float, rtol: float = RTOL) -> ShiftPlan:
    """The cheapest way (by the cost model) to solve ``counts[i]`` systems at each distinct shift ``t[i]``.

    Parameters
    ----------
    t : numpy.ndarray
        Distinct positive shifts, sorted increasingly.
    counts : numpy.ndarray of int
        Number of right-hand sides (columns) at each shift.
    n : int
        Size of ``K``.
    knorm : float
        An upper bound of the largest eigenvalue of ``K``.
    rtol : float
        Relative error bound of the iterative columns.

    Examples
    --------
    >>> plan_shifts(np.array([1.0]), np.array([1]), 5000, 2000.0).route
    'cholesky'
    >>> p = plan_shifts(5.0 * 1.5 ** np.arange(11), np.array([1] + [2] * 10), 5000, 2000.0)
    >>> p.route, p.anchors, [g.tolist() for g in p.groups]  # one factorisation; t > 2000 / 9 without any
    ('cholesky_cg', [5, None], [[0, 1, 2, 3, 4, 5, 6, 7, 8, 9], [10]])
    """
    best = min((_grouping(t, counts, n, knorm, s, rtol) for s in SPANS), key=lambda p: p.cost)
    tri = TRIDIAGONAL_WEIGHT + TRIDIAGONAL_GROWTH * max(0.0, math.log2(n / 1500)) + 12.0 * int(np.sum(counts)) / n
    if tri < best.cost:
        return ShiftPlan("tridiagonal", [], [np.arange(t.size)], tri)
    return best


def _cg(apply_h, rhs: np.ndarray, delta: np.ndarray, lo: np.ndarray, maxit: np.ndarray,
        rtol: float) -> tuple[np.ndarray, np.ndarray]:
    """Conjugate gradients on ``(I + delta_j H) y_j = rhs_j`` for every column at once (``apply_h`` applies
    ``H`` to a block); column ``j`` stops when ``||r_j|| <= rtol lo_j ||y_j||``. Returns ``Y`` and which
    columns converged."""
    Y = np.zeros_like(rhs)
    R = np.array(rhs, order="F", copy=True)
    P = R.copy(order="F")
    rr = np.einsum("ij,ij->j", R, R)
    converged = rr == 0.0
    active = np.nonzero(~converged)[0]
    k = 0
    while active.size and k < int(maxit[active].max()):
        k += 1
        Pa = np.asfortranarray(P[:, active])
        AP = Pa + delta[active] * apply_h(Pa)
        alpha = rr[active] / np.einsum("ij,ij->j", Pa, AP)
        Y[:, active] += alpha * Pa
        Ra = R[:, active] - alpha * AP
        rnew = np.einsum("ij,ij->j", Ra, Ra)
        ynorm = np.sqrt(np.einsum("ij,ij->j", Y[:, active], Y[:, active]))
        done = np.sqrt(rnew) <= rtol * lo[active] * ynorm
        R[:, active] = Ra
        P[:, active] = Ra + (rnew / rr[active]) * Pa
        rr[active] = rnew
        converged[active[done]] = True
        active = active[~done & (maxit[active] > k)]
    return Y, converged


def _factor(K: np.ndarray, t: float) -> np.ndarray:
    """Lower Cholesky factor of ``K + t I`` (upper triangle left as is: LAPACK reads the lower one only)."""
    M = np.array(K, order="F", copy=True)
    M[np.diag_indices(M.shape[0])] += t
    c, _ = sla.cho_factor(M, lower=True, overwrite_a=True, check_finite=False)
    return c


def _direct(K: np.ndarray, t: float, B: np.ndarray) -> np.ndarray:
    """``(K + t I)^{-1} B`` by its own Cholesky factorisation."""
    return sla.cho_solve((_factor(K, t), True), B, check_finite=False)


def solve_shifted(K: np.ndarray, shifts: np.ndarray, rhs: np.ndarray, rtol: float = RTOL,
                  plan: ShiftPlan | None = None) -> tuple[np.ndarray, str]:
    """Solve ``(K + shifts[j] I) z_j = rhs[:, j]`` for every column ``j``.

    Distinct shifts are those that differ by more than ``1e-12`` relatively: the columns of one distinct shift
    are solved at their mean, which moves each solution by at most that relative amount (the inverse of
    ``K + t I`` changes by at most ``|t - t'| / t`` relatively when ``K`` is positive semi-definite).

    Parameters
    ----------
    K : numpy.ndarray, shape (n, n)
        Symmetric positive semi-definite; only its lower triangle is read by the factorisations.
    shifts : numpy.ndarray, shape (c,)
        Positive shifts.
    rhs : numpy.ndarray, shape (n, c)
    rtol : float
        Relative error bound of the columns solved by conjugate gradients.
    plan : ShiftPlan, optional
        Force a plan (for tests and benchmarks); by default :func:`plan_shifts`.

    Returns
    -------
    Z : numpy.ndarray, shape (n, c)
    route : {"cholesky", "cholesky_cg", "tridiagonal"}
        See :class:`ShiftPlan`; ``"cholesky"`` also when every iterative column fell back to a factorisation.

    Examples
    --------
    >>> rng = np.random.default_rng(0); X = rng.normal(size=(200, 2))
    >>> K = np.exp(-((X[:, None] - X[None]) ** 2).sum(-1)); b = rng.normal(size=(200, 3))
    >>> t = np.array([0.1, 0.3, 0.9])
    >>> Z, route = solve_shifted(K, t, b)
    >>> exact = np.column_stack([np.linalg.solve(K + s * np.eye(200), b[:, j]) for j, s in enumerate(t)])
    >>> route, bool(np.allclose(Z, exact, rtol=1e-10, atol=1e-12))  # at n = 200 factorisations are cheapest
    ('cholesky', True)
    >>> one = ShiftPlan("cholesky_cg", [1], [np.arange(3)], 0.0)  # factorise at 0.3 only
    >>> Z, route = solve_shifted(K, t, b, plan=one)
    >>> route, bool(np.allclose(Z, exact, rtol=1e-10, atol=1e-12))
    ('cholesky_cg', True)
    """
    n, c = rhs.shape
    shifts = np.asarray(shifts, dtype=float)
    if shifts.shape != (c,) or K.shape != (n, n) or not np.all(shifts > 0):
        raise ValueError(f"shifts must be {c} positive numbers for K {K.shape} and rhs {rhs.shape}")
    Z = np.empty((n, c))
    if c == 0:
        return Z, "cholesky"
    srt = np.argsort(shifts)
    breaks = np.nonzero(np.diff(shifts[srt]) > 1e-12 * shifts[srt][1:])[0] + 1
    cols = np.split(srt, breaks)  # columns of each distinct shift
    t = np.array([shifts[g].mean() for g in cols])
    counts = np.array([g.size for g in cols])
    if t.size == 1 and plan is None:  # one distinct shift: one factorisation
        Z[:, cols[0]] = _direct(K, float(t[0]), rhs[:, cols[0]])
        return Z, "cholesky"
    knorm = _norm_bound(K)
    plan = plan_shifts(t, counts, n, knorm, rtol) if plan is None else plan
    if plan.route == "tridiagonal":
        t_cols = np.concatenate([np.full(g.size, s) for g, s in zip(cols, t, strict=True)])
        return _tridiagonal(K, t_cols, rhs, srt), plan.route
    fallback: list[int] = []  # distinct shifts with a column that needs its own factorisation
    for anchor, group in zip(plan.anchors, plan.groups, strict=True):
        others = [int(i) for i in group if i != anchor]
        jc = np.concatenate([cols[i] for i in others] + [np.zeros(0, int)])
        ts = np.concatenate([np.full(cols[i].size, t[i]) for i in others] + [np.zeros(0)])
        if anchor is None:  # shifts above ||K||: I + K / t, no preconditioner
            Y, ok = _cg(lambda P: K @ P, np.asfortranarray(rhs[:, jc] / ts), 1.0 / ts, np.ones(ts.size),
                        np.array([cg_iterations(1.0 + knorm / s, rtol) for s in ts]) + ITERATION_MARGIN, rtol)
            Z[:, jc] = Y
        else:
            t0 = float(t[anchor])
            L = _factor(K, t0)
            Z[:, cols[anchor]] = sla.cho_solve((L, True), rhs[:, cols[anchor]], check_finite=False)
            if not others:
                continue
            kap = np.maximum(ts / t0, t0 / ts)
            Y, ok = _cg(lambda P, L=L: _solve_ltl(L, P), _trsm(L, rhs[:, jc], transpose=False), ts - t0,
                        np.minimum(1.0, ts / t0),
                        np.array([cg_iterations(k, rtol) for k in kap]) + ITERATION_MARGIN, rtol)
            Z[:, jc] = _trsm(L, Y, transpose=True)
            del L
        # the true residuals of the original systems (one matrix product): rounding must not have spoilt them
        Zc = Z[:, jc]
        res = np.linalg.norm(K @ Zc + ts * Zc - rhs[:, jc], axis=0)
        ok &= res <= BACKWARD_TOL * ((knorm + ts) * np.linalg.norm(Zc, axis=0) + np.linalg.norm(rhs[:, jc], axis=0))
        fallback += [i for i in others if not ok[np.isin(jc, cols[i])].all()]
    for i in fallback:
        Z[:, cols[i]] = _direct(K, float(t[i]), rhs[:, cols[i]])
    n_iterative = sum(g.size - (a is not None) for a, g in zip(plan.anchors, plan.groups, strict=True))
    route = "cholesky" if plan.route == "cholesky" or len(fallback) == n_iterative else plan.route
    return Z, route


def _trsm(L: np.ndarray, P: np.ndarray, transpose: bool) -> np.ndarray:
    """``L^{-1} P`` or ``L^{-T} P`` (BLAS-3 triangular solve; reads the lower triangle of ``L`` only)."""
    return blas.dtrsm(1.0, L, np.asfortranarray(P), lower=1, trans_a=int(transpose))


def _solve_ltl(L: np.ndarray, P: np.ndarray) -> np.ndarray:
    """``(L^T L)^{-1} P = L^{-1} L^{-T} P``."""
    return _trsm(L, _trsm(L, P, transpose=True), transpose=False)


def _norm_bound(K: np.ndarray, rows: int = 1024) -> float:
    """The largest absolute row sum of ``K``, an upper bound of its largest eigenvalue (by blocks of rows: no
    ``n x n`` temporary)."""
    return max(float(np.abs(K[i:i + rows]).sum(axis=1).max()) for i in range(0, K.shape[0], rows))


def _tridiagonal(K: np.ndarray, t_sorted: np.ndarray, rhs: np.ndarray, srt: np.ndarray) -> np.ndarray:
    """All shifts from one reduction ``K = Q T Q^T`` (LAPACK ``dsytrd``) and tridiagonal solves (``dptsv``);
    ``t_sorted[k]`` is the shift of column ``srt[k]``."""
    n = K.shape[0]
    lwork = int(lapack.dsytrd_lwork(n, lower=1)[0])
    c, diag, off, tau, info = lapack.dsytrd(K, lower=1, lwork=max(lwork, 1))
    if info != 0:  # pragma: no cover - LAPACK failure
        raise np.linalg.LinAlgError(f"dsytrd failed (info={info})")
    Rt = _apply_q(c, tau, rhs[:, srt], transpose=True)
    Y = np.empty_like(Rt)
    for k, s in enumerate(t_sorted):
        _, _, y, info = lapack.dptsv(diag + s, off, Rt[:, k])
        if info != 0:  # pragma: no cover - not positive definite: cannot happen for a PSD K
            raise np.linalg.LinAlgError(f"dptsv failed (info={info})")
        Y[:, k] = y
    Z = np.empty_like(Y)
    Z[:, srt] = _apply_q(c, tau, Y, transpose=False)
    return Z


def _apply_q(c: np.ndarray, tau: np.ndarray, R: np.ndarray, transpose: bool) -> np.ndarray:
    """``Q^T R`` or ``Q R`` for the ``Q`` of ``dsytrd(lower=1)``: its reflectors are those of a QR
    factorisation of ``c[1:, :-1]``, acting on rows ``1:``."""
    n = c.shape[0]
    out = np.array(R, dtype=float, order="F", copy=True)
    if n < 2 or out.shape[1] == 0:
        return out
    sub = np.asfortranarray(c[1:, : n - 1])
    trans = b"T" if transpose else b"N"
    lwork = max(1, out.shape[1]) * 64
    cq, _, info = lapack.dormqr(b"L", trans, sub, tau, out[1:], lwork)
    if info != 0:  # pragma: no cover - LAPACK failure
        raise np.linalg.LinAlgError(f"dormqr failed (info={info})")
    out[1:] = cq
    return out
