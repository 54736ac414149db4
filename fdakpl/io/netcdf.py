"""Saving and loading fitted models in netCDF, without pickle.

:func:`save` writes a fitted :class:`~fdakpl.results.FunctionalRegressionResults`
or :class:`~fdakpl.estimators.kpl.KPLRegressor` to one netCDF file; :func:`load`
reads it back. The file is plain netCDF that any tool (``ncdump``, R's
``ncdf4``, xarray) can read:

* the training data the model needs (the response and the formula's inputs),
  under their own names, dims, coordinates and attributes (e.g. the DTI
  acknowledgment);
* every fitted array as a variable named after its Python attribute
  (``fdakpl.model.estimator.dual_coef_`` holds the representer coefficients
  ``alpha`` of an exact fit, ``fdakpl.model.estimator.coef_`` the primal
  weights of an approximate fit, ``fdakpl.model.estimator.B_`` the output
  matrix, ...) with a ``fdakpl_path`` attribute;
* a JSON description of the objects (the formula and options, dictionary,
  kernels per term, output matrix, loss, ...), in the string variable
  ``fdakpl_state``, whose arrays are references to the variables above;
* provenance attributes: fdakpl, Python, NumPy, xarray, SciPy and
  scikit-learn versions, creation time, and a SHA-256 checksum of the
  state and arrays.

Loading never executes code from the file: objects are rebuilt only from a
registry of fdakpl's own classes (kernels, dictionaries, output matrices,
losses, estimators, results and their plain-data containers), with their
attributes restored from numbers, strings and arrays. The scalar design of a
formula is stored as data (:meth:`fdakpl.formula.design.ScalarDesign.to_dict`: factors,
levels, how each column is built, standardisation) and rebuilt at load after
every factor has been checked against the formula grammar of
:mod:`fdakpl.formula.grammar`; the formula text is checked against the same grammar
and must agree with the stored terms. The SHA-256 checksum detects
corruption, not tampering (anyone can recompute it). Training variables
whose names netCDF cannot hold safely (spaces, ``/``, a leading ``_``, names
starting with ``fdakpl``) are stored under generated names (``fdakpl_var<i>``)
with their original names in the description. The training kernel matrix
``K_`` (``n x n``) is neither stored nor rebuilt at load: results store what they
computed from it, and :func:`load` plans every allocation it makes against
``max_bytes`` (:mod:`fdakpl.io.load_budget`). Dates (timezone-aware too: UTC ticks
and the zone's name) are stored as int64 ticks; with ``engine="scipy"`` (netCDF3),
64-bit integers beyond 32 bits as decimal text.

Format versions: 4 stores the declared fields of each class and the criterion
that chose lambda as an object; 3 named the representer coefficients
``dual_coef_`` (and ``alpha B`` ``dual_coef_B_``); files of format 2 stored
them as ``coef_`` and ``coef_B_``. Files of formats 2 and 3 load with their
states upgraded (data only; see :func:`fdakpl.io.netcdf_format.upgraded_state`).

Examples
--------
>>> import tempfile, pathlib
>>> import numpy as np
>>> from fdakpl import KPLRegressor, Fourier
>>> X = np.linspace(0, 1, 12)[:, None]; Y = np.hstack([X, X ** 2, np.sin(X)])
>>> model = KPLRegressor(dictionary=Fourier(1), lam=1e-3).fit(X, Y)
>>> path = pathlib.Path(tempfile.mkdtemp()) / "model.nc"
>>> _ = save(model, path)
>>> again = load(path)
>>> bool(np.array_equal(again.predict(X), model.predict(X)))
True
"""

from __future__ import annotations

import datetime
import importlib.util
import json
import os
import platform
import re
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from ..utils.saved import saved_fields
from .netcdf_format import (
    DENY,
    FORMAT_VERSION,
    KIND_ESTIMATOR,
    KIND_RESULTS,
    PREFIX,
    STATE_VAR,
    checksum,
    class_name,
    registered_classes,
    registry,
    restore_dtype,
)
from .netcdf_load import MAX_BYTES, load
from .safe_files import resolve_target, write_atomically

