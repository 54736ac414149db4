"""R data.frames ⇄ xarray through rpy2 (Python drives R).

:func:`r_to_xarray` turns an R ``data.frame`` whose columns are numeric vectors,
factors, logicals, characters and matrix columns (plain as in refund's ``DTI``,
or ``I()``/AsIs as refund's simulators make them) into an :class:`xarray.Dataset`;
:func:`xarray_to_r` goes back. Neither rpy2's pandas converter nor reticulate
converts a data.frame with a matrix column, so both convert column by column.
The R package's own entry points (reticulate, R drives Python) are in
:mod:`fdakpl.r.bridge`.

Conventions of the conversion (R → xarray)
------------------------------------------
* Every column becomes a variable named as in R (``visit.time`` stays
  ``visit.time``); a matrix column ``x`` gets the location dim ``x_loc``,
  whose coordinate is the column index ``1..m`` (``grids="index"``, what R
  stores), ``linspace(0, 1, m)`` (``grids="unit"``, what
  :func:`fdakpl.datasets.load_dti` uses) or an explicit grid; R's column names
  go to the coordinate ``x_colname`` on that dim.
* Sample labels: the row names of the first matrix column that has them
  (refund's DTI labels its curves ``"1001_1"`` so, and they survive row
  subsetting, unlike automatic row names), else the data.frame's row names.
  Row names that differ from the labels are kept in the coordinates
  ``r_row_name`` (the data.frame's) and ``x_rowname`` (a matrix column's).
* R ``NA`` and ``NaN`` both become ``NaN`` (the bits are kept, so a round trip
  gives R's ``NA`` back); integer and logical columns with ``NA`` become
  float (``attrs["r_type"]`` remembers the R type), character and factor
  columns with ``NA`` become ``object`` arrays holding ``NaN``.
* Factors become their labels with ``attrs["levels"]`` (and
  ``attrs["r_class"]``, e.g. ``["ordered", "factor"]``); other classes
  (``AsIs``, ``Date``, ``POSIXct``, ``difftime``) are kept in
  ``attrs["r_class"]``, and the one-string attributes ``tzone`` (POSIXct)
  and ``units`` (difftime) in ``attrs["r_tzone"]`` and ``attrs["r_units"]``.
* What cannot be represented is refused, naming the column: any other R
  attribute, duplicated or empty column names, a column named ``sample`` or
  like a coordinate made for a matrix column (``x_loc`` next to ``x``), NA
  row names, arrays of three or more dims.

rpy2 (``pip install "fdakpl[r]"``, which needs R) is imported only when a
function that needs it is called.

Examples
--------
>>> location_grid("y", 3, "unit").tolist()
[0.0, 0.5, 1.0]
"""

from __future__ import annotations

import ctypes
import sys
from collections.abc import Mapping
from typing import Any

import numpy as np
import xarray as xr

from ..data.functional import SAMPLE
from .columns import (
    check_matrix_names,
    check_names,
    check_option_keys,
    location_grid,
    na_level_label,
    numeric_names,
)

__all__ = [
    "INSTALL_HINT",
    "inside_r",
    "r_columns",
    "r_eval",
    "r_to_xarray",
    "rpy2_available",
    "xarray_to_r",
]

#: what to install for the rpy2 converters (shown when rpy2 or R is missing)
INSTALL_HINT = (
    'rpy2 is needed for this (R must be installed first); install it with pip install "fdakpl[r]" '
    "(rpy2>=3.5.17,<3.6: rpy2 3.6 needs R >= 4.5)"
)

_INT_NA = np.iinfo(np.int32).min


# --------------------------------------------------------------------------- rpy2 access


def inside_r() -> bool:
    """Whether this Python runs embedded in an R process (reticulate) without rpy2.

    Starting rpy2 there would start a second R in the same process, so the
    loaders then avoid rpy2.

    Examples
    --------
    >>> isinstance(inside_r(), bool)
    True
    """
    if "rpy2.rinterface" in sys.modules:
        return False
    try:
        ctypes.CDLL(None).R_GlobalEnv  # noqa: B018 - a symbol of libR, present only in an R process
    except (AttributeError, OSError):
        return False
    return True


