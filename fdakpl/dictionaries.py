"""Dictionaries of functions on a one-dimensional domain.

A dictionary ``phi = (phi_1, ..., phi_d)`` maps coefficients ``u`` to the
function ``sum_l u_l phi_l`` (the projection operator of the paper). Every
dictionary here offers

* :meth:`Dictionary.evaluate` -- the ``(m, d)`` matrix ``phi_l(theta_p)`` at any
  locations inside its domain;
* :meth:`Dictionary.gram` -- the Gram matrix ``Phi^# Phi = (<phi_l, phi_l'>)``,
  exact where a closed form exists, exact for the piecewise-linear interpolant
  of grid-defined atoms, and Gauss--Legendre quadrature otherwise;
* ``scales_`` -- a per-atom scale (wavelet level, frequency,
  component rank) used by scale-dependent output matrices;
* :attr:`Dictionary.domain`.

Dictionaries that depend on data (FPCA, learnt, and wavelets whose resolution
follows the response grid) are set up by :meth:`Dictionary.fit`, which the
estimator calls with the training responses.
"""

from __future__ import annotations

import functools
import math
import warnings
from typing import Any

import numpy as np
import pywt
from scipy.interpolate import BSpline as _SciPyBSpline
from sklearn.base import BaseEstimator, clone

from .data.functional import Observations, interpolate_missing, quadrature_weights
from .notes import warn
from .progress import progress

__all__ = [
    "FPCA",
    "BSpline",
    "Dictionary",
    "Fourier",
    "Learned",
    "PiecewiseLinear",
    "RandomFourier",
    "Wavelet",
    "make_dictionary",
]

_DOMAIN_TOL = 1e-9


class Dictionary(BaseEstimator):
    """Base class of dictionaries (see the module docstring).

    Subclasses store their hyper-parameters in ``__init__`` and their fitted
    state in attributes ending with ``_``.

    Examples
    --------
    >>> d = Fourier(n_freqs=2).fit(domain=(0.0, 1.0))
    >>> d.n_atoms_, d.evaluate([0.0, 0.5]).shape
    (5, (2, 5))
    """

    #: whether :meth:`fit` uses the responses (FPCA, learnt dictionaries)
    data_dependent: bool = False
    domain: tuple[float, float] | None

    # -- to be provided by subclasses -------------------------------------
    def _setup(self, obs: Observations | None) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _evaluate(self, theta: np.ndarray) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def _gram(self) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    # -- public API -------------------------------------------------------
    def fit(self, obs: Observations | None = None, domain: tuple[float, float] | None = None) -> Dictionary:
        """Set the domain and any data-dependent atoms; returns ``self``.

        Parameters
        ----------
        obs : Observations, optional
            Training responses (required by data-dependent dictionaries).
        domain : (float, float), optional
            Domain of the functions; defaults to the dictionary's own
            ``domain`` argument, else to the range of the observed locations.
        """
        dom = self.domain if self.domain is not None else domain
        if dom is None:
            if obs is None:
                raise ValueError(f"{type(self).__name__} needs a domain: pass domain=(lo, hi)")
            grid = obs.grid if obs.grid is not None else obs.location
            dom = (float(np.min(grid)), float(np.max(grid)))
        lo, hi = float(dom[0]), float(dom[1])
        if not hi > lo:
            raise ValueError(f"domain must satisfy lo < hi, got ({lo}, {hi})")
        self.domain_ = (lo, hi)
        if self.data_dependent and obs is None:
            raise ValueError(f"{type(self).__name__} is fitted on the responses: pass obs")
        if obs is not None:
            self._check_inside(obs.location, "response locations")
        self._setup(obs)
        self._gram_cache = None
        return self

    @property
    def fitted(self) -> bool:
        return hasattr(self, "domain_")

    def _require_fitted(self) -> None:
        if not self.fitted:
            raise RuntimeError(f"{type(self).__name__} is not set up yet; call .fit(obs or domain=...)")

    def _check_inside(self, theta: np.ndarray, what: str = "locations") -> None:
        lo, hi = self.domain_
        tol = _DOMAIN_TOL * max(1.0, hi - lo)
        theta = np.asarray(theta, dtype=float)
        if theta.size and (theta.min() < lo - tol or theta.max() > hi + tol or not np.isfinite(theta).all()):
            raise ValueError(
                f"{what} span [{np.nanmin(theta):.6g}, {np.nanmax(theta):.6g}] but the dictionary's "
                f"domain is [{lo:.6g}, {hi:.6g}]; pass domain=(lo, hi) to the dictionary or rescale "
                "the location coordinate"
            )

    def evaluate(self, theta: Any) -> np.ndarray:
        """Atoms at locations ``theta``: array of shape ``(len(theta), n_atoms)``."""
        self._require_fitted()
        theta = np.atleast_1d(np.asarray(theta, dtype=float))
        self._check_inside(theta)
        lo, hi = self.domain_
        return self._evaluate(np.clip(theta, lo, hi))

    def gram(self) -> np.ndarray:
        """Gram matrix ``(<phi_l, phi_l'>_{L2})``, shape ``(n_atoms, n_atoms)``."""
        self._require_fitted()
        if getattr(self, "_gram_cache", None) is None:
            g = self._gram()
            self._gram_cache = 0.5 * (g + g.T)
        return self._gram_cache.copy()

    @property
    def n_atoms_(self) -> int:
        """Number of atoms ``d`` (after :meth:`fit`)."""
        self._require_fitted()
        return int(self.scales_.size)

    @property
    def orthonormal(self) -> bool:
        """Whether the Gram matrix is the identity (to 1e-10)."""
        g = self.gram()
        return bool(np.allclose(g, np.eye(g.shape[0]), atol=1e-10))

    def describe(self) -> str:
        """One-line description for summaries."""
        return repr(self).replace(", domain=None", "").replace(", progress=True", "").replace(
            ", progress=False", "")

    def __repr__(self) -> str:
        import inspect

        names = [p for p in inspect.signature(type(self).__init__).parameters if p != "self"]
        params = ", ".join(f"{k}={getattr(self, k)!r}" for k in names)
        return f"{type(self).__name__}({params})"

    def unfitted_copy(self) -> Dictionary:
        """A new, unfitted dictionary with the same parameters."""
        return clone(self)


