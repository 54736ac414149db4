"""The tuning defaults (issue 12, items 1-2) on the other real data sets of the accuracy benchmark.

For aemet, emotion and poblenou (splits, formulas and errors of ``benchmarks/accuracy_data.py``),
per split: the training mean curve, the previous default (pointwise GCV, median-heuristic widths,
B = I), lambda by leave-one-curve-out only, the new default, and the new default's candidate
width grids ({2..16}, {1..16} x median). Paired against the previous default and the mean (the
mgcv reference of these sets is in ``benchmarks/accuracy.py``). Writes
``benchmarks/results/tuning_other_data.json``. Run (BLAS pinned to one thread):
``python benchmarks/tuning_other_data.py``
(``--datasets aemet`` for a subset, ``--splits N`` for the first N splits; the other data sets of an
existing JSON are kept). For emotion (several curves per subject) it also runs ``groups="subject"``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).parent))
from accuracy import fit_fdakpl, fit_mean
from accuracy_data import BENCHMARKS, heldout_error

OUT = Path(__file__).parent / "results" / "tuning_other_data.json"
MODELS = {
    "previous default (lam='gcv', median width, B = I)": {"lam": "gcv", "width_grid": None, "b_grid": None},
    "lam='loo' only (width_grid=None, b_grid=None)": {"width_grid": None, "b_grid": None},
    "default (widths {4, 8, 16}, b {1, 1.5, 2}, lambda by LOO)": {},
    "widths {2, 4, 8, 16}": {"width_grid": [2, 4, 8, 16]},
    "widths {1, 2, 4, 8, 16}": {"width_grid": [1, 2, 4, 8, 16]},
}


@threadpool_limits.wrap(limits=1)  # one BLAS thread: timings comparable on a shared machine
def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--datasets", default="aemet,emotion,poblenou")
    p.add_argument("--splits", type=int, default=None)
    args = p.parse_args()
    out: dict = json.loads(OUT.read_text()) if OUT.exists() else {"datasets": {}}  # other data sets kept
    out.update({"command": " ".join(sys.argv), "loadavg_start": os.getloadavg()})
    for name in args.datasets.split(","):
        bench = BENCHMARKS[name]
        ds = bench.load()
        splits = bench.splits(ds)[: args.splits]
        Y = ds[bench.response].values
        keep = np.arange(0, Y.shape[1], bench.thin)
        models = dict(MODELS)
        if "subject" in ds:  # several curves per subject: leave one subject out inside the training data too
            models["default with groups='subject' (leave-one-group-out)"] = {"groups": "subject"}
            models["lam='loo' only, groups='subject'"] = {"groups": "subject", "width_grid": None, "b_grid": None}
        errs: dict[str, list[float]] = {"training mean": [], **{m: [] for m in models}}
        t0 = time.perf_counter()
        for tr, te in splits:
            train, test = ds.isel(sample=tr), ds.isel(sample=te)
            Yte = test[bench.response].values[:, keep]
            errs["training mean"].append(heldout_error(Yte, fit_mean(bench, train, test)[0][:, keep], bench.error))
            for m, kw in models.items():
                pred, info = fit_fdakpl(bench, train, test, **kw)
                errs[m].append(heldout_error(Yte, pred[:, keep], bench.error))
        summary = {}
        ref = np.array(errs["training mean"])
        old = np.array(errs[next(iter(MODELS))])
        for m, e in errs.items():
            e = np.array(e)
            summary[m] = {"mean": float(e.mean()), "sd": float(e.std(ddof=1)) if e.size > 1 else None,
                          "won_vs_mean": int((e < ref).sum()), "won_vs_previous_default": int((e < old).sum()),
                          "of": int(e.size)}
            print(f"{name:9s} {m:58s} {e.mean():.5g}  beats mean {(e < ref).sum()}/{e.size}")
        out["datasets"][name] = {"formula": bench.formula, "error": bench.error, "n_splits": len(splits),
                                 "errors": errs, "summary": summary, "seconds": time.perf_counter() - t0}
    out["loadavg_end"] = os.getloadavg()
    OUT.parent.mkdir(exist_ok=True)
    OUT.write_text(json.dumps(out, indent=1))
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