#: private aliases kept for callers of earlier versions
_checksum, _restore_dtype = checksum, restore_dtype

__all__ = ["FORMAT_VERSION", "MAX_BYTES", "load", "registered_classes", "save"]

#: attributes that do not affect predictions: values that cannot be stored become None (with a warning)
_LENIENT = {"random_state", "param_grid", "cv_result"}
_DESCRIPTIONS = {
    "dual_coef_": "representer coefficients alpha of an exact fit (training sample x atom)",
    "dual_coef_B_": "alpha B, used for prediction (training sample x atom)",
    "coef_": "primal weights M of an approximate fit, h(x) = M^T z(x) (feature x atom)",
    "B_": "output matrix B (atom x atom)",
    "gram_": "Gram matrix of the dictionary (atom x atom)",
    "nu_": "inner products of the centred training responses with the atoms (training sample x atom)",
    "grid_": "default prediction locations",
    "values_": "atoms on the dictionary's grid (location x atom)",
}
#: readable dims for well-known arrays ("sample" is the training sample dim when the data has it)
_DIMS = {"dual_coef_": ("sample", "fdakpl.atom"), "dual_coef_B_": ("sample", "fdakpl.atom"),
         "coef_": ("fdakpl.feature", "fdakpl.atom"), "nu_": ("sample", "fdakpl.atom"),
         "B_": ("fdakpl.atom", "fdakpl.atom2"), "gram_": ("fdakpl.atom", "fdakpl.atom2")}


# ----------------------------------------------------------------------------- encoding
_NAME_OK = re.compile(r"[^A-Za-z0-9_.\-]")


