"""The paper's 5-fold CV protocol against the bare NumPy/SciPy floor (issue 15).

Writes ``benchmarks/results/cv_protocol.json``. Run: ``python benchmarks/bench_cv.py``.

Setup as ``bench_floor.py``: DTI split 0 (70 training curves of ``fdakpl.datasets.dti_first_visits()``,
``cca`` with its missing values interpolated, ``rcst`` partially observed at 55 locations). The protocol:
``FunctionalRegression("rcst ~ cca", lam="cv")``, 5 folds, db2/db3 wavelets x levels 4/5 x 11 values of ``b``
(1.0 to 2.0) x 25 lambdas, Gaussian kernel (median-heuristic width): 44 settings x 5 folds, the work of 220 fits
with 25 lambdas each.

Checked first, in the same run: the protocol's fold scores (the closed form,
:func:`fdakpl.tuning.kfold_grid.kfold_grid`) equal the per-fold fits of :func:`fdakpl.tuning.kfold.kfold_path`'s
generic route (a ``KPLRegressor`` fit and prediction per setting and fold) to 1e-10 relative, with the same
chosen setting and lambda.

Timed side by side (``_timing.compare``: one BLAS thread, interleaved repetitions, minimum and median):
the protocol with ``n_jobs=1`` and ``n_jobs=2`` (below 500 curves both run in-process on one BLAS thread),
``kfold_grid`` alone on arrays (kernel matrix given: the arithmetic without the front end), and the floor of
``bench_floor.py`` (bare NumPy fit + predict, db3 level 4, ``B = 1.5^-scale``); ratios to the floor.

Then whether two cores pay for the closed form at 1,000 synthetic curves (5 inputs, 55 locations, db3 level 4,
3 values of ``b``, 25 lambdas): ``kfold_grid`` on one thread, with two BLAS threads (``compare``'s one-thread
limit is overridden there), and with its folds in two threads on one BLAS thread each (what ``kfold_path`` does
with ``n_jobs=2`` from 500 curves), with the load average (the answer depends on it).
"""

from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path

import numpy as np
from sklearn.model_selection import KFold

sys.path.insert(0, str(Path(__file__).parent))
from _timing import compare, machine, ratio
from bench_floor import LAM, SIGMA, dti_split0, floor_fit_predict

import fdakpl.tuning.kfold as selection
from fdakpl import FunctionalRegression, Gaussian, KPLRegressor
from fdakpl.dictionaries import Wavelet
from fdakpl.tuning.kfold_grid import kfold_grid

OUT = Path(__file__).parent / "results" / "cv_protocol.json"
TARGET = 500
B_GRID = [float(b) for b in np.round(np.arange(1.0, 2.01, 0.1), 2)]
LAMS = np.geomspace(1e-6, 1e-2, 25)


def protocol(tr, n_jobs: int = 1):
    return FunctionalRegression("rcst ~ cca", tr, dictionary="db3", level=4, interpolate_inputs=True, lam="cv",
                                lam_grid=LAMS, cv=5, random_state=0, n_jobs=n_jobs,
                                param_grid={"dictionary": ["db2", "db3"], "level": [4, 5], "b": B_GRID},
                                progress=False).fit()


def per_fold_fits(tr):
    """The same protocol by kfold_path's generic route (one fit per setting and fold)."""
    saved = selection.kfold_labelled
    selection.kfold_labelled = lambda *a, **k: None
    try:
        return protocol(tr)
    finally:
        selection.kfold_labelled = saved


