"""The number of atoms of ``dictionary="auto"`` and what ``lam="cv"`` tunes (issue 24, item 6), on held-out error.

On the four real data sets of ``benchmarks/accuracy.py`` (same splits, formulas and errors), per split:

* ``previous default``: the default fit with the Fourier basis of 10 frequencies (21 atoms) that ``"auto"``
  gave on more than 21 locations before (``dictionary="fourier"``);
* ``default``: today's default, ``"auto"`` choosing 10, 20 or 40 frequencies (at most one atom per location)
  with the widths, ``b`` and lambda by leave-one-curve-out;
* ``previous lam='cv'``: K-fold CV of lambda only, median-heuristic width, ``B = I``, 21 atoms (what
  ``lam="cv"`` did before: ``width_grid=None, b_grid=None, dictionary="fourier"``);
* ``lam='cv'``: today's ``lam="cv"``, K-fold CV of the widths, ``b``, the number of atoms and lambda;

all with the lambda grid of ``accuracy.py``'s ``cv`` model for the CV rows (``geomspace(1e-10, 1e2, 49)``, 5 folds).
The mgcv reference errors are read from ``benchmarks/results/accuracy.json`` (same splits). Paired differences
(mean ± se over splits, splits won) against the previous default and against mgcv. Writes
``benchmarks/results/atoms_and_cv.json`` (kept per data set: a run on a subset keeps the others). BLAS on one
thread. Run: ``python benchmarks/atoms_and_cv.py [--datasets dti,poblenou] [--splits N]``.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).parent))
from accuracy import CV_GRID, fit_fdakpl
from accuracy_data import BENCHMARKS, heldout_error, paired_run, split_data

OUT = Path(__file__).parent / "results" / "atoms_and_cv.json"
MODELS = {
    "previous default (21 Fourier atoms)": {"dictionary": "fourier"},
    "default (atoms chosen by LOO)": {},
    "previous lam='cv' (lambda only, 21 atoms)": {"lam": "cv", "lam_grid": CV_GRID, "width_grid": None,
                                                  "b_grid": None, "dictionary": "fourier", "n_jobs": 1},
    "lam='cv' (widths, b, atoms, lambda)": {"lam": "cv", "lam_grid": CV_GRID, "n_jobs": 1},
}


def paired(a: list[float], b: list[float]) -> dict[str, float]:
    d = np.asarray(a) - np.asarray(b)
    return {"mean": float(d.mean()), "se": float(d.std(ddof=1) / np.sqrt(d.size)) if d.size > 1 else float("nan"),
            "won": int(np.sum(d < 0)), "n": int(d.size), "ratio": float(np.mean(a) / np.mean(b))}


@threadpool_limits.wrap(limits=1)
def main() -> None:
    args, out, reference = paired_run(__doc__, OUT)
    for name in args.datasets.split(","):
        bench = BENCHMARKS[name]
        errs: dict[str, list[float]] = {m: [] for m in MODELS}
        facts: dict[str, list[dict]] = {m: [] for m in MODELS}
        t0 = time.perf_counter()
        for train, test, Y_te, keep in split_data(bench, args.splits):
            for m, kw in MODELS.items():
                pred, info = fit_fdakpl(bench, train, test, **kw)
                errs[m].append(heldout_error(Y_te, pred[:, keep], bench.error))
                facts[m].append(info)
        n_splits = len(errs[next(iter(MODELS))])
        mgcv = reference[name]["errors"]["mgcv"][:n_splits]
        base = "previous default (21 Fourier atoms)"
        out["datasets"][name] = {
            "splits": n_splits, "seconds": time.perf_counter() - t0, "errors": errs, "facts": facts,
            "mgcv": mgcv,
            "vs_previous_default": {m: paired(errs[m], errs[base]) for m in MODELS if m != base},
            "vs_previous_cv": paired(errs["lam='cv' (widths, b, atoms, lambda)"],
                                     errs["previous lam='cv' (lambda only, 21 atoms)"]),
            "vs_mgcv": {m: paired(errs[m], mgcv) for m in MODELS},
        }
        OUT.write_text(json.dumps(out, indent=1))
        print(name, f"{time.perf_counter() - t0:.0f} s", flush=True)
        for m in MODELS:
            v = out["datasets"][name]["vs_mgcv"][m]
            print(f"  {m}: mean {np.mean(errs[m]):.4g}, - mgcv {v['mean']:+.4g} ± {v['se']:.2g} ({v['won']}/{v['n']})",
                  flush=True)
    out["loadavg_end"] = os.getloadavg()
    OUT.write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
