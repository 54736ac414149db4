"""A linear kernel on curves whose coefficient function is penalised by roughness: :class:`PenalizedLinear`.

The plain :class:`~fdakpl.kernels.Linear` kernel ``k(x, x') = int x x'`` makes a KPL fit the functional
linear model ``y(t) = mu(t) + int x(s) beta(s, t) ds`` with the ridge penalty ``||beta||^2``: the size of
``beta``, not its roughness, so ``beta`` lies in the span of the (often rough) training curves.
:class:`PenalizedLinear` puts the smoothing-spline penalty on ``s`` instead,

.. math::

    \\|\\beta\\|_H^2 = \\frac{1}{\\mu_*}\\int \\beta^{(q)}(s)^2\\,ds
                     + \\frac{1}{\\nu}\\,\\|P_0 \\beta\\|^2_{L^2},

(``q = order``, ``P_0`` the L2 projection on polynomials of degree ``< q``, which the roughness does not
see, ``nu = null_weight`` large: they are nearly unpenalised, as in a smoothing spline), with ``beta``
represented by its values on the curve's grid and the derivative by divided differences. In the
Demmler--Reinsch basis of the grid (``J v_j = mu_j W v_j``, ``v_j^T W v_k = delta_jk``, ``J`` the
discrete roughness, ``W`` the quadrature weights) the norm is ``sum_j d_j a_j^2`` for
``beta = sum_j a_j v_j`` with ``d_j = mu_j / mu_*`` (``mu_*`` the smallest non-zero ``mu_j``: the
smoothest non-polynomial mode costs what it costs under :class:`~fdakpl.kernels.Linear`) and
``d_j = 1 / nu`` on the polynomials. The kernel is linear on transformed curves,
``k(x, x') = <L x, L x'>`` with ``L = diag(d)^{-1/2} V^T W``, and the coefficient surface of a fit is
``beta = V diag(d)^{-1} V^T W X^T C`` on the grid (:meth:`PenalizedLinear.surface_matrix`).

Examples
--------
>>> import numpy as np
>>> from fdakpl.data.functional import quadrature_weights
>>> w = quadrature_weights(np.linspace(0, 1, 20))
>>> X = np.random.default_rng(0).normal(size=(3, 20))
>>> K = PenalizedLinear()(X, weights=w)
>>> bool(np.allclose(K, K.T)), bool(np.all(np.linalg.eigvalsh(K) > 0))
(True, True)
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from .kernels import Kernel, grid_from_weights
from .utils.saved import saved

__all__ = ["PenalizedLinear", "roughness_matrix"]


def roughness_matrix(s: Any, order: int = 2) -> np.ndarray:
    """``J`` with ``beta^T J beta ~ int beta^(order)(s)^2 ds`` for ``beta`` given by its values on the grid ``s``.

    The ``order``-th derivative at the middle of ``s_p .. s_{p+order}`` is ``order!`` times the divided
    difference ``beta[s_p, ..., s_{p+order}]``, weighted by ``(s_{p+order} - s_p) / order`` (the spacing it
    covers). Exact for polynomials of degree ``order`` (``beta^T J beta`` is then the integral over the
    covered range); its null space is the polynomials of degree ``< order``.

    Examples
    --------
    >>> s = np.linspace(0, 1, 11)
    >>> float(np.round(s**2 @ roughness_matrix(s) @ s**2, 10))  # int_0^1 (d^2/ds^2 s^2)^2 ds = 4
    4.0
    >>> float(np.abs(roughness_matrix(s) @ (1 + 3 * s)).max()) < 1e-9
    True
    """
    s = np.asarray(s, dtype=float)
    if s.ndim != 1 or s.size < order + 2:
        raise ValueError(f"the roughness of order {order} needs a grid of at least {order + 2} points, got "
                         f"{s.size}; use a lower order or a finer grid")
    if np.any(np.diff(s) <= 0):
        raise ValueError("the grid of a roughness penalty must be strictly increasing")
    D = np.eye(s.size)
    for k in range(1, order + 1):  # divided differences of order k: (D_{p+1} - D_p) / (s_{p+k} - s_p)
        D = (D[1:] - D[:-1]) / (s[k:] - s[:-k])[:, None]
    D *= float(np.prod(np.arange(1, order + 1)))
    # row p covers [s_p, s_{p+order}]: weight its span / order, rescaled so that the weights add up to the
    # grid's range (a constant derivative integrates exactly over [s_0, s_{m-1}])
    wd = (s[order:] - s[:-order]) / order
    wd = wd * (s[-1] - s[0]) / wd.sum()
    return D.T @ (wd[:, None] * D)


@functools.lru_cache(maxsize=32)
def _basis(weights: bytes, m: int, order: int, null_weight: float, unit: bool) -> tuple[np.ndarray, np.ndarray]:
    """Demmler--Reinsch basis ``V`` (W-orthonormal columns) and the penalty weights ``d`` of a grid."""
    w = np.frombuffer(weights, dtype=float, count=m)
    try:
        s = np.arange(m, dtype=float) if unit else grid_from_weights(w)
    except ValueError:
        raise ValueError("PenalizedLinear needs the trapezoidal quadrature weights of a grid (curves given as "
                         "DataArrays on a grid, as FunctionalRegression passes them)") from None
    J = roughness_matrix(s, order)
    iw = 1.0 / np.sqrt(w)
    mu, U = np.linalg.eigh(iw[:, None] * J * iw[None, :])
    mu = np.clip(mu, 0.0, None)
    V = iw[:, None] * U
    nonzero = np.arange(m) >= order  # eigh sorts ascending: the null space (polynomials of degree < order) first
    d = np.where(nonzero, mu / mu[order], 1.0 / null_weight)
    V.setflags(write=False)  # cached: shared by every call with this grid
    d.setflags(write=False)
    return V, d


def _weights(m: int, weights: Any) -> tuple[np.ndarray, bool]:
    """The quadrature weights (unit weights for plain vectors) and whether they are the vectors' unit ones."""
    if weights is None or np.ndim(weights) == 0:
        return np.ones(m if weights is None else int(weights)), True
    w = np.asarray(weights, dtype=float)
    if w.shape != (m,):
        raise ValueError(f"weights have {w.size} values but the curves have {m} locations")
    return w, False


