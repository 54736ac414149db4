"""Distance of fdakpl's closed-form fit + predict to the bare NumPy/SciPy floor (issue 15).

Writes ``benchmarks/results/floor.json``. Run: ``python benchmarks/bench_floor.py``.

Setup: DTI split 0 (``numpy.random.default_rng(0).permutation(100)``: 70 training, 30 test curves of
``fdakpl.datasets.dti_first_visits()``, ``cca`` with its two missing values interpolated, ``rcst``
partially observed at 55 locations). Two models: db3 wavelets, level 4 (74 atoms), ``B = 1.5^-scale``;
Fourier(10) (21 atoms), ``B = I``; Gaussian kernel, ``lam = 1e-3``; the plug-in integration
(``integration="plugin"``, what the floor computes). At the formula level the kernel width, ``B`` and lambda are
all given, so that no hyper-parameter is tuned.

The floor is the arithmetic the estimator must do anyway, written as bare NumPy/SciPy: the kernel
matrices, the pointwise mean, the plug-in projection ``nu``, the two eigendecompositions (``K`` and
``B^1/2 G B^1/2``), the coefficients and the predictions. What depends only on the dictionary (atom values on
the grid, Gram matrix) is given to it, as fdakpl caches it on the dictionary. The floor's predictions are
checked against fdakpl's to 1e-8 before anything is timed.

Timed side by side (``_timing.compare``: one BLAS thread, interleaved repetitions, minimum and median):
``KPLRegressor.fit(arrays) + predict`` and ``FunctionalRegression(formula, lam=1e-3).fit() + predict(test)``,
each against the floor on the same inputs. The paper's 5-fold CV protocol against the same floor:
``bench_cv.py``.
"""

from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path

import numpy as np
from scipy.spatial.distance import cdist

sys.path.insert(0, str(Path(__file__).parent))
from _timing import compare, machine, ratio

from fdakpl import FunctionalRegression, Gaussian, KPLRegressor, datasets
from fdakpl.data.functional import interpolate_missing
from fdakpl.dictionaries import Fourier, Wavelet

OUT = Path(__file__).parent / "results" / "floor.json"
LAM = 1e-3
SIGMA = 0.9
SIGMA_FORMULA = 0.08  # about the median heuristic's width for cca curves in the L2 geometry
TARGETS = {"arrays": 1.3, "formula": 2.5}


def dti_split0():
    ds = datasets.dti_first_visits()
    perm = np.random.default_rng(0).permutation(100)
    tr, te = ds.isel(sample=np.sort(perm[:70])), ds.isel(sample=np.sort(perm[70:]))
    gx = ds.cca_loc.values
    return tr, te, interpolate_missing(tr.cca.values, gx), interpolate_missing(te.cca.values, gx), \
        tr.rcst.values, ds.rcst_loc.values


def floor_fit_predict(Xtr, Xte, w, sigma, Y, length, phi, G, b_diag, lam):
    """Bare NumPy/SciPy KPL (plug-in projection, eigendecomposition route), predictions at the grid."""
    sw = np.sqrt(w) if w is not None else None
    A = Xtr * sw if sw is not None else Xtr
    K = np.exp(-cdist(A, A, "sqeuclidean") / (2.0 * sigma**2))
    obs = ~np.isnan(Y)
    mu = np.nanmean(Y, axis=0)
    Yc = np.where(obs, Y - mu, 0.0) * (length / obs.sum(axis=1))[:, None]
    N = Yc @ phi
    s, U = np.linalg.eigh(K)
    np.clip(s, 0.0, None, out=s)
    bh = np.sqrt(b_diag)
    e, V = np.linalg.eigh(bh[:, None] * G * bh[None, :])
    np.clip(e, 0.0, None, out=e)
    Nt = U.T @ (N * bh) @ V
    AB = U @ ((Nt / (np.outer(s, e) + Y.shape[0] * lam)) @ (V.T * bh))
    T = Xte * sw if sw is not None else Xte
    Kn = np.exp(-cdist(T, A, "sqeuclidean") / (2.0 * sigma**2))
    return Kn @ AB @ phi.T + mu


