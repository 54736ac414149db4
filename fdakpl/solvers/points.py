"""Observed points of the responses as a design (values, weights, atoms at each point), and the KPL
objective on it (the reference implementation the solvers are tested against)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp

from ..data.functional import Observations
from ..losses import make_loss

__all__ = ["PointDesign", "kpl_objective", "point_design"]


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
