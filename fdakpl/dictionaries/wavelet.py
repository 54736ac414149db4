"""Discrete wavelet dictionaries from PyWavelets."""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np
import pywt

from ..data.functional import Observations
from ..utils.saved import saved
from .base import GridDictionary

__all__ = ["Wavelet", "discrete_wavelets"]


@saved("wavelet", "level", "mode", "resolution", "coeff_slices_", "max_level_", "pywt_scale_")
class Wavelet(GridDictionary):
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

    def _setup_key(self, obs: Observations | None) -> Any:
        if self.resolution is not None:
            return ()
        return obs.grid.size if (obs is not None and obs.grid is not None) else 64

    def _setup(self, obs: Observations | None) -> None:
        if self.wavelet not in discrete_wavelets():
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


@functools.lru_cache(maxsize=1)
def discrete_wavelets() -> frozenset[str]:
    """``pywt.wavelist(kind="discrete")``, built once."""
    return frozenset(pywt.wavelist(kind="discrete"))


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