def main() -> None:
    warnings.simplefilter("ignore")
    tr, te, Xtr, Xte, Ytr, grid = dti_split0()
    length = float(grid[-1] - grid[0])
    res: dict = {"machine_at_start": machine(), "setup": {"n_train": 70, "n_test": 30, "n_locations": grid.size,
                                                         "lam": LAM, "targets_ratio_to_floor": TARGETS}}
    models = {"db3_level4_b1.5": (lambda: Wavelet("db3", level=4), 1.5, {"dictionary": "db3", "level": 4}),
              "fourier10_identity": (lambda: Fourier(10), "identity", {"dictionary": Fourier(10)})}
    for name, (make_dic, b, formula_dic) in models.items():
        # integration="plugin" on both sides: the floor is the plug-in arithmetic (the default integrates the
        # partially observed rcst curves' interpolants since issue 24; that route's cost is in bench_default_fit)
        est = KPLRegressor(dictionary=make_dic(), kernel=Gaussian(SIGMA), output_matrix=b, lam=LAM,
                           integration="plugin")
        est.fit(Xtr, Ytr, locations=grid)
        dic = est.dictionary_
        phi, G = dic.evaluate(grid), dic.gram()
        b_diag = np.ones(G.shape[0]) if b == "identity" else float(b) ** -dic.scales_.astype(float)
        lam_u = LAM * float(np.trace(G)) / G.shape[0]  # lambda in the unit of the atoms' norms (issue 24)

        def arrays(est=est):
            est.fit(Xtr, Ytr, locations=grid)
            return est.predict(Xte)

        def floor_arrays(phi=phi, G=G, b_diag=b_diag, lam_u=lam_u):
            return floor_fit_predict(Xtr, Xte, None, SIGMA, Ytr, length, phi, G, b_diag, lam_u)

        # everything fixed (kernel width, B, lambda): nothing is tuned, the front end's cost is its plumbing
        fr_kw = dict(formula_dic, kernel=Gaussian(SIGMA_FORMULA), output_matrix=b, lam=LAM, interpolate_inputs=True,
                     progress=False, integration="plugin")

        def formula(fr_kw=fr_kw):
            r = FunctionalRegression("rcst ~ cca", tr, **fr_kw).fit()
            return r.predict(te), r

        pred_f, r = formula()
        kf = r.estimator.kernel
        kcca = kf.kernels["cca"] if hasattr(kf, "kernels") else kf  # one term: cca
        sigma_f, w_f = float(kcca.sigma), r.estimator.X_weights_["cca"]

        def floor_formula(phi=phi, G=G, b_diag=b_diag, sigma_f=sigma_f, w_f=w_f, lam_u=lam_u):
            return floor_fit_predict(Xtr, Xte, w_f, sigma_f, Ytr, length, phi, G, b_diag, lam_u)

        err_a = float(np.max(np.abs(arrays() - floor_arrays())))
        err_f = float(np.max(np.abs(np.asarray(pred_f) - floor_formula())))
        scale = float(np.max(np.abs(floor_arrays())))
        if not (err_a <= 1e-8 * scale and err_f <= 1e-8 * scale):
            raise AssertionError(f"{name}: floor and fdakpl disagree (arrays {err_a:.3g}, formula {err_f:.3g})")
        t = compare({"fdakpl_arrays": arrays, "floor_arrays": floor_arrays,
                     "fdakpl_formula": formula, "floor_formula": floor_formula}, repeat=15, inner=5)
        res[name] = {"n_atoms": int(G.shape[0]), "formula_kernel": repr(kf),
                     "max_abs_difference_to_floor": {"arrays": err_a, "formula": err_f, "prediction_scale": scale},
                     "ratio_arrays": ratio(t, "fdakpl_arrays", "floor_arrays"),
                     "ratio_formula": ratio(t, "fdakpl_formula", "floor_formula"), **t}
        ra, rf = res[name]["ratio_arrays"]["min"], res[name]["ratio_formula"]["min"]
        print(name, {k: round(v["min_ms"], 3) for k, v in t["times"].items()},
              f"arrays x{ra:.2f} formula x{rf:.2f} (min)", flush=True)
    res["machine_at_end"] = machine()
    OUT.parent.mkdir(exist_ok=True)
    OUT.write_text(json.dumps(res, indent=2))


if __name__ == "__main__":
    main()
