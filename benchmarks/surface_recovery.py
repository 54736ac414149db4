"""Recovery of a known smooth coefficient surface, and coverage of its bootstrap bands (issue 17).

Writes ``benchmarks/results/surface_recovery.json``. Run:
``python benchmarks/surface_recovery.py [--part recovery|coverage|all] [--reps R] [--coverage-reps R]``.

Data: :func:`fdakpl.datasets.make_linear_surface` -- ``y_i(t) = mu(t) + int x_i(s) beta(s, t) ds + eps``
with Brownian-like inputs on 40 points, responses on 30 points, noise sd 0.1 x the signal's sd, the
integral taken on a 10x finer grid.

The input curves are centred (``x - mean``), which the linear model with functional intercept ``mu(t)``
implies (fdakpl centres the responses, not the inputs; a linear kernel has no intercept of its own).

* recovery: relative L2 error ``||beta_hat - beta|| / ||beta||`` (trapezoidal in s and t) against
  n = 100, 300, 1000 for fdakpl's linear kernel (lambda by GCV), fdakpl's SmoothedLinear kernel
  (bandwidth and lambda by GCV, :func:`fdakpl.results.surface_inference.select_smoothing`) and mgcv's
  tensor-product linear functional term ``te(S, T, by = L)`` (REML; ``L = w x``, the same quadrature),
  fitted by rpy2 on the same data.
* coverage: share of the grid points of beta covered by the pointwise 95% bands, averaged over
  replicates: fdakpl's bootstrap over curves (``basic`` and ``percentile``, 100 replicates, at the
  GCV-chosen bandwidth and lambda) next to mgcv's Bayesian intervals (estimate +- 1.96 se).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
import warnings
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

from fdakpl import BSpline, FunctionalRegression, Linear, datasets
from fdakpl.data.functional import quadrature_weights
from fdakpl.results.surface_inference import select_smoothing, surface_bands

OUT = Path(__file__).parent / "results" / "surface_recovery.json"
M_IN, M_OUT = 40, 30

_R_FIT = r"""
function(y, tt, S, Tm, L, s, t, k_s, k_t) {
  suppressPackageStartupMessages(library(mgcv))
  fit <- gam(y ~ s(tt, k = 10, bs = "cr") + te(S, Tm, by = L, k = c(k_s, k_t), bs = "cr"), method = "REML")
  g <- expand.grid(s = s, t = t)
  nd <- list(tt = rep(0, nrow(g)), S = matrix(g$s, ncol = 1), Tm = matrix(g$t, ncol = 1),
             L = matrix(1, nrow(g), 1))
  p <- predict(fit, newdata = nd, type = "terms", se.fit = TRUE)
  j <- grep("^te\\(", colnames(p$fit))
  list(beta = matrix(p$fit[, j], length(s), length(t)), se = matrix(p$se.fit[, j], length(s), length(t)))
}
"""


def mgcv_surface(ds, k=(8, 8)) -> tuple[np.ndarray, np.ndarray]:
    """mgcv's te(S, T, by = L) estimate of beta and its standard errors on the (s, t) grid."""
    import rpy2.robjects as ro
    from rpy2.robjects import numpy2ri
    from rpy2.robjects.conversion import localconverter

    x, y = ds["x"].values, ds["y"].values
    s, t = ds["s"].values, ds["t"].values
    n, m = y.shape
    w = quadrature_weights(s)
    rows = n * m
    S = np.tile(s, (rows, 1))
    Tm = np.repeat(np.tile(t, n)[:, None], s.size, axis=1)
    L = np.repeat(x * w, m, axis=0)
    with localconverter(ro.default_converter + numpy2ri.converter):
        out = ro.r(_R_FIT)(y.reshape(-1), np.tile(t, n), S, Tm, L, s, t, k[0], k[1])
        return np.asarray(out["beta"]), np.asarray(out["se"])


def simulate(n: int, seed: int):
    """Simulated data with the input curves centred (the linear model's functional intercept is then mu)."""
    ds, beta = datasets.make_linear_surface(n, m_in=M_IN, m_out=M_OUT, random_state=seed)
    return ds.assign(x=ds["x"] - ds["x"].mean("sample")), beta


def rel_error(est: np.ndarray, truth: np.ndarray, s: np.ndarray, t: np.ndarray) -> float:
    W = np.outer(quadrature_weights(s), quadrature_weights(t))
    return float(np.sqrt(np.sum(W * (est - truth) ** 2) / np.sum(W * truth**2)))


