"""Smoothing and uncertainty of coefficient surfaces of linear-kernel terms.

* :func:`select_smoothing` -- the bandwidth of a :class:`~fdakpl.kernels.SmoothedLinear`
  kernel on one functional term, chosen jointly with lambda by the curve-level
  criterion used for lambda (GCV or exact leave-one-curve-out): with rough
  inputs the plain linear-kernel surface lies in the span of the rough training
  curves and is rough in ``s``; smoothing the input geometry makes it smooth
  where the truth is, at the scale the data support.
* :func:`surface_bands` -- pointwise bands by a nonparametric bootstrap over
  curves (pairs ``(x_i, y_i)`` resampled with replacement, the model refitted
  at the fitted hyper-parameters). Resampling curves keeps each curve's
  within-curve dependence and needs no model for the noise. ``"basic"``
  intervals ``2 beta_hat - q_{1 - a/2}, 2 beta_hat - q_{a/2}`` reflect the
  bootstrap distribution around the estimate, which corrects part of the
  ridge's shrinkage (the bootstrap replicates are shrunk again relative to
  ``beta_hat``); ``"percentile"`` intervals are the plain quantiles. Coverage of
  both, measured on simulations, is in ``benchmarks/results/surface_recovery.json``
  (and the guide page on interpretation).
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from ..data.functional import SAMPLE
from ..kernels import SmoothedLinear
from ..utils.notices import distinct, said_once, silenced, warn
from ..utils.progress import progress as bar
from .interpretation import coefficient_surface_of, linear_surface, reference_arrays

__all__ = ["default_bandwidths", "select_smoothing", "surface_bands"]


def default_bandwidths(grid: np.ndarray) -> np.ndarray:
    """0 (the plain linear kernel) and 10 bandwidths from 0.5% to 20% of the grid's range.

    Examples
    --------
    >>> default_bandwidths(np.linspace(0, 1, 5))[:2]
    array([0.   , 0.005])
    """
    span = float(np.ptp(grid))
    return np.r_[0.0, span * np.geomspace(0.005, 0.2, 10)]


def select_smoothing(model: Any, term: str, bandwidths: Any = None, criterion: str | None = None,
                     progress: bool | None = None) -> tuple[Any, pd.DataFrame]:
    """Fit ``model`` with a :class:`~fdakpl.kernels.SmoothedLinear` kernel on ``term``, bandwidth chosen by GCV/LOO.

    Every bandwidth is fitted over the model's lambda grid; the pair (bandwidth, lambda) with the
    smallest criterion wins (the same curve-level criterion that chooses lambda).

    Parameters
    ----------
    model : FunctionalRegression
        The unfitted model; its other options (dictionary, B, other terms' kernels) are kept.
    term : str
        A functional term.
    bandwidths : sequence of float, optional
        Default :func:`default_bandwidths` of the term's grid (0 is the plain linear kernel).
    criterion : {"gcv", "loo"}, optional
        Default: the model's ``lam`` when it is one of them, else ``"gcv"``.
    progress : bool, optional

    Returns
    -------
    results : FunctionalRegressionResults
        The fit at the chosen bandwidth (a note says which).
    path : pandas.DataFrame
        Best criterion and lambda per bandwidth.

    Examples
    --------
    >>> from fdakpl import FunctionalRegression, datasets
    >>> ds, _ = datasets.make_linear_surface(40, random_state=0)
    >>> res, path = select_smoothing(FunctionalRegression("y ~ x", ds, dictionary="bspline", progress=False), "x",
    ...                              bandwidths=[0.0, 0.05])
    >>> list(path.columns)
    ['bandwidth', 'criterion', 'lambda']
    """
    if term not in model.parsed.functional_terms:
        raise ValueError(f"{term!r} is not a functional term of {model.formula!r}; functional terms: "
                         f"{model.parsed.functional_terms}")
    crit = criterion or (model.lam if isinstance(model.lam, str) and model.lam in {"gcv", "loo"} else "gcv")
    if crit not in {"gcv", "loo"}:
        raise ValueError(f"criterion must be 'gcv' or 'loo', got {crit!r}")
    bws = default_bandwidths(model.parsed.input_grids[term]) if bandwidths is None else np.asarray(bandwidths, float)
    if bws.size == 0 or np.any(~np.isfinite(bws)) or np.any(bws < 0):
        raise ValueError("bandwidths must be a non-empty sequence of numbers >= 0")
    grid = model.lam_grid
    if not isinstance(model.lam, str) and np.ndim(model.lam) == 1:  # a grid given as lam
        grid = np.asarray(model.lam, dtype=float)
    rows, fits = [], []
    show = model.progress if progress is None else progress
    for bw in bar(list(bws), desc=f"smoothing of {term}", enabled=show):
        m = copy.copy(model)
        m.kernels = {**(model.kernels or {}), term: SmoothedLinear(float(bw))}
        m.lam, m.lam_grid = crit, grid
        m.progress = False
        # fdakpl's warnings of each fit gathered per thread (no global warning filter: notices.said_once);
        # only those of the chosen bandwidth are said
        with said_once(quiet=(Warning,)) as caught:
            res = m.fit()
        values = getattr(res.criteria, crit)
        rows.append({"bandwidth": float(bw), "criterion": float(np.nanmin(values)), "lambda": res.lam})
        fits.append((res, list(caught)))
    path = pd.DataFrame(rows)
    best = int(np.argmin(path["criterion"].to_numpy()))
    res, caught = fits[best]
    for w in distinct(caught):
        warn(str(w.message), w.category)
    res.notes.append(f"SmoothedLinear bandwidth of {term!r} = {bws[best]:.4g} chosen by {crit.upper()} among "
                     f"{bws.size} values in [{bws.min():.3g}, {bws.max():.3g}]")
    return res, path


def _resample(inputs: dict[str, Any], Y: xr.DataArray, idx: np.ndarray) -> tuple[dict[str, Any], xr.DataArray]:
    fresh = np.arange(idx.size)
    out = {}
    for t, v in inputs.items():
        out[t] = (v.isel({SAMPLE: idx}).assign_coords({SAMPLE: fresh}) if isinstance(v, xr.DataArray)
                  else np.asarray(v)[idx])
    return out, Y.isel({SAMPLE: idx}).assign_coords({SAMPLE: fresh})


def surface_bands(res: Any, term: str, n_boot: int = 200, alpha: float = 0.05, method: str = "basic",
                  reference: Any = None, random_state: Any = 0, progress: bool | None = None) -> xr.Dataset:
    """Pointwise bootstrap bands of a coefficient surface (curves resampled with replacement).

    Parameters
    ----------
    res : FunctionalRegressionResults
        A fit with a Linear / SmoothedLinear kernel on ``term`` (exact solver).
    term : str
    n_boot : int
        Bootstrap replicates (each one refit at the fitted kernel and lambda).
    alpha : float
        Pointwise miscoverage: the bands aim at ``1 - alpha``.
    method : {"basic", "percentile"}
    reference : optional
        As in :meth:`~fdakpl.results.FunctionalRegressionResults.coefficient_surface`.
    random_state : int, numpy.random.Generator or None, default 0
        Seed of the permutations; the default 0 gives the same result on every run, ``None`` draws
        fresh randomness.
    progress : bool, optional

    Returns
    -------
    xarray.Dataset
        ``estimate``, ``lower``, ``upper``, ``sd`` (bootstrap standard deviation) on (term location,
        response location).

    Examples
    --------
    >>> from fdakpl import FunctionalRegression, Linear, datasets
    >>> ds, _ = datasets.make_linear_surface(30, m_in=15, m_out=12, random_state=0)
    >>> res = FunctionalRegression("y ~ x", ds, kernels={"x": Linear()}, dictionary="bspline",
    ...                            progress=False).fit()
    >>> bands = surface_bands(res, "x", n_boot=20)
    >>> bool((bands.lower <= bands.upper).all())
    True
    """
    from sklearn.base import clone

    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    if method not in {"basic", "percentile"}:
        raise ValueError(f"method must be 'basic' or 'percentile', got {method!r}")
    if n_boot < 2:
        raise ValueError(f"n_boot must be >= 2, got {n_boot}")
    est_hat = coefficient_surface_of(res, term, reference)
    theta = est_hat[res.response_dim].values
    ref = reference_arrays(res, term, reference)
    parsed = res.model.parsed
    inputs = parsed.inputs(res.model.data)
    Y = res.response
    n = Y.sizes[SAMPLE]
    rng = np.random.default_rng(random_state)
    est0 = clone(res.estimator).set_params(lam=res.lam, solver="eig" if res.solver == "eig" else res.solver)
    boots = np.empty((n_boot, *est_hat.shape))
    show = res.model.progress if progress is None else progress
    with silenced():  # the bootstrap refits' warnings are dropped, per thread (no global warning filter)
        for b in bar(range(n_boot), desc=f"bootstrap of beta_{term}", enabled=show):
            Xb, Yb = _resample(inputs, Y, rng.integers(0, n, n))
            est = clone(est0).fit(Xb, Yb)
            boots[b] = linear_surface(est, term, theta, ref)[0]
    lo_q, hi_q = np.quantile(boots, [alpha / 2, 1 - alpha / 2], axis=0)
    beta = est_hat.values
    lower, upper = (lo_q, hi_q) if method == "percentile" else (2 * beta - hi_q, 2 * beta - lo_q)
    dims = est_hat.dims
    attrs = {"method": f"{method} bootstrap over curves", "n_boot": n_boot, "alpha": alpha, "term": term}
    return xr.Dataset({"estimate": est_hat, "lower": (dims, lower), "upper": (dims, upper),
                       "sd": (dims, boots.std(axis=0, ddof=1))}, attrs=attrs)