def rpy2_available() -> bool:
    """Whether rpy2 can be imported and can start R.

    Examples
    --------
    >>> isinstance(rpy2_available(), bool)
    True
    """
    if inside_r():
        return False
    try:
        _robjects()
    except Exception:  # rpy2 missing, or R cannot start: either way no rpy2
        return False
    return True


def _robjects() -> Any:
    if inside_r():
        raise RuntimeError(
            "this Python runs inside R (reticulate); rpy2 cannot start a second R here. "
            "Convert on the R side (the fdakpl R package sends plain matrices and vectors)"
        )
    import os

    # rpy2 prepends R's library directories to LD_LIBRARY_PATH when it starts R. Child processes
    # (joblib/loky workers, subprocesses) would then load the system libpython instead of this
    # interpreter's and fail to import anything; R itself no longer needs it once loaded.
    saved = os.environ.get("LD_LIBRARY_PATH")
    try:
        import rpy2.robjects as ro
    except ImportError as exc:
        raise ImportError(INSTALL_HINT) from exc
    finally:
        if saved is None:
            os.environ.pop("LD_LIBRARY_PATH", None)
        else:
            os.environ["LD_LIBRARY_PATH"] = saved
    return ro


def _rfun(name: str) -> Any:
    return _robjects().baseenv[name]


def r_eval(code: str) -> Any:
    """Evaluate R code through rpy2 (default converter), e.g. to ask R which packages it has.

    Examples
    --------
    >>> if rpy2_available():
    ...     assert int(r_eval("1L + 1L")[0]) == 2
    """
    ro = _robjects()
    with ro.default_converter.context():
        return ro.r(code)


def _strings(x: Any) -> list[str | None]:
    ro = _robjects()
    return [None if v is ro.NA_Character else str(v) for v in x]


def _maybe_strings(x: Any) -> list[str] | None:
    ro = _robjects()
    if x is ro.NULL or x is None or isinstance(x, type(ro.NULL)):
        return None
    return [str(v) for v in _strings(x)]


def _classes(x: Any) -> list[str]:
    cls = _rfun("oldClass")(x)
    return [] if cls is _robjects().NULL else [str(c) for c in cls]


def _numbers(x: Any, name: str) -> tuple[np.ndarray, str]:
    """Values of a numeric/logical vector or matrix as float or int32, with its R type."""
    rtype = str(_rfun("typeof")(x)[0])
    if rtype not in {"double", "integer", "logical"}:
        raise TypeError(
            f"column {name!r} has R type {rtype!r}; only numeric, integer, logical, character and factor columns "
            f"(and numeric matrix columns) convert; convert it in R first, e.g. as.numeric(df${name})"
        )
    dtype = np.float64 if rtype == "double" else np.int32
    if int(_rfun("length")(x)[0]) == 0:  # memoryview() cannot cast an empty vector
        return np.empty(0, dtype=dtype), rtype
    return np.array(x.memoryview(), dtype=dtype), rtype


# attributes a column may carry: the ones the conversion represents, and the one-string attributes it keeps
_HANDLED_ATTRIBUTES = {"class", "levels", "dim", "dimnames"}
_KEPT_ATTRIBUTES = ("tzone", "units")


def _kept_attributes(x: Any, name: str) -> dict[str, str]:
    """``tzone``/``units`` of a column (kept); any other attribute cannot be represented and is refused."""
    attrs = _rfun("attributes")(x)
    if attrs is _robjects().NULL or isinstance(attrs, type(_robjects().NULL)):
        return {}
    kept: dict[str, str] = {}
    names = [str(v) for v in attrs.names]
    for key, value in zip(names, attrs, strict=True):
        if key in _HANDLED_ATTRIBUTES:
            continue
        strings = _maybe_strings(value) if str(_rfun("typeof")(value)[0]) == "character" else None
        if key in _KEPT_ATTRIBUTES and strings is not None and len(strings) == 1:
            kept[key] = strings[0]
            continue
        raise ValueError(
            f"column {name!r} has the R attribute {key!r}, which does not convert; remove it in R first, "
            f"e.g. attr(df${name}, {key!r}) <- NULL"
        )
    return kept


