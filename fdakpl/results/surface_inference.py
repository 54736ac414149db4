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
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from ..data.functional import SAMPLE
from ..dictionaries import BSpline
from ..kernels import SmoothedLinear
from ..roughness_kernels import PenalizedLinear
from ..utils.notices import distinct, said_once, silenced, warn
from ..utils.progress import progress as bar
from .interpretation import coefficient_surface_of, linear_surface, reference_arrays
from .surface_bayes import posterior_sd

__all__ = ["default_atoms", "default_bandwidths", "select_smoothing", "select_surface", "surface_bands"]


def _term_criterion(model: Any, term: str, criterion: str | None, default: str) -> str:
    """The criterion of a search over ``term``'s settings (the model's ``lam`` when it is "gcv" or "loo", else
    ``default``), after checking that ``term`` is a functional term."""
    if term not in model.parsed.functional_terms:
        raise ValueError(f"{term!r} is not a functional term of {model.formula!r}; functional terms: "
                         f"{model.parsed.functional_terms}")
    crit = criterion or (model.lam if isinstance(model.lam, str) and model.lam in {"gcv", "loo"} else default)
    if crit not in {"gcv", "loo"}:
        raise ValueError(f"criterion must be 'gcv' or 'loo', got {crit!r}")
    return crit


def _best_refit(model: Any, crit: str, column: str, values: list, settings: Callable[[Any], dict[str, Any]],
                desc: str, progress: bool | None) -> tuple[Any, pd.DataFrame, int]:
    """Refit a copy of ``model`` with the attributes ``settings(v)`` for each value ``v``, lambda chosen by ``crit``
    on the model's lambda grid (or the grid given as ``lam``); return the fit with the smallest criterion, the
    path (``column``, criterion, lambda per value) and the chosen position. fdakpl's warnings of each fit are
    gathered per thread (no global warning filter: :func:`~fdakpl.utils.notices.said_once`); only those of the
    chosen fit are said."""
    grid = model.lam_grid
    if not isinstance(model.lam, str) and np.ndim(model.lam) == 1:  # a grid given as lam
        grid = np.asarray(model.lam, dtype=float)
    rows, fits = [], []
    show = model.progress if progress is None else progress
    for v in bar(values, desc=desc, enabled=show):
        m = copy.copy(model)
        for name, value in settings(v).items():
            setattr(m, name, value)
        m.lam, m.lam_grid, m.progress = crit, grid, False
        with said_once(quiet=(Warning,)) as caught:
            res = m.fit()
        rows.append({column: v, "criterion": float(np.nanmin(getattr(res.criteria, crit))), "lambda": res.lam})
        fits.append((res, list(caught)))
    path = pd.DataFrame(rows)
    best = int(np.argmin(path["criterion"].to_numpy()))
    res, caught = fits[best]
    for w in distinct(caught):
        warn(str(w.message), w.category)
    return res, path, best


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
    crit = _term_criterion(model, term, criterion, "gcv")
    bws = default_bandwidths(model.parsed.input_grids[term]) if bandwidths is None else np.asarray(bandwidths, float)
    if bws.size == 0 or np.any(~np.isfinite(bws)) or np.any(bws < 0):
        raise ValueError("bandwidths must be a non-empty sequence of numbers >= 0")
    res, path, best = _best_refit(
        model, crit, "bandwidth", [float(bw) for bw in bws],
        lambda bw: {"kernels": {**(model.kernels or {}), term: SmoothedLinear(bw)}}, f"smoothing of {term}", progress)
    res.notes.append(f"SmoothedLinear bandwidth of {term!r} = {bws[best]:.4g} chosen by {crit.upper()} among "
                     f"{bws.size} values in [{bws.min():.3g}, {bws.max():.3g}]")
    return res, path


def default_atoms(m_out: int) -> np.ndarray:
    """Cubic B-spline dictionary sizes tried by :func:`select_surface`: 4 to 16, at most the response's locations.

    Examples
    --------
    >>> default_atoms(30).tolist(), default_atoms(6).tolist()
    ([4, 5, 6, 8, 10, 12, 16], [4, 5, 6])
    """
    sizes = np.array([4, 5, 6, 8, 10, 12, 16])
    return sizes[sizes <= max(int(m_out), 4)]


