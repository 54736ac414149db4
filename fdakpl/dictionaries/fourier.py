"""Fourier and random Fourier dictionaries (closed-form Gram matrices)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..data.functional import Observations
from ..utils.saved import saved
from .base import Dictionary

__all__ = ["Fourier", "RandomFourier"]


@saved("n_freqs")
class Fourier(Dictionary):
    """Trigonometric basis, orthonormal in L2 of the domain.

    Atoms: ``1/sqrt(L)``, then ``sqrt(2/L) cos(2 pi k u)`` and
    ``sqrt(2/L) sin(2 pi k u)`` for ``k = 1 .. n_freqs`` with
    ``u = (theta - lo) / L``, ``L = hi - lo``; ``d = 2 n_freqs + 1``.
    Scale of an atom: its frequency ``k``. Gram matrix: the identity (exact).

    Parameters
    ----------
    n_freqs : int
        Number of frequencies ``K``; the dictionary has ``2 K + 1`` atoms (the constant, then a
        cosine and a sine per frequency). The one size parameter of fdakpl's dictionaries that is
        not ``n_atoms``, because it counts frequencies, not atoms.
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

    def _setup_key(self, obs: Observations | None) -> Any:
        return ()  # parameters and domain only

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


@saved("n_atoms", "length_scale", "random_state", "omega_", "phase_")
class RandomFourier(Dictionary):
    """Random Fourier features ``sqrt(2/L) cos(w_j theta + b_j)``.

    ``w_j ~ N(0, 1/length_scale^2)`` and ``b_j ~ U(0, 2 pi)``: the family
    associated with a Gaussian kernel of the given length scale on the
    locations (Rahimi & Recht, 2008). Gram matrix: exact closed form. Scale of
    an atom: the number of periods it makes over the domain.

    Parameters
    ----------
    n_atoms : int
        Number of random features, the atoms.
    length_scale : float
        Length scale, in the units of the location coordinate.
    random_state : int, numpy.random.Generator or None, default 0
        Seed of the frequencies and phases; the default 0 gives the same atoms on every run,
        ``None`` draws fresh randomness.
    domain : (float, float), optional

    Examples
    --------
    >>> r = RandomFourier(20, length_scale=0.1, random_state=0, domain=(0, 1)).fit()
    >>> r.gram().shape
    (20, 20)
    """

    def __init__(self, n_atoms: int = 50, length_scale: float = 0.1, random_state: Any = 0,
                 domain: tuple[float, float] | None = None) -> None:
        self.n_atoms = n_atoms
        self.length_scale = length_scale
        self.random_state = random_state
        self.domain = domain

    def _setup(self, obs: Observations | None) -> None:
        if self.length_scale <= 0:
            raise ValueError(f"length_scale must be > 0, got {self.length_scale}")
        rng = np.random.default_rng(self.random_state)
        self.omega_ = rng.normal(0.0, 1.0 / self.length_scale, size=int(self.n_atoms))
        self.phase_ = rng.uniform(0.0, 2 * np.pi, size=int(self.n_atoms))
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