# --------------------------------------------------------------------------- R -> Python


def r_columns(df: Any) -> tuple[dict[str, Any], np.ndarray, dict[str, dict[str, Any]]]:
    """Split an R data.frame (rpy2 object) into NumPy columns, sample labels and metadata.

    Parameters
    ----------
    df : rpy2 DataFrame or R expression (str)
        An R ``data.frame``; a string is evaluated in R's global environment.

    Returns
    -------
    columns : dict
        ``name ->`` float64 (NaN for NA/NaN) or int32 array for numeric
        columns, :class:`pandas.Categorical` for factors, bool array for
        logicals without NA, ``object`` array of ``str`` (NaN for NA) for
        characters, ``(n, m)`` float64 array for matrix columns.
    sample_labels : numpy.ndarray of str
    info : dict
        Per column: ``r_type``, ``r_class``, and for matrix columns
        ``colnames`` and ``rownames`` (None when absent); under the key
        ``""``: ``r_row_names`` (``"automatic"``, ``"integer"`` or ``"names"``) and
        ``row_names``.

    Examples
    --------
    >>> cols, labels, info = r_columns('data.frame(x = c(1, NA), f = factor(c("b", NA), levels = c("b", "a")))')
    >>> cols["x"], list(cols["f"].categories), cols["f"].codes.tolist(), labels.tolist()
    (array([ 1., nan]), ['b', 'a'], [0, -1], ['1', '2'])
    """
    import pandas as pd

    ro = _robjects()
    with ro.default_converter.context():
        if isinstance(df, str):
            df = ro.r(df)
        if "data.frame" not in _classes(df):
            cls = [str(c) for c in _rfun("class")(df)]  # R's implicit class ("list", "matrix") when unclassed
            fix = (" (a named list of equal-length columns converts as data.frame(lapply(x, I)))"
                   if cls == ["list"] else "")
            raise TypeError(f"expected an R data.frame, got an R object of class {'/'.join(cls)}{fix}")
        raw_names = _strings(_rfun("names")(df)) if int(_rfun("length")(df)[0]) else []
        check_names(raw_names)
        names = [str(v) for v in raw_names]
        n = int(_rfun("nrow")(df)[0])
        columns: dict[str, Any] = {}
        info: dict[str, dict[str, Any]] = {}
        matrix_rownames: list[str] | None = None
        for i, name in enumerate(names):
            x = df[i]
            cls = _classes(x)
            dim = _rfun("dim")(x)
            if dim is not ro.NULL and int(_rfun("length")(dim)[0]) != 2:
                raise ValueError(f"column {name!r} is an array with {int(_rfun('length')(dim)[0])} dims; "
                                 "only vectors and matrices (one curve per row) convert")
            na = _numbers(_rfun("is.na")(x), name)[0].astype(bool)
            meta: dict[str, Any] = {"r_class": [c for c in cls if c not in {"matrix", "array"}],
                                    "kept": _kept_attributes(x, name)}
            if bool(_rfun("is.matrix")(x)[0]):
                values, rtype = _numbers(x, name)
                shape = tuple(int(v) for v in dim)
                if shape[0] != n:
                    raise ValueError(f"matrix column {name!r} has {shape[0]} rows; the data.frame has {n}")
                if values.ndim != 2:
                    values = values.reshape(shape, order="F")
                if rtype != "double":
                    values = values.astype(np.float64)
                    values[na.reshape(values.shape, order="F")] = np.nan
                dimnames = _rfun("dimnames")(x)
                rown = coln = dimnames_names = None
                if dimnames is not ro.NULL:
                    rown, coln = _maybe_strings(dimnames[0]), _maybe_strings(dimnames[1])
                    dimnames_names = _maybe_strings(_rfun("names")(dimnames))
                if rown is not None and any(v is None for v in _strings(dimnames[0])):
                    raise ValueError(f"matrix column {name!r} has NA row names; give every row a name in R")
                if coln is not None and any(v is None for v in _strings(dimnames[1])):
                    raise ValueError(f"matrix column {name!r} has NA column names; name every column in R, "
                                     f"e.g. colnames(df${name}) <- make.unique(...), or drop them with "
                                     f"colnames(df${name}) <- NULL")
                if rown is not None and matrix_rownames is None and len(set(rown)) == len(rown):
                    matrix_rownames = rown
                meta.update(r_type=rtype, colnames=coln, rownames=rown, matrix=True, dimnames_names=dimnames_names)
                columns[name] = values
            elif "factor" in cls:
                codes = _numbers(_rfun("unclass")(x), name)[0]
                levels = _strings(_rfun("levels")(x))
                na_level = None
                if None in levels:  # addNA(): NA is a level; it gets a label no other level has
                    na_level = na_level_label([v for v in levels if v is not None])
                    levels = [na_level if v is None else v for v in levels]
                columns[name] = pd.Categorical.from_codes(np.where(codes == _INT_NA, -1, codes - 1),
                                                          categories=levels, ordered="ordered" in cls)
                meta.update(r_type="integer", levels=levels, na_level=na_level)
            elif str(_rfun("typeof")(x)[0]) == "character":
                vals = np.array(_strings(x), dtype=object)
                vals[na] = np.nan
                columns[name] = vals if na.any() else vals.astype(str)
                meta.update(r_type="character")
            elif str(_rfun("typeof")(x)[0]) == "list":
                raise TypeError(f"column {name!r} is a list column; only atomic and matrix columns convert")
            else:
                values, rtype = _numbers(x, name)
                if rtype == "double":
                    pass
                elif na.any():
                    values = values.astype(np.float64)
                    values[na] = np.nan
                elif rtype == "logical":
                    values = values.astype(bool)
                meta.update(r_type=rtype)
                columns[name] = values
            info[name] = meta
        automatic = int(_rfun(".row_names_info")(df)[0]) < 0
        row_names = [str(v) for v in _strings(_rfun("row.names")(df))]
        labels = np.array(matrix_rownames if matrix_rownames is not None else row_names, dtype=str)
        integer = str(r_eval("function(d) typeof(attr(d, 'row.names'))")(df)[0]) == "integer"
        kind = "automatic" if automatic else ("integer" if integer else "names")
        info[""] = {"r_row_names": kind, "row_names": row_names}
    check_matrix_names(names, [k for k, v in info.items() if v.get("matrix")])
    return columns, labels, info


