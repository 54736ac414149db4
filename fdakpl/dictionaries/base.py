"""The dictionary base class, atoms given on a grid (piecewise-linear interpolants), shared helpers."""

from __future__ import annotations

import functools
from collections import OrderedDict
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, clone

from ..data.functional import Observations
from ..utils.saved import saved

__all__ = ["DOMAIN_TOL", "Dictionary", "GridDictionary", "dense_on_grid", "p1_evaluate", "p1_gram"]

DOMAIN_TOL = 1e-9

#: fitted states of dictionaries that do not depend on the data, by (class, parameters, domain, setup key);
#: a fit of an equal dictionary (a clone, the next fold, the next refit) reuses atoms, Gram and its
#: eigendecompositions instead of rebuilding them
_STATES: OrderedDict[Any, dict[str, Any]] = OrderedDict()
_STATES_MAX = 64
#: what is derived from a fitted state (eigendecompositions of ``B^1/2 G B^1/2`` by ``B^1/2``, atoms at given
#: locations), by ``id`` of the state's Gram matrix (held, so the id stays valid): kept off the instances, whose
#: attributes are what ``save()`` stores
_DERIVED: OrderedDict[int, tuple[np.ndarray, OrderedDict[Any, Any]]] = OrderedDict()
_DERIVED_MAX = 16
#: atoms at given locations are kept for reuse up to this many values (2 MiB) per evaluation
_EVAL_CACHE_VALUES = 2**18


@functools.cache
def _param_names(cls: type) -> list[str]:
    return BaseEstimator._get_param_names.__func__(cls)  # type: ignore[attr-defined]


@functools.cache
def _signature_names(cls: type) -> tuple[str, ...]:
    import inspect

    return tuple(p for p in inspect.signature(cls.__init__).parameters if p != "self")


