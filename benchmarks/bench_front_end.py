"""Speed of the formula front end on DTI (issue: FunctionalRegression).

Writes ``benchmarks/results/front_end.json``. Run: ``python benchmarks/bench_front_end.py``.
- ``fit()`` with the default tuning (kernel width x ``b`` x 21 lambdas by leave-one-curve-out) on db3 wavelets
  with 4 levels (74 atoms; the default dictionary's fit is timed by ``bench_default_fit.py``, target 30 ms) on the
  100 first visits: median time;
- 5-fold CV over 25 lambdas x 11 values of b x 4 dictionaries (db2/db3 x 4/5 levels) on 70 training curves,
  with both cores (joblib/loky, one BLAS thread per worker).
"""

from __future__ import annotations

import os
import platform
import time
import warnings
from pathlib import Path

import numpy as np
from _results import write_results

from fdakpl import FunctionalRegression, datasets

OUT = Path(__file__).parent / "results" / "front_end.json"


def main() -> None:
    warnings.simplefilter("ignore")
    ds = datasets.dti_first_visits(datasets.load_dti(source="rdata"))
    res: dict = {"machine": {"python": platform.python_version(), "cpu_count": os.cpu_count(),
                             "numpy": np.__version__, "loadavg_at_start": os.getloadavg()}}

    def fit():
        return FunctionalRegression("rcst ~ cca", ds, dictionary="db3", level=4, interpolate_inputs=True,
                                    progress=False).fit()

    from threadpoolctl import threadpool_limits

    fit()
    times, cpu = [], []
    with threadpool_limits(1):  # CPU time of one BLAS thread: comparable on a shared machine
        for _ in range(30):
            t0, c0 = time.perf_counter(), time.process_time()
            fit()
            times.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
    res["default_tuning_fit_db3_level4"] = {"n": 100, "tuned": "width x b x lambda by leave-one-curve-out",
                                           "n_widths": 3, "n_b": 3, "n_lambdas": 21, "blas_threads": 1,
                                           "median_wall_ms": 1e3 * float(np.median(times)),
                                           "min_wall_ms": 1e3 * float(np.min(times)),
                                           "median_cpu_ms": 1e3 * float(np.median(cpu))}
    rng = np.random.default_rng(0)
    train = ds.isel(sample=np.sort(rng.permutation(100)[:70]))
    t0 = time.perf_counter()
    r = FunctionalRegression("rcst ~ cca", train, dictionary="db3", level=4, interpolate_inputs=True, lam="cv",
                             lam_grid=np.geomspace(1e-6, 1e-2, 25), cv=5, random_state=0, n_jobs=2,
                             param_grid={"dictionary": ["db2", "db3"], "level": [4, 5],
                                         "b": list(np.round(np.arange(1.0, 2.01, 0.1), 2))},
                             progress=False).fit()
    elapsed = time.perf_counter() - t0
    res["cv_grid"] = {"n_train": 70, "folds": 5, "n_lambdas": 25, "n_b": 11, "n_dictionaries": 4,
                      "fits": 5 * 11 * 4, "seconds": elapsed, "target_s": 10,
                      "best": {k: repr(v) for k, v in r.cv_result["best_params"].items()}, "best_lambda": r.lam}
    write_results(OUT, res)


if __name__ == "__main__":
    main()
