"""How factors enter the kernel (issue 24, item 3): held-out error of factor codings, paired on real data.

On the data sets of the accuracy benchmark that have factors (emotion, poblenou; same splits,
``benchmarks/accuracy_data.py``) and on DTI with a factor and a numeric covariate
(``rcst ~ cca + C(sex) + pasat``, the 20 DTI splits), fits ``FunctionalRegression`` with its
defaults and

* ``treatment``: the design fdakpl used before issue 24, reproduced exactly: the factors as
  treatment-coded dummy columns (the first factor of the formula with all its levels, the others
  without their first level), standardised and pooled with the numeric covariates in one Gaussian
  kernel (``"scalars"``) whose width multiple is tuned by leave-one-curve-out;
* ``categorical``: the default now: one :class:`~fdakpl.factor_kernels.Categorical` kernel per
  factor (each level equally far from the others), multiples of its width tuned on
  :data:`~fdakpl.tuning.search.DEFAULT_FACTOR_MULTIPLES` with the other terms' widths;
* the same with other grids of factor multiples (``grid[...]``: the curves' grid 4..16; 1..64 and
  0.25..64 in steps of 2 instead of 4), and with ``combine="sum"`` (``categorical sum``; for the
  treatment coding, ``treatment sum``).

Paired differences against ``treatment`` (mean, standard error over splits, splits won) go to
``benchmarks/results/factor_kernels.json`` and ``.md``. BLAS on one thread (threadpoolctl); the
other grids are tried by setting ``fdakpl.regression.steps.DEFAULT_FACTOR_MULTIPLES`` (this script
only).

Usage::

    python benchmarks/factor_kernels.py                      # the three data sets (about 10 min, loaded machine)
    python benchmarks/factor_kernels.py --datasets poblenou  # one
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import dataclasses  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402
import xarray as xr  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
from accuracy_data import BENCHMARKS, Benchmark, heldout_error  # noqa: E402

import fdakpl.regression.steps as front_end  # noqa: E402
from fdakpl import FunctionalRegression  # noqa: E402

RESULTS = Path(__file__).parent / "results"
DATASETS = {
    "emotion": BENCHMARKS["emotion"],
    "poblenou": BENCHMARKS["poblenou"],
    "dti_sex": dataclasses.replace(BENCHMARKS["dti"], name="dti_sex", formula="rcst ~ cca + C(sex) + pasat",
                                   factors=("sex",),
                                   notes=["DTI first visits with the factor sex and the numeric pasat"]),
}
DEFAULT_GRID = front_end.DEFAULT_FACTOR_MULTIPLES.copy()
#: name -> (coding, keyword arguments, grid of factor multiples)
CONFIGS: dict[str, tuple[str, dict[str, Any], np.ndarray]] = {
    "treatment": ("treatment", {}, DEFAULT_GRID),
    "categorical": ("categorical", {}, DEFAULT_GRID),
    "categorical grid[4..16]": ("categorical", {}, np.array([4.0, 8.0, 16.0])),
    "categorical grid[1..64]": ("categorical", {}, np.array([1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0])),
    "categorical grid[0.25..64 x2]": ("categorical", {}, np.array([0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0])),
    "categorical sum": ("categorical", {"combine": "sum"}, DEFAULT_GRID),
    "treatment sum": ("treatment", {"combine": "sum"}, DEFAULT_GRID),
}


def treatment_coded(bench: Benchmark, ds: xr.Dataset) -> tuple[xr.Dataset, str]:
    """The data with the factors as treatment-coded 0/1 columns (levels from the whole data set) and the formula
    that pools them with the numeric covariates, as fdakpl's design did before issue 24."""
    cols: dict[str, Any] = {}
    names = []
    for j, f in enumerate(bench.factors):
        levels = sorted(ds[f].attrs.get("levels") or set(ds[f].values.tolist()))
        for lv in (levels if j == 0 else levels[1:]):  # no intercept: the first factor keeps all its levels
            name = f"{f}_is_{lv}"
            cols[name] = ("sample", (ds[f].values == lv).astype(float))
            names.append(name)
    lhs, rhs = bench.formula.split("~")
    kept = [t.strip() for t in rhs.split("+") if "C(" not in t]
    return ds.assign(cols), f"{lhs.strip()} ~ " + " + ".join(kept + names)


