"""What the default's search buys, on held-out error, for what it costs in fit time (issue 23's speed target).

Issue 23 asked for the default ``fit()`` on DTI in at most 2/3 of the time of 560ccb8's; since then issue 24
made the default score more (the number of Fourier atoms, the interpolated integration), by held-out error.
The default's time is mostly its search: exact leave-one-curve-out along 21 lambdas for every width multiple
(3) and ``b`` (3), then one more path with more atoms. This script measures, on the four real data sets of
``benchmarks/accuracy.py`` (same splits, formulas and errors), paired per split:

* ``default``: widths x ``b`` x atoms x lambda by leave-one-curve-out (today's default);
* ``coarse lambda grid``: the same with 11 lambdas over the same range (``geomspace(1e-8, 1, 11)``, every
  other value of the default grid), about half the path arithmetic; and with 9 (decades) and 7 values;
* ``no width or b tuning``: lambda and the atoms by leave-one-curve-out at the median-heuristic width with
  ``B = I`` (``width_grid=None, b_grid=None``), the cheapest search that still chooses lambda by the default's
  criterion: the one that would meet the 2/3 target on DTI.

Held-out error (paired differences against the default, mean ± se, splits better), against the mgcv reference
(errors read from ``benchmarks/results/accuracy.json``, same splits), the median fit time per model in the
same run (fits interleaved per split, BLAS on one thread), and how many fits raised an edge notice (a width,
``b`` or lambda chosen at the end of its grid: what a user is told to act on).
Writes ``benchmarks/results/search_cost.json``.
Run: ``python benchmarks/search_cost.py [--datasets dti,aemet] [--splits N]``.
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
from accuracy import fit_fdakpl
from accuracy_data import BENCHMARKS, heldout_error, paired_run, split_data
from atoms_and_cv import paired

OUT = Path(__file__).parent / "results" / "search_cost.json"
DEFAULT = "default (widths x b x atoms x lambda)"
MODELS = {
    DEFAULT: {},
    "coarse lambda grid (11 values)": {"lam_grid": np.geomspace(1e-8, 1.0, 11)},
    "coarse lambda grid (9 values, decades)": {"lam_grid": np.geomspace(1e-8, 1.0, 9)},
    "coarse lambda grid (7 values)": {"lam_grid": np.geomspace(1e-8, 1.0, 7)},
    "no width or b tuning (lambda and atoms only)": {"width_grid": None, "b_grid": None},
}


@threadpool_limits.wrap(limits=1)
def main() -> None:
    args, out, reference = paired_run(__doc__, OUT)
    for name in args.datasets.split(","):
        bench = BENCHMARKS[name]
        errs: dict[str, list[float]] = {m: [] for m in MODELS}
        secs: dict[str, list[float]] = {m: [] for m in MODELS}
        edges: dict[str, list[list[str]]] = {m: [] for m in MODELS}
        t0 = time.perf_counter()
        for train, test, Y_te, keep in split_data(bench, args.splits):
            for m, kw in MODELS.items():
                pred, info = fit_fdakpl(bench, train, test, **kw)
                errs[m].append(heldout_error(Y_te, pred[:, keep], bench.error))
                secs[m].append(info["fit_s"])
                edges[m].append(info["edge_notices"])
        n_splits = len(errs[next(iter(MODELS))])
        mgcv = reference[name]["errors"]["mgcv"][:n_splits]
        median_fit = {m: float(np.median(v)) for m, v in secs.items()}
        out["datasets"][name] = {
            "splits": n_splits, "seconds": time.perf_counter() - t0, "errors": errs, "fit_s": secs,
            "median_fit_s": median_fit, "edge_notices": edges,
            "fits_with_an_edge_notice": {m: sum(bool(e) for e in v) for m, v in edges.items()},
            "fit_time_ratio_to_default": {m: median_fit[m] / median_fit[DEFAULT] for m in MODELS},
            "vs_default": {m: paired(errs[m], errs[DEFAULT]) for m in MODELS if m != DEFAULT},
            "vs_mgcv": {m: paired(errs[m], mgcv) for m in MODELS},
        }
        OUT.write_text(json.dumps(out, indent=1))
        print(name, f"{time.perf_counter() - t0:.0f} s", flush=True)
        for m in MODELS:
            v, d = out["datasets"][name]["vs_mgcv"][m], out["datasets"][name]["vs_default"].get(m)
            vs = "" if d is None else f"; - default {d['mean']:+.4g} ± {d['se']:.2g} (better {d['won']}/{d['n']})"
            print(f"  {m}: mean {np.mean(errs[m]):.4g}, x mgcv {v['ratio']:.3f} ({v['won']}/{v['n']} won){vs}; "
                  f"fit {1e3 * median_fit[m]:.1f} ms; edge notices in {sum(bool(e) for e in edges[m])} fits",
                  flush=True)
    out["loadavg_end"] = os.getloadavg()
    OUT.write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
