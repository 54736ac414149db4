"""Traced peak memory of the default multi-term tuning against the exact solver's plan (issue 26, item 18).

Writes ``benchmarks/results/memory_multiterm.json``. Run::

    nice -n 5 python benchmarks/memory_multiterm.py [--n 400,800] [--terms 1,3,5]

Synthetic data: ``n`` curves, ``terms`` input curves of 15 points each and a response of 20 points
(``Fourier(3)``) or 40 points (``dictionary="auto"``, which also tries more atoms), standard normal.
Each fit runs in a fresh process with the imports and one small fit done first; the peak is what
:mod:`tracemalloc` traces during the fit (NumPy's arrays included), reported in units of ``n^2``
doubles next to :func:`fdakpl.solvers.memory.check_exact_memory`'s plan.
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
from pathlib import Path

from _results import write_results

CHILD = r"""
import json, sys, tracemalloc, warnings
import numpy as np, xarray as xr
from fdakpl import FunctionalRegression, Fourier
from fdakpl.solvers.memory import check_exact_memory
warnings.simplefilter("ignore")
n, k, auto = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3] == "auto"
m = 40 if auto else 20
rng = np.random.default_rng(0)
data = {f"x{i}": (("sample", "s"), rng.normal(size=(n, 15))) for i in range(k)}
data["y"] = (("sample", "t"), rng.normal(size=(n, m)))
ds = xr.Dataset(data, coords={"s": np.linspace(0, 1, 15), "t": np.linspace(0, 1, m)})
formula = "y ~ " + " + ".join(f"x{i}" for i in range(k))
kw = {"dictionary": "auto"} if auto else {"dictionary": Fourier(3)}
FunctionalRegression(formula, ds.isel(sample=slice(0, 30)), progress=False, **kw).fit()
tracemalloc.start()
FunctionalRegression(formula, ds, progress=False, **kw).fit()
peak = tracemalloc.get_traced_memory()[1]
plan = check_exact_memory(n, n * m, limit="inf", n_terms=k)
print(json.dumps({"n": n, "terms": k, "dictionary": "auto" if auto else "Fourier(3)", "peak_mib": peak / 2**20,
                  "plan_mib": plan / 2**20, "peak_n2_doubles": peak / (8 * n * n),
                  "plan_n2_doubles": plan / (8 * n * n), "peak_over_plan": peak / plan}))
"""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", default="400,800")
    ap.add_argument("--terms", default="1,3,5")
    ap.add_argument("--out", default=str(Path(__file__).parent / "results" / "memory_multiterm.json"))
    args = ap.parse_args()
    rows = []
    for n in map(int, args.n.split(",")):
        for k in map(int, args.terms.split(",")):
            for dic in ("fourier", "auto"):
                out = subprocess.run([sys.executable, "-c", CHILD, str(n), str(k), dic], capture_output=True,
                                     text=True, check=True).stdout
                rows.append(json.loads(out.strip().splitlines()[-1]))
                print(rows[-1], flush=True)
    write_results(Path(args.out), {"benchmark": "memory_multiterm", "rows": rows,
                                   "machine": {"python": platform.python_version(), "platform": platform.platform()}})


if __name__ == "__main__":
    main()
