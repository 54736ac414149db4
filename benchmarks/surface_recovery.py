"""Recovery of a known smooth coefficient surface, and coverage of its bands (issues 17 and 25).

Writes ``benchmarks/results/surface_recovery.json``. Run:
``python benchmarks/surface_recovery.py [--part recovery|coverage|all] [--reps R] [--coverage-reps R]
[--mgcv-coverage-reps R]`` (issue 25: ``--reps 3 --coverage-reps 30 --mgcv-coverage-reps 6``, the two parts
as two processes, about 25 minutes each on a shared 2-core machine at load 15-20).

Data: :func:`fdakpl.datasets.make_linear_surface` -- ``y_i(t) = mu(t) + int x_i(s) beta(s, t) ds + eps``
with Brownian-like inputs on 40 points, responses on 30 points, noise sd 0.1 x the signal's sd, the
integral taken on a 10x finer grid.

The input curves are centred (``x - mean``), which the linear model with functional intercept ``mu(t)``
implies (fdakpl centres the responses, not the inputs; a linear kernel has no intercept of its own).

* recovery: relative L2 error ``||beta_hat - beta|| / ||beta||`` (trapezoidal in s and t) against
  n = 100, 300, 1000 for fdakpl's linear kernel (lambda by leave-one-curve-out on the grid), fdakpl's
  SmoothedLinear kernel (bandwidth and lambda by GCV, :func:`fdakpl.results.surface_inference.select_smoothing`),
  fdakpl's penalised route (:func:`fdakpl.results.surface_inference.select_surface`: the
  PenalizedLinear kernel, ``int beta''(s, t)^2 ds`` penalised, and the size of the cubic B-spline
  dictionary in t with lambda by leave-one-curve-out) and mgcv's tensor-product linear functional term
  ``te(S, T, by = L)`` (REML; ``L = w x``, the same quadrature), fitted by rpy2 on the same data.
* coverage (issue 25): share of the grid points of beta covered by the pointwise 95% bands, averaged
  over replicates, with its Monte Carlo standard error (sd over replicates / sqrt(replicates)):
  fdakpl's Bayesian bands (:func:`fdakpl.results.surface_inference.surface_bands`, method "bayes") of
  the penalised route, at the default undersmoothing (lambda / 2) and without it (``undersmooth=1``),
  at n = 100, 300, 1000, next to mgcv's Bayesian intervals (estimate +- 1.96 se) on the first
  replicates at n = 100 and 300 (mgcv takes 20-80 s a fit). The bootstrap bands of the linear and
  SmoothedLinear kernels were measured in issue 17 (0.935 at n = 100, 0.77 at n = 300; kept in
  ``coverage_issue17`` of the JSON).
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
from fdakpl.results.surface_inference import select_smoothing, select_surface, surface_bands

OUT = Path(os.environ.get("SURFACE_RECOVERY_OUT", Path(__file__).parent / "results" / "surface_recovery.json"))
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
            pen, ppath = select_surface(FunctionalRegression("y ~ x", ds, lam_grid=np.geomspace(1e-10, 1, 51),
                                                             progress=False), "x")
            row["fdakpl_penalized"] = rel_error(pen.coefficient_surface("x").values, beta.values, s, t)
            row["fdakpl_penalized_seconds"] = time.perf_counter() - t0
            row["n_atoms"] = int(ppath.loc[ppath["criterion"].idxmin(), "n_atoms"])
            t0 = time.perf_counter()
            b_mgcv, _ = mgcv_surface(ds)
            row["mgcv_te"] = rel_error(b_mgcv, beta.values, s, t)
            row["mgcv_seconds"] = time.perf_counter() - t0
            rows.append(row)
            print(json.dumps(row), flush=True)
    return rows


def coverage(reps: dict[int, int], mgcv_reps: dict[int, int], alpha: float = 0.05) -> list[dict]:
    rows = []
    for n, nrep in reps.items():
        for r in range(nrep):
            ds, beta = simulate(n, 7000 + 1000 * n + r)
            s, t = ds["s"].values, ds["t"].values
            t0 = time.perf_counter()
            res, path = select_surface(FunctionalRegression("y ~ x", ds, lam_grid=np.geomspace(1e-10, 1, 51),
                                                            progress=False), "x")
            row = {"n": n, "rep": r, "n_atoms": int(path.loc[path["criterion"].idxmin(), "n_atoms"]),
                   "lambda": res.lam,
                   "fdakpl_penalized_error": rel_error(res.coefficient_surface("x").values, beta.values, s, t)}
            truth = beta.values
            for name, us in (("fdakpl_bayes", 0.5), ("fdakpl_bayes_no_undersmoothing", 1.0)):
                b = surface_bands(res, "x", alpha=alpha, method="bayes", undersmooth=us)
                inside = (b.lower.values <= truth) & (truth <= b.upper.values)
                row[name] = float(inside.mean())
                row[f"{name}_mean_width"] = float((b.upper - b.lower).mean())
            row["fdakpl_seconds"] = time.perf_counter() - t0
            if r < mgcv_reps.get(n, 0):
                est, se = mgcv_surface(ds)
                z = 1.959964
                row["mgcv_bayes"] = float(((est - z * se <= truth) & (truth <= est + z * se)).mean())
                row["mgcv_bayes_mean_width"] = float(2 * z * se.mean())
                row["mgcv_error"] = rel_error(est, truth, s, t)
            rows.append(row)
            print(json.dumps(row), flush=True)
    return rows


def summarise(rows: list[dict], keys: list[str]) -> dict:
    out = {}
    for n in sorted({r["n"] for r in rows}):
        sel = [r for r in rows if r["n"] == n]
        out[str(n)] = {}
        for k in keys:
            v = np.array([r[k] for r in sel if k in r], dtype=float)
            if v.size:
                out[str(n)][k] = {"mean": float(v.mean()), "sd": float(v.std(ddof=1)) if v.size > 1 else None,
                                  "mc_se": float(v.std(ddof=1) / np.sqrt(v.size)) if v.size > 1 else None,
                                  "reps": int(v.size)}
    return out


@threadpool_limits.wrap(limits=1)  # one BLAS thread: timings comparable on a shared machine
def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--part", default="all", choices=["recovery", "coverage", "all"])
    ap.add_argument("--reps", type=int, default=3, help="replicates per n for the recovery part")
    ap.add_argument("--coverage-reps", type=int, default=30, help="replicates at n=100 and 300 (half at n=1000)")
    ap.add_argument("--mgcv-coverage-reps", type=int, default=6, help="of which mgcv also fits (n=100, 300)")
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    machine = {"python": platform.python_version(), "cpu_count": os.cpu_count(), "numpy": np.__version__,
               "loadavg_at_start": os.getloadavg(), "blas_threads": 1}  # threadpool_limits(1) below
    design = {"m_in": M_IN, "m_out": M_OUT, "noise_relative_sd": 0.1, "fine_factor": 10,
              "beta": "cos(2 pi s) sin(pi t) + (s - 1/2)(t + 1)",
              "fdakpl": "input curves centred; linear and smoothed: dictionary BSpline(10) (cubic), lambda on "
                        "geomspace(1e-10, 1, 51); penalized: select_surface (PenalizedLinear(), BSpline(k) for k in "
                        "4, 5, 6, 8, 10, 12, 16, lambda on geomspace(1e-10, 1, 51), by leave-one-curve-out)",
              "mgcv": "gam(y ~ s(t, k=10, bs='cr') + te(S, T, by=L, k=c(8, 8), bs='cr'), method='REML')"}
    parts = {}
    if args.part in {"recovery", "all"}:
        rows = recovery(args.reps)
        parts["recovery"] = {"rows": rows, "summary": summarise(rows, [
            "fdakpl_linear", "fdakpl_smoothed", "fdakpl_penalized", "mgcv_te", "fdakpl_linear_seconds",
            "fdakpl_smoothed_seconds", "fdakpl_penalized_seconds", "mgcv_seconds"])}
    if args.part in {"coverage", "all"}:
        nrep = args.coverage_reps
        rows = coverage({100: nrep, 300: nrep, 1000: max(2, nrep // 2)},
                        {100: args.mgcv_coverage_reps, 300: args.mgcv_coverage_reps})
        keys = ["fdakpl_bayes", "fdakpl_bayes_no_undersmoothing", "mgcv_bayes", "fdakpl_bayes_mean_width",
                "fdakpl_bayes_no_undersmoothing_mean_width", "mgcv_bayes_mean_width", "fdakpl_penalized_error",
                "mgcv_error", "fdakpl_seconds"]
        parts["coverage"] = {"nominal": 0.95, "method": "Bayesian bands of select_surface's fit", "rows": rows,
                             "summary": summarise(rows, keys)}
    machine["loadavg_at_end"] = os.getloadavg()
    # read-modify-write at the end: the two parts may run as two processes
    out = json.loads(OUT.read_text()) if OUT.exists() else {}
    if "coverage" in parts and "coverage_issue17" not in out and "coverage" in out \
            and "fdakpl_basic" in json.dumps(out["coverage"].get("summary", {})):
        out["coverage_issue17"] = out["coverage"]
    out["design"] = design
    for k, v in parts.items():
        out[k] = v
        out[f"machine_{k}"] = machine
    OUT.write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
