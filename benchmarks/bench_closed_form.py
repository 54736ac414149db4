"""Speed and memory of the closed-form KPL solvers (issue: foundation).

Writes ``benchmarks/results/closed_form.json``. Run: ``python benchmarks/bench_closed_form.py``.
Measures
- DTI size (70 training curves, 55 locations, db3 wavelets with 4 levels): plug-in ridge fit +
  predict, minimum and median over repetitions (array level and labelled xarray level);
- a 25-value lambda path on the same problem, against one fit;
- 2,000 curves x 100 locations x 63 atoms (``Fourier(31)``): a 50-value lambda path;
- peak memory of a fit at 5,000 curves x 100 locations x 63 atoms, in a fresh subprocess: numpy's
  allocations (tracemalloc) and the process's resident high-water mark ``VmHWM`` before and after the
  fit (``ru_maxrss`` is not reset at exec, so a large parent would show through; bench_scale likewise).

BLAS runs on one thread (threadpoolctl), in this process and in the subprocess; the load average is
recorded, since the machine is shared.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from _results import write_results
from threadpoolctl import threadpool_limits

from fdakpl import Fourier, Gaussian, KPLRegressor, Wavelet, datasets

OUT = Path(__file__).parent / "results" / "closed_form.json"


def _times(fn, repeat: int) -> dict[str, float]:
    """Minimum and median wall time (s) of ``fn`` over ``repeat`` runs after one warm-up run."""
    fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return {"min": float(np.min(times)), "median": float(np.median(times))}


def dti_problem():
    ds = datasets.dti_first_visits()
    rng = np.random.default_rng(0)
    perm = rng.permutation(100)
    tr, te = ds.isel(sample=perm[:70]), ds.isel(sample=perm[70:])
    from fdakpl.data.functional import interpolate_missing

    grid_x = ds.cca_loc.values
    Xtr = interpolate_missing(tr.cca.values, grid_x)
    Xte = interpolate_missing(te.cca.values, grid_x)
    return tr, te, Xtr, Xte, tr.rcst.values, ds.rcst_loc.values


def synthetic(n: int, m: int, rng):
    X = rng.normal(size=(n, 5))
    grid = np.linspace(0, 1, m)
    Y = np.sin(np.outer(X[:, 0], grid) * 3) + X[:, [1]] * np.cos(2 * np.pi * grid) + 0.1 * rng.normal(size=(n, m))
    Y[rng.uniform(size=Y.shape) < 0.3] = np.nan
    Y[:, 0] = np.where(np.isnan(Y[:, 0]), 0.0, Y[:, 0])
    return X, Y, grid


def path_time(model: KPLRegressor, X, Y, grid, Xnew, lams, predict: bool, repeat: int = 20) -> dict[str, float]:
    """One fit (both eigendecompositions) then the solution at every lambda (and predictions if asked)."""
    def run():
        model.set_params(lam=float(lams[0])).fit(X, Y, locations=grid)
        if predict:
            phi = model.dictionary_.evaluate(grid)
            Kn = model._kernel()(Xnew, model.X_fit_)
        for lam in lams[1:]:
            W = model.path_.coef(float(lam), times_B=True)  # lambda in the atoms' unit, as the fit
            if predict:
                _ = (Kn @ W) @ phi.T
    return _times(run, repeat)


def peak_memory_subprocess(n: int, m: int, d_freqs: int) -> dict:
    code = f"""
import tracemalloc, numpy as np, json
from threadpoolctl import threadpool_limits
from fdakpl import KPLRegressor, Fourier, Gaussian
import sys; sys.path.insert(0, {str(Path(__file__).parent)!r})
from bench_closed_form import synthetic
from bench_scale import _peak_rss_mib
X, Y, grid = synthetic({n}, {m}, np.random.default_rng(1))
data_mb = (X.nbytes + Y.nbytes) / 2**20
before = _peak_rss_mib()
tracemalloc.start()
with threadpool_limits(1):
    KPLRegressor(dictionary=Fourier({d_freqs}), kernel=Gaussian(2.0), lam=1e-3).fit(X, Y, locations=grid)