def r_to_xarray(df: Any, grids: Any = "auto") -> xr.Dataset:
    """Convert an R data.frame (through rpy2) into an xarray.Dataset.

    Parameters
    ----------
    df : rpy2 DataFrame or str
        The data.frame, or R code that evaluates to it (e.g.
        ``'local({load("DTI.RData"); DTI})'``).
    grids : "auto", "index", "unit", or dict
        Locations of the matrix columns: ``"auto"`` (default) reads column names that
        are all numbers (irregular times ``"0.5"``, ``"2.25"``; wavenumbers, increasing
        or decreasing) as the locations, as the R package's ``kpl()`` does, and uses the
        column index otherwise; ``"index"``: the column index ``1..m``; ``"unit"``:
        ``linspace(0, 1, m)``; or a dict mapping a column name to one of these or an
        array of ``m`` locations (columns not named get ``"auto"``).

    Returns
    -------
    xarray.Dataset
        See the module docstring for the conventions; :func:`xarray_to_r`
        inverts it exactly.

    Examples
    --------
    >>> ds = r_to_xarray('data.frame(x = c(1, NA), y = I(matrix(1:4, 2)), row.names = c("a", "b"))')
    >>> ds["y"].dims, ds["y"].values.tolist(), ds["y_loc"].values.tolist(), ds["sample"].values.tolist()
    (('sample', 'y_loc'), [[1.0, 3.0], [2.0, 4.0]], [1.0, 2.0], ['a', 'b'])
    """
    columns, labels, info = r_columns(df)
    check_option_keys("grids=", grids, {k: "matrix" if info[k].get("matrix") else "vector" for k in columns},
                       "matrix")
    data_vars: dict[str, xr.DataArray] = {}
    for name, values in columns.items():
        meta = info[name]
        attrs: dict[str, Any] = {"r_type": meta["r_type"]}
        if meta["r_class"]:
            attrs["r_class"] = list(meta["r_class"])
        for key, value in meta["kept"].items():
            attrs[f"r_{key}"] = value
        if meta.get("matrix"):
            loc = f"{name}_loc"
            spec = grids.get(name, "auto") if isinstance(grids, Mapping) else grids
            if isinstance(spec, str) and spec == "auto":
                spec = numeric_names(meta["colnames"], name)
            coords: dict[str, Any] = {loc: location_grid(name, values.shape[1], spec, monotone=True)}
            if meta["colnames"] is not None:
                coords[f"{name}_colname"] = (loc, np.array(meta["colnames"], dtype=str))
            if meta["dimnames_names"] is not None:
                attrs["r_dimnames_names"] = list(meta["dimnames_names"])
            if meta["rownames"] is None:
                attrs["r_rownames"] = "none"
            elif meta["rownames"] != labels.tolist():
                coords[f"{name}_rowname"] = (SAMPLE, np.array(meta["rownames"], dtype=str))
            data_vars[name] = xr.DataArray(values, dims=(SAMPLE, loc), coords=coords, attrs=attrs)
            continue
        if "levels" in meta:
            attrs["levels"] = list(meta["levels"])
            if meta["na_level"] is not None:
                attrs["r_na_level"] = meta["na_level"]
            codes = np.asarray(values.codes)
            labels_arr = np.asarray(values.categories, dtype=object)[np.clip(codes, 0, None)] if codes.size else \
                np.array([], dtype=object)
            if (codes < 0).any():
                labels_arr = labels_arr.astype(object)
                labels_arr[codes < 0] = np.nan
            else:
                labels_arr = labels_arr.astype(str)
            values = labels_arr
        data_vars[name] = xr.DataArray(values, dims=(SAMPLE,), attrs=attrs)
    ds = xr.Dataset(data_vars, coords={SAMPLE: labels})
    ds.attrs["r_row_names"] = info[""]["r_row_names"]
    if info[""]["row_names"] != labels.tolist():  # automatic ones too: rows subset in Python keep their numbers
        ds = ds.assign_coords(r_row_name=(SAMPLE, np.array(info[""]["row_names"], dtype=str)))
    return ds


