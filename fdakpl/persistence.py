"""Saving and loading fitted models in netCDF, without pickle.

:func:`save` writes a fitted :class:`~fdakpl.results.FunctionalRegressionResults`
or :class:`~fdakpl.estimator.KPLRegressor` to one netCDF file; :func:`load`
reads it back. The file is plain netCDF that any tool (``ncdump``, R's
``ncdf4``, xarray) can read:

* the training data the model needs (the response and the formula's inputs),
  under their own names, dims, coordinates and attributes (e.g. the DTI
  acknowledgment);
* every fitted array as a variable named after its Python attribute
  (``fdakpl.model.estimator.coef_`` holds the representer coefficients
  ``alpha``, ``fdakpl.model.estimator.B_`` the output matrix, ...) with a
  ``fdakpl_path`` attribute;
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
formula is stored as data (:meth:`fdakpl.design.ScalarDesign.to_dict`: factors,
levels, how each column is built, standardisation) and rebuilt at load after
every factor has been checked against the formula grammar of
:mod:`fdakpl.design`; the formula text is checked against the same grammar
and must agree with the stored terms. The SHA-256 checksum detects
corruption, not tampering (anyone can recompute it). Training variables
whose names netCDF cannot hold safely (spaces, ``/``, a leading ``_``, names
starting with ``fdakpl``) are stored under generated names (``fdakpl_var<i>``)
with their original names in the description. The training kernel matrix
``K_`` is recomputed from the stored kernel inputs ``X_fit_`` (it is ``n x n``).

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
import hashlib
import importlib
import json
import os
import platform
import re
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import xarray as xr

from .safe_files import resolve_target, write_atomically

__all__ = ["FORMAT_VERSION", "load", "registered_classes", "save"]

#: version of the file layout written by :func:`save`
FORMAT_VERSION = 2

_KIND_RESULTS = "fdakpl.results"
_KIND_ESTIMATOR = "fdakpl.estimator"
_STATE_VAR = "fdakpl_state"
_PREFIX = "fdakpl."
_MODULES = ("kernels", "dictionaries", "losses", "preprocessing", "solvers", "selection", "estimator", "approx",
            "regression", "results")
#: classes that hold user code and therefore cannot be stored without pickle
_DENY = {"fdakpl.losses.CustomLoss"}
#: attributes recomputed at load time instead of stored
_SKIP = {"fdakpl.estimator.KPLRegressor": {"K_"},
         "fdakpl.results.FunctionalRegressionResults": {"_cache"},
         "fdakpl.regression.FunctionalRegression": {"data", "parsed"}}
#: attributes that do not affect predictions: values that cannot be stored become None (with a warning)
_LENIENT = {"random_state", "param_grid", "cv_result"}
_DESCRIPTIONS = {
    "coef_": "representer coefficients alpha (training sample x atom)",
    "coef_B_": "alpha B, used for prediction (training sample x atom)",
    "B_": "output matrix B (atom x atom)",
    "gram_": "Gram matrix of the dictionary (atom x atom)",
    "nu_": "inner products of the centred training responses with the atoms (training sample x atom)",
    "grid_": "default prediction locations",
    "values_": "atoms on the dictionary's grid (location x atom)",
}
#: readable dims for well-known arrays ("sample" is the training sample dim when the data has it)
_DIMS = {"coef_": ("sample", "fdakpl.atom"), "coef_B_": ("sample", "fdakpl.atom"), "nu_": ("sample", "fdakpl.atom"),
         "B_": ("fdakpl.atom", "fdakpl.atom2"), "gram_": ("fdakpl.atom", "fdakpl.atom2")}


# ----------------------------------------------------------------------------- registry
def _registry() -> dict[str, type]:
    reg: dict[str, type] = {}
    for short in _MODULES:
        try:
            mod = importlib.import_module(f"fdakpl.{short}")
        except ImportError:  # pragma: no cover - optional module missing
            continue
        for obj in vars(mod).values():
            if isinstance(obj, type) and obj.__module__ == mod.__name__:
                name = f"{obj.__module__}.{obj.__qualname__}"
                if name not in _DENY:
                    reg[name] = obj
    return reg


def registered_classes() -> list[str]:
    """Names of the classes that :func:`load` may rebuild (fdakpl's own classes only).

    Examples
    --------
    >>> "fdakpl.kernels.Gaussian" in registered_classes()
    True
    >>> "fdakpl.losses.CustomLoss" in registered_classes()
    False
    """
    return sorted(_registry())


def _class_name(obj: Any) -> str:
    t = type(obj)
    return f"{t.__module__}.{t.__qualname__}"


# ----------------------------------------------------------------------------- encoding
_NAME_OK = re.compile(r"[^A-Za-z0-9_.\-]")


class _Writer:
    """Turn an object tree into JSON plus named arrays."""

    def __init__(self, reserved: set[str]) -> None:
        self.arrays: dict[str, tuple[np.ndarray, dict[str, Any]]] = {}
        self.reserved = set(reserved)
        self.registry = _registry()
        self.data: xr.Dataset | None = None
        self.parsed: Any = None

    def _name(self, path: str) -> str:
        base = _PREFIX + _NAME_OK.sub("_", path)
        name, k = base, 1
        while name in self.arrays or name in self.reserved:
            k += 1
            name = f"{base}.{k}"
        return name

    def array(self, arr: np.ndarray, path: str) -> Any:
        dtype = arr.dtype
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
        else:
            raise TypeError(f"cannot save {path}: arrays of dtype {dtype} are not stored")
        if arr.ndim == 0 or arr.size == 0:
            return {"__ndarray__": dtype.str, "shape": list(arr.shape), "data": data.tolist()}
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
        name = _class_name(obj)
        if name in self.registry:
            return self._object(obj, name, path)
        if name in _DENY:
            raise TypeError(f"cannot save {path}: a {type(obj).__name__} holds Python functions, which are not "
                            "stored without pickle; refit with a built-in loss to save the model")
        raise TypeError(f"cannot save {path}: objects of type {type(obj).__module__}.{type(obj).__qualname__} are "
                        "not stored (only fdakpl's own classes, numbers, strings and arrays; no pickle)")

    def _object(self, obj: Any, name: str, path: str) -> Any:
        if name == "fdakpl.regression.FunctionalRegression":
            if self.parsed is not None:
                raise TypeError(f"cannot save {path}: only one FunctionalRegression per file")
            self.data = _used_data(obj)
            self.parsed = obj.parsed
        if hasattr(obj, "__slots__") and not hasattr(obj, "__dict__"):  # pragma: no cover - none in fdakpl
            raise TypeError(f"cannot save {path}: {name} has no attribute dictionary")
        skip = _SKIP.get(name, set())
        state = {k: self.encode(v, f"{path}.{k}") for k, v in vars(obj).items() if k not in skip}
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


def _storable(v: xr.Variable, names: dict[str, str]) -> xr.Variable:
    """A training variable as netCDF stores it: datetimes as int64 ticks, booleans as int8, attrs made plain,
    dims under their stored names."""
    vals = np.asarray(v.values)
    if vals.dtype.kind in "mM":
        vals = vals.view(np.int64)
    elif vals.dtype.kind == "b":
        vals = vals.astype(np.int8)
    return xr.Variable([names[str(d)] for d in v.dims], vals, attrs=_plain_attrs(dict(v.attrs)))


def _canonical(arr: np.ndarray) -> bytes:
    a = np.ascontiguousarray(arr)
    if a.dtype.kind == "f":
        a = np.where(np.isnan(a), np.nan, a)
    if a.dtype.kind == "O":
        a = np.array([str(v) for v in a.ravel()], dtype=str)
    return f"{a.dtype.str}{a.shape}".encode() + a.tobytes()


def _checksum(state_json: str, arrays: dict[str, np.ndarray]) -> str:
    h = hashlib.sha256(state_json.encode("utf-8"))
    for name in sorted(arrays):
        h.update(name.encode("utf-8"))
        h.update(_canonical(arrays[name]))
    return h.hexdigest()


def _versions() -> dict[str, str]:
    import scipy
    import sklearn

    from . import __version__

    return {"fdakpl_version": __version__, "python_version": platform.python_version(),
            "numpy_version": np.__version__, "xarray_version": xr.__version__, "scipy_version": scipy.__version__,
            "sklearn_version": sklearn.__version__, "platform": platform.platform()}


def _default_engine() -> str:
    for engine, modules in (("netcdf4", ("netCDF4",)), ("h5netcdf", ("h5netcdf", "h5py"))):
        try:
            for module in modules:
                importlib.import_module(module)
            return engine
        except ImportError:
            continue
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

from .safe_files import resolve_target, write_atomically
    >>> with xr.open_dataset(path) as f:
    ...     f.attrs["fdakpl_formula"], f["fdakpl.model.estimator.coef_"].shape
    ('rcst ~ cca', (100, 21))
    """
    from .estimator import KPLRegressor
    from .results import FunctionalRegressionResults

    if isinstance(obj, FunctionalRegressionResults):
        kind, root = _KIND_RESULTS, "model"
    elif isinstance(obj, KPLRegressor):
        if not hasattr(obj, "coef_"):
            raise ValueError("this KPLRegressor is not fitted; call fit(X, Y) before save")
        kind, root = _KIND_ESTIMATOR, "estimator"
    else:
        raise TypeError(f"save stores FunctionalRegressionResults or a fitted KPLRegressor, got {type(obj).__name__}")
    engine = engine or _default_engine()
    if engine not in {"netcdf4", "h5netcdf", "scipy"}:
        raise ValueError(f"engine must be 'netcdf4', 'h5netcdf' or 'scipy', got {engine!r}")
    path = Path(path)
    _refuse_foreign(path, overwrite)
    names: dict[str, str] = {}
    if kind == _KIND_RESULTS:
        names = _stored_names(_used_data(obj.model))
    writer = _Writer(set(names.values()) | {_STATE_VAR})
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
    extra["data"] = {
        "attrs": writer.encode(dict(data.attrs), "data_attrs"),
        "variables": {str(k): {"dtype": v.dtype.str, "attrs": writer.encode(dict(v.attrs), f"data_attrs.{k}"),
                               "coord": str(k) in data.coords, "stored_as": names[str(k)],
                               "dims": [str(d) for d in v.dims], "shape": list(v.shape)}
                      for k, v in variables.items()},
    }
    state = {"kind": kind, "format_version": FORMAT_VERSION, "root": tree, **extra}
    state_json = json.dumps(state, ensure_ascii=True, allow_nan=True)

    out = xr.Dataset({names[str(k)]: _storable(v.variable, names) for k, v in data.data_vars.items()},
                     coords={names[str(k)]: _storable(v.variable, names) for k, v in data.coords.items()})
    encoding: dict[str, dict[str, Any]] = {}
    for name, (arr, attrs) in writer.arrays.items():
        store = arr.astype(np.int8) if arr.dtype.kind == "b" else arr
        if engine == "scipy" and store.dtype.kind in "iu" and store.dtype.itemsize > 4:
            if store.size and (store.max() > np.iinfo(np.int32).max or store.min() < np.iinfo(np.int32).min):
                raise ValueError(f"{name} has integers beyond netCDF3's 32-bit range; use engine='netcdf4'")
            store = store.astype(np.int32)
        out[name] = xr.DataArray(store, dims=_dims_for(name, attrs["fdakpl_path"], store.shape, out), attrs=attrs)
        encoding[name] = {"_FillValue": None} if store.dtype.kind == "f" else {}
    out[_STATE_VAR] = xr.DataArray(np.array(state_json, dtype=str), attrs={
        "long_name": "fdakpl model description (JSON); arrays are references to the variables named in it",
        "fdakpl_format": kind, "fdakpl_format_version": FORMAT_VERSION})
    arrays = {name: arr for name, (arr, _) in writer.arrays.items()}
    arrays.update({f"data:{k}": np.asarray(v.values) for k, v in variables.items()})
    attrs = {k: v for k, v in _plain_attrs(dict(data.attrs)).items() if not k.startswith("fdakpl_")}
    attrs.update({
        "fdakpl_format": kind, "fdakpl_format_version": FORMAT_VERSION,
        "fdakpl_created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        **{f"fdakpl_{k}" if not k.startswith("fdakpl_") else k: v for k, v in _versions().items()},
        "fdakpl_checksum": _checksum(state_json, arrays),
    })
    if kind == _KIND_RESULTS:
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
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with xr.open_dataset(target, decode_times=False, decode_timedelta=False, cache=False) as f:
                kind = f.attrs.get("fdakpl_format")  # attributes only: no data is read
    except Exception:  # not netCDF at all
        kind = None
    if kind not in {_KIND_RESULTS, _KIND_ESTIMATOR}:
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


# ----------------------------------------------------------------------------- decoding
class _Reader:
    def __init__(self, path: Path, arrays: dict[str, np.ndarray]) -> None:
        self.path = path
        self.arrays = arrays
        self.registry = _registry()
        self.post: list[Any] = []

    def fail(self, what: str) -> ValueError:
        return ValueError(f"{self.path}: {what}")

    def decode(self, obj: Any) -> Any:
        if isinstance(obj, list):
            return [self.decode(v) for v in obj]
        if not isinstance(obj, dict):
            return obj
        if "__array__" in obj:
            name = obj["__array__"]
            if name not in self.arrays:
                raise self.fail(f"the model refers to the array {name!r}, which the file lacks (corrupted file)")
            return self.arrays[name].copy()
        if "__ndarray__" in obj:
            return np.array(obj["data"], dtype=np.dtype(obj["__ndarray__"])).reshape(obj["shape"])
        if "__npscalar__" in obj:
            return np.dtype(obj["__npscalar__"]).type(obj["value"])
        if "__tuple__" in obj:
            return tuple(self.decode(v) for v in obj["__tuple__"])
        if "__slice__" in obj:
            return slice(*(self.decode(v) for v in obj["__slice__"]))
        if "__dict__" in obj:
            return {self.decode(k): self.decode(v) for k, v in obj["__dict__"]}
        if "__unsaved__" in obj:
            return None
        if "__object__" in obj:
            name = obj["__object__"]
            cls = self.registry.get(name)
            if cls is None:
                raise self.fail(f"the model refers to the class {name!r}, which is not one of fdakpl's classes; "
                                "refusing to load it (files never name code to run)")
            state = obj.get("state")
            if not isinstance(state, dict):
                raise self.fail(f"the state of a {name} is not a mapping (corrupted file)")
            inst = cls.__new__(cls)
            inst.__dict__.update({k: self.decode(v) for k, v in state.items()})
            self.post.append((name, inst))
            return inst
        return {k: self.decode(v) for k, v in obj.items()}


def _restore_dtype(values: np.ndarray, dtype: str) -> np.ndarray:
    target = np.dtype(dtype)
    if target.kind in "mM":  # stored as their int64 ticks
        return np.asarray(values).astype(np.int64).view(target)
    if target.kind == "O":
        return np.array(values.tolist() if values.dtype.kind != "O" else values, dtype=object)
    if target.kind in "US":
        return np.asarray(values.astype(str) if values.dtype.kind == "O" else values).astype(target)
    return np.asarray(values).astype(target)


#: largest uncompressed size :func:`load` reads by default (bytes)
MAX_BYTES = 4 * 2 ** 30
#: largest model description (JSON) accepted
_MAX_STATE = 64 * 2 ** 20


def load(path: str | os.PathLike[str], *, max_bytes: int = MAX_BYTES) -> Any:
    """Load a model saved by :func:`save` (never executes code from the file).

    The file is opened lazily: its attributes, the model description and the
    sizes of the arrays it refers to are checked before any array is read,
    so a file that is not an fdakpl model, or that would expand beyond
    ``max_bytes`` in memory, is refused without being read. Variables the
    model does not refer to are never read.

    The SHA-256 checksum in the file detects accidental corruption (a flipped
    bit, a truncated copy). It does not detect tampering: anyone can recompute
    it. Safety against a forged file comes from what loading does, not from
    the checksum: objects are rebuilt only from fdakpl's own classes, with
    attributes from numbers, strings and arrays, and the scalar design of a
    formula is stored as data and checked against the formula grammar of
    :mod:`fdakpl.design`; no text from the file is evaluated as code.

    Parameters
    ----------
    path : str or path-like
    max_bytes : int
        Largest total size (bytes, uncompressed) of the arrays the model
        refers to (default 4 GiB).

    Returns
    -------
    FunctionalRegressionResults or KPLRegressor

    Raises
    ------
    FileNotFoundError
        If ``path`` does not exist.
    ValueError
        If the file is not netCDF, not an fdakpl model, written by a newer
        format, too large, corrupted (checksum mismatch, missing arrays,
        inconsistent shapes) or forged (classes that are not fdakpl's, terms
        outside the formula grammar); the message names the file.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from fdakpl import FunctionalRegression, datasets
    >>> ds = datasets.dti_first_visits()
    >>> res = FunctionalRegression("rcst ~ cca", ds, interpolate_inputs=True, progress=False).fit()
    >>> again = load(res.save(pathlib.Path(tempfile.mkdtemp()) / "dti.nc"))
    >>> bool((again.predict() == res.predict()).all())
    True
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"no such file: {path}")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            f = xr.open_dataset(path, decode_times=False, decode_timedelta=False, cache=False)
    except Exception as err:
        raise ValueError(f"{path}: cannot be read as a netCDF file ({type(err).__name__}: {err})") from None
    with f:
        try:
            return _load_open(f, path, max_bytes)
        except RecursionError:
            raise ValueError(f"{path}: the model description nests too deeply (forged or corrupted file)") from None
        except ValueError as err:
            if str(err).startswith(str(path)):
                raise
            raise ValueError(f"{path}: {err}") from None
        except (KeyError, TypeError, AttributeError, IndexError) as err:
            raise ValueError(f"{path}: malformed model description ({type(err).__name__}: {err})") from None


def _array_refs(obj: Any, out: set[str]) -> set[str]:
    """Names of the arrays a model description refers to."""
    stack = [obj]
    while stack:
        cur = stack.pop()
        if isinstance(cur, list):
            stack.extend(cur)
        elif isinstance(cur, dict):
            name = cur.get("__array__")
            if isinstance(name, str):
                out.add(name)
            stack.extend(cur.values())
    return out


def _load_open(f: xr.Dataset, path: Path, max_bytes: int) -> Any:
    kind = f.attrs.get("fdakpl_format")
    if kind not in {_KIND_RESULTS, _KIND_ESTIMATOR} or _STATE_VAR not in f.variables:
        raise ValueError(f"{path}: not an fdakpl model file (no 'fdakpl_format' attribute or '{_STATE_VAR}' "
                         f"variable); it holds the variables {sorted(map(str, f.data_vars))[:10]}")
    sv = f.variables[_STATE_VAR]
    if sv.dtype.kind not in "USO" or sv.ndim > 1 or sv.size * max(sv.dtype.itemsize, 1) > _MAX_STATE:
        raise ValueError(f"{path}: the model description '{_STATE_VAR}' is not a text of at most "
                         f"{_MAX_STATE} bytes (forged or corrupted file)")
    try:
        text = sv.values.item() if sv.ndim == 0 else "".join(sv.values.astype(str))
        state = json.loads(str(text))
    except (json.JSONDecodeError, ValueError, TypeError) as err:
        raise ValueError(f"{path}: the model description '{_STATE_VAR}' is not valid JSON ({err})") from None
    version = state.get("format_version") if isinstance(state, dict) else None
    if not isinstance(version, int) or version > FORMAT_VERSION:
        raise ValueError(f"{path}: written in fdakpl file format {version!r}; this fdakpl reads format "
                         f"<= {FORMAT_VERSION}: upgrade fdakpl")
    if version < 2:
        raise ValueError(f"{path}: written in fdakpl file format {version} (before scalar designs were stored as "
                         "data, so its formula would have to be evaluated); refit and save the model again with "
                         "this fdakpl")
    if state.get("kind") != kind:
        raise ValueError(f"{path}: the file says it holds {kind!r} but its description says {state.get('kind')!r}")
    info = state.get("data", {})
    data_vars = info.get("variables", {})
    if not isinstance(data_vars, dict):
        raise ValueError("the stored training variables are not a mapping (corrupted file)")
    # sizes first: nothing is read before the total is known
    wanted: dict[str, str] = {}  # file variable -> what it is
    for name in sorted(_array_refs(state.get("root"), set()) | _array_refs(state.get("parsed"), set())
                       | _array_refs(info, set())):
        if name not in f.variables or not name.startswith(_PREFIX):
            raise ValueError(f"the model refers to the array {name!r}, which the file lacks (corrupted file)")
        wanted[name] = "array"
    for name, meta in data_vars.items():
        stored = meta.get("stored_as", name)
        if stored in wanted:
            raise ValueError(f"two parts of the model are stored as the variable {stored!r} (corrupted file)")
        if stored not in f.variables:
            raise ValueError(f"the training variable {name!r} is missing from the file")
        if list(f.variables[stored].shape) != list(meta.get("shape", [])):
            raise ValueError(f"the training variable {name!r} has shape {f.variables[stored].shape} in the file "
                             f"but {meta.get('shape')} in the model description (corrupted file)")
        wanted[stored] = name
    total = sum(int(f.variables[n].size) * max(f.variables[n].dtype.itemsize, 1) for n in wanted)
    if total > max_bytes:
        raise ValueError(f"the model's arrays take {total / 2 ** 20:.0f} MiB in memory, more than max_bytes="
                         f"{max_bytes} ({max_bytes / 2 ** 20:.0f} MiB); if you trust this file, pass a larger "
                         "max_bytes to load")
    arrays: dict[str, np.ndarray] = {}
    restored: dict[str, np.ndarray] = {}
    for name, what in wanted.items():
        var = f.variables[name]
        if what == "array":
            dtype = var.attrs.get("fdakpl_dtype")
            if dtype is None:
                raise ValueError(f"variable {name!r} has no 'fdakpl_dtype' attribute (corrupted file)")
            arrays[name] = _restore_dtype(var.values, str(dtype))
        else:
            restored[what] = _restore_dtype(var.values, data_vars[what]["dtype"])
    check = dict(arrays)
    check.update({f"data:{k}": v for k, v in restored.items()})
    state_json = json.dumps(state, ensure_ascii=True, allow_nan=True)
    if f.attrs.get("fdakpl_checksum") != _checksum(state_json, check):
        raise ValueError(f"{path}: checksum mismatch: the file was modified or corrupted after it was saved")
    reader = _Reader(path, arrays)
    obj = reader.decode(state["root"])
    want = {_KIND_RESULTS: "fdakpl.results.FunctionalRegressionResults",
            _KIND_ESTIMATOR: "fdakpl.estimator.KPLRegressor"}
    if _class_name(obj) != want[kind]:
        raise ValueError(f"the file holds a {_class_name(obj)} where a {want[kind]} belongs (forged or corrupted file)")
    data = _rebuild_data(info, restored, reader) if kind == _KIND_RESULTS else None
    parsed = reader.decode(state.get("parsed")) if kind == _KIND_RESULTS else None
    _finish(obj, reader, data, parsed)
    return obj


def _rebuild_data(info: dict[str, Any], restored: dict[str, np.ndarray], reader: _Reader) -> xr.Dataset:
    meta = info.get("variables", {})
    made = {k: xr.Variable(tuple(m["dims"]), restored[k], attrs=reader.decode(m["attrs"])) for k, m in meta.items()}
    coords = {k: v for k, v in made.items() if meta[k]["coord"]}
    data_vars = {k: v for k, v in made.items() if not meta[k]["coord"]}
    return xr.Dataset(data_vars, coords=coords, attrs=reader.decode(info.get("attrs", {})))


def _rebuild_parsed(formula: Any, parsed: dict[str, Any], data: xr.Dataset, reader: _Reader) -> Any:
    """The parsed formula from its stored parts; the formula text is only checked against the grammar (the
    stored design is what computes; nothing from the file is evaluated)."""
    from .design import ScalarDesign, check_factor
    from .formula import ParsedFormula, split_formula

    variables = {str(v) for v in data.variables}
    try:
        lhs, rhs = split_formula(formula, data)
        for term in rhs:
            for expr, how in term:
                if how == "python":
                    check_factor(expr, variables)
                elif expr not in variables:
                    raise ValueError(f"unknown name {expr!r}")
    except ValueError as err:
        raise reader.fail(f"the stored formula {formula!r} is refused, nothing was evaluated: {err}") from None
    response, fterms = parsed["response"], list(parsed["functional_terms"])
    lookups = [t[0][0] for t in rhs if len(t) == 1 and t[0][1] == "lookup"]
    if lhs != [[(response, "lookup")]] or any(t not in lookups for t in fterms) or response not in data:
        raise reader.fail("the stored formula and its stored terms disagree (corrupted or forged file)")
    scalar = None
    if parsed["scalar"] is not None:
        try:
            scalar = ScalarDesign.from_dict(parsed["scalar"], variables)
        except ValueError as err:
            raise reader.fail(f"the stored scalar design is refused, nothing was evaluated: {err}") from None
        exprs = {e for t in rhs for e, _ in t if not (len(t) == 1 and t[0][0] in fterms)}
        if {f.expr for f in scalar.factors} != exprs:
            raise reader.fail("the stored scalar design does not match the formula (corrupted or forged file)")
    elif any(not (len(t) == 1 and t[0][0] in fterms) for t in rhs):
        raise reader.fail("the stored scalar design does not match the formula (corrupted or forged file)")
    grids = {str(t): np.asarray(g) for t, g in dict(parsed["input_grids"]).items()}
    return ParsedFormula(formula, response, str(parsed["response_dim"]), fterms, scalar, grids)


#: attributes whose class :func:`load` checks (a forged file could put anything there)
_EXPECTED = {
    "fdakpl.results.FunctionalRegressionResults": {"model": "fdakpl.regression.FunctionalRegression",
                                                   "estimator": "fdakpl.estimator.KPLRegressor"},
    "fdakpl.regression.FunctionalRegression": {"formula": "builtins.str"},
}


def _finish(obj: Any, reader: _Reader, data: xr.Dataset | None, parsed: dict[str, Any] | None) -> None:
    """Recompute what was not stored, and check the pieces fit together."""
    for name, inst in reader.post:
        for attr, cls in _EXPECTED.get(name, {}).items():
            if _class_name(inst.__dict__.get(attr)) != cls:
                raise reader.fail(f"the {attr} of a {name} is a {_class_name(inst.__dict__.get(attr))}, not a {cls} "
                                  "(forged or corrupted file)")
        if name == "fdakpl.estimator.KPLRegressor":
            X, W = inst.__dict__.get("X_fit_"), inst.__dict__.get("X_weights_")
            inst.K_ = inst._kernel()(X, None, W) if X is not None and hasattr(inst, "coef_") else None
            coef, dic = inst.__dict__.get("coef_"), inst.__dict__.get("dictionary_")
            if coef is not None and dic is not None and getattr(inst, "approx_", None) is None:
                n, d = coef.shape
                if d != dic.n_atoms_ or inst.B_.shape != (d, d) or (inst.K_ is not None and inst.K_.shape != (n, n)):
                    raise reader.fail(f"inconsistent model: alpha is {coef.shape}, the dictionary has "
                                      f"{dic.n_atoms_} atoms, B is {inst.B_.shape}")
        elif name == "fdakpl.regression.FunctionalRegression":
            if data is None or not isinstance(parsed, dict):
                raise reader.fail("the model has no stored training data or terms (corrupted file)")
            inst.data = data
            inst.parsed = _rebuild_parsed(inst.formula, parsed, data, reader)
        elif name == "fdakpl.results.FunctionalRegressionResults":
            inst._cache = {}