# --------------------------------------------------------------------------
# closed-form dictionaries
# --------------------------------------------------------------------------


class Fourier(Dictionary):
    """Trigonometric basis, orthonormal in L2 of the domain.

    Atoms: ``1/sqrt(L)``, then ``sqrt(2/L) cos(2 pi k u)`` and
    ``sqrt(2/L) sin(2 pi k u)`` for ``k = 1 .. n_freqs`` with
    ``u = (theta - lo) / L``, ``L = hi - lo``; ``d = 2 n_freqs + 1``.
    Scale of an atom: its frequency ``k``. Gram matrix: the identity (exact).

    Parameters
    ----------
    n_freqs : int
        Number of frequencies.
    domain : (float, float), optional
        Domain; defaults to the range of the training locations.

    Examples
    --------
    >>> f = Fourier(3, domain=(0, 1)).fit()
    >>> f.n_atoms_, bool(f.orthonormal)
    (7, True)
    """

    def __init__(self, n_freqs: int = 10, domain: tuple[float, float] | None = None) -> None:
        self.n_freqs = n_freqs
        self.domain = domain

    def _setup(self, obs: Observations | None) -> None:
        if int(self.n_freqs) != self.n_freqs or self.n_freqs < 0:
            raise ValueError(f"n_freqs must be a non-negative integer, got {self.n_freqs!r}")
        k = np.arange(1, int(self.n_freqs) + 1)
        self.scales_ = np.concatenate([[0], np.repeat(k, 2)]).astype(int)

    def _evaluate(self, theta: np.ndarray) -> np.ndarray:
        lo, hi = self.domain_
        length = hi - lo
        u = (theta - lo) / length
        k = np.arange(1, int(self.n_freqs) + 1)
        arg = 2 * np.pi * np.outer(u, k)
        out = np.empty((theta.size, 2 * k.size + 1))
        out[:, 0] = 1.0 / math.sqrt(length)
        out[:, 1::2] = math.sqrt(2.0 / length) * np.cos(arg)
        out[:, 2::2] = math.sqrt(2.0 / length) * np.sin(arg)
        return out

    def _gram(self) -> np.ndarray:
        return np.eye(2 * int(self.n_freqs) + 1)


