"""Speed of iterative KPL (issue 3: robust and iterative KPL).

Writes ``benchmarks/results/iterative.json``. Run: ``nice python benchmarks/bench_iterative.py``.
Measures
- DTI size (70 training curves of the first visits, rcst on 55 locations, db3 wavelets with 4 levels,
  Gaussian kernel sigma=0.9 on cca with ``interpolate_inputs=True``, B = diag(1.5^-scale), lambda = 1e-3):
  logcosh-KPL fit (labelled xarray inputs, as a user calls it) for several gamma, median over repetitions,
  with iterations and convergence; also fit + predict, ridge-iter-KPL (iterative square loss) and the exact
  partial solver, and the held-out error on the 30 other curves;
- a 10-value lambda path at DTI size, warm-started, against 10 separate fits;
- 2,000 curves x 100 locations, 30% missing, 64 B-spline atoms: the exact partial solution
  (``exact_partial_ridge`` given K; and the whole ``KPLRegressor(solver="exact_partial").fit``), against the
  plug-in closed form; logcosh-KPL at the same size for information.
"""

from __future__ import annotations

import os
import platform
import time
import warnings
from pathlib import Path

import numpy as np
from _results import write_results
from threadpoolctl import threadpool_limits

from fdakpl import BSpline, Gaussian, KPLRegressor, Wavelet, datasets
from fdakpl.data.functional import Observations
from fdakpl.data.integration import integration_weights
from fdakpl.solvers.iterative import kpl_iterative, kpl_iterative_path
from fdakpl.solvers.partial import exact_partial_ridge
from fdakpl.solvers.points import point_design

OUT = Path(__file__).parent / "results" / "iterative.json"


def _median_time(fn, repeat: int) -> float:
    return _timed(fn, repeat)["median_s"]


def _timed(fn, repeat: int) -> dict[str, float]:
    """Median and minimum wall-clock time, and median process CPU time (all threads), after a warm-up.

    On a shared machine the wall time depends on the load of the other users; the minimum is the least
    disturbed run (as ``timeit`` recommends), the CPU time is less sensitive to waiting.
    """
    fn()
    wall, cpu = [], []
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        wall.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return {"median_s": float(np.median(wall)), "min_s": float(np.min(wall)), "median_cpu_s": float(np.median(cpu))}


def _dti_model(**kw) -> KPLRegressor:
    return KPLRegressor(dictionary=Wavelet("db3", level=4), kernel=Gaussian(0.9), output_matrix=1.5, lam=1e-3,
                        interpolate_inputs=True, **kw)


def dti(res: dict) -> None:
    ds = datasets.dti_first_visits()
    perm = np.random.default_rng(0).permutation(ds.sizes["sample"])
    tr, te = ds.isel(sample=np.sort(perm[:70])), ds.isel(sample=np.sort(perm[70:]))
    out: dict = {"n_train": 70, "n_locations": int(tr.sizes["rcst_loc"]), "lam": 1e-3, "output_matrix_b": 1.5,
                 "fits": {}, "target_s": 1.0}
    configs = [("ridge-KPL (plug-in, eig)", {}), ("ridge-iter-KPL (iterative square)", {"solver": "iterative"}),
               ("ridge exact_partial (PCG)", {"solver": "exact_partial"})]
    configs += [(f"logcosh-KPL gamma={g}", {"loss": f"logcosh({g})"}) for g in [1, 5, 10, 25]]
    for name, kw in configs:
        model = _dti_model(**kw)
        t_fit = _timed(lambda m=model: m.fit(tr.cca, tr.rcst), 20)

        def fit_predict(m=model):
            m.fit(tr.cca, tr.rcst)
            return m.predict(te.cca)

        t_fp = _median_time(fit_predict, 20)
        pred = fit_predict()
        err = (pred.values - te.rcst.values) ** 2
        out["fits"][name] = {"fit": t_fit, "fit_predict_median_s": t_fp,
                             "n_iter": int(model.n_iter_),
                             "converged": bool(model.converged_), "grad_norm": model.grad_norm_,
                             "test_mse_mean_of_means": float(np.mean(np.nanmean(err, axis=1))),
                             "n_atoms": int(model.dictionary_.n_atoms_)}
    out["n_atoms"] = out["fits"]["ridge-KPL (plug-in, eig)"]["n_atoms"]
    out["logcosh_max_fit_median_s"] = max(v["fit"]["median_s"] for k, v in out["fits"].items()
                                          if k.startswith("logcosh"))

    # lambda path at DTI size: warm starts vs separate fits (array level, same design)
    model = _dti_model(loss="logcosh(10)").fit(tr.cca, tr.rcst)
    K, B = model.K_, model.B_
    obs = Observations.from_dense(tr.rcst.values - model.mean_(tr.rcst_loc.values)[None, :], tr.rcst_loc.values)
    w, _ = integration_weights(obs, model.response_info_.domain)
    design = point_design(obs, model.dictionary_.evaluate(tr.rcst_loc.values), w)
    lams = list(np.geomspace(1e-1, 1e-5, 10))
    t_path = _timed(lambda: kpl_iterative_path(K, B, design, lams, "logcosh(10)", progress=False), 5)
    path = kpl_iterative_path(K, B, design, lams, "logcosh(10)", progress=False)
    t_sep = _timed(lambda: [kpl_iterative(K, B, design, lam, "logcosh(10)") for lam in lams], 5)
    sep = [kpl_iterative(K, B, design, lam, "logcosh(10)") for lam in lams]
    out["lambda_path_10_logcosh10"] = {
        "warm_started_path": t_path, "separate_fits": t_sep,
        "iterations_path": [r.n_iter for r in path], "iterations_separate": [r.n_iter for r in sep],
        "all_converged": all(r.converged for r in path + sep)}
    res["dti"] = out