# --------------------------------------------------------------------------- Python -> R


def _r_name(name: Any, da: xr.DataArray) -> str:
    return str(da.attrs.get("r_name", name))


def _classes_attr(da: xr.DataArray) -> list[str]:
    cls = da.attrs.get("r_class", [])
    return [cls] if isinstance(cls, str) else [str(c) for c in cls]


def _na_mask(values: np.ndarray) -> np.ndarray:
    if values.dtype.kind == "f":
        return np.isnan(values)
    if values.dtype.kind == "O":
        return np.array([v is None or (isinstance(v, float) and np.isnan(v)) for v in values], dtype=bool)
    return np.zeros(values.shape, dtype=bool)


def _r_vector(values: np.ndarray, rtype: str, name: str) -> Any:
    ro = _robjects()
    na = _na_mask(values)
    if rtype == "double":
        return ro.FloatVector(np.asarray(values, dtype=np.float64).ravel(order="F"))
    if rtype in {"integer", "logical"}:
        ints = np.where(na, 0, values).astype(np.float64)
        if np.any(ints != np.round(ints)) or np.any(np.abs(ints) > np.iinfo(np.int32).max):
            raise ValueError(f"variable {name!r} is marked as R {rtype} but holds non-integer values")
        raw = np.where(na, _INT_NA, ints.astype(np.int64)).astype(np.int32).ravel(order="F")
        vec = ro.IntVector(raw)
        return _rfun("as.logical")(vec) if rtype == "logical" else vec
    if rtype == "character":
        flat = values.ravel(order="F")
        return ro.StrVector([ro.NA_Character if m else str(v) for v, m in zip(flat, na.ravel(order="F"), strict=True)])
    raise ValueError(f"unknown R type {rtype!r} for {name!r}")


