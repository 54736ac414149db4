"""R interoperability: R data.frames ⇄ xarray, and the entry points of the R package.

Two bridges meet here.

* **rpy2** (Python drives R): :func:`r_to_xarray` turns an R ``data.frame`` whose
  columns are numeric vectors, factors, logicals, characters and matrix columns
  (plain matrices as in refund's ``DTI``, or ``I()``/AsIs matrices as refund's
  simulators make them) into an :class:`xarray.Dataset`; :func:`xarray_to_r`
  goes back. Neither rpy2's pandas converter nor reticulate converts a
  data.frame with a matrix column, so both convert column by column.
* **reticulate** (R drives Python, the R package in ``r-bridge/``):
  :func:`dataset_from_columns`, :func:`fit_from_r`, :func:`results_for_r` and
  :func:`predict_from_r` take and return only plain arrays, lists and
  strings, so that the R side never handles an xarray object.

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
  (``AsIs``, ``Date``) are kept in ``attrs["r_class"]``; other R attributes
  are dropped.

rpy2 (``pip install "fdakpl[r]"``, which needs R) is imported only when a
function that needs it is called.

Examples
--------
>>> ds = dataset_from_columns({"y": np.arange(6.0).reshape(2, 3), "g": np.array([2.0, 1.0])},
...                           sample_labels=["a", "b"], factor_levels={"g": ["lo", "hi"]})
>>> ds["y"].dims, ds["g"].values.tolist(), ds["g"].attrs["levels"]
(('sample', 'y_loc'), ['hi', 'lo'], ['lo', 'hi'])
"""

from __future__ import annotations

import ctypes
import sys
from collections.abc import Mapping
from typing import Any

import numpy as np
import xarray as xr

from ..data.functional import SAMPLE

__all__ = [
    "dataset_from_columns",
    "fit_from_r",
    "inside_r",
    "predict_from_r",
    "r_columns",
    "r_to_xarray",
    "results_for_r",
    "rpy2_available",
    "xarray_to_r",
]

