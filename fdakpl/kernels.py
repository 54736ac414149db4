"""Scalar kernels on vectors and curves, their sums and products, and output matrices B.

KPL uses separable operator-valued kernels ``K(x, x') = k(x, x') B``: ``k`` is
a scalar kernel on the inputs (this module's :class:`Kernel` classes) and
``B`` a symmetric positive definite ``d x d`` matrix acting on dictionary
coefficients (:class:`OutputMatrix` classes).

Curves enter kernels through their L2 geometry: for curves sampled on a grid
with quadrature weights ``w``, ``||x - x'||^2 = sum_p w_p (x_p - x'_p)^2`` and
``<x, x'> = sum_p w_p x_p x'_p``.

Examples
--------
>>> import numpy as np
>>> from fdakpl.kernels import Gaussian, ScaleDecay
>>> Gaussian(1.0)(np.zeros((2, 1))).tolist()
[[1.0, 1.0], [1.0, 1.0]]
>>> np.diag(ScaleDecay(2.0).matrix(np.array([0, 1, 2]))).tolist()
[1.0, 0.5, 0.25]
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from scipy.spatial.distance import cdist, pdist, squareform
from sklearn.base import BaseEstimator

from .utils.saved import saved

try:  # the C routine that pdist(X, "sqeuclidean") calls, without pdist's array-API dispatch (20 us of a 70-curve fit)
    from scipy.spatial._distance_pybind import pdist_sqeuclidean
except ImportError:  # pragma: no cover - another SciPy layout: the public function, the same numbers
    def pdist_sqeuclidean(X: np.ndarray) -> np.ndarray:
        return pdist(X, "sqeuclidean")

__all__ = [
    "Gaussian",
    "Identity",
    "IntegralGaussian",
    "Kernel",
    "Laplace",
    "Linear",
    "Matrix",
    "OutputMatrix",
    "Product",
    "ScaleDecay",
    "SmoothedLinear",
    "Sum",
    "grid_from_weights",
    "kernel_or_default",
    "make_output_matrix",
]


def _as_2d(X: Any, name: str) -> np.ndarray:
    X = np.asarray(X, dtype=float)
    if X.ndim == 1:
        X = X[:, None]
    if X.ndim != 2:
        raise ValueError(f"{name} must be 2-d (n_samples, n_features), got shape {X.shape}")
    if not np.all(np.isfinite(X)):
        raise ValueError(f"{name} has NaN or infinite values; drop or interpolate them first")
    return X


def squared_distances(X: Any, Y: Any = None, weights: Any = None) -> np.ndarray:
    """Squared distances between rows: weighted L2 for curves (``weights``: quadrature weights), Euclidean for
    vectors; for mappings of terms (prepared inputs), the sum over terms. The one distance function of fdakpl.

    ``Y`` None: the rows of ``X`` with themselves, each pair computed once (exactly symmetric).

    Examples
    --------
    >>> squared_distances(np.array([[0.0, 0.0]]), np.array([[3.0, 4.0]]))
    array([[25.]])
    >>> squared_distances({"a": np.zeros((2, 1)), "b": np.array([[0.0], [2.0]])})
    array([[0., 4.],
           [4., 0.]])
    """
    if isinstance(X, Mapping):
        out = None
        for term, v in X.items():
            d = squared_distances(v, None if Y is None else Y[term], (weights or {}).get(term))
            out = d if out is None else out + d
        assert out is not None
        return out
    A = np.asarray(X, dtype=float).reshape(len(X), -1)
    B = A if Y is None else np.asarray(Y, dtype=float).reshape(len(Y), -1)
    w = None if weights is None else np.asarray(weights, dtype=float).reshape(-1)
    return _sqdist(A, B, w)


def _sqdist(X: np.ndarray, Y: np.ndarray, weights: np.ndarray | None) -> np.ndarray:
    same = Y is X
    if weights is not None:
        sw = np.sqrt(np.asarray(weights, dtype=float))
        X = X * sw
        Y = X if same else Y * sw
    # the distances of a set to itself: each pair once (the same numbers as cdist, half the work)
    return squareform(pdist_sqeuclidean(X)) if same else cdist(X, Y, "sqeuclidean")


def _scaled(X: np.ndarray, Y: np.ndarray, sigma: float) -> tuple[np.ndarray, np.ndarray]:
    Xs = X / sigma
    return Xs, (Xs if Y is X else Y / sigma)


class Kernel(BaseEstimator):
    """Base class of scalar kernels.

    ``kernel(X, Y=None, weights=None)`` returns the ``(len(X), len(Y))``
    kernel matrix; ``weights`` are quadrature weights over the features (curve
    locations), ones for plain vectors.

    Examples
    --------
    >>> K = Gaussian(1.0)(np.array([[0.0], [1.0]]))
    >>> np.round(K, 4)
    array([[1.    , 0.6065],
           [0.6065, 1.    ]])
    """

    #: a kernel that a :class:`Product` of terms adds instead of multiplying (a subject effect,
    #: :class:`~fdakpl.factor_kernels.RandomEffect`: ``K = prod_t K_t + w K_subject``)
    additive = False

    def __call__(self, X: Any, Y: Any = None, weights: Any = None) -> np.ndarray:
        Xa = _as_2d(X, "X")
        Ya = Xa if Y is None or Y is X else _as_2d(Y, "Y")
        if Xa.shape[1] != Ya.shape[1]:
            raise ValueError(f"X has {Xa.shape[1]} features but Y has {Ya.shape[1]}")
        if weights is not None and np.asarray(weights).shape != (Xa.shape[1],):
            raise ValueError(f"weights must have shape ({Xa.shape[1]},), got {np.shape(weights)}")
        return self._matrix(Xa, Ya, weights)

    def checked_matrix(self, X: Any, Y: Any = None, weights: Any = None) -> np.ndarray:
        """The kernel matrix of inputs already checked by :func:`fdakpl.data.preprocessing.prepare_inputs`
        (finite float arrays, or a mapping of them per term), without checking them again.

        Examples
        --------
        >>> X = np.array([[0.0], [1.0]])
        >>> bool(np.array_equal(Gaussian(1.0).checked_matrix(X), Gaussian(1.0)(X)))
        True
        """
        if type(self).__call__ is not Kernel.__call__ or np.ndim(X) != 2 or (Y is not None and np.ndim(Y) != 2):
            return self(X, Y, weights)  # a kernel with its own call, or inputs that are not 2-d: the full path
        return self._matrix(X, X if Y is None else Y, weights)

    def _matrix(self, X: np.ndarray, Y: np.ndarray, w: np.ndarray | None) -> np.ndarray:  # pragma: no cover
        raise NotImplementedError

    def exact_symmetric(self) -> bool:
        """Whether the kernel matrix of a set with itself (``Y`` None) is symmetric bit for bit.

        True for the kernels whose matrix comes from :func:`scipy.spatial.distance.pdist` (each pair computed
        once), and for sums and products of such kernels; a solver then need not average the matrix with its
        transpose. False when it is not known (e.g. a subclass with its own computation).

        Examples
        --------
        >>> Gaussian(1.0).exact_symmetric(), Linear().exact_symmetric()
        (True, False)
        """
        cls = type(self)
        return cls.__call__ is Kernel.__call__ and getattr(cls._matrix, "pairs_once", False)

    def diagonal_bound(self) -> float:
        """``sup_x k(x, x)`` (``inf`` when unbounded), the paper's kappa for B = I."""
        return 1.0

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{k}={v!r}' for k, v in self.get_params(deep=False).items())})"

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and repr(self) == repr(other)

    def __hash__(self) -> int:
        return hash(repr(self))


