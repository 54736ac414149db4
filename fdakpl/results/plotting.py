"""Matplotlib figures of observed and predicted curves."""

from __future__ import annotations

from typing import Any

import numpy as np
import xarray as xr

from ..data.functional import SAMPLE, location_dim
from ..utils.docstrings import FIGURE_RETURNS, dti_fit_example, fill_doc

__all__ = ["plot_predictions"]


@fill_doc(figure_returns=FIGURE_RETURNS)
def plot_predictions(observed: xr.DataArray, predicted: xr.DataArray, samples: Any = None, *,
                     ncols: int = 3, title: str | None = None, band: tuple[xr.DataArray, xr.DataArray] | None = None):
    """Small multiples of observed points and predicted curves.

    Parameters
    ----------
    observed : xarray.DataArray
        Observed curves ``(sample, location)``; NaN = unobserved.
    predicted : xarray.DataArray
        Predicted curves for the same samples (any grid).
    samples : sequence, optional
        Sample labels to show (default: the first six).
    ncols : int
        Panels per row.
    title : str, optional
    band : (lower, upper), optional
        Prediction band to shade.

    %(figure_returns)s

    Examples
    --------
    >>> import matplotlib; matplotlib.use("Agg")
    >>> t = np.linspace(0, 1, 5)
    >>> obs = xr.DataArray(np.ones((2, 5)), dims=("sample", "t"), coords={"t": t, "sample": ["a", "b"]})
    >>> fig = plot_predictions(obs, obs)
    >>> len(fig.axes)
    2
    """
    import matplotlib.pyplot as plt

    loc_o = location_dim(observed)
    loc_p = location_dim(predicted)
    labels = list(observed[SAMPLE].values) if samples is None else list(samples)
    labels = labels[:6] if samples is None else labels
    _check_samples(labels, list(observed[SAMPLE].values))
    nrows = int(np.ceil(len(labels) / ncols))
    fig, axes = plt.subplots(nrows, min(ncols, len(labels)), figsize=(3.2 * min(ncols, len(labels)), 2.6 * nrows),
                             sharex=True, sharey=True, squeeze=False, constrained_layout=True)
    for ax, lab in zip(axes.ravel(), labels, strict=False):
        o = observed.sel({SAMPLE: lab})
        p = predicted.sel({SAMPLE: lab})
        if band is not None:
            ax.fill_between(band[0][loc_p].values, band[0].sel({SAMPLE: lab}).values,
                            band[1].sel({SAMPLE: lab}).values, color="C0", alpha=0.2, lw=0, label="band")
        ax.plot(o[loc_o].values, o.values, "o", ms=2.5, color="0.35", label="observed")
        ax.plot(p[loc_p].values, p.values, "-", lw=1.6, color="C3", label="predicted")
        ax.set_title(str(lab), fontsize=9)
        ax.grid(alpha=0.3, lw=0.5)
    for ax in axes.ravel()[len(labels):]:
        ax.set_visible(False)
    for ax in axes[-1]:
        ax.set_xlabel(loc_o)
    for ax in axes[:, 0]:
        ax.set_ylabel(str(observed.name or "response"))
    axes[0, 0].legend(fontsize=7, frameon=False)
    if title:
        fig.suptitle(title, fontsize=11)
    return fig