@saved("domain", "domain_", "scales_", register=False)
class Dictionary(BaseEstimator):
    """Base class of dictionaries (see the module docstring).

    Subclasses store their hyper-parameters in ``__init__`` and their fitted
    state in attributes ending with ``_``.

    Examples
    --------
    >>> from fdakpl.dictionaries import Fourier
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

    def _setup_key(self, obs: Observations | None) -> Any:
        """What, besides the parameters and the domain, :meth:`_setup` reads from ``obs`` (hashable), or
        None when the fitted state must not be reused (data-dependent or unknown: the default)."""
        return None

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
        on_grid = obs is not None and obs.grid is not None and obs.grid_index is not None
        if obs is not None and not (on_grid and self._inside(obs.grid)):  # points on a grid inside the domain
            self._check_inside(obs.location, "response locations")
        key = None if self.data_dependent else self._setup_key(obs)
        if key is not None:
            key = (type(self), repr(self), self.domain_, key)
            state = _STATES.get(key)
            if state is not None:
                _STATES.move_to_end(key)
                self.__dict__.update(state)
                return self
        self._setup(obs)
        self._gram_cache = None
        if key is not None:
            self.gram()  # computed once per state
            params = set(self._get_param_names())
            _STATES[key] = {k: v for k, v in vars(self).items() if k not in params}
            if len(_STATES) > _STATES_MAX:
                _STATES.popitem(last=False)
        return self

    @property
    def fitted(self) -> bool:
        return hasattr(self, "domain_")

    def _require_fitted(self) -> None:
        if not self.fitted:
            raise RuntimeError(f"{type(self).__name__} is not set up yet; call .fit(obs or domain=...)")

    def _inside(self, theta: np.ndarray) -> bool:
        lo, hi = self.domain_
        tol = DOMAIN_TOL * max(1.0, hi - lo)
        theta = np.asarray(theta, dtype=float)
        return not (theta.size and (theta.min() < lo - tol or theta.max() > hi + tol or not np.isfinite(theta).all()))

    def _check_inside(self, theta: np.ndarray, what: str = "locations") -> None:
        if not self._inside(theta):
            lo, hi = self.domain_
            raise ValueError(
                f"{what} span [{np.nanmin(theta):.6g}, {np.nanmax(theta):.6g}] but the dictionary's "
                f"domain is [{lo:.6g}, {hi:.6g}]; pass domain=(lo, hi) to the dictionary or rescale "
                "the location coordinate"
            )

    def evaluate(self, theta: Any) -> np.ndarray:
        """Atoms at locations ``theta``: array of shape ``(len(theta), n_atoms)``.

        For a dictionary that does not depend on the data the result is kept for reuse (read-only).
        """
        self._require_fitted()
        theta = np.atleast_1d(np.asarray(theta, dtype=float))
        reuse = (not self.data_dependent and theta.ndim == 1
                 and theta.size * self.scales_.size <= _EVAL_CACHE_VALUES)
        if reuse:  # the atoms at the training grid serve the fit and every prediction
            cache = self._derived()
            key = ("evaluate", theta.tobytes())
            hit = cache.get(key)
            if hit is not None:
                cache.move_to_end(key)
                return hit
        self._check_inside(theta)
        lo, hi = self.domain_
        out = self._evaluate(np.clip(theta, lo, hi))
        if reuse:
            out.flags.writeable = False
            cache[key] = out
            if len(cache) > _DERIVED_MAX:
                cache.popitem(last=False)
        return out

    def gram(self) -> np.ndarray:
        """Gram matrix ``(<phi_l, phi_l'>_{L2})``, shape ``(n_atoms, n_atoms)``."""
        self._require_fitted()
        if getattr(self, "_gram_cache", None) is None:
            g = self._gram()
            self._gram_cache = 0.5 * (g + g.T)
        return self._gram_cache.copy()

    def scaled_gram_eigh(self, b_half: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Eigenvalues (ascending) and eigenvectors of ``B^{1/2} G B^{1/2}`` (of ``G`` when ``b_half`` is None).

        Cached on the dictionary (and shared by its equal copies when the dictionary does not depend on the
        data), so that a refit, a fold or a lambda path reuses it. The result is read-only.

        Examples
        --------
        >>> from fdakpl.dictionaries import Fourier
        >>> e, V = Fourier(1).fit(domain=(0.0, 1.0)).scaled_gram_eigh(np.diag([1.0, 2.0, 2.0]))
        >>> np.round(e, 8)
        array([1., 4., 4.])
        """
        self._require_fitted()
        cache = self._derived()
        key = ("eigh", b"" if b_half is None else np.ascontiguousarray(b_half, dtype=float).tobytes())
        hit = cache.get(key)
        if hit is not None:
            cache.move_to_end(key)
            return hit
        g = self._gram_cache
        if b_half is None:
            C = g
        else:
            bh = np.asarray(b_half, dtype=float)
            C = bh[:, None] * g * bh[None, :] if bh.ndim == 1 else bh @ g @ bh
        e, V = np.linalg.eigh(0.5 * (C + C.T))
        e.flags.writeable = False
        V.flags.writeable = False
        cache[key] = (e, V)
        if len(cache) > _DERIVED_MAX:
            cache.popitem(last=False)
        return e, V

    def _derived(self) -> OrderedDict[Any, Any]:
        """The cache of what is derived from this fitted state (shared by equal copies)."""
        if getattr(self, "_gram_cache", None) is None:
            self.gram()
        g = self._gram_cache
        entry = _DERIVED.get(id(g))
        if entry is None or entry[0] is not g:
            entry = _DERIVED[id(g)] = (g, OrderedDict())
            if len(_DERIVED) > _STATES_MAX:
                _DERIVED.popitem(last=False)
        else:
            _DERIVED.move_to_end(id(g))
        return entry[1]

    @classmethod
    def _get_param_names(cls) -> list[str]:
        return _param_names(cls)  # inspect.signature once per class (clone, repr, get_params)

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
        text = repr(self).replace(", domain=None", "")
        for flag in ("None", "True", "False"):
            text = text.replace(f", progress={flag}", "")
        return text

    def __repr__(self) -> str:
        names = _signature_names(type(self))
        params = ", ".join(f"{k}={getattr(self, k)!r}" for k in names)
        return f"{type(self).__name__}({params})"

    def unfitted_copy(self) -> Dictionary:
        """A new, unfitted dictionary with the same parameters."""
        params = {k: getattr(self, k) for k in self._get_param_names()}
        if all(_immutable(v) for v in params.values()):  # what clone gives, without its checks (once per fit)
            return type(self)(**params)
        return clone(self)


def _immutable(value: Any) -> bool:
    if isinstance(value, tuple):
        return all(_immutable(v) for v in value)
    return value is None or isinstance(value, (str, bool, int, float, np.integer, np.floating))


def p1_gram(grid: np.ndarray, values: np.ndarray, domain: tuple[float, float]) -> np.ndarray:
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


def p1_evaluate(grid: np.ndarray, values: np.ndarray, theta: np.ndarray) -> np.ndarray:
    if grid.size == 1:
        return np.repeat(values, theta.size, axis=0)
    t = np.clip(theta, grid[0], grid[-1])
    idx = np.clip(np.searchsorted(grid, t, side="right") - 1, 0, grid.size - 2)
    w = ((t - grid[idx]) / (grid[idx + 1] - grid[idx]))[:, None]
    return values[idx] * (1.0 - w) + values[idx + 1] * w


@saved("grid_", "values_", register=False)
class GridDictionary(Dictionary):
    """Atoms given by their values on a grid, interpolated linearly."""

    def _evaluate(self, theta: np.ndarray) -> np.ndarray:
        return p1_evaluate(self.grid_, self.values_, theta)

    def _gram(self) -> np.ndarray:
        return p1_gram(self.grid_, self.values_, self.domain_)


def dense_on_grid(obs: Observations, domain: tuple[float, float]) -> tuple[np.ndarray, np.ndarray]:
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