class _ScaleKernel(Kernel):
    """A kernel with one length scale ``sigma > 0`` (checked here, once for all of them)."""

    def __init__(self, sigma: float = 1.0) -> None:
        if not np.isfinite(sigma) or sigma <= 0:
            raise ValueError(f"{type(self).__name__} kernel: sigma must be > 0, got {sigma}")
        self.sigma = float(sigma)


def kernel_or_default(kernel: Any, name: str = "kernel", default: Kernel | None = None) -> Kernel:
    """The kernel given as parameter ``name``, or ``default`` (``Gaussian(1.0)``) for None.

    Raises a ``TypeError`` naming the parameter for anything that is not a :class:`Kernel`.

    Examples
    --------
    >>> kernel_or_default(None), kernel_or_default(Laplace(0.5), "output_kernel")
    (Gaussian(sigma=1.0), Laplace(sigma=0.5))
    >>> kernel_or_default("rbf")
    Traceback (most recent call last):
    ...
    TypeError: kernel must be a fdakpl.kernels.Kernel, got str
    """
    if kernel is None:
        return Gaussian(1.0) if default is None else default
    if not isinstance(kernel, Kernel):
        raise TypeError(f"{name} must be a fdakpl.kernels.Kernel, got {type(kernel).__name__}")
    return kernel


