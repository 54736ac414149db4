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

import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from scipy.optimize import minimize
from sklearn.exceptions import ConvergenceWarning

from ..data.functional import Observations
from ..data.validation import check_lam
from ..losses import GroundLoss, Square, make_loss
from ..progress import progress
from .closed_form import RidgeDecomposition, decompose

__all__ = [
    "IterativeResult",
    "PointDesign",
    "brute_force_partial_ridge",
    "exact_partial_ridge",
    "kpl_iterative",
    "kpl_iterative_path",
    "kpl_objective",
    "point_design",
    "resolve_solver",
    "solve_kpl",
]


# ----------------------------------------------------------------------------------------------
# observed points
@dataclass(frozen=True)
class PointDesign:
    """The observed points of ``n`` curves, laid out for fast products with the dictionary.

    Build it with :func:`point_design`. Two layouts: ``"grid"`` keeps the atoms
    on the common grid (``phi`` is ``(m, d)``) and works with dense ``(n, m)``
    products (fast when most grid points are observed); ``"points"`` keeps the
    atoms at every observed point (``phi`` is ``(N, d)``) and sums over curves
    with a sparse incidence matrix.

    Attributes
    ----------
    n_samples : int
    phi : numpy.ndarray
        Atoms on the grid ``(m, d)`` or at the points ``(N, d)``.
    value, weight : numpy.ndarray, shape (N,)
        Observed values ``y_ip`` and integration weights ``c_ip``.
    index : numpy.ndarray, shape (N,)
        Curve of each point (sorted).
    column : numpy.ndarray or None
        Grid position of each point (grid layout only).

    Examples
    --------
    >>> obs = Observations.from_dense(np.array([[1.0, np.nan], [2.0, 3.0]]), np.array([0.0, 1.0]))
    >>> design = point_design(obs, np.ones((2, 1)), np.array([1.0, 0.5, 0.5]))
    >>> design.layout, design.nu()
    ('grid', array([[1. ],
           [2.5]]))
    """

    n_samples: int
    phi: np.ndarray
    value: np.ndarray
    weight: np.ndarray
    index: np.ndarray
    column: np.ndarray | None = None
    _flat: np.ndarray | None = field(default=None, repr=False)
    _indptr: np.ndarray | None = field(default=None, repr=False)

    @property
    def layout(self) -> str:
        """``"grid"`` or ``"points"``."""
        return "grid" if self.column is not None else "points"

    @property
    def n_atoms(self) -> int:
        """Number of atoms ``d``."""
        return self.phi.shape[1]

    @property
    def n_points(self) -> int:
        """Number of observed points ``N``."""
        return self.value.size

    def fitted(self, H: np.ndarray) -> np.ndarray:
        """``phi(theta_ip)^T h_i`` at every observed point, shape ``(N,)``."""
        if self.column is not None:
            full = (H @ self.phi.T).ravel()
            return full if self._flat is None else full[self._flat]
        return np.einsum("pd,pd->p", self.phi, H[self.index])

    def adjoint(self, g: np.ndarray) -> np.ndarray:
        """``sum_p g_ip phi(theta_ip)`` for every curve, shape ``(n, d)``."""
        n = self.n_samples
        if self.column is not None:
            m = self.phi.shape[0]
            if self._flat is None:
                return g.reshape(n, m) @ self.phi
            dense = np.zeros(n * m)
            dense[self._flat] = g
            return dense.reshape(n, m) @ self.phi
        S = sp.csr_matrix((g, np.arange(g.size), self._indptr), shape=(n, g.size))
        return np.asarray(S @ self.phi)

    def nu(self) -> np.ndarray:
        """Estimated inner products ``nu_i = sum_p c_ip y_ip phi(theta_ip)``, shape ``(n, d)``."""
        return self.adjoint(self.weight * self.value)

    def gram_apply(self, H: np.ndarray) -> np.ndarray:
        """Rows ``G_i h_i`` with the per-curve estimated Gram matrices, shape ``(n, d)``."""
        return self.adjoint(self.weight * self.fitted(H))

    def mean_gram(self) -> np.ndarray:
        """``Gbar = (1/n) sum_i G_i``, shape ``(d, d)``."""
        if self.column is not None:
            cw = np.bincount(self.column, weights=self.weight, minlength=self.phi.shape[0])
            G = (self.phi.T * cw) @ self.phi
        else:
            G = (self.phi.T * self.weight) @ self.phi
        G = G / self.n_samples
        return 0.5 * (G + G.T)

    def curve_grams(self) -> np.ndarray:
        """All ``G_i``, shape ``(n, d, d)`` (memory ``n d^2``; for tests and small problems)."""
        pts = self.phi[self.column] if self.column is not None else self.phi
        G = np.zeros((self.n_samples, self.n_atoms, self.n_atoms))
        np.add.at(G, self.index, self.weight[:, None, None] * pts[:, :, None] * pts[:, None, :])
        return G


