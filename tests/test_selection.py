"""GCV, edf and leave-one-curve-out closed forms against brute-force refits."""

import functools

import numpy as np
import pytest

from fdakpl import BSpline, Fourier, Gaussian, KPLRegressor
from fdakpl.data.functional import Observations
from fdakpl.data.integration import integration_weights
from fdakpl.kernels import ScaleDecay
from fdakpl.tuning.kfold import kfold_path

from .conftest import make_problem


def _fit_with(X, Y, grid, lam, dic, B=None, integration="auto"):
    return KPLRegressor(dictionary=dic, kernel=Gaussian(0.9), output_matrix=B, lam=lam, center=False,
                        integration=integration).fit(X, Y, locations=grid)


@pytest.mark.parametrize("missing", [0.0, 0.3])
@pytest.mark.parametrize("dic, B", [(Fourier(3), None), (BSpline(6), ScaleDecay(1.5))])
def test_path_criteria_equal_brute_force(rng, missing, dic, B):
    X, Y, grid = make_problem(rng, n=9, m=11, missing=missing)
    obs = Observations.from_dense(Y, grid)
    # the criteria over the observed points: quadrature (fully observed) or the plug-in (with gaps; the
    # default's interpolants: tests/test_partial_observation.py)
    integration = "plugin" if missing else "auto"
    w, _ = integration_weights(obs, (0.0, 1.0), integration)
    _fit = functools.partial(_fit_with, integration=integration)
    m = _fit(X, Y, grid, 1e-3, dic, B)
    lams = np.array([1e-4, 3e-2]) / m.problem_.lam_unit  # penalties 1e-4 and 3e-2 whatever the atoms' norms
    crit = m.path_.criteria(lams)
    n = X.shape[0]
    for j, lam in enumerate(lams):
        fit = _fit(X, Y, grid, lam, dic, B)
        pred = fit.predict(X)
        r = obs.value - pred[obs.index, obs.grid_index]
        assert crit.train_mse[j] == pytest.approx(np.sum(w * r**2) / n, rel=1e-9)
        # edf = trace of the smoother observed values -> fitted values at observed points (linear: unit responses)
        tr = 0.0
        for k in range(obs.index.size):
            e = np.zeros_like(obs.value)
            e[k] = 1.0
            Yk = np.full(Y.shape, np.nan)
            Yk[obs.index, obs.grid_index] = e
            pk = _fit(X, Yk, grid, lam, dic, B).predict(X)
            tr += pk[obs.index[k], obs.grid_index[k]]
        assert crit.edf[j] == pytest.approx(tr, rel=1e-8)
        assert crit.gcv[j] == pytest.approx(crit.train_mse[j] / (1 - tr / obs.index.size) ** 2, rel=1e-8)
        # leave one curve out, penalty n*lam held fixed: lam' = n lam / (n - 1)
        loo = 0.0
        for i in range(n):
            keep = np.delete(np.arange(n), i)
            fi = _fit(X[keep], Y[keep], grid, lam * n / (n - 1), dic, B)
            pi = fi.predict(X[[i]])[0]
            sel = obs.index == i
            loo += np.sum(w[sel] * (obs.value[sel] - pi[obs.grid_index[sel]]) ** 2)
        assert crit.loo[j] == pytest.approx(loo / n, rel=1e-8)


def test_lambda_edge_warning_names_the_side_and_the_grid(rng):
    import xarray as xr

    from fdakpl import FunctionalRegression

    X, Y, grid = make_problem(rng, n=12, m=9)
    ds = xr.Dataset({"y": (("sample", "t"), Y), "x": (("sample", "s"), X)},
                    coords={"t": grid, "s": np.linspace(0, 1, X.shape[1])})
    with pytest.warns(UserWarning, match=r"(smallest|largest) value of its grid \[1e-06, 1e-05\]"):
        FunctionalRegression("y ~ x", ds, lam_grid=[1e-5, 1e-6], lam="gcv", progress=False).fit()


def test_kfold_is_reproducible_and_matches_manual_folds(rng, monkeypatch):
    import fdakpl.tuning.kfold as selection

    monkeypatch.setattr(selection, "PARALLEL_MIN_SAMPLES", 0)  # exercise the worker processes at this small n
    monkeypatch.setattr(selection, "kfold_labelled", lambda *a, **k: None)  # per-fold fits, not the closed form
    X, Y, grid = make_problem(rng, n=24, m=15, missing=0.2)
    est = KPLRegressor(dictionary=Fourier(3), kernel=Gaussian(1.0))
    a = kfold_path(est, X, Y, lams=[1e-4, 1e-2], param_grid={"kernel__sigma": [0.5, 2.0]}, n_splits=4,
                   random_state=3, n_jobs=1, progress=False, fit_params={"locations": grid})
    b = kfold_path(est, X, Y, lams=[1e-4, 1e-2], param_grid={"kernel__sigma": [0.5, 2.0]}, n_splits=4,
                   random_state=3, n_jobs=2, progress=False, fit_params={"locations": grid})
    np.testing.assert_array_equal(a["scores"], b["scores"])  # parallel == sequential, bit for bit
    from sklearn.model_selection import KFold

    errs = []
    for tr, te in KFold(4, shuffle=True, random_state=3).split(X):
        m = KPLRegressor(dictionary=Fourier(3), kernel=Gaussian(2.0), lam=1e-2).fit(X[tr], Y[tr], locations=grid)
        err = (m.predict(X[te]) - Y[te]) ** 2
        errs.append(np.mean(np.nanmean(err, axis=1)))
    assert a["scores"][1, 1] == pytest.approx(np.mean(errs), rel=1e-9)


def test_parallel_cv_survives_rpy2_environment(rng, monkeypatch):
    """rpy2 prepends R's lib dirs to LD_LIBRARY_PATH; loky workers must still start (fdakpl.tuning.kfold)."""
    pytest.importorskip("rpy2.robjects", reason="needs rpy2 and R")
    import os

    import fdakpl.tuning.kfold as selection

    monkeypatch.setattr(selection, "PARALLEL_MIN_SAMPLES", 0)
    monkeypatch.setattr(selection, "kfold_labelled", lambda *a, **k: None)  # per-fold fits in worker processes

    assert "R_HOME" in os.environ
    X, Y, grid = make_problem(rng, n=20, m=10)
    cv = kfold_path(KPLRegressor(dictionary=Fourier(2)), X, Y, lams=[1e-3], n_splits=3, random_state=0, n_jobs=2,
                    progress=False, fit_params={"locations": grid})
    assert np.isfinite(cv["scores"]).all()
