"""Long-form responses paired with the inputs by sample label, never by position.

A long DataFrame (columns ``sample``, ``location``, ``value``) identifies its curves by
their ``sample`` labels; the order in which they first appear is an accident of how the
rows were sorted. :func:`pair_long` puts the curves in the order of the inputs' samples
(``df.attrs["samples"]``, which :func:`~fdakpl.data.functional.from_long` and
:func:`~fdakpl.data.functional.observations_from_long` follow):

* inputs with labels (a DataFrame's index, a DataArray's ``sample`` coordinate): by label;
* inputs without labels (a plain array): row ``i`` is the curve labelled ``i`` when the
  labels are the integers ``0 .. n-1``; a long frame that declares its order
  (``attrs["samples"]``, as :func:`~fdakpl.data.functional.to_long` writes) is taken in that
  order; anything else is refused.

Examples
--------
>>> import pandas as pd
>>> df = pd.DataFrame({"sample": [1, 0, 1], "location": [0.0, 0.0, 1.0], "value": [3.0, 1.0, 4.0]})
>>> pair_long(df, 2, None).attrs["samples"]
[0, 1]
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from .labels import SAMPLE, index_labels, label_keys, sample_index

__all__ = ["input_labels", "pair_long", "pair_long_with"]


def input_labels(X: Any) -> np.ndarray | None:
    """The sample labels of one input: a DataArray's ``sample`` coordinate, a DataFrame's or Series' index, else None.

    Raises
    ------
    ValueError
        Duplicated labels (they must identify curves).

    Examples
    --------
    >>> input_labels(pd.DataFrame({"a": [1.0, 2.0]}, index=["u", "v"])).tolist(), input_labels(np.zeros((2, 1)))
    (['u', 'v'], None)
    """
    index = labels = None  # the object's own index: its uniqueness is cached
    if isinstance(X, xr.DataArray) and SAMPLE in X.dims and SAMPLE in X.coords:
        index = sample_index(X)
        labels = index_labels(index)  # as prepare_response reads them (reading the coordinate's values costs more)
    elif isinstance(X, (pd.DataFrame, pd.Series)):
        index = X.index
        labels = np.asarray(index)
    if index is not None and not index.is_unique:
        raise ValueError(f"the inputs have duplicated sample labels {index[index.duplicated()].unique()[:5].tolist()}; "
                         "labels must identify curves: relabel them")
    return labels


def pair_long_with(X: Any, Y: Any) -> Any:
    """:func:`pair_long` for inputs ``X`` as an estimator takes them (an array, a DataArray, a DataFrame, a Dataset or
    a mapping of terms: the labels of its first labelled term).

    Examples
    --------
    >>> df = pd.DataFrame({"sample": ["b", "a"], "location": [0.0, 0.0], "value": [2.0, 1.0]})
    >>> pair_long_with(pd.DataFrame({"x": [1.0, 2.0]}, index=["a", "b"]), df).attrs["samples"]
    ['a', 'b']
    """
    if not isinstance(Y, pd.DataFrame):
        return Y
    terms = list(X.data_vars.values()) if isinstance(X, xr.Dataset) else \
        list(X.values()) if isinstance(X, Mapping) else [X]
    labels = next((lab for lab in map(input_labels, terms) if lab is not None), None)
    return pair_long(Y, int(np.shape(terms[0])[0]) if terms else 0, labels)


def pair_long(Y: Any, n_x: int, x_labels: Any) -> Any:
    """``Y`` with its curves in the order of the inputs' samples (``attrs["samples"]``) when it is long-form.

    Parameters
    ----------
    Y : Any
        The responses; anything but a long DataFrame is returned as it is.
    n_x : int
        Number of input samples.
    x_labels : array-like or None
        The inputs' sample labels (None for a plain array).

    Returns
    -------
    Y, or a shallow copy of the long DataFrame whose ``attrs["samples"]`` lists its labels in the inputs' order
    (the user's DataFrame is not modified).

    Raises
    ------
    ValueError
        Labels that differ from the inputs', or unlabelled inputs with a long frame whose labels are not the
        row numbers ``0 .. n-1`` (and which declares no order).

    Examples
    --------
    >>> df = pd.DataFrame({"sample": ["b", "a"], "location": [0.0, 0.0], "value": [2.0, 1.0]})
    >>> pair_long(df, 2, np.array(["a", "b"])).attrs["samples"]
    ['a', 'b']
    >>> pair_long(df, 2, None)
    Traceback (most recent call last):
    ...
    ValueError: X has no sample labels (a plain array) but Y is long-form data whose curves are identified by ...
    """
    if not isinstance(Y, pd.DataFrame) or SAMPLE not in Y.columns:
        return Y
    declared = Y.attrs.get("samples")
    y_labels = np.asarray(declared if declared is not None else pd.unique(Y[SAMPLE]), dtype=object)
    if y_labels.size != n_x:
        return Y  # the count check says what is wrong
    if x_labels is None:
        if declared is not None:
            return Y  # an order the user declared (to_long writes it): row i is its i-th curve
        if not _row_numbers(y_labels):
            shown = [str(v) for v in y_labels[:5]]
            raise ValueError(
                "X has no sample labels (a plain array) but Y is long-form data whose curves are identified by "
                f"their 'sample' labels ({shown}{' ...' if y_labels.size > 5 else ''}), in no defined order; pair "
                "them by label: give X the same labels (a pandas DataFrame indexed by them, or a DataArray with a "
                "'sample' coordinate), or label Y's curves by X's row numbers 0 .. n-1, or set "
                "Y.attrs['samples'] = [labels in X's row order]")
        order = sorted(y_labels.tolist())
    else:
        y_keys, x_keys = label_keys(y_labels), label_keys(x_labels)
        position = {k: i for i, k in enumerate(y_keys)}
        missing = [k for k in x_keys if k not in position]
        if missing:
            extra = sorted(set(y_keys) - set(x_keys))
            raise ValueError(f"X has samples {missing[:5]} that the long-form Y lacks (Y has {extra[:5]} instead); "
                             "Y's 'sample' column must hold X's sample labels")
        order = [y_labels[position[k]] for k in x_keys]
    out = Y.copy(deep=False)
    out.attrs = {**Y.attrs, "samples": list(order)}
    return out


def _row_numbers(labels: np.ndarray) -> bool:
    """Whether the labels are the integers ``0 .. n-1`` (in any order)."""
    values = labels.tolist()
    if not all(isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)) for v in values):
        return False
    return sorted(int(v) for v in values) == list(range(len(values)))