class RandomFourier(Dictionary):
    """Random Fourier features ``sqrt(2/L) cos(w_j theta + b_j)``.

    ``w_j ~ N(0, 1/length_scale^2)`` and ``b_j ~ U(0, 2 pi)``: the family
    associated with a Gaussian kernel of the given length scale on the
    locations (Rahimi & Recht, 2008). Gram matrix: exact closed form. Scale of
    an atom: the number of periods it makes over the domain.

    Parameters
    ----------
    n_features : int
    length_scale : float
        Length scale, in the units of the location coordinate.
    random_state : int or numpy.random.Generator, optional
    domain : (float, float), optional

    Examples
    --------
    >>> r = RandomFourier(20, length_scale=0.1, random_state=0, domain=(0, 1)).fit()
    >>> r.gram().shape
    (20, 20)
    """

    def __init__(self, n_features: int = 50, length_scale: float = 0.1, random_state: Any = None,
                 domain: tuple[float, float] | None = None) -> None:
        self.n_features = n_features
        self.length_scale = length_scale
        self.random_state = random_state
        self.domain = domain

    def _setup(self, obs: Observations | None) -> None:
        if self.length_scale <= 0:
            raise ValueError(f"length_scale must be > 0, got {self.length_scale}")
        rng = np.random.default_rng(self.random_state)
        self.omega_ = rng.normal(0.0, 1.0 / self.length_scale, size=int(self.n_features))
        self.phase_ = rng.uniform(0.0, 2 * np.pi, size=int(self.n_features))
        lo, hi = self.domain_
        self.scales_ = np.floor(np.abs(self.omega_) * (hi - lo) / (2 * np.pi)).astype(int)

    def _amp(self) -> float:
        lo, hi = self.domain_
        return math.sqrt(2.0 / (hi - lo))

    def _evaluate(self, theta: np.ndarray) -> np.ndarray:
        return self._amp() * np.cos(np.outer(theta, self.omega_) + self.phase_)

    def _gram(self) -> np.ndarray:
        lo, hi = self.domain_
        w, b = self.omega_, self.phase_

        def int_cos(c: np.ndarray, e: np.ndarray) -> np.ndarray:
            small = np.abs(c) < 1e-12
            cs = np.where(small, 1.0, c)
            val = (np.sin(cs * hi + e) - np.sin(cs * lo + e)) / cs
            return np.where(small, (hi - lo) * np.cos(e), val)

        dm = w[:, None] - w[None, :]
        dp = w[:, None] + w[None, :]
        em = b[:, None] - b[None, :]
        ep = b[:, None] + b[None, :]
        return self._amp() ** 2 * 0.5 * (int_cos(dm, em) + int_cos(dp, ep))


class BSpline(Dictionary):
    """B-spline basis with equally spaced, clamped knots.

    Gram matrix by Gauss--Legendre quadrature on each knot interval, exact
    for the piecewise polynomials. All atoms have scale 0.

    Parameters
    ----------
    n_basis : int
        Number of B-splines (``>= degree + 1``).
    degree : int
        Polynomial degree (3 = cubic).
    domain : (float, float), optional

    Examples
    --------
    >>> b = BSpline(8, domain=(0, 1)).fit()
    >>> np.allclose(b.evaluate(np.linspace(0, 1, 5)).sum(axis=1), 1.0)
    True
    """

    def __init__(self, n_basis: int = 20, degree: int = 3, domain: tuple[float, float] | None = None) -> None:
        self.n_basis = n_basis
        self.degree = degree
        self.domain = domain

    def _setup(self, obs: Observations | None) -> None:
        k, nb = int(self.degree), int(self.n_basis)
        if k < 0 or nb < k + 1:
            raise ValueError(f"BSpline needs n_basis >= degree + 1, got n_basis={nb}, degree={k}")
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


