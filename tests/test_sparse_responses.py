"""Sparse, irregular responses (3-8 random locations per curve) through the front end and the estimator."""

import warnings

import numpy as np
import pandas as pd
import pytest
import xarray as xr

from fdakpl import BSpline, FunctionalRegression, Gaussian, KPLRegressor
from fdakpl.data.functional import Observations, from_long, observations_from_long
from fdakpl.data.preprocessing import MeanFunction, center_responses, location_cells
from fdakpl.solvers.partial import exact_partial_ridge
from fdakpl.solvers.points import point_design
from fdakpl.tuning.partial import exact_partial_path

S = np.linspace(0, 1, 30)
THETA = np.linspace(0, 1, 101)


def _truth(a, t):
    return (np.cos(3 * t)[None] + 1.5 * np.sin(2 * np.pi * t)[None] * np.tanh(a[:, :1])
            + (a[:, 1:2] ** 2 - 1) * t[None])


def _sparse(seed, n=120, n_test=100, m=(3, 8), noise=0.3):
    """Training Dataset (sparse response put in the Dataset by from_long), its long form, test inputs and truth."""
    rng = np.random.default_rng(seed)
    a = rng.normal(size=(n + n_test, 2))
    X = a[:, :1] * np.sin(np.pi * S) + a[:, 1:2] * np.cos(np.pi * S) + 0.1 * rng.normal(size=(n + n_test, S.size))
    rows = []
    for i in range(n):
        t = np.sort(rng.uniform(0, 1, rng.integers(m[0], m[1] + 1)))
        rows += list(zip([i] * t.size, t, _truth(a[i:i + 1], t)[0] + noise * rng.normal(size=t.size), strict=True))
    long = pd.DataFrame(rows, columns=["sample", "location", "value"])
    x = xr.DataArray(X, dims=("sample", "s"), coords={"sample": np.arange(n + n_test), "s": S})
    train = xr.Dataset({"y": from_long(long, name="y"), "x": x.isel(sample=slice(0, n))})
    return train, long, x.isel(sample=slice(n, None)), _truth(a[n:], THETA), _truth(a[:n], THETA)


@pytest.fixture(scope="module")
def sparse():
    return _sparse(0)


def test_front_end_on_sparse_responses_beats_the_training_mean_and_reports_its_choice(sparse):
    train, _long, x_test, F, _ = sparse
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no RuntimeWarning from a vanishing total sum of squares
        res = FunctionalRegression("y ~ x", data=train, domain=(0, 1), progress=False).fit()
        r2 = res.r2
        text = str(res.summary())
    assert res.solver == "exact_partial" and "sparse responses" in res.solver_reason
    assert res.estimator.dictionary_.n_atoms_ == 8 and "BSpline(8)" in res.solver_reason
    assert "exact_partial" in text and "BSpline(n_atoms=8" in text
    assert np.isfinite(r2) and 0.3 < r2 < 1.0
    pred = res.estimator.predict({"x": x_test}, at=THETA).values
    centre = res.estimator.mean_(THETA)
    err_model = np.mean((pred - F) ** 2)
    err_mean = np.mean((centre[None] - F) ** 2)
    assert err_model < 0.5 * err_mean  # measured: about 0.2 (benchmarks/sparse_responses.py)
    # the centred responses do not vanish (the pointwise mean used to copy each location's single value)
    assert np.abs(res.estimator.nu_).max() > 0.1