@saved("sigma")
class Gaussian(_ScaleKernel):
    """Gaussian kernel ``exp(-||x - x'||^2 / (2 sigma^2))``.

    Parameters
    ----------
    sigma : float
        Standard deviation (length scale), > 0.

    Examples
    --------
    >>> float(Gaussian(2.0)(np.zeros((1, 1)), np.full((1, 1), 2.0))[0, 0]) == float(np.exp(-0.5))
    True
    """

    def _matrix(self, X: np.ndarray, Y: np.ndarray, w: np.ndarray | None) -> np.ndarray:
        # distances of x / sigma: no overflow or underflow of ||x - x'||^2 or sigma^2 at extreme scales
        return np.exp(-0.5 * _sqdist(*_scaled(X, Y, self.sigma), w))

    _matrix.pairs_once = True  # type: ignore[attr-defined]  # by _sqdist: exactly symmetric (exact_symmetric)


@saved("sigma")
class Laplace(_ScaleKernel):
    """Laplace kernel ``exp(-||x - x'|| / sigma)``.

    Parameters
    ----------
    sigma : float
        Length scale, > 0.

    Examples
    --------
    >>> float(Laplace(1.0)(np.zeros((1, 1)), np.ones((1, 1)))[0, 0]) == float(np.exp(-1))
    True
    """

    def _matrix(self, X: np.ndarray, Y: np.ndarray, w: np.ndarray | None) -> np.ndarray:
        return np.exp(-np.sqrt(_sqdist(*_scaled(X, Y, self.sigma), w)))

    _matrix.pairs_once = True  # type: ignore[attr-defined]  # by _sqdist: exactly symmetric (exact_symmetric)


@saved()
class Linear(Kernel):
    """Linear kernel ``<x, x'>`` (the L2 inner product for curves).

    Examples
    --------
    >>> Linear()(np.array([[1.0, 2.0]]), np.array([[3.0, 4.0]]))
    array([[11.]])
    """

    def _matrix(self, X: np.ndarray, Y: np.ndarray, w: np.ndarray | None) -> np.ndarray:
        return (X * w) @ Y.T if w is not None else X @ Y.T

    def diagonal_bound(self) -> float:
        return float("inf")


def grid_from_weights(weights: Any) -> np.ndarray:
    """Locations (up to a shift, starting at 0) of a grid from its trapezoidal quadrature weights.

    Inverts :func:`fdakpl.data.functional.quadrature_weights` on the grid's own range (what kernels on
    curves receive): ``w_0 = d_0 / 2``, ``w_p = (d_{p-1} + d_p) / 2``, ``w_{m-1} = d_{m-2} / 2`` for the
    spacings ``d``.

    Raises
    ------
    ValueError
        If the weights are not the trapezoidal weights of a strictly increasing grid.

    Examples
    --------
    >>> grid_from_weights([0.125, 0.25, 0.25, 0.25, 0.125])
    array([0.  , 0.25, 0.5 , 0.75, 1.  ])
    """
    w = np.asarray(weights, dtype=float)
    if w.ndim != 1 or w.size < 2:
        raise ValueError(f"weights must be a 1-d array of at least 2 quadrature weights, got shape {w.shape}")
    d = np.empty(w.size - 1)
    d[0] = 2.0 * w[0]
    for p in range(1, w.size - 1):
        d[p] = 2.0 * w[p] - d[p - 1]
    scale = float(w.sum())
    if np.any(d <= 1e-9 * scale) or abs(d[-1] - 2.0 * w[-1]) > 1e-8 * scale:
        raise ValueError("the weights are not trapezoidal weights of an increasing grid (the curve kernels of "
                         "fdakpl receive those); SmoothedLinear needs curves given as DataArrays on a grid")
    return np.concatenate([[0.0], np.cumsum(d)])