_INSTALL_HINT = (
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
        raise ImportError(_INSTALL_HINT) from exc
    finally:
        if saved is None:
            os.environ.pop("LD_LIBRARY_PATH", None)
        else:
            os.environ["LD_LIBRARY_PATH"] = saved
    return ro


def _rfun(name: str) -> Any:
    return _robjects().baseenv[name]


def _r(code: str) -> Any:
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
    if rtype == "double":
        return np.array(x.memoryview(), dtype=np.float64), rtype
    if rtype in {"integer", "logical"}:
        raw = np.array(x.memoryview(), dtype=np.int32)
        return raw, rtype
    raise TypeError(
        f"column {name!r} has R type {rtype!r}; only numeric, integer, logical, character and factor columns "
        f"(and numeric matrix columns) convert; convert it in R first, e.g. as.numeric(df${name})"
    )


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
            raise TypeError(f"expected an R data.frame, got an R object of class {_classes(df) or 'unknown'}")
        names = [str(v) for v in _rfun("names")(df)]
        n = int(_rfun("nrow")(df)[0])
        columns: dict[str, Any] = {}
        info: dict[str, dict[str, Any]] = {}
        matrix_rownames: list[str] | None = None
        for i, name in enumerate(names):
            x = df[i]
            cls = _classes(x)
            na = np.array(_rfun("is.na")(x).memoryview(), dtype=np.int32).astype(bool)
            meta: dict[str, Any] = {"r_class": [c for c in cls if c not in {"matrix", "array"}]}
            if bool(_rfun("is.matrix")(x)[0]):
                values, rtype = _numbers(x, name)
                if values.ndim != 2 or values.shape[0] != n:
                    raise ValueError(f"matrix column {name!r} has shape {values.shape}; the data.frame has {n} rows")
                if rtype != "double":
                    values = values.astype(np.float64)
                    values[na.reshape(values.shape, order="F")] = np.nan
                dimnames = _rfun("dimnames")(x)
                rown = coln = None
                if dimnames is not ro.NULL:
                    rown, coln = _maybe_strings(dimnames[0]), _maybe_strings(dimnames[1])
                if rown is not None and matrix_rownames is None:
                    matrix_rownames = rown
                meta.update(r_type=rtype, colnames=coln, rownames=rown, matrix=True)
                columns[name] = values
            elif "factor" in cls:
                codes = np.array(x.memoryview(), dtype=np.int32)
                levels = _strings(_rfun("levels")(x))
                columns[name] = pd.Categorical.from_codes(np.where(codes == _INT_NA, -1, codes - 1),
                                                          categories=levels, ordered="ordered" in cls)
                meta.update(r_type="integer", levels=levels)
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
        integer = str(_r("function(d) typeof(attr(d, 'row.names'))")(df)[0]) == "integer"
        kind = "automatic" if automatic else ("integer" if integer else "names")
        info[""] = {"r_row_names": kind, "row_names": row_names}
    return columns, labels, info


def _check_option_keys(option: str, given: Any, allowed: Mapping[str, str], want: str) -> None:
    """Refuse keys of ``grids=`` / ``factor_levels=`` that name no suitable column (a typo would be ignored)."""
    if not isinstance(given, Mapping):
        return
    bad = sorted(str(k) for k in given if str(k) not in allowed or allowed[str(k)] != want)
    if bad:
        fit = sorted(k for k, kind in allowed.items() if kind == want)
        raise ValueError(f"{option} names {bad}, which are not {want} columns; the {want} columns are {fit} "
                         "(check the spelling)")


def _grid_for(name: str, m: int, grids: Any) -> np.ndarray:
    spec = grids.get(name, "index") if isinstance(grids, Mapping) else grids
    if spec is None or (isinstance(spec, str) and spec == "index"):
        return np.arange(1.0, m + 1.0)
    if isinstance(spec, str) and spec == "unit":
        return np.linspace(0.0, 1.0, m)
    if isinstance(spec, str):
        raise ValueError(f"grid for {name!r} is {spec!r}; use 'index', 'unit' or an array of {m} locations")
    grid = np.asarray(spec, dtype=float).ravel()
    if grid.size != m:
        raise ValueError(f"grid for {name!r} has {grid.size} locations but the matrix column has {m} columns")
    if grid.size > 1 and np.any(np.diff(grid) <= 0):
        raise ValueError(f"grid for {name!r} must be strictly increasing")
    return grid


def r_to_xarray(df: Any, grids: Any = "index") -> xr.Dataset:
    """Convert an R data.frame (through rpy2) into an xarray.Dataset.

    Parameters
    ----------
    df : rpy2 DataFrame or str
        The data.frame, or R code that evaluates to it (e.g.
        ``'local({load("DTI.RData"); DTI})'``).
    grids : "index", "unit", or dict
        Locations of the matrix columns: their column index ``1..m``
        (``"index"``), ``linspace(0, 1, m)`` (``"unit"``), or a dict mapping a
        column name to ``"index"``, ``"unit"`` or an array of ``m`` locations
        (columns not named get ``"index"``).

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
    _check_option_keys("grids=", grids, {k: "matrix" if info[k].get("matrix") else "vector" for k in columns},
                       "matrix")
    data_vars: dict[str, xr.DataArray] = {}
    for name, values in columns.items():
        meta = info[name]
        attrs: dict[str, Any] = {"r_type": meta["r_type"]}
        if meta["r_class"]:
            attrs["r_class"] = list(meta["r_class"])
        if meta.get("matrix"):
            loc = f"{name}_loc"
            coords: dict[str, Any] = {loc: _grid_for(name, values.shape[1], grids)}
            if meta["colnames"] is not None:
                coords[f"{name}_colname"] = (loc, np.array(meta["colnames"], dtype=str))
            if meta["rownames"] is None:
                attrs["r_rownames"] = "none"
            elif meta["rownames"] != labels.tolist():
                coords[f"{name}_rowname"] = (SAMPLE, np.array(meta["rownames"], dtype=str))
            data_vars[name] = xr.DataArray(values, dims=(SAMPLE, loc), coords=coords, attrs=attrs)
            continue
        if "levels" in meta:
            attrs["levels"] = list(meta["levels"])
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
    if info[""]["r_row_names"] != "automatic" and info[""]["row_names"] != labels.tolist():
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
                    vec = ro.IntVector(_factor_codes(values, levels, str(name)))
                    vec = _rfun("structure")(vec, levels=ro.StrVector(levels),
                                             **{"class": ro.StrVector(_classes_attr(da) or ["factor"])})
                else:
                    vec = _r_vector(values, _rtype_of(da), str(name))
                    cls = _classes_attr(da)
                    if cls:
                        vec = _rfun("structure")(vec, **{"class": ro.StrVector(cls)})
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
        names_ = [str(v) for v in ds["r_row_name"].values] if "r_row_name" in ds.coords else labels
        kind = ds.attrs.get("r_row_names")
        if kind == "automatic":
            row_names = ro.IntVector([_INT_NA, -n])
        elif kind == "integer" and all(v.lstrip("-").isdigit() for v in names_):
            row_names = ro.IntVector([int(v) for v in names_])
        else:
            row_names = ro.StrVector(names_)
        out = _rfun("structure")(_rfun("list")(*cols), names=ro.StrVector(names),
                                 **{"class": ro.StrVector(["data.frame"]), "row.names": row_names})
        return out


# --------------------------------------------------------------------------- reticulate entry points


def dataset_from_columns(
    columns: Mapping[str, Any],
    sample_labels: Any = None,
    grids: Mapping[str, Any] | None = None,
    factor_levels: Mapping[str, Any] | None = None,
) -> xr.Dataset:
    """Build a Dataset from plain arrays, as the R package sends them.

    Parameters
    ----------
    columns : mapping
        ``name ->`` a 2-d array (a curve per row: a functional variable with
        location dim ``name_loc``) or a 1-d array (a scalar per sample). NaN
        marks unobserved points and missing values.
    sample_labels : sequence of str, optional
        Defaults to ``"1".."n"``.
    grids : mapping, optional
        ``name ->`` locations of a functional variable; default
        ``linspace(0, 1, m)`` (refund's ``pffr`` default, and
        :func:`fdakpl.datasets.load_dti`'s).
    factor_levels : mapping, optional
        ``name ->`` the levels of a factor; its 1-d column then holds the
        1-based codes (NaN for NA), as R's ``as.integer(f)``.

    Returns
    -------
    xarray.Dataset

    Examples
    --------
    >>> ds = dataset_from_columns({"x": np.ones((3, 4)), "z": [1.0, 2.0, np.nan]})
    >>> ds["x"].coords["x_loc"].values
    array([0.        , 0.33333333, 0.66666667, 1.        ])
    >>> ds["sample"].values.tolist()
    ['1', '2', '3']
    """
    grids = dict(grids or {})
    levels = dict(factor_levels or {})
    if not columns:
        raise ValueError("no columns were given")
    arrays: dict[str, np.ndarray] = {}
    for name, values in columns.items():
        arr = np.asarray(values)
        if arr.ndim == 0:
            arr = arr.reshape(1)
        if arr.dtype.kind not in "fiub":
            raise TypeError(f"column {name!r} has dtype {arr.dtype}; send numbers (factor codes with levels)")
        if arr.ndim not in (1, 2):
            raise ValueError(f"column {name!r} has {arr.ndim} dims; send vectors or matrices")
        arrays[str(name)] = arr.astype(np.float64)
    kinds = {name: "matrix" if arr.ndim == 2 else "vector" for name, arr in arrays.items()}
    _check_option_keys("grids=", grids, kinds, "matrix")
    _check_option_keys("factor_levels=", levels, kinds, "vector")
    for name, arr in arrays.items():
        if arr.ndim == 2 and arr.shape[1] < 2:
            raise ValueError(f"column {name!r} is a matrix with {arr.shape[1]} column; a curve needs at least 2 "
                             "locations (a single value per sample is a scalar: send it as a vector)")
    sizes = {name: arr.shape[0] for name, arr in arrays.items()}
    n = next(iter(sizes.values()))
    if len(set(sizes.values())) > 1:
        raise ValueError(f"columns have different numbers of rows: {sizes}; every column needs one row per sample")
    labels = np.array([str(i + 1) for i in range(n)]) if sample_labels is None else \
        np.asarray(sample_labels, dtype=str).ravel()
    if labels.size != n:
        raise ValueError(f"{labels.size} sample labels for {n} rows")
    data_vars: dict[str, xr.DataArray] = {}
    for name, arr in arrays.items():
        if arr.ndim == 2:
            loc = f"{name}_loc"
            grid = _grid_for(name, arr.shape[1], {name: grids.get(name, "unit")})
            data_vars[name] = xr.DataArray(arr, dims=(SAMPLE, loc), coords={loc: grid})
        elif name in levels:
            levs = [str(v) for v in np.atleast_1d(levels[name])]
            na = np.isnan(arr)
            codes = np.where(na, 1, arr)
            if np.any(codes != np.round(codes)) or np.any((codes < 1) | (codes > len(levs))):
                raise ValueError(f"factor {name!r} has codes outside 1..{len(levs)}")
            vals = np.array(levs, dtype=object)[codes.astype(int) - 1]
            if na.any():
                vals[na] = np.nan
            else:
                vals = vals.astype(str)
            data_vars[name] = xr.DataArray(vals, dims=(SAMPLE,), attrs={"levels": levs, "r_class": "factor"})
        else:
            data_vars[name] = xr.DataArray(arr, dims=(SAMPLE,))
    return xr.Dataset(data_vars, coords={SAMPLE: labels})


def fit_from_r(
    formula: str,
    columns: Mapping[str, Any],
    sample_labels: Any = None,
    grids: Mapping[str, Any] | None = None,
    factor_levels: Mapping[str, Any] | None = None,
    **kwargs: Any,
) -> Any:
    """Fit :class:`fdakpl.FunctionalRegression` on columns sent by R.

    Parameters
    ----------
    formula : str
        E.g. ``"rcst ~ cca + C(sex)"``.
    columns, sample_labels, grids, factor_levels
        As :func:`dataset_from_columns`.
    **kwargs
        Passed to ``FunctionalRegression`` (``dictionary``, ``levels``… R's
        ``lambda`` arrives as ``lam``).

    Returns
    -------
    FunctionalRegressionResults

    Examples
    --------
    >>> from fdakpl import datasets
    >>> ds = datasets.dti_first_visits()
    >>> res = fit_from_r("rcst ~ cca", {"cca": ds.cca.values, "rcst": ds.rcst.values}, ds.sample.values,
    ...                  lam=1e-3, interpolate_inputs=True, progress=False)
    >>> res.fitted.sizes["sample"], float(res.lam)
    (100, 0.001)
    """
    from ..regression import FunctionalRegression

    ds = dataset_from_columns(columns, sample_labels, grids, factor_levels)
    return FunctionalRegression(str(formula), data=ds, **kwargs).fit()


def _plain(x: Any) -> Any:
    if isinstance(x, xr.DataArray):
        return np.asarray(x.values)
    if isinstance(x, np.generic):
        return x.item()
    return x


def results_for_r(res: Any) -> dict[str, Any]:
    """Plain arrays of a fitted model for the R object of class ``kpl``.

    Returns
    -------
    dict
        ``fitted``, ``residuals`` (``(n, m)``, NaN where unobserved),
        ``coef`` (``(n, d)``), ``grid`` (response locations), ``samples``,
        ``lambda``, ``edf``, ``mean_function`` and ``summary`` (text).

    Examples
    --------
    >>> from fdakpl import datasets
    >>> ds = datasets.dti_first_visits()
    >>> res = fit_from_r("rcst ~ cca", {"cca": ds.cca.values, "rcst": ds.rcst.values},
    ...                  lam=1e-3, interpolate_inputs=True, progress=False)
    >>> out = results_for_r(res)
    >>> out["fitted"].shape, out["samples"][:2], out["lambda"]
    ((100, 55), ['1', '2'], 0.001)
    """
    fitted = res.fitted
    loc = next(d for d in fitted.dims if d != SAMPLE)
    return {
        "fitted": np.asarray(fitted.transpose(SAMPLE, loc).values, dtype=float),
        "residuals": np.asarray(res.resid.transpose(SAMPLE, loc).values, dtype=float),
        "coef": np.asarray(_plain(res.coef), dtype=float),
        "grid": np.asarray(fitted[loc].values, dtype=float),
        "location_dim": str(loc),
        "samples": [str(s) for s in np.asarray(fitted[SAMPLE].values)],
        "lambda": float(_plain(res.lam)),
        "edf": float(_plain(res.edf)) if getattr(res, "edf", None) is not None else float("nan"),
        "mean_function": np.asarray(_plain(res.mean_function), dtype=float).ravel()
        if getattr(res, "mean_function", None) is not None else None,
        "summary": str(res.summary()),
    }


def predict_from_r(
    res: Any,
    columns: Mapping[str, Any] | None = None,
    sample_labels: Any = None,
    grids: Mapping[str, Any] | None = None,
    factor_levels: Mapping[str, Any] | None = None,
    at: Any = None,
) -> dict[str, Any]:
    """Predict from R's new data (plain arrays); ``columns=None`` predicts the training samples.

    Returns
    -------
    dict
        ``values`` ``(n, m)``, ``samples`` and ``locations``.

    Examples
    --------
    >>> from fdakpl import datasets
    >>> ds = datasets.dti_first_visits()
    >>> res = fit_from_r("rcst ~ cca", {"cca": ds.cca.values[:70], "rcst": ds.rcst.values[:70]},
    ...                  lam=1e-3, interpolate_inputs=True, progress=False)
    >>> out = predict_from_r(res, {"cca": ds.cca.values[70:]}, at=[0.0, 0.5, 1.0])
    >>> out["values"].shape, out["locations"].tolist()
    ((30, 3), [0.0, 0.5, 1.0])
    """
    newdata = None if columns is None else dataset_from_columns(columns, sample_labels, grids, factor_levels)
    at_arr = None if at is None else np.atleast_1d(np.asarray(at, dtype=float))
    pred = res.predict(newdata=newdata, at=at_arr)
    loc = next(d for d in pred.dims if d != SAMPLE)
    pred = pred.transpose(SAMPLE, loc)
    return {
        "values": np.asarray(pred.values, dtype=float),
        "samples": [str(s) for s in np.asarray(pred[SAMPLE].values)],
        "locations": np.asarray(pred[loc].values, dtype=float),
    }
