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

__all__ = ["feature_names", "label_keys"]


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