def test_sparse_centre_pools_curves_and_is_smooth(sparse):
    _train, long, _x, _F, F_train = sparse
    obs, _ = observations_from_long(long)
    cells, cell_of, binned = location_cells(obs.location, (0.0, 1.0))
    assert binned and cells.size == min(64, obs.location.size // 20)
    mean = MeanFunction(obs, (0.0, 1.0))
    assert mean.smoothed
    # against the mean of the training curves' noiseless truth: closer than the raw bin means
    target = F_train.mean(axis=0)
    cnt = np.bincount(cell_of, minlength=cells.size)
    ok = cnt > 0
    bins = MeanFunction.from_values(np.bincount(cell_of, obs.location, cells.size)[ok] / cnt[ok],
                                    np.bincount(cell_of, obs.value, cells.size)[ok] / cnt[ok])
    rms = np.sqrt(np.mean((mean(THETA) - target) ** 2))
    assert rms < 0.1 and rms < np.sqrt(np.mean((bins(THETA) - target) ** 2))


def test_long_form_and_dense_with_nan_give_identical_fits(sparse):
    train, long, x_test, _F, _ = sparse
    X = train["x"]
    for kw in [dict(solver="exact_partial", lam=1e-3), dict(solver="eig", lam=1e-3),
               dict(loss="logcosh", lam=1e-3, solver_options={"tol": 1e-10})]:
        a = KPLRegressor(dictionary=BSpline(8), domain=(0.0, 1.0), **kw).fit(X, long)
        b = KPLRegressor(dictionary=BSpline(8), domain=(0.0, 1.0), **kw).fit(X, train["y"])
        np.testing.assert_allclose(a.mean_(THETA), b.mean_(THETA), rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(a.dual_coef_, b.dual_coef_, rtol=1e-6, atol=1e-9 * np.abs(a.dual_coef_).max())
        np.testing.assert_allclose(a.predict(x_test, at=THETA).values, b.predict(x_test, at=THETA).values,
                                   rtol=1e-6, atol=1e-8)
    # the front end (a Dataset, hence the dense form) fits what the estimator fits on the long form
    res = FunctionalRegression("y ~ x", data=train, domain=(0, 1), lam=1e-3, progress=False).fit()
    direct = KPLRegressor(dictionary=BSpline(8), kernel=res.estimator.kernel, lam=1e-3, solver="exact_partial",
                          domain=(0.0, 1.0)).fit({"x": X}, long)
    np.testing.assert_allclose(res.estimator.dual_coef_, direct.dual_coef_, rtol=1e-6,
                               atol=1e-9 * np.abs(direct.dual_coef_).max())


def test_robust_loss_on_irregular_long_form():
    """Issue 14: a robust loss with irregular long-form responses raised IndexError (the robust centre kept its own
    copy of the old binning). One centring step now serves every loss: same cells as the mean, and robust."""
    rng = np.random.default_rng(3)
    n = 60
    X = rng.normal(size=(n, 2))
    rows = [(i, t, np.sin(3 * t) * X[i, 0] + 0.05 * rng.normal()) for i in range(n) for t in rng.uniform(0, 1, 5)]
    long = pd.DataFrame(rows, columns=["sample", "location", "value"])
    model = KPLRegressor(loss="logcosh").fit(X, long)
    assert model.mean_.smoothed and model.predict(X[:3]).shape[0] == 3
    # gross outliers on 4 curves move the mean centre, not the robust one
    bad = long["sample"].isin([0, 1, 2, 3])
    dirty = long.assign(value=np.where(bad, long["value"] + 50.0, long["value"]))
    obs_clean, _ = observations_from_long(long)
    obs_dirty, _ = observations_from_long(dirty)
    deriv = model.loss_.derivative
    clean = center_responses(obs_clean, (0.0, 1.0), derivative=deriv)[0](THETA)
    robust = center_responses(obs_dirty, (0.0, 1.0), derivative=deriv)[0](THETA)
    mean = center_responses(obs_dirty, (0.0, 1.0))[0](THETA)
    assert np.abs(mean - clean).max() > 1.0
    assert np.abs(robust - clean).max() < 0.25
    fitted = KPLRegressor(loss="logcosh").fit(X, dirty)
    np.testing.assert_allclose(fitted.mean_(THETA), center_responses(
        obs_dirty, fitted.response_info_.domain, derivative=fitted.loss_.derivative)[0](THETA), rtol=1e-12)


def test_centre_cells_do_not_depend_on_the_form():
    """On a common grid the centre is pointwise whatever the form; locations seen once are binned in both forms."""
    grid = np.linspace(0, 1, 7)
    Y = np.arange(21.0).reshape(3, 7)
    Y[0, 2] = np.nan
    obs = Observations.from_dense(Y, grid)
    mean = MeanFunction(obs, (0.0, 1.0))
    np.testing.assert_allclose(mean(grid), np.nanmean(Y, axis=0))
    assert not mean.smoothed
    cells_dense = location_cells(obs.location, (0.0, 1.0))
    long = pd.DataFrame({"sample": obs.index, "location": obs.location, "value": obs.value})
    cells_long = location_cells(observations_from_long(long)[0].location, (0.0, 1.0))
    np.testing.assert_array_equal(cells_dense[0], cells_long[0])
    assert cells_dense[2] is cells_long[2] is False


def _brute_force_loo(K, B, phi, obs, w, lam):
    """Refit the exact partial ridge without each curve (objective's 1/n kept: lambda * n / (n - 1) on n - 1)."""
    n = obs.n_samples
    total = 0.0
    for i in range(n):
        keep = np.setdiff1d(np.arange(n), [i])
        out = obs.index != i
        res = exact_partial_ridge(K[np.ix_(keep, keep)], B, point_design(obs.subset(keep), phi[out], w[out]),
                                  lam * n / (n - 1), tol=1e-13)
        pts = obs.index == i
        r = obs.value[pts] - phi[pts] @ (K[i, keep] @ res.coef @ B)
        total += float(np.sum(w[pts] * r**2))
    return total / n


def test_exact_partial_loo_equals_brute_force_refits():
    rng = np.random.default_rng(5)
    n = 14
    X = rng.normal(size=(n, 2))
    idx, loc, val = [], [], []
    for i in range(n):
        t = np.sort(rng.uniform(0, 1, rng.integers(2, 7)))
        idx += [i] * t.size
        loc += list(t)
        val += list(np.sin(3 * t) * X[i, 0] + 0.1 * rng.normal(size=t.size))
    obs = Observations(np.array(idx), np.array(loc), np.array(val), n)
    phi = BSpline(5).fit(domain=(0.0, 1.0)).evaluate(obs.location)
    K, B = Gaussian(1.3)(X), np.diag(np.linspace(1.0, 0.4, 5))
    w = (1.0 / obs.counts)[obs.index]
    lams = np.array([1e-4, 1e-2, 1.0])
    crit = exact_partial_path(K, B, phi, obs, w, lams)
    for j, lam in enumerate(lams):
        np.testing.assert_allclose(crit.loo[j], _brute_force_loo(K, B, phi, obs, w, lam), rtol=1e-8)
        fit = exact_partial_ridge(K, B, point_design(obs, phi, w), lam, tol=1e-13)
        r = obs.value - np.einsum("pd,pd->p", phi, fit.fitted_coef[obs.index])
        np.testing.assert_allclose(crit.train_mse[j], np.sum(w * r**2) / n, rtol=1e-8)


def test_front_end_chooses_the_exact_partial_lambda_by_its_own_loo():
    train, long, _x, _F, _ = _sparse(1, n=30, n_test=1)
    grid = np.geomspace(1e-5, 1e-1, 5)
    res = FunctionalRegression("y ~ x", data=train, domain=(0, 1), lam="loo", lam_grid=grid, progress=False).fit()
    assert res.solver == "exact_partial" and not any("proxy" in note for note in res.notes)
    est = res.estimator
    obs, _ = observations_from_long(long)
    obs_c = obs.with_values(obs.value - est.mean_(obs.location))
    w = (1.0 / obs.counts)[obs.index]
    phi = est.dictionary_.evaluate(obs.location)
    brute = [_brute_force_loo(est.K_, est.B_, phi, obs_c, w, lam) for lam in grid]
    np.testing.assert_allclose(res.criteria.loo, brute, rtol=1e-7)
    assert res.lam == grid[int(np.argmin(brute))]


def test_centre_from_streamed_sums_equals_the_centre_from_points(sparse):
    """The approximate (streamed) estimator sees only sums and counts per grid point: same cells, same centre."""
    train, long, _x, _F, _ = sparse
    Y = train["y"]
    values, grid = Y.values, Y["location"].values
    obs = Observations.from_dense(values, grid)
    sums, counts = np.nansum(values, axis=0), np.sum(~np.isnan(values), axis=0)
    streamed = MeanFunction.from_sums(grid, sums, counts, (0.0, 1.0))
    assert streamed.smoothed  # (sums in another order: the spline's GCV agrees to rounding)
    np.testing.assert_allclose(streamed(THETA), MeanFunction(obs, (0.0, 1.0))(THETA), rtol=1e-7, atol=1e-8)
    full = np.random.default_rng(0).normal(size=(5, 7))  # a common grid: pointwise
    g7 = np.linspace(0, 1, 7)
    np.testing.assert_allclose(MeanFunction.from_sums(g7, full.sum(0), np.full(7, 5), (0.0, 1.0))(g7),
                               full.mean(0), rtol=1e-12)


def test_approximate_estimator_centres_sparse_responses(sparse):
    from fdakpl import ApproxKPLRegressor, Nystroem

    train, long, _x, _F, _ = sparse
    exact = KPLRegressor(dictionary=BSpline(8), lam=1e-3, domain=(0.0, 1.0)).fit(train["x"], train["y"])
    approx = ApproxKPLRegressor(dictionary=BSpline(8), lam=1e-3, domain=(0.0, 1.0),
                                approx=Nystroem(40, random_state=0)).fit(train["x"], train["y"])
    assert approx.mean_.smoothed
    np.testing.assert_allclose(approx.mean_(THETA), exact.mean_(THETA), rtol=1e-7, atol=1e-8)