@saved("bandwidth")
class SmoothedLinear(Kernel):
    """Linear kernel on Gaussian-smoothed curves: ``<S x, S x'>`` in L2.

    ``(S x)(s) = sum_q w_q g(s - s_q) x(s_q) / sum_q w_q g(s - s_q)`` is the
    Nadaraya--Watson smoother with a Gaussian ``g`` of standard deviation
    ``bandwidth`` (in the units of the curve's locations) and the curve's
    quadrature weights ``w``. ``bandwidth = 0`` is :class:`Linear`. The
    coefficient surface of a fit with this kernel is ``W^{-1} S^T W S``
    applied to the span of the training curves, hence smooth in ``s`` at the
    scale of the bandwidth (:func:`fdakpl.results.surface_inference.select_smoothing`
    chooses it by the curve-level criterion used for lambda).

    Parameters
    ----------
    bandwidth : float
        Standard deviation of the Gaussian smoother, >= 0.

    Examples
    --------
    >>> w = np.full(5, 0.25); w[[0, -1]] = 0.125
    >>> X = np.array([[0.0, 1.0, 0.0, 1.0, 0.0]])
    >>> bool(np.isclose(SmoothedLinear(0.0)(X, weights=w)[0, 0], Linear()(X, weights=w)[0, 0]))
    True
    >>> bool(SmoothedLinear(0.3)(X, weights=w)[0, 0] < Linear()(X, weights=w)[0, 0])
    True
    """

    def __init__(self, bandwidth: float = 0.05) -> None:
        if not np.isfinite(bandwidth) or bandwidth < 0:
            raise ValueError(f"SmoothedLinear kernel: bandwidth must be >= 0, got {bandwidth}")
        self.bandwidth = float(bandwidth)

    def smoother(self, weights: Any) -> np.ndarray:
        """The ``m x m`` smoothing matrix ``S`` for curves with quadrature ``weights``.

        ``weights`` may be an integer ``m`` (plain vectors: locations ``0, ..., m - 1``, unit weights).
        """
        if np.ndim(weights) == 0:
            w, s = np.ones(int(weights)), np.arange(int(weights), dtype=float)
        else:
            w = np.asarray(weights, dtype=float)
            s = grid_from_weights(w) if self.bandwidth > 0 else None
        if self.bandwidth == 0.0:
            return np.eye(w.size)
        G = np.exp(-0.5 * ((s[:, None] - s[None, :]) / self.bandwidth) ** 2) * w[None, :]
        return G / G.sum(axis=1, keepdims=True)

    def _matrix(self, X: np.ndarray, Y: np.ndarray, w: np.ndarray | None) -> np.ndarray:
        S = self.smoother(X.shape[1] if w is None else w)
        wv = np.ones(X.shape[1]) if w is None else np.asarray(w, dtype=float)
        return ((X @ S.T) * wv) @ (Y @ S.T).T

    def diagonal_bound(self) -> float:
        return float("inf")