def recovery(reps: int) -> list[dict]:
    rows = []
    for n in (100, 300, 1000):
        for r in range(reps):
            ds, beta = simulate(n, 1000 * n + r)
            s, t = ds["s"].values, ds["t"].values
            row = {"n": n, "rep": r}
            t0 = time.perf_counter()
            lin = FunctionalRegression("y ~ x", ds, kernels={"x": Linear()}, dictionary=BSpline(10),
                                       lam=np.geomspace(1e-10, 1, 51), progress=False).fit()
            row["fdakpl_linear"] = rel_error(lin.coefficient_surface("x").values, beta.values, s, t)
            row["fdakpl_linear_seconds"] = time.perf_counter() - t0
            t0 = time.perf_counter()
            sm, path = select_smoothing(FunctionalRegression("y ~ x", ds, dictionary=BSpline(10),
                                                             lam_grid=np.geomspace(1e-10, 1, 51),
                                                             progress=False), "x")
            row["fdakpl_smoothed"] = rel_error(sm.coefficient_surface("x").values, beta.values, s, t)
            row["fdakpl_smoothed_seconds"] = time.perf_counter() - t0
            row["bandwidth"] = float(path.loc[path["criterion"].idxmin(), "bandwidth"])
            t0 = time.perf_counter()
            b_mgcv, _ = mgcv_surface(ds)
            row["mgcv_te"] = rel_error(b_mgcv, beta.values, s, t)
            row["mgcv_seconds"] = time.perf_counter() - t0
            rows.append(row)
            print(json.dumps(row), flush=True)
    return rows


def coverage(reps: dict[int, int], n_boot: int = 100, alpha: float = 0.05) -> list[dict]:
    rows = []
    for n, nrep in reps.items():
        for r in range(nrep):
            ds, beta = simulate(n, 7000 + 1000 * n + r)
            sm, _ = select_smoothing(FunctionalRegression("y ~ x", ds, dictionary=BSpline(10),
                                                          lam_grid=np.geomspace(1e-10, 1, 51), progress=False), "x")
            row = {"n": n, "rep": r}
            truth = beta.values
            for method in ("basic", "percentile"):
                b = surface_bands(sm, "x", n_boot=n_boot, alpha=alpha, method=method, random_state=r, progress=False)
                inside = (b.lower.values <= truth) & (truth <= b.upper.values)
                row[f"fdakpl_{method}"] = float(inside.mean())
                row[f"fdakpl_{method}_mean_width"] = float((b.upper - b.lower).mean())
            est, se = mgcv_surface(ds)
            z = 1.959964
            row["mgcv_bayes"] = float(((est - z * se <= truth) & (truth <= est + z * se)).mean())
            row["mgcv_bayes_mean_width"] = float(2 * z * se.mean())
            rows.append(row)
            print(json.dumps(row), flush=True)
    return rows


def summarise(rows: list[dict], keys: list[str]) -> dict:
    out = {}
    for n in sorted({r["n"] for r in rows}):
        sel = [r for r in rows if r["n"] == n]
        out[str(n)] = {k: {"mean": float(np.mean([r[k] for r in sel])), "sd": float(np.std([r[k] for r in sel])),
                           "reps": len(sel)} for k in keys}
    return out


@threadpool_limits.wrap(limits=1)  # one BLAS thread: timings comparable on a shared machine
def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--part", default="all", choices=["recovery", "coverage", "all"])
    ap.add_argument("--reps", type=int, default=3, help="replicates per n for the recovery part")
    ap.add_argument("--coverage-reps", type=int, default=16, help="replicates at n=100 (half at n=300)")
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    out = json.loads(OUT.read_text()) if OUT.exists() else {}
    out["machine"] = {"python": platform.python_version(), "cpu_count": os.cpu_count(), "numpy": np.__version__,
                      "loadavg_at_start": os.getloadavg(), "blas_threads": 1}  # threadpool_limits(1) below
    out["design"] = {"m_in": M_IN, "m_out": M_OUT, "noise_relative_sd": 0.1, "fine_factor": 10,
                     "beta": "cos(2 pi s) sin(pi t) + (s - 1/2)(t + 1)",
                     "fdakpl": "input curves centred; dictionary BSpline(10) (cubic); "
                               "lambda by GCV on geomspace(1e-10, 1, 51)",
                     "mgcv": "gam(y ~ s(t, k=10, bs='cr') + te(S, T, by=L, k=c(8, 8), bs='cr'), method='REML')"}
    if args.part in {"recovery", "all"}:
        rows = recovery(args.reps)
        out["recovery"] = {"rows": rows, "summary": summarise(rows, ["fdakpl_linear", "fdakpl_smoothed", "mgcv_te",
                                                                    "fdakpl_linear_seconds",
                                                                    "fdakpl_smoothed_seconds", "mgcv_seconds"])}
    if args.part in {"coverage", "all"}:
        rows = coverage({100: args.coverage_reps, 300: max(2, args.coverage_reps // 2)})
        keys = ["fdakpl_basic", "fdakpl_percentile", "mgcv_bayes", "fdakpl_basic_mean_width",
                "fdakpl_percentile_mean_width", "mgcv_bayes_mean_width"]
        out["coverage"] = {"nominal": 0.95, "n_boot": 100, "rows": rows, "summary": summarise(rows, keys)}
    out["machine"]["loadavg_at_end"] = os.getloadavg()
    OUT.write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
