"""Hat functions on a grid: the piecewise-linear interpolation basis."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..data.functional import Observations
from ..utils.saved import saved
from .base import GridDictionary

__all__ = ["PiecewiseLinear"]


@saved("grid")
class PiecewiseLinear(GridDictionary):
    """Hat functions on a grid: the piecewise-linear interpolation basis.

    Atom ``l`` is 1 at grid point ``l``, 0 at the others, linear in between
    (constant beyond the ends). Coefficients are the curve's values on the
    grid, so this dictionary represents every sampled curve exactly; with
    ``B = I`` KPL then behaves like multi-output kernel ridge regression
    weighted by the (exact, tridiagonal) mass matrix.

    Parameters
    ----------
    grid : array_like, optional
        Knots; defaults to the distinct training response locations.
    domain : (float, float), optional

    Examples
    --------
    >>> pl = PiecewiseLinear(grid=[0.0, 0.5, 1.0]).fit(domain=(0, 1))
    >>> pl.evaluate([0.25])
    array([[0.5, 0.5, 0. ]])
    """

    def __init__(self, grid: Any = None, domain: tuple[float, float] | None = None) -> None:
        self.grid = grid
        self.domain = domain

    def _setup(self, obs: Observations | None) -> None:
        if self.grid is not None:
            grid = np.asarray(self.grid, dtype=float)
        elif obs is not None:
            grid = obs.grid if obs.grid is not None else np.unique(obs.location)
        else:
            raise ValueError("PiecewiseLinear needs grid=... or training responses")
        if grid.ndim != 1 or grid.size == 0 or (grid.size > 1 and np.any(np.diff(grid) <= 0)):
            raise ValueError("PiecewiseLinear: grid must be a non-empty, strictly increasing 1-d array")
        self._check_inside(grid, "PiecewiseLinear grid")
        self.grid_ = grid
        self.values_ = np.eye(grid.size)
        self.scales_ = np.zeros(grid.size, dtype=int)