class _Writer:
    """Turn an object tree into JSON plus named arrays."""

    def __init__(self, reserved: set[str]) -> None:
        self.arrays: dict[str, tuple[np.ndarray, dict[str, Any]]] = {}
        self.reserved = set(reserved)
        self.registry = registry()
        self.data: xr.Dataset | None = None
        self.parsed: Any = None

    def _name(self, path: str) -> str:
        base = PREFIX + _NAME_OK.sub("_", path)
        name, k = base, 1
        while name in self.arrays or name in self.reserved:
            k += 1
            name = f"{base}.{k}"
        return name

    def array(self, arr: np.ndarray, path: str) -> Any:
        dtype = arr.dtype
        zone = timezone_of(arr)
        if zone is not None:  # timezone-aware dates (labels): their UTC ticks and the zone's name
            ticks = pd.DatetimeIndex(arr.ravel()).tz_convert("UTC").tz_localize(None).values.astype("M8[ns]")
            return {"__datetimes__": zone, "ticks": self.array(ticks.reshape(arr.shape), path)}
        if dtype.kind == "O":
            items = arr.ravel().tolist()
            if all(isinstance(v, str) for v in items):
                data = np.array(items, dtype=str).reshape(arr.shape)
            elif all(isinstance(v, (bool, int, float, np.number, np.bool_)) for v in items):
                data = np.array(items).reshape(arr.shape)
            else:
                raise TypeError(f"cannot save {path}: an object array of mixed types (only strings or numbers)")
        elif dtype.kind in "biufUS":
            data = arr
        elif dtype.kind in "mM":  # dates and durations: written as their int64 ticks (restored by the dtype's name)
            data = arr
        else:
            raise TypeError(f"cannot save {path}: arrays of dtype {dtype} are not stored")
        if arr.ndim == 0 or arr.size == 0:
            plain = data.view(np.int64) if dtype.kind in "mM" else data
            return {"__ndarray__": dtype.str, "shape": list(arr.shape), "data": plain.tolist()}
        name = self._name(path)
        attrs = {"fdakpl_path": path, "fdakpl_dtype": dtype.str}
        last = path.rsplit(".", 1)[-1]
        if last in _DESCRIPTIONS:
            attrs["long_name"] = _DESCRIPTIONS[last]
        self.arrays[name] = (np.ascontiguousarray(data), attrs)
        return {"__array__": name}

    def encode(self, obj: Any, path: str) -> Any:
        try:
            return self._encode(obj, path)
        except TypeError:
            if path.rsplit(".", 1)[-1] in _LENIENT:
                warnings.warn(f"{path} ({type(obj).__name__}) is not saved (it does not affect predictions); "
                              "it will be None after loading", stacklevel=4)
                return {"__unsaved__": type(obj).__name__}
            raise

    def _encode(self, obj: Any, path: str) -> Any:
        if obj is None or isinstance(obj, (bool, str)):
            return obj
        if isinstance(obj, (np.bool_, np.integer, np.floating)):
            return {"__npscalar__": obj.dtype.str, "value": obj.item()}
        if isinstance(obj, (int, float)):
            return obj
        if isinstance(obj, np.ndarray):
            return self.array(obj, path)
        if isinstance(obj, tuple):
            return {"__tuple__": [self.encode(v, f"{path}.{i}") for i, v in enumerate(obj)]}
        if isinstance(obj, list):
            return [self.encode(v, f"{path}.{i}") for i, v in enumerate(obj)]
        if isinstance(obj, slice):
            return {"__slice__": [self.encode(v, path) for v in (obj.start, obj.stop, obj.step)]}
        if isinstance(obj, dict) or (type(obj).__name__ == "mappingproxy"):
            if all(isinstance(k, str) and not k.startswith("__") for k in obj):
                return {k: self.encode(v, f"{path}.{k}") for k, v in obj.items()}
            return {"__dict__": [[self.encode(k, path), self.encode(v, f"{path}.{i}")]
                                 for i, (k, v) in enumerate(obj.items())]}
        name = class_name(obj)
        if name in self.registry:
            return self._object(obj, name, path)
        if name in DENY:
            raise TypeError(f"cannot save {path}: a {type(obj).__name__} holds Python functions, which are not "
                            "stored without pickle; refit with a built-in loss to save the model")
        raise TypeError(f"cannot save {path}: objects of type {type(obj).__module__}.{type(obj).__qualname__} are "
                        "not stored (only fdakpl's own classes, numbers, strings and arrays; no pickle)")

    def _object(self, obj: Any, name: str, path: str) -> Any:
        if name == "fdakpl.FunctionalRegression":
            if self.parsed is not None:
                raise TypeError(f"cannot save {path}: only one FunctionalRegression per file")
            self.data = _used_data(obj)
            self.parsed = obj.parsed
        if hasattr(obj, "__slots__") and not hasattr(obj, "__dict__"):  # pragma: no cover - none in fdakpl
            raise TypeError(f"cannot save {path}: {name} has no attribute dictionary")
        values = vars(obj)
        state = {k: self.encode(values[k], f"{path}.{k}") for k in saved_fields(type(obj)) if k in values}
        return {"__object__": name, "state": state}


def _used_data(model: Any) -> xr.Dataset:
    """The variables of a FunctionalRegression's data that the formula uses, without encodings."""
    p = model.parsed
    names = [p.response, *p.functional_terms, *([] if p.scalar is None else p.scalar.variables)]
    ds = model.data[list(dict.fromkeys(names))]
    ds = ds.drop_encoding() if hasattr(ds, "drop_encoding") else ds
    return ds.load()


def _plain_attrs(attrs: dict[str, Any]) -> dict[str, Any]:
    """Attributes netCDF can hold as they are (strings, numbers, 1-d numeric arrays); others as JSON text."""
    out: dict[str, Any] = {}
    for k, v in attrs.items():
        if isinstance(v, (str, int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_)):
            out[k] = v
        elif isinstance(v, (list, tuple, np.ndarray)) and np.asarray(v).dtype.kind in "if" and np.ndim(v) == 1 \
                and len(v) > 0:
            out[k] = np.asarray(v)
        else:
            try:
                out[k] = json.dumps(v if not isinstance(v, np.ndarray) else v.tolist(), ensure_ascii=True)
            except TypeError:
                out[k] = str(v)
    return out


