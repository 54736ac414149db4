"""Loading fitted models saved by :func:`fdakpl.io.netcdf.save` (never executes code from the file).

The file is opened lazily: its attributes, the model description and the
sizes of the arrays it refers to are checked before any array is read.
Objects are rebuilt only from fdakpl's own classes; the scalar design of a
formula is rebuilt from stored data after every factor has been checked
against the grammar of :mod:`fdakpl.formula.grammar`.

Examples
--------
A file whose arrays would take more memory than ``max_bytes`` is refused before they are read:

>>> import tempfile, pathlib
>>> import numpy as np
>>> from fdakpl import KPLRegressor
>>> model = KPLRegressor(lam=0.1).fit(np.eye(6), np.outer(np.arange(6.0), np.linspace(0, 1, 5)))
>>> path = model.save(pathlib.Path(tempfile.mkdtemp()) / "model.nc")
>>> load(path, max_bytes=100)  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
ValueError: ...more than max_bytes=100 (9.54e-05 MiB); if you trust this file, pass a larger max_bytes to load
>>> load(path).dual_coef_.shape
(6, 5)
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np
import xarray as xr

from ..kernels import kernel_or_default
from ..utils.saved import saved_defaults, saved_fields
from . import netcdf_format as fmt
from .load_budget import check_max_bytes, description_dicts, inline_arrays, plan_array, plan_json

__all__ = ["MAX_BYTES", "load"]


class _Reader:
    def __init__(self, path: Path, arrays: dict[str, np.ndarray], version: int = fmt.FORMAT_VERSION) -> None:
        self.path = path
        self.version = version
        self.arrays = arrays
        self.registry = fmt.registry()
        self.post: list[Any] = []
        self.used: set[str] = set()

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
            if name in self.used:  # a second reference (never written by save): its own copy, planned as such
                return self.arrays[name].copy()
            self.used.add(name)
            return self.arrays[name]  # read for this load only: no copy needed
        if "__datetimes__" in obj:  # timezone-aware dates: UTC ticks and the zone's name
            ticks = self.decode(obj["ticks"])
            if not isinstance(ticks, np.ndarray) or ticks.dtype.kind != "M":
                raise self.fail("stored dates are not an array of dates (corrupted file)")
            return _zoned(ticks, obj["__datetimes__"], self)
        if "__ndarray__" in obj:
            return np.array(obj["data"], dtype=fmt.stored_dtype(obj["__ndarray__"])).reshape(obj["shape"])
        if "__npscalar__" in obj:
            return fmt.stored_dtype(obj["__npscalar__"]).type(obj["value"])
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
            if isinstance(name, str):
                name = fmt.normalise_name(name)
            cls = self.registry.get(name)
            if cls is None:
                raise self.fail(f"the model refers to the class {name!r}, which is not one of fdakpl's classes; "
                                "refusing to load it (files never name code to run)")
            state = obj.get("state")
            if not isinstance(state, dict):
                raise self.fail(f"the state of a {name} is not a mapping (corrupted file)")
            state = fmt.upgraded_state(name, state, self.version)  # formats <= 3: today's fields
            if name == "fdakpl.KPLRegressor" and self.version < 4 and isinstance(state.get("approx_"), dict):
                return self.decode(state["approx_"])  # an approximate fit: the ApproxKPLRegressor it wrapped
            fields = saved_fields(cls)
            unknown = sorted(set(state) - set(fields))
            if unknown and self.version >= 4:
                raise self.fail(f"the stored {name} has fields {unknown[:5]} that the class does not declare "
                                "(forged or corrupted file)")
            inst = cls.__new__(cls)
            inst.__dict__.update(saved_defaults(cls))
            inst.__dict__.update({k: self.decode(state[k]) for k in fields if k in state})
            self.post.append((name, inst))
            return inst
        return {k: self.decode(v) for k, v in obj.items()}


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
    :mod:`fdakpl.formula.grammar`; no text from the file is evaluated as code.

    Files of an earlier format load with the attributes renamed since then
    (:func:`fdakpl.io.netcdf_format.renamed_coefficients`: format 2's ``coef_`` of an
    exact fit is today's ``dual_coef_``).

    Parameters
    ----------
    path : str or path-like
        A file written by :func:`fdakpl.io.netcdf.save`.
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
    max_bytes = check_max_bytes(max_bytes)  # the caller's mistake, not the file's: said before the file is opened
    path = Path(path).expanduser()
    if not path.exists():
        raise FileNotFoundError(f"no such file: {path}")
    try:
        # no warning filter is changed here (that is not thread-safe): the file is our own format
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


def _array_refs(obj: Any, out: dict[str, int]) -> dict[str, int]:
    """Names of the arrays a model description refers to, with how often (every reference after the first is a
    copy)."""
    for cur in description_dicts(obj):
        name = cur.get("__array__")
        if isinstance(name, str):
            out[name] = out.get(name, 0) + 1
    return out


def _leaves(data: Any) -> int:
    """Number of scalars in nested lists (what ``np.array(data)`` allocates, element by element)."""
    count, stack = 0, [data]
    while stack:
        cur = stack.pop()
        if isinstance(cur, list):
            stack.extend(cur)
        else:
            count += 1
    return count


def _inline_bytes(state: Any) -> int:
    """Bytes the arrays written inline in the description take once built (their named dtype)."""
    total = 0
    for entry in inline_arrays(state):
        dt = fmt.stored_dtype(entry.get("__ndarray__"))
        shape = entry.get("shape")
        if not isinstance(shape, list) or not all(isinstance(k, int) and not isinstance(k, bool) and 0 <= k
                                                  for k in shape):
            raise ValueError(f"an inline array has the shape {str(shape)[:80]}, not a list of sizes (corrupted file)")
        total += 2 * _leaves(entry.get("data")) * max(dt.itemsize, 8 if dt.kind == "O" else 1)
    return total


def _too_large(what: str, total: float, max_bytes: float) -> ValueError:
    return ValueError(f"{what} take {total:.0f} bytes ({total / 2 ** 20:.3g} MiB) in memory, more than "
                      f"max_bytes={max_bytes:.0f} ({max_bytes / 2 ** 20:.3g} MiB); if you trust this file, pass a "
                      "larger max_bytes to load")


def _load_open(f: xr.Dataset, path: Path, max_bytes: int) -> Any:
    kind = f.attrs.get("fdakpl_format")
    if kind not in {fmt.KIND_RESULTS, fmt.KIND_ESTIMATOR} or fmt.STATE_VAR not in f.variables:
        raise ValueError(f"{path}: not an fdakpl model file (no 'fdakpl_format' attribute or '{fmt.STATE_VAR}' "
                         f"variable); it holds the variables {sorted(map(str, f.data_vars))[:10]}")
    sv = f.variables[fmt.STATE_VAR]
    if sv.dtype.kind not in "USO" or sv.ndim > 1 or sv.size * max(sv.dtype.itemsize, 1) > _MAX_STATE:
        raise ValueError(f"{path}: the model description '{fmt.STATE_VAR}' is not a text of at most "
                         f"{_MAX_STATE} bytes (forged or corrupted file)")
    n_chars = sv.size * max(sv.dtype.itemsize // (4 if sv.dtype.kind == "U" else 1), 1)
    if plan_json(n_chars) > max_bytes:
        raise _too_large(f"the model description ({n_chars} characters) would", plan_json(n_chars), max_bytes)
    try:
        text = sv.values.item() if sv.ndim == 0 else "".join(sv.values.astype(str))
        state = json.loads(str(text))
    except (json.JSONDecodeError, ValueError, TypeError) as err:
        raise ValueError(f"{path}: the model description '{fmt.STATE_VAR}' is not valid JSON ({err})") from None
    version = state.get("format_version") if isinstance(state, dict) else None
    if not isinstance(version, int) or version > fmt.FORMAT_VERSION:
        raise ValueError(f"{path}: written in fdakpl file format {version!r}; this fdakpl reads format "
                         f"<= {fmt.FORMAT_VERSION}: upgrade fdakpl")
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
    refs = _array_refs(state.get("root"), {})
    refs = _array_refs(state.get("parsed"), refs)
    refs = _array_refs(info, refs)
    wanted: dict[str, str] = {}  # file variable -> what it is
    targets: dict[str, np.dtype] = {}  # file variable -> the dtype it is restored to
    for name in sorted(refs):
        if name not in f.variables or not name.startswith(fmt.PREFIX):
            raise ValueError(f"the model refers to the array {name!r}, which the file lacks (corrupted file)")
        dtype = f.variables[name].attrs.get("fdakpl_dtype")
        if dtype is None:
            raise ValueError(f"variable {name!r} has no 'fdakpl_dtype' attribute (corrupted file)")
        wanted[name], targets[name] = "array", fmt.stored_dtype(dtype)
    for name, meta in data_vars.items():
        stored = meta.get("stored_as", name)
        if stored in wanted:
            raise ValueError(f"two parts of the model are stored as the variable {stored!r} (corrupted file)")
        if stored not in f.variables:
            raise ValueError(f"the training variable {name!r} is missing from the file")
        if list(f.variables[stored].shape) != list(meta.get("shape", [])):
            raise ValueError(f"the training variable {name!r} has shape {f.variables[stored].shape} in the file "
                             f"but {meta.get('shape')} in the model description (corrupted file)")
        wanted[stored], targets[stored] = name, fmt.stored_dtype(meta.get("dtype"))
    # every allocation planned before it happens: arrays as read and as restored (the dtype the file names,
    # which may be wider), copies for repeated references, inline arrays, the parsed description
    arrays_kept, transient = 0, 0
    for name in wanted:
        var = f.variables[name]
        kept, peak = plan_array(var.dtype, int(var.size), targets[name])
        arrays_kept += kept * max(refs.get(name, 1), 1)
        transient = max(transient, peak)
    total = arrays_kept + transient + _inline_bytes(state) + plan_json(n_chars)
    if total > max_bytes:
        raise _too_large(f"the model's arrays take {arrays_kept} bytes; with the description and conversions "
                         "they would", total, max_bytes)
    arrays: dict[str, np.ndarray] = {}
    restored: dict[str, np.ndarray] = {}
    for name, what in wanted.items():
        var = f.variables[name]
        if what == "array":
            arrays[name] = fmt.restore_dtype(var.values, str(var.attrs["fdakpl_dtype"]))
        else:
            restored[what] = fmt.restore_dtype(var.values, data_vars[what]["dtype"])
    check = dict(arrays)
    check.update({f"data:{k}": v for k, v in restored.items()})
    state_json = json.dumps(state, ensure_ascii=True, allow_nan=True)
    if f.attrs.get("fdakpl_checksum") != fmt.checksum(state_json, check):
        raise ValueError(f"{path}: checksum mismatch: the file was modified or corrupted after it was saved")
    reader = _Reader(path, arrays, version)
    obj = reader.decode(state["root"])
    want = {fmt.KIND_RESULTS: ("fdakpl.FunctionalRegressionResults",),
            fmt.KIND_ESTIMATOR: ("fdakpl.KPLRegressor", "fdakpl.ApproxKPLRegressor")}
    got = fmt.class_name(obj)
    if got not in want[kind]:
        raise ValueError(f"the file holds a {got} where a {' or '.join(want[kind])} belongs (forged or corrupted "
                         "file)")
    data = _rebuild_data(info, restored, reader) if kind == fmt.KIND_RESULTS else None
    parsed = reader.decode(state.get("parsed")) if kind == fmt.KIND_RESULTS else None
    _finish(obj, reader, data, parsed)
    return obj


def _zoned(ticks: np.ndarray, zone: Any, reader: _Reader) -> np.ndarray:
    """Timezone-aware Timestamps (an object array, as fdakpl's labels hold them) from UTC ticks and a zone name."""
    import pandas as pd

    try:
        index = pd.DatetimeIndex(ticks.ravel()).tz_localize("UTC").tz_convert(str(zone))
    except Exception as err:  # an unknown zone name (pytz / zoneinfo raise several types)
        raise reader.fail(f"the stored time zone {str(zone)[:40]!r} is not known here ({type(err).__name__})") from None
    return np.array(list(index), dtype=object).reshape(ticks.shape)


def _data_variable(dims: tuple[str, ...], values: np.ndarray, meta: dict[str, Any], attrs: Any,
                   reader: _Reader) -> Any:
    """A training variable or coordinate as it was saved (timezone-aware dates as pandas holds them)."""
    zone = meta.get("timezone")
    if zone is None:
        return xr.Variable(dims, values, attrs=attrs)
    if values.dtype.kind != "M" or len(dims) != 1:
        raise reader.fail("stored dates with a time zone are not a 1-d array of dates (corrupted file)")
    import pandas as pd

    index = pd.DatetimeIndex(_zoned(values, zone, reader))
    return xr.IndexVariable(dims, index, attrs=attrs) if meta.get("coord") else xr.Variable(dims, index, attrs=attrs)


def _rebuild_data(info: dict[str, Any], restored: dict[str, np.ndarray], reader: _Reader) -> xr.Dataset:
    meta = info.get("variables", {})
    made = {k: _data_variable(tuple(m["dims"]), restored[k], m, reader.decode(m["attrs"]), reader)
            for k, m in meta.items()}
    coords = {k: v for k, v in made.items() if meta[k]["coord"]}
    data_vars = {k: v for k, v in made.items() if not meta[k]["coord"]}
    return xr.Dataset(data_vars, coords=coords, attrs=reader.decode(info.get("attrs", {})))


def _rebuild_parsed(formula: Any, parsed: dict[str, Any], data: xr.Dataset, reader: _Reader) -> Any:
    """The parsed formula from its stored parts; the formula text is only checked against the grammar (the
    stored design is what computes; nothing from the file is evaluated)."""
    from ..formula.design import ScalarDesign
    from ..formula.grammar import check_factor
    from ..formula.terms import ParsedFormula, split_formula

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
    "fdakpl.FunctionalRegressionResults": {"model": ("fdakpl.FunctionalRegression",),
                                           "estimator": ("fdakpl.KPLRegressor", "fdakpl.ApproxKPLRegressor")},
}