def _factor_codes(values: np.ndarray, levels: list[str], name: str) -> np.ndarray:
    """R's 1-based factor codes of labels (NA_integer_ for NaN/None)."""
    na = _na_mask(values)
    lookup = {lev: i + 1 for i, lev in enumerate(levels)}
    unknown = sorted({str(v) for v, m in zip(values, na, strict=True) if not m and str(v) not in lookup})
    if unknown:
        raise ValueError(f"factor {name!r} has values {unknown} that are not among its levels {levels}")
    return np.array([_INT_NA if m else lookup[str(v)] for v, m in zip(values, na, strict=True)], dtype=np.int32)


def _rtype_of(da: xr.DataArray) -> str:
    rtype = da.attrs.get("r_type")
    kind = da.dtype.kind
    if kind in "US" or kind == "O":
        return "character"
    if kind == "b":
        return "logical"
    if rtype in {"integer", "logical", "double"}:
        return str(rtype)
    if kind in "iu":
        vals = np.asarray(da.values)
        fits = vals.size == 0 or (vals.min() > np.iinfo(np.int32).min and vals.max() <= np.iinfo(np.int32).max)
        return "integer" if fits else "double"
    if kind == "f":
        return "double"
    raise TypeError(f"variable {da.name!r} has dtype {da.dtype}; only numbers, booleans and strings convert to R")


