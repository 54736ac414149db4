"""Sample labels and column names of user inputs, compared the same way everywhere.

Examples
--------
>>> label_keys(["a", "b"])
['a', 'b']
"""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

__all__ = ["check_same_samples", "coordinate_values", "feature_names", "index_labels", "label_keys", "labelled_array",
           "sample_index", "samples_text"]

#: the sample dimension of functional variables (re-exported by fdakpl.data.functional)
SAMPLE = "sample"


def label_keys(labels: Any) -> list[str]:
    """Sample labels as text, one per sample, for comparisons (tuples of a MultiIndex stay one label each).

    Examples
    --------
    >>> label_keys(np.array([1, 2]))
    ['1', '2']
    >>> import pandas as pd
    >>> label_keys(pd.MultiIndex.from_arrays([[1, 2], ["a", "b"]]))
    ["(1, 'a')", "(2, 'b')"]
    """
    return [str(v) for v in pd.Index(np.asarray(labels, dtype=object) if not isinstance(labels, pd.Index)
                                     else labels)]


def feature_names(X: Any) -> list[str] | None:
    """Column names of a DataFrame when they are all strings (scikit-learn's rule for ``feature_names_in_``).

    Examples
    --------
    >>> feature_names(pd.DataFrame({"a": [1.0], "b": [2.0]}))
    ['a', 'b']
    >>> feature_names(np.zeros((1, 2))) is None
    True
    """
    if isinstance(X, pd.DataFrame) and all(isinstance(c, str) for c in X.columns):
        return [str(c) for c in X.columns]
    return None


def sample_index(da: Any) -> pd.Index:
    """The sample labels as a pandas Index (the object's own index when it has one: its uniqueness is cached).

    Examples
    --------
    >>> import xarray as xr
    >>> sample_index(xr.DataArray([1.0, 2.0], dims="sample", coords={"sample": ["a", "b"]})).is_unique
    True
    """
    xindex = da.xindexes.get(SAMPLE)
    index = getattr(xindex, "index", None)  # a PandasIndex's own pandas index (da.indexes builds every one)
    if isinstance(index, pd.Index) and not isinstance(index, pd.MultiIndex):
        return index
    if SAMPLE in da.indexes:
        return da.indexes[SAMPLE]
    return pd.Index(np.asarray(da[SAMPLE].values))


_LAST_LABELS: tuple[Any, Any] = (None, None)  # (weak reference to a pandas Index, its labels as an array)


def index_labels(index: pd.Index) -> np.ndarray:
    """``np.asarray(index)``, read-only; the same array for the same index object as at the last call (the
    inputs and the response of one Dataset share their sample index: their labels are then one object).

    Examples
    --------
    >>> i = pd.Index(["a", "b"]); index_labels(i) is index_labels(i)
    True
    """
    global _LAST_LABELS
    ref, labels = _LAST_LABELS  # one tuple, replaced whole: consistent across threads
    if ref is not None and ref() is index:
        return labels
    labels = np.asarray(index).view()  # a view: read-only without touching the index's own memory
    labels.flags.writeable = False
    try:
        _LAST_LABELS = (weakref.ref(index), labels)
    except TypeError:  # pragma: no cover - an index without weak references
        pass
    return labels


def coordinate_values(da: Any, dim: str) -> np.ndarray:
    """The values of the coordinate ``dim`` of an xarray object, read from its pandas index when it has one.

    Examples
    --------
    >>> coordinate_values(xr.DataArray([1.0, 2.0], dims="t", coords={"t": [0.0, 0.5]}), "t")
    array([0. , 0.5])
    """
    xindex = da.xindexes.get(dim)
    index = getattr(xindex, "index", None)  # reading it through the coordinate costs more than a small fit
    if isinstance(index, pd.Index) and index.dtype.kind in "iuf" and index.dtype == getattr(xindex, "coord_dtype", 0):
        return index.to_numpy()
    return np.asarray(da.coords.variables[dim].values)


