"""Real-data accuracy benchmark (issue 12, item 6): fdakpl against the training mean and a linear reference.

On each data set (``benchmarks/accuracy_data.py``) and each split, fits

* ``mean``: the training mean curve;
* ``default``: ``FunctionalRegression(formula, data=train)`` with defaults only (plus
  ``interpolate_inputs=True`` where inputs have gaps);
* ``loo``: the same with ``lam="loo"`` (exact leave-one-curve-out);
* ``cv``: the same with ``lam="cv"`` (5-fold over curves) on a wide grid ``geomspace(1e-10, 1e2, 49)``;
* ``mgcv``: the linear function-on-function model of refund's pffr, fitted by R's mgcv (REML) through
  rpy2 (``benchmarks/mgcv_reference.py``);

and, with ``--sweep``, candidate defaults with today's API: ``lam="loo"`` with every Gaussian term's width
a multiple (1/2 ... 16) of its median-heuristic width, for several dictionaries, and for partially observed
responses both estimators (plug-in ``solver="auto"`` and ``solver="exact_partial"``).

Every model is scored on the same points of the same test curves; paired differences against the mgcv
reference (mean, standard error over splits, splits won) and fit times go to JSON, a PNG figure and a
Markdown table. BLAS runs on one thread (threadpoolctl; also R's, via the environment set below).

Usage::

    python benchmarks/accuracy.py                                  # the four data sets, main models
    python benchmarks/accuracy.py --sweep                          # + the sweep of candidate defaults
    python benchmarks/accuracy.py --datasets dti --splits 3        # quick check (about a minute)
    python benchmarks/accuracy.py --reuse-mgcv results/accuracy.json --sweep   # sweep without refitting mgcv

Results: ``benchmarks/results/accuracy.json`` (``--out``), ``.png`` and ``.md`` next to it.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):  # before numpy and R start
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402
import xarray as xr  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
from accuracy_data import BENCHMARKS, Benchmark, dummies, heldout_error  # noqa: E402
from accuracy_report import summarise, write_report  # noqa: E402

import fdakpl  # noqa: E402
from fdakpl import FunctionalRegression  # noqa: E402
from fdakpl.data.functional import interpolate_missing  # noqa: E402
from fdakpl.kernels import Gaussian  # noqa: E402
from fdakpl.utils.progress import progress  # noqa: E402

RESULTS = Path(__file__).parent / "results"
CV_GRID = np.geomspace(1e-10, 1e2, 49)
WIDTHS = (0.5, 1.0, 2.0, 4.0, 8.0, 16.0)
DICTIONARIES: dict[str, Any] = {  # name -> FunctionalRegression(dictionary=...) (auto = Fourier(10) on > 21 points)
    "auto": "auto",
    "fourier5": ("fourier", {"n_freqs": 5}),
    "bspline10": ("bspline", {"n_atoms": 10}),
    "bspline20": ("bspline", {"n_atoms": 20}),
    "db3": ("db3", {}),
}
MAIN = ("mean", "default", "loo", "cv", "mgcv")


# ---------------------------------------------------------------------------------------------- models
def _dictionary(spec: Any) -> Any:
    if isinstance(spec, str):
        return spec
    from fdakpl.dictionaries import make_dictionary

    name, kw = spec
    return make_dictionary(name, **kw)


def fit_fdakpl(bench: Benchmark, train: xr.Dataset, test: xr.Dataset, **kwargs: Any) -> tuple[np.ndarray, dict]:
    """Fit FunctionalRegression on ``train``; predictions of ``test`` on the response grid and fit facts (seconds,
    lambda, whether it is at the end of its grid, and the fit's edge notices: which choice sat at the end of its
    grid, the warning's text up to "is the"). Warnings are recorded, not shown."""
    interp = {"interpolate_inputs": True} if bench.interpolate_inputs else {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        t0 = time.perf_counter()
        res = FunctionalRegression(bench.formula, train, progress=False, **interp, **kwargs).fit()
        fit_s = time.perf_counter() - t0
        pred = res.predict(test).values
    edges = sorted({str(w.message).split(" is the ")[0] for w in caught if "value of its grid" in str(w.message)})
    return pred, {"fit_s": fit_s, "lam": float(res.lam), "lam_on_edge": bool(res.lam_on_edge), "edge_notices": edges}


def fit_mean(bench: Benchmark, train: xr.Dataset, test: xr.Dataset) -> tuple[np.ndarray, dict]:
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a point observed in no training curve
        mu = np.nanmean(train[bench.response].values, axis=0)
    return np.broadcast_to(mu, (test.sizes["sample"], mu.size)), {"fit_s": time.perf_counter() - t0}


def fit_mgcv(bench: Benchmark, train: xr.Dataset, test: xr.Dataset) -> tuple[np.ndarray, dict]:
    """The pffr-type reference on every ``thin``-th point of the grids (predictions NaN elsewhere)."""
    from mgcv_reference import fit_predict

    Y = train[bench.response]
    t = Y[Y.dims[1]].values
    keep = np.arange(0, t.size, bench.thin)
    X, X_new = {}, {}
    for name in bench.inputs:
        grid = train[name][train[name].dims[1]].values
        s_keep = np.arange(0, grid.size, bench.thin)
        vals = interpolate_missing(train[name].values, grid, name)[:, s_keep]
        new = interpolate_missing(test[name].values, grid, name)[:, s_keep]
        X[name] = (vals, grid[s_keep])
        X_new[name] = new
    Z, Z_new = dummies(train, bench.factors), dummies(test, bench.factors)
    t0 = time.perf_counter()
    pred_kept, edf = fit_predict(Y.values[:, keep], t[keep], X, X_new, Z, Z_new)
    fit_s = time.perf_counter() - t0
    pred = np.full((test.sizes["sample"], t.size), np.nan)
    pred[:, keep] = pred_kept
    return pred, {"fit_s": fit_s, "edf": edf}


def sweep_configs(bench: Benchmark, partial: bool) -> dict[str, dict[str, Any]]:
    """Candidate defaults: lam="loo" x width multiple x dictionary (x estimator when responses are partial)."""
    out: dict[str, dict[str, Any]] = {}
    solvers = {"plugin": "auto", "exact": "exact_partial"} if partial else {"": "auto"}
    for dname, dspec in DICTIONARIES.items():
        for w in WIDTHS:
            for sname, solver in solvers.items():
                key = f"loo/{dname}/w{w:g}" + (f"/{sname}" if sname else "")
                out[key] = {"dictionary": dspec, "width": w, "solver": solver}
    return out


def fit_config(bench: Benchmark, train: xr.Dataset, test: xr.Dataset, cfg: dict[str, Any],
               base_kernels: dict) -> tuple[np.ndarray, dict]:
    kernels = {t: Gaussian(cfg["width"] * k.sigma) if isinstance(k, Gaussian) else k for t, k in base_kernels.items()}
    # explicit kernels are not width-tuned; b_grid=None keeps B = I (no tuning of b for multi-scale dictionaries)
    return fit_fdakpl(bench, train, test, lam="loo", dictionary=_dictionary(cfg["dictionary"]), kernels=kernels,
                      solver=cfg["solver"], b_grid=None)


# ---------------------------------------------------------------------------------------------- runner
def run_dataset(bench: Benchmark, split_range: slice, sweep: bool, mgcv: bool, reuse: dict | None,
                show: bool, checkpoint: Any = None) -> dict[str, Any]:
    """Every model on the splits ``split_range`` of ``bench``; ``checkpoint(result)`` after each split."""
    ds = bench.load()
    all_splits = bench.splits(ds)
    first = range(len(all_splits))[split_range]
    splits = all_splits[split_range]
    Y = ds[bench.response].values
    t_keep = np.arange(0, Y.shape[1], bench.thin)
    partial = bool(np.isnan(Y).any())
    configs = sweep_configs(bench, partial) if sweep else {}
    models = [m for m in MAIN if m != "mgcv" or mgcv or reuse]
    errors: dict[str, list[float]] = {m: [] for m in [*models, *configs]}
    facts: dict[str, list[dict]] = {m: [] for m in errors}
    def result() -> dict[str, Any]:
        done = len(errors[models[0]])
        return {"formula": bench.formula, "splits": bench.split_label, "n_splits_run": done,
                "split_indices": list(first)[:done], "error": bench.error, "thin": bench.thin,
                "partially_observed_response": partial, "notes": bench.notes, "errors": errors, "facts": facts,
                "summary": summarise(errors, facts, "mgcv" if "mgcv" in errors else None)}

    for k, (tr, te) in zip(first, progress(splits, desc=bench.name, enabled=show), strict=True):
        train, test = ds.isel(sample=tr), ds.isel(sample=te)
        Y_te = test[bench.response].values[:, t_keep]
        fits = {"mean": lambda tr=train, te=test: fit_mean(bench, tr, te),
                "default": lambda tr=train, te=test: fit_fdakpl(bench, tr, te),
                "loo": lambda tr=train, te=test: fit_fdakpl(bench, tr, te, lam="loo"),
                "cv": lambda tr=train, te=test: fit_fdakpl(bench, tr, te, lam="cv", lam_grid=CV_GRID, cv=5,
                                                           random_state=0, n_jobs=1)}
        for m in models:
            if m == "mgcv" and reuse is not None:
                errors[m].append(reuse["errors"][k])
                facts[m].append(reuse["facts"][k])
                continue
            pred, info = fit_mgcv(bench, train, test) if m == "mgcv" else fits[m]()
            errors[m].append(heldout_error(Y_te, pred[:, t_keep], bench.error))
            facts[m].append(info)
        if configs:

            base = FunctionalRegression(bench.formula, train, interpolate_inputs=bench.interpolate_inputs,
                                        progress=False).default_kernels()
            for key, cfg in configs.items():
                try:
                    pred, info = fit_config(bench, train, test, cfg, base)
                    errors[key].append(heldout_error(Y_te, pred[:, t_keep], bench.error))
                except Exception as err:  # a dictionary that does not fit this grid: recorded, not fatal
                    info = {"error": f"{type(err).__name__}: {err}"}
                    errors[key].append(float("nan"))
                facts[key].append(info)
        if checkpoint is not None:
            checkpoint(result())
    return result()


def machine() -> dict[str, Any]:
    from threadpoolctl import threadpool_info

    return {"python": platform.python_version(), "numpy": np.__version__, "fdakpl": fdakpl.__version__
            if hasattr(fdakpl, "__version__") else "?", "cpu_count": os.cpu_count(),
            "loadavg": list(os.getloadavg()), "blas": [(i.get("internal_api"), i.get("num_threads"))
                                                       for i in threadpool_info()]}


def main(argv: list[str] | None = None) -> dict[str, Any]:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--datasets", default=",".join(BENCHMARKS), help="comma-separated subset of " + ",".join(BENCHMARKS))
    p.add_argument("--splits", default=None,
                   help="N: only the first N splits of each data set; A:B: splits A to B-1 (to share a run)")
    p.add_argument("--sweep", action="store_true", help="also sweep candidate defaults (widths x dictionaries)")
    p.add_argument("--no-mgcv", action="store_true", help="skip the R reference")
    p.add_argument("--reuse-mgcv", default=None, help="take the mgcv errors from this earlier JSON (same splits)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar (also FDAKPL_PROGRESS=0)")
    p.add_argument("--out", default=None, help="JSON path (default results/accuracy.json, or accuracy_quick.json "
                                               "with --splits or a subset of data sets)")
    args = p.parse_args(argv)
    names = [n.strip() for n in args.datasets.split(",") if n.strip()]
    unknown = [n for n in names if n not in BENCHMARKS]
    if unknown:
        p.error(f"unknown data sets {unknown}; choose from {list(BENCHMARKS)}")
    quick = args.splits is not None or set(names) != set(BENCHMARKS)
    if args.splits is None:
        split_range = slice(None)
    elif ":" in args.splits:
        a, b = args.splits.split(":")
        split_range = slice(int(a) if a else None, int(b) if b else None)
    else:
        split_range = slice(int(args.splits))
    out = Path(args.out) if args.out else RESULTS / ("accuracy_quick.json" if quick else "accuracy.json")
    reuse = json.loads(Path(args.reuse_mgcv).read_text())["datasets"] if args.reuse_mgcv else {}
    payload: dict[str, Any] = {"machine": machine(), "command": " ".join(sys.argv), "cv_grid": [1e-10, 1e2, 49],
                               "widths": WIDTHS, "dictionaries": {k: repr(v) for k, v in DICTIONARIES.items()},
                               "datasets": {}}
    if not args.no_mgcv:
        from mgcv_reference import mgcv_version

        payload["machine"]["mgcv"] = mgcv_version()
    t0 = time.perf_counter()
    with threadpool_limits(1):
        for name in names:
            prev = reuse.get(name)
            ref = {"errors": prev["errors"]["mgcv"], "facts": prev["facts"]["mgcv"]} if prev else None
            out.parent.mkdir(exist_ok=True)

            def checkpoint(result: dict[str, Any], name: str = name) -> None:  # a partial run keeps its results
                payload["datasets"][name] = result
                out.write_text(json.dumps(payload, indent=1))

            checkpoint(run_dataset(BENCHMARKS[name], split_range, args.sweep, not args.no_mgcv and ref is None, ref,
                                   not args.no_progress, checkpoint))
    payload["seconds"] = time.perf_counter() - t0
    payload["machine"]["loadavg_end"] = list(os.getloadavg())
    out.write_text(json.dumps(payload, indent=1))
    write_report(payload, out.with_suffix(".md"), out.with_suffix(".png"))
    print(out.with_suffix(".md").read_text())
    return payload


if __name__ == "__main__":
    main()