def point_design(obs: Observations, phi_at: np.ndarray, weights: np.ndarray, layout: str = "auto") -> PointDesign:
    """Lay out observed points, atoms and integration weights for the iterative solvers.

    Parameters
    ----------
    obs : Observations
        Observed points (values already centred if wanted).
    phi_at : numpy.ndarray
        Atoms on ``obs.grid`` ``(m, d)`` or at the observed points ``(N, d)``
        (as for :func:`fdakpl.solvers.closed_form.project_observations`).
    weights : numpy.ndarray, shape (N,)
        Integration weights ``c_ip`` (:func:`fdakpl.estimators.kpl.integration_weights`).
    layout : {"auto", "grid", "points"}
        ``"auto"`` uses the grid when at least a quarter of the ``n x m`` grid
        points are observed.

    Returns
    -------
    PointDesign

    Examples
    --------
    >>> obs = Observations.from_dense(np.array([[1.0, 2.0]]), np.array([0.0, 1.0]))
    >>> point_design(obs, np.eye(2), np.array([0.5, 0.5]), layout="points").nu()
    array([[0.5, 1. ]])
    """
    if layout not in {"auto", "grid", "points"}:
        raise ValueError(f"layout must be 'auto', 'grid' or 'points', got {layout!r}")
    phi_at = np.asarray(phi_at, dtype=float)
    weights = np.asarray(weights, dtype=float)
    N, n = obs.index.size, obs.n_samples
    if weights.shape != (N,):
        raise ValueError(f"weights has shape {weights.shape}; expected one weight per observed point, ({N},)")
    if not np.all(np.isfinite(weights)) or np.any(weights < 0):
        raise ValueError("weights must be finite and >= 0")
    if phi_at.ndim != 2:
        raise ValueError(f"phi_at must be 2-d (locations x atoms), got shape {phi_at.shape}")
    on_grid = obs.grid is not None and obs.grid_index is not None and phi_at.shape[0] == obs.grid.size
    if not on_grid and phi_at.shape[0] != N:
        raise ValueError(f"phi_at has {phi_at.shape[0]} rows; expected the grid size or one row per observed point "
                         f"({N})")
    if np.any(np.diff(obs.index) < 0):
        raise ValueError("obs.index must be sorted by curve")
    value = np.asarray(obs.value, dtype=float)
    index = np.asarray(obs.index, dtype=np.intp)
    if on_grid:
        assert obs.grid is not None and obs.grid_index is not None
        m = obs.grid.size
        dense_enough = N >= 0.25 * n * m
        if layout == "grid" or (layout == "auto" and dense_enough):
            column = np.asarray(obs.grid_index, dtype=np.intp)
            flat = index * m + column
            if N == n * m and np.array_equal(flat, np.arange(N)):
                flat = None
            return PointDesign(n, phi_at, value, weights, index, column, _flat=flat)
        phi_at = phi_at[obs.grid_index]
    elif layout == "grid":
        raise ValueError("layout='grid' needs observations on a common grid and the atoms on that grid")
    indptr = np.concatenate([[0], np.cumsum(np.bincount(index, minlength=n))])
    return PointDesign(n, phi_at, value, weights, index, None, _indptr=indptr)