def check_same_samples(n_x: int, x_labels: Any, n_y: int, y_labels: Any, who: str = "KPL") -> None:
    """Inputs and responses must describe the same (at least 2) samples, in the same order.

    Examples
    --------
    >>> check_same_samples(3, None, 3, ["a", "b", "c"])
    >>> check_same_samples(2, None, 3, None)
    Traceback (most recent call last):
    ...
    ValueError: X has 2 samples but Y has 3; they must describe the same samples
    """
    if n_x != n_y:
        raise ValueError(f"X has {n_x} samples but Y has {n_y}; they must describe the same samples")
    if x_labels is not None and y_labels is not None and not _same_labels(x_labels, y_labels):
        raise ValueError("X and Y have different sample labels (or order); align them, e.g. with "
                         "xr.align(X, Y, join='exact')")
    if n_y < 2:
        raise ValueError(f"{who} needs at least 2 samples, got n_samples = {n_y}")


def _same_labels(a: Any, b: Any) -> bool:
    """Whether two sets of labels are equal as texts (:func:`label_keys`), without converting texts or equal
    integers to texts."""
    if a is b:
        return True
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.shape == b.shape and np.array_equal(a, b) \
            and (_texts(a) or _texts(b) or (a.dtype == b.dtype and a.dtype.kind in "iu")):
        return True  # equal texts, or equal integers of one type: equal as texts
    return label_keys(a) == label_keys(b)


def _texts(a: np.ndarray) -> bool:
    return a.dtype.kind == "U" or (a.dtype == object and all(isinstance(v, str) for v in a.flat))


def labelled_array(values: np.ndarray, dims: tuple[str, ...], coords: dict[str, Any], name: Any = None) -> xr.DataArray:
    """``xr.DataArray(values, dims=dims, coords=coords, name=name)``, reusing the indexes of existing objects.

    ``coords`` maps a dim to an array of labels, or to an xarray object that has that dim's indexed
    coordinate (e.g. the Dataset the inputs came from): its coordinate and index are shared, as
    ``ds[name]`` shares them, instead of being built again (building a pandas index of text labels costs
    more than a prediction).

    Examples
    --------
    >>> ds = xr.Dataset(coords={"sample": ["a", "b"]})
    >>> labelled_array(np.zeros((2, 3)), ("sample", "t"), {"sample": ds, "t": [0.0, 0.5, 1.0]}, "y").sample.values
    array(['a', 'b'], dtype='<U1')
    """
    given = {d: c for d, c in coords.items() if not (isinstance(c, (xr.Dataset, xr.DataArray)) and d in c.xindexes)}
    built = xr.Coordinates(given) if given else None
    variables: dict[Any, Any] = {}
    indexes: dict[Any, Any] = {}
    for dim, c in coords.items():
        src = built if dim in given else c.coords
        variables[dim] = src.variables[dim]
        indexes[dim] = src.xindexes[dim]
    try:  # xarray's own constructor of ds[name]: the coordinates and their indexes as they are
        return xr.DataArray(xr.Variable(dims, values), coords=variables, name=name, indexes=indexes, fastpath=True)
    except (TypeError, AssertionError):  # pragma: no cover - an xarray without that constructor
        return xr.DataArray(values, dims=dims, coords=xr.Coordinates(variables, indexes=indexes), name=name)


def samples_text(rows: np.ndarray, labels: np.ndarray | None, limit: int = 10) -> str:
    """``samples ['2017_1', ...]`` by label when the data have labels, else ``samples at positions [16, ...]``.

    Examples
    --------
    >>> samples_text(np.array([0, 2]), None), samples_text(np.array([1]), np.array(["a", "b"]))
    ('samples at positions [0, 2]', "samples ['b']")
    """
    more = f" and {rows.size - limit} more" if rows.size > limit else ""
    if labels is not None:
        return f"samples {[str(v) for v in labels[rows[:limit]]]}{more}"
    return f"samples at positions {rows[:limit].tolist()}{more}"