def _netcdf3(values: np.ndarray) -> np.ndarray:
    """Values netCDF3 (``engine="scipy"``) can hold: 64-bit integers as int32 when they fit, else as their decimal
    text (restored exactly by the dtype named in the description)."""
    if values.dtype.kind not in "iu" or values.dtype.itemsize <= 4:
        return values
    if values.size == 0 or (values.max() <= np.iinfo(np.int32).max and values.min() >= np.iinfo(np.int32).min):
        return values.astype(np.int32)
    return values.astype(str).astype("S")


def _stored_values(vals: np.ndarray, engine: str) -> np.ndarray:
    """Values as netCDF stores them: datetimes as int64 ticks, booleans as int8; for netCDF3, 64-bit integers as
    int32 or decimal text."""
    if vals.dtype.kind in "mM":
        vals = vals.view(np.int64)
    elif vals.dtype.kind == "b":
        vals = vals.astype(np.int8)
    return _netcdf3(vals) if engine == "scipy" else vals


def _storable(v: xr.Variable, plain: np.ndarray, names: dict[str, str], engine: str = "netcdf4") -> xr.Variable:
    """A training variable as netCDF stores it (its plain values, :func:`_plain_values`, by :func:`_stored_values`),
    attrs made plain, dims under their stored names."""
    return xr.Variable([names[str(d)] for d in v.dims], _stored_values(plain, engine),
                       attrs=_plain_attrs(dict(v.attrs)))


def timezone_of(values: Any) -> str | None:
    """The time zone of timezone-aware dates (a pandas dtype, or an object array of Timestamps of one zone).

    Examples
    --------
    >>> timezone_of(np.array([pd.Timestamp("2020-01-01", tz="Europe/Paris")], dtype=object))
    'Europe/Paris'
    >>> timezone_of(np.arange(3)) is None
    True
    """
    dtype = getattr(values, "dtype", None)
    if isinstance(dtype, pd.DatetimeTZDtype):
        return str(dtype.tz)
    if not isinstance(values, np.ndarray) or dtype is None or dtype.kind != "O" or values.size == 0:
        return None
    items = values.ravel().tolist()
    if not all(isinstance(v, pd.Timestamp) and v.tzinfo is not None for v in items):
        return None
    zones = {str(v.tz) for v in items}
    if len(zones) != 1:
        raise TypeError(f"dates of several time zones ({sorted(zones)[:3]}) are not stored; convert them to one, "
                        "e.g. pd.DatetimeIndex(labels).tz_convert('UTC')")
    return zones.pop()


def _plain_values(v: xr.Variable) -> np.ndarray:
    """A variable's values as numpy holds them; timezone-aware dates as their UTC datetime64 (the zone is in the
    description)."""
    if timezone_of(v) is not None:
        return np.asarray(pd.DatetimeIndex(v.to_index()).tz_convert("UTC").tz_localize(None).values)
    return np.asarray(v.values)


def _versions() -> dict[str, str]:

    import scipy
    import sklearn

    from .._version import __version__

    return {"fdakpl_version": __version__, "python_version": platform.python_version(),
            "numpy_version": np.__version__, "xarray_version": xr.__version__, "scipy_version": scipy.__version__,
            "sklearn_version": sklearn.__version__, "platform": platform.platform()}


def _default_engine() -> str:
    for engine, modules in (("netcdf4", ("netCDF4",)), ("h5netcdf", ("h5netcdf", "h5py"))):
        if all(importlib.util.find_spec(module) is not None for module in modules):
            return engine
    return "scipy"