# --------------------------------------------------------------------------
# dictionaries defined by their values on a grid (piecewise-linear atoms)
# --------------------------------------------------------------------------


def _p1_gram(grid: np.ndarray, values: np.ndarray, domain: tuple[float, float]) -> np.ndarray:
    """Exact Gram matrix of the piecewise-linear interpolants of ``values``.

    The interpolants are constant beyond the ends of ``grid`` inside ``domain``.
    """
    h = np.diff(grid)
    v0, v1 = values[:-1], values[1:]
    g = (v0.T @ (h[:, None] * v0) + v1.T @ (h[:, None] * v1)) / 3.0
    cross = v0.T @ (h[:, None] * v1) / 6.0
    g += cross + cross.T
    left, right = grid[0] - domain[0], domain[1] - grid[-1]
    if left > 0:
        g += left * np.outer(values[0], values[0])
    if right > 0:
        g += right * np.outer(values[-1], values[-1])
    return g


def _p1_evaluate(grid: np.ndarray, values: np.ndarray, theta: np.ndarray) -> np.ndarray:
    if grid.size == 1:
        return np.repeat(values, theta.size, axis=0)
    t = np.clip(theta, grid[0], grid[-1])
    idx = np.clip(np.searchsorted(grid, t, side="right") - 1, 0, grid.size - 2)
    w = ((t - grid[idx]) / (grid[idx + 1] - grid[idx]))[:, None]
    return values[idx] * (1.0 - w) + values[idx + 1] * w


class _GridDictionary(Dictionary):
    """Atoms given by their values on a grid, interpolated linearly."""

    def _evaluate(self, theta: np.ndarray) -> np.ndarray:
        return _p1_evaluate(self.grid_, self.values_, theta)

    def _gram(self) -> np.ndarray:
        return _p1_gram(self.grid_, self.values_, self.domain_)


class PiecewiseLinear(_GridDictionary):
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


class Wavelet(_GridDictionary):
    """Discrete wavelet dictionary from PyWavelets.

    The atoms are the inverse discrete wavelet transforms (``pywt.waverec``)
    of the unit coefficient vectors on a uniform grid of ``resolution`` points
    spanning the domain, with PyWavelets' signal extension ``mode``
    (``"symmetric"`` by default, against boundary effects, as in the paper's
    DTI experiment), linearly interpolated between grid points. With a
    boundary extension the family is redundant (``d > resolution``), so its
    Gram matrix is singular; KPL's closed forms handle that.

    Atoms are scaled by ``sqrt(resolution / L)``, so that the DWT's unit-norm
    vectors become functions of unit L2 norm (approximately; the exact Gram
    is reported). Hence for a signal ``s`` on the grid with
    ``c = pywt.wavedec(s, ...)``, ``evaluate(grid) @ c_flat / sqrt(resolution / L)``
    equals ``pywt.waverec(c, ...)``.

    Scale of an atom: 0 for the approximation coefficients, then ``1`` for the
    coarsest detail level up to ``level`` for the finest.

    Parameters
    ----------
    wavelet : str
        Any discrete wavelet name known to PyWavelets (``"db2"``, ``"db3"``,
        ``"sym4"``, ``"haar"``, ...).
    level : int
        Number of decomposition levels (dilations).
    mode : str
        PyWavelets signal extension mode.
    resolution : int, optional
        Number of grid points; defaults to the size of the training response
        grid, or 64 for irregularly sampled responses.
    domain : (float, float), optional

    Examples
    --------
    >>> w = Wavelet("db2", level=3, resolution=32, domain=(0, 1)).fit()
    >>> w.n_atoms_ > 32, sorted(set(w.scales_.tolist()))
    (True, [0, 1, 2, 3])
    """

    def __init__(self, wavelet: str = "db3", level: int = 4, mode: str = "symmetric",
                 resolution: int | None = None, domain: tuple[float, float] | None = None) -> None:
        self.wavelet = wavelet
        self.level = level
        self.mode = mode
        self.resolution = resolution
        self.domain = domain

    def _setup(self, obs: Observations | None) -> None:
        if self.wavelet not in pywt.wavelist(kind="discrete"):
            raise ValueError(f"unknown discrete wavelet {self.wavelet!r}; see pywt.wavelist(kind='discrete')")
        if self.mode not in pywt.Modes.modes:
            raise ValueError(f"unknown extension mode {self.mode!r}; one of {pywt.Modes.modes}")
        level = int(self.level)
        if level < 1:
            raise ValueError(f"level must be >= 1, got {self.level}")
        n = self.resolution
        if n is None:
            n = obs.grid.size if (obs is not None and obs.grid is not None) else 64
        n = int(n)
        if n < 2:
            raise ValueError(f"resolution must be >= 2, got {n}")
        lo, hi = self.domain_
        atoms, slices, lengths = _wavelet_atoms(self.wavelet, level, self.mode, n)
        self.pywt_scale_ = math.sqrt(n / (hi - lo))
        self.grid_ = np.linspace(lo, hi, n)
        self.values_ = atoms * self.pywt_scale_
        self.coeff_slices_ = slices
        self.scales_ = np.concatenate([np.full(k, j) for j, k in enumerate(lengths)]).astype(int)
        self.max_level_ = pywt.dwt_max_level(n, pywt.Wavelet(self.wavelet).dec_len)


