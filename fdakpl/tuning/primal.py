"""Exact leave-one-curve-out of the approximate (primal, feature-space) KPL ridge, chunk by chunk.

With features ``z_i`` and ``S = Z^T Z = P diag(t) P^T`` (all ``n`` curves) the rotated coefficient of curve
``i`` is ``c_il = sum_j a_ij Q_jl / (t_j e_l + n lam)`` with ``a_i = P^T z_i``; its leverage in direction ``l``
is ``e_l tau_il``, so leaving it out gives ``c_i - tau_i * g_i / (1 - e * tau_i)``, scored by the per-curve
quadratic forms of :mod:`fdakpl.ridge.quadratics` (the exact route's formula, in feature space). The sums
over curves add over chunks, so the criterion streams with the fit (:mod:`fdakpl.solvers.streaming`).
"""

from __future__ import annotations

import numpy as np

__all__ = ["chunk_quadratics", "primal_loo_block", "primal_loo_terms"]


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

    from ..solvers.streaming import chunk_nu, filled_block

    sctx, primal, lams = ctx
    with threadpool_limits(1) if limit else nullcontext():  # dask tasks: one BLAS thread each
        Z = sctx.features.transform(sctx.layout.assemble(blocks[:-1], start), sctx.layout.weights)
        N = chunk_nu(sctx, blocks[-1], start)
        phiP = sctx.phi @ (primal.B_half @ primal.V)
        y, mean, mode = np.asarray(blocks[-1], dtype=float), sctx.mean, sctx.mode
        if mode == "interpolate":  # the centred interpolants on the observed columns, integrated by quadrature
            y, mean, mode = filled_block(sctx, y), None, "quadrature"
        yy, Mrot = chunk_quadratics(y, mean, phiP, sctx.quad_weights, sctx.length, mode)
        return primal_loo_terms(Z, N, yy, Mrot, primal, lams)
