"""Closed-form KPL solvers for separable kernels ``K = k B`` (pure functions on arrays).

Notation (rows are samples): ``K`` is the ``n x n`` input kernel matrix, ``G``
the dictionary's Gram matrix ``Phi^# Phi``, ``B`` the output matrix and ``N``
the ``n x d`` matrix whose row ``i`` is ``nu_i``, the (estimated) inner
products ``<y_i, phi_l>``. The representer coefficients ``A`` (row ``i`` is
``alpha_i``) solve the paper's Algorithm 1 / Proposition 4.2::

    (K kron (G B) + n lam I) vec(A) = vec(N)   <=>   K A (B G) + n lam A = N.

With ``C = B^{1/2} G B^{1/2} = V diag(e) V^T`` and ``K = U diag(s) U^T`` the
solution is ``A = U [ (U^T N B^{1/2} V) / (s e^T + n lam) ] V^T B^{-1/2}``, so
one pair of eigendecompositions serves the whole lambda path. The predicted
coefficients at new inputs are ``K_new A B``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp

from ..data.functional import Observations
from ..data.validation import check_lam
from .shifted import solve_shifted

__all__ = [
    "RidgeDecomposition",
    "brute_force_ridge",
    "decompose",
    "output_side",
    "project_observations",
    "psd_eigh",
    "ridge_coef",
    "ridge_single",
    "ridge_sylvester",
]


def project_observations(obs: Observations, phi_at: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Inner products ``nu_il = sum_p c_ip y_ip phi_l(theta_ip)`` as an ``(n, d)`` array.

    Parameters
    ----------
    obs : Observations
        Observed points (values already centred if wanted).
    phi_at : numpy.ndarray
        Atoms at the observed points: ``(N, d)`` for irregular observations,
        or ``(m, d)`` on ``obs.grid`` when the observations carry a grid.
    weights : numpy.ndarray, shape (N,)
        Per-point weights ``c_ip``: ``|Theta| / m_i`` for the plug-in
        estimator, quadrature weights for fully observed curves.

    Returns
    -------
    numpy.ndarray, shape (n, d)

    Examples
    --------
    >>> obs = Observations.from_dense(np.array([[1.0, np.nan, 1.0]]), np.array([0.0, 0.5, 1.0]))
    >>> project_observations(obs, np.ones((3, 1)), np.array([0.5, 0.5]))
    array([[1.]])
    """
    wy = weights * obs.value
    if obs.grid is not None and obs.grid_index is not None and phi_at.shape[0] == obs.grid.size:
        m = obs.grid.size
        dense = np.zeros(obs.n_samples * m)
        dense[obs.index * m + obs.grid_index] = wy  # by flat position: half the cost of a 2-d scatter
        return dense.reshape(obs.n_samples, m) @ phi_at
    S = sp.csr_matrix((wy, (obs.index, np.arange(obs.index.size))), shape=(obs.n_samples, obs.index.size))
    return np.asarray(S @ phi_at)