# ----------------------------------------------------------------------------------------------
# objective in the representer coordinates (reference implementation, used by tests)
def kpl_objective(A: np.ndarray, K: np.ndarray, B: np.ndarray, design: PointDesign, lam: float,
                  loss: Any = "square") -> tuple[float, np.ndarray]:
    """The iterative KPL objective ``J(A)`` and its analytic gradient ``K (Gamma / n + 2 lam A) B``.

    ``J(A) = (1/n) sum_i sum_p c_ip l(y_ip, phi(theta_ip)^T h_i) + lam tr(A^T K A B)``
    with ``H = K A B`` (rows ``h_i``); see the module docstring.

    Parameters
    ----------
    A : numpy.ndarray, shape (n, d)
    K, B : numpy.ndarray
        Kernel matrix ``(n, n)`` and output matrix ``(d, d)``.
    design : PointDesign
    lam : float
    loss : str or GroundLoss

    Returns
    -------
    value : float
    gradient : numpy.ndarray, shape (n, d)

    Examples
    --------
    >>> obs = Observations.from_dense(np.array([[1.0], [3.0]]), np.array([0.5]))
    >>> design = point_design(obs, np.ones((1, 1)), np.ones(2))
    >>> kpl_objective(np.zeros((2, 1)), np.eye(2), np.eye(1), design, 0.1)
    (5.0, array([[-1.],
           [-3.]]))
    """
    loss = make_loss(loss)
    n = design.n_samples
    KA = K @ A
    H = KA @ B
    yhat = design.fitted(H)
    data = float(np.sum(design.weight * loss.value(design.value, yhat))) / n
    penalty = lam * float(np.sum(A * H))
    Gamma = design.adjoint(design.weight * loss.derivative(design.value, yhat))
    grad = K @ (Gamma / n + 2.0 * lam * A) @ B
    return data + penalty, grad


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


class _Whitened:
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


def _check_options(max_iter: Any, tol: Any) -> tuple[int, float]:
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