@fill_doc(figure_returns=FIGURE_RETURNS, fit=dti_fit_example(plot=True))
def plot_overview(res: Any, samples: Any = None, bands: Any = None):
    """Four panels: observed vs fitted curves, pointwise R^2, the lambda path, the leading atoms.

    Parameters
    ----------
    res : FunctionalRegressionResults
    samples : sequence, optional
        Training sample labels to draw (default: four spread over the data).
    bands : (lower, upper), optional
        Bands for the drawn samples.

    %(figure_returns)s

    Examples
    --------
    %(fit)s
    >>> fig = plot_overview(res)
    >>> [ax.get_title() for ax in fig.axes][1]
    'Pointwise $R^2(\\\\theta)$'
    """
    import matplotlib.pyplot as plt

    Y = res.response
    dim = res.response_dim
    fitted = res.fitted
    labels = list(Y[SAMPLE].values)
    if samples is None:
        samples = [labels[i] for i in np.linspace(0, len(labels) - 1, 4).astype(int)]
    _check_samples(samples, labels)
    fig, axes = plt.subplots(2, 2, figsize=(10, 7), constrained_layout=True)
    ax = axes[0, 0]
    for k, lab in enumerate(samples):
        c = f"C{k}"
        o, f = Y.sel({SAMPLE: lab}), fitted.sel({SAMPLE: lab})
        if bands is not None:
            ax.fill_between(f[dim].values, bands[0].sel({SAMPLE: lab}).values, bands[1].sel({SAMPLE: lab}).values,
                            color=c, alpha=0.15, lw=0)
        ax.plot(o[dim].values, o.values, "o", ms=2.5, color=c, alpha=0.7)
        ax.plot(f[dim].values, f.values, "-", lw=1.5, color=c, label=str(lab))
    ax.set_title("Observed (points) and fitted (lines)")
    ax.set_xlabel(dim)
    ax.set_ylabel(str(Y.name))
    ax.legend(fontsize=7, frameon=False, ncol=2)
    ax = axes[0, 1]
    r2 = res.r2_pointwise
    ax.plot(r2[dim].values, r2.values, "-", color="C0")
    ax.axhline(res.r2, color="0.4", ls="--", lw=1, label=f"integrated $R^2$ = {res.r2:.3f}")
    ax.set_title("Pointwise $R^2(\\theta)$")
    ax.set_xlabel(dim)
    ax.set_ylabel("$R^2(\\theta)$ (training curves)")
    ax.set_ylim(min(0.0, float(np.nanmin(r2.values)) - 0.05), 1.0)
    ax.legend(fontsize=8, frameon=False)
    ax = axes[1, 0]
    if res.criteria is not None and res.criteria.lams.size > 1:
        c = res.criteria
        ax.loglog(c.lams, c.gcv, "-", label="GCV")
        if c.loo is not None:
            ax.loglog(c.lams, c.loo, "--", label="leave-one-curve-out")
        ax.loglog(c.lams, c.train_mse, ":", label="training error")
    elif res.cv_result is not None:
        i = res.cv_result["best_index"][0]
        ax.loglog(res.cv_result["lams"], res.cv_result["scores"][i], "-", label=f"{res.model.cv}-fold CV")
    ax.axvline(res.lam, color="C3", lw=1, label=f"chosen $\\lambda$ = {res.lam:.2g}")
    lam_star = res.diagnostics()["lambda_star"]
    lo, hi = ax.get_xlim()
    if np.isfinite(lam_star) and lo <= lam_star <= hi:
        ax.axvline(lam_star, color="0.3", lw=1, ls="-.", label="$\\lambda^*$ (Prop. 5)")
    ax.set_title("Regularisation path")
    ax.set_xlabel("$\\lambda$")
    ax.set_ylabel("mean squared error")
    ax.legend(fontsize=7, frameon=False)
    ax = axes[1, 1]
    dic = res.estimator.dictionary_
    lo, hi = dic.domain_
    t = np.linspace(lo, hi, 400)
    phi = dic.evaluate(t)
    order = np.lexsort((np.arange(dic.n_atoms_), dic.scales_))[:6]
    for k, j in enumerate(order):
        ax.plot(t, phi[:, j], lw=1.2, color=f"C{k}", label=f"atom {j} (scale {dic.scales_[j]})")
    ax.set_title(f"Leading atoms: {type(dic).__name__}, d = {dic.n_atoms_}")
    ax.set_xlabel(dim)
    ax.set_ylabel("$\\phi_l(\\theta)$")
    ax.legend(fontsize=7, frameon=False, ncol=2)
    for a in axes.ravel():
        a.grid(alpha=0.3, lw=0.5)
    fig.suptitle(res.model.formula, fontsize=11)
    return fig


def _check_samples(samples: Any, labels: list[Any]) -> None:
    """Refuse sample labels that the data lacks (xarray's KeyError would not say which, nor what exists)."""
    known = set(labels)
    unknown = [s for s in samples if s not in known]
    if unknown:
        raise ValueError(f"samples {unknown[:5]} are not sample labels of the data; its labels are "
                         f"{np.asarray(labels[:5]).tolist()}{' ...' if len(labels) > 5 else ''}")
