"""The DTI data set of the R package refund, as a labelled xarray.Dataset."""

from __future__ import annotations

from importlib import resources
from typing import Any

import numpy as np
import xarray as xr

from ..functional import SAMPLE

__all__ = ["DTI_ACKNOWLEDGMENT", "dti_first_visits", "dti_from_columns", "load_dti"]

DTI_ACKNOWLEDGMENT = "The MRI/DTI data were collected at Johns Hopkins University and the Kennedy-Krieger Institute."

_SCALARS = ("ID", "visit", "visit.time", "Nscans", "case", "sex", "pasat")
_CURVES = ("cca", "rcst")


def bundled_path() -> str:
    """Path of the bundled copy of refund's ``DTI.RData``.

    Examples
    --------
    >>> bundled_path().endswith("DTI.RData")
    True
    """
    return str(resources.files("fdakpl.datasets").joinpath("data/DTI.RData"))


def dti_from_columns(columns: dict[str, Any], sample_labels: Any, source: str) -> xr.Dataset:
    """Build the DTI Dataset from R's columns (whichever reader produced them).

    Parameters
    ----------
    columns : dict
        ``cca`` and ``rcst`` as ``(382, m)`` float arrays (NaN = unobserved),
        ``sex`` as strings (or a pandas Categorical), the other scalars as
        numbers with NaN for NA.
    sample_labels : array-like of str
        The curves' row names (``"1001_1"`` = subject 1001, visit 1).
    source : str
        Where the data came from (kept in ``attrs``).

    Returns
    -------
    xarray.Dataset
    """
    labels = np.asarray(sample_labels).astype(str)
    data_vars: dict[str, Any] = {}
    for name in _CURVES:
        vals = np.asarray(columns[name], dtype=float)
        loc = f"{name}_loc"
        data_vars[name] = xr.DataArray(
            vals, dims=(SAMPLE, loc), coords={loc: np.linspace(0.0, 1.0, vals.shape[1])},
            attrs={"long_name": {"cca": "fractional anisotropy along the corpus callosum",
                                 "rcst": "fractional anisotropy along the right corticospinal tract"}[name],
                   "location": "tract position rescaled to [0, 1] (refund stores the column index)"},
        )
    for name in _SCALARS:
        col = columns[name]
        key = name.replace(".", "_")
        if name == "sex":
            levels = list(getattr(col, "categories", ["male", "female"]))
            arr = np.asarray(col, dtype=object).astype(str)
            data_vars[key] = xr.DataArray(arr, dims=(SAMPLE,), attrs={"levels": levels, "r_class": "factor"})
        else:
            if np.ma.is_masked(col) or np.ma.isMaskedArray(col):
                arr = np.ma.filled(np.ma.asarray(col, dtype=float), np.nan)
            else:
                arr = np.asarray(col)
                arr = arr.astype(float) if not np.issubdtype(arr.dtype, np.number) else arr
            data_vars[key] = xr.DataArray(arr, dims=(SAMPLE,), attrs={"r_name": name})
    ds = xr.Dataset(data_vars, coords={SAMPLE: labels})
    ds.attrs.update({
        "title": "DTI data of the R package refund",
        "source": source,
        "acknowledgment": DTI_ACKNOWLEDGMENT,
        "license": "GPL (>= 2), as the R package refund",
        "refund_version": "0.1-40",
        "description": ("382 scans of 142 subjects (100 multiple sclerosis cases with up to 8 visits, "
                        "42 controls); NaN marks unobserved points"),
    })
    return ds


def _load_with_rdata(path: str) -> xr.Dataset:
    import rdata

    def dataframe(obj: dict, attrs: dict) -> dict:
        # data.frames with matrix columns cannot become pandas frames: keep the columns
        return {"columns": {str(k): v for k, v in obj.items()}, "attrs": attrs}

    class_map = dict(rdata.conversion.DEFAULT_CLASS_MAP)
    class_map["data.frame"] = dataframe
    converted = rdata.conversion.convert(rdata.parser.parse_file(path), class_map)
    cols = converted["DTI"]["columns"]
    labels = cols["cca"].coords[cols["cca"].dims[0]].values
    cols = {k: (v.values if isinstance(v, xr.DataArray) else v) for k, v in cols.items()}
    return dti_from_columns(cols, labels, source=f"bundled DTI.RData read with rdata ({path})")


def load_dti(source: str = "auto") -> xr.Dataset:
    """Load refund's DTI data as an xarray.Dataset.

    Curves ``cca`` (93 points) and ``rcst`` (55 points) have location dims
    ``cca_loc`` and ``rcst_loc`` with coordinates rescaled to ``[0, 1]``
    (refund stores only the column index); NaN marks unobserved points. The
    scalars ``ID``, ``visit``, ``visit_time``, ``Nscans``, ``case``, ``sex``
    (strings, levels in ``attrs``) and ``pasat`` (NaN for NA) share the
    ``sample`` dim, labelled by the curves' row names such as ``"1001_1"``.
    The data authors' acknowledgment is in ``attrs["acknowledgment"]``.

    Parameters
    ----------
    source : {"auto", "rdata"}
        ``"rdata"`` reads the bundled copy of refund's ``DTI.RData`` without R.

    Returns
    -------
    xarray.Dataset

    Examples
    --------
    >>> ds = load_dti()
    >>> int(ds.rcst.isnull().sum())
    738
    """
    if source in {"auto", "rdata"}:
        return _load_with_rdata(bundled_path())
    raise ValueError(f"unknown source {source!r}; use 'auto' or 'rdata'")


def dti_first_visits(ds: xr.Dataset | None = None) -> xr.Dataset:
    """The paper's sample: first visit of the 100 multiple sclerosis cases.

    Examples
    --------
    >>> dti_first_visits().sizes["sample"]
    100
    """
    ds = load_dti() if ds is None else ds
    keep = (ds["case"] == 1) & (ds["visit"] == 1)
    return ds.isel(sample=np.nonzero(keep.values)[0])