def n2000(res: dict) -> None:
    rng = np.random.default_rng(0)
    n, m, d = 2000, 100, 64
    X = rng.normal(size=(n, 5))
    grid = np.linspace(0, 1, m)
    Y = np.sin(np.outer(X[:, 0], grid) * 3) + X[:, [1]] * np.cos(2 * np.pi * grid) + 0.1 * rng.normal(size=(n, m))
    Y[rng.uniform(size=Y.shape) < 0.3] = np.nan
    Y[:, 0] = np.where(np.isnan(Y[:, 0]), 0.0, Y[:, 0])
    kw = dict(dictionary=BSpline(d), kernel=Gaussian(2.0), lam=1e-3)
    out: dict = {"n": n, "n_locations": m, "missing_fraction": float(np.isnan(Y).mean()), "n_atoms": d,
                 "lam": 1e-3, "target_s": 5.0}

    model = KPLRegressor(solver="exact_partial", **kw)
    out["exact_partial_estimator_fit"] = _timed(lambda: model.fit(X, Y, locations=grid), 5)
    out["exact_partial_pcg_iterations"] = int(model.n_iter_)
    out["exact_partial_converged"] = bool(model.converged_)
    K, B = model.K_, model.B_
    obs = Observations.from_dense(Y - model.mean_(grid)[None, :], grid)
    w, _ = integration_weights(obs, (0.0, 1.0))
    design = point_design(obs, model.dictionary_.evaluate(grid), w)
    out["exact_partial_solver_only"] = _timed(lambda: exact_partial_ridge(K, B, design, 1e-3), 5)
    r = exact_partial_ridge(K, B, design, 1e-3)
    out["exact_partial_relative_residual"] = r.rel_grad_norm
    out["eigh_K"] = _timed(lambda: np.linalg.eigh(K), 5)
    plug = KPLRegressor(**kw)
    out["plugin_eig_estimator_fit"] = _timed(lambda: plug.fit(X, Y, locations=grid), 5)
    out["relative_difference_exact_vs_plugin_coef"] = float(np.linalg.norm(plug.dual_coef_ - model.dual_coef_)
                                                            / np.linalg.norm(model.dual_coef_))
    lc = KPLRegressor(loss="logcosh(10)", **kw)
    out["logcosh10_estimator_fit"] = _timed(lambda: lc.fit(X, Y, locations=grid), 2)
    out["logcosh10_iterations"] = int(lc.n_iter_)
    out["logcosh10_converged"] = bool(lc.converged_)
    res["n2000"] = out


@threadpool_limits.wrap(limits=1)  # one BLAS thread: timings comparable on a shared machine
def main() -> None:
    warnings.simplefilter("ignore")
    res: dict = {"machine": {"python": platform.python_version(), "cpu_count": os.cpu_count(),
                             "numpy": np.__version__, "loadavg_at_start": os.getloadavg()}}
    dti(res)
    n2000(res)
    write_results(OUT, res)


if __name__ == "__main__":
    main()