cur, peak = tracemalloc.get_traced_memory()
tracemalloc.stop()
after = _peak_rss_mib()
print(json.dumps({{"peak_traced_MiB": peak / 2**20, "data_MiB": data_mb, "baseline_rss_MiB": before,
                   "peak_rss_MiB": after, "fit_rss_increase_MiB": after - before,
                   "peak_traced_over_8n2": peak / (8 * {n} ** 2)}}))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


@threadpool_limits.wrap(limits=1)  # one BLAS thread: timings comparable on a shared machine
def main() -> None:
    warnings.simplefilter("ignore")
    res: dict = {"machine": {"python": platform.python_version(), "cpu_count": os.cpu_count(),
                             "numpy": np.__version__, "loadavg_at_start": os.getloadavg(), "blas_threads": 1},
                 "timing": "after one warm-up run; median and minimum over the repetitions"}
    tr, te, Xtr, Xte, Ytr, grid = dti_problem()
    model = KPLRegressor(dictionary=Wavelet("db3", level=4), kernel=Gaussian(0.9), output_matrix=1.5, lam=1e-3)

    def fit_predict_arrays():
        model.fit(Xtr, Ytr, locations=grid)
        model.predict(Xte)

    t_arr_all = _times(fit_predict_arrays, 200)
    t_fit_all = _times(lambda: model.fit(Xtr, Ytr, locations=grid), 200)
    t_arr, t_fit = t_arr_all["median"], t_fit_all["median"]
    lab = KPLRegressor(dictionary=Wavelet("db3", level=4), kernel=Gaussian(0.9), output_matrix=1.5, lam=1e-3,
                       interpolate_inputs=True)

    def fit_predict_labelled():
        lab.fit(tr.cca, tr.rcst)
        lab.predict(te.cca)

    t_lab_all = _times(fit_predict_labelled, 100)
    t_lab = t_lab_all["median"]
    lams25 = np.geomspace(1e-6, 1e-2, 25)
    t_path25_all = path_time(model, Xtr, Ytr, grid, Xte, lams25, predict=False, repeat=100)
    t_path25p_all = path_time(model, Xtr, Ytr, grid, Xte, lams25, predict=True, repeat=100)
    t_path25, t_path25p = t_path25_all["median"], t_path25p_all["median"]
    res["dti"] = {"n_train": 70, "n_locations": 55, "n_atoms": model.dictionary_.n_atoms_,
                  "fit_predict_median_ms_arrays": 1e3 * t_arr,
                  "fit_predict_median_ms_xarray": 1e3 * t_lab,
                  "fit_median_ms_arrays": 1e3 * t_fit,
                  "fit_predict_min_ms_arrays": 1e3 * t_arr_all["min"],
                  "fit_predict_min_ms_xarray": 1e3 * t_lab_all["min"],
                  "fit_min_ms_arrays": 1e3 * t_fit_all["min"],
                  "lambda_path_25_coefficients_min_ms": 1e3 * t_path25_all["min"],
                  "lambda_path_25_coefficients_ms": 1e3 * t_path25,
                  "lambda_path_25_over_one_fit": t_path25 / t_fit,
                  "lambda_path_25_with_test_predictions_ms": 1e3 * t_path25p,
                  "lambda_path_25_with_predictions_over_one_fit_predict": t_path25p / t_arr,
                  "targets": {"fit_predict_ms": 5, "path_over_fit": 2}}

    rng = np.random.default_rng(0)
    X, Y, g = synthetic(2000, 100, rng)
    # 63 atoms; solver="eig" keeps the decomposition for the lambda path (auto takes the single-lambda route)
    big = KPLRegressor(dictionary=Fourier(31), kernel=Gaussian(2.0), lam=1e-3, solver="eig")
    lams50 = np.geomspace(1e-6, 1e-1, 50)
    t_big = path_time(big, X, Y, g, X[:200], lams50, predict=True, repeat=5)
    res["n2000"] = {"n": 2000, "n_locations": 100, "n_atoms": big.dictionary_.n_atoms_,
                    "lambda_path_50_with_predictions_s": t_big["median"],
                    "lambda_path_50_with_predictions_min_s": t_big["min"], "repeat": 5, "target_s": 3}
    res["memory_n5000"] = {"n": 5000, "n_locations": 100, "n_atoms": 63, **peak_memory_subprocess(5000, 100, 31)}
    write_results(OUT, res)


if __name__ == "__main__":
    main()
