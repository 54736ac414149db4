"""Are the default fits of this checkout the same as another checkout's, on every split of the real data sets?

For changes meant to be exact (speed, structure): fits ``FunctionalRegression(formula, train).fit()`` (the defaults
of ``benchmarks/accuracy.py``'s ``default`` model) on every split of the four data sets with this checkout and with
the checkout in ``--reference`` (each in its own process, its own ``PYTHONPATH``), and compares the chosen lambdas,
the test predictions and the held-out errors. Writes ``benchmarks/results/same_defaults.json``.
Run: ``python benchmarks/same_defaults.py --reference DIR`` (e.g. ``git worktree add /tmp/ref <commit>``).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

HERE = Path(__file__).resolve().parent
OUT = HERE / "results" / "same_defaults.json"
DATASETS = ("dti", "poblenou", "aemet", "emotion")


def worker(path: str) -> None:
    """Default fits of the checkout on ``PYTHONPATH``: lambdas, test predictions and held-out errors per split."""
    sys.path.insert(0, str(HERE))
    from accuracy import fit_fdakpl
    from accuracy_data import BENCHMARKS, heldout_error, split_data

    out: dict = {}
    with threadpool_limits(1):
        for name in DATASETS:
            bench = BENCHMARKS[name]
            rows: dict[str, list] = {"lams": [], "errors": [], "predictions": []}
            for train, test, Y_te, keep in split_data(bench):
                pred, info = fit_fdakpl(bench, train, test)
                rows["lams"].append(info["lam"])
                rows["errors"].append(heldout_error(Y_te, pred[:, keep], bench.error))
                rows["predictions"].append(pred.ravel().tolist())
            out[name] = rows
    Path(path).write_text(json.dumps(out))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--reference", required=True, help="another checkout of fdakpl")
    p.add_argument("--worker", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.worker:
        return worker(args.worker)
    sides = {"this checkout": str(HERE.parent), "reference": str(Path(args.reference).resolve())}
    got = {}
    with tempfile.TemporaryDirectory() as tmp:
        for side, root in sides.items():
            path = os.path.join(tmp, f"{len(got)}.json")
            env = dict(os.environ, PYTHONPATH=root, FDAKPL_PROGRESS="0", OMP_NUM_THREADS="1",
                       OPENBLAS_NUM_THREADS="1")
            subprocess.run([sys.executable, __file__, "--reference", root, "--worker", path], env=env, cwd=root,
                           check=True)
            got[side] = json.loads(Path(path).read_text())
    commit = subprocess.run(["git", "-C", sides["reference"], "rev-parse", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    out: dict = {"command": f"python benchmarks/same_defaults.py --reference {args.reference}",
                 "reference_commit": commit or None, "datasets": {}}
    for name in DATASETS:
        a, b = got["this checkout"][name], got["reference"][name]
        pa = np.concatenate([np.asarray(v, dtype=float) for v in a["predictions"]])
        pb = np.concatenate([np.asarray(v, dtype=float) for v in b["predictions"]])
        ok = np.isfinite(pa) & np.isfinite(pb)
        out["datasets"][name] = {
            "splits": len(a["lams"]),
            "lambdas_equal": a["lams"] == b["lams"],
            "max_relative_prediction_difference": float(np.max(np.abs(pa[ok] - pb[ok])) / np.max(np.abs(pb[ok]))),
            "same_missing_predictions": bool(np.array_equal(np.isfinite(pa), np.isfinite(pb))),
            "mean_error": {"this checkout": float(np.mean(a["errors"])), "reference": float(np.mean(b["errors"]))},
        }
        print(name, out["datasets"][name], flush=True)
    OUT.write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
