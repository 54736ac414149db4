"""Robust losses through the estimator and the front end: every lam= form, unit-free parameters."""

import numpy as np
import pandas as pd
import pytest
import xarray as xr

from fdakpl import BSpline, FunctionalRegression, Gaussian, KPLRegressor
from fdakpl.data.functional import Observations, from_long
from fdakpl.data.preprocessing import response_scale
from fdakpl.losses import Huber, LogCosh, PseudoHuber, make_loss

DEG = 180.0 / np.pi


def _data(seed=0, n=40, m=20):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, 2))
    grid = np.linspace(0, 1, m)
    Y = 0.3 * np.sin(2 * np.pi * np.outer(X[:, 0], grid)) + 0.2 * X[:, 1:] * grid + 0.02 * rng.normal(size=(n, m))
    Y[rng.uniform(size=Y.shape) < 0.03] += 1.0  # outliers
    Y[rng.uniform(size=Y.shape) < 0.1] = np.nan
    return X, Y, grid


def _dataset(X, Y, grid):
    s = np.linspace(0, 1, 10)
    x = X[:, :1] * s + X[:, 1:] * s**2
    return xr.Dataset({"x": (("sample", "s"), x), "y": (("sample", "t"), Y)},
                      coords={"sample": np.arange(X.shape[0]), "s": s, "t": grid})


