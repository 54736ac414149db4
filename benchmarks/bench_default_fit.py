"""Speed of the default ``FunctionalRegression("rcst ~ cca", data=train, interpolate_inputs=True).fit()`` on DTI.

Issue 12's target: under 30 ms for the 70 training curves of a 70/30 split (split s = 0 of the
accuracy protocol), the default now choosing the kernel width, ``b`` and lambda jointly by exact
leave-one-curve-out. BLAS is pinned to one thread (threadpoolctl); the three variants are timed
interleaved, ``--repeat`` times each, so that the load of a shared machine hits them alike;
min and median of the wall time and of the process's CPU time are reported with the load average.

Writes ``benchmarks/results/default_fit.json``. Run: ``python benchmarks/bench_default_fit.py``.

``--reference DIR`` (issue 23's target, "the default fit at most 2/3 of the time of an earlier commit"):
times the default fit of this checkout and of the checkout in ``DIR`` (e.g. ``git worktree add /tmp/ref
560ccb8``), each in its own fresh process with its own ``PYTHONPATH``, alternating the two for ``--rounds``
rounds of ``--repeat`` fits; reports per side the min and median over rounds of each process's median fit
(wall and CPU time) and their ratio, in ``benchmarks/results/default_fit_reference.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

from fdakpl import FunctionalRegression, datasets

OUT = Path(__file__).parent / "results" / "default_fit.json"
VARIANTS = {
    "default (width x b x lambda by leave-one-curve-out)": {},
    "lambda by leave-one-curve-out only (width_grid=None, b_grid=None)": {"width_grid": None, "b_grid": None},
    "previous default (pointwise GCV, median width, B = I)": {"lam": "gcv", "width_grid": None, "b_grid": None},
    # what a formula fit costs without any choice to make: the front end's fixed cost (issue 23's note)
    "nothing tuned (lam=1e-3, median width, B = I, 21 Fourier atoms)": {"lam": 1e-3, "width_grid": None,
                                                                       "b_grid": None, "dictionary": "fourier"},
}


def training_curves():
    """The 70 training curves of split 0."""
    return datasets.dti_first_visits().isel(sample=np.random.default_rng(0).permutation(100)[:70])


def worker(repeat: int) -> None:
    """One process's timings of the default fit (run by ``--reference``, with the checkout on PYTHONPATH)."""
    train = training_curves()
    wall, cpu = [], []
    with threadpool_limits(1):
        FunctionalRegression("rcst ~ cca", data=train, interpolate_inputs=True, progress=False).fit()
        for _ in range(repeat):
            t, c = time.perf_counter(), time.process_time()
            FunctionalRegression("rcst ~ cca", data=train, interpolate_inputs=True, progress=False).fit()
            wall.append(time.perf_counter() - t)
            cpu.append(time.process_time() - c)
    print(json.dumps({"wall_ms": 1e3 * float(np.median(wall)), "cpu_ms": 1e3 * float(np.median(cpu))}))


def against_reference(reference: str, rounds: int, repeat: int) -> None:
    """Alternate fresh processes of this checkout and of ``reference``; write and print the ratio."""
    here = str(Path(__file__).resolve().parents[1])
    sides = {"this checkout": here, "reference": str(Path(reference).resolve())}
    got: dict[str, list[dict[str, float]]] = {k: [] for k in sides}
    load0 = os.getloadavg()
    for _ in range(rounds):
        for name, path in sides.items():
            env = dict(os.environ, PYTHONPATH=path, FDAKPL_PROGRESS="0", OMP_NUM_THREADS="1",
                       OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1", PYTHONWARNINGS="ignore")
            run = subprocess.run([sys.executable, __file__, "--worker", "--repeat", str(repeat)], env=env,
                                 cwd=path, capture_output=True, text=True, check=True)
            got[name].append(json.loads(run.stdout.strip().splitlines()[-1]))
    summary = {k: {f"{m}_{f.__name__}": float(f([r[m] for r in v])) for m in ("wall_ms", "cpu_ms")
                   for f in (np.min, np.median)} for k, v in got.items()}
    commit = subprocess.run(["git", "-C", sides["reference"], "rev-parse", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    out = {"command": f"python benchmarks/bench_default_fit.py --reference {reference} --rounds {rounds}"
                      f" --repeat {repeat}",
           "reference_commit": commit or None,
           "machine": {"python": platform.python_version(), "numpy": np.__version__, "cpu_count": os.cpu_count(),
                       "loadavg_start": load0, "loadavg_end": os.getloadavg(), "blas_threads": 1},
           "per_process_median_fit": summary,
           "ratio_this_to_reference": {m: summary["this checkout"][m] / summary["reference"][m]
                                       for m in summary["reference"]},
           "target_ratio": 2 / 3}
    path = OUT.parent / "default_fit_reference.json"
    path.write_text(json.dumps(out, indent=1))
    print(json.dumps(out["per_process_median_fit"], indent=1), json.dumps(out["ratio_this_to_reference"]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--reference", help="another checkout of fdakpl to time the default fit against")
    parser.add_argument("--rounds", type=int, default=7, help="alternating processes per side (--reference)")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    if args.worker:
        return worker(args.repeat)
    if args.reference:
        return against_reference(args.reference, args.rounds, args.repeat)
    train = training_curves()
    times: dict[str, list[float]] = {k: [] for k in VARIANTS}
    cpu: dict[str, list[float]] = {k: [] for k in VARIANTS}  # CPU time of the process: less sensitive to load
    load0 = os.getloadavg()
    with threadpool_limits(1):
        for kw in VARIANTS.values():  # warm-up
            FunctionalRegression("rcst ~ cca", data=train, interpolate_inputs=True, progress=False, **kw).fit()
        for _ in range(args.repeat):
            for name, kw in VARIANTS.items():
                t, c = time.perf_counter(), time.process_time()
                FunctionalRegression("rcst ~ cca", data=train, interpolate_inputs=True, progress=False, **kw).fit()
                times[name].append(time.perf_counter() - t)
                cpu[name].append(time.process_time() - c)
    res = FunctionalRegression("rcst ~ cca", data=train, interpolate_inputs=True, progress=False).fit()
    out = {
        "command": "python benchmarks/bench_default_fit.py" + (f" --repeat {args.repeat}" if args.repeat != 30 else ""),
        "machine": {"python": platform.python_version(), "numpy": np.__version__, "cpu_count": os.cpu_count(),
                    "loadavg_start": load0, "loadavg_end": os.getloadavg(), "blas_threads": 1},
        "target_ms": 30.0,
        "chosen": {"width_multiple": res.tuning.multiples[0], "b": res.tuning.b, "lambda": res.lam},
        "timings_ms": {k: {"min": 1e3 * min(v), "median": 1e3 * float(np.median(v)), "n": len(v)}
                       for k, v in times.items()},
        "cpu_ms": {k: {"min": 1e3 * min(v), "median": 1e3 * float(np.median(v))} for k, v in cpu.items()},
    }
    base = out["timings_ms"]["previous default (pointwise GCV, median width, B = I)"]["median"]
    out["median_ratio_to_previous_default"] = {k: v["median"] / base for k, v in out["timings_ms"].items()}
    OUT.parent.mkdir(exist_ok=True)
    OUT.write_text(json.dumps(out, indent=1))
    print(json.dumps({"wall": out["timings_ms"], "cpu": out["cpu_ms"]}, indent=1), out["machine"]["loadavg_start"])


if __name__ == "__main__":
    main()
