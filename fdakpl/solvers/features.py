"""Explicit feature maps ``z(x)`` with ``k(x, x') ~ z(x)^T z(x')``: Nyström and random Fourier features
(see :mod:`fdakpl.estimators.approx` for the approximate KPL they serve)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from ..kernels import Gaussian, Kernel, Product
from ..utils.saved import saved

__all__ = ["FeatureMap", "FlatLayout", "Nystroem", "RandomFourierFeatures", "as_generator", "check_n_components"]


# --------------------------------------------------------------------------
# inputs as flat vectors (k-means geometry, random features)
# --------------------------------------------------------------------------


@saved("names", "shapes", "scales")
@dataclass(frozen=True)
class FlatLayout:
    """How (possibly named, possibly curve) inputs map to flat scaled vectors and back."""

    names: tuple[str, ...] | None
    shapes: tuple[tuple[int, ...], ...]
    scales: tuple[np.ndarray, ...]  # per term, flat, multiplies the flattened input

    @classmethod
    def of(cls, Xv: Any, Xw: Any, sigmas: Any = None) -> FlatLayout:
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


def as_generator(random_state: Any) -> np.random.Generator:
    return random_state if isinstance(random_state, np.random.Generator) else np.random.default_rng(random_state)


def check_n_components(value: Any, who: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{who}: n_components must be an integer >= 1, got {value!r}")
    return int(value)


# --------------------------------------------------------------------------
# feature maps
# --------------------------------------------------------------------------


class FeatureMap(BaseEstimator):
    """Base class of approximate feature maps ``z`` with ``k(x, x') ~ z(x)^T z(x')``."""

    def fit(self, kernel: Kernel, take: Any, n: int) -> FeatureMap:  # pragma: no cover - abstract
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


@saved("n_components", "landmarks", "kmeans_sample", "rcond", "random_state", "kernel_", "landmarks_",
       "normalization_", "weights_")
class Nystroem(FeatureMap):
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
    random_state : int, numpy.random.Generator or None, default 0
        Seed of the landmarks; the default 0 gives the same result on every run, ``None`` draws
        fresh randomness.

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
        r = check_n_components(self.n_components, "Nystroem")
        if not isinstance(kernel, Kernel):
            raise TypeError(f"Nystroem needs a fdakpl.kernels.Kernel, got {type(kernel).__name__}")
        if self.landmarks not in {"uniform", "kmeans"}:
            raise ValueError(f"Nystroem: landmarks must be 'uniform' or 'kmeans', got {self.landmarks!r}")
        if r > n:
            raise ValueError(f"Nystroem: n_components={r} exceeds the number of training curves n={n}; "
                             f"use at most n landmarks (n_components <= {n})")
        if not (np.isfinite(self.rcond) and 0 <= self.rcond < 1):
            raise ValueError(f"Nystroem: rcond must be in [0, 1), got {self.rcond}")
        rng = as_generator(self.random_state)
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
            layout = FlatLayout.of(Xs, w)
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


@saved("n_components", "random_state", "layout_", "omega_", "offset_")
class RandomFourierFeatures(FeatureMap):
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
    random_state : int, numpy.random.Generator or None, default 0
        Seed of the frequencies and phases; the default 0 gives the same result on every run,
        ``None`` draws fresh randomness.

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
        r = check_n_components(self.n_components, "RandomFourierFeatures")
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
        self.layout_ = FlatLayout.of(X0, w, sigmas)
        D = sum(sc.size for sc in self.layout_.scales)
        rng = as_generator(self.random_state)
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