def save(obj: Any, path: str | os.PathLike[str], *, engine: str | None = None, overwrite: bool = False) -> Path:
    """Save a fitted model to a netCDF file (no pickle).

    Parameters
    ----------
    obj : FunctionalRegressionResults or KPLRegressor
        A fitted model.
    path : str or path-like
        Target file (``.nc``); written atomically (a temporary file in the
        same directory renamed into place), so a failed save never leaves a
        half-written file. An existing file keeps its permissions; a symlink
        keeps pointing to its target, whose content is replaced.
    overwrite : bool, default False
        Replace an existing file that is not an fdakpl model (an existing
        fdakpl model file is always replaced).
    engine : {"netcdf4", "h5netcdf", "scipy"}, optional
        xarray's netCDF backend; default: netCDF4 if installed, else
        h5netcdf, else SciPy (netCDF3, always available).

    Returns
    -------
    pathlib.Path

    Raises
    ------
    TypeError
        If the model holds objects that cannot be stored without pickle (a
        :class:`~fdakpl.losses.CustomLoss`, a user-defined kernel class).
    ValueError
        If ``obj`` is not fitted.
    FileExistsError
        If ``path`` exists and is not an fdakpl model file, unless ``overwrite=True``.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from fdakpl import FunctionalRegression, datasets
    >>> res = FunctionalRegression("rcst ~ cca", datasets.dti_first_visits(), interpolate_inputs=True,
    ...                            progress=False).fit()
    >>> path = save(res, pathlib.Path(tempfile.mkdtemp()) / "dti.nc")
    >>> import xarray as xr
    >>> with xr.open_dataset(path) as f:
    ...     f.attrs["fdakpl_formula"], f["fdakpl.model.estimator.dual_coef_"].shape
    ('rcst ~ cca', (100, 21))
    """
    # by the stable class name (the file layer does not import the classes it stores: they call save)
    name = class_name(obj)
    if name == "fdakpl.FunctionalRegressionResults":
        kind, root = KIND_RESULTS, "model"
        for lazy in ("criteria", "edf", "held_out"):  # computed from the fit's path on first use: stored with the model
            getattr(obj, lazy, None)
    elif name in {"fdakpl.KPLRegressor", "fdakpl.ApproxKPLRegressor"}:
        if "dual_coef_" not in vars(obj) and "coef_" not in vars(obj):
            raise ValueError(f"this {type(obj).__name__} is not fitted; call fit(X, Y) before save")
        kind, root = KIND_ESTIMATOR, "estimator"
    else:
        raise TypeError("save stores FunctionalRegressionResults or a fitted KPLRegressor or ApproxKPLRegressor, got "
                        f"{type(obj).__name__}")
    engine = engine or _default_engine()
    if engine not in {"netcdf4", "h5netcdf", "scipy"}:
        raise ValueError(f"engine must be 'netcdf4', 'h5netcdf' or 'scipy', got {engine!r}")
    path = Path(path).expanduser()  # "~/model.nc": xarray would expand it, the atomic rename would not
    _refuse_foreign(path, overwrite)
    names: dict[str, str] = {}
    if kind == KIND_RESULTS:
        names = _stored_names(_used_data(obj.model))
    writer = _Writer(set(names.values()) | {STATE_VAR})
    tree = writer.encode(obj, root)
    data = writer.data if writer.data is not None else xr.Dataset()
    extra: dict[str, Any] = {}
    if writer.parsed is not None:
        p = writer.parsed
        extra["parsed"] = writer.encode({
            "formula": p.formula, "response": p.response, "response_dim": p.response_dim,
            "functional_terms": list(p.functional_terms),
            "input_grids": {t: np.asarray(g) for t, g in p.input_grids.items()},
            "scalar": None if p.scalar is None else p.scalar.to_dict(),
        }, "parsed")
    variables = {**data.data_vars, **data.coords}
    plain = {k: _plain_values(v.variable) for k, v in variables.items()}  # once per variable (dates: UTC ticks)
    zones = {k: timezone_of(v.variable) for k, v in variables.items()}
    extra["data"] = {
        "attrs": writer.encode(dict(data.attrs), "data_attrs"),
        "variables": {str(k): {"dtype": plain[k].dtype.str,
                               "attrs": writer.encode(dict(v.attrs), f"data_attrs.{k}"),
                               "coord": str(k) in data.coords, "stored_as": names[str(k)],
                               "dims": [str(d) for d in v.dims], "shape": list(v.shape),
                               **({"timezone": zones[k]} if zones[k] else {})}
                      for k, v in variables.items()},
    }
    state = {"kind": kind, "format_version": FORMAT_VERSION, "root": tree, **extra}
    state_json = json.dumps(state, ensure_ascii=True, allow_nan=True)

    out = xr.Dataset({names[str(k)]: _storable(v.variable, plain[k], names, engine) for k, v in data.data_vars.items()},
                     coords={names[str(k)]: _storable(v.variable, plain[k], names, engine)
                             for k, v in data.coords.items()})
    encoding: dict[str, dict[str, Any]] = {}
    for name, (arr, attrs) in writer.arrays.items():
        store = _stored_values(arr, engine)
        out[name] = xr.DataArray(store, dims=_dims_for(name, attrs["fdakpl_path"], store.shape, out), attrs=attrs)
        encoding[name] = {"_FillValue": None} if store.dtype.kind == "f" else {}
    out[STATE_VAR] = xr.DataArray(np.array(state_json, dtype=str), attrs={
        "long_name": "fdakpl model description (JSON); arrays are references to the variables named in it",
        "fdakpl_format": kind, "fdakpl_format_version": FORMAT_VERSION})
    arrays = {name: arr for name, (arr, _) in writer.arrays.items()}
    arrays.update({f"data:{k}": plain[k] for k in variables})
    attrs = {k: v for k, v in _plain_attrs(dict(data.attrs)).items() if not k.startswith("fdakpl_")}
    attrs.update({
        "fdakpl_format": kind, "fdakpl_format_version": FORMAT_VERSION,
        "fdakpl_created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        **{f"fdakpl_{k}" if not k.startswith("fdakpl_") else k: v for k, v in _versions().items()},
        "fdakpl_checksum": checksum(state_json, arrays),
    })
    if kind == KIND_RESULTS:
        attrs.update({"fdakpl_formula": obj.model.formula, "fdakpl_lambda": float(obj.lam),
                      "fdakpl_lambda_chosen_by": obj.lam_how, "fdakpl_solver": obj.solver})
    out.attrs = attrs
    write_atomically(path, lambda tmp: out.to_netcdf(tmp, engine=engine, encoding=encoding))
    return path


