"""Cost of the term-importance table in the summary (issue 17).

Writes ``benchmarks/results/importance.json``. Run: ``python benchmarks/bench_importance.py``.
For n = 100, 300, 500 curves of the simulated linear data (two terms: a curve and a scalar) and for DTI's
100 first visits (rcst ~ cca + pasat): wall and CPU time (one BLAS thread) of ``fit()``,
``summary(importance=False)``, ``summary(importance=19)`` and ``summary()`` (default ``"auto"``: 19
permutations per term up to ``AUTO_MAX_SAMPLES`` curves), paired in one run (median of 3). The threshold
is judged by the cost of the table relative to the fit, not by an absolute time.
"""

from __future__ import annotations

import json
import os
import platform
import time
import warnings
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

from fdakpl import FunctionalRegression, datasets

OUT = Path(__file__).parent / "results" / "importance.json"


def timed(f, reps: int = 3) -> dict:
    wall, cpu = [], []
    for _ in range(reps):
        t0, c0 = time.perf_counter(), time.process_time()
        f()
        wall.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return {"wall_median": float(np.median(wall)), "cpu_median": float(np.median(cpu))}


def main() -> None:
    warnings.simplefilter("ignore")
    out: dict = {"machine": {"python": platform.python_version(), "cpu_count": os.cpu_count(),
                             "numpy": np.__version__, "loadavg_at_start": os.getloadavg()}, "cases": []}
    cases = []
    for n in (100, 300, 500):
        ds, _ = datasets.make_linear_surface(n, m_in=40, m_out=30, random_state=0)
        ds["z"] = ("sample", np.random.default_rng(1).normal(size=n))
        cases.append((f"simulated n={n}", "y ~ x + z", ds, {}))
    cases.append(("DTI first visits", "rcst ~ cca + pasat", datasets.dti_first_visits(), {"interpolate_inputs": True}))
    with threadpool_limits(1):
        for name, formula, ds, kw in cases:
            model = FunctionalRegression(formula, ds, progress=False, **kw)
            res = model.fit()
            row = {"case": name, "n": int(ds.sizes["sample"]),
                   "fit": timed(model.fit), "summary_off": timed(lambda r=res: r.summary(importance=False)),
                   "summary_importance_19": timed(lambda r=res: r.summary(importance=19)),
                   "summary_default": timed(lambda r=res: r.summary())}
            row["importance_19_over_fit_cpu"] = (row["summary_importance_19"]["cpu_median"]
                                                 / row["fit"]["cpu_median"])
            out["cases"].append(row)
            print(json.dumps(row))
    out["machine"]["loadavg_at_end"] = os.getloadavg()
    OUT.write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
