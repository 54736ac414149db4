"""Choosing the default tuning grids (issue 12, items 1-2) by held-out error on DTI.

Protocol of issue 12: the 100 first visits of the MS cases, 20 splits
``numpy.random.default_rng(s).permutation(100)`` (s = 0..19), train = the first 70;
the error of a test curve is the sum of squared errors over its observed points,
averaged over the 30 test curves.

For every split, the default front end (``FunctionalRegression("rcst ~ cca", interpolate_inputs=True)``:
"auto" dictionary, plug-in estimator) is fitted once per (width multiple, b) of a wide
grid; for each, the exact leave-one-curve-out path and the pointwise GCV path over a wide
lambda grid and the test error at every lambda are computed in closed form. Selection
rules (criterion x sub-grid) are then evaluated offline on the same numbers: the
test error of the (width, b, lambda) each rule picks, and the oracle (best in hindsight).

Writes ``benchmarks/results/tuning_grids.json``. Run (a few minutes, one core; the script pins BLAS to
one thread): ``python benchmarks/tuning_grids.py``. Paired differences against the mgcv
reference need its per-split errors from ``benchmarks/accuracy.py`` (``results/accuracy.json``,
or the file named by ``FDAKPL_ACCURACY_JSON``). ``FDAKPL_TUNING_CACHE=<file>.npz`` stores (or
reuses) the per-split criterion and error arrays.
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
from fdakpl.data.preprocessing import prepare_inputs
from fdakpl.formula.terms import median_heuristic
from fdakpl.kernels import Gaussian, Product, ScaleDecay
from fdakpl.ridge.path import RidgePath
from fdakpl.ridge.problem import prepare_problem

OUT = Path(__file__).parent / "results" / "tuning_grids.json"
WIDTHS = 2.0 ** (np.arange(-2, 11) / 2)  # 0.5 ... 32, steps of sqrt(2)
BS = np.array([1.0, 1.1, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0])
LAMS = np.geomspace(1e-10, 10.0, 56)  # the default grid 1e-8..1 (41 values) extended by 2 decades each way
MGCV_REFERENCE = 0.2124  # issue 12: mgcv linear function-on-function model, same splits


def split_errors(ds, s: int) -> dict:
    perm = np.random.default_rng(s).permutation(100)
    train, test = ds.isel(sample=perm[:70]), ds.isel(sample=perm[70:])
    base = FunctionalRegression("rcst ~ cca", data=train, interpolate_inputs=True, progress=False)
    problem = prepare_problem(base.parsed.inputs(train), train["rcst"], interpolate_inputs=True)
    sigma0 = median_heuristic(problem.inputs["cca"], problem.input_weights["cca"])
    Yte = test["rcst"].values
    shape = (WIDTHS.size, BS.size, LAMS.size)
    loo, gcv, err = np.full(shape, np.nan), np.full(shape, np.nan), np.full(shape, np.nan)
    Xv, Xw, _, _ = prepare_inputs(base.parsed.inputs(test), interpolate=True, spec=problem.input_spec)
    grid = train["rcst_loc"].values
    Phi = problem.dictionary.evaluate(grid)
    mean = problem.mean(grid)
    for i, m in enumerate(WIDTHS):
        kern = Product({"cca": Gaussian(m * sigma0)})
        K = problem.kernel_matrix(kern)
        Kn = kern(Xv, problem.inputs, Xw)
        for j, b in enumerate(BS):
            path = RidgePath.fit(problem, kern, *problem.output_matrix(ScaleDecay(b)), K=K)
            crit = path.criteria(LAMS)
            loo[i, j], gcv[i, j] = crit.loo, crit.gcv
            for k, lam in enumerate(LAMS):
                pred = Kn @ path.coef(float(lam), times_B=True) @ Phi.T + mean
                err[i, j, k] = float(np.mean(np.nansum((pred - Yte) ** 2, axis=1)))
    return {"loo": loo, "gcv": gcv, "err": err}


def shipped_defaults(ds) -> dict[str, list[float]]:
    """The front end as users call it (no argument but the formula and data), per split, next to the old default."""
    out: dict[str, list[float]] = {"default": [], "previous default (lam='gcv', median width, B = I)": [],
                                   "lam='loo' only (width_grid=None, b_grid=None)": []}
    kws = [{}, {"lam": "gcv", "width_grid": None, "b_grid": None}, {"width_grid": None, "b_grid": None}]
    for s in range(20):
        perm = np.random.default_rng(s).permutation(100)
        train, test = ds.isel(sample=perm[:70]), ds.isel(sample=perm[70:])
        for name, kw in zip(out, kws, strict=True):
            res = FunctionalRegression("rcst ~ cca", data=train, interpolate_inputs=True, progress=False, **kw).fit()
            pred = res.predict(test).values
            out[name].append(float(np.mean(np.nansum((pred - test["rcst"].values) ** 2, axis=1))))
    return out


def paired(e: np.ndarray, ref: np.ndarray | None) -> dict:
    if ref is None:
        return {}
    d = e - ref
    return {"diff_vs_mgcv": float(d.mean()), "se": float(d.std(ddof=1) / np.sqrt(d.size)),
            "splits_won": int((d < 0).sum()), "of": int(d.size)}


def pick(crit: np.ndarray, err: np.ndarray, wi: np.ndarray, bi: np.ndarray, li: np.ndarray) -> tuple[float, tuple]:
    sub = crit[np.ix_(wi, bi, li)]
    i, j, k = np.unravel_index(int(np.nanargmin(sub)), sub.shape)
    return float(err[wi[i], bi[j], li[k]]), (float(WIDTHS[wi[i]]), float(BS[bi[j]]), float(LAMS[li[k]]))


@threadpool_limits.wrap(limits=1)  # one BLAS thread: timings comparable on a shared machine
def main() -> None:
    warnings.simplefilter("ignore")
    ds = datasets.dti_first_visits()
    t0 = time.perf_counter()
    cache = Path(os.environ.get("FDAKPL_TUNING_CACHE", "/nonexistent"))
    if cache.exists():
        raw = np.load(cache)
        per_split = [{k: raw[k][s] for k in ("loo", "gcv", "err")} for s in range(20)]
    else:
        per_split = [split_errors(ds, s) for s in range(20)]
        if cache.parent.exists():
            np.savez(cache, **{k: np.stack([p[k] for p in per_split]) for k in ("loo", "gcv", "err")})
    idx = lambda values, grid: np.array([int(np.argmin(np.abs(grid - v))) for v in values])  # noqa: E731
    default_lams = idx(np.geomspace(1e-8, 1.0, 41), LAMS)
    w1, b1 = idx([1.0], WIDTHS), idx([1.0], BS)
    rules = {
        "GCV, median width, B = I (old default)": ("gcv", w1, b1, default_lams),
        "LOO, median width, B = I": ("loo", w1, b1, default_lams),
        "LOO, widths x2 {0.5..16}, B = I": ("loo", idx([0.5, 1, 2, 4, 8, 16], WIDTHS), b1, default_lams),
        "LOO, widths x2 {1..16}, B = I": ("loo", idx([1, 2, 4, 8, 16], WIDTHS), b1, default_lams),
        "LOO, widths x sqrt2 {0.5..32}, B = I": ("loo", np.arange(WIDTHS.size), b1, default_lams),
        "LOO, median width, b {1,1.25,1.5,2}": ("loo", w1, idx([1, 1.25, 1.5, 2], BS), default_lams),
        "LOO, widths x2 {0.5..16}, b {1,1.25,1.5,2}": ("loo", idx([0.5, 1, 2, 4, 8, 16], WIDTHS),
                                                     idx([1, 1.25, 1.5, 2], BS), default_lams),
        "LOO, widths x2 {0.5..16}, b {1,1.5,2,3}": ("loo", idx([0.5, 1, 2, 4, 8, 16], WIDTHS),
                                                  idx([1, 1.5, 2, 3], BS), default_lams),
        "LOO, widths x2 {1..16}, b {1,1.5,2}": ("loo", idx([1, 2, 4, 8, 16], WIDTHS), idx([1, 1.5, 2], BS),
                                              default_lams),
        "LOO, widths x2 {0.5..16}, b {1,1.25,1.5,1.75,2,2.5,3}": ("loo", idx([0.5, 1, 2, 4, 8, 16], WIDTHS),
                                                                idx([1, 1.25, 1.5, 1.75, 2, 2.5, 3], BS),
                                                                default_lams),
        "LOO, width 4 x median (fixed), B = I": ("loo", idx([4], WIDTHS), b1, default_lams),
        "LOO, widths x2 {2..16}, B = I": ("loo", idx([2, 4, 8, 16], WIDTHS), b1, default_lams),
        "LOO, widths x2 {2..16}, b {1,1.5,2}": ("loo", idx([2, 4, 8, 16], WIDTHS), idx([1, 1.5, 2], BS),
                                               default_lams),
        "LOO, widths x2 {2..16}, b {1,1.25,1.5,2}": ("loo", idx([2, 4, 8, 16], WIDTHS), idx([1, 1.25, 1.5, 2], BS),
                                                    default_lams),
        "LOO, widths x2 {2..32}, b {1,1.5,2}": ("loo", idx([2, 4, 8, 16, 32], WIDTHS), idx([1, 1.5, 2], BS),
                                               default_lams),
        "LOO, widths x2 {4..16}, b {1,1.5,2}": ("loo", idx([4, 8, 16], WIDTHS), idx([1, 1.5, 2], BS),
                                               default_lams),
        "LOO, widths x2 {2..8}, b {1,1.5,2}": ("loo", idx([2, 4, 8], WIDTHS), idx([1, 1.5, 2], BS), default_lams),
        "LOO, widths x sqrt2 {2..16}, b {1,1.5,2}": ("loo", idx([2, 2.83, 4, 5.66, 8, 11.3, 16], WIDTHS),
                                                    idx([1, 1.5, 2], BS), default_lams),
        "LOO, width 4 (fixed), b {1,1.5,2}": ("loo", idx([4], WIDTHS), idx([1, 1.5, 2], BS), default_lams),
        "LOO, widths x2 {2..16}, b {1,1.5,2}, lambda 1e-6..1 (25)": (
            "loo", idx([2, 4, 8, 16], WIDTHS), idx([1, 1.5, 2], BS), idx(np.geomspace(1e-6, 1.0, 25), LAMS)),
        "LOO, full grid": ("loo", np.arange(WIDTHS.size), np.arange(BS.size), np.arange(LAMS.size)),
        "GCV, widths x2 {0.5..16}, b {1,1.25,1.5,2}": ("gcv", idx([0.5, 1, 2, 4, 8, 16], WIDTHS),
                                                     idx([1, 1.25, 1.5, 2], BS), default_lams),
    }
    # per-split errors of the mgcv linear reference, written by benchmarks/accuracy.py (same splits)
    acc = Path(os.environ.get("FDAKPL_ACCURACY_JSON", Path(__file__).parent / "results" / "accuracy.json"))
    mgcv = None
    if acc.exists():
        mgcv = np.asarray(json.loads(acc.read_text())["datasets"]["dti"]["errors"]["mgcv"], dtype=float)
    out_rules = {}
    for name, (crit, wi, bi, li) in rules.items():
        errs, picks = zip(*(pick(p[crit], p["err"], wi, bi, li) for p in per_split), strict=True)
        e = np.array(errs)
        out_rules[name] = {"mean": float(e.mean()), "sd": float(e.std(ddof=1)), "errors": e.tolist(),
                           "picks (width multiple, b, lambda)": list(picks), **paired(e, mgcv)}
        print(f"{name:58s} {e.mean():.4f} +- {e.std(ddof=1):.4f}")
    shipped = {}
    for name, errs in shipped_defaults(ds).items():
        e = np.array(errs)
        shipped[name] = {"mean": float(e.mean()), "sd": float(e.std(ddof=1)), "errors": e.tolist(), **paired(e, mgcv)}
        print(f"front end, {name:50s} {e.mean():.4f} +- {e.std(ddof=1):.4f} {paired(e, mgcv)}")
    oracle = np.array([np.nanmin(p["err"]) for p in per_split])
    print(f"{'oracle (best of the full grid in hindsight, per split)':58s} {oracle.mean():.4f}")
    res = {
        "protocol": __doc__.split("\n\n")[1],
        "machine": {"python": platform.python_version(), "numpy": np.__version__, "cpu_count": os.cpu_count()},
        "grids": {"width_multiples": WIDTHS.tolist(), "b": BS.tolist(), "lambdas": LAMS.tolist()},
        "mgcv_reference_from_issue_12": MGCV_REFERENCE,
        "rules": out_rules,
        "front_end_as_shipped": shipped,
        "mgcv_per_split_from": str(acc.name) if mgcv is not None else None,
        "oracle_mean": float(oracle.mean()),
        "mean_test_error_surface_width_by_b_at_best_lambda": np.mean(
            [np.nanmin(p["err"], axis=2) for p in per_split], axis=0).tolist(),
        "seconds": time.perf_counter() - t0,
    }
    OUT.parent.mkdir(exist_ok=True)
    OUT.write_text(json.dumps(res, indent=1))
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
