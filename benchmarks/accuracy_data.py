"""Data sets, splits and test errors of the accuracy benchmark (``benchmarks/accuracy.py``)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import xarray as xr

from fdakpl import datasets


@dataclass(frozen=True)
class Benchmark:
    """One data set of the benchmark: what to load, the formula, the splits and the error."""

    name: str
    load: Callable[[], xr.Dataset]
    formula: str
    response: str
    inputs: tuple[str, ...]  # functional inputs (bare names of the formula)
    factors: tuple[str, ...]  # scalar factors C(...) of the formula
    splits: Callable[[xr.Dataset], list[tuple[np.ndarray, np.ndarray]]]
    split_label: str
    error: str  # "curve_sse": mean over test curves of the sum of squared errors over observed points
    #             "point_mse": mean squared error over all observed test points
    thin: int = 1  # score (and fit the mgcv reference) on every thin-th point of the grids
    interpolate_inputs: bool = False
    notes: list[str] = field(default_factory=list)


def random_splits(n: int, n_train: int, n_splits: int = 20) -> list[tuple[np.ndarray, np.ndarray]]:
    """Issue 12's DTI splits: ``numpy.random.default_rng(s).permutation(n)``, first ``n_train`` train."""
    out = []
    for s in range(n_splits):
        perm = np.random.default_rng(s).permutation(n)
        out.append((np.sort(perm[:n_train]), np.sort(perm[n_train:])))
    return out


def leave_one_group_out(groups: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """One split per group (in order of first appearance): the group is the test set."""
    groups = np.asarray(groups)
    _, first = np.unique(groups, return_index=True)
    idx = np.arange(groups.size)
    return [(idx[groups != g], idx[groups == g]) for g in groups[np.sort(first)]]


def kfold(n: int, n_folds: int = 10, seed: int = 0) -> list[tuple[np.ndarray, np.ndarray]]:
    """K-fold splits of a random permutation (``default_rng(seed)``); fold sizes differ by at most one."""
    perm = np.random.default_rng(seed).permutation(n)
    folds = np.array_split(perm, n_folds)
    return [(np.sort(np.concatenate(folds[:k] + folds[k + 1:])), np.sort(folds[k])) for k in range(n_folds)]


def paired_run(doc: str, out_path: Path) -> tuple[argparse.Namespace, dict, dict]:
    """The command line of a paired benchmark on the real data sets (``--datasets``, ``--splits``), its results so
    far (a run on a subset keeps the other data sets) stamped with this command, and the mgcv reference's
    results per data set (``results/accuracy.json``, same splits)."""
    p = argparse.ArgumentParser(description=doc.splitlines()[0])
    p.add_argument("--datasets", default="dti,poblenou,aemet,emotion")
    p.add_argument("--splits", type=int, default=None)
    args = p.parse_args()
    out: dict = json.loads(out_path.read_text()) if out_path.exists() else {"datasets": {}}
    out.update({"command": " ".join(["python", *sys.argv]), "loadavg_start": os.getloadavg(),
                "machine": {"cpu_count": os.cpu_count(), "blas_threads": 1, "numpy": np.__version__}})
    reference = json.loads((Path(__file__).parent / "results" / "accuracy.json").read_text())["datasets"]
    return args, out, reference


def split_data(bench: Benchmark, limit: int | None = None
               ) -> Iterator[tuple[xr.Dataset, xr.Dataset, np.ndarray, np.ndarray]]:
    """The first ``limit`` splits of ``bench`` (all by default): ``(train, test, scored test responses, kept
    columns)`` per split, the responses on every ``thin``-th point (what :func:`heldout_error` scores)."""
    ds = bench.load()
    keep = np.arange(0, ds[bench.response].shape[1], bench.thin)
    for tr, te in bench.splits(ds)[:limit]:
        test = ds.isel(sample=te)
        yield ds.isel(sample=tr), test, test[bench.response].values[:, keep], keep


def heldout_error(Y: np.ndarray, pred: np.ndarray, kind: str) -> float:
    """Test error on the scored points (NaN in ``Y`` = not observed, not scored)."""
    r2 = (np.asarray(Y, dtype=float) - np.asarray(pred, dtype=float)) ** 2
    obs = ~np.isnan(r2)
    if kind == "curve_sse":
        return float(np.mean(np.where(obs, r2, 0.0).sum(axis=1)))
    if kind == "point_mse":
        return float(r2[obs].mean())
    raise ValueError(f"unknown error {kind!r}")


BENCHMARKS: dict[str, Benchmark] = {
    "dti": Benchmark(
        "dti", datasets.dti_first_visits, "rcst ~ cca", "rcst", ("cca",), (),
        lambda ds: random_splits(ds.sizes["sample"], 70, 20), "20 random 70/30 splits (default_rng(s), s=0..19)",
        "curve_sse", interpolate_inputs=True,
        notes=["first visits of the 100 MS cases; 2 NaN in cca (interpolated), 192 NaN in rcst (partially observed)"]),
    "aemet": Benchmark(
        "aemet", datasets.load_aemet, "logprec ~ temp", "logprec", ("temp",), (),
        lambda ds: leave_one_group_out(np.arange(ds.sizes["sample"])), "leave one station out (73)",
        "point_mse", thin=4,
        notes=["scored on every 4th day (92 of 365); mgcv fitted on those days and those input points"]),
    "emotion": Benchmark(
        "emotion", datasets.load_emotion, "EMG ~ EEG + C(power) + C(game_outcome) + C(control)", "EMG", ("EEG",),
        ("power", "game_outcome", "control"),
        lambda ds: leave_one_group_out(ds["subject"].values), "leave one subject out (23 subjects x 8 curves)",
        "point_mse", thin=4,
        notes=["scored on every 4th time point (96 of 384); mgcv fitted on those points and those input points"]),
    "poblenou": Benchmark(
        "poblenou", datasets.load_poblenou, "nox ~ C(day_week) + C(day_festive)", "nox", (),
        ("day_week", "day_festive"), lambda ds: kfold(ds.sizes["sample"], 10, 0), "10-fold (default_rng(0))",
        "point_mse"),
}


def dummies(ds: xr.Dataset, factors: tuple[str, ...]) -> np.ndarray | None:
    """Treatment-coded dummies of factors (first level of ``attrs["levels"]`` is the reference)."""
    if not factors:
        return None
    cols = []
    for f in factors:
        levels = ds[f].attrs["levels"]
        vals = ds[f].values.astype(str)
        cols += [(vals == lev).astype(float) for lev in levels[1:]]
    return np.column_stack(cols)