@functools.lru_cache(maxsize=64)
def _wavelet_atoms(wavelet: str, level: int, mode: str, n: int) -> tuple[np.ndarray, Any, tuple[int, ...]]:
    """Inverse DWTs of the unit coefficient vectors (cached: they depend only on the arguments)."""
    # pywt.wavedec's loop of dwt, without its warning when level > dwt_max_level (silencing it would need a
    # global warning filter, which is not thread-safe)
    coeffs, approx = [], np.zeros(n)
    for _ in range(level):
        approx, detail = pywt.dwt(approx, wavelet, mode=mode)
        coeffs.append(detail)
    coeffs = [approx, *coeffs[::-1]]
    flat, slices = pywt.coeffs_to_array(coeffs)
    atoms = np.empty((n, flat.size))
    unit = np.zeros(flat.size)
    for j in range(flat.size):
        unit[j] = 1.0
        c = pywt.array_to_coeffs(unit, slices, output_format="wavedec")
        atoms[:, j] = pywt.waverec(c, wavelet, mode=mode)[:n]
        unit[j] = 0.0
    atoms.flags.writeable = False
    return atoms, slices, tuple(len(c) for c in coeffs)


class FPCA(_GridDictionary):
    """Functional principal components of the (centred) training responses.

    The covariance is estimated on the response grid from pairwise-complete
    observations (partially observed curves contribute where they are
    observed); eigenfunctions are orthonormal for the grid's trapezoidal
    quadrature and interpolated linearly elsewhere. Irregularly sampled
    responses are first interpolated on a uniform grid of 64 points inside
    each curve's observed range. Scale of an atom: its rank (0 = leading).

    Parameters
    ----------
    n_components : int
    domain : (float, float), optional

    Attributes
    ----------
    explained_variance_ : numpy.ndarray
        Eigenvalues of the covariance operator.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> grid = np.linspace(0, 1, 30)
    >>> Y = rng.normal(size=(40, 1)) * np.sin(2 * np.pi * grid) + 0.01 * rng.normal(size=(40, 30))
    >>> d = FPCA(2).fit(Observations.from_dense(Y, grid))
    >>> float(abs(d.gram()[0, 0] - 1.0)) < 0.05
    True
    """

    data_dependent = True

    def __init__(self, n_components: int = 10, domain: tuple[float, float] | None = None) -> None:
        self.n_components = n_components
        self.domain = domain

    def _setup(self, obs: Observations | None) -> None:
        assert obs is not None
        grid, Y = _dense_on_grid(obs, self.domain_)
        ok = ~np.isnan(Y)
        Yc = np.where(ok, Y - np.nanmean(Y, axis=0), 0.0)
        counts = ok.T.astype(float) @ ok.astype(float)
        cov = (Yc.T @ Yc) / np.maximum(counts - 1.0, 1.0)
        w = quadrature_weights(grid, self.domain_)
        sw = np.sqrt(w)
        evals, evecs = np.linalg.eigh(sw[:, None] * cov * sw[None, :])
        order = np.argsort(evals)[::-1]
        k = int(self.n_components)
        if k < 1:
            raise ValueError(f"n_components must be >= 1, got {self.n_components}")
        pos = int(np.sum(evals > 1e-12 * max(evals.max(), 1e-300)))
        if k > pos:
            warn(f"FPCA: only {pos} positive eigenvalues; keeping {pos} of {k} components",
                          stacklevel=3)
            k = pos
        order = order[:k]
        self.explained_variance_ = evals[order]
        vecs = evecs[:, order] / sw[:, None]
        signs = np.sign(vecs[np.argmax(np.abs(vecs), axis=0), np.arange(k)])
        self.grid_ = grid
        self.values_ = vecs * signs
        self.scales_ = np.arange(k)


