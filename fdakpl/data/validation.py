"""Checks of scalar parameters, shared by every estimator and solver (one source of truth for each rule)."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["check_bool", "check_grid", "check_int", "check_lam", "check_number"]


def check_bool(value: Any, name: str, *, none: bool = False) -> bool | None:
    """A boolean option: ``True`` or ``False`` (NumPy's booleans too; ``None`` when ``none``).

    Anything else is refused, rather than read by its truth value: the text ``"False"`` (from a
    configuration file, a command line) is true in Python and would turn the option on.

    Examples
    --------
    >>> check_bool(False, "center")
    False
    >>> check_bool("False", "center")
    Traceback (most recent call last):
    ...
    TypeError: center must be True or False, got 'False' (str); write center=False, not center='False'
    """
    if value is None and none:
        return None
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    shown = f"; write {name}={value.strip().capitalize()}, not {name}={value!r}" if isinstance(value, str) and \
        value.strip().lower() in {"true", "false"} else ""
    raise TypeError(f"{name} must be True or False{' (or None)' if none else ''}, got {value!r} "
                    f"({type(value).__name__}){shown}")


def check_number(value: Any, name: str, *, positive: bool = True, hint: str = "") -> float:
    """A finite real number (``> 0`` when ``positive``), as a float (``hint`` ends the message of a non-number).

    Examples
    --------
    >>> check_number(2, "sigma")
    2.0
    >>> check_number(0.0, "sigma")
    Traceback (most recent call last):
    ...
    ValueError: sigma must be a finite number > 0, got 0.0
    """
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a number{' > 0' if positive else ''}, got {value!r}{hint}")
    value = float(value)
    if not np.isfinite(value) or (positive and value <= 0):
        raise ValueError(f"{name} must be a finite number{' > 0' if positive else ''}, got {value}")
    return value


def check_int(value: Any, name: str, minimum: int = 1) -> int:
    """An integer ``>= minimum`` (booleans refused).

    Examples
    --------
    >>> check_int(3, "n_components")
    3
    >>> check_int(0, "n_components")
    Traceback (most recent call last):
    ...
    ValueError: n_components must be an integer >= 1, got 0
    """
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def check_lam(lam: Any, hint: str = "") -> float:
    """The ridge parameter: a finite number > 0 (``hint`` is appended to the message of a non-number).

    Examples
    --------
    >>> check_lam(1e-3)
    0.001
    >>> check_lam(-1.0)
    Traceback (most recent call last):
    ...
    ValueError: lam must be a finite number > 0, got -1.0
    """
    return check_number(lam, "lam", hint=hint)


def check_grid(values: Any, name: str, example: str = "np.geomspace(1e-8, 1, 21)", sort: bool = True) -> np.ndarray:
    """A grid of values > 0 (lambdas, width multiples, ``b``): a non-empty 1-d sequence of finite numbers > 0,
    returned sorted without repeats (``sort=False``: as given, as floats). The one check of such grids.

    Parameters
    ----------
    values : array-like
    name : str
        The parameter (named in the message).
    example : str
        A valid value to show in the message.
    sort : bool
        Sort and drop repeats (a user's grid), or keep the order (a path aligned with other arrays).

    Examples
    --------
    >>> check_grid([1.0, 1e-3, 1.0], "lam_grid")
    array([0.001, 1.   ])
    >>> check_grid([1.0, -1.0], "lam_grid")
    Traceback (most recent call last):
    ...
    ValueError: lam_grid must hold finite numbers > 0, got -1.0; e.g. lam_grid=np.geomspace(1e-8, 1, 21)
    """
    if isinstance(values, (str, bytes)):
        raise TypeError(f"{name} must be a list of numbers > 0, got {values!r}; e.g. {name}={example}")
    try:
        arr = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a list of numbers > 0, got {values!r}; e.g. {name}={example}") from None
    arr = np.atleast_1d(arr)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-d list of numbers > 0, got shape {np.shape(values)}; "
                         f"e.g. {name}={example}")
    bad = arr[~(np.isfinite(arr) & (arr > 0))]
    if bad.size:
        raise ValueError(f"{name} must hold finite numbers > 0, got {bad[0]}; e.g. {name}={example}")
    return np.unique(arr) if sort else arr