def fit_predict(bench: Benchmark, train: xr.Dataset, test: xr.Dataset, config: str) -> tuple[np.ndarray, dict]:
    coding, kwargs, grid = CONFIGS[config]
    formula = bench.formula
    if coding == "treatment":
        (train, formula), (test, _) = treatment_coded(bench, train), treatment_coded(bench, test)
    interp = {"interpolate_inputs": True} if bench.interpolate_inputs else {}
    front_end.DEFAULT_FACTOR_MULTIPLES = grid
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t0 = time.perf_counter()
            res = FunctionalRegression(formula, train, progress=False, **interp, **kwargs).fit()
            seconds = time.perf_counter() - t0
            pred = res.predict(test).values
    finally:
        front_end.DEFAULT_FACTOR_MULTIPLES = DEFAULT_GRID
    tuned = dict(zip(res.tuning.terms, map(float, res.tuning.multiples), strict=True)) if res.tuning else {}
    return pred, {"fit_s": seconds, "lam": float(res.lam), "multiples": tuned}


def run(bench: Benchmark) -> dict[str, Any]:
    ds = bench.load()
    if bench.name == "dti_sex":
        ds = ds.dropna("sample", subset=["pasat"])
    splits = bench.splits(ds)
    keep = np.arange(0, ds[bench.response].shape[1], bench.thin)
    errors: dict[str, list[float]] = {c: [] for c in CONFIGS}
    facts: dict[str, list[dict]] = {c: [] for c in CONFIGS}
    for tr, te in splits:
        train, test = ds.isel(sample=tr), ds.isel(sample=te)
        Y = test[bench.response].values[:, keep]
        for c in CONFIGS:
            pred, info = fit_predict(bench, train, test, c)
            errors[c].append(heldout_error(Y, pred[:, keep], bench.error))
            facts[c].append(info)
    ref = np.array(errors["treatment"])
    summary = {}
    for c, e in errors.items():
        d = np.array(e) - ref
        summary[c] = {"mean": float(np.mean(e)), "diff": float(d.mean()),
                      "diff_se": float(d.std(ddof=1) / np.sqrt(d.size)), "won": int((d < 0).sum()),
                      "lost": int((d > 0).sum()), "splits": int(d.size),
                      "median_fit_s": float(np.median([f["fit_s"] for f in facts[c]]))}
    return {"formula": bench.formula, "splits": bench.split_label, "error": bench.error,
            "n_samples": ds.sizes["sample"], "errors": errors, "facts": facts, "summary": summary}


def report(payload: dict[str, Any]) -> str:
    m = payload["machine"]
    lines = ["# Factor codings (generated by benchmarks/factor_kernels.py)", "",
             f"Held-out error, paired against the treatment-coded design fdakpl used before issue 24 (same splits). "
             f"BLAS on 1 thread; {payload['seconds']:.0f} s, load average {m['loadavg'][0]:.1f} -> "
             f"{m['loadavg_end'][0]:.1f} on {m['cpu_count']} shared CPUs (times are wall-clock on a loaded machine).",
             "", "| data set | coding | test error (mean) | - treatment (± se) | splits won / lost | median fit (s) |",
             "| --- | --- | --- | --- | --- | --- |"]
    for name, r in payload["datasets"].items():
        for c, s in r["summary"].items():
            diff = "" if c == "treatment" else f"{s['diff']:+.4g} ± {s['diff_se']:.2g}"
            won = "" if c == "treatment" else f"{s['won']} / {s['lost']}"
            lines.append(f"| {name} ({s['splits']}) | {c} | {s['mean']:.5g} | {diff} | {won} | "
                         f"{s['median_fit_s']:.3f} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> dict[str, Any]:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--datasets", default=",".join(DATASETS), help="comma-separated subset of " + ",".join(DATASETS))
    p.add_argument("--out", default=str(RESULTS / "factor_kernels.json"))
    args = p.parse_args(argv)
    names = [n.strip() for n in args.datasets.split(",") if n.strip()]
    payload: dict[str, Any] = {"machine": {"cpu_count": os.cpu_count(), "loadavg": list(os.getloadavg())},
                               "command": " ".join(sys.argv), "default_factor_multiples": DEFAULT_GRID.tolist(),
                               "datasets": {}}
    t0 = time.perf_counter()
    with threadpool_limits(1):
        for name in names:
            payload["datasets"][name] = run(DATASETS[name])
    payload["seconds"] = time.perf_counter() - t0
    payload["machine"]["loadavg_end"] = list(os.getloadavg())
    out = Path(args.out)
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(payload, indent=1))
    out.with_suffix(".md").write_text(report(payload))
    print(out.with_suffix(".md").read_text())
    return payload


if __name__ == "__main__":
    main()