def _minimise(W: _Whitened, lam: float, loss: GroundLoss, Zt0: np.ndarray, max_iter: int, tol: float,
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

    def fun(x: np.ndarray) -> tuple[float, np.ndarray]:
        Zt = P * x.reshape(Zt0.shape)
        f, g, _ = parts(Zt)
        return f / scale, (P * g).ravel() / scale

    def callback(xk: np.ndarray) -> None:
        counter["iter"] += 1

    gtol = tol * g0_inf / scale
    x, nit = (Zt0 / P).ravel(), 0
    # L-BFGS-B may stop when a step no longer lowers the objective in floating point while the gradient is
    # still above tol (nearly non-smooth losses such as logcosh with a large gamma; SciPy >= 1.15's line
    # search stops there more often): restart it from where it stopped with a fresh memory, a few times.
    for _restart in range(_RESTARTS + 1):
        res = minimize(fun, x, jac=True, method="L-BFGS-B", callback=callback,
                       options={"maxiter": max_iter - nit, "gtol": gtol, "ftol": 0.0, "maxcor": memory,
                                "maxls": 50})
        x, nit = res.x, nit + int(res.nit)
        Zt = P * x.reshape(Zt0.shape)
        f, g, H = parts(Zt)
        rel = float(np.abs(P * g).max()) / g0_inf
        converged = rel <= tol
        if converged or nit >= max_iter or int(res.nit) == 0:
            break
    message = str(res.message)
    if warn and not converged:
        warnings.warn(
            f"iterative KPL ({loss.name} loss, lam={lam:g}) did not converge: relative gradient norm {rel:.2e} > "
            f"tol={tol:g} after {nit} L-BFGS-B iterations ({message}); increase max_iter, loosen tol, or "
            "increase lam",
            ConvergenceWarning,
            stacklevel=3,
        )
    return _result(W, lam, loss, Zt, H, f, nit, counter["fev"], g, rel, converged, message, "lbfgs")


def _result(W: _Whitened, lam: float, loss: GroundLoss, Zt: np.ndarray, H: np.ndarray, f: float, nit: int,
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
    max_iter, tol = _check_options(max_iter, tol)
    W = _Whitened(K, B, design)
    Zt0 = W.closed_form(lam) if init is None else W.from_coef(np.asarray(init, dtype=float))
    return _minimise(W, lam, loss, Zt0, max_iter, tol, int(memory), warn)


def kpl_iterative_path(K: np.ndarray, B: np.ndarray, design: PointDesign, lams: Any, loss: Any = "square", *,
                       max_iter: int = 2000, tol: float = 1e-6, memory: int = 20, warn: bool = True,
                       progress_bar: bool | None = None) -> list[IterativeResult]:
    """:func:`kpl_iterative` along a lambda path, each fit warm-started from the previous one.

    The eigendecompositions are computed once. The first lambda starts from
    the square-loss closed form; order the path from large to small lambda
    (the smoother solutions first) for the best warm starts.

    Parameters
    ----------
    K, B, design, loss, max_iter, tol, memory, warn
        As in :func:`kpl_iterative`.
    lams : sequence of float
    progress_bar : bool, optional
        Show a progress bar (default: when stderr is a terminal).

    Returns
    -------
    list of IterativeResult
        In the order of ``lams``.

    Examples
    --------
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
    max_iter, tol = _check_options(max_iter, tol)
    W = _Whitened(K, B, design)
    out: list[IterativeResult] = []
    Zt = None
    for lam in progress(lam_list, desc=f"iterative KPL ({loss.name})", enabled=progress_bar):
        start = W.closed_form(lam) if Zt is None else Zt
        res = _minimise(W, lam, loss, start, max_iter, tol, int(memory), warn)
        Zt = res.state
        out.append(res)
    return out


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
    >>> obs = Observations.from_dense(np.array([[1.0, np.nan], [2.0, 4.0]]), np.array([0.0, 1.0]))
    >>> design = point_design(obs, np.array([[1.0, 0.0], [1.0, 1.0]]), np.array([1.0, 0.5, 0.5]))
    >>> res = exact_partial_ridge(np.eye(2), np.eye(2), design, 0.1)
    >>> np.allclose(res.coef, brute_force_partial_ridge(np.eye(2), np.eye(2), design, 0.1))
    True
    """
    lam = check_lam(lam)
    max_iter, tol = _check_options(max_iter, tol)
    W = _Whitened(K, B, design)
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
        warnings.warn(f"exact partial ridge did not converge: relative residual {rel:.2e} > tol={tol:g} after "
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


# ----------------------------------------------------------------------------------------------
SOLVERS = ("auto", "eig", "sylvester", "exact_partial", "iterative")
_OPTIONS = {"iterative": {"max_iter", "tol", "memory", "warn", "init"},
            "exact_partial": {"max_iter", "tol", "warn"}}


def resolve_solver(solver: Any, loss: Any) -> tuple[str, GroundLoss]:
    """Check a ``(solver, loss)`` pair and resolve ``solver="auto"``.

    ``"auto"`` is the plug-in closed form (``"eig"``) for the square loss and
    ``"iterative"`` otherwise. The closed forms (``"eig"``, ``"sylvester"``)
    and ``"exact_partial"`` solve square-loss problems only.

    Returns
    -------
    solver : str
    loss : GroundLoss

    Examples
    --------
    >>> resolve_solver("auto", "logcosh(5)")
    ('iterative', LogCosh(gamma=5.0))
    >>> resolve_solver("eig", "logcosh")
    Traceback (most recent call last):
    ...
    ValueError: solver='eig' solves the square loss only; with loss=LogCosh(gamma=1.0) use solver='iterative' ...
    """
    loss = make_loss(loss)
    if not isinstance(solver, str) or solver not in SOLVERS:
        raise ValueError(f"solver must be one of {', '.join(map(repr, SOLVERS))}, got {solver!r}")
    square = isinstance(loss, Square)
    if solver == "auto":
        solver = "eig" if square else "iterative"
    if solver in {"eig", "sylvester", "exact_partial"} and not square:
        raise ValueError(f"solver={solver!r} solves the square loss only; with loss={loss!r} use "
                         "solver='iterative' (or 'auto')")
    return solver, loss


def solve_kpl(K: np.ndarray, B: np.ndarray, design: PointDesign, lam: float, solver: str, loss: GroundLoss,
              options: dict[str, Any] | None = None) -> IterativeResult:
    """Run ``"exact_partial"`` or ``"iterative"`` with user options (``solver_options`` of the estimator).

    Examples
    --------
    >>> obs = Observations.from_dense(np.array([[1.0], [3.0]]), np.array([0.5]))
    >>> design = point_design(obs, np.ones((1, 1)), np.ones(2))
    >>> solve_kpl(np.eye(2), np.eye(1), design, 0.5, "iterative", Square(), {"tol": 1e-9}).coef.ravel()
    array([0.5, 1.5])
    >>> solve_kpl(np.eye(2), np.eye(1), design, 0.5, "iterative", Square(), {"maxiter": 5})
    Traceback (most recent call last):
    ...
    TypeError: unknown solver_options ['maxiter'] for solver='iterative'; allowed: ['init', 'max_iter', ...]
    """
    if solver not in _OPTIONS:
        raise ValueError(f"solve_kpl runs 'exact_partial' or 'iterative', got {solver!r}")
    options = {} if options is None else dict(options)
    unknown = sorted(set(options) - _OPTIONS[solver])
    if unknown:
        raise TypeError(f"unknown solver_options {unknown} for solver={solver!r}; allowed: {sorted(_OPTIONS[solver])}")
    if solver == "exact_partial":
        return exact_partial_ridge(K, B, design, lam, **options)
    return kpl_iterative(K, B, design, lam, loss, **options)
