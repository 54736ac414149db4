"""Approximate KPL for many curves: Nyström and random Fourier features, solved in primal form.

Exact KPL needs the ``n x n`` kernel matrix and its eigendecomposition
(``O(n^3)``). With an explicit feature map ``z: X -> R^r`` such that
``k(x, x') ~ z(x)^T z(x')``, the vector-valued RKHS of ``z(x)^T z(x') B`` is the
set of linear maps ``h(x) = M^T z(x)`` (``M`` is ``r x d``) with norm
``||h||^2 = tr(M B^{-1} M^T)``. The KPL ridge objective (the paper's
Proposition 4.2, with inner products ``nu_i = <y_i, phi>`` of the centred
responses)::

    (1/n) sum_i [ h(x_i)^T G h(x_i) - 2 nu_i^T h(x_i) ] + lam ||h||^2

has the normal equations ``S M G + n lam M B^{-1} = Z^T N`` with
``S = Z^T Z`` (``r x r``) and ``Z^T N`` (``r x d``). Writing
``M = W B^{1/2}`` gives ``S W C + n lam W = Z^T N B^{1/2}`` with
``C = B^{1/2} G B^{1/2}``; with ``S = P diag(t) P^T`` and
``C = V diag(e) V^T``::

    M = P [ Q / (t e^T + n lam) ] V^T B^{1/2},   Q = P^T (Z^T N) B^{1/2} V,

so one pair of eigendecompositions (``r x r`` and ``d x d``) serves the whole
lambda path, and the data enter only through the sufficient statistics
``Z^T Z``, ``Z^T N`` (and ``N^T N`` for GCV), which are sums over samples and
therefore accumulate over chunks (:mod:`fdakpl.solvers.streaming`). Predicted
coefficients at new inputs are ``Z_new M``. If ``Z Z^T = K`` and
``Z_new Z^T = K_new`` (Nyström with every training point as a landmark and an
invertible ``K``), then ``M = Z^T A B`` for the exact solution ``A`` and the
predictions coincide with exact KPL.

GCV (:meth:`PrimalDecomposition.gcv`) is computed on coefficient-space
residuals; see that method for the exact definition.

Feature maps
------------
* :class:`Nystroem` -- any fdakpl kernel; ``z(x) = k(x, L) U diag(s)^{-1/2}``
  for landmarks ``L`` (uniformly drawn training inputs or k-means centroids)
  with ``k(L, L) = U diag(s) U^T`` (eigenvalues below ``rcond * max(s)``
  dropped, so the rank can be below ``n_components``).
* :class:`RandomFourierFeatures` -- Gaussian kernels ``exp(-d^2 / (2 sigma^2))``
  (and products of Gaussian kernels over terms):
  ``z(x) = sqrt(2 / r) cos(Omega^T x~ + b)`` with ``x~ = sqrt(w) x / sigma``
  (``w`` the quadrature weights of a curve input, so the L2 geometry is kept),
  ``Omega ~ N(0, I)``, ``b ~ U(0, 2 pi)``.

The estimator :class:`ApproxKPLRegressor` (also reached as
``KPLRegressor(approx=Nystroem(...))``) fits in-memory arrays chunk by chunk
and dask-backed xarray data without loading them, on the local dask scheduler
or on a ``dask.distributed`` cluster.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import xarray as xr
from sklearn.base import BaseEstimator, RegressorMixin, clone
from sklearn.utils.validation import check_is_fitted

from ..data.functional import SAMPLE, Observations
from ..data.preprocessing import MeanFunction, check_same_samples
from ..data.validation import check_lam
from ..dictionaries import Dictionary, Fourier, PiecewiseLinear, make_dictionary
from ..kernels import Gaussian, Kernel, Product, check_spd, make_output_matrix
from ..notices import warn
from ..solvers.closed_form import sym_sqrt

__all__ = [
    "ApproxKPLRegressor",
    "Nystroem",
    "PrimalDecomposition",
    "RandomFourierFeatures",
    "SufficientStats",
    "fit_approx",
    "primal_decompose",
]


# --------------------------------------------------------------------------
# inputs as flat vectors (k-means geometry, random features)
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class _Layout:
    """How (possibly named, possibly curve) inputs map to flat scaled vectors and back."""

    names: tuple[str, ...] | None
    shapes: tuple[tuple[int, ...], ...]
    scales: tuple[np.ndarray, ...]  # per term, flat, multiplies the flattened input

    @classmethod
    def of(cls, Xv: Any, Xw: Any, sigmas: Any = None) -> _Layout:
        """Scale ``sqrt(w) / sigma`` per term (``sigma = 1`` unless given)."""
        if isinstance(Xv, dict):
            names = tuple(Xv)
            arrays = [Xv[k] for k in names]
            weights = [(Xw or {}).get(k) for k in names]
            sig = [1.0 if sigmas is None else sigmas[k] for k in names]
        else:
            names, arrays, weights, sig = None, [Xv], [Xw], [1.0 if sigmas is None else sigmas]
        shapes, scales = [], []
        for a, w, s in zip(arrays, weights, sig, strict=True):
            tail = tuple(a.shape[1:])
            size = int(np.prod(tail))
            if w is None:
                sc = np.ones(size)
            else:
                w = np.asarray(w, dtype=float)
                sc = np.broadcast_to(np.sqrt(w).reshape((-1,) + (1,) * (len(tail) - 1)), tail).ravel()
            shapes.append(tail)
            scales.append(sc / float(s))
        return cls(names, tuple(shapes), tuple(scales))

    def flatten(self, Xv: Any) -> np.ndarray:
        arrays = [Xv] if self.names is None else [Xv[k] for k in self.names]
        flat = [a.reshape(a.shape[0], -1) * sc for a, sc in zip(arrays, self.scales, strict=True)]
        return np.concatenate(flat, axis=1)

    def unflatten(self, F: np.ndarray) -> Any:
        out, pos = [], 0
        for tail, sc in zip(self.shapes, self.scales, strict=True):
            size = sc.size
            out.append((F[:, pos:pos + size] / sc).reshape((F.shape[0], *tail)))
            pos += size
        return out[0] if self.names is None else dict(zip(self.names, out, strict=True))


def _rng(random_state: Any) -> np.random.Generator:
    return random_state if isinstance(random_state, np.random.Generator) else np.random.default_rng(random_state)


def _check_n_components(value: Any, who: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{who}: n_components must be an integer >= 1, got {value!r}")
    return int(value)


# --------------------------------------------------------------------------
# feature maps
# --------------------------------------------------------------------------


class _FeatureMap(BaseEstimator):
    """Base class of approximate feature maps ``z`` with ``k(x, x') ~ z(x)^T z(x')``."""

    def fit(self, kernel: Kernel, take: Any, n: int) -> _FeatureMap:  # pragma: no cover - abstract
        raise NotImplementedError

    def transform(self, Xv: Any, Xw: Any = None) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def describe(self) -> str:  # pragma: no cover - abstract
        raise NotImplementedError

    @property
    def n_features_(self) -> int:
        """Number of features ``r`` actually produced (after :meth:`fit`)."""
        raise NotImplementedError  # pragma: no cover

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{k}={v!r}' for k, v in self.get_params(deep=False).items())})"


class Nystroem(_FeatureMap):
    """Nyström feature map for any fdakpl kernel.

    ``z(x) = k(x, L) U diag(s)^{-1/2}`` where ``L`` are the landmarks and
    ``k(L, L) = U diag(s) U^T``; eigenvalues below ``rcond * max(s)`` are
    dropped (the rank, :attr:`n_features_`, can then be below
    ``n_components``). Then ``z(x)^T z(x') = k(x, L) k(L, L)^+ k(L, x')``.

    Parameters
    ----------
    n_components : int
        Number of landmarks ``r`` (at most the number of training curves).
    landmarks : {"uniform", "kmeans"}
        Training inputs drawn uniformly without replacement, or k-means
        centroids (scikit-learn's ``KMeans`` on a uniform subsample of
        ``kmeans_sample`` inputs, in the inputs' L2 geometry: curves are
        scaled by the square roots of their quadrature weights).
    rcond : float
        Relative eigenvalue cut-off for ``k(L, L)``.
    kmeans_sample : int, optional
        Size of the k-means subsample (default ``max(10 r, 2000)``, capped at n).
    random_state : int, Generator or None

    Examples
    --------
    >>> X = np.random.default_rng(0).normal(size=(50, 2))
    >>> ny = Nystroem(50).fit(Gaussian(1.0), lambda idx: (X[idx], None), 50)
    >>> Z = ny.transform(X)
    >>> bool(np.allclose(Z @ Z.T, Gaussian(1.0)(X), atol=1e-8))
    True
    """

    def __init__(self, n_components: int = 300, landmarks: str = "uniform", rcond: float = 1e-10,
                 kmeans_sample: int | None = None, random_state: Any = 0) -> None:
        self.n_components = n_components
        self.landmarks = landmarks
        self.rcond = rcond
        self.kmeans_sample = kmeans_sample
        self.random_state = random_state

    def fit(self, kernel: Kernel, take: Any, n: int) -> Nystroem:
        """Choose landmarks and the normalisation.

        Parameters
        ----------
        kernel : Kernel
        take : callable
            ``take(indices) -> (values, weights)``: the prepared inputs (as
            from :func:`~fdakpl.data.preprocessing.prepare_inputs`) of the
            training samples at sorted ``indices``.
        n : int
            Number of training samples.
        """
        r = _check_n_components(self.n_components, "Nystroem")
        if not isinstance(kernel, Kernel):
            raise TypeError(f"Nystroem needs a fdakpl.kernels.Kernel, got {type(kernel).__name__}")
        if self.landmarks not in {"uniform", "kmeans"}:
            raise ValueError(f"Nystroem: landmarks must be 'uniform' or 'kmeans', got {self.landmarks!r}")
        if r > n:
            raise ValueError(f"Nystroem: n_components={r} exceeds the number of training curves n={n}; "
                             f"use at most n landmarks (n_components <= {n})")
        if not (np.isfinite(self.rcond) and 0 <= self.rcond < 1):
            raise ValueError(f"Nystroem: rcond must be in [0, 1), got {self.rcond}")
        rng = _rng(self.random_state)
        if self.landmarks == "uniform":
            idx = np.sort(rng.choice(n, size=r, replace=False))
            L, w = take(idx)
        else:
            from sklearn.cluster import KMeans

            size = min(n, int(self.kmeans_sample) if self.kmeans_sample is not None else max(10 * r, 2000))
            if size < r:
                raise ValueError(f"Nystroem: kmeans_sample={size} is smaller than n_components={r}")
            idx = np.sort(rng.choice(n, size=size, replace=False))
            Xs, w = take(idx)
            layout = _Layout.of(Xs, w)
            km = KMeans(n_clusters=r, n_init=1, random_state=int(rng.integers(2**31 - 1))).fit(layout.flatten(Xs))
            L = layout.unflatten(km.cluster_centers_)
        Kll = kernel(L, None, w)
        s, U = np.linalg.eigh(0.5 * (Kll + Kll.T))
        keep = s > self.rcond * max(s.max(), 0.0)
        if not keep.any():
            raise ValueError("Nystroem: the landmark kernel matrix is zero; check the kernel's scale (sigma)")
        self.kernel_ = kernel
        self.landmarks_ = L
        self.weights_ = w
        self.normalization_ = U[:, keep] / np.sqrt(s[keep])
        return self

    def transform(self, Xv: Any, Xw: Any = None) -> np.ndarray:
        """Features ``z(x)`` of prepared inputs, shape ``(n, n_features_)``."""
        check_is_fitted(self, "normalization_")
        return self.kernel_(Xv, self.landmarks_, Xw) @ self.normalization_

    @property
    def n_features_(self) -> int:
        return int(self.normalization_.shape[1])

    def describe(self) -> str:
        """Method and rank, for summaries.

        Examples
        --------
        >>> Nystroem(100, landmarks="kmeans").describe()
        'Nyström, 100 k-means landmarks'
        """
        what = "k-means" if self.landmarks == "kmeans" else "uniform"
        text = f"Nyström, {self.n_components} {what} landmarks"
        if hasattr(self, "normalization_") and self.n_features_ < int(self.n_components):
            text += f" (rank {self.n_features_})"
        return text


class RandomFourierFeatures(_FeatureMap):
    """Random Fourier features for Gaussian kernels (Rahimi & Recht, 2008).

    ``z(x) = sqrt(2 / r) cos(Omega^T x~ + b)`` with ``x~ = sqrt(w) x / sigma``
    (``w``: quadrature weights of curve inputs, ones for vectors),
    ``Omega ~ N(0, I)`` and ``b ~ U(0, 2 pi)``, so that
    ``E z(x)^T z(x') = exp(-||x - x'||^2 / (2 sigma^2))``, the package's
    :class:`~fdakpl.kernels.Gaussian`. A :class:`~fdakpl.kernels.Product` of
    Gaussian kernels over named terms is the Gaussian kernel of the
    concatenated, per-term scaled inputs and is supported too.

    Parameters
    ----------
    n_components : int
        Number of features ``r``.
    random_state : int, Generator or None

    Examples
    --------
    >>> X = np.random.default_rng(0).normal(size=(5, 3))
    >>> rff = RandomFourierFeatures(20000).fit(Gaussian(2.0), lambda idx: (X[idx], None), 5)
    >>> Z = rff.transform(X)
    >>> bool(np.abs(Z @ Z.T - Gaussian(2.0)(X)).max() < 0.05)
    True
    """

    def __init__(self, n_components: int = 300, random_state: Any = 0) -> None:
        self.n_components = n_components
        self.random_state = random_state

    def fit(self, kernel: Kernel, take: Any, n: int) -> RandomFourierFeatures:
        """Draw the frequencies (needs one training input for the shapes; see :meth:`Nystroem.fit`)."""
        r = _check_n_components(self.n_components, "RandomFourierFeatures")
        if isinstance(kernel, Gaussian):
            sigmas: Any = kernel.sigma
        elif isinstance(kernel, Product) and all(isinstance(k, Gaussian) for k in kernel.kernels.values()):
            sigmas = {t: k.sigma for t, k in kernel.kernels.items()}
        else:
            raise TypeError(
                f"RandomFourierFeatures approximates Gaussian kernels (and products of Gaussian kernels) only, "
                f"got {kernel!r}; use Nystroem(n_components=...) for other kernels"
            )
        X0, w = take(np.array([0]))
        if isinstance(sigmas, dict) and (not isinstance(X0, dict) or set(X0) != set(sigmas)):
            raise ValueError(f"the Product kernel has terms {sorted(sigmas)} but the inputs have "
                             f"{sorted(X0) if isinstance(X0, dict) else 'one unnamed term'}")
        arrays = X0.values() if isinstance(X0, dict) else [X0]
        if any(np.ndim(a) != 2 for a in arrays):
            raise ValueError("RandomFourierFeatures needs 2-d inputs (sample, feature or location)")
        self.layout_ = _Layout.of(X0, w, sigmas)
        D = sum(sc.size for sc in self.layout_.scales)
        rng = _rng(self.random_state)
        self.omega_ = rng.normal(size=(D, r))
        self.offset_ = rng.uniform(0.0, 2 * np.pi, size=r)
        return self

    def transform(self, Xv: Any, Xw: Any = None) -> np.ndarray:
        """Features ``z(x)`` of prepared inputs, shape ``(n, n_components)``."""
        check_is_fitted(self, "omega_")
        Z = self.layout_.flatten(Xv) @ self.omega_
        Z += self.offset_
        np.cos(Z, out=Z)
        Z *= np.sqrt(2.0 / self.omega_.shape[1])
        return Z

    @property
    def n_features_(self) -> int:
        return int(self.omega_.shape[1])

    def describe(self) -> str:
        """Method and rank, for summaries.

        Examples
        --------
        >>> RandomFourierFeatures(500).describe()
        'random Fourier features, 500 features'
        """
        return f"random Fourier features, {self.n_components} features"


# --------------------------------------------------------------------------
# sufficient statistics and the primal solution
# --------------------------------------------------------------------------


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
    Bh = sym_sqrt(B)[0]
    C = Bh @ G @ Bh
    e, V = np.linalg.eigh(0.5 * (C + C.T))
    e = np.clip(e, 0.0, None)
    BhV = Bh @ V
    Q = P.T @ stats.ZtN @ BhV
    yy = np.einsum("ij,ik,kj->j", BhV, stats.NtN, BhV)
    active = e > e_tol * max(e.max(), 1e-300)
    return PrimalDecomposition(t, P, e, V, Bh, Q, yy, stats.n, active)


# --------------------------------------------------------------------------
# estimator
# --------------------------------------------------------------------------

_DEFAULT_LAMS = np.logspace(-8, 0, 33)


class ApproxKPLRegressor(RegressorMixin, BaseEstimator):
    """KPL with an approximate feature map, for many curves, in memory or on dask.

    Same model and API as :class:`~fdakpl.estimators.kpl.KPLRegressor` (square
    loss, closed form), with ``k(x, x') ~ z(x)^T z(x')`` from ``approx``; the
    fit costs ``O(n r (p + r + d) + r^3)`` time (``p``: input size) and ``O((r + d)^2)`` memory beyond
    one chunk. Inputs and responses may be NumPy arrays (processed
    ``chunk_size`` samples at a time), labelled DataArrays / Datasets of terms,
    or dask-backed DataArrays (e.g. ``xr.open_zarr(path)`` or
    ``xr.open_dataset(path, chunks={"sample": 50_000})``): their chunks along
    ``sample`` are reduced by dask, so nothing is loaded whole, on the local
    scheduler or on a ``dask.distributed`` cluster when a ``Client`` is
    active. Partially observed responses (NaN = unobserved) use the plug-in
    inner products per chunk. The mean function for centring is computed in
    a first streaming pass (sums and counts per grid point).

    Parameters
    ----------
    dictionary, kernel, output_matrix, center, integration, domain, interpolate_inputs
        As in :class:`~fdakpl.estimators.kpl.KPLRegressor`. A data-dependent
        dictionary (FPCA, learnt) is fitted on a uniform subsample of at most
        ``dictionary_sample`` centred curves.
    lam : float, "loo", "gcv" or array-like
        A fixed ``lambda > 0``, or candidates chosen by ``criterion``; ``"loo"`` / ``"gcv"``
        use ``np.logspace(-8, 0, 33)`` with that criterion.
    criterion : {"loo", "gcv"}
        How candidates are chosen: exact leave-one-curve-out given the feature map
        (:func:`fdakpl.tuning.primal_loo_terms`; one more streaming pass), or GCV on
        coefficient-space residuals (:meth:`PrimalDecomposition.gcv`; from the statistics alone,
        but it leaves out single points of dependent curves and undersmooths).
    approx : Nystroem or RandomFourierFeatures, optional
        Default: ``Nystroem(min(300, n))`` with uniform landmarks.
    chunk_size : int
        Samples per chunk for in-memory inputs (dask inputs keep their own chunks).
    dictionary_sample : int
        Subsample size for data-dependent dictionaries.
    random_state : int or None
        Seed of that subsample.
    progress : bool or None
        Progress bar over chunks (in-memory inputs) or dask's progress bar
        (local scheduler); ``None`` follows ``FDAKPL_PROGRESS``.

    Attributes
    ----------
    coef_ : numpy.ndarray, shape (r, d)
        Primal weights ``M`` at ``lam_``: predicted coefficients are ``z(x)^T M``.
    approx_ : fitted feature map
    primal_ : PrimalDecomposition
    stats_ : SufficientStats
    lam_ : float
    lams_, gcv_, scores_ : numpy.ndarray or None
        The candidate lambdas, their GCV values and the values of the criterion that chose
        lambda, when lambda was selected.
    criterion_ : str or None
    edf_ : float
    approx_description_ : str
        E.g. ``"Nyström, 300 uniform landmarks"``.
    dictionary_, B_, gram_, mean_, integration_, grid_, response_info_, input_spec_, n_samples_fit_
        As in :class:`~fdakpl.estimators.kpl.KPLRegressor`.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, size=(400, 2)); grid = np.linspace(0, 1, 30)
    >>> Y = np.sin(np.pi * X[:, :1] * grid) + 0.05 * rng.normal(size=(400, 30))
    >>> model = ApproxKPLRegressor(dictionary=Fourier(4), approx=Nystroem(50), lam="gcv", chunk_size=100)
    >>> model.fit(X, Y, locations=grid).predict(X[:2]).shape
    (2, 30)
    >>> model.approx_description_  # the landmarks' kernel matrix is numerically rank deficient here
    'Nyström, 50 uniform landmarks (rank ...)'
    """

    def __init__(self, dictionary: str | Dictionary = "auto", kernel: Kernel | None = None,
                 output_matrix: Any = None, lam: Any = 1e-3, center: bool = True, integration: str = "auto",
                 domain: tuple[float, float] | None = None, interpolate_inputs: bool = False,
                 approx: Any = None, chunk_size: int = 20_000, dictionary_sample: int = 10_000,
                 random_state: Any = 0, progress: bool | None = None, criterion: str = "loo") -> None:
        self.dictionary = dictionary
        self.kernel = kernel
        self.output_matrix = output_matrix
        self.lam = lam
        self.center = center
        self.integration = integration
        self.domain = domain
        self.interpolate_inputs = interpolate_inputs
        self.approx = approx
        self.chunk_size = chunk_size
        self.dictionary_sample = dictionary_sample
        self.random_state = random_state
        self.progress = progress
        self.criterion = criterion

    # ------------------------------------------------------------------
    def _kernel(self) -> Kernel:
        k = Gaussian(1.0) if self.kernel is None else self.kernel
        if not isinstance(k, Kernel):
            raise TypeError(f"kernel must be a fdakpl.kernels.Kernel, got {type(self.kernel).__name__}")
        return k

    def _lams(self) -> np.ndarray | None:
        lam = self.lam
        if isinstance(lam, str):
            if lam not in {"gcv", "loo"}:
                raise ValueError(f"lam must be a number > 0, 'loo', 'gcv' or a sequence of candidates, got {lam!r}")
            return _DEFAULT_LAMS
        if np.ndim(lam) == 0:
            check_lam(lam)
            return None
        lams = np.asarray(lam, dtype=float).ravel()
        if lams.size == 0 or not np.all(np.isfinite(lams)) or np.any(lams <= 0):
            raise ValueError(f"lam candidates must be finite numbers > 0, got {lam!r}")
        return lams

    def _criterion(self) -> str:
        crit = self.lam if isinstance(self.lam, str) else self.criterion
        if crit not in {"loo", "gcv"}:
            raise ValueError(f"criterion must be 'loo' or 'gcv', got {crit!r}")
        return str(crit)

    def _check_params(self) -> None:
        self._kernel()
        self._lams()
        self._criterion()
        if self.integration not in {"auto", "quadrature", "plugin"}:
            raise ValueError(f"integration must be 'auto', 'quadrature' or 'plugin', got {self.integration!r}")
        for name in ("chunk_size", "dictionary_sample"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
                raise ValueError(f"{name} must be an integer >= 1, got {v!r}")
        if self.approx is not None and not isinstance(self.approx, _FeatureMap):
            raise TypeError(f"approx must be Nystroem(...) or RandomFourierFeatures(...), got {self.approx!r}")

    def _make_dictionary(self, q: int) -> Dictionary:
        if isinstance(self.dictionary, str) and self.dictionary == "auto":
            return PiecewiseLinear() if q <= 21 else Fourier(n_freqs=10)
        return make_dictionary(self.dictionary)

    # ------------------------------------------------------------------
    def fit(self, X: Any, Y: Any, locations: Any = None) -> ApproxKPLRegressor:
        """Fit by streaming passes over the samples.

        Parameters
        ----------
        X : array-like, DataArray, Dataset or mapping of terms (NumPy- or dask-backed)
        Y : DataArray or array ``(n, m)`` (NumPy- or dask-backed), NaN = unobserved
        locations : array-like, optional
            Locations of the columns of an array ``Y``.

        Returns
        -------
        self
        """
        from ..solvers import streaming as st

        self._check_params()
        if Y is None:
            raise ValueError("ApproxKPLRegressor requires y to be passed, but the target y is None")
        kernel = self._kernel()
        inputs = st.as_inputs(X, interpolate=self.interpolate_inputs)
        resp = st.as_response(Y, locations, self.domain)
        n = resp.n
        check_same_samples(inputs.n, inputs.labels, n, resp.info.labels)
        plan = st.ChunkPlan.of(inputs, resp, self.chunk_size)
        info = resp.info
        grid = info.grid
        assert grid is not None
        dom = info.domain
        self.response_info_, self.input_spec_ = info, inputs.spec
        self.n_features_in_ = inputs.spec.n_features if isinstance(inputs.spec.n_features, int) else None

        # pass 1: sums and counts per grid point (mean function, fully observed or not)
        sums, counts = st.mean_pass(plan, progress=self.progress)
        if self.integration == "auto":
            mode = "quadrature" if np.all(counts == n) else "plugin"
        else:
            mode = self.integration
            if mode == "quadrature" and not np.all(counts == n):
                raise ValueError("integration='quadrature' needs every curve observed on the whole grid; use 'plugin'")
        self.integration_ = mode
        self.mean_ = _mean_function(grid, sums, counts, dom) if self.center else None
        mean_on_grid = self.mean_(grid) if self.mean_ is not None else None

        # dictionary, Gram, B
        dic = self._make_dictionary(grid.size)
        if dic.data_dependent:
            sample = st.take_rows(resp.values, _subsample(n, self.dictionary_sample, self.random_state))
            if mean_on_grid is not None:
                sample = sample - mean_on_grid
            dic.fit(Observations.from_dense(sample, grid), domain=dom)
        else:
            dic.fit(Observations.from_dense(np.zeros((1, grid.size)), grid), domain=dom)
        self.dictionary_ = dic
        G = dic.gram()
        B = check_spd(make_output_matrix(self.output_matrix).matrix(dic.scales_), "output_matrix")
        self.gram_, self.B_ = G, B
        _warn_unsupported_atoms(grid.size, G)

        # feature map
        fmap = clone(self.approx) if self.approx is not None else Nystroem(min(300, n))
        fmap.fit(kernel, inputs.take, n)
        self.approx_ = fmap
        self.approx_description_ = fmap.describe()

        # pass 2: sufficient statistics
        from ..data.functional import quadrature_weights

        ctx = st.StatsContext(
            features=fmap, layout=inputs.layout, mean=mean_on_grid, phi=dic.evaluate(grid),
            quad_weights=quadrature_weights(grid, dom), length=dom[1] - dom[0], mode=mode)
        self.stats_ = st.stats_pass(plan, ctx, progress=self.progress)
        self.primal_ = primal_decompose(self.stats_, G, B)

        lams = self._lams()
        if lams is None:
            self.lam_, self.lams_, self.gcv_, self.scores_, self.criterion_ = float(self.lam), None, None, None, None
        else:
            from ..tuning import primal_loo_block

            g = self.primal_.gcv(lams)
            self.criterion_ = self._criterion()
            sc = g if self.criterion_ == "gcv" else st.reduce_pass(
                plan, primal_loo_block, (ctx, self.primal_, lams), self.progress, "leave-one-curve-out") / n
            self.lam_, self.lams_, self.gcv_, self.scores_ = float(lams[int(np.argmin(sc))]), lams, g, sc
        self.coef_ = self.primal_.coef(self.lam_)
        self.edf_ = self.primal_.edf(self.lam_)
        self.grid_ = grid
        self.n_samples_fit_ = n
        return self

    # ------------------------------------------------------------------
    def predict_coefficients(self, X: Any) -> Any:
        """Predicted dictionary coefficients ``z(x)^T M``, shape ``(n_new, d)``.

        A NumPy array, or a lazy dask array for dask-backed inputs.

        Examples
        --------
        >>> X = np.linspace(0, 1, 10)[:, None]; Y = X * np.linspace(0, 1, 5)
        >>> m = ApproxKPLRegressor(dictionary=Fourier(1), approx=Nystroem(10), lam=1e-2).fit(X, Y)
        >>> m.predict_coefficients(X[:3]).shape
        (3, 3)
        """
        from ..solvers import streaming as st

        check_is_fitted(self, "coef_")
        inputs = st.as_inputs(X, interpolate=self.interpolate_inputs, spec=self.input_spec_)
        ctx = st.PredictContext(self.approx_, inputs.layout, self.coef_, None, None)
        return st.predict_pass(st.ChunkPlan.of(inputs, None, self.chunk_size), ctx, progress=self.progress)

    def predict(self, X: Any, at: Any = None) -> Any:
        """Predicted curves at ``at`` (default: the training grid), chunk by chunk.

        Same return types as :meth:`KPLRegressor.predict <fdakpl.estimators.kpl.KPLRegressor.predict>`;
        for dask-backed inputs the values are a lazy dask array (call
        ``.compute()``, or write them with ``.to_zarr``).

        Examples
        --------
        >>> X = np.linspace(0, 1, 10)[:, None]; Y = np.hstack([X, 2 * X])
        >>> m = ApproxKPLRegressor(approx=Nystroem(10), lam=1e-3).fit(X, Y)
        >>> m.predict(X[:2], at=[0.1, 0.5, 0.9]).shape
        (2, 3)
        """
        from ..solvers import streaming as st

        check_is_fitted(self, "coef_")
        theta = self.grid_ if at is None else np.atleast_1d(np.asarray(at, dtype=float))
        inputs = st.as_inputs(X, interpolate=self.interpolate_inputs, spec=self.input_spec_)
        mean = self.mean_(theta) if self.mean_ is not None else np.zeros(theta.size)
        ctx = st.PredictContext(self.approx_, inputs.layout, self.coef_, self.dictionary_.evaluate(theta), mean)
        Yhat = st.predict_pass(st.ChunkPlan.of(inputs, None, self.chunk_size), ctx, progress=self.progress)
        info = self.response_info_
        if info.kind in {"dataarray", "long"}:
            coords: dict[str, Any] = {info.location_dim: theta}
            if inputs.labels is not None:
                coords[SAMPLE] = inputs.labels
            return xr.DataArray(Yhat, dims=(SAMPLE, info.location_dim), coords=coords, name=info.name)
        if info.kind == "vector" and at is None:
            return Yhat[:, 0]
        return Yhat

    def score(self, X: Any, y: Any, sample_weight: Any = None) -> float:
        """Integrated R^2 over the observed points of ``y`` (as :meth:`KPLRegressor.score`; loads ``y``).

        Examples
        --------
        >>> X = np.linspace(0, 1, 20)[:, None]; Y = np.sin(3 * X * np.linspace(0, 1, 40))
        >>> m = ApproxKPLRegressor(approx=Nystroem(20), lam=1e-8).fit(X, Y)
        >>> m.score(X, Y) > 0.99
        True
        """
        from .kpl import KPLRegressor

        return KPLRegressor.score(self, X, y, sample_weight)  # type: ignore[arg-type]

    def __sklearn_tags__(self):  # type: ignore[no-untyped-def]
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        tags.target_tags.single_output = True
        tags.input_tags.allow_nan = False
        return tags


def _subsample(n: int, size: int, random_state: Any) -> np.ndarray:
    if n <= size:
        return np.arange(n)
    return np.sort(_rng(random_state).choice(n, size=size, replace=False))


def _mean_function(grid: np.ndarray, sums: np.ndarray, counts: np.ndarray, domain: tuple[float, float]) -> MeanFunction:
    """The :class:`MeanFunction` of the observed values from their ``sums`` and ``counts`` on ``grid``."""
    return MeanFunction.from_sums(grid, sums, counts, domain)


def _warn_unsupported_atoms(q: int, G: np.ndarray) -> None:
    rank = np.linalg.matrix_rank(G, tol=1e-10 * max(np.abs(G).max(), 1e-300) * G.shape[0])
    if rank > q:
        warn(
            f"the dictionary spans {rank} dimensions but the responses are observed at only {q} distinct "
            "locations: the extra atoms are not identifiable from the data and only the penalty fixes "
            "them; use fewer atoms (fewer frequencies / levels / components)",
            stacklevel=3,
        )


_FITTED_COPIED = ("coef_", "dictionary_", "B_", "gram_", "mean_", "integration_", "grid_", "response_info_",
                  "input_spec_", "n_samples_fit_", "n_features_in_", "lam_", "edf_", "approx_description_",
                  "criterion_")


def fit_approx(est: Any, X: Any, Y: Any, locations: Any = None, **overrides: Any) -> Any:
    """Fit a :class:`~fdakpl.estimators.kpl.KPLRegressor` whose ``approx`` is set, through :class:`ApproxKPLRegressor`.

    Used by ``KPLRegressor.fit``: the fitted :class:`ApproxKPLRegressor` is
    stored as ``est.approx_`` (prediction goes through it) and its fitted
    attributes are copied onto ``est``; ``coef_`` and ``coef_B_`` are then the
    primal weights ``M`` (``r x d``) and ``K_``, ``decomposition_``, ``nu_``
    are ``None``.

    Examples
    --------
    >>> from fdakpl import KPLRegressor
    >>> X = np.random.default_rng(0).normal(size=(30, 3)); Y = np.sin(X[:, :1] * np.linspace(0, 1, 5))
    >>> m = KPLRegressor(dictionary=Fourier(1), approx=RandomFourierFeatures(20)).fit(X, Y)
    >>> m.coef_.shape, m.approx_description_
    ((20, 3), 'random Fourier features, 20 features')
    """
    loss = getattr(est, "loss", "square")
    if loss not in (None, "square"):
        raise ValueError(f"approx= supports the square loss only (closed form), got loss={loss!r}")
    solver = getattr(est, "solver", "auto")
    if solver not in ("auto", "eig"):
        raise ValueError(f"approx= has its own primal closed-form solver; use solver='auto' (got solver={solver!r})")
    names = set(ApproxKPLRegressor._get_param_names())
    params = {k: v for k, v in est.get_params(deep=False).items() if k in names}
    inner = ApproxKPLRegressor(**{**params, **overrides}).fit(X, Y, locations)
    est.approx_ = inner
    for name in _FITTED_COPIED:
        setattr(est, name, getattr(inner, name))
    est.coef_B_ = inner.coef_
    est.K_ = est.decomposition_ = est.nu_ = est.X_fit_ = est.X_weights_ = None
    return est