class Learned(_GridDictionary):
    """Dictionary learnt from the training responses (sparse coding).

    Solves the paper's dictionary-learning problem on the response grid::

        min_{phi, beta} 1/n sum_i ||y_i - Phi beta_i||^2_{L2} + tau ||beta_i||_1,
        subject to ||phi_l||_{L2} <= 1,

    by alternating optimisation: the codes by the lasso (scikit-learn's
    ``sparse_encode``, coordinate descent) and the atoms by block coordinate
    descent with projection onto the unit L2 ball (Mairal et al., 2009). L2
    norms use the grid's trapezoidal weights. Partially observed curves are
    completed by linear interpolation along the grid before learning (stated
    in the summary). All atoms have scale 0.

    Parameters
    ----------
    n_atoms : int
    tau : float
        Weight of the l1 penalty on the codes.
    max_iter : int
        Maximum number of alternations.
    tol : float
        Stop when the relative decrease of the objective falls below ``tol``.
    random_state : int, optional
        Seed of the initial atoms (random training curves).
    progress : bool
        Show a progress bar.
    domain : (float, float), optional

    Attributes
    ----------
    objective_ : list of float
        Objective after each alternation.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> grid = np.linspace(0, 1, 40)
    >>> Y = rng.normal(size=(30, 3)) @ np.vstack([np.sin(k * np.pi * grid) for k in (1, 2, 3)])
    >>> d = Learned(3, tau=0.01, random_state=0, progress=False).fit(Observations.from_dense(Y, grid))
    >>> bool(np.all(np.diag(d.gram()) <= 1 + 1e-9))
    True
    """

    data_dependent = True

    def __init__(self, n_atoms: int = 20, tau: float = 0.1, max_iter: int = 100, tol: float = 1e-6,
                 random_state: Any = 0, progress: bool = True, domain: tuple[float, float] | None = None) -> None:
        self.n_atoms = n_atoms
        self.tau = tau
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state
        self.progress = progress
        self.domain = domain

    def _setup(self, obs: Observations | None) -> None:
        from sklearn.decomposition import sparse_encode
        from sklearn.exceptions import ConvergenceWarning

        assert obs is not None
        grid, Y = _dense_on_grid(obs, self.domain_)
        rows = ~np.all(np.isnan(Y), axis=1)
        Y = interpolate_missing(Y[rows], grid, "response")
        k = int(self.n_atoms)
        if k < 1:
            raise ValueError(f"n_atoms must be >= 1, got {self.n_atoms}")
        if self.tau <= 0:
            raise ValueError(f"tau must be > 0, got {self.tau}")
        sw = np.sqrt(quadrature_weights(grid, self.domain_))
        X = Y * sw  # discrete l2 norm of a row == L2 norm of the curve
        n = X.shape[0]
        rng = np.random.default_rng(self.random_state)
        D = X[rng.choice(n, size=k, replace=n < k)] + 1e-3 * rng.normal(size=(k, X.shape[1]))
        D /= np.maximum(np.linalg.norm(D, axis=1, keepdims=True), 1e-12)
        self.objective_: list[float] = []
        # sklearn's lasso minimises 1/2 ||x - u D||^2 + alpha ||u||_1 per row; ours is
        # ||x - u D||^2 + tau ||u||_1, hence alpha = tau / 2.
        alpha = self.tau / 2.0
        bar = progress(range(int(self.max_iter)), desc="dictionary learning", enabled=self.progress)
        prev = np.inf
        U = None
        for _ in bar:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)  # warm-started; the outer loop iterates
                U = sparse_encode(X, D, algorithm="lasso_cd", alpha=alpha, max_iter=5000, init=U)
            A = U.T @ U
            Bm = U.T @ X
            for j in range(k):
                if A[j, j] < 1e-12:  # unused atom: re-seed on the worst-fitted curve
                    resid = np.linalg.norm(X - U @ D, axis=1)
                    D[j] = X[np.argmax(resid)] / max(resid.max(), 1e-12)
                    continue
                D[j] += (Bm[j] - A[j] @ D) / A[j, j]
                D[j] /= max(1.0, np.linalg.norm(D[j]))
            obj = float((np.sum((X - U @ D) ** 2) + self.tau * np.abs(U).sum()) / n)
            self.objective_.append(obj)
            if prev - obj <= self.tol * max(abs(obj), 1e-300):
                break
            prev = obj
        self.grid_ = grid
        self.values_ = (D / sw).T
        self.scales_ = np.zeros(k, dtype=int)


