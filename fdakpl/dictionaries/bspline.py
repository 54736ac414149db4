"""B-spline dictionary (SciPy's B-splines, Gauss--Legendre Gram)."""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.interpolate import BSpline as _SciPyBSpline

from ..data.functional import Observations
from ..utils.saved import saved
from .base import Dictionary

__all__ = ["BSpline"]


@saved("n_atoms", "degree", "knots_")
class BSpline(Dictionary):
    """B-spline basis with equally spaced, clamped knots.

    Gram matrix by Gauss--Legendre quadrature on each knot interval, exact
    for the piecewise polynomials. All atoms have scale 0.

    Parameters
    ----------
    n_atoms : int
        Number of B-splines, the atoms (``>= degree + 1``).
    degree : int
        Polynomial degree (3 = cubic).
    domain : (float, float), optional

    Examples
    --------
    >>> b = BSpline(8, domain=(0, 1)).fit()
    >>> np.allclose(b.evaluate(np.linspace(0, 1, 5)).sum(axis=1), 1.0)
    True
    """

    def __init__(self, n_atoms: int = 20, degree: int = 3, domain: tuple[float, float] | None = None) -> None:
        self.n_atoms = n_atoms
        self.degree = degree
        self.domain = domain

    def _setup_key(self, obs: Observations | None) -> Any:
        return ()  # parameters and domain only

    def _setup(self, obs: Observations | None) -> None:
        k, nb = int(self.degree), int(self.n_atoms)
        if k < 0 or nb < k + 1:
            raise ValueError(f"BSpline needs n_atoms >= degree + 1, got n_atoms={nb}, degree={k}")
        lo, hi = self.domain_
        inner = np.linspace(lo, hi, nb - k + 1)
        self.knots_ = np.concatenate([[lo] * k, inner, [hi] * k])
        self.scales_ = np.zeros(nb, dtype=int)

    def _evaluate(self, theta: np.ndarray) -> np.ndarray:
        return _SciPyBSpline.design_matrix(theta, self.knots_, int(self.degree)).toarray()

    def _gram(self) -> np.ndarray:
        brk = np.unique(self.knots_)
        x, w = np.polynomial.legendre.leggauss(int(self.degree) + 2)
        a, b = brk[:-1, None], brk[1:, None]
        pts = (0.5 * (b - a) * x + 0.5 * (a + b)).ravel()
        wts = (0.5 * (b - a) * w).ravel()
        phi = self._evaluate(pts)
        return phi.T @ (wts[:, None] * phi)
