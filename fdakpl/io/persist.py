"""``fdakpl.save`` and ``fdakpl.load``: the package's two functions for model files.

:func:`save` delegates to the object's own ``save`` method (a fitted
:class:`~fdakpl.KPLRegressor` or :class:`~fdakpl.FunctionalRegressionResults`, both
writing the netCDF format of :mod:`fdakpl.io.netcdf`), so ``fdakpl.save(res, path)`` and
``res.save(path)`` write the same file; :func:`load` reads it back without executing code.
Both functions' docstrings have runnable examples.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from .netcdf_load import load

__all__ = ["load", "save"]


def save(obj: Any, path: str | os.PathLike[str], **kwargs: Any) -> Path:
    """Save a fitted model to a netCDF file (no pickle): ``obj.save(path, **kwargs)``.

    Mirrors :func:`load`; the file is written by the object's own ``save`` method
    (see :func:`fdakpl.io.netcdf.save` for the format and the options).

    Parameters
    ----------
    obj : FunctionalRegressionResults or KPLRegressor
        A fitted model.
    path : str or path-like
        Target file (``.nc``).
    **kwargs
        Options of the object's ``save`` (``engine=``, ``overwrite=``).

    Returns
    -------
    pathlib.Path
        The file written.

    Raises
    ------
    TypeError
        If ``obj`` has no ``save`` method (fdakpl saves fitted
        ``FunctionalRegressionResults`` and ``KPLRegressor``).

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from fdakpl import FunctionalRegression, datasets
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> res = FunctionalRegression("rcst ~ cca + sex", datasets.dti_first_visits(), interpolate_inputs=True,
    ...                            lam=1e-3, progress=False).fit()
    >>> again = load(save(res, folder / "dti.nc"))
    >>> bool((again.predict() == res.predict()).all())
    True
    >>> save([1.0, 2.0], folder / "list.nc")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    TypeError: fdakpl.save stores a fitted model (...), got a list, which has no save method
    """
    method = getattr(obj, "save", None)
    if not callable(method):
        raise TypeError(f"fdakpl.save stores a fitted model (FunctionalRegressionResults or KPLRegressor), "
                        f"got a {type(obj).__name__}, which has no save method")
    return Path(method(path, **kwargs))
