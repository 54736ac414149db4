"""One timing helper for the benchmarks: paired, interleaved repetitions on one BLAS thread.

``compare({"a": f, "b": g}, repeat=7)`` warms every command up, then runs the
rounds ``a, b, a, b, ...`` (so that a change of machine load hits every command
alike) inside one ``threadpool_limits(1)`` block, and returns the minimum and
median wall time of each command in milliseconds, with the load average
before and after. On a shared machine the minimum is the better estimate of
the cost, the median says how noisy the run was.
"""

from __future__ import annotations

import os
import platform
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from threadpoolctl import threadpool_limits

__all__ = ["compare", "machine", "ratio"]


def machine() -> dict[str, Any]:
    """What the numbers were measured on (load average included: the machine is shared)."""
    return {"python": platform.python_version(), "numpy": np.__version__, "cpu_count": os.cpu_count(),
            "loadavg": list(os.getloadavg())}


def compare(commands: dict[str, Callable[[], Any]], repeat: int = 7, inner: int = 1,
            warmup: int = 2) -> dict[str, Any]:
    """Time ``commands`` interleaved; ``inner`` calls per timed sample (for sub-millisecond commands).

    Returns ``{"times": {name: {"min_ms", "median_ms", "samples_ms"}}, "repeat", "inner",
    "blas_threads": 1, "loadavg_before", "loadavg_after"}``.
    """
    if repeat < 5:
        raise ValueError(f"repeat must be at least 5 for a minimum and a median worth reporting, got {repeat}")
    samples: dict[str, list[float]] = {k: [] for k in commands}
    before = list(os.getloadavg())
    with threadpool_limits(1):
        for _ in range(warmup):
            for f in commands.values():
                f()
        for _ in range(repeat):
            for name, f in commands.items():
                t0 = time.perf_counter()
                for _ in range(inner):
                    f()
                samples[name].append((time.perf_counter() - t0) / inner * 1e3)
    return {
        "times": {k: {"min_ms": float(np.min(v)), "median_ms": float(np.median(v)),
                      "samples_ms": [round(x, 4) for x in v]} for k, v in samples.items()},
        "repeat": repeat, "inner": inner, "blas_threads": 1,
        "loadavg_before": before, "loadavg_after": list(os.getloadavg()),
    }


def ratio(result: dict[str, Any], num: str, den: str) -> dict[str, float]:
    """``num / den`` of the minimum and of the median times of a :func:`compare` result."""
    t = result["times"]
    return {"min": t[num]["min_ms"] / t[den]["min_ms"], "median": t[num]["median_ms"] / t[den]["median_ms"]}
