"""Generic K-fold cross-validation over (configuration, lambda) for the experiments.

A *method spec* is a dict with

* ``configs``: list of dicts of non-lambda parameters;
* ``lams``: the lambda grid in the paper's convention, or ``None`` (no path);
* ``lam_per_n``: divide lambda by the number of training curves (methods whose
  paper objective sums rather than averages the losses);
* ``make(config, lam)``: an unfitted estimator;
* ``path`` (optional): ``"ridge"`` (KPL closed form, one eigendecomposition per
  configuration), ``"warm"`` (refits from the largest lambda down, each
  starting from the previous coefficients: iterative KPL), ``"refit"``
  (independent refits) or, by default, the estimator's ``predict_path``.

The CV score of a configuration and lambda is the mean over validation
curves of the sum of squared errors over their observed points (the paper's
code's metric).
"""

from __future__ import annotations

import time
import warnings
from typing import Any

import numpy as np
import xarray as xr

from fdakpl import KPLRegressor
from fdakpl.data.preprocessing import prepare_inputs

from .common import kfolds


def kpl_ridge_path(model: KPLRegressor, X: Any, lams: np.ndarray) -> np.ndarray:
    """Ridge-KPL predictions on the training grid for every lambda, from one fit's eigendecompositions."""
    Xv, Xw, _, _ = prepare_inputs(X, spec=model.input_spec_)
    Kn = model.kernel(Xv, model.X_fit_, Xw)
    phi = model.dictionary_.evaluate(model.grid_)
    mean = model.mean_(model.grid_)
    return np.stack([Kn @ model.path_.coef(float(lam), times_B=True) @ phi.T + mean for lam in lams])


def _warm_path(spec: dict[str, Any], cfg: dict[str, Any], lams: np.ndarray, Xtr: Any, Ytr: Any,
               Xva: Any) -> np.ndarray:
    out: np.ndarray | None = None
    init = None
    for k in np.argsort(lams)[::-1]:
        model = spec["make"](cfg, float(lams[k]))
        opts = dict(model.solver_options or {})
        if init is not None:
            opts["init"] = init
        model.set_params(solver_options=opts)
        model.fit(Xtr, Ytr)
        init = model.dual_coef_
        pred = np.asarray(model.predict(Xva), dtype=float)
        if out is None:
            out = np.empty((lams.size, *pred.shape))
        out[k] = pred
    assert out is not None
    return out


def path_predictions(spec: dict[str, Any], cfg: dict[str, Any], lams: np.ndarray | None, Xtr: Any, Ytr: Any,
                     Xva: Any) -> np.ndarray:
    """Predictions ``(n_lams, n_val, m)`` of one configuration on the validation inputs (training grid)."""
    if lams is None:
        return np.asarray(spec["make"](cfg, None).fit(Xtr, Ytr).predict(Xva), dtype=float)[None]
    kind = spec.get("path", "predict_path")
    if kind == "warm":
        return _warm_path(spec, cfg, lams, Xtr, Ytr, Xva)
    if kind == "refit":
        return np.stack([np.asarray(spec["make"](cfg, float(lam)).fit(Xtr, Ytr).predict(Xva), dtype=float)
                         for lam in lams])
    model = spec["make"](cfg, float(lams[0])).fit(Xtr, Ytr)
    if kind == "ridge":
        return kpl_ridge_path(model, Xva, lams)
    return model.predict_path(Xva, lams)


def fit_lam(spec: dict[str, Any], lam: float | None, n: int) -> float | None:
    """The estimator's lambda for the paper's ``lam`` and ``n`` training curves."""
    if lam is None:
        return None
    return lam / n if spec.get("lam_per_n") else lam


def cross_validate(spec: dict[str, Any], X: xr.DataArray, Y: xr.DataArray, n_folds: int, seed: int) -> dict[str, Any]:
    """K-fold CV of a method spec on labelled curves; returns scores, the best config and lambda, timing."""
    configs, lams = spec["configs"], spec["lams"]
    n_l = 1 if lams is None else len(lams)
    n = X.sizes["sample"]
    sse = np.zeros((len(configs), n_l))
    Yv = Y.values
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for ftr, fva in kfolds(n, n_folds, seed):
            Xtr, Ytr, Xva = X.isel(sample=ftr), Y.isel(sample=ftr), X.isel(sample=fva)
            lams_fit = None if lams is None else np.array([fit_lam(spec, lam, ftr.size) for lam in lams])
            for c, cfg in enumerate(configs):
                pred = path_predictions(spec, cfg, lams_fit, Xtr, Ytr, Xva)
                err = np.where(np.isnan(Yv[fva])[None], 0.0, (pred - np.nan_to_num(Yv[fva])[None]) ** 2)
                sse[c] += err.sum(axis=(1, 2))
    cv = sse / n
    c_best, l_best = np.unravel_index(int(np.argmin(cv)), cv.shape)
    lam = None if lams is None else float(lams[l_best])
    return {"scores": cv, "config": configs[c_best], "lam": lam, "cv_score": float(cv[c_best, l_best]),
            "lam_at_grid_edge": bool(lams is not None and l_best in (0, n_l - 1)),
            "time_cv_s": time.perf_counter() - t0, "n_configs": len(configs), "n_lams": n_l}


def fit_best(spec: dict[str, Any], cv: dict[str, Any], X: xr.DataArray, Y: xr.DataArray) -> tuple[Any, float]:
    """Refit the selected configuration on all training curves; returns the model and the fit time."""
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = spec["make"](cv["config"], fit_lam(spec, cv["lam"], X.sizes["sample"])).fit(X, Y)
    return model, time.perf_counter() - t0