def _finish(obj: Any, reader: _Reader, data: xr.Dataset | None, parsed: dict[str, Any] | None) -> None:
    """Recompute what was not stored, and check the pieces fit together."""
    for name, inst in reader.post:
        for attr, classes in _EXPECTED.get(name, {}).items():
            if fmt.class_name(inst.__dict__.get(attr)) not in classes:
                raise reader.fail(f"the {attr} of a {name} is a {fmt.class_name(inst.__dict__.get(attr))}, not a "
                                  f"{' or '.join(classes)} (forged or corrupted file)")
        if name in {"fdakpl.KPLRegressor", "fdakpl.ApproxKPLRegressor"} and "kernel_" not in inst.__dict__:
            inst.kernel_ = kernel_or_default(inst.__dict__.get("kernel"))  # files of format <= 3
        if name == "fdakpl.KPLRegressor":
            coef, dic = inst.__dict__.get("dual_coef_"), inst.__dict__.get("dictionary_")
            X = inst.__dict__.get("X_fit_")
            if coef is not None and dic is not None:
                n, d = coef.shape
                rows = None if X is None else (next(iter(X.values())) if isinstance(X, dict) else X).shape[0]
                if d != dic.n_atoms_ or inst.B_.shape != (d, d) or (rows is not None and rows != n):
                    raise reader.fail(f"inconsistent model: alpha is {coef.shape}, the dictionary has "
                                      f"{dic.n_atoms_} atoms, B is {inst.B_.shape}")
        elif name == "fdakpl.FunctionalRegression":
            if data is None or not isinstance(parsed, dict):
                raise reader.fail("the model has no stored training data or terms (corrupted file)")
            if not isinstance(inst.__dict__.get("formula"), str):
                raise reader.fail("the stored formula is not a string (forged or corrupted file)")
            inst.data = data
            inst.parsed = _rebuild_parsed(inst.formula, parsed, data, reader)
            inst._parsed_for = (inst.formula, data)  # a refit uses the stored terms unless formula or data change
        elif name == "fdakpl.FunctionalRegressionResults":
            for key, value in (("edf", np.nan), ("rkhs_norm", np.nan), ("held_out", None),
                               ("condition_numbers", {"kernel": np.nan, "gram": np.nan, "system": np.nan})):
                inst.__dict__.setdefault(key, value)  # files of format <= 3 did not store them
