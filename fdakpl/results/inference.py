"""Inference beyond the paper on a fitted model: split-conformal prediction bands and a permutation test of
no association (methods of :class:`~fdakpl.results.FunctionalRegressionResults`)."""

from __future__ import annotations

from typing import Any

import numpy as np
import xarray as xr

from ..data.functional import SAMPLE
from ..utils.notices import InterpolationWarning, said_once, warn
from .permutation import PermutationTestResult

__all__ = ["InferenceMixin"]


class InferenceMixin:
    """Prediction bands and permutation tests (mixed into the results class)."""

    def prediction_bands(self, newdata: Any = None, alpha: float = 0.1, kind: str = "pointwise",
                         calibration: float = 0.3, random_state: Any = 0) -> tuple[xr.DataArray, xr.DataArray,
                                                                                  xr.DataArray]:
        """Split-conformal prediction bands.

        The training curves are split at random into a proper training part
        (refitted with the same hyper-parameters and lambda) and a calibration
        part whose residuals at observed points calibrate the bands.

        * ``"pointwise"``: at each location, the ``ceil((n_p + 1)(1 - alpha))``-th
          smallest absolute calibration residual among the ``n_p`` curves observed
          there; marginal coverage ``>= 1 - alpha`` at each location.
        * ``"simultaneous"``: residuals are scaled by the pointwise mean absolute
          residual ``s(theta)`` of the proper training part (independent of the
          calibration curves, so that their scores and a new curve's stay
          exchangeable); the score of a curve is its maximum scaled residual over
          its observed points, and the band is ``+- q s(theta)`` with ``q`` the
          conformal quantile of the scores: all observed points of a new curve are
          covered with probability ``>= 1 - alpha`` (curves exchangeable).

        Parameters
        ----------
        newdata : xarray.Dataset, optional
            Inputs to predict (default: the training data).
        alpha : float
            Miscoverage level.
        kind : {"pointwise", "simultaneous"}
        calibration : float
            Fraction of training curves used for calibration.
        random_state : int, numpy.random.Generator or None, default 0
            Seed of the split; the default 0 gives the same result on every run, ``None`` draws
            fresh randomness.

        Returns
        -------
        lower, upper, prediction : xarray.DataArray

        Examples
        --------
        >>> from fdakpl import FunctionalRegression, datasets
        >>> ds = datasets.dti_first_visits()
        >>> res = FunctionalRegression("rcst ~ cca", ds, interpolate_inputs=True, progress=False).fit()
        >>> lo, hi, pred = res.prediction_bands(ds.isel(sample=[0]), alpha=0.2)
        >>> bool((lo <= pred).all() and (pred <= hi).all())
        True
        """
        from sklearn.base import clone

        if not 0 < alpha < 1:
            raise ValueError(f"alpha must be in (0, 1), got {alpha}")
        if kind not in {"pointwise", "simultaneous"}:
            raise ValueError(f"kind must be 'pointwise' or 'simultaneous', got {kind!r}")
        if not 0 < calibration < 1:
            raise ValueError(f"calibration must be a fraction in (0, 1), got {calibration}")
        ds = self.model.data
        n = ds.sizes[SAMPLE]
        n_cal = round(calibration * n)
        if n_cal < 2 or n - n_cal < 2:
            raise ValueError(f"calibration={calibration} leaves too few curves for fitting or calibrating (n={n})")
        need = int(np.ceil((1 - alpha) / alpha - 1e-12))  # the conformal quantile is finite iff n_cal >= need
        if n_cal < need:
            raise ValueError(
                f"a conformal band at alpha={alpha} needs at least {need} calibration curves, but calibration="
                f"{calibration} of n={n} curves gives {n_cal}, so the band would be infinite; raise calibration "
                f"(at least {np.ceil(1000 * need / n) / 1000:g}, at most {max(0.0, (n - 2) / n):.2f} here) or "
                f"alpha (at least {np.ceil(1000 / (n_cal + 1)) / 1000:g} with {n_cal} calibration curves), or fit "
                "more curves")
        rng = np.random.default_rng(random_state)
        perm = rng.permutation(n)
        cal, fit = np.sort(perm[:n_cal]), np.sort(perm[n_cal:])
        parsed = self.model.parsed
        est = clone(self.estimator).set_params(lam=self.lam)
        Y = self.response
        from ..data.functional import as_dataset

        newds = as_dataset(ds if newdata is None else newdata)
        with said_once(quiet=(InterpolationWarning,)):  # the refit's warnings once; interpolation was noted
            est.fit(parsed.inputs(ds.isel(sample=fit)), Y.isel(sample=fit))
            pred_cal = np.asarray(est.predict(parsed.inputs(ds.isel(sample=cal))))
            pred = np.asarray(est.predict(parsed.inputs(newds)))
            fitted = np.asarray(est.predict(parsed.inputs(ds.isel(sample=fit)))) if kind == "simultaneous" else None
        r = np.abs(Y.values[cal] - pred_cal)  # NaN where unobserved
        if kind == "pointwise":
            half = np.array([_conformal_quantile(col[~np.isnan(col)], alpha) for col in r.T])
            if not np.all(np.isfinite(half)):
                warn(f"the pointwise band is infinite at {int(np.sum(~np.isfinite(half)))} locations where fewer "
                     f"than {need} calibration curves are observed; use kind='simultaneous' or a larger alpha")
        else:
            # the scale comes from the proper training part: a scale fitted to the calibration residuals
            # themselves shrinks their scores against a new curve's (measured: 0.75 coverage for 0.8)
            r_fit = np.abs(Y.values[fit] - fitted)
            s = np.nanmean(r_fit, axis=0)
            s = np.where(np.isfinite(s) & (s > 0), s, np.nanmean(r_fit))
            scores = np.nanmax(r / s, axis=1)
            half = _conformal_quantile(scores[np.isfinite(scores)], alpha) * s
        grid = Y[self.response_dim].values
        coords = {self.response_dim: grid}
        if SAMPLE in newds.coords:
            coords[SAMPLE] = newds[SAMPLE].values

        def da(v: np.ndarray, name: str) -> xr.DataArray:
            return xr.DataArray(v, dims=(SAMPLE, self.response_dim), coords=coords, name=name,
                                attrs={"alpha": alpha, "kind": kind, "calibration_curves": n_cal})

        return da(pred - half, "lower"), da(pred + half, "upper"), da(pred, parsed.response)

    def permutation_test(self, term: str, n_permutations: int = 199, random_state: Any = 0,
                         progress: bool | None = None) -> PermutationTestResult:
        """Permutation test of no association between the response and one term or covariate.

        The statistic is the exact held-out error at the fitted hyper-parameters (kernel widths, dictionary,
        B and lambda held fixed): leave-one-curve-out, or leave-one-group-out when the fit has ``groups=``.
        Under the null the covariate's values are exchangeable, so permuting them (the other terms fixed)
        draws from the null distribution: single curves without groups; with groups, group-level values
        when the covariate is constant within groups, else whole groups among groups of the same size
        (:func:`fdakpl.results.exchange.exchange_scheme`; the result's ``scheme`` says which).
        ``p = (1 + #{T_perm <= T_obs}) / (B + 1)``, at least ``1 / (B + 1)``.

        Parameters
        ----------
        term : str
            A term of the formula (a functional input, a factor term, ``"scalars"`` for all numeric scalar
            covariates together), or one numeric scalar covariate (a column of the scalar design, e.g.
            ``"pasat"``; a variable entering several columns permutes them together).
        n_permutations : int, default 199
        random_state : int, numpy.random.Generator or None, default 0
            Seed of the permutations; the default 0 gives the same result on every run, ``None``
            draws fresh randomness.
        progress : bool, optional

        Returns
        -------
        PermutationTestResult
            ``statistic``, ``pvalue``, ``null_distribution`` (as ``scipy.stats`` results), ``term``,
            ``scheme``; ``print()`` it for a readable report.

        Examples
        --------
        >>> from fdakpl import FunctionalRegression, datasets
        >>> res = FunctionalRegression("rcst ~ cca + pasat", datasets.dti_first_visits(), interpolate_inputs=True,
        ...                            progress=False).fit()
        >>> out = res.permutation_test("pasat", n_permutations=19, progress=False)
        >>> out.null_distribution.shape, 0 < out.pvalue <= 1, out.scheme[:15]
        ((19,), True, 'curves permuted')
        """
        from .exchange import resolve_covariate
        from .importance import TermMatrices, closed_form_path, fit_groups

        parsed = self.model.parsed
        if isinstance(n_permutations, bool) or not isinstance(n_permutations, (int, np.integer)) \
                or n_permutations < 1:
            raise ValueError(f"n_permutations must be a whole number >= 1 (e.g. 199), got {n_permutations!r}")
        path = closed_form_path(self)
        tm = TermMatrices(path, fit_groups(self))
        cov = resolve_covariate(term, parsed, tm.terms)
        tm.check([cov.term])
        t_obs = float(tm.loo(tm.combined(), np.array([self.lam]))[0])
        show = self.model.progress if progress is None else progress
        null = tm.null_loo(cov, self.lam, n_permutations, random_state, show)
        p = (1 + np.sum(null <= t_obs)) / (n_permutations + 1)
        return PermutationTestResult(statistic=t_obs, pvalue=float(p), null_distribution=null, term=cov.name,
                                     response=parsed.response, n_permutations=int(n_permutations),
                                     scheme=tm.exchange(cov).description, statistic_name=tm.statistic)


def _conformal_quantile(scores: np.ndarray, alpha: float) -> float:
    """The ``ceil((n + 1)(1 - alpha))``-th smallest score (``inf`` when that exceeds ``n``)."""
    n = scores.size
    k = int(np.ceil((n + 1) * (1 - alpha)))
    if n == 0 or k > n:
        return float("inf")
    return float(np.sort(scores)[k - 1])
