"""The parts of fdakpl's netCDF model format that saving and loading share.

Names of the format (its version, the kinds of model, the JSON state variable,
the prefix of fitted arrays), the classes a file may name (those that declare
their saved fields with :func:`fdakpl.utils.saved.saved`, by a stable name
``fdakpl.<Class>``), the upgrade of states written by earlier formats, the
checksum and the restoration of stored dtypes.

Examples
--------
>>> "fdakpl.Gaussian" in registered_classes()
True
>>> len(checksum("{}", {}))
64
"""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np

from ..utils.saved import registry as saved_classes
from ..utils.saved import stable_name

__all__ = [
    "DENY",
    "FORMAT_VERSION",
    "KIND_ESTIMATOR",
    "KIND_RESULTS",
    "PREFIX",
    "RENAMED",
    "STATE_VAR",
    "checksum",
    "class_name",
    "normalise_name",
    "registered_classes",
    "registry",
    "renamed_coefficients",
    "renamed_state",
    "restore_dtype",
    "stable_name",
    "stored_dtype",
    "upgraded_state",
]

#: version of the file layout written by :func:`fdakpl.io.netcdf.save`: 4 stores the fields each class declares
#: (:mod:`fdakpl.utils.saved`) and the criterion that chose lambda as an object; 3 named the representer
#: coefficients ``dual_coef_`` / ``dual_coef_B_``, which format 2 called ``coef_`` / ``coef_B_``
#: (:func:`renamed_coefficients`); files of formats 2 and 3 load through :func:`upgraded_state`
FORMAT_VERSION = 4

KIND_RESULTS = "fdakpl.results"
KIND_ESTIMATOR = "fdakpl.estimator"
STATE_VAR = "fdakpl_state"
PREFIX = "fdakpl."
#: classes that hold user code and therefore cannot be stored without pickle
DENY = {"fdakpl.CustomLoss"}
#: parameters renamed in 0.x, by class (old name -> new name): files written before the rename still load
RENAMED: dict[str, dict[str, str]] = {
    "fdakpl.BSpline": {"n_basis": "n_atoms"},
    "fdakpl.FPCA": {"n_components": "n_atoms"},
    "fdakpl.RandomFourier": {"n_features": "n_atoms"},
    "fdakpl.FunctionalRegression": {"levels": "level"},
}


# ----------------------------------------------------------------------------- registry
def registry() -> dict[str, type]:
    """Classes a file may name, by stable name: those that declare their saved fields
    (:func:`fdakpl.utils.saved.saved`), except the ones that hold user code.

    Examples
    --------
    >>> registry()["fdakpl.Gaussian"].__name__
    'Gaussian'
    """
    return {k: v for k, v in saved_classes().items() if k not in DENY}


def renamed_coefficients(name: str, state: dict[str, Any], version: int) -> dict[str, Any]:
    """The stored attributes of a ``name`` object written in format ``version``, under today's attribute names.

    Format 2 stored a :class:`~fdakpl.estimators.kpl.KPLRegressor`'s representer coefficients as
    ``coef_`` (and ``alpha B`` as ``coef_B_``); format 3 names them ``dual_coef_`` / ``dual_coef_B_``
    and keeps ``coef_`` for the primal weights of an approximate fit (``approx_`` set), whose copy
    ``coef_B_`` it no longer stores. Only keys of the (still encoded) state are renamed: data, no code.

    Examples
    --------
    >>> renamed_coefficients("fdakpl.KPLRegressor", {"approx_": None, "coef_": 1, "coef_B_": 2}, 2)
    {'approx_': None, 'dual_coef_': 1, 'dual_coef_B_': 2}
    >>> renamed_coefficients("fdakpl.KPLRegressor", {"approx_": {"__object__": "..."}, "coef_": 1, "coef_B_": 1}, 2)
    {'approx_': {'__object__': '...'}, 'coef_': 1}
    """
    if version >= 3 or name != "fdakpl.KPLRegressor":
        return state
    if state.get("approx_") is not None:  # approximate fit: coef_ already means the primal weights
        return {k: v for k, v in state.items() if k != "coef_B_"}
    new = {"coef_": "dual_coef_", "coef_B_": "dual_coef_B_"}
    return {new.get(k, k): v for k, v in state.items()}


def registered_classes() -> list[str]:
    """Names of the classes that :func:`load` may rebuild (fdakpl's own classes only).

    Examples
    --------
    >>> "fdakpl.Gaussian" in registered_classes()
    True
    >>> "fdakpl.CustomLoss" in registered_classes()
    False
    """
    return sorted(registry())


def normalise_name(name: str) -> str:
    """The stable name of a class name read from a file (older files name the module too).

    Examples
    --------
    >>> normalise_name("fdakpl.kernels.Gaussian")
    'fdakpl.Gaussian'
    """
    return "fdakpl." + name.rsplit(".", 1)[-1] if name.startswith("fdakpl.") else name


def class_name(obj: Any) -> str:
    """The stable name of an object's class.

    Examples
    --------
    >>> class_name(1.0)
    'fdakpl.float'
    """
    return stable_name(type(obj))


def renamed_state(name: str, state: dict[str, Any]) -> dict[str, Any]:
    """The attributes of a stored object under today's parameter names (see :data:`RENAMED`).

    A FunctionalRegression's ``param_grid`` key ``"levels"`` becomes ``"level"`` too.

    Examples
    --------
    >>> renamed_state("fdakpl.BSpline", {"n_basis": 8, "degree": 3})
    {'n_atoms': 8, 'degree': 3}
    """
    renames = RENAMED.get(name, {})
    out = {renames.get(k, k): v for k, v in state.items()}
    grid = out.get("param_grid")
    if name == "fdakpl.FunctionalRegression" and isinstance(grid, dict) and "levels" in grid:
        out["param_grid"] = {("level" if k == "levels" else k): v for k, v in grid.items()}
    return out