def select_surface(model: Any, term: str, n_atoms: Any = None, kernel: Any = None, criterion: str | None = None,
                   progress: bool | None = None) -> tuple[Any, pd.DataFrame]:
    """Fit the penalised functional linear model of ``term``: a roughness-penalised kernel in ``s``, the size of
    the cubic B-spline dictionary in ``t`` chosen with lambda by the curve-level criterion.

    The kernel (default :class:`~fdakpl.roughness_kernels.PenalizedLinear`: ``int beta''(s, t)^2 ds``
    penalised) smooths the surface along the input's locations; the response side is smoothed by the
    dictionary's size (the ridge on atoms penalises their size only). Every size is fitted over the
    model's lambda grid; the pair (size, lambda) with the smallest criterion wins. This is the route for
    coefficient surfaces measured against mgcv's ``te(s, t, by = x)`` in
    ``benchmarks/surface_recovery.py``; :func:`surface_bands` then gives Bayesian bands.

    Parameters
    ----------
    model : FunctionalRegression
        The unfitted model; its other options (other terms' kernels, groups, lambda grid) are kept, its
        dictionary replaced by ``BSpline(k)``.
    term : str
        A functional term.
    n_atoms : sequence of int, optional
        Dictionary sizes, default :func:`default_atoms` of the number of response locations.
    kernel : Kernel, optional
        Default ``PenalizedLinear()``.
    criterion : {"gcv", "loo"}, optional
        Default: the model's ``lam`` when it is one of them, else ``"loo"``.
    progress : bool, optional

    Returns
    -------
    results : FunctionalRegressionResults
        The fit at the chosen size (a note says which).
    path : pandas.DataFrame
        Best criterion and lambda per size.

    Examples
    --------
    >>> from fdakpl import FunctionalRegression, datasets
    >>> ds, _ = datasets.make_linear_surface(40, m_in=15, m_out=12, random_state=0)
    >>> res, path = select_surface(FunctionalRegression("y ~ x", ds, progress=False), "x", n_atoms=[4, 6])
    >>> list(path.columns), res.kernels["x"]
    (['n_atoms', 'criterion', 'lambda'], PenalizedLinear(null_weight=10000.0, order=2))
    """
    crit = _term_criterion(model, term, criterion, "loo")
    response = model.data[model.parsed.response]
    m_out = int(np.prod([response.sizes[d] for d in response.dims if d != SAMPLE]))
    sizes = default_atoms(m_out) if n_atoms is None else np.asarray(n_atoms)
    if sizes.size == 0 or np.any(sizes != np.round(sizes)) or np.any(sizes < 4):
        raise ValueError(f"n_atoms must be a non-empty sequence of integers >= 4 (cubic B-splines), got {n_atoms}")
    ker = PenalizedLinear() if kernel is None else kernel
    res, path, best = _best_refit(
        model, crit, "n_atoms", [int(v) for v in sizes],
        lambda k: {"kernels": {**(model.kernels or {}), term: ker}, "dictionary": BSpline(k)}, f"surface of {term}",
        progress)
    res.notes.append(f"coefficient surface of {term!r}: {ker!r}, BSpline({int(sizes[best])}) chosen by "
                     f"{crit.upper()} among {sizes.size} sizes in [{int(sizes.min())}, {int(sizes.max())}]")
    return res, path


def _resample(inputs: dict[str, Any], Y: xr.DataArray, idx: np.ndarray) -> tuple[dict[str, Any], xr.DataArray]:
    fresh = np.arange(idx.size)
    out = {}
    for t, v in inputs.items():
        out[t] = (v.isel({SAMPLE: idx}).assign_coords({SAMPLE: fresh}) if isinstance(v, xr.DataArray)
                  else np.asarray(v)[idx])
    return out, Y.isel({SAMPLE: idx}).assign_coords({SAMPLE: fresh})


