"""Iterative KPL: integral losses with estimated gradients, and the exact partially observed ridge.

Notation as in :mod:`fdakpl.solvers.closed_form` (rows are samples): ``K`` is the ``n x n``
input kernel matrix, ``B`` the ``d x d`` output matrix, ``A`` the ``n x d``
representer coefficients (row ``i`` is ``alpha_i``) and ``H = K A B`` the
predicted dictionary coefficients of the training curves (row ``i`` is
``h_i``). Curve ``i`` is observed at points ``theta_ip`` with values ``y_ip``
and integration weights ``c_ip`` (:func:`fdakpl.estimators.kpl.integration_weights`:
quadrature weights when fully observed, ``|Theta| / m_i`` otherwise).

:func:`kpl_iterative` minimises the paper's objective (section 4.3, "Iterative
optimization"; supplement, problem ``prob :: empirical risk partial``)::

    J(A) = (1/n) sum_i sum_p c_ip l(y_ip, phi(theta_ip)^T h_i) + lam tr(A^T K A B)

for a ground loss ``l`` (:mod:`fdakpl.losses`). Its gradient, the paper's
equations ``eq :: gradient separable kernel`` and ``eq :: estimated gradient
KPL``, is ``K (Gamma / n + 2 lam A) B`` with ``Gamma_i = sum_p c_ip
l'(y_ip, yhat_ip) phi(theta_ip)``; it is computed for all observed points at
once (one matrix product on a grid, a sparse incidence product otherwise).

For the square loss the minimiser is the *exact* ridge estimator of the
partially observed problem (the supplement's "ridge-iter-KPL"), which solves::

    G_i h_i + n lam alpha_i = nu_i  for every i,  G_i = sum_p c_ip phi(theta_ip) phi(theta_ip)^T,

i.e. the plug-in system of :mod:`fdakpl.solvers.closed_form` with the dictionary's Gram
matrix replaced by per-curve estimated Gram matrices.
:func:`exact_partial_ridge` solves it directly by preconditioned conjugate
gradients. When the curves are fully observed, ``G_i`` is the quadrature Gram
matrix ``sum_p w_p phi(theta_p) phi(theta_p)^T`` for every curve, so the
solution is the closed form with that Gram matrix (the ``"eig"`` solver uses
the dictionary's exact Gram matrix instead).

Both solvers work in whitened coordinates: with ``K = U diag(s) U^T`` and the
*mean* estimated Gram matrix ``Gbar = (1/n) sum_i G_i``,
``B^{1/2} Gbar B^{1/2} = V diag(e) V^T``, the coordinates
``Z = diag(s)^{1/2} U^T A B^{1/2} V`` make the penalty ``lam ||Z||_F^2`` (an
isometry with the RKHS) and the square-loss problem with ``Gbar`` diagonal,
``sum (s_i e_l / n + lam) Z_il^2 + linear``. The plug-in closed form with
``Gbar`` is therefore both the warm start and the (diagonal) preconditioner;
for the square loss on fully observed curves it is already the solution.
The coefficients are returned in the representer form ``A = -Gamma(H) / (2 n
lam)`` (the stationarity condition), which stays accurate when ``K`` is
nearly singular.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.optimize import minimize
from sklearn.exceptions import ConvergenceWarning

from ..data.validation import check_lam
from ..losses import GroundLoss, make_loss
from ..utils.notices import warn as warn_note
from ..utils.progress import progress as progress_bar
from .closed_form import RidgeDecomposition, decompose
from .points import PointDesign, kpl_objective

__all__ = ["IterativeResult", "Whitened", "check_options", "kpl_iterative", "kpl_iterative_path"]


# ----------------------------------------------------------------------------------------------
@dataclass
class IterativeResult:
    """Solution and convergence report of :func:`kpl_iterative` or :func:`exact_partial_ridge`.

    Attributes
    ----------
    coef : numpy.ndarray, shape (n, d)
        Representer coefficients ``A`` (predict with ``K_new @ coef @ B``).
    fitted_coef : numpy.ndarray, shape (n, d)
        ``H``, the predicted dictionary coefficients of the training curves.
    objective : float
        Objective ``J`` at the solution.
    n_iter : int
        Iterations (L-BFGS-B or conjugate gradients).
    n_fev : int
        Objective (or operator) evaluations.
    grad_norm : float
        Frobenius norm of the objective's gradient at the solution in the
        whitened coordinates ``Z`` (the RKHS gradient's norm: ``||h||^2 =
        ||Z||^2``).
    rel_grad_norm : float
        The same relative to its value at ``A = 0`` (square loss: relative
        residual of the normal equations).
    converged : bool
    message : str
    lam : float
    loss : GroundLoss
    method : str
        ``"lbfgs"`` or ``"pcg"``.
    state : numpy.ndarray
        Solution in the whitened coordinates (to warm-start a neighbouring lambda).

    Examples
    --------
    >>> from fdakpl.data.functional import Observations
    >>> from fdakpl.solvers.points import point_design
    >>> from fdakpl.solvers.partial import exact_partial_ridge
    >>> obs = Observations.from_dense(np.array([[1.0], [3.0]]), np.array([0.5]))
    >>> res = exact_partial_ridge(np.eye(2), np.eye(1), point_design(obs, np.ones((1, 1)), np.ones(2)), 0.5)
    >>> res.coef.ravel(), res.converged
    (array([0.5, 1.5]), True)
    """

    coef: np.ndarray
    fitted_coef: np.ndarray
    objective: float
    n_iter: int
    n_fev: int
    grad_norm: float
    rel_grad_norm: float
    converged: bool
    message: str
    lam: float
    loss: GroundLoss
    method: str
    state: np.ndarray = field(repr=False)


class Whitened:
    """Shared spectral set-up: ``H = R Zt Q`` with ``R = U diag(sqrt s)``, ``Q = V^T B^{1/2}``."""

    def __init__(self, K: np.ndarray, B: np.ndarray, design: PointDesign) -> None:
        n, d = design.n_samples, design.n_atoms
        K = np.asarray(K, dtype=float)
        B = np.asarray(B, dtype=float)
        if K.shape != (n, n):
            raise ValueError(f"K has shape {K.shape}; expected ({n}, {n}) for {n} curves")
        if B.shape != (d, d):
            raise ValueError(f"B has shape {B.shape}; expected ({d}, {d}) for {d} atoms")
        if not (np.all(np.isfinite(K)) and np.all(np.isfinite(B))):
            raise ValueError("K and B must be finite")
        self.design = design
        self.N = design.nu()
        self.dec: RidgeDecomposition = decompose(K, design.mean_gram(), B, self.N)
        self.sqrt_s = np.sqrt(self.dec.s)
        self.R = self.dec.U * self.sqrt_s
        self.Q = self.dec.V.T @ self.dec.B_half
        self.b = self.sqrt_s[:, None] * self.dec.Nt  # R^T N Q^T
        self.n = n

    def H(self, Zt: np.ndarray) -> np.ndarray:
        return self.R @ Zt @ self.Q

    def back(self, Gamma: np.ndarray) -> np.ndarray:
        """``R^T Gamma Q^T``: a gradient w.r.t. ``H`` pulled back to the whitened coordinates."""
        return self.R.T @ (Gamma @ self.Q.T)

    def closed_form(self, lam: float) -> np.ndarray:
        """Square-loss closed form with the mean Gram matrix, in whitened coordinates."""
        return self.b / (np.outer(self.dec.s, self.dec.e) + self.n * lam)

    def from_coef(self, A: np.ndarray) -> np.ndarray:
        return self.sqrt_s[:, None] * (self.dec.U.T @ A @ self.dec.B_half @ self.dec.V)


def check_options(max_iter: Any, tol: Any) -> tuple[int, float]:
    if isinstance(max_iter, bool) or not isinstance(max_iter, (int, np.integer)) or max_iter < 1:
        raise ValueError(f"max_iter must be an integer >= 1, got {max_iter!r}")
    if isinstance(tol, bool) or not isinstance(tol, (int, float, np.floating)) or not np.isfinite(tol) or tol <= 0:
        raise ValueError(f"tol must be a finite number > 0, got {tol!r}")
    return int(max_iter), float(tol)


def _check_finite(loss: GroundLoss, values: np.ndarray, what: str, iteration: int, n_fev: int) -> None:
    if not np.all(np.isfinite(values)):
        bad = int(np.count_nonzero(~np.isfinite(values)))
        raise ValueError(
            f"the {loss.name} loss {what} is not finite (inf or NaN at {bad} observed points) at L-BFGS-B "
            f"iteration {iteration} (objective evaluation {n_fev}); check the ground loss for overflow at large "
            "residuals, rescale the responses, or increase lam"
        )


#: restarts of L-BFGS-B (fresh memory) when it stops above the gradient tolerance
_RESTARTS = 3


def _minimise(W: Whitened, lam: float, loss: GroundLoss, Zt0: np.ndarray, max_iter: int, tol: float,
              memory: int, warn: bool) -> IterativeResult:
    design, n = W.design, W.n
    y, c = design.value, design.weight
    s, e = W.dec.s, W.dec.e
    counter = {"iter": 0, "fev": 0}

    def parts(Zt: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
        """Objective, its gradient w.r.t. Zt, and H."""
        counter["fev"] += 1
        H = W.H(Zt)
        yhat = design.fitted(H)
        lv = loss.value(y, yhat)
        _check_finite(loss, lv, "value", counter["iter"], counter["fev"])
        dl = loss.derivative(y, yhat)
        _check_finite(loss, dl, "derivative", counter["iter"], counter["fev"])
        f = float(c @ lv) / n + lam * float(np.sum(Zt * Zt))
        g = W.back(design.adjoint(c * dl)) / n + 2.0 * lam * Zt
        return f, g, H

    # preconditioner: curvature of the loss at the warm start, averaged over the points
    H0 = W.H(Zt0)
    curv = loss.second_derivative(y, design.fitted(H0))
    _check_finite(loss, curv, "second derivative", 0, 0)
    kappa = float(c @ curv) / max(float(c.sum()), 1e-300)
    kappa = max(kappa, 0.0)
    P = 1.0 / np.sqrt(kappa * np.outer(s, e) / (2.0 * n) + lam)

    f_zero, g_zero, _ = parts(np.zeros_like(Zt0))
    scale = f_zero if f_zero > 0 else 1.0
    g0_inf = float(np.abs(P * g_zero).max())
    if g0_inf == 0.0:  # the zero function is optimal (e.g. all responses zero)
        Zt = np.zeros_like(Zt0)
        f, g, H = parts(Zt)
        return _result(W, lam, loss, Zt, H, f, 0, counter["fev"], g, 0.0, True, "the zero function is optimal",
                       "lbfgs")

    # the variables x = Zt / (P u) with u = sqrt(scale): the objective divided by its value at 0 has a Hessian
    # near the identity in x, whatever the size of the responses (at 1e9 times their size the unscaled
    # variables left L-BFGS-B stuck at its first step)
    u = float(np.sqrt(scale))

    def fun(x: np.ndarray) -> tuple[float, np.ndarray]:
        Zt = P * u * x.reshape(Zt0.shape)
        f, g, _ = parts(Zt)
        return f / scale, (P * g).ravel() * (u / scale)

    def callback(xk: np.ndarray) -> None:
        counter["iter"] += 1

    gtol = tol * g0_inf * u / scale
    x, nit = (Zt0 / (P * u)).ravel(), 0
    # L-BFGS-B may stop when a step no longer lowers the objective in floating point while the gradient is
    # still above tol (nearly non-smooth losses such as logcosh with a large gamma; SciPy >= 1.15's line
    # search stops there more often): restart it from where it stopped with a fresh memory, a few times.
    for _restart in range(_RESTARTS + 1):
        res = minimize(fun, x, jac=True, method="L-BFGS-B", callback=callback,
                       options={"maxiter": max_iter - nit, "gtol": gtol, "ftol": 0.0, "maxcor": memory,
                                "maxls": 50})
        x, nit = res.x, nit + int(res.nit)
        Zt = P * u * x.reshape(Zt0.shape)
        f, g, H = parts(Zt)
        rel = float(np.abs(P * g).max()) / g0_inf
        converged = rel <= tol
        if converged or nit >= max_iter or int(res.nit) == 0:
            break
    message = str(res.message)
    if warn and not converged:
        warn_note(
            f"iterative KPL ({loss.name} loss, lam={lam:g}) did not converge: relative gradient norm {rel:.2e} > "
            f"tol={tol:g} after {nit} L-BFGS-B iterations ({message}); increase max_iter, loosen tol, or "
            "increase lam",
            ConvergenceWarning,
            stacklevel=3,
        )
    return _result(W, lam, loss, Zt, H, f, nit, counter["fev"], g, rel, converged, message, "lbfgs")


def _result(W: Whitened, lam: float, loss: GroundLoss, Zt: np.ndarray, H: np.ndarray, f: float, nit: int,
            nfev: int, g: np.ndarray, rel: float, converged: bool, message: str, method: str) -> IterativeResult:
    design = W.design
    Gamma = design.adjoint(design.weight * loss.derivative(design.value, design.fitted(H)))
    # Two readings of the same optimum: stationarity (accurate when K is near singular) and the whitened
    # state mapped back (accurate at small lambda, where stationarity magnifies the remaining gradient
    # by 1 / lambda). Keep the one with the lower objective, with its own fitted coefficients.
    A_stat = -Gamma / (2.0 * W.n * lam)
    dec = W.dec
    keep = dec.s > 1e-12 * max(float(dec.s.max()), 1e-300)
    inv_sqrt = np.where(keep, 1.0 / np.sqrt(np.where(keep, dec.s, 1.0)), 0.0)
    A_state = dec.U @ (inv_sqrt[:, None] * Zt) @ dec.Vt_B_mhalf
    K = (dec.U * dec.s) @ dec.U.T
    B = dec.B_half @ dec.B_half
    best = None
    for A_c in (A_stat, A_state):
        if not np.all(np.isfinite(A_c)):
            continue
        val = kpl_objective(A_c, K, B, design, lam, loss)[0]
        if best is None or val < best[0]:
            best = (val, A_c)
    A = best[1] if best is not None else A_stat
    H = K @ A @ B
    return IterativeResult(coef=A, fitted_coef=H, objective=float(f), n_iter=nit, n_fev=nfev,
                           grad_norm=float(np.linalg.norm(g)), rel_grad_norm=float(rel), converged=bool(converged),
                           message=message, lam=lam, loss=loss, method=method, state=Zt)


def kpl_iterative(K: np.ndarray, B: np.ndarray, design: PointDesign, lam: float, loss: Any = "square", *,
                  init: np.ndarray | None = None, max_iter: int = 2000, tol: float = 1e-6, memory: int = 20,
                  warn: bool = True) -> IterativeResult:
    """Minimise the iterative KPL objective for an integral loss by L-BFGS-B.

    ``J(A) = (1/n) sum_i sum_p c_ip l(y_ip, phi(theta_ip)^T h_i) + lam tr(A^T K A B)``
    (see the module docstring), with analytic (estimated) gradients, in
    whitened and preconditioned coordinates, warm-started from the square-loss
    closed form with the mean estimated Gram matrix. Each evaluation costs
    ``O(n^2 d + n d^2 + N d)`` (``O(n m d)`` on a grid) after one
    ``O(n^3 + d^3)`` eigendecomposition.

    Parameters
    ----------
    K : numpy.ndarray, shape (n, n)
        Input kernel matrix.
    B : numpy.ndarray, shape (d, d)
        Output matrix (symmetric positive definite).
    design : PointDesign
        Observed points (:func:`point_design`).
    lam : float
        ``lam > 0``.
    loss : str or GroundLoss, default "square"
        See :func:`fdakpl.losses.make_loss`.
    init : numpy.ndarray, shape (n, d), optional
        Starting representer coefficients instead of the closed form.
    max_iter : int, default 2000
        Maximum L-BFGS-B iterations.
    tol : float, default 1e-6
        Stop when the largest entry of the (preconditioned) gradient is below
        ``tol`` times its value at ``A = 0``.
    memory : int, default 20
        L-BFGS memory (``maxcor``).
    warn : bool, default True
        Emit a :class:`sklearn.exceptions.ConvergenceWarning` when ``tol`` is
        not reached.

    Returns
    -------
    IterativeResult

    Raises
    ------
    ValueError
        When the loss or its derivative is not finite at some observed point
        during the optimisation (the message names the iteration).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(20, 2)); grid = np.linspace(0, 1, 15)
    >>> Y = np.sin(np.outer(X[:, 0], grid)); Y[rng.uniform(size=Y.shape) < 0.3] = np.nan
    >>> from fdakpl.data.functional import Observations
    >>> from fdakpl.solvers.points import point_design
    >>> obs = Observations.from_dense(Y, grid)
    >>> from fdakpl.dictionaries import Fourier
    >>> from fdakpl.kernels import Gaussian
    >>> phi = Fourier(2).fit(domain=(0, 1)).evaluate(grid)
    >>> design = point_design(obs, phi, (1.0 / obs.counts)[obs.index])
    >>> res = kpl_iterative(Gaussian(1.0)(X), np.eye(5), design, 1e-3, "logcosh(10)")
    >>> res.converged, res.coef.shape
    (True, (20, 5))
    """
    lam = check_lam(lam)
    loss = make_loss(loss)
    max_iter, tol = check_options(max_iter, tol)
    W = Whitened(K, B, design)
    Zt0 = W.closed_form(lam) if init is None else W.from_coef(np.asarray(init, dtype=float))
    return _minimise(W, lam, loss, Zt0, max_iter, tol, int(memory), warn)


def kpl_iterative_path(K: np.ndarray, B: np.ndarray, design: PointDesign, lams: Any, loss: Any = "square", *,
                       max_iter: int = 2000, tol: float = 1e-6, memory: int = 20, warn: bool = True,
                       progress: bool | None = None) -> list[IterativeResult]:
    """:func:`kpl_iterative` along a lambda path, each fit warm-started from the previous one.

    The eigendecompositions are computed once. The first lambda starts from
    the square-loss closed form; order the path from large to small lambda
    (the smoother solutions first) for the best warm starts.

    Parameters
    ----------
    K, B, design, loss, max_iter, tol, memory, warn
        As in :func:`kpl_iterative`.
    lams : sequence of float
    progress : bool or None, default None
        Show a progress bar; ``None`` follows the package default (``FDAKPL_PROGRESS``, see
        :mod:`fdakpl.utils.progress`; by default when standard error is a terminal).

    Returns
    -------
    list of IterativeResult
        In the order of ``lams``.

    Examples
    --------
    >>> from fdakpl.data.functional import Observations
    >>> from fdakpl.solvers.points import point_design
    >>> obs = Observations.from_dense(np.array([[1.0, 2.0], [0.0, 1.0]]), np.array([0.0, 1.0]))
    >>> design = point_design(obs, np.array([[1.0, 0.0], [1.0, 1.0]]), np.full(4, 0.5))
    >>> path = kpl_iterative_path(np.eye(2), np.eye(2), design, [1.0, 0.1], "logcosh(2)")
    >>> [r.converged for r in path]
    [True, True]
    """
    loss = make_loss(loss)
    lam_list = [check_lam(lam) for lam in np.atleast_1d(np.asarray(lams, dtype=object))]
    if not lam_list:
        raise ValueError("lams is empty; give at least one lambda")
    max_iter, tol = check_options(max_iter, tol)
    W = Whitened(K, B, design)
    out: list[IterativeResult] = []
    Zt = None
    for lam in progress_bar(lam_list, desc=f"iterative KPL ({loss.name})", enabled=progress):
        start = W.closed_form(lam) if Zt is None else Zt
        res = _minimise(W, lam, loss, start, max_iter, tol, int(memory), warn)
        Zt = res.state
        out.append(res)
    return out
