"""Matplotlib figures of observed and predicted curves."""

from __future__ import annotations

from typing import Any

import numpy as np
import xarray as xr

from .functional import SAMPLE, location_dim

__all__ = ["plot_predictions"]


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

    Returns
    -------
    matplotlib.figure.Figure

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
