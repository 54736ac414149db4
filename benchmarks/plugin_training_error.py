"""Why the plug-in estimator's training error rises as lambda -> 0 on DTI (issue 12, item 3).

Fits ``rcst ~ cca`` on the 100 first visits (as a user would, then looks at ``res.plot()``) along
lambda = 1e-8 ... 1 with the plug-in estimator (``solver="auto"``) and with the exact minimiser of the
partially observed square loss (``solver="exact_partial"``), and splits the training error (sum of squared
errors over a curve's observed points, averaged over curves) into the 66 fully observed curves and the 34
curves missing the first 1-12 of their 55 points.

The plug-in inner product of curve i with an atom is ``(|Theta| / m_i) sum_p y_ip phi(theta_ip)``: the
observed points stand for the whole domain. A curve observed on a fraction ``a_i`` of [0, 1] is read as
``(1 / a_i) y_i`` on the observed part and 0 on the rest, so as lambda -> 0 (interpolation of the plug-in
projections) its fitted curve tends to the dictionary's projection of that distorted curve, not to a fit
of its observed points; a larger lambda shrinks towards the fit borrowed from similar (mostly fully
observed) curves, which is closer. The script measures this limit (``G^-1 nu_i`` evaluated at the observed
points) and the slope of the fitted against the observed centred values, to compare with ``1 / a_i``.

Writes ``benchmarks/results/plugin_training_error.json``. Run: ``python benchmarks/plugin_training_error.py``.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import json  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

from fdakpl import FunctionalRegression, datasets  # noqa: E402
from fdakpl.utils.progress import progress  # noqa: E402

OUT = Path(__file__).parent / "results" / "plugin_training_error.json"
LAMS = np.geomspace(1e-8, 1.0, 17)


def sse(Y: np.ndarray, P: np.ndarray) -> np.ndarray:
    r2 = (Y - P) ** 2
    return np.where(np.isnan(r2), 0.0, r2).sum(axis=1)


def gram_mismatch(dictionary, grid: np.ndarray, G: np.ndarray) -> dict:
    """Relative spectral-norm gap between the exact Gram G and the discrete Grams of the two weightings."""
    from fdakpl.data.functional import quadrature_weights

    phi = dictionary.evaluate(grid)
    out = {"cond_G": float(np.linalg.cond(G))}
    for name, w in (("plugin_1_over_m", np.full(grid.size, 1.0 / grid.size)),
                    ("trapezoid", quadrature_weights(grid, (0.0, 1.0)))):
        out[name] = float(np.linalg.norm(phi.T @ (w[:, None] * phi) - G, 2) / np.linalg.norm(G, 2))
    return out


def fully_observed_only(ds, dic: str) -> dict:
    """Training error (mean SSE over curves) of the 66 fully observed curves alone, with trapezoidal quadrature
    weights (what fdakpl uses when no curve has gaps) and with the plug-in weights 1/m, along LAMS."""
    from fdakpl import FunctionalRegression, KPLRegressor

    kernel = FunctionalRegression("rcst ~ cca", ds, interpolate_inputs=True).default_kernels()["cca"]
    Y = ds.rcst.values
    out = {}
    for integration in ("quadrature", "plugin"):
        errs = []
        for lam in LAMS:
            est = KPLRegressor(dictionary=dic, kernel=kernel, lam=float(lam), integration=integration,
                               interpolate_inputs=True).fit(ds.cca, ds.rcst)
            errs.append(float(sse(Y, np.asarray(est.predict(ds.cca))).mean()))
        out[integration] = errs
    return out


def main() -> dict:
    ds = datasets.dti_first_visits()
    Y = ds.rcst.values
    partial = np.isnan(Y).any(axis=1)
    frac = (~np.isnan(Y)).mean(axis=1)
    out: dict = {"n_curves": int(Y.shape[0]), "n_partial": int(partial.sum()), "lams": LAMS.tolist(),
                 "observed_fraction_of_partial_curves": sorted(set(np.round(frac[partial], 3).tolist()))}
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for dic in ("auto", "bspline", "db3"):
            rows: dict[str, dict[str, list[float]]] = {}
            for solver in ("auto", "exact_partial"):
                r: dict[str, list[float]] = {"all": [], "full": [], "partial": [], "results_train_mse": [],
                                             "slope_partial": []}
                for lam in progress(LAMS, desc=f"{dic}/{solver}"):
                    res = FunctionalRegression("rcst ~ cca", ds, interpolate_inputs=True, lam=float(lam),
                                               dictionary=dic, solver=solver, progress=False).fit()
                    P = res.predict().values
                    e = sse(Y, P)
                    r["all"].append(float(e.mean()))
                    r["full"].append(float(e[~partial].mean()))
                    r["partial"].append(float(e[partial].mean()))
                    r["results_train_mse"].append(float(res.train_mse))
                    # slope of fitted vs observed centred values on the partial curves' observed points
                    mu = np.nanmean(Y, axis=0)
                    obs = partial[:, None] & ~np.isnan(Y)
                    yc, pc = (Y - mu)[obs], (P - mu)[obs]
                    r["slope_partial"].append(float(yc @ pc / (yc @ yc)))
                rows["plugin" if solver == "auto" else "exact_partial"] = r
            # the plug-in's lambda -> 0 limit: each curve's own plug-in projection, G^-1 nu_i, at its points
            res = FunctionalRegression("rcst ~ cca", ds, interpolate_inputs=True, lam=1e-8, dictionary=dic,
                                       progress=False).fit()
            est = res.estimator
            grid = ds.rcst_loc.values
            phi = est.dictionary_.evaluate(grid)
            mu = est.mean_(grid)
            limit = mu + np.linalg.solve(est.gram_, est.nu_.T).T @ phi.T
            # the dictionary's best fit of each curve's observed points (least squares on the atoms)
            best = np.empty_like(Y)
            for i in range(Y.shape[0]):
                o = ~np.isnan(Y[i])
                coef = np.linalg.lstsq(phi[o], Y[i, o] - mu[o], rcond=None)[0]
                best[i] = mu + phi @ coef
            e_lim, e_best = sse(Y, limit), sse(Y, best)
            rows["plugin_limit_lambda_to_0"] = {"all": float(e_lim.mean()), "full": float(e_lim[~partial].mean()),
                                                "partial": float(e_lim[partial].mean())}
            rows["least_squares_on_observed_points"] = {"all": float(e_best.mean()),
                                                        "full": float(e_best[~partial].mean()),
                                                        "partial": float(e_best[partial].mean())}
            rows["dictionary"] = repr(est.dictionary_)
            # what res.plot() draws as "training error": the criteria path of a lam="gcv" fit (plug-in weights)
            crit = FunctionalRegression("rcst ~ cca", ds, interpolate_inputs=True, lam=LAMS, dictionary=dic,
                                        progress=False).fit().criteria
            rows["plot_training_error"] = crit.train_mse.tolist()
            rows["gram_mismatch"] = gram_mismatch(est.dictionary_, grid, est.gram_)
            rows["fully_observed_only"] = fully_observed_only(ds.isel(sample=np.nonzero(~partial)[0]), dic)
            out[dic] = rows
    OUT.parent.mkdir(exist_ok=True)
    OUT.write_text(json.dumps(out, indent=1))
    return out


def report(out: dict) -> str:
    lines = []
    for dic in ("auto", "bspline", "db3"):
        r = out[dic]
        lines.append(f"\n{dic}: {r['dictionary']}")
        lines.append("lambda     | plug-in: all  full  partial  slope | exact: all  full  partial  slope")
        for k, lam in enumerate(out["lams"]):
            p, x = r["plugin"], r["exact_partial"]
            lines.append(f"{lam:9.1e}  | {p['all'][k]:.4f} {p['full'][k]:.4f} {p['partial'][k]:.4f} "
                         f"{p['slope_partial'][k]:.3f} | {x['all'][k]:.4f} {x['full'][k]:.4f} "
                         f"{x['partial'][k]:.4f} {x['slope_partial'][k]:.3f}")
        lines.append(f"plug-in limit lambda->0: {r['plugin_limit_lambda_to_0']}")
        lines.append(f"least squares on observed points: {r['least_squares_on_observed_points']}")
        lines.append(f"gram mismatch: {r['gram_mismatch']}")
        f = r["fully_observed_only"]
        lines.append("66 fully observed curves alone (lambda, quadrature, plug-in weights):")
        lines += [f"  {lam:9.1e} {q:.4f} {p:.4f}" for lam, q, p in zip(out["lams"], f["quadrature"], f["plugin"],
                                                                       strict=True)]
        lines.append(f"plot training error (lam='gcv' criteria path): {np.round(r['plot_training_error'], 5)}")
    return "\n".join(lines)


if __name__ == "__main__":
    print(report(main()))
