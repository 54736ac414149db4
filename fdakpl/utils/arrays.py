"""Small array helpers shared by layers that do not import each other."""

from __future__ import annotations

import numpy as np

__all__ = ["distinct_rows"]


def distinct_rows(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows (sub-arrays along the first axis) of ``a`` in order of first appearance, and for each row
    of ``a`` the position of its twin among them: ``a == unique[inverse]``, bit for bit.

    Rows are compared by their bytes, in one pass (:func:`numpy.unique` with ``axis=0`` sorts them, about 20 times
    slower on a few hundred rows): work done per distinct row, e.g. per pattern of observed points, is then done
    once for all the curves that share it.

    Examples
    --------
    >>> unique, inverse = distinct_rows(np.array([[1.0, 0.0], [2.0, 2.0], [1.0, 0.0]]))
    >>> unique, inverse
    (array([[1., 0.],
           [2., 2.]]), array([0, 1, 0]))
    """
    a = np.ascontiguousarray(a)
    first: dict[bytes, int] = {}
    inverse = np.array([first.setdefault(row.tobytes(), len(first)) for row in a], dtype=np.intp)
    return a[np.unique(inverse, return_index=True)[1]], inverse