def main() -> None:
    warnings.simplefilter("ignore")
    tr, te, Xtr, Xte, Ytr, grid = dti_split0()
    length = float(grid[-1] - grid[0])
    res: dict = {"machine_at_start": machine(), "setup": {
        "n_train": 70, "n_locations": int(grid.size), "folds": 5, "dictionaries": ["db2", "db3"], "levels": [4, 5],
        "b": B_GRID, "n_lambdas": int(LAMS.size), "settings": 44, "fits_worth": 220, "target_ratio_to_floor": TARGET}}

    # agreement with the per-fold fits
    fast, slow = protocol(tr), per_fold_fits(tr)
    a, b = fast.cv_result["fold_scores"], slow.cv_result["fold_scores"]
    rel = float(np.max(np.abs(a - b) / np.abs(b)))
    same = repr(fast.cv_result["best_params"]) == repr(slow.cv_result["best_params"]) and fast.lam == slow.lam
    if not (rel <= 1e-10 and same):
        raise AssertionError(f"closed-form CV and per-fold fits disagree: relative {rel:.3g}, same choice {same}")
    res["agreement_with_per_fold_fits"] = {"max_relative_difference": rel, "same_choice": same,
                                           "best": {k: repr(v) for k, v in fast.cv_result["best_params"].items()},
                                           "best_lambda": fast.lam}

    # the floor: bare NumPy fit + predict of one model (db3 level 4, B = 1.5^-scale), as in bench_floor.py
    est = KPLRegressor(dictionary=Wavelet("db3", level=4), kernel=Gaussian(SIGMA), output_matrix=1.5, lam=LAM)
    est.fit(Xtr, Ytr, locations=grid)
    dic = est.dictionary_
    phi, G, b_diag = dic.evaluate(grid), dic.gram(), 1.5 ** -dic.scales_.astype(float)

    def floor():
        return floor_fit_predict(Xtr, Xte, None, SIGMA, Ytr, length, phi, G, b_diag, LAM)

    # kfold_grid alone: the protocol's arithmetic on arrays (the front end's kernel matrix and folds)
    kern = fast.estimator.kernel
    X_fit, X_w = fast.estimator.X_fit_, fast.estimator.X_weights_
    K = kern(X_fit, None, X_w)
    Yd = tr.rcst.values
    folds = list(KFold(5, shuffle=True, random_state=0).split(Yd))
    dics = [Wavelet(w, level=lv) for w in ("db2", "db3") for lv in (4, 5)]
    arr = kfold_grid(K, Yd, grid, dics, B_GRID, LAMS, folds)
    arr_rel = float(np.max(np.abs(arr.reshape(44, 5, -1) - a) / np.abs(a)))
    if arr_rel > 1e-10:
        raise AssertionError(f"kfold_grid on arrays disagrees with the front end's CV: relative {arr_rel:.3g}")

    t = compare({"protocol_n_jobs_1": lambda: protocol(tr, 1), "protocol_n_jobs_2": lambda: protocol(tr, 2),
                 "kfold_grid_arrays": lambda: kfold_grid(K, Yd, grid, dics, B_GRID, LAMS, folds),
                 "floor": floor}, repeat=9)
    timed = ("protocol_n_jobs_1", "protocol_n_jobs_2", "kfold_grid_arrays")
    res["protocol"] = {**t, "ratio_to_floor": {k: ratio(t, k, "floor") for k in timed}}
    for k, v in t["times"].items():
        print(k, round(v["min_ms"], 3), "ms min,", round(v["median_ms"], 3), "ms median", flush=True)
    print("ratios (min):", {k: round(v["min"], 1) for k, v in res["protocol"]["ratio_to_floor"].items()}, flush=True)

    # BLAS threads for the closed form at 1,000 curves
    from threadpoolctl import threadpool_limits

    rng = np.random.default_rng(0)
    n, m = 1000, 55
    X = rng.normal(size=(n, 5))
    g = np.linspace(0, 1, m)
    Y = np.sin(3 * np.outer(X[:, 0], g)) + X[:, [1]] * g + 0.1 * rng.normal(size=(n, m))
    Kb = Gaussian(2.0)(X)
    big_folds = list(KFold(5, shuffle=True, random_state=0).split(X))

    def big_cv(blas, folds_in_threads):
        with threadpool_limits(blas):
            return kfold_grid(Kb, Y, g, [Wavelet("db3", level=4)], [1.0, 1.5, 2.0], LAMS, big_folds,
                              n_threads=folds_in_threads)

    tb = compare({"one_thread": lambda: big_cv(1, 1), "blas_threads_2": lambda: big_cv(2, 1),
                  "fold_threads_2": lambda: big_cv(1, 2)}, repeat=5, warmup=1)
    res["two_cores_at_1000_curves"] = {**tb, "speedup": {k: ratio(tb, "one_thread", k)
                                                         for k in ("blas_threads_2", "fold_threads_2")}}
    print("1000 curves:", {k: round(v["min_ms"], 1) for k, v in tb["times"].items()}, "load", tb["loadavg_before"],
          flush=True)
    res["machine_at_end"] = machine()
    OUT.parent.mkdir(exist_ok=True)
    OUT.write_text(json.dumps(res, indent=2))


if __name__ == "__main__":
    main()