def xarray_to_r(ds: xr.Dataset) -> Any:
    """Convert an xarray.Dataset into an R data.frame (rpy2 object).

    Variables with dims ``("sample",)`` become vectors (factors when
    ``attrs["levels"]`` is set), variables with ``("sample", <loc>)`` become
    matrix columns (AsIs when ``attrs["r_class"]`` says so) with the sample
    labels as row names and ``<name>_colname`` (if present) as column names.
    ``attrs["r_name"]`` renames a variable (``visit_time`` → ``visit.time``).
    NaN becomes ``NA`` in integer, logical, character and factor columns.

    Parameters
    ----------
    ds : xarray.Dataset

    Returns
    -------
    rpy2.robjects.vectors.DataFrame

    Examples
    --------
    >>> from fdakpl import datasets
    >>> df = xarray_to_r(datasets.load_dti(source="rdata"))
    >>> list(df.names)[:3], tuple(df.rx2("rcst").dim)
    (['ID', 'visit', 'visit.time'], (382, 55))
    """
    ro = _robjects()
    if not isinstance(ds, xr.Dataset):
        raise TypeError(f"expected an xarray.Dataset, got {type(ds).__name__}")
    if SAMPLE not in ds.dims:
        raise ValueError(f"the Dataset has dims {tuple(ds.dims)} but no 'sample' dim")
    n = ds.sizes[SAMPLE]
    labels = [str(v) for v in np.asarray(ds[SAMPLE].values)] if SAMPLE in ds.coords else \
        [str(i + 1) for i in range(n)]
    with ro.default_converter.context():
        cols: list[Any] = []
        names: list[str] = []
        for name, da in ds.data_vars.items():
            rname = _r_name(name, da)
            if da.dims == (SAMPLE,):
                values = np.asarray(da.values)
                if "levels" in da.attrs:
                    levels = [str(v) for v in np.atleast_1d(da.attrs["levels"])]
                    if len(set(levels)) < len(levels):
                        dup = sorted({v for v in levels if levels.count(v) > 1})
                        raise ValueError(f"factor {name!r} has duplicated levels {dup}; R's factor levels are unique")
                    vec = ro.IntVector(_factor_codes(values, levels, str(name)))
                    na_level = da.attrs.get("r_na_level")
                    r_levels = ro.StrVector([ro.NA_Character if v == na_level else v for v in levels])
                    vec = _rfun("structure")(vec, levels=r_levels,
                                             **{"class": ro.StrVector(_classes_attr(da) or ["factor"])})
                else:
                    vec = _r_vector(values, _rtype_of(da), str(name))
                    cls = _classes_attr(da)
                    kept = {key: ro.StrVector([str(da.attrs[f"r_{key}"])]) for key in _KEPT_ATTRIBUTES
                            if f"r_{key}" in da.attrs}
                    if cls:
                        kept["class"] = ro.StrVector(cls)
                    if kept:
                        vec = _rfun("structure")(vec, **kept)
            elif len(da.dims) == 2 and da.dims[0] == SAMPLE:
                loc = da.dims[1]
                rtype = _rtype_of(da)
                if rtype == "character":
                    raise TypeError(f"variable {name!r} holds strings; matrix columns must be numeric")
                vec = _r_vector(np.asarray(da.values), rtype, str(name))
                colname = f"{name}_colname"
                coln = ro.StrVector([str(v) for v in ds[colname].values]) if colname in da.coords else ro.NULL
                rowname = f"{name}_rowname"
                if rowname in da.coords:
                    rown = ro.StrVector([str(v) for v in da[rowname].values])
                elif da.attrs.get("r_rownames") == "none":
                    rown = ro.NULL
                else:
                    rown = ro.StrVector(labels)
                dimnames = ro.NULL if (rown is ro.NULL and coln is ro.NULL) else _rfun("list")(rown, coln)
                dn_names = da.attrs.get("r_dimnames_names")
                if dimnames is not ro.NULL and dn_names is not None:
                    dn_names = [str(v) for v in np.atleast_1d(dn_names)]
                    if len(dn_names) != 2:
                        raise ValueError(f"variable {name!r}: attrs['r_dimnames_names'] must hold 2 names, "
                                         f"got {dn_names}")
                    dimnames = _rfun("structure")(dimnames, names=ro.StrVector(dn_names))
                vec = _rfun("structure")(vec, dim=ro.IntVector([n, da.sizes[loc]]), dimnames=dimnames)
                cls = _classes_attr(da)
                if cls:
                    vec = _rfun("structure")(vec, **{"class": ro.StrVector(cls)})
            else:
                raise ValueError(
                    f"variable {name!r} has dims {da.dims}; only ('sample',) and ('sample', <location>) convert "
                    "to data.frame columns"
                )
            cols.append(vec)
            names.append(rname)
        dup = sorted({v for v in names if names.count(v) > 1})
        if dup:
            raise ValueError(f"several variables become the R column {dup[0]!r} (their attrs['r_name']); "
                             "R's data.frame names must be unique: rename them")
        names_ = [str(v) for v in ds["r_row_name"].values] if "r_row_name" in ds.coords else labels
        kind = ds.attrs.get("r_row_names")
        if kind == "automatic" and names_ != [str(i + 1) for i in range(n)]:
            # automatic row names of rows subset or reordered in Python: R keeps their numbers, c(3L, 6L)
            kind = "integer"
        if kind == "automatic":
            row_names = ro.IntVector([_INT_NA, -n])
        elif kind == "integer" and all(v.lstrip("-").isdigit() for v in names_):
            row_names = ro.IntVector([int(v) for v in names_])
        else:
            row_names = ro.StrVector(names_)
        out = _rfun("structure")(_rfun("list")(*cols), names=ro.StrVector(names),
                                 **{"class": ro.StrVector(["data.frame"]), "row.names": row_names})
        return out
