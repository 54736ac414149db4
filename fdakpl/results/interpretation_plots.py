"""Figures for interpretation: surfaces as heat maps with contours (as refund's ``plot.pffr``), partial dependence."""

from __future__ import annotations

from typing import Any

import numpy as np
import xarray as xr

from ..utils.docstrings import FIGURE_RETURNS, fill_doc

__all__ = ["colorbar_label", "plot_partial_dependence", "plot_surface", "surface_title"]


def _panel(ax: Any, surface: xr.DataArray, vmax: float, cmap: str, n_contours: int, title: str):
    xdim, ydim = surface.dims
    s, t = surface[xdim].values, surface[ydim].values
    Z = surface.values.T  # rows: response location (y axis), columns: term location (x axis)
    mesh = ax.pcolormesh(s, t, Z, cmap=cmap, vmin=-vmax, vmax=vmax, shading="nearest", rasterized=True)
    if np.ptp(Z) > 0:
        cs = ax.contour(s, t, Z, levels=n_contours, colors="k", linewidths=0.6)
        ax.clabel(cs, fontsize=7, fmt="%.2g")
    ax.set_xlabel(str(xdim))
    ax.set_ylabel(str(ydim))
    ax.set_title(title, fontsize=10)
    return mesh


@fill_doc(figure_returns=FIGURE_RETURNS)
def plot_surface(surface: xr.DataArray, bands: xr.Dataset | None = None, *, cmap: str = "RdBu_r",
                 n_contours: int = 8, title: str | None = None):
    """Heat map with labelled contours of a surface ``(term location, response location)``.

    The colour scale is symmetric around 0 (blue negative, red positive), as the
    coefficient plots of refund's ``pffr``. With ``bands`` (from
    :func:`fdakpl.results.surface_inference.surface_bands`), three panels share the scale: lower
    band, estimate (grey dots where the band excludes 0), upper band.

    Parameters
    ----------
    surface : xarray.DataArray
        From ``coefficient_surface`` or ``effect_surface``.
    bands : xarray.Dataset, optional
    cmap : str
    n_contours : int
    title : str, optional

    %(figure_returns)s

    Examples
    --------
    >>> import matplotlib; matplotlib.use("Agg")
    >>> s = xr.DataArray(np.outer(np.sin(np.linspace(0, 3, 20)), np.linspace(-1, 1, 15)), dims=("s", "t"),
    ...                  coords={"s": np.linspace(0, 1, 20), "t": np.linspace(0, 1, 15)}, name="beta_x")
    >>> len(plot_surface(s).axes)  # the panel and its colour bar
    2
    """
    import matplotlib.pyplot as plt

    if surface.ndim != 2:
        raise ValueError(f"surface must be 2-d (term location, response location), got dims {surface.dims}")
    name = title or surface_title(surface)
    panels = [(surface, name)]
    if bands is not None:
        panels = [(bands["lower"], "lower band"), (surface, name), (bands["upper"], "upper band")]
    vmax = max(float(np.nanmax(np.abs(p.values))) for p, _ in panels) or 1.0
    fig, axes = plt.subplots(1, len(panels), figsize=(4.2 * len(panels) + 0.8, 3.6), squeeze=False,
                             constrained_layout=True, sharey=True)
    mesh = None
    for ax, (p, ttl) in zip(axes[0], panels, strict=True):
        mesh = _panel(ax, p.transpose(*surface.dims), vmax, cmap, n_contours, ttl)
    if bands is not None:
        excl = ((bands["lower"] > 0) | (bands["upper"] < 0)).transpose(*surface.dims)
        xdim, ydim = surface.dims
        if excl.any():  # hatched: the band excludes 0
            axes[0, 1].contourf(surface[xdim].values, surface[ydim].values, excl.values.T.astype(float),
                                levels=[0.5, 1.5], colors="none", hatches=["///"])
        title_band = bands.attrs.get("method", "bootstrap")
        fig.suptitle(f"{1 - bands.attrs.get('alpha', 0.05):.0%} pointwise bands ({title_band})", fontsize=10)
    fig.colorbar(mesh, ax=axes[0].tolist(), shrink=0.9, label=colorbar_label(surface))
    return fig


def surface_title(surface: xr.DataArray) -> str:
    """A surface's title: its name and, after a colon, its kind (never two pairs of parentheses).

    Examples
    --------
    >>> surface_title(xr.DataArray(np.zeros((2, 2)), name="effect_cca",
    ...                            attrs={"kind": "effect surface (average Frechet derivative)"}))
    'effect_cca: effect surface (average Frechet derivative)'
    >>> surface_title(xr.DataArray(np.zeros((2, 2))))
    'surface'
    """
    name = str(surface.name) if surface.name is not None else "surface"
    return f"{name}: {surface.attrs['kind']}" if "kind" in surface.attrs else name


def colorbar_label(surface: xr.DataArray) -> str:
    """What the colour bar of a surface measures: its name and the response it acts on.

    Examples
    --------
    >>> colorbar_label(xr.DataArray(np.zeros((2, 2)), name="beta_cca", attrs={"response": "rcst"}))
    'beta_cca (rcst per unit of the term)'
    >>> colorbar_label(xr.DataArray(np.zeros((2, 2))))
    'surface value'
    """
    name = str(surface.name) if surface.name is not None else "surface value"
    return f"{name} ({surface.attrs['response']} per unit of the term)" if "response" in surface.attrs else name


def plot_partial_dependence(pd_curves: xr.DataArray, *, ax: Any = None, cmap: str = "viridis"):
    """One curve per value of a partial dependence ``(value, response location)``.

    Numeric values are coloured along ``cmap`` with a colour bar; factor levels get a legend.

    Examples
    --------
    >>> import matplotlib; matplotlib.use("Agg")
    >>> pdc = xr.DataArray(np.zeros((2, 5)), dims=("value", "t"), coords={"value": ["a", "b"], "t": np.arange(5.0)},
    ...                    name="pd_g", attrs={"variable": "g"})
    >>> plot_partial_dependence(pdc).axes[0].get_legend() is not None
    True
    """
    import matplotlib.pyplot as plt

    if pd_curves.ndim != 2 or pd_curves.dims[0] != "value":
        raise ValueError(f"expected a partial dependence with dims ('value', location), got {pd_curves.dims}")
    loc = pd_curves.dims[1]
    if ax is None:
        fig, ax = plt.subplots(figsize=(5.2, 3.6), constrained_layout=True)
    else:
        fig = ax.figure
    values = pd_curves["value"].values
    var = pd_curves.attrs.get("variable", "value")
    numeric = np.issubdtype(values.dtype, np.number)
    cm = plt.get_cmap(cmap)
    if numeric:
        norm = plt.Normalize(float(values.min()), float(values.max()) if values.max() > values.min() else
                             float(values.min()) + 1.0)
    for k, v in enumerate(values):
        color = cm(norm(float(v))) if numeric else f"C{k}"
        ax.plot(pd_curves[loc].values, pd_curves.values[k], color=color, lw=1.6, label=None if numeric else str(v))
    if numeric:
        fig.colorbar(plt.cm.ScalarMappable(norm=norm, cmap=cm), ax=ax, label=var)
    else:
        ax.legend(title=var, fontsize=8, frameon=False)
    ax.set_xlabel(str(loc))
    ax.set_ylabel(f"mean prediction ({pd_curves.name or 'response'})")
    ax.set_title(f"Partial dependence on {var}", fontsize=10)
    return fig