#: names stored as they are in the file (safe for every netCDF engine); others get a generated name
_SAFE_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_.]*")


def _stored_names(data: xr.Dataset) -> dict[str, str]:
    """File names of the training variables and dims: their own name when it is safe for netCDF and not one of
    fdakpl's (``fdakpl*``), else ``fdakpl_var<i>`` / ``fdakpl_dim<i>``; the original names are in the state."""
    out: dict[str, str] = {}
    for i, name in enumerate(dict.fromkeys(str(n) for n in (*data.variables, *data.dims))):
        ok = _SAFE_NAME.fullmatch(name) and not name.lower().startswith("fdakpl")
        out[name] = name if ok else f"fdakpl_var{i}"
    return out


def _refuse_foreign(path: Path, overwrite: bool) -> None:
    """Refuse to replace an existing file that is not an fdakpl model, unless ``overwrite``."""
    target = resolve_target(path)
    if overwrite or not target.exists() or target.is_dir():
        return
    kind = None
    try:
        with xr.open_dataset(target, decode_times=False, decode_timedelta=False, cache=False) as f:
            kind = f.attrs.get("fdakpl_format")  # attributes only: no data is read
    except Exception:  # not netCDF at all
        kind = None
    if kind not in {KIND_RESULTS, KIND_ESTIMATOR}:
        raise FileExistsError(f"{path} exists and is not an fdakpl model file; pass overwrite=True to replace it, "
                              "or choose another file name")


def _dims_for(name: str, path: str, shape: tuple[int, ...], out: xr.Dataset) -> list[str]:
    """Readable dims for well-known arrays when their sizes agree with the file's dims, else generic ones."""
    generic = [f"{name}.dim{i}" for i in range(len(shape))]
    parts = path.split(".")
    wanted = _DIMS.get(parts[-1])
    if wanted is None or len(wanted) != len(shape) or parts[-2:-1] == ["decomposition_"]:
        return generic
    dims = [w if w != "sample" or "sample" in out.dims else "fdakpl.sample" for w in wanted]
    if all(out.sizes.get(d, size) == size for d, size in zip(dims, shape, strict=True)):
        return dims
    return generic
