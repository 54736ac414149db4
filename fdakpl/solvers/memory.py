"""Memory the exact (``n x n``) KPL solvers plan to use, refused before any allocation when too large."""

from __future__ import annotations

import math
import os
from typing import Any

import numpy as np

__all__ = ["MEMORY_FRACTION", "SMALL_PROBLEM_BYTES", "check_exact_memory"]

#: fraction of the available memory that the exact solver may plan to use (see :func:`check_exact_memory`)
MEMORY_FRACTION = 0.5
#: below this estimate (64 MiB, n of about 1,000) the available memory is not read: any machine has it
SMALL_PROBLEM_BYTES = 64 * 2**20


def _available_memory() -> float | None:
    try:
        import psutil

        return float(psutil.virtual_memory().available)
    except ImportError:
        try:
            return float(os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
        except (ValueError, OSError, AttributeError):  # pragma: no cover - platform without sysconf
            return None


def check_exact_memory(n_samples: int, n_points: int = 0, limit: Any = None, n_terms: int = 1) -> float:
    """Refuse, before allocating anything, a problem too large for the exact (``n x n``) solvers.

    The exact solvers hold the kernel matrix, its eigenvectors, LAPACK's
    workspace and the leave-one-out / GCV path (about ``7 n^2`` doubles at
    the peak, measured: 6.2 for ``n = 3000``), plus the observed points.

    Parameters
    ----------
    n_samples : int
        Number of training curves ``n``.
    n_points : int
        Number of observed response points.
    n_terms : int
        Number of kernel terms: a product or sum of term kernels holds one more ``n x n`` matrix while it is
        built, and the width search of several terms keeps scoring candidates; planned as ``n^2 / 2`` doubles
        per term after the first (measured with tracemalloc on the default multi-term tuning: 6.6 n^2 with five
        curve terms at n = 1200, 7.2 n^2 at n = 800, against 7 + 2 = 9 planned).
    limit : None, float or str
        Bytes the fit may use: ``None`` reads the environment variable
        ``FDAKPL_MEMORY_LIMIT`` (bytes, or ``"inf"``), else takes
        ``MEMORY_FRACTION`` (one half) of the available memory (psutil, or
        ``os.sysconf``; not read when the estimate is below ``SMALL_PROBLEM_BYTES``);
        ``float("inf")`` or ``"inf"`` turns the check off.

    Returns
    -------
    float
        The estimated peak memory in bytes.

    Raises
    ------
    ValueError
        If the estimate exceeds the limit; the message gives both and points
        to the approximate solver (:mod:`fdakpl.estimators.approx`).

    Examples
    --------
    >>> check_exact_memory(1000) / 2**20  # MiB
    53.40576171875
    >>> check_exact_memory(200_000, limit=16e9)
    Traceback (most recent call last):
    ...
    ValueError: n_samples = 200000 curves need about 2.2e+03 GB for the exact KPL solver (limit 16 GB: ...)...approx=...
    """
    per_n2 = 7.0 + 0.5 * max(int(n_terms) - 1, 0)
    estimate = 8.0 * (per_n2 * float(n_samples) ** 2 + 4.0 * float(n_points))
    source = "memory_limit"
    if limit is None:
        limit = os.environ.get("FDAKPL_MEMORY_LIMIT")
        source = "the environment variable FDAKPL_MEMORY_LIMIT"
    if limit is None:
        if estimate < SMALL_PROBLEM_BYTES:  # no memory read for a small fit (it costs more than the fit)
            return estimate
        avail = _available_memory()
        if avail is None:  # pragma: no cover - cannot tell
            return estimate
        limit, how = MEMORY_FRACTION * avail, f"half of the {avail / 1e9:.3g} GB available"
    else:
        given = limit
        try:
            limit = float(limit) if not isinstance(limit, (bool, np.bool_)) else float("nan")
        except (TypeError, ValueError):
            limit = float("nan")
        if math.isnan(limit) or limit <= 0:  # NaN would compare False and turn the check off silently
            raise ValueError(f"{source} must be a number of bytes > 0 (e.g. 8e9) or 'inf' (no check), got "
                             f"{given!r}")
        how = source
    if estimate > limit:
        raise ValueError(
            f"n_samples = {n_samples} curves need about {estimate / 1e9:.2g} GB for the exact KPL solver "
            f"(limit {limit / 1e9:.3g} GB: {how}); it stores n x n matrices. Use the approximate solver "
            "ApproxKPLRegressor(approx=fdakpl.Nystroem(500)) (or approx=fdakpl.RandomFourierFeatures(500)) instead of "
            "KPLRegressor, or FunctionalRegression(..., approx=fdakpl.Nystroem(500)); or raise the limit with "
            "memory_limit=<bytes> "
            "(KPLRegressor) or the environment variable FDAKPL_MEMORY_LIMIT=<bytes> ('inf' turns the check off)"
        )
    return estimate
