"""Simulated linear function-on-function data with a known smooth coefficient surface.

``y_i(t) = mu(t) + int x_i(s) beta(s, t) ds + eps_i(t)`` with rough,
Brownian-like input curves ``x_i`` (a Brownian motion on ``[0, 1]`` plus a
random smooth mean), a smooth ``beta`` and white noise, as in the simulations
of refund's ``pffr`` (Ivanescu et al. 2015). The integral is computed on a
fine grid (10 times finer than the observed input grid), so that a method
using the coarse grid's quadrature does not get the truth for free.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import xarray as xr

from ..data.functional import SAMPLE, quadrature_weights

__all__ = ["make_linear_surface", "true_surface"]


def true_surface(s: Any, t: Any) -> np.ndarray:
    """The smooth coefficient surface ``beta(s, t) = cos(2 pi s) sin(pi t) + (s - 1/2)(t + 1)``.

    Examples
    --------
    >>> true_surface([0.0, 0.5], [0.5]).round(3)
    array([[ 0.25],
           [-1.  ]])
    """
    s = np.asarray(s, dtype=float)[:, None]
    t = np.asarray(t, dtype=float)[None, :]
    return np.cos(2 * np.pi * s) * np.sin(np.pi * t) + (s - 0.5) * (t + 1.0)


def make_linear_surface(n: int = 100, m_in: int = 40, m_out: int = 30, noise: float = 0.1, *, fine: int = 10,
                        random_state: Any = 0) -> tuple[xr.Dataset, xr.DataArray]:
    """Simulate ``n`` curves of the linear model with :func:`true_surface`.

    Parameters
    ----------
    n : int
        Number of curves.
    m_in, m_out : int
        Grid sizes of the input ``x`` (dim ``s``) and the response ``y`` (dim ``t``) on ``[0, 1]``.
    noise : float
        Standard deviation of the white noise, relative to the standard deviation of the signal
        ``int x beta`` over curves and locations.
    fine : int
        The integral uses an input grid ``fine`` times finer (Brownian bridge interpolation).
    random_state : int, numpy.random.Generator or None, default 0
        Seed of the curves and noise; the default 0 gives the same result on every run, ``None``
        draws fresh randomness.

    Returns
    -------
    data : xarray.Dataset
        ``x (sample, s)``, ``y (sample, t)``.
    beta : xarray.DataArray
        The true surface on ``(s, t)``.

    Examples
    --------
    >>> ds, beta = make_linear_surface(20, random_state=0)
    >>> ds["x"].dims, ds["y"].dims, beta.dims
    (('sample', 's'), ('sample', 't'), ('s', 't'))
    """
    rng = np.random.default_rng(random_state)
    M = (m_in - 1) * fine + 1
    sf = np.linspace(0.0, 1.0, M)
    steps = rng.normal(scale=np.sqrt(1.0 / (M - 1)), size=(n, M - 1))
    bm = np.concatenate([np.zeros((n, 1)), np.cumsum(steps, axis=1)], axis=1)
    smooth = (rng.normal(size=(n, 1)) * np.sin(np.pi * sf) + rng.normal(size=(n, 1)) * np.cos(np.pi * sf)
              + rng.normal(size=(n, 1)))
    xf = bm + smooth
    t = np.linspace(0.0, 1.0, m_out)
    signal = (xf * quadrature_weights(sf)) @ true_surface(sf, t)
    mu = 0.5 * np.sin(2 * np.pi * t)
    y = mu + signal + noise * signal.std() * rng.normal(size=signal.shape)
    s = sf[::fine]
    ds = xr.Dataset({"x": ((SAMPLE, "s"), xf[:, ::fine]), "y": ((SAMPLE, "t"), y)},
                    coords={SAMPLE: np.arange(n), "s": s, "t": t})
    beta = xr.DataArray(true_surface(s, t), dims=("s", "t"), coords={"s": s, "t": t}, name="beta")
    return ds, beta