@pytest.mark.parametrize("loss", ["logcosh", "logcosh(5)", "huber", "pseudo_huber(0.5)"])
def test_robust_fit_is_scale_equivariant(loss):
    """Responses in degrees instead of radians: the same model, predictions scaled exactly."""
    X, Y, grid = _data()
    kw = dict(dictionary=BSpline(6), kernel=Gaussian(1.0), lam=1e-3, loss=loss,
              solver_options={"tol": 1e-11, "max_iter": 5000})
    rad = KPLRegressor(**kw).fit(X, Y, locations=grid)
    deg = KPLRegressor(**kw).fit(X, DEG * Y, locations=grid)
    assert deg.response_scale_ == pytest.approx(DEG * rad.response_scale_, rel=1e-12)
    np.testing.assert_allclose(deg.mean_(grid), DEG * rad.mean_(grid), rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(deg.predict(X), DEG * rad.predict(X), rtol=1e-6, atol=1e-6 * DEG * np.nanmax(np.abs(Y)))


def test_parameters_in_response_units_are_not_scale_equivariant():
    """The control: with relative=False, the same gamma is a different model in degrees."""
    X, Y, grid = _data()
    kw = dict(dictionary=BSpline(6), kernel=Gaussian(1.0), lam=1e-3, loss=LogCosh(10.0, relative=False))
    rad = KPLRegressor(**kw).fit(X, Y, locations=grid)
    deg = KPLRegressor(**kw).fit(X, DEG * Y, locations=grid)
    assert rad.response_scale_ is None and rad.loss_ == LogCosh(10.0, relative=False)
    assert np.abs(deg.predict(X) / DEG - rad.predict(X)).max() > 1e-3


def test_response_scale_is_the_mad_around_the_pointwise_median():
    rng = np.random.default_rng(1)
    Y = rng.normal(size=(2001, 3)) * 2.0 + np.array([0.0, 5.0, -3.0])
    obs = Observations.from_dense(Y, np.array([0.0, 0.5, 1.0]))
    dev = np.abs(Y - np.median(Y, axis=0)).ravel()
    assert response_scale(obs, (0.0, 1.0)) == pytest.approx(1.482602218505602 * np.median(dev), rel=1e-12)
    assert response_scale(obs, (0.0, 1.0)) == pytest.approx(2.0, rel=0.05)


def test_losses_at_scale_are_homogeneous_of_degree_two():
    y, f = np.zeros(5), np.array([-3.0, -0.1, 0.0, 0.2, 4.0])
    for loss in [LogCosh(2.0), Huber(0.5), PseudoHuber(0.7)]:
        a, b = loss.at_scale(0.3), loss.at_scale(0.3 * DEG)
        np.testing.assert_allclose(b.value(y, DEG * f), DEG**2 * a.value(y, f), rtol=1e-12)
        np.testing.assert_allclose(b.derivative(y, DEG * f), DEG * a.derivative(y, f), rtol=1e-12)
        assert loss.at_scale(1.0) == loss and loss.relative
    # at scale s the thresholds are in units of s
    assert Huber(1.0).at_scale(2.0).derivative(np.zeros(1), np.array([10.0]))[0] == 2.0
    assert make_loss("logcosh(5)") == LogCosh(5.0, relative=True)


# ----------------------------------------------------------------------------- every lam= form
@pytest.fixture(scope="module")
def robust_data():
    X, Y, grid = _data(2, n=36, m=15)
    return _dataset(X, Y, grid)


GRID = np.geomspace(1e-5, 1e-1, 7)


def _fit(ds, **kw):
    return FunctionalRegression("y ~ x", data=ds, dictionary=BSpline(6), progress=False, n_jobs=1, **kw).fit()


def test_logcosh_with_a_fixed_lambda_is_the_estimator_fit(robust_data):
    res = _fit(robust_data, loss="logcosh", lam=1e-3)
    assert res.lam == 1e-3 and res.solver == "iterative"
    direct = KPLRegressor(dictionary=BSpline(6), kernel=res.estimator.kernel, lam=1e-3, loss="logcosh").fit(
        res.model.parsed.inputs(robust_data), robust_data["y"])
    np.testing.assert_allclose(res.estimator.dual_coef_, direct.dual_coef_, rtol=1e-10)
    assert res.estimator.loss_ == LogCosh(1.0).at_scale(direct.response_scale_)


@pytest.mark.parametrize("how", ["grid", "gcv", "loo"])
def test_logcosh_lambda_by_the_square_loss_stand_in(robust_data, how):
    """'gcv', 'loo' or a grid: the square-loss closed form chooses lambda (it used to keep the loss and raise
    "solver='eig' solves the square loss only"); logcosh(gamma) curves like gamma a^2 / 2 near 0, so the square
    loss's lambda is scaled by gamma / 2."""
    lam = GRID if how == "grid" else how
    square = _fit(robust_data, lam=lam, lam_grid=GRID)
    for gamma in [1.0, 4.0]:
        res = _fit(robust_data, loss=LogCosh(gamma), lam=lam, lam_grid=GRID)
        assert res.solver == "iterative"
        assert res.lam == pytest.approx(square.lam * gamma / 2, rel=1e-12)
        assert res.estimator.lam == res.lam and res.estimator.converged_
        assert any("proxy" in note for note in res.notes)


def test_logcosh_lambda_by_cross_validation(robust_data):
    res = _fit(robust_data, loss="logcosh", lam="cv", lam_grid=GRID[::2], cv=3, random_state=0)
    cv = res.cv_result
    assert res.lam == cv["best_lam"] and res.lam in GRID[::2]
    assert np.all(np.isfinite(cv["scores"])) and cv["scores"][0].argmin() == list(GRID[::2]).index(res.lam)
    assert res.estimator.lam == res.lam and res.estimator.loss_.relative


def test_logcosh_front_end_is_scale_equivariant(robust_data):
    deg = robust_data.assign(y=DEG * robust_data["y"])
    a = _fit(robust_data, loss="logcosh", lam="gcv", lam_grid=GRID)
    b = _fit(deg, loss="logcosh", lam="gcv", lam_grid=GRID)
    assert a.lam == b.lam
    np.testing.assert_allclose(b.fitted.values, DEG * a.fitted.values, rtol=1e-5, atol=1e-6 * DEG)


def test_robust_loss_on_sparse_responses_uses_the_exact_partial_stand_in():
    """Sparse responses with logcosh: lambda from the exact partial ridge's own path, scaled by gamma / 2."""
    rng = np.random.default_rng(4)
    n, s = 60, np.linspace(0, 1, 12)
    a = rng.normal(size=(n, 2))
    rows = []
    for i in range(n):
        t = np.sort(rng.uniform(0, 1, rng.integers(3, 9)))
        rows += [(i, ti, yi) for ti, yi in zip(t, np.tanh(a[i, 0]) * np.sin(2 * np.pi * t) + 0.1 * rng.normal(
            size=t.size), strict=True)]
    long = pd.DataFrame(rows, columns=["sample", "location", "value"])
    ds = xr.Dataset({"y": from_long(long, name="y"),
                     "x": (("sample", "s"), a[:, :1] * np.sin(np.pi * s) + a[:, 1:] * s)},
                    coords={"s": s})
    grid = np.geomspace(1e-5, 1e-1, 5)
    square = FunctionalRegression("y ~ x", data=ds, domain=(0, 1), lam="loo", lam_grid=grid, progress=False).fit()
    robust = FunctionalRegression("y ~ x", data=ds, domain=(0, 1), lam="loo", lam_grid=grid, loss="logcosh(4)",
                                  progress=False).fit()
    assert square.solver == "exact_partial" and robust.solver == "iterative"
    np.testing.assert_allclose(robust.criteria.loo, square.criteria.loo, rtol=1e-12)
    assert robust.lam == pytest.approx(square.lam * 2.0, rel=1e-12)
    assert robust.estimator.dictionary_.n_atoms_ == 8 and robust.estimator.converged_