@saved("sigma")
class IntegralGaussian(_ScaleKernel):
    """Integral of Gaussian kernels for vector-valued curves (the paper's speech kernel).

    For curves ``x: [0, 1] -> R^q`` sampled at ``T`` common locations,
    ``k(x, x') = sum_t w_t exp(-||x(t) - x'(t)||^2 / sigma^2)`` with
    quadrature weights ``w`` (``1/T`` each by default, as in the paper).
    Inputs have shape ``(n, T, q)``; a 2-d input is read as ``q = 1``.

    Parameters
    ----------
    sigma : float
        Scale, > 0 (note the paper's ``sigma^2``, not ``2 sigma^2``).

    Examples
    --------
    >>> X = np.zeros((2, 5, 3)); X[1] += 1.0
    >>> np.round(IntegralGaussian(1.0)(X), 4)
    array([[1.    , 0.0498],
           [0.0498, 1.    ]])
    """

    def __call__(self, X: Any, Y: Any = None, weights: Any = None) -> np.ndarray:
        Xa = np.asarray(X, dtype=float)
        Xa = Xa[:, :, None] if Xa.ndim == 2 else Xa
        Ya = Xa if Y is None else np.asarray(Y, dtype=float)
        Ya = Ya[:, :, None] if Ya.ndim == 2 else Ya
        if Xa.ndim != 3 or Ya.ndim != 3 or Xa.shape[1:] != Ya.shape[1:]:
            raise ValueError(f"IntegralGaussian needs inputs (n, T, q) with equal T, q; got {Xa.shape}, {Ya.shape}")
        if not (np.isfinite(Xa).all() and np.isfinite(Ya).all()):
            raise ValueError("IntegralGaussian inputs have NaN or infinite values")
        T = Xa.shape[1]
        w = np.full(T, 1.0 / T) if weights is None else np.asarray(weights, dtype=float)
        out = np.zeros((Xa.shape[0], Ya.shape[0]))
        for t in range(T):
            out += w[t] * np.exp(-cdist(Xa[:, t], Ya[:, t], "sqeuclidean") / self.sigma**2)
        return out

    def diagonal_bound(self) -> float:
        return 1.0


class _Combination(Kernel):
    """Kernels on several named terms, combined pointwise; :attr:`Kernel.additive` terms (subject effects) are added
    to the combination of the others, in a product as in a sum."""

    op: str

    def __init__(self, kernels: Mapping[str, Kernel]) -> None:
        if not kernels:
            raise ValueError(f"{type(self).__name__} needs at least one term kernel")
        for k, v in kernels.items():
            if not isinstance(v, Kernel):
                raise TypeError(f"kernel for term {k!r} must be a Kernel, got {type(v).__name__}")
        self.kernels = kernels

    def __call__(self, X: Any, Y: Any = None, weights: Any = None) -> np.ndarray:
        if not isinstance(X, Mapping):
            raise TypeError(f"{type(self).__name__} kernels take a mapping term -> array as input")
        Y = X if Y is None else Y
        weights = weights or {}
        for term in self.kernels:
            if term not in X or term not in Y:
                raise ValueError(f"input has no term {term!r}; it has {sorted(X)}")
        return self._combined(lambda term, ker: ker(X[term], Y[term], weights.get(term)))

    def _combined(self, matrix: Any) -> np.ndarray:
        """The terms' matrices ``matrix(term, kernel)`` combined by ``op``; additive terms added at the end."""
        out = extra = None
        for term, ker in self.kernels.items():
            m = matrix(term, ker)
            if ker.additive:
                extra = m if extra is None else extra + m
            else:
                out = m if out is None else (out * m if self.op == "*" else out + m)
        if extra is not None:
            out = extra if out is None else out + extra
        assert out is not None
        return out

    def checked_matrix(self, X: Any, Y: Any = None, weights: Any = None) -> np.ndarray:
        if not isinstance(X, Mapping) or (Y is not None and not isinstance(Y, Mapping)) \
                or any(t not in X or (Y is not None and t not in Y) for t in self.kernels):
            return self(X, Y, weights)  # the full path says what is wrong
        weights = weights or {}
        return self._combined(lambda term, ker: ker.checked_matrix(X[term], None if Y is None else Y[term],
                                                                   weights.get(term)))

    def exact_symmetric(self) -> bool:
        return type(self).checked_matrix is _Combination.checked_matrix and \
            all(k.exact_symmetric() for k in self.kernels.values())

    def diagonal_bound(self) -> float:
        vals = [k.diagonal_bound() for k in self.kernels.values() if not k.additive]
        extra = sum(k.diagonal_bound() for k in self.kernels.values() if k.additive)
        base = (float(np.prod(vals)) if self.op == "*" else float(np.sum(vals))) if vals else 0.0
        return base + float(extra)

    def __repr__(self) -> str:
        main = f" {self.op} ".join(f"{k}:{v!r}" for k, v in self.kernels.items() if not v.additive)
        extra = " + ".join(f"{k}:{v!r}" for k, v in self.kernels.items() if v.additive)
        return " + ".join(p for p in (main, extra) if p)