def _dense_on_grid(obs: Observations, domain: tuple[float, float]) -> tuple[np.ndarray, np.ndarray]:
    """Responses as a dense (n, m) array with NaN, interpolating irregular curves."""
    if obs.grid is not None and obs.grid_index is not None:
        return obs.grid, obs.to_dense()
    grid = np.linspace(domain[0], domain[1], 64)
    out = np.full((obs.n_samples, grid.size), np.nan)
    starts = np.searchsorted(obs.index, np.arange(obs.n_samples + 1))
    for i in range(obs.n_samples):
        loc, val = obs.location[starts[i]:starts[i + 1]], obs.value[starts[i]:starts[i + 1]]
        if loc.size == 0:
            continue
        inside = (grid >= loc.min()) & (grid <= loc.max())
        out[i, inside] = np.interp(grid[inside], loc, val)
    return grid, out


_FAMILIES: dict[str, type[Dictionary]] = {
    "fourier": Fourier,
    "bspline": BSpline,
    "rff": RandomFourier,
    "random_fourier": RandomFourier,
    "fpca": FPCA,
    "piecewise_linear": PiecewiseLinear,
    "hat": PiecewiseLinear,
    "learned": Learned,
    "learnt": Learned,
}


def make_dictionary(spec: str | Dictionary, **kwargs: Any) -> Dictionary:
    """Build a dictionary from a name such as ``"db3"``, ``"fourier"`` or ``"fpca"``.

    Parameters
    ----------
    spec : str or Dictionary
        A family name (``"fourier"``, ``"bspline"``, ``"rff"``, ``"fpca"``,
        ``"learned"``) or any PyWavelets discrete wavelet name (``"db3"``,
        ``"sym4"``, ...). A :class:`Dictionary` is returned unfitted-copied.
    **kwargs
        Arguments of the family's constructor (``levels`` is accepted as an
        alias of ``level`` for wavelets).

    Returns
    -------
    Dictionary

    Examples
    --------
    >>> make_dictionary("db3", levels=4)
    Wavelet(wavelet='db3', level=4, mode='symmetric', resolution=None, domain=None)
    """
    if isinstance(spec, Dictionary):
        if kwargs:
            raise ValueError("pass dictionary options to the dictionary's constructor, not alongside it")
        return spec.unfitted_copy()
    if not isinstance(spec, str):
        raise TypeError(f"dictionary must be a name or a Dictionary, got {type(spec).__name__}")
    key = spec.lower()
    if "levels" in kwargs:
        kwargs["level"] = kwargs.pop("levels")
    if key in _FAMILIES:
        return _FAMILIES[key](**kwargs)
    if key in pywt.wavelist(kind="discrete"):
        return Wavelet(key, **kwargs)
    raise ValueError(
        f"unknown dictionary {spec!r}; use one of {sorted(_FAMILIES)} or a PyWavelets discrete "
        "wavelet name such as 'db3'"
    )