def surface_bands(res: Any, term: str, n_boot: int = 200, alpha: float = 0.05, method: str = "auto",
                  reference: Any = None, random_state: Any = 0, progress: bool | None = None,
                  undersmooth: float = 0.5) -> xr.Dataset:
    """Pointwise bands of a coefficient surface: Bayesian (Wahba--Nychka), or bootstrap over curves.

    ``"bayes"``: ``estimate +- z_{1 - alpha/2} sd`` with the posterior standard deviation of
    :func:`fdakpl.results.surface_bayes.posterior_sd` (one functional term, closed-form fit); with a
    :class:`~fdakpl.roughness_kernels.PenalizedLinear` kernel (e.g. from :func:`select_surface`) these
    bands cover about ``1 - alpha`` of the surface's points at n = 100 to 1000
    (``benchmarks/results/surface_recovery.json``), because the posterior variance accounts for the
    penalty's bias on average, and because they are computed at ``undersmooth`` times the fitted
    lambda (undersmoothing for the band: less bias, a little more variance; the band's ``estimate`` is
    the surface at that lambda). ``"basic"`` and ``"percentile"``: the bootstrap over curves, which
    ignores that bias (its bands shrink with n while the bias does not: 0.77 coverage at n = 300 with
    the linear kernel). ``"auto"`` (default): ``"bayes"`` for a single-term fit with a
    ``PenalizedLinear`` kernel, else ``"basic"``.

    Parameters
    ----------
    res : FunctionalRegressionResults
        A fit with a Linear / SmoothedLinear kernel on ``term`` (exact solver).
    term : str
    n_boot : int
        Bootstrap replicates (each one refit at the fitted kernel and lambda; not used by ``"bayes"``).
    alpha : float
        Pointwise miscoverage: the bands aim at ``1 - alpha``.
    method : {"auto", "bayes", "basic", "percentile"}
    reference : optional
        As in :meth:`~fdakpl.results.FunctionalRegressionResults.coefficient_surface`.
    random_state : int, numpy.random.Generator or None, default 0
        Seed of the permutations; the default 0 gives the same result on every run, ``None`` draws
        fresh randomness.
    progress : bool, optional
    undersmooth : float
        ``"bayes"`` only: the bands are those of the fit at ``undersmooth * lambda`` (0 < undersmooth <= 1;
        1: the fit itself). The default 0.5 is the benchmark's choice (coverage and width at n = 100, 300,
        1000 in ``benchmarks/results/surface_recovery.json``).

    Returns
    -------
    xarray.Dataset
        ``estimate``, ``lower``, ``upper``, ``sd`` (posterior or bootstrap standard deviation) on
        (term location, response location).

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
    if not 0 < undersmooth <= 1:
        raise ValueError(f"undersmooth must be in (0, 1], got {undersmooth}")
    if method not in {"auto", "bayes", "basic", "percentile"}:
        raise ValueError(f"method must be 'auto', 'bayes', 'basic' or 'percentile', got {method!r}")
    if method == "auto":
        method = "bayes" if _bayes_applies(res, term) else "basic"
    if method != "bayes" and n_boot < 2:
        raise ValueError(f"n_boot must be >= 2, got {n_boot}")
    est_hat = coefficient_surface_of(res, term, reference)
    dims = est_hat.dims
    if method == "bayes":
        return _bayes_bands(res, term, est_hat, alpha, undersmooth, reference)
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
    attrs = {"method": f"{method} bootstrap over curves", "n_boot": n_boot, "alpha": alpha, "term": term}
    return xr.Dataset({"estimate": est_hat, "lower": (dims, lower), "upper": (dims, upper),
                       "sd": (dims, boots.std(axis=0, ddof=1))}, attrs=attrs)


def _bayes_applies(res: Any, term: str) -> bool:
    """A single-term closed-form fit with a PenalizedLinear kernel on ``term`` (the default of ``"auto"``)."""
    kernels = getattr(res, "kernels", {}) or {}
    return (isinstance(kernels.get(term), PenalizedLinear) and list(kernels) == [term]
            and getattr(res.estimator, "solver_", None) in {"eig", "sylvester"})


def _bayes_bands(res: Any, term: str, est_hat: xr.DataArray, alpha: float, undersmooth: float,
                 reference: Any) -> xr.Dataset:
    """Posterior bands at ``undersmooth * lambda`` (the fit's own problem, refitted in closed form)."""
    from scipy.stats import norm
    from sklearn.base import clone

    theta = est_hat[res.response_dim].values
    lam = float(res.lam) * undersmooth
    est = clone(res.estimator).set_params(lam=lam).fit_problem(res.estimator.problem_)
    centre = linear_surface(est, term, theta, reference_arrays(res, term, reference))[0]
    sd, info = posterior_sd(est, term, theta)
    z = float(norm.ppf(1 - alpha / 2))
    dims = est_hat.dims
    attrs = {"method": "Bayesian (Wahba-Nychka) posterior bands", "alpha": alpha, "term": term, "z": z,
             "lambda": lam, "undersmooth": undersmooth, **info}
    return xr.Dataset({"estimate": (dims, centre), "lower": (dims, centre - z * sd),
                       "upper": (dims, centre + z * sd), "sd": (dims, sd)},
                      coords=est_hat.coords, attrs=attrs)
