"""The parts of fdakpl's netCDF model format that saving and loading share.

Names of the format (its version, the kinds of model, the JSON state variable,
the prefix of fitted arrays), the registry of classes a file may name
(fdakpl's own classes only, by a stable name ``fdakpl.<Class>``), the
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
import importlib
from typing import Any

import numpy as np

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
]

#: version of the file layout written by :func:`fdakpl.io.netcdf.save` (3: the representer coefficients are
#: ``dual_coef_`` / ``dual_coef_B_``, which format 2 called ``coef_`` / ``coef_B_``; see :func:`renamed_coefficients`)
FORMAT_VERSION = 3

KIND_RESULTS = "fdakpl.results"
KIND_ESTIMATOR = "fdakpl.estimator"
STATE_VAR = "fdakpl_state"
PREFIX = "fdakpl."
_MODULES = ("kernels", "factor_kernels", "dictionaries", "losses", "data.preprocessing", "solvers.closed_form",
            "tuning.selection", "solvers.features", "solvers.primal", "tuning.joint", "estimators.kpl",
            "estimators.approx", "regression.model", "results.core")
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
    """Classes a file may name, by stable name.

    Examples
    --------
    >>> registry()["fdakpl.Gaussian"].__name__
    'Gaussian'
    """
    reg: dict[str, type] = {}
    for short in _MODULES:
        try:
            mod = importlib.import_module(f"fdakpl.{short}")
        except ImportError:  # pragma: no cover - optional module missing
            continue
        for obj in vars(mod).values():
            if not isinstance(obj, type):
                continue
            inside = obj.__module__ == mod.__name__ or obj.__module__.startswith(mod.__name__ + ".")
            if inside:
                name = stable_name(obj)
                if name not in DENY:
                    reg[name] = obj
    return reg


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


def stable_name(cls: type) -> str:
    """The name a file stores for a class: ``fdakpl.<ClassName>``, independent of the module that defines it
    (files written before the modules moved name the module too; :func:`normalise_name` reads both)."""
    return f"fdakpl.{cls.__qualname__}"


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


def _canonical(arr: np.ndarray) -> bytes:
    a = np.ascontiguousarray(arr)
    if a.dtype.kind == "f":
        a = np.where(np.isnan(a), np.nan, a)
    if a.dtype.kind == "O":
        a = np.array([str(v) for v in a.ravel()], dtype=str)
    return f"{a.dtype.str}{a.shape}".encode() + a.tobytes()


def checksum(state_json: str, arrays: dict[str, np.ndarray]) -> str:
    """SHA-256 of the JSON state and the arrays: detects corruption, not tampering (anyone can recompute it).

    Examples
    --------
    >>> checksum("{}", {"a": np.zeros(2)}) == checksum("{}", {"a": np.zeros(2)})
    True
    """
    h = hashlib.sha256(state_json.encode("utf-8"))
    for name in sorted(arrays):
        h.update(name.encode("utf-8"))
        h.update(_canonical(arrays[name]))
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
