"""The exact ridge estimator of partially observed curves (the supplement's "ridge-iter-KPL") by
preconditioned conjugate gradients, and its brute-force reference; see :mod:`fdakpl.solvers.iterative`."""

from __future__ import annotations

import numpy as np
import scipy.sparse.linalg as spla
from sklearn.exceptions import ConvergenceWarning

from ..data.validation import check_lam
from ..losses import Square
from ..utils.notices import warn as warn_note
from .iterative import IterativeResult, Whitened, check_options
from .points import PointDesign

__all__ = ["brute_force_partial_ridge", "exact_partial_ridge"]


# ----------------------------------------------------------------------------------------------
def exact_partial_ridge(K: np.ndarray, B: np.ndarray, design: PointDesign, lam: float, *, tol: float = 1e-10,
                        max_iter: int = 1000, warn: bool = True) -> IterativeResult:
    """Exact ridge KPL for partially observed curves (the supplement's "ridge-iter-KPL").

    Solves ``G_i (K A B)_i + n lam alpha_i = nu_i`` for all ``i`` at once, with
    per-curve estimated Gram matrices ``G_i = sum_p c_ip phi(theta_ip)
    phi(theta_ip)^T`` -- the minimiser of the square-loss objective of
    :func:`kpl_iterative` -- by preconditioned conjugate gradients on the
    equivalent symmetric positive definite system in whitened coordinates
    ``(R^T Ghat(R Z Q) Q^T + n lam Z = R^T N Q^T``, see the module docstring),
    matrix-free (``O(n^2 d + n d^2 + N d)`` per product), preconditioned by
    the plug-in Kronecker system with the mean Gram matrix, which is also the
    starting point. On fully observed curves the preconditioner is exact and
    one iteration suffices.

    Prefer it to the plug-in estimator (``solver="eig"``) when the curves are
    observed at few or uneven locations: it uses where each curve was
    observed, not only its estimated inner products.

    Parameters
    ----------
    K : numpy.ndarray, shape (n, n)
    B : numpy.ndarray, shape (d, d)
    design : PointDesign
    lam : float
    tol : float, default 1e-10
        Relative residual ``||T z - b|| <= tol ||b||`` of the conjugate gradients.
    max_iter : int, default 1000
    warn : bool, default True
        Warn (``ConvergenceWarning``) when ``tol`` is not reached.

    Returns
    -------
    IterativeResult

    Examples
    --------
    >>> from fdakpl.data.functional import Observations
    >>> from fdakpl.solvers.points import point_design
    >>> obs = Observations.from_dense(np.array([[1.0, np.nan], [2.0, 4.0]]), np.array([0.0, 1.0]))
    >>> design = point_design(obs, np.array([[1.0, 0.0], [1.0, 1.0]]), np.array([1.0, 0.5, 0.5]))
    >>> res = exact_partial_ridge(np.eye(2), np.eye(2), design, 0.1)
    >>> np.allclose(res.coef, brute_force_partial_ridge(np.eye(2), np.eye(2), design, 0.1))
    True
    """
    lam = check_lam(lam)
    max_iter, tol = check_options(max_iter, tol)
    W = Whitened(K, B, design)
    n = W.n
    shape = W.b.shape
    denom = np.outer(W.dec.s, W.dec.e) + n * lam
    counter = {"iter": 0, "fev": 0}

    def matvec(z: np.ndarray) -> np.ndarray:
        counter["fev"] += 1
        Zt = z.reshape(shape)
        return (W.back(design.gram_apply(W.H(Zt))) + n * lam * Zt).ravel()

    def precond(r: np.ndarray) -> np.ndarray:
        return (r.reshape(shape) / denom).ravel()

    def callback(xk: np.ndarray) -> None:
        counter["iter"] += 1

    size = W.b.size
    T = spla.LinearOperator((size, size), matvec=matvec, dtype=float)
    M = spla.LinearOperator((size, size), matvec=precond, dtype=float)
    b = W.b.ravel()
    b_norm = float(np.linalg.norm(b))
    if b_norm == 0.0:
        z = np.zeros(size)
        info = 0
    else:
        z, info = spla.cg(T, b, x0=precond(b), rtol=tol, atol=0.0, maxiter=max_iter, M=M, callback=callback)
    Zt = z.reshape(shape)
    H = W.H(Zt)
    resid = matvec(z) - b
    rel = float(np.linalg.norm(resid)) / b_norm if b_norm > 0 else 0.0
    converged = info == 0
    if info < 0:  # pragma: no cover - breakdown of CG on an SPD system
        raise ValueError(f"conjugate gradients broke down (info={info}); the system is not positive definite")
    message = "converged" if converged else f"reached max_iter={max_iter}"
    if warn and not converged:
        warn_note(f"exact partial ridge did not converge: relative residual {rel:.2e} > tol={tol:g} after "
                  f"{counter['iter']} conjugate-gradient iterations; increase max_iter or lam",
                  ConvergenceWarning, stacklevel=2)
    A = (W.N - design.gram_apply(H)) / (n * lam)
    f = float(design.weight @ (design.fitted(H) - design.value) ** 2) / n + lam * float(np.sum(Zt * Zt))
    grad = 2.0 * resid.reshape(shape) / n
    return IterativeResult(coef=A, fitted_coef=H, objective=f, n_iter=counter["iter"], n_fev=counter["fev"],
                           grad_norm=float(np.linalg.norm(grad)), rel_grad_norm=rel, converged=converged,
                           message=message, lam=lam, loss=Square(), method="pcg", state=Zt)


def brute_force_partial_ridge(K: np.ndarray, B: np.ndarray, design: PointDesign, lam: float) -> np.ndarray:
    """Solve the ``dn x dn`` exact partial system directly (for tests; ``O(n^3 d^3)``).

    ``(blockdiag(G_1, ..., G_n) (K kron B) + n lam I) vec(A) = vec(N)`` with
    ``vec`` stacking the rows ``alpha_i``.

    Examples
    --------
    >>> from fdakpl.data.functional import Observations
    >>> from fdakpl.solvers.points import point_design
    >>> obs = Observations.from_dense(np.array([[2.0]]), np.array([0.0]))
    >>> brute_force_partial_ridge(np.eye(1), np.eye(1), point_design(obs, np.ones((1, 1)), np.ones(1)), 1.0)
    array([[1.]])
    """
    n, d = design.n_samples, design.n_atoms
    Gs = design.curve_grams()
    Gblock = np.zeros((n * d, n * d))
    for i in range(n):
        Gblock[i * d:(i + 1) * d, i * d:(i + 1) * d] = Gs[i]
    M = Gblock @ np.kron(K, B) + n * lam * np.eye(n * d)
    return np.linalg.solve(M, design.nu().reshape(-1)).reshape(n, d)