#: how format <= 3 named the criterion that chose lambda (``lam_how``), as the state of today's criterion objects
_CRITERIA = {"leave-one-curve-out": "fdakpl.LOO", "GCV": "fdakpl.GCV", "fixed": "fdakpl.Fixed"}


def upgraded_state(name: str, state: dict[str, Any], version: int) -> dict[str, Any]:
    """The (still encoded) state of a ``name`` object written in format ``version``, in today's fields.

    Renamed parameters and coefficients (:func:`renamed_state`, :func:`renamed_coefficients`); for results
    of format <= 3, the criterion object from the stored display name (``lam_how``) and the stored lambda
    path (``_criteria_path``) as ``criteria``. Fields that are no longer stored (caches, the ``n x n``
    decomposition) are dropped by the reader. Data only: nothing is evaluated.

    Examples
    --------
    >>> upgraded_state("fdakpl.FunctionalRegressionResults", {"lam_how": "GCV", "lam": 0.1}, 3)["criterion"]
    {'__object__': 'fdakpl.GCV', 'state': {}}
    """
    state = renamed_state(name, renamed_coefficients(name, state, version))
    if version >= 4 or name != "fdakpl.FunctionalRegressionResults":
        return state
    how = state.get("lam_how")
    crit: dict[str, Any]
    if isinstance(how, str) and how in _CRITERIA:
        crit = {"__object__": _CRITERIA[how], "state": {"lam": state.get("lam")} if how == "fixed" else {}}
    elif isinstance(how, str) and how.startswith("leave-one-group-out"):
        label = how[how.find("(") + 1:-1] if "(" in how else "groups"
        crit = {"__object__": "fdakpl.GroupLOO", "state": {"labels": [], "label": label}}
    elif isinstance(how, str) and how.endswith("-fold CV") and how.split("-")[0].isdigit():
        crit = {"__object__": "fdakpl.KFold", "state": {"n_splits": int(how.split("-")[0])}}
    else:
        crit = {"__object__": "fdakpl.LOO", "state": {}}
    out = {k: v for k, v in state.items() if k not in {"lam_how", "_criteria_path"}}
    out["criterion"] = crit
    path = state.get("_criteria_path", state.get("criteria"))
    if isinstance(path, dict) and isinstance(path.get("state"), dict):
        path = {**path, "state": {k: v for k, v in path["state"].items() if k != "unit"}}
    out["criteria"] = path
    return out


#: elements hashed at a time (the checksum never copies a whole array)
_CHUNK = 2 ** 16


def _update(h: Any, arr: np.ndarray) -> None:
    """Feed an array to the hash as its dtype, shape and bytes (NaN canonicalised), chunk by chunk."""
    a = np.asarray(arr)
    if a.dtype.kind == "O":
        a = np.array([str(v) for v in a.ravel()], dtype=str).reshape(a.shape)
    h.update(f"{a.dtype.str}{a.shape}".encode())
    flat = a.reshape(-1)  # a view when contiguous
    for start in range(0, flat.size, _CHUNK):
        part = np.ascontiguousarray(flat[start:start + _CHUNK])
        if part.dtype.kind == "f" and np.isnan(part).any():
            part = np.where(np.isnan(part), np.nan, part)
        h.update(part.view(np.uint8) if part.dtype.itemsize else part.tobytes())


def checksum(state_json: str, arrays: dict[str, np.ndarray]) -> str:
    """SHA-256 of the JSON state and the arrays: detects corruption, not tampering (anyone can recompute it).

    Arrays are hashed in chunks (no copy of a whole array: the hash costs no memory that :func:`load` would
    have to plan).

    Examples
    --------
    >>> checksum("{}", {"a": np.zeros(2)}) == checksum("{}", {"a": np.zeros(2)})
    True
    """
    h = hashlib.sha256(state_json.encode("utf-8"))
    for name in sorted(arrays):
        h.update(name.encode("utf-8"))
        _update(h, arrays[name])
    return h.hexdigest()


def restore_dtype(values: np.ndarray, dtype: str) -> np.ndarray:
    """Values read from a file, in the dtype they had when saved (datetimes were stored as int64 ticks).

    Examples
    --------
    >>> restore_dtype(np.array([1, 2]), "<f8").dtype
    dtype('float64')
    """
    target = stored_dtype(dtype)
    if target.kind in "mM":  # stored as their int64 ticks
        return np.asarray(values).astype(np.int64).view(target)
    if target.kind == "O":
        return np.array(values.tolist() if values.dtype.kind != "O" else values, dtype=object)
    if target.kind in "US":
        return np.asarray(values.astype(str) if values.dtype.kind == "O" else values).astype(target)
    return np.asarray(values).astype(target)


def stored_dtype(text: Any) -> np.dtype:
    """A dtype named in a file: booleans, numbers, text or datetimes of at most 1 KiB per element.

    Anything else (object, void, structured dtypes, or a void of a gigabyte per element, which would
    allocate that much when a scalar is rebuilt) is refused with a ValueError.

    Examples
    --------
    >>> stored_dtype("<f8")
    dtype('float64')
    >>> stored_dtype("V1000000000")
    Traceback (most recent call last):
    ...
    ValueError: the file names the dtype 'V1000000000', which fdakpl never stores
    """
    try:
        dt = np.dtype(str(text))
    except (TypeError, ValueError):
        raise ValueError(f"the file names the dtype {text!r}, which is not a dtype") from None
    if dt.kind not in "biufcUSmMO" or dt.itemsize > 1024 or dt.fields is not None:
        raise ValueError(f"the file names the dtype {text!r}, which fdakpl never stores")
    return dt
