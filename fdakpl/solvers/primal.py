"""The primal (feature-space) KPL ridge: sufficient statistics that add over chunks and their decomposition,
the whole lambda path from one pair of eigendecompositions (see :mod:`fdakpl.estimators.approx`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..data.validation import check_lam
from ..utils.saved import saved
from .closed_form import output_side

__all__ = ["PrimalDecomposition", "SufficientStats", "primal_decompose"]


# --------------------------------------------------------------------------
# sufficient statistics and the primal solution
# --------------------------------------------------------------------------


@saved("T", "n", "r")
@dataclass(frozen=True)
class SufficientStats:
    """``T = [Z N]^T [Z N]`` (``(r + d) x (r + d)``) and the number of samples.

    ``T`` holds ``Z^T Z``, ``Z^T N`` and ``N^T N``; statistics of disjoint
    chunks of samples add up (``+``).

    Examples
    --------
    >>> Z, N = np.ones((3, 2)), np.arange(3.0)[:, None]
    >>> s = SufficientStats.from_chunk(Z[:1], N[:1]) + SufficientStats.from_chunk(Z[1:], N[1:])
    >>> s.n, s.ZtN.ravel()
    (3, array([3., 3.]))
    """

    T: np.ndarray
    n: int
    r: int

    @classmethod
    def from_chunk(cls, Z: np.ndarray, N: np.ndarray) -> SufficientStats:
        """Statistics of one chunk: features ``Z`` (``b x r``), inner products ``N`` (``b x d``)."""
        F = np.concatenate([Z, N], axis=1)
        return cls(F.T @ F, int(Z.shape[0]), int(Z.shape[1]))

    def __add__(self, other: SufficientStats) -> SufficientStats:
        if self.r != other.r or self.T.shape != other.T.shape:
            raise ValueError("cannot add statistics of different shapes")
        return SufficientStats(self.T + other.T, self.n + other.n, self.r)

    @property
    def ZtZ(self) -> np.ndarray:
        return self.T[: self.r, : self.r]

    @property
    def ZtN(self) -> np.ndarray:
        return self.T[: self.r, self.r:]

    @property
    def NtN(self) -> np.ndarray:
        return self.T[self.r:, self.r:]


@saved("B_half", "P", "Q", "V", "active", "e", "n", "t", "yy")
@dataclass(frozen=True)
class PrimalDecomposition:
    """Eigendecompositions giving the primal solution, effective dof and GCV at any lambda.

    Build it with :func:`primal_decompose`.

    Attributes
    ----------
    t, P : eigenvalues (clipped at 0) and eigenvectors of ``S = Z^T Z``
    e, V : eigenvalues (clipped at 0) and eigenvectors of ``C = B^{1/2} G B^{1/2}``
    B_half : ``B^{1/2}``
    Q : ``P^T Z^T N B^{1/2} V`` (``r x d``)
    yy : ``diag(V^T B^{1/2} N^T N B^{1/2} V)`` (``d``)
    n : number of samples
    active : mask of the ``e_l > e_tol * max(e)`` (directions counted by GCV)
    """

    t: np.ndarray
    P: np.ndarray
    e: np.ndarray
    V: np.ndarray
    B_half: np.ndarray
    Q: np.ndarray
    yy: np.ndarray
    n: int
    active: np.ndarray

    def _denom(self, lam: float) -> np.ndarray:
        return np.outer(self.t, self.e) + self.n * check_lam(lam)

    def coef(self, lam: float) -> np.ndarray:
        """Primal weights ``M`` (``r x d``): predicted coefficients are ``z(x)^T M``."""
        return self.P @ (self.Q / self._denom(lam)) @ (self.V.T @ self.B_half)

    def edf(self, lam: float) -> float:
        """Effective degrees of freedom ``sum_{j, l active} t_j e_l / (t_j e_l + n lam)``."""
        te = np.outer(self.t, self.e[self.active])
        return float(np.sum(te / (te + self.n * check_lam(lam))))

    def rss(self, lam: float) -> float:
        """Coefficient-space residual sum of squares (see :meth:`gcv`)."""
        a = self.active
        te = np.outer(self.t, self.e[a])
        nl = self.n * check_lam(lam)
        Q2 = self.Q[:, a] ** 2
        val = float(np.sum(self.yy[a] / self.e[a]) - np.sum(Q2 * (te + 2 * nl) / (te + nl) ** 2))
        return max(val, 0.0)

    def gcv(self, lams: Any) -> np.ndarray:
        """Generalised cross-validation on coefficient-space residuals, for each lambda.

        ``GCV(lam) = n p RSS(lam) / (n p - edf(lam))^2`` where ``p`` is the
        number of active directions of ``C = B^{1/2} G B^{1/2}`` (eigenvalues
        ``e_l > 1e-10 max(e)``; all ``d`` for a non-redundant dictionary),
        ``edf`` is :meth:`edf`, and

        ``RSS(lam) = sum_i ||P_phi y_i - phi^T h_lam(x_i)||^2_{L2}``

        the squared L2 distances between the training responses' projections
        on the span of the dictionary and the fitted curves, computed from the
        sufficient statistics as
        ``sum_{l active} [ yy_l / e_l - sum_j Q_jl^2 (t_j e_l + 2 n lam) / (t_j e_l + n lam)^2 ]``
        (with ``nu_i`` the quadrature or plug-in inner products; directions
        with ``e_l ~ 0`` are left out). It is ordinary GCV for the ``p``
        decoupled ridge regressions, one per direction ``l``, of the
        coefficient-space responses ``(N B^{1/2} V)_l / e_l`` on ``Z`` with
        weights ``e_l``. It differs from the full L2 residual of the curves by
        the lambda-free term ``sum_i ||(I - P_phi) y_i||^2``, which is left out.

        Examples
        --------
        >>> rng = np.random.default_rng(0)
        >>> Z = rng.normal(size=(50, 3)); N = Z @ rng.normal(size=(3, 2)) + 0.1 * rng.normal(size=(50, 2))
        >>> dec = primal_decompose(SufficientStats.from_chunk(Z, N), np.eye(2), np.eye(2))
        >>> g = dec.gcv([1e-6, 1e-2, 10.0])
        >>> int(np.argmin(g))
        0
        """
        lams = np.atleast_1d(np.asarray(lams, dtype=float))
        p = int(self.active.sum())
        out = np.empty(lams.size)
        for k, lam in enumerate(lams):
            edf = self.edf(lam)
            out[k] = self.n * p * self.rss(lam) / max(self.n * p - edf, 1e-300) ** 2
        return out


def primal_decompose(stats: SufficientStats, G: np.ndarray, B: np.ndarray, e_tol: float = 1e-10) -> PrimalDecomposition:
    """Decompose ``Z^T Z`` and ``B^{1/2} G B^{1/2}`` once for a whole lambda path.

    Cost ``O(r^3 + d^3 + r^2 d)``, independent of the number of samples.

    Parameters
    ----------
    stats : SufficientStats
    G : numpy.ndarray, shape (d, d)
        The dictionary's Gram matrix.
    B : numpy.ndarray, shape (d, d)
        The output matrix (symmetric positive definite).
    e_tol : float
        Relative threshold for the active directions of ``C`` (GCV only).

    Examples
    --------
    >>> Z = np.eye(2); N = np.array([[1.0], [2.0]])
    >>> primal_decompose(SufficientStats.from_chunk(Z, N), np.eye(1), np.eye(1)).coef(0.5).ravel()
    array([0.5, 1. ])
    """
    d = stats.T.shape[0] - stats.r
    if G.shape != (d, d) or B.shape != (d, d):
        raise ValueError(f"shape mismatch: statistics for d = {d} atoms, G {G.shape}, B {B.shape}")
    S = stats.ZtZ
    t, P = np.linalg.eigh(0.5 * (S + S.T))
    t = np.clip(t, 0.0, None)
    Bh, _, e, V = output_side(G, B)
    BhV = Bh @ V
    Q = P.T @ stats.ZtN @ BhV
    yy = np.einsum("ij,ik,kj->j", BhV, stats.NtN, BhV)
    active = e > e_tol * max(e.max(), 1e-300)
    return PrimalDecomposition(t, P, e, V, Bh, Q, yy, stats.n, active)
