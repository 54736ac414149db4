"""Held-out error of the approximate route's integration of partially observed curves (issue 24, approx=).

``approx=`` used to integrate every partially observed curve by the plug-in; it now chooses as the exact fits
do (``integration="auto"``: each curve's linear interpolant on the observed grid for dense curves with gaps).
This script measures the change where it matters, paired on the same splits and deletions as
``benchmarks/partial_observation.py`` (its ``delete``, ``score``, ``kfold`` and ``real_cases``): the four bundled
real data sets, training curves thinned by design (a block missing in a factor-defined half of the curves)
and at random (30% of the points), 3 folds each; errors relative to the training mean curve's (integrated
squared error on the test curves). Routes: ``FunctionalRegression(formula, approx=Nystroem(r,
random_state=0))`` (r = min(50, half the training curves)) with the new default and with
``integration="plugin"`` (the old behaviour), the exact default, and the linear reference (mgcv, pffr's
construction: ``partial_observation.mgcv_predict``).

Run: ``python benchmarks/approx_integration.py``; writes ``benchmarks/results/approx_integration.json``.
"""

from __future__ import annotations

import json
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from _timing import machine
from partial_observation import delete, kfold, mgcv_predict, real_cases, score

from fdakpl import FunctionalRegression, Nystroem

OUT = Path(__file__).parent / "results" / "approx_integration.json"
ROUTES = {
    "approx, default (auto)": {"approx": "nystroem"},
    "approx, plugin (before)": {"approx": "nystroem", "integration": "plugin"},
    "exact, default": {},
}


def fit_predict(route: dict[str, Any], formula: str, train: Any, test: Any, interp: bool) -> tuple[np.ndarray, str]:
    opts: dict[str, Any] = {"progress": False, "interpolate_inputs": interp}
    if route.get("approx"):
        opts["approx"] = Nystroem(min(50, train.sizes["sample"] // 2), random_state=0)
    if "integration" in route:
        opts["integration"] = route["integration"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = FunctionalRegression(formula, train, **opts).fit()
        return res.predict(test).values, res.estimator.integration_


def main() -> None:
    t0 = time.time()
    rows = []
    for case in real_cases(3):
        full, resp = case["ds"], case["response"]
        grid = full[resp][full[resp].dims[1]].values
        for shape in ("design", "mcar"):
            rng = np.random.default_rng(24)
            errs: dict[str, list[float]] = {r: [] for r in ROUTES}
            used: dict[str, str] = {}
            for tr, te in kfold(full.sizes["sample"], 3, 0):
                train, test = full.isel(sample=tr), full.isel(sample=te)
                Ytr = delete(train[resp].values, shape, rng, case["designed"][tr], case.get("block", (0.45, 0.57)))
                lost = np.isnan(Ytr).all(axis=1)
                Ytr[lost, 0] = train[resp].values[lost, 0]
                train = train.assign({resp: train[resp].copy(data=Ytr)})
                Yte = test[resp].values
                base = score(Yte, np.broadcast_to(np.nanmean(Ytr, axis=0), Yte.shape), grid)
                for name, route in ROUTES.items():
                    pred, used[name] = fit_predict(route, case["formula"], train, test, case["interp"])
                    errs[name].append(score(Yte, pred, grid) / base)
                errs.setdefault("mgcv", []).append(
                    score(Yte, mgcv_predict(train, test, resp, case["inputs"], case["factors"]), grid) / base)
            new, old = np.array(errs["approx, default (auto)"]), np.array(errs["approx, plugin (before)"])
            mean = {k: float(np.mean(v)) for k, v in errs.items()}
            row = {"data": case["name"], "shape": shape, "relative_ise": mean,
                   "new_over_mgcv": float(new.mean() / np.mean(errs["mgcv"])),
                   "per_fold": errs, "integration": used, "new_over_old": float(new.mean() / old.mean()),
                   "folds_new_better": int(np.sum(new < old)), "n_folds": int(new.size)}
            rows.append(row)
            print(f"{case['name']:13s} {shape:6s} " + "  ".join(f"{k}={v:.3f}" for k, v in row["relative_ise"].items())
                  + f"  new/old={row['new_over_old']:.3f} ({row['folds_new_better']}/{row['n_folds']}) {used}",
                  flush=True)
    OUT.parent.mkdir(exist_ok=True)
    OUT.write_text(json.dumps({"command": "python benchmarks/approx_integration.py", "machine": machine(),
                               "seconds": round(time.time() - t0, 1), "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
