"""The DTI data set of the R package refund, as a labelled xarray.Dataset."""

from __future__ import annotations

import re
from importlib import resources
from typing import Any

import numpy as np
import xarray as xr

from ..data.functional import SAMPLE

__all__ = ["DTI_ACKNOWLEDGMENT", "dti_first_visits", "dti_from_columns", "load_dti", "load_refund", "refund_available"]

_SOURCES = ("auto", "refund", "r", "rdata")

DTI_ACKNOWLEDGMENT = "The MRI/DTI data were collected at Johns Hopkins University and the Kennedy-Krieger Institute."

_SCALARS = ("ID", "visit", "visit.time", "Nscans", "case", "sex", "pasat")
_CURVES = ("cca", "rcst")
# R storage types of refund's columns (pasat is integer with NA, here float with NaN)
_R_TYPES = {"ID": "double", "visit": "integer", "visit.time": "integer", "Nscans": "integer", "case": "double",
            "pasat": "integer"}


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
    data_vars: dict[str, Any] = {}  # R's column order: scalars, then curves
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
            data_vars[key] = xr.DataArray(arr, dims=(SAMPLE,), attrs={"r_name": name, "r_type": _R_TYPES[name]})
    order = [name.replace(".", "_") for name in _SCALARS] + list(_CURVES)
    ds = xr.Dataset({key: data_vars[key] for key in order}, coords={SAMPLE: labels})
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
    return dti_from_columns(cols, labels, source=f"bundled DTI.RData read with rdata ({shown_path(path)})")


def shown_path(path: str) -> str:
    """A data file's path as the ``source`` attribute shows it: bundled files relative to the package
    (``fdakpl/datasets/data/DTI.RData``), so that a saved model does not tell where fdakpl is installed.

    Examples
    --------
    >>> shown_path(bundled_path())
    'fdakpl/datasets/data/DTI.RData'
    >>> shown_path("/home/me/DTI.RData")
    '/home/me/DTI.RData'
    """
    import os

    folder = os.path.dirname(bundled_path())
    if os.path.dirname(os.path.abspath(path)) == os.path.abspath(folder):
        return f"fdakpl/datasets/data/{os.path.basename(path)}"
    return str(path)


def _load_with_r(code: str, source: str) -> xr.Dataset:
    from ..r.convert import r_columns

    columns, labels, _ = r_columns(code)
    return dti_from_columns(columns, labels, source=source)


def _r_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def refund_available() -> bool:
    """Whether rpy2 works and R's library has the package refund.

    Examples
    --------
    >>> isinstance(refund_available(), bool)
    True
    """
    from ..r.convert import r_eval, rpy2_available

    if not rpy2_available():
        return False
    return bool(r_eval('nzchar(system.file(package = "refund"))')[0])


def _require_refund() -> str:
    from ..r.convert import r_eval

    if not refund_available():
        from ..r.convert import rpy2_available

        if not rpy2_available():
            from ..r.convert import INSTALL_HINT

            raise ImportError("loading from refund goes through R: " + INSTALL_HINT)
        libs = ", ".join(str(v) for v in r_eval(".libPaths()"))
        raise ModuleNotFoundError(
            f"the R package refund is not installed in R's library ({libs}); install it in R with "
            'install.packages("refund"), or load the bundled copy of DTI with load_dti(source="rdata")'
        )
    return str(r_eval('utils::packageDescription("refund")$Version')[0])


