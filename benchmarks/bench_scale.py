"""Scaling of exact and approximate KPL with the number of curves (issue 6).

Writes ``benchmarks/results/scale.json``. Run (heavy: about 1 GB of synthetic data on disk, minutes of CPU)::

    nice -n 10 python benchmarks/bench_scale.py [--data DIR] [--max-n 1000000] [--exact 1000,2000,5000]

Synthetic data (written once, chunk-wise, to a zarr store under ``--data``,
default ``$TMPDIR/fdakpl-bench-scale``): ``n`` input curves and ``n``
response curves, each on 64 locations of [0, 1], driven by 4 latent Gaussian
factors; the responses are a nonlinear function of the factors plus noise
(sd 0.2), with 20% of their points missing (so the plug-in estimator is
used); the test set (2,000 curves) is fully observed and stores the
noise-free curves too.

Measures, each fit in a fresh subprocess (peak resident memory ``VmHWM`` of
that process, which includes the interpreter and libraries; the peak after
imports is reported as ``baseline_rss_mib``; ``process_cpu_s`` is the CPU time
of the process after imports, less sensitive to the machine's load than
the wall-clock ``fit_s``; for the distributed run it excludes the workers):

* exact KPL (:class:`fdakpl.KPLRegressor`, data loaded in memory) for the
  sizes of ``--exact``;
* approximate KPL (:class:`fdakpl.estimators.approx.ApproxKPLRegressor`, Nyström with
  k-means landmarks) fitted from the zarr store through dask (threaded
  scheduler, 2 threads, one-thread BLAS per task), n = 10^3 .. ``--max-n``;
* the test MSE of both at the common sizes (accuracy loss of the
  approximation), for several ranks at n = 5,000;
* optionally (``--distributed``) the largest approximate fit on a
  ``dask.distributed`` LocalCluster (2 worker processes x 1 thread).

The fit time includes reading the training data (zarr) for the approximate
fits, and excludes it for exact fits (they need the data in memory first).
Each measurement fits ``--repeat`` times (default 5) in its process, BLAS on
one thread; ``fit_s`` is the minimum, ``fit_s_median`` the median (single
shots under a varying load made the scaling curves non-monotone);
``process_cpu_s`` is per fit; the peak memory is that of the largest fit.
Repeated reads of the zarr store come from the page cache: the minimum is a
warm-cache time.
The machine's load average is recorded: other jobs share its 2 cores.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

OUT = Path(__file__).parent / "results" / "scale.json"
M = 64  # locations per curve (inputs and responses)
CHUNK = 25_000
SIGMA = 1.5  # Gaussian kernel scale (L2 geometry of the input curves); about the median distance / 2
LAM = 1e-4
N_TEST = 2_000


# --------------------------------------------------------------------------
# synthetic data, generated chunk by chunk
# --------------------------------------------------------------------------


def _latent(seed: int, block: int, size: int) -> tuple[np.ndarray, np.random.Generator]:
    rng = np.random.default_rng([seed, block])
    return rng.normal(size=(size, 4)), rng


def _block(seed: int, block: int, size: int, missing: float) -> dict[str, np.ndarray]:
    a, rng = _latent(seed, block, size)
    t = np.linspace(0, 1, M)
    basis = np.vstack([np.ones(M), np.sin(2 * np.pi * t), np.cos(2 * np.pi * t), 0.5 * np.sin(4 * np.pi * t)])
    x = a @ basis + 0.1 * rng.normal(size=(size, M))
    truth = (np.tanh(a[:, [0]]) * np.cos(2 * np.pi * t) + np.sin(a[:, [1]] + a[:, [2]] * t)
             + 0.3 * a[:, [3]] ** 2 * (t - 0.5))
    y = truth + 0.2 * rng.normal(size=(size, M))
    if missing:
        y[rng.uniform(size=y.shape) < missing] = np.nan
        y[:, 0] = np.where(np.isnan(y[:, 0]), truth[:, 0], y[:, 0])
    return {"x": x, "y": y, "y_true": truth}


def write_store(path: Path, n: int, seed: int, missing: float, with_truth: bool) -> None:
    """Write ``n`` curves to a zarr store, one chunk of ``CHUNK`` samples at a time."""
    import dask
    import dask.array as da
    import xarray as xr

    sizes = [min(CHUNK, n - s) for s in range(0, n, CHUNK)]
    arrays = {}
    names = ["x", "y"] + (["y_true"] if with_truth else [])
    for name in names:
        parts = [da.from_delayed(dask.delayed(lambda b, s, nm=name: _block(seed, b, s, missing)[nm])(b, s),
                                 shape=(s, M), dtype=float) for b, s in enumerate(sizes)]
        arrays[name] = da.concatenate(parts)
    t = np.linspace(0, 1, M)
    ds = xr.Dataset({"x": (("sample", "t"), arrays["x"]), "y": (("sample", "s"), arrays["y"])},
                    coords={"sample": np.arange(n), "t": t, "s": t})
    if with_truth:
        ds["y_true"] = (("sample", "s"), arrays["y_true"])
    ds.to_zarr(path, mode="w", consolidated=False)


# --------------------------------------------------------------------------
# one measurement (runs in a subprocess)
# --------------------------------------------------------------------------


def _peak_rss_mib() -> float:
    """High-water mark of this process's resident memory (``VmHWM``; reset at exec, unlike ``ru_maxrss``)."""
    import resource

    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:  # pragma: no cover - not Linux
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def worker(spec: dict) -> dict:
    import resource

    import xarray as xr

    from fdakpl import Fourier, Gaussian, KPLRegressor
    from fdakpl.estimators.approx import ApproxKPLRegressor, Nystroem

    os.environ["FDAKPL_PROGRESS"] = "0"
    usage0 = resource.getrusage(resource.RUSAGE_SELF)
    base, cpu0 = _peak_rss_mib(), usage0.ru_utime + usage0.ru_stime
    n = spec["n"]
    data = xr.open_zarr(spec["train"], consolidated=False).isel(sample=slice(0, n))
    test = xr.open_zarr(spec["test"], consolidated=False).load()
    from threadpoolctl import threadpool_limits

    kw = dict(dictionary=Fourier(10), kernel=Gaussian(SIGMA), lam=LAM)
    repeat = int(spec.get("repeat", 1))
    out: dict = {"method": spec["method"], "n": n, "repeat": repeat, "loadavg_before": os.getloadavg()}
    times: list[float] = []

    def timed_fits(fit) -> Any:
        for _ in range(repeat):
            t0 = time.perf_counter()
            model = fit()
            times.append(time.perf_counter() - t0)
        return model

    with threadpool_limits(1):  # one BLAS thread per process (and per dask task)
        if spec["method"] == "exact":
            X, Y = data.x.load(), data.y.load()
            model = timed_fits(lambda: KPLRegressor(**kw).fit(X, Y))
        else:
            out["rank"] = spec["rank"]

            def fit() -> Any:
                return ApproxKPLRegressor(**kw, approx=Nystroem(spec["rank"], landmarks="kmeans",
                                                               random_state=0)).fit(data.x, data.y)

            if spec["method"] == "approx-distributed":
                from distributed import Client, LocalCluster

                with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cl, \
                        Client(cl):
                    model = timed_fits(fit)
            else:
                import dask

                with dask.config.set(scheduler="threads", num_workers=2):
                    model = timed_fits(fit)
            out["description"] = model.approx_description_
    # fit_s: the minimum over the repetitions (the cost with the least interference from other jobs);
    # the median and all samples say how noisy the run was
    out["fit_s"], out["fit_s_median"], out["fit_s_samples"] = min(times), float(np.median(times)), times
    usage = resource.getrusage(resource.RUSAGE_SELF)
    out["peak_rss_mib"] = _peak_rss_mib()
    out["process_cpu_s"] = (usage.ru_utime + usage.ru_stime - cpu0) / repeat  # per fit
    out["loadavg_after"] = os.getloadavg()
    out["baseline_rss_mib"] = base
    if spec.get("accuracy"):
        pred = model.predict(test.x)
        pred = np.asarray(getattr(pred, "values", pred))
        out["test_mse"] = float(np.mean((pred - test.y.values) ** 2))
        out["test_mse_vs_truth"] = float(np.mean((pred - test.y_true.values) ** 2))
    return out