@saved("kernels")
class Product(_Combination):
    """Product of per-term kernels ``prod_t k_t(x_t, x'_t)``.

    Examples
    --------
    >>> k = Product({"a": Gaussian(1.0), "b": Linear()})
    >>> X = {"a": np.zeros((2, 1)), "b": np.ones((2, 1))}
    >>> k(X)
    array([[1., 1.],
           [1., 1.]])
    """

    op = "*"


@saved("kernels")
class Sum(_Combination):
    """Sum of per-term kernels ``sum_t k_t(x_t, x'_t)``.

    Examples
    --------
    >>> k = Sum({"a": Gaussian(1.0), "b": Gaussian(1.0)})
    >>> k({"a": np.zeros((1, 1)), "b": np.zeros((1, 1))})
    array([[2.]])
    """

    op = "+"


# --------------------------------------------------------------------------
# output matrices B
# --------------------------------------------------------------------------


class OutputMatrix(BaseEstimator):
    """Base class of output matrices ``B`` (symmetric positive definite, ``d x d``).

    ``matrix(scales)`` returns ``B`` for a dictionary with per-atom ``scales``.

    Examples
    --------
    >>> ScaleDecay(2.0).matrix(np.array([0, 1, 2]))
    array([[1.  , 0.  , 0.  ],
           [0.  , 0.5 , 0.  ],
           [0.  , 0.  , 0.25]])
    """

    def matrix(self, scales: np.ndarray) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def checked(self, scales: np.ndarray) -> np.ndarray:
        """:meth:`matrix` checked symmetric positive definite (:func:`check_spd`), with a message that says where
        the matrix came from.

        Examples
        --------
        >>> ScaleDecay(4.0).checked(np.arange(51))  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: the output matrix ScaleDecay(b=4.0) (1 / b**scale, from output_matrix=, b_grid or ...
        """
        return check_spd(self.matrix(scales), "output_matrix")

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{k}={v!r}' for k, v in self.get_params(deep=False).items())})"


@saved()
class Identity(OutputMatrix):
    """``B = I``: independent, equally penalised coefficients.

    Examples
    --------
    >>> Identity().matrix(np.zeros(2))
    array([[1., 0.],
           [0., 1.]])
    """

    def matrix(self, scales: np.ndarray) -> np.ndarray:
        return np.eye(np.asarray(scales).size)


@saved("b")
class ScaleDecay(OutputMatrix):
    """Diagonal ``B`` with ``1 / b**j`` for an atom at scale ``j`` (the paper's DTI protocol).

    ``b > 1`` shrinks fine scales (high frequencies) more; ``b = 1`` is the identity.

    Parameters
    ----------
    b : float
        Decay rate, > 0.

    Examples
    --------
    >>> np.diag(ScaleDecay(1.5).matrix(np.array([0, 2])))
    array([1.        , 0.44444444])
    """

    def __init__(self, b: float = 1.5) -> None:
        if not np.isfinite(b) or b <= 0:
            raise ValueError(f"ScaleDecay: b must be > 0, got {b}")
        self.b = float(b)

    def matrix(self, scales: np.ndarray) -> np.ndarray:
        return np.diag(self.b ** (-np.asarray(scales, dtype=float)))

    def checked(self, scales: np.ndarray) -> np.ndarray:
        s = np.asarray(scales, dtype=float)
        w = self.b ** -s
        if s.size and (not np.all(np.isfinite(w)) or w.min() <= 1e-30 * w.max() or w.max() <= 0):
            span = float(s.max() - s.min())
            top = 1e30 ** (1.0 / span) if span > 0 else float("inf")
            raise ValueError(
                f"the output matrix ScaleDecay(b={self.b}) (1 / b**scale, from output_matrix=, b_grid or param_grid's "
                f"'b') weighs the dictionary's {s.size} atoms from {w.max():.3g} to {w.min():.3g} (scales "
                f"{s.min():g} to {s.max():g}), a ratio beyond 1e30 that the solvers cannot resolve; use b between "
                f"{1 / top:.3g} and {top:.3g}, or a dictionary with fewer atoms")
        return np.diag(w)


