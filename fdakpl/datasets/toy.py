"""The paper's toy data (B-spline mixtures to Gaussian-process mixtures) and its four corruptions.

:func:`make_toy` follows the supplement's "Toy dataset -- Generating process";
:func:`corrupt` applies the corruptions of the paper's Figure 1 (local
outliers, label noise, missing observations, local noise) to the response;
:func:`signal_to_noise` is the paper's SNR.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np
import xarray as xr
from scipy.interpolate import BSpline

from ..data.functional import SAMPLE, location_dim, validate_functional
from ..data.validation import check_number

__all__ = ["CORRUPTIONS", "corrupt", "make_toy", "noise_for_snr", "signal_to_noise"]

#: corruption kinds understood by :func:`corrupt`
CORRUPTIONS = ("local_outliers", "label_noise", "missing", "noise")


def _centered_cubic_bspline(z: np.ndarray) -> np.ndarray:
    """``B4(4 z + 2)``: the cardinal cubic B-spline (support [0, 4]) centred at 0 with width 1."""
    b4 = BSpline.basis_element(np.arange(5.0), extrapolate=False)
    out = b4(4.0 * z + 2.0)
    return np.nan_to_num(out, nan=0.0)


def _gp_draws(theta: np.ndarray, length_scales: tuple[float, ...], seed: Any) -> np.ndarray:
    """One draw per length scale of a zero-mean GP with covariance ``exp(-(t - t')^2 / b^2)`` on ``theta``."""
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
        return _gp_draws_cached(theta.size, length_scales, int(seed)).copy()
    return _gp_draws_impl(theta, length_scales, np.random.default_rng(seed))


@lru_cache(maxsize=16)
def _gp_draws_cached(m: int, length_scales: tuple[float, ...], seed: int) -> np.ndarray:
    return _gp_draws_impl(np.linspace(0.0, 1.0, m), length_scales, np.random.default_rng(seed))


def _gp_draws_impl(theta: np.ndarray, length_scales: tuple[float, ...], rng: np.random.Generator) -> np.ndarray:
    out = np.empty((len(length_scales), theta.size))
    for k, b in enumerate(length_scales):
        cov = np.exp(-((theta[:, None] - theta[None, :]) ** 2) / b**2)
        w, Q = np.linalg.eigh(cov)
        out[k] = Q @ (np.sqrt(np.clip(w, 0.0, None)) * rng.normal(size=theta.size))
    return out


def make_toy(n_samples: int = 200, n_locations: int = 200, input_noise: float = 0.07, output_noise: float = 0.0,
             length_scales: tuple[float, ...] = (0.1, 0.25, 0.1, 0.25), random_state: Any = 0,
             gp_random_state: Any = 0) -> xr.Dataset:
    """The paper's toy function-to-function data.

    ``r = len(length_scales)`` zero-mean Gaussian processes ``V_t`` on
    ``[0, 1]`` with covariances ``exp(-(theta - theta')^2 / b_t^2)`` are drawn
    once (seeded by ``gp_random_state``) and kept fixed. Each sample draws
    ``a ~ U([-1, 1]^r)`` and gives the input
    ``x(zeta) = sum_t a_t B(zeta - t)`` on ``[0, r + 1]``, with ``B`` the
    cardinal cubic B-spline centred at 0 and rescaled to width 1 (bumps at
    ``zeta = 1, ..., r``), and the output ``y(theta) = sum_t a_t V_t(theta)``.
    Both are observed on regular grids of ``n_locations`` points; Gaussian
    noise of standard deviation ``input_noise`` (the paper's 0.07) is added
    to the inputs and ``output_noise`` to the outputs. The paper trains on
    100 samples and tests on 100 others.

    Parameters
    ----------
    n_samples : int
    n_locations : int
        Size of both grids (the paper's 200).
    input_noise, output_noise : float
        Standard deviations of the observation noise.
    length_scales : tuple of float
        ``b_t`` (the paper's 0.1, 0.25, 0.1, 0.25).
    random_state : int, numpy.random.Generator or None, default 0
        Seed of the samples (coefficients and noise); the default 0 gives the same result on every
        run, ``None`` draws fresh randomness.
    gp_random_state : int or numpy.random.Generator, default 0
        Seed of the fixed Gaussian processes.

    Returns
    -------
    xarray.Dataset
        ``x`` (sample, zeta), ``y`` (sample, theta), the coefficients
        ``coef`` (sample, component) and the processes ``gp`` (component, theta).

    Examples
    --------
    >>> ds = make_toy(10, n_locations=50, random_state=0)
    >>> ds.x.dims, ds.y.dims, ds.sizes["component"]
    (('sample', 'zeta'), ('sample', 'theta'), 4)
    """
    n, m = int(n_samples), int(n_locations)
    if n < 1 or m < 2:
        raise ValueError(f"make_toy needs n_samples >= 1 and n_locations >= 2, got {n_samples}, {n_locations}")
    if input_noise < 0 or output_noise < 0:
        raise ValueError("input_noise and output_noise must be >= 0")
    scales = tuple(float(b) for b in length_scales)
    if not scales or min(scales) <= 0:
        raise ValueError(f"length_scales must be positive numbers, got {length_scales!r}")
    r = len(scales)
    theta = np.linspace(0.0, 1.0, m)
    zeta = np.linspace(0.0, r + 1.0, m)
    gps = _gp_draws(theta, scales, gp_random_state)
    rng = np.random.default_rng(random_state)
    a = rng.uniform(-1.0, 1.0, size=(n, r))
    bumps = np.stack([_centered_cubic_bspline(zeta - (t + 1)) for t in range(r)])  # (r, m)
    x = a @ bumps + input_noise * rng.normal(size=(n, m))
    y = a @ gps + output_noise * rng.normal(size=(n, m))
    labels = np.arange(n)
    return xr.Dataset(
        {
            "x": xr.DataArray(x, dims=(SAMPLE, "zeta"), attrs={"long_name": "input: B-spline mixture"}),
            "y": xr.DataArray(y, dims=(SAMPLE, "theta"), attrs={"long_name": "output: Gaussian-process mixture"}),
            "coef": xr.DataArray(a, dims=(SAMPLE, "component")),
            "gp": xr.DataArray(gps, dims=("component", "theta")),
        },
        coords={SAMPLE: labels, "zeta": zeta, "theta": theta, "component": np.arange(r)},
        attrs={"title": "toy data of Bouche et al. (2021), supplement 'Toy dataset'",
               "input_noise": float(input_noise), "output_noise": float(output_noise),
               "length_scales": list(scales)},
    )


def signal_to_noise(y: Any, sigma: float) -> float:
    """The paper's SNR: ``1 / (sigma n) sum_i 1 / m_i sum_p |y_ip|`` over observed points.

    Examples
    --------
    >>> signal_to_noise(np.array([[1.0, -3.0], [2.0, np.nan]]), 0.5)
    4.0
    """
    sigma = check_number(sigma, "sigma")
    vals = np.asarray(y.values if isinstance(y, xr.DataArray) else y, dtype=float)
    vals = vals[:, None] if vals.ndim == 1 else vals
    return float(np.mean(np.nanmean(np.abs(vals), axis=1)) / sigma)


def noise_for_snr(y: Any, snr: float) -> float:
    """The noise standard deviation that gives the SNR ``snr`` on ``y`` (inverse of :func:`signal_to_noise`).

    Examples
    --------
    >>> noise_for_snr(np.array([[1.0, -3.0], [2.0, np.nan]]), 4.0)
    0.5
    """
    return signal_to_noise(y, 1.0) / check_number(snr, "snr")


def corrupt(ds: xr.Dataset, kind: str, level: float, random_state: Any = 0, var: str = "y") -> xr.Dataset:
    """Corrupt the response ``ds[var]`` as in the paper's Figure 1.

    Parameters
    ----------
    ds : xarray.Dataset
        Holds the functional response ``var`` (NaN = unobserved).
    kind : {"local_outliers", "label_noise", "missing", "noise"}
        * ``"local_outliers"``: a fraction ``level`` of the observed points,
          chosen uniformly, are replaced by uniform draws in the range
          ``[min, max]`` of the observed values;
        * ``"label_noise"``: a fraction ``level`` of the curves are replaced
          by the curve of another sample chosen at random (erroneous
          outputs, unrelated to the inputs);
        * ``"missing"``: a fraction ``level`` of each curve's observed
          points, chosen uniformly, are removed (set to NaN; each curve
          keeps at least one point);
        * ``"noise"``: Gaussian noise of standard deviation ``level`` is added
          to every observed point; ``attrs["snr"]`` records the paper's SNR
          (:func:`signal_to_noise` of the clean response).
    level : float
        A fraction in ``[0, 1]`` (``[0, 1)`` for ``"missing"``), or the noise
        standard deviation ``>= 0`` for ``"noise"``.
    random_state : int, numpy.random.Generator or None, default 0
        Seed of the corruption; the default 0 gives the same result on every run, ``None`` draws
        fresh randomness.
    var : str
        Name of the response in ``ds``.

    Returns
    -------
    xarray.Dataset
        A copy with ``var`` corrupted, a boolean ``<var>_corrupted``
        (sample, location) marking the altered (or removed) points, and
        ``attrs`` ``corruption`` and ``corruption_level``.

    Examples
    --------
    >>> ds = make_toy(20, n_locations=30, random_state=0)
    >>> bad = corrupt(ds, "missing", 0.5, random_state=0)
    >>> int(bad.y.notnull().sum("theta")[0])
    15
    """
    if kind not in CORRUPTIONS:
        raise ValueError(f"unknown corruption {kind!r}; use one of {CORRUPTIONS}")
    if var not in ds:
        raise ValueError(f"ds has no variable {var!r}; pass var=<name of the functional response>")
    da = validate_functional(ds[var], var)
    loc = location_dim(da, var)
    level = float(level)
    if not np.isfinite(level) or level < 0:
        raise ValueError(f"level must be a finite number >= 0, got {level}")
    if kind != "noise" and level > 1:
        raise ValueError(f"level is a fraction for {kind!r}: it must be in [0, 1], got {level}")
    if kind == "missing" and level >= 1:
        raise ValueError("level must be < 1 for 'missing': every curve keeps at least one point")
    rng = np.random.default_rng(random_state)
    Y = da.values.copy()
    obs = ~np.isnan(Y)
    changed = np.zeros(Y.shape, dtype=bool)
    attrs: dict[str, Any] = {"corruption": kind, "corruption_level": level}
    n = Y.shape[0]
    if kind == "local_outliers":
        rows, cols = np.nonzero(obs)
        k = round(level * rows.size)
        pick = rng.choice(rows.size, size=k, replace=False)
        lo, hi = float(np.nanmin(Y)), float(np.nanmax(Y))
        Y[rows[pick], cols[pick]] = rng.uniform(lo, hi, size=k)
        changed[rows[pick], cols[pick]] = True
    elif kind == "label_noise":
        k = round(level * n)
        if k and n < 2:
            raise ValueError("label noise needs at least 2 samples")
        for i in rng.choice(n, size=k, replace=False):
            j = rng.choice(np.delete(np.arange(n), i))
            Y[i] = da.values[j]
            changed[i] = obs[i] | obs[j]
    elif kind == "missing":
        for i in range(n):
            idx = np.nonzero(obs[i])[0]
            k = min(round(level * idx.size), idx.size - 1)
            drop = rng.choice(idx, size=k, replace=False)
            Y[i, drop] = np.nan
            changed[i, drop] = True
    else:  # noise
        if level > 0:
            attrs["snr"] = signal_to_noise(Y, level)
        Y = Y + level * rng.normal(size=Y.shape)
        changed = obs.copy() if level > 0 else changed
    out = ds.copy()
    out[var] = da.copy(data=Y).transpose(*ds[var].dims)
    out[f"{var}_corrupted"] = xr.DataArray(changed, dims=(SAMPLE, loc), coords=da[loc].coords).transpose(
        *ds[var].dims)
    out.attrs.update(attrs)
    return out