def run(spec: dict) -> dict:
    one_thread = {k: "1" for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")}
    proc = subprocess.run([sys.executable, __file__, "--worker", json.dumps(spec)], capture_output=True, text=True,
                          env={**os.environ, **one_thread, "FDAKPL_PROGRESS": "0"})
    if proc.returncode != 0:
        raise RuntimeError(f"{spec} failed:\n{proc.stderr[-3000:]}")
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    print(json.dumps(res), flush=True)
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default=os.path.join(tempfile.gettempdir(), "fdakpl-bench-scale"))
    ap.add_argument("--max-n", type=int, default=1_000_000)
    ap.add_argument("--exact", default="1000,2000,5000")
    ap.add_argument("--rank", type=int, default=200, help="Nyström rank for the scaling runs")
    ap.add_argument("--ranks", default="50,100,200,400", help="ranks compared with exact KPL at n = 5,000")
    ap.add_argument("--distributed", action="store_true")
    ap.add_argument("--repeat", type=int, default=5, help="fits per measurement (minimum and median reported)")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        print(json.dumps(worker(json.loads(args.worker))))
        return

    data = Path(args.data)
    data.mkdir(parents=True, exist_ok=True)
    train, test = data / f"train-{args.max_n}.zarr", data / "test.zarr"
    t0 = time.perf_counter()
    cached = (train / "zarr.json").exists() and (test / "zarr.json").exists()
    if not (train / "zarr.json").exists():
        write_store(train, args.max_n, seed=1, missing=0.2, with_truth=False)
    if not (test / "zarr.json").exists():
        write_store(test, N_TEST, seed=2, missing=0.0, with_truth=True)
    gen_s = None if cached else time.perf_counter() - t0  # None: the stores were already on disk

    results: dict = {
        "machine": {"platform": platform.platform(), "python": platform.python_version(), "cpus": os.cpu_count(),
                    "load_average_start": os.getloadavg()},
        "setup": {"locations": M, "chunk": CHUNK, "sigma": SIGMA, "lam": LAM, "dictionary": "Fourier(10), 21 atoms",
                  "missing_fraction_train": 0.2, "n_test": N_TEST, "data_generation_s": gen_s,
                  "data_bytes_on_disk": sum(f.stat().st_size for f in data.rglob("*") if f.is_file()),
                  "approx": "Nystroem(k-means landmarks), dask threaded scheduler (2 threads)"},
        "exact": [], "approx": [], "accuracy_n5000": [], "distributed": [],
    }
    common = {"train": str(train), "test": str(test), "repeat": args.repeat}
    exact_sizes = [int(s) for s in args.exact.split(",") if s]
    for n in exact_sizes:
        results["exact"].append(run({**common, "method": "exact", "n": n, "accuracy": True}))
    sizes = [n for n in (1_000, 10_000, 100_000, 1_000_000) if n <= args.max_n]
    for n in sorted(set(sizes + [n for n in exact_sizes if n <= args.max_n])):
        results["approx"].append(run({**common, "method": "approx", "n": n, "rank": args.rank,
                                      "accuracy": n <= 100_000 or n == args.max_n}))
    if 5000 in exact_sizes:
        ex = next(r for r in results["exact"] if r["n"] == 5000)
        for r in [int(s) for s in args.ranks.split(",") if s]:
            res = run({**common, "method": "approx", "n": 5000, "rank": r, "accuracy": True})
            res["relative_test_mse_increase"] = res["test_mse"] / ex["test_mse"] - 1
            results["accuracy_n5000"].append(res)
    if args.distributed:
        results["distributed"].append(run({**common, "method": "approx-distributed", "n": args.max_n,
                                           "rank": args.rank, "accuracy": False}))
    results["machine"]["load_average_end"] = os.getloadavg()
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(results, indent=2) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