@saved("order", "null_weight")
class PenalizedLinear(Kernel):
    """Linear kernel whose coefficient function is penalised by its roughness ``int beta^(order)(s)^2 ds``.

    See the module docstring. For a curve term the kernel needs the curve's quadrature weights (a grid,
    as :class:`~fdakpl.regression.FunctionalRegression` passes them); on plain vectors it uses unit
    spacing. With it, :meth:`~fdakpl.results.FunctionalRegressionResults.coefficient_surface` is the
    penalised functional linear model's estimate (smoothing spline in ``s``; the response side is
    the dictionary's), and :func:`fdakpl.results.surface_inference.surface_bands` gives Bayesian bands.

    Parameters
    ----------
    order : int
        Derivative penalised: 2 (default, cubic-spline-like: linear ``beta`` in ``s`` is nearly free), 1 or 3.
    null_weight : float
        How much less the polynomials of degree ``< order`` are penalised than the smoothest other mode
        (large: nearly unpenalised, default 1e4).

    Examples
    --------
    >>> from fdakpl.data.functional import quadrature_weights
    >>> s = np.linspace(0, 1, 30); w = quadrature_weights(s)
    >>> X = np.random.default_rng(1).normal(size=(4, 30))
    >>> k = PenalizedLinear()
    >>> L = k.transform(X, w)          # k(x, x') = <L x, L x'>
    >>> bool(np.allclose(k(X, weights=w), L @ L.T))
    True
    """

    def __init__(self, order: int = 2, null_weight: float = 1e4) -> None:
        if int(order) != order or not 1 <= order <= 3:
            raise ValueError(f"PenalizedLinear: order must be 1, 2 or 3, got {order}")
        if not np.isfinite(null_weight) or null_weight < 1:
            raise ValueError(f"PenalizedLinear: null_weight must be a number >= 1, got {null_weight}")
        self.order = int(order)
        self.null_weight = float(null_weight)

    def basis(self, weights: Any) -> tuple[np.ndarray, np.ndarray]:
        """``(V, d)``: the W-orthonormal Demmler--Reinsch basis of the grid (columns) and the penalty per mode.

        ``weights``: the curve's quadrature weights, or an integer ``m`` (plain vectors: unit weights on the
        locations ``0, ..., m - 1``).

        Examples
        --------
        >>> V, d = PenalizedLinear().basis(5)
        >>> V.shape, d[:3].tolist()
        ((5, 5), [0.0001, 0.0001, 1.0])
        """
        m = int(weights) if np.ndim(weights) == 0 else np.size(weights)
        w, unit = _weights(m, weights)
        if m < self.order + 2:
            raise ValueError(f"PenalizedLinear(order={self.order}) needs curves on at least {self.order + 2} "
                             f"locations, got {m}")
        return _basis(np.ascontiguousarray(w).tobytes(), m, self.order, self.null_weight, unit)

    def transform(self, X: Any, weights: Any = None) -> np.ndarray:
        """``L x`` for the rows of ``X``: ``k(x, x') = <L x, L x'>`` (Euclidean), ``L = diag(d)^{-1/2} V^T W``.

        Examples
        --------
        >>> PenalizedLinear().transform(np.ones((2, 6))).shape
        (2, 6)
        """
        X = np.asarray(X, dtype=float)
        w, _ = _weights(X.shape[1], weights)
        V, d = self.basis(X.shape[1] if weights is None else w)
        return ((X * w) @ V) / np.sqrt(d)

    def surface_matrix(self, weights: Any) -> np.ndarray:
        """``M`` with ``beta = M X^T C`` on the grid (the coefficient function of ``sum_j c_j k(., x_j)``).

        ``M = V diag(d)^{-1} V^T W``: ``int x beta = sum_j c_j k(x, x_j)`` for every curve ``x``.
        ``weights``: as in :meth:`basis`.

        Examples
        --------
        >>> from fdakpl.data.functional import quadrature_weights
        >>> w = quadrature_weights(np.linspace(0, 1, 8)); X = np.eye(8)[:3]; c = np.ones(3)
        >>> k = PenalizedLinear()
        >>> beta = k.surface_matrix(w) @ X.T @ c
        >>> x = np.linspace(-1, 1, 8)
        >>> bool(np.isclose((x * w) @ beta, k(x[None], X, weights=w)[0] @ c))
        True
        """
        V, d = self.basis(weights)
        w, _ = _weights(V.shape[0], None if np.ndim(weights) == 0 else weights)
        return (V / d) @ (V.T * w)

    def _matrix(self, X: np.ndarray, Y: np.ndarray, w: np.ndarray | None) -> np.ndarray:
        LX = self.transform(X, w)
        return LX @ LX.T if Y is X else LX @ self.transform(Y, w).T

    def diagonal_bound(self) -> float:
        return float("inf")