@saved("B")
class Matrix(OutputMatrix):
    """A user-supplied symmetric positive definite matrix.

    Parameters
    ----------
    B : array_like, shape (d, d)

    Examples
    --------
    >>> Matrix([[2.0, 0.5], [0.5, 1.0]]).matrix(np.zeros(2))
    array([[2. , 0.5],
           [0.5, 1. ]])
    """

    def __init__(self, B: Any) -> None:
        self.B = check_spd(B, "B")

    def matrix(self, scales: np.ndarray) -> np.ndarray:
        d = np.asarray(scales).size
        if self.B.shape != (d, d):
            raise ValueError(f"B has shape {self.B.shape} but the dictionary has {d} atoms; pass a ({d}, {d}) matrix")
        return self.B.copy()


def check_spd(B: Any, name: str = "B") -> np.ndarray:
    """Return ``B`` as a float array after checking it is symmetric positive definite.

    Examples
    --------
    >>> check_spd([[1.0, 0.0], [0.0, 2.0]])
    array([[1., 0.],
           [0., 2.]])
    """
    B = np.array(B, dtype=float)
    if B.ndim != 2 or B.shape[0] != B.shape[1]:
        raise ValueError(f"{name} must be a square matrix, got shape {B.shape}")
    if not np.all(np.isfinite(B)):
        raise ValueError(f"{name} has NaN or infinite entries")
    diag = np.diag(B)
    if np.count_nonzero(B) == np.count_nonzero(diag):  # diagonal: its entries are its eigenvalues
        # exact, and B^(+-1/2) are taken entry by entry: a decay such as 2^-40 over 81 Fourier atoms is fine
        if diag.min() <= 1e-30 * diag.max() or diag.max() <= 0:
            raise ValueError(
                f"{name} is not positive definite (smallest eigenvalue {diag.min():.3g}); add a ridge, "
                f"e.g. {name} + 1e-8 * trace({name}) / d * I"
            )
        return B
    scale = max(np.abs(B).max(), 1e-300)
    if not np.allclose(B, B.T, rtol=0, atol=1e-10 * scale):
        raise ValueError(f"{name} is not symmetric; pass (B + B.T) / 2 if that is what you meant")
    ev = np.linalg.eigvalsh(0.5 * (B + B.T))
    if ev.min() <= 1e-12 * ev.max():
        raise ValueError(
            f"{name} is not positive definite (smallest eigenvalue {ev.min():.3g}); add a ridge, "
            f"e.g. {name} + 1e-8 * trace({name}) / d * I"
        )
    return 0.5 * (B + B.T)


def make_output_matrix(spec: Any) -> OutputMatrix:
    """Interpret ``spec`` as an output matrix.

    ``None`` or ``"identity"`` → :class:`Identity`; a number ``b`` →
    :class:`ScaleDecay` ``(b)``; an array → :class:`Matrix`; an
    :class:`OutputMatrix` is returned as is.

    Examples
    --------
    >>> make_output_matrix(1.5)
    ScaleDecay(b=1.5)
    """
    if spec is None or (isinstance(spec, str) and spec.lower() in {"identity", "i"}):
        return Identity()
    if isinstance(spec, OutputMatrix):
        return spec
    if isinstance(spec, (int, float, np.floating, np.integer)) and not isinstance(spec, bool):
        return ScaleDecay(float(spec))
    if isinstance(spec, str):
        raise ValueError(f"unknown output matrix {spec!r}; use 'identity', a decay rate b, or a matrix")
    return Matrix(spec)