def load_dti(source: str = "auto") -> xr.Dataset:
    """Load refund's DTI data as an xarray.Dataset.

    Curves ``cca`` (93 points) and ``rcst`` (55 points) have location dims
    ``cca_loc`` and ``rcst_loc`` with coordinates rescaled to ``[0, 1]``
    (refund stores only the column index); NaN marks unobserved points. The
    scalars ``ID``, ``visit``, ``visit_time``, ``Nscans``, ``case``, ``sex``
    (strings, levels in ``attrs``) and ``pasat`` (NaN for NA) share the
    ``sample`` dim, labelled by the curves' row names such as ``"1001_1"``.
    The data authors' acknowledgment is in ``attrs["acknowledgment"]``.
    Every source gives the same Dataset; only ``attrs["source"]`` differs.

    Parameters
    ----------
    source : {"auto", "refund", "r", "rdata"}
        ``"refund"``: R's ``data("DTI", package = "refund")`` through rpy2
        (needs R, rpy2 and refund). ``"r"``: R's ``load()`` on the copy of
        refund's ``DTI.RData`` bundled with fdakpl, through rpy2.
        ``"rdata"``: the bundled copy read without R (package ``rdata``).
        ``"auto"`` (default): ``"refund"`` when rpy2 starts R and refund is
        installed there, else ``"rdata"`` (also when Python runs inside R
        through reticulate, where rpy2 cannot start).

    Returns
    -------
    xarray.Dataset
        One row per visit (``sample``): the tract profiles ``cca`` and ``rcst`` on their own
        locations in ``[0, 1]`` (NaN where not observed), the scalar covariates, and the source,
        licence and acknowledgment in the attributes.

    Raises
    ------
    ImportError
        ``"refund"`` or ``"r"`` without rpy2.
    ModuleNotFoundError
        ``"refund"`` without the R package refund.

    Examples
    --------
    >>> ds = load_dti()
    >>> int(ds.rcst.isnull().sum())
    738
    >>> ds.equals(load_dti(source="rdata"))  # same data and labels whatever the source
    True
    """
    if source not in _SOURCES:
        raise ValueError(f"unknown source {source!r}; use one of {', '.join(map(repr, _SOURCES))}")
    if source == "auto":
        source = "refund" if refund_available() else "rdata"
    if source == "refund":
        version = _require_refund()
        return _load_with_r('local({e <- new.env(); utils::data("DTI", package = "refund", envir = e); e$DTI})',
                            source=f'R package refund {version}: data("DTI", package = "refund"), read with rpy2')
    path = bundled_path()
    if source == "r":
        return _load_with_r(f"local({{e <- new.env(); load({_r_string(path)}, envir = e); e$DTI}})",
                            source=f"bundled DTI.RData loaded by R and read with rpy2 ({path})")
    return _load_with_rdata(path)


def load_refund(name: str, grids: Any = "auto") -> xr.Dataset:
    """Load one of refund's data sets through R (rpy2) as an xarray.Dataset.

    Data frames convert with :func:`fdakpl.r.convert.r_to_xarray` (matrix columns,
    plain or ``I()``, become functional variables); a numeric matrix becomes
    a Dataset with one functional variable named ``name``. For ``"DTI"``
    prefer :func:`load_dti`, which also rescales the locations to ``[0, 1]``
    and labels the variables.

    Parameters
    ----------
    name : str
        A data set of refund, e.g. ``"gasoline"``, ``"DTI2"``, ``"cd4"``.
    grids : "auto", "index", "unit" or dict
        Locations of matrix columns (see :func:`fdakpl.r.convert.r_to_xarray`; ``"auto"``: numeric
        column names, else the column index).

    Returns
    -------
    xarray.Dataset
        The data set's columns as variables, matrix columns as functional variables
        (``sample`` x their locations).

    Raises
    ------
    ImportError
        Without rpy2.
    ModuleNotFoundError
        Without the R package refund.
    ValueError
        If refund has no data set ``name``.
    TypeError
        If the data set is neither a data.frame nor a numeric matrix.

    Examples
    --------
    >>> if refund_available():
    ...     _ = load_refund("DTI")
    """
    from ..r.convert import r_eval, r_to_xarray

    version = _require_refund()
    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z.][A-Za-z0-9._]*", name):
        raise ValueError(f"{name!r} is not the name of an R data set")
    listed = [str(v) for v in r_eval('utils::data(package = "refund")$results[, "Item"]')]
    items = {item.split(" ")[0] for item in listed}
    if name not in items:
        raise ValueError(f"refund {version} has no data set {name!r}; it has: {', '.join(sorted(items))}")
    code = (f'local({{e <- new.env(); utils::data({_r_string(name)}, package = "refund", envir = e); '
            f'x <- get({_r_string(name)}, envir = e); '
            f'if (is.matrix(x) && is.numeric(x)) x <- structure(list(x), names = {_r_string(name)}, '
            'class = "data.frame", row.names = if (is.null(rownames(x))) .set_row_names(nrow(x)) else rownames(x)); '
            'x})')
    cls = [str(v) for v in r_eval(f"class({code})")]
    if "data.frame" not in cls:
        raise TypeError(
            f"refund's {name!r} is an R object of class {cls}; load_refund converts data.frames and numeric "
            "matrices only (use rpy2 directly for others)"
        )
    ds = r_to_xarray(code, grids=grids)
    ds.attrs.update({"title": f"{name} data of the R package refund",
                     "source": f'R package refund {version}: data("{name}", package = "refund"), read with rpy2',
                     "license": "GPL (>= 2), as the R package refund"})
    if name.startswith("DTI"):
        ds.attrs["acknowledgment"] = DTI_ACKNOWLEDGMENT
    return ds


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
