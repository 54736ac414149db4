"""Sample labels and column names of user inputs, compared the same way everywhere.

Examples
--------
>>> label_keys(["a", "b"])
['a', 'b']
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

__all__ = ["feature_names", "label_keys", "sample_index"]

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
    if SAMPLE in da.indexes:
        return da.indexes[SAMPLE]
    return pd.Index(np.asarray(da[SAMPLE].values))
