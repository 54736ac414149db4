"""Shared helpers of the experiments: splits, errors, parallel map, JSON output, paper conventions."""

from __future__ import annotations

import json
import os
import platform
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import numpy as np

RESULTS = Path(__file__).resolve().parent / "results"  # small summaries, kept in the repository
OUTPUT = Path(__file__).resolve().parent / "output"  # raw per-run records and figures, git-ignored


def curve_errors(observed: np.ndarray, predicted: np.ndarray) -> dict[str, float]:
    """Test MSE over observed points, under the two readings of the paper.

    ``mean_of_means``: the paper's formula, mean over curves of the mean
    squared error over the curve's observed points; ``mean_of_sums``: mean
    over curves of the *sum* over its observed points (what the paper's code
    computes, ``np.linalg.norm(y - yhat) ** 2`` averaged over curves; it
    matches the magnitudes of the paper's Table 1).

    Examples
    --------
    >>> curve_errors(np.array([[1.0, np.nan], [0.0, 0.0]]), np.array([[0.0, 5.0], [1.0, 1.0]]))
    {'mean_of_means': 1.0, 'mean_of_sums': 1.5}
    """
    err = (np.asarray(predicted, dtype=float) - np.asarray(observed, dtype=float)) ** 2
    return {"mean_of_means": float(np.mean(np.nanmean(err, axis=1))),
            "mean_of_sums": float(np.mean(np.nansum(err, axis=1)))}


def random_splits(n: int, n_train: int, n_splits: int, seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """``n_splits`` random train/test splits (sorted indices), reproducible from ``seed``."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n_splits):
        perm = rng.permutation(n)
        out.append((np.sort(perm[:n_train]), np.sort(perm[n_train:])))
    return out


def kfolds(n: int, n_folds: int, seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Shuffled K-fold partition of ``range(n)`` (scikit-learn's ``KFold``)."""
    from sklearn.model_selection import KFold

    return [(tr, va) for tr, va in KFold(n_folds, shuffle=True, random_state=seed).split(np.arange(n))]


def _call_limited(fn: Callable[..., Any], item: Any) -> Any:
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):
        return fn(item)


def parallel_map(fn: Callable[[Any], Any], items: Iterable[Any], n_jobs: int = 2, desc: str = "",
                 progress: bool | None = None) -> list[Any]:
    """``[fn(item) for item in items]`` in ``n_jobs`` loky processes with one BLAS thread each, with a bar."""
    from joblib import Parallel, delayed

    from fdakpl.utils.progress import progress as progress_bar

    items = list(items)
    if n_jobs == 1:
        return [_call_limited(fn, it) for it in progress_bar(items, desc=desc, enabled=progress)]
    runner = Parallel(n_jobs=n_jobs, backend="loky", return_as="generator")
    gen = runner(delayed(_call_limited)(fn, it) for it in items)
    return list(progress_bar(gen, desc=desc, enabled=progress, total=len(items)))


def machine() -> dict[str, Any]:
    """Where and under which load the experiment ran."""
    import fdakpl

    try:
        load = os.getloadavg()
    except OSError:  # pragma: no cover
        load = (float("nan"),) * 3
    return {"python": sys.version.split()[0], "platform": platform.platform(), "cpus": os.cpu_count(),
            "load_average_1_5_15min": [round(v, 2) for v in load], "fdakpl": fdakpl.__version__,
            "numpy": np.__version__, "nice": os.nice(0) if hasattr(os, "nice") else None,
            "date": time.strftime("%Y-%m-%d %H:%M:%S")}


def _jsonable(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return _jsonable(obj.tolist())
    if isinstance(obj, (np.floating, float)):
        v = float(obj)
        return v if np.isfinite(v) else None
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, (np.bool_,)):
        return bool(obj)
    return obj


def write_json(name: str, payload: dict[str, Any], results: Path = RESULTS, output: Path = OUTPUT) -> Path:
    """Write the whole record to ``output/<name>.json`` and its summary to ``results/<name>.json``.

    The summary is the record without its per-run rows (``"runs"``): a few kB that the repository
    keeps and :mod:`experiments.report` tabulates. The raw record (hundreds of kB) and the figures go
    to the git-ignored ``output/``; rerun the experiment to regenerate them. NaN become null. Returns
    the raw record's path (figures are written next to it).
    """
    output.mkdir(parents=True, exist_ok=True)
    results.mkdir(parents=True, exist_ok=True)
    path = output / f"{name}.json"
    path.write_text(json.dumps(_jsonable(payload), indent=1) + "\n")
    summary = {k: v for k, v in payload.items() if k != "runs"}
    summary["raw_output"] = f"experiments/output/{name}.json (not in the repository: rerun {payload.get('command')})"
    (results / f"{name}.json").write_text(json.dumps(_jsonable(summary), indent=1) + "\n")
    return path


def paper_gaussian_sigma(sigma: float, n_points: int | None = None, length: float = 1.0) -> float:
    """fdakpl ``Gaussian`` scale equivalent to the paper's code's Gaussian kernel.

    The paper's code uses ``exp(-||x - x'||^2 / sigma^2)``, and for curves the
    Euclidean norm of the ``n_points`` sampled values; fdakpl uses
    ``exp(-d^2 / (2 s^2))`` with ``d`` the L2 distance on a domain of length
    ``length`` (``d^2 ~ length ||x - x'||^2 / n_points``). Hence
    ``s = sigma sqrt(length / (2 n_points))`` (``sigma / sqrt(2)`` for
    scalars, ``n_points=None``).

    Examples
    --------
    >>> round(paper_gaussian_sigma(0.9, 93), 4)
    0.066
    """
    if n_points is None:
        return float(sigma / np.sqrt(2.0))
    return float(sigma * np.sqrt(length / (2.0 * n_points)))