def sym_sqrt(B: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``B^{1/2}`` and ``B^{-1/2}`` of a symmetric positive definite matrix (diagonal ``B`` without an
    eigendecomposition).

    Examples
    --------
    >>> h, mh = sym_sqrt(np.diag([4.0, 9.0]))
    >>> np.diag(h), np.diag(mh @ h)
    (array([2., 3.]), array([1., 1.]))
    """
    d = np.diagonal(B)
    if np.count_nonzero(B) == np.count_nonzero(d):  # diagonal
        sq = np.sqrt(d)
        return np.diag(sq), np.diag(1.0 / sq)
    w, Q = np.linalg.eigh(B)
    return (Q * np.sqrt(w)) @ Q.T, (Q / np.sqrt(w)) @ Q.T


@dataclass(frozen=True)
class RidgeDecomposition:
    """Eigendecompositions that give the ridge solution at any lambda.

    Build it with :func:`decompose`; evaluate with :func:`ridge_coef`.

    Attributes
    ----------
    s, U : eigenvalues (clipped at 0) and eigenvectors of ``K``
    e, V : eigenvalues and eigenvectors of ``C = B^{1/2} G B^{1/2}``
    B_half, B_mhalf : ``B^{1/2}``, ``B^{-1/2}``
    Nt : ``U^T N B^{1/2} V``, the rotated data
    n : number of samples
    Vt_B_half, Vt_B_mhalf : ``V^T B^{1/2}`` and ``V^T B^{-1/2}`` (precomputed for the path)
    """

    s: np.ndarray
    U: np.ndarray
    e: np.ndarray
    V: np.ndarray
    B_half: np.ndarray
    B_mhalf: np.ndarray
    Nt: np.ndarray
    n: int
    Vt_B_half: np.ndarray
    Vt_B_mhalf: np.ndarray

    def spectrum(self, lam: float) -> np.ndarray:
        """Shrinkage factors ``s_i e_l / (s_i e_l + n lam)`` (their sum is the effective dof)."""
        se = np.outer(self.s, self.e)
        return se / (se + self.n * lam)


def output_side(G: np.ndarray, B: np.ndarray, B_sqrt: tuple[np.ndarray, np.ndarray] | None = None,
                output_eigh: tuple[np.ndarray, np.ndarray] | None = None
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``B^{1/2}``, ``B^{-1/2}`` and the eigendecomposition ``V diag(e) V^T`` of ``B^{1/2} G B^{1/2}`` (``e``
    clipped at 0), the output side of every closed-form solve; ``B_sqrt`` and ``output_eigh`` are used when
    the caller has them (:meth:`fdakpl.dictionaries.Dictionary.scaled_gram_eigh`).

    Examples
    --------
    >>> Bh, Bmh, e, V = output_side(np.eye(2), np.diag([4.0, 1.0]))
    >>> e
    array([1., 4.])
    """
    Bh, Bmh = sym_sqrt(B) if B_sqrt is None else B_sqrt
    if output_eigh is None:
        C = Bh @ G @ Bh
        e, V = np.linalg.eigh(0.5 * (C + C.T))
    else:
        e, V = output_eigh
    return Bh, Bmh, np.clip(e, 0.0, None), V


def _check_shapes(K: np.ndarray, G: np.ndarray, B: np.ndarray, N: np.ndarray) -> tuple[int, int]:
    n, d = N.shape
    if K.shape != (n, n) or G.shape != (d, d) or B.shape != (d, d):
        raise ValueError(f"shape mismatch: K {K.shape}, G {G.shape}, B {B.shape}, N {N.shape}")
    return n, d


def psd_eigh(K: np.ndarray, symmetric: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Eigenvalues (clipped at 0) and eigenvectors of a positive semi-definite kernel matrix.

    ``K`` is averaged with its transpose first (rounding may leave it slightly asymmetric) unless
    ``symmetric`` says it is exactly symmetric.

    Examples
    --------
    >>> s, U = psd_eigh(np.array([[2.0, 1.0], [1.0, 2.0]]))
    >>> s
    array([1., 3.])
    """
    s, U = np.linalg.eigh(K if symmetric else 0.5 * (K + K.T))
    np.clip(s, 0.0, None, out=s)
    return s, U


def decompose(K: np.ndarray, G: np.ndarray, B: np.ndarray, N: np.ndarray,
              output_eigh: tuple[np.ndarray, np.ndarray] | None = None,
              B_sqrt: tuple[np.ndarray, np.ndarray] | None = None, *,
              symmetric: bool = False, identity: bool = False,
              K_eigh: tuple[np.ndarray, np.ndarray] | None = None) -> RidgeDecomposition:
    """Decompose ``K`` and ``B^{1/2} G B^{1/2}`` once for a whole lambda path.

    Cost: ``O(n^3 + d^3 + n^2 d + n d^2)``. ``output_eigh``, the eigenvalues and eigenvectors of
    ``B^{1/2} G B^{1/2}``, and ``B_sqrt`` (``B^{1/2}``, ``B^{-1/2}``), when the caller has them (they
    depend only on the dictionary and ``B``: :meth:`fdakpl.dictionaries.Dictionary.scaled_gram_eigh`),
    save the ``d x d`` work. ``symmetric``: ``K`` is known to be exactly symmetric (e.g. built from
    :func:`scipy.spatial.distance.pdist`, :meth:`fdakpl.kernels.Kernel.exact_symmetric`), so it is not
    averaged with its transpose (which would give the same numbers). ``identity``: ``B`` is the identity, so
    the products with ``B^{1/2} = B^{-1/2} = I`` are skipped (the same numbers). ``K_eigh``: the
    eigenvalues (clipped at 0) and eigenvectors of ``K`` (:func:`psd_eigh`), when the caller has them.

    Examples
    --------
    >>> K = np.eye(2); G = np.eye(1); B = np.eye(1); N = np.array([[1.0], [2.0]])
    >>> ridge_coef(decompose(K, G, B, N), 0.5).ravel()
    array([0.5, 1. ])
    >>> ridge_coef(decompose(K, G, B, N, symmetric=True, identity=True), 0.5).ravel()
    array([0.5, 1. ])
    """
    n, d = _check_shapes(K, G, B, N)
    s, U = psd_eigh(K, symmetric) if K_eigh is None else K_eigh
    Bh, Bmh, e, V = output_side(G, B, B_sqrt, output_eigh)
    if identity:  # products with I: the same numbers, without the d x d matrix products
        Vt = np.ascontiguousarray(V.T)  # what V.T @ I gives
        return RidgeDecomposition(s, U, e, V, Bh, Bmh, U.T @ N @ V, n, Vt, Vt)
    Nt = U.T @ (N @ Bh) @ V
    return RidgeDecomposition(s, U, e, V, Bh, Bmh, Nt, n, V.T @ Bh, V.T @ Bmh)


def ridge_coef(dec: RidgeDecomposition, lam: float, *, times_B: bool = False) -> np.ndarray:
    """Representer coefficients ``A`` (``n x d``) at ``lam``; ``A B`` if ``times_B``.

    ``A B`` is what prediction needs (``K_new A B``) and avoids ``B^{-1/2}``.

    Examples
    --------
    >>> dec = decompose(np.eye(2), np.eye(1), np.eye(1) * 2, np.ones((2, 1)))
    >>> ridge_coef(dec, 1.0, times_B=True).ravel()
    array([0.5, 0.5])
    """
    lam = check_lam(lam)
    At = dec.Nt / (np.outer(dec.s, dec.e) + dec.n * lam)
    return dec.U @ (At @ (dec.Vt_B_half if times_B else dec.Vt_B_mhalf))


def ridge_single(K: np.ndarray, G: np.ndarray, B: np.ndarray, N: np.ndarray, lam: float,
                 output_eigh: tuple[np.ndarray, np.ndarray] | None = None,
                 B_sqrt: tuple[np.ndarray, np.ndarray] | None = None) -> tuple[np.ndarray, str]:
    """Ridge coefficients ``A`` at one ``lam`` without the eigendecomposition of ``K``.

    With ``B^{1/2} G B^{1/2} = V diag(e) V^T`` (``d x d``, cheap) and ``Z = A B^{1/2} V``, the system
    ``K A (B G) + n lam A = N`` splits into one ``n x n`` system per atom,
    ``(e_l K + n lam I) z_l = (N B^{1/2} V)_l``, all symmetric positive definite, that is
    ``(K + t_l I) z_l = r_l / e_l`` with shifts ``t_l = n lam / e_l``:
    :func:`fdakpl.solvers.shifted.solve_shifted` solves them by one Cholesky factorisation per distinct shift
    (``n^3 / 3`` each: one in all for an orthonormal dictionary with ``B = I``), or, when the shifts are many,
    by a factorisation at an anchor shift per group of nearby shifts and conjugate gradients preconditioned by
    it for the others (condition number at most the square root of the group's span, so a bounded number of
    iterations; stopped by a residual bound, with a factorisation as fall-back), or by one reduction of ``K`` to
    tridiagonal form, whichever its cost model says is cheapest. Atoms with ``e_l = 0`` (redundant
    dictionaries) get ``z_l = r_l / (n lam)``. The full eigendecomposition (:func:`decompose`) costs several
    times more and is only worth it for a lambda path.

    Returns
    -------
    A : numpy.ndarray, shape (n, d)
    route : {"cholesky", "cholesky_cg", "tridiagonal"}

    Examples
    --------
    >>> rng = np.random.default_rng(0); X = rng.normal(size=(30, 2))
    >>> K = np.exp(-((X[:, None] - X[None]) ** 2).sum(-1)); N = rng.normal(size=(30, 4))
    >>> G = np.eye(4) + 0.1; B = np.diag([1.0, 0.5, 0.25, 0.125])
    >>> A, route = ridge_single(K, G, B, N, 1e-3)
    >>> route, bool(np.allclose(A, ridge_coef(decompose(K, G, B, N), 1e-3), rtol=1e-10, atol=1e-12))
    ('cholesky', True)
    """
    lam = check_lam(lam)
    n, d = _check_shapes(K, G, B, N)
    Bh, Bmh, e, V = output_side(G, B, B_sqrt, output_eigh)
    R = (N @ Bh) @ V
    Z = np.empty_like(R)
    shift = n * lam
    zero = e <= 1e-14 * max(float(e.max()), 1e-300)
    Z[:, zero] = R[:, zero] / shift
    route = "cholesky"
    if not zero.all():
        # (e_l K + n lam I) z_l = r_l  <=>  (K + t_l I) z_l = r_l / e_l with t_l = n lam / e_l
        Z[:, ~zero], route = solve_shifted(K, shift / e[~zero], R[:, ~zero] / e[~zero])
    return Z @ (V.T @ Bmh), route


def ridge_sylvester(K: np.ndarray, G: np.ndarray, B: np.ndarray, N: np.ndarray, lam: float,
                    max_cond: float = 1e10) -> np.ndarray:
    """Ridge coefficients at one ``lam`` through a continuous Sylvester equation.

    ``K A (B G) + n lam A = N`` is multiplied on the right by ``(B G)^{-1}``
    to give ``K A + A (n lam (B G)^{-1}) = N (B G)^{-1}``, solved by
    :func:`scipy.linalg.solve_sylvester` (Bartels--Stewart). This needs an
    invertible Gram matrix; redundant dictionaries must use the
    eigendecomposition route.

    Examples
    --------
    >>> K = np.array([[1.0, 0.5], [0.5, 1.0]]); N = np.array([[1.0], [0.0]])
    >>> A1 = ridge_sylvester(K, np.eye(1), np.eye(1), N, 0.1)
    >>> np.allclose(A1, ridge_coef(decompose(K, np.eye(1), np.eye(1), N), 0.1))
    True
    """
    lam = check_lam(lam)
    n = N.shape[0]
    cond = np.linalg.cond(G)
    if not np.isfinite(cond) or cond > max_cond:
        raise ValueError(
            f"the dictionary's Gram matrix is singular or ill-conditioned (condition number {cond:.3g}); "
            "the Sylvester route needs it invertible: use solver='eig'"
        )
    M = B @ G
    Minv = np.linalg.solve(M, np.eye(M.shape[0]))
    return sla.solve_sylvester(K, n * lam * Minv, N @ Minv)


def brute_force_ridge(K: np.ndarray, G: np.ndarray, B: np.ndarray, N: np.ndarray, lam: float) -> np.ndarray:
    """Solve the ``dn x dn`` Kronecker system directly (for tests; ``O(n^3 d^3)``).

    Examples
    --------
    >>> brute_force_ridge(np.eye(2), np.eye(1), np.eye(1), np.ones((2, 1)), 1.0).ravel()
    array([0.33333333, 0.33333333])
    """
    n, d = N.shape
    M = np.kron(K, G @ B) + n * lam * np.eye(n * d)
    return np.linalg.solve(M, N.reshape(-1)).reshape(n, d)
