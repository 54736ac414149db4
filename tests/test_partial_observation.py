"""Partially observed responses with gaps (issue 24, item 1): integration weights that integrate, the Gram check,
and predictions that do not move when the deleted points carry no information."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import xarray as xr

from fdakpl import Fourier, FunctionalRegression, Gaussian, KPLRegressor
from fdakpl.data.functional import Observations, quadrature_weights
from fdakpl.data.integration import (
    GRAM_TOLERANCE,
    auto_integration,
    curve_quadrature_weights,
    describe_integration,
    fill_gaps,
    gram_deviation,
    integration_weights,
    observed_locations,
    projection_points,
)
from fdakpl.ridge.problem import integration_notice, prepare_problem

#: an uneven grid as in the issue: a point every 0.02, then every 0.1 (the domain [0, 1] is covered)
UNEVEN = np.concatenate([np.arange(0, 0.4, 0.02), np.arange(0.4, 1.0001, 0.1)])


def _gappy(rng, n=8, grid=UNEVEN):
    """Curves on ``grid`` with a random interior gap per curve and random single missing points (ends kept)."""
    Y = rng.normal(size=(n, grid.size))
    for i in range(n):
        a = rng.integers(1, grid.size - 6)
        Y[i, a:a + rng.integers(1, 5)] = np.nan
    Y[:, 0] = Y[:, -1] = 1.0
    return Y


# --------------------------------------------------------------------------- per-curve quadrature weights
def test_curve_weights_integrate_linear_functions_exactly_on_uneven_grids_with_gaps(rng):
    Y = _gappy(rng)
    obs = Observations.from_dense(Y, UNEVEN)
    w = curve_quadrature_weights(obs, (0.0, 1.0))
    sums = np.bincount(obs.index, w)
    np.testing.assert_allclose(sums, 1.0, rtol=1e-13)  # every curve's weights cover the domain
    for a, b in [(2.0, -3.0), (0.5, 7.0)]:  # the trapezoid is exact for linear functions (ends observed)
        got = np.bincount(obs.index, w * (a + b * obs.location))
        np.testing.assert_allclose(got, a + b / 2, rtol=1e-13)


def test_curve_weights_converge_on_smooth_functions_at_the_trapezoid_rate(rng):
    """x^2 and cos: the error is the trapezoid's, bounded by max|f''| h^2 (b - a) / 12 with h the widest step."""
    grid = np.sort(np.concatenate([[0.0, 1.0], rng.uniform(0, 1, 400)]))
    Y = np.ones((3, grid.size))
    Y[0, 50:70] = np.nan
    Y[1, ::3] = np.nan
    obs = Observations.from_dense(Y, grid)
    w = curve_quadrature_weights(obs, (0.0, 1.0))
    for i in range(3):
        t = obs.location[obs.index == i]
        h = np.diff(t).max()
        for f, exact, f2 in [(lambda s: s**2, 1 / 3, 2.0), (lambda s: np.cos(3 * s), np.sin(3.0) / 3, 9.0)]:
            got = float(np.sum(w[obs.index == i] * f(t)))
            assert abs(got - exact) <= f2 * h**2 / 12 + 1e-14


def test_curve_weights_equal_the_grid_quadrature_when_fully_observed_and_keep_any_point_order():
    obs = Observations.from_dense(np.ones((2, UNEVEN.size)), UNEVEN)
    np.testing.assert_allclose(curve_quadrature_weights(obs, (0.0, 1.0)),
                               np.tile(quadrature_weights(UNEVEN, (0.0, 1.0)), 2), rtol=1e-14)
    # points of a curve given out of order: the same weight per point
    perm = np.array([2, 0, 1, 3, 5, 4])
    o = Observations(np.array([0, 0, 0, 1, 1, 1])[perm], np.array([0.0, 0.5, 1.0, 0.1, 0.2, 0.9])[perm],
                     np.zeros(6), 2)
    np.testing.assert_allclose(curve_quadrature_weights(o, (0.0, 1.0)),
                               np.array([0.25, 0.5, 0.25, 0.15, 0.4, 0.45])[perm], rtol=1e-14)


def test_interpolants_integrate_the_atoms_exactly_where_the_curve_is_linear():
    """Deleted points of a curve that is linear across its gaps: its interpolant is the curve itself, so the
    projections on the atoms equal the fully observed curve's."""
    a, b = np.array([1.0, -2.0, 0.5]), np.array([3.0, 0.5, -1.0])
    full = a[:, None] + b[:, None] * UNEVEN
    gappy = full.copy()
    gappy[0, 5:12] = gappy[1, [3, 20, 21]] = gappy[2, 1:-1:2] = np.nan
    phi = Fourier(4).fit(Observations.from_dense(full, UNEVEN), domain=(0, 1)).evaluate(UNEVEN)
    nus = []
    for Y in (full, gappy):
        pts, w, mode = projection_points(Observations.from_dense(Y, UNEVEN), (0.0, 1.0), "interpolate")
        assert mode == "interpolate" and pts.fully_observed
        nus.append((pts.to_dense() * w.reshape(3, -1)) @ phi)
    np.testing.assert_allclose(nus[1], nus[0], rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(fill_gaps(Observations.from_dense(gappy, UNEVEN)).to_dense(), full, rtol=1e-13)


def test_auto_picks_by_shape():
    grid = np.linspace(0, 1, 60)
    full = np.ones((4, 60))
    assert auto_integration(Observations.from_dense(full, grid)) == "quadrature"
    gaps = full.copy()
    gaps[:2, 20:30] = np.nan
    assert auto_integration(Observations.from_dense(gaps, grid)) == "interpolate"
    sparse = np.full((4, 60), np.nan)
    for i in range(4):
        sparse[i, 5 * i:5 * i + 6] = 1.0
    assert auto_integration(Observations.from_dense(sparse, grid)) == "plugin"
    o = Observations(np.repeat(np.arange(3), 2), np.array([0.1, 0.7, 0.3, 0.4, 0.2, 0.9]), np.ones(6), 3)  # no grid
    assert auto_integration(o) == "plugin" and integration_weights(o, (0, 1), "quadrature")[1] == "quadrature"
    long = Observations(np.repeat(np.arange(2), 30), np.tile(np.linspace(0, 1, 30), 2), np.ones(60), 2)
    assert auto_integration(long) == "interpolate"  # long form: on the distinct observed locations
    spread = Observations(np.repeat(np.arange(2), 3000), np.linspace(0, 1, 6000), np.ones(6000), 2)
    assert auto_integration(spread) == "quadrature"  # 6000 distinct locations: no interpolation grid
    with pytest.raises(ValueError, match="integration must be one of"):
        integration_weights(o, (0, 1), "trapezoid")
    assert describe_integration("plugin", "plugin", False).endswith("(requested)")


# --------------------------------------------------------------------------- the Gram check
def test_gram_deviation_against_brute_force_and_the_issue_numbers(rng):
    """Per-curve Gram matrices by hand; on an uneven grid with a block missing from half the curves the plug-in
    weights are far from orthonormal, quadrature on each curve's points is not (issue 24: 0.47 against 0.009)."""
    grid = np.concatenate([np.arange(0, 0.5, 0.005), np.arange(0.5, 1.0001, 0.025)])
    Y = np.ones((6, grid.size))
    Y[:3, 40:55] = np.nan  # a block missing by design from half the curves
    obs = Observations.from_dense(Y, grid)
    dic = Fourier(10).fit(obs, domain=(0.0, 1.0))
    phi, G = dic.evaluate(grid), dic.gram()
    for mode in ("plugin", "quadrature"):
        w, _ = integration_weights(obs, (0.0, 1.0), mode)
        dev = gram_deviation(obs, w, phi, G, chunk=500)  # several blocks of curves
        brute = []
        for i in range(6):
            on = obs.index == i
            P = phi[obs.grid_index[on]]
            brute.append(np.abs((P * w[on, None]).T @ P - G).max() / G.diagonal().max())
        np.testing.assert_allclose(dev, brute, rtol=1e-12, atol=1e-15)
        if mode == "plugin":
            assert dev.max() > 0.4  # equal weight per point: the dense half counts 5 times more
        else:
            assert dev[3:].max() < 0.02  # complete curves: the grid quadrature (0.015: the 10th frequency)


def test_a_curve_with_three_points_gets_a_notice_naming_it(rng):
    grid = np.linspace(0, 1, 40)
    Y = rng.normal(size=(6, 40))
    Y[2, 3:] = np.nan
    da = xr.DataArray(Y, dims=("sample", "t"), coords={"sample": list("abcdef"), "t": grid})
    X = rng.normal(size=(6, 2))
    for integration in ("quadrature", "plugin", "interpolate"):
        p = prepare_problem(X, da, dictionary="fourier", integration=integration)
        msg = integration_notice(p)
        assert msg is not None and msg.startswith("1 of 6 curves") and "curve 'c'" in msg
        assert "3 points" in msg
        if integration != "interpolate":
            assert p.gram_deviation[2] > GRAM_TOLERANCE and (np.delete(p.gram_deviation, 2) < GRAM_TOLERANCE).all()
        with pytest.warns(UserWarning, match="1 of 6 curves"):
            KPLRegressor(dictionary="fourier", kernel=Gaussian(1.0), lam=1e-2, integration=integration).fit(X, da)
    full = prepare_problem(X, np.nan_to_num(Y), grid, dictionary="fourier")
    assert integration_notice(full) is None


# --------------------------------------------------------------------------- invariance and the front end
def _linear_curves(rng, n=30):
    """Responses linear in t whose coefficients are smooth functions of a scalar input."""
    x = np.sort(rng.uniform(-1, 1, n))
    Y = np.sin(2 * x)[:, None] + np.cos(x)[:, None] * UNEVEN
    return xr.Dataset({"x": ("sample", x), "y": (("sample", "t"), Y)}, coords={"t": UNEVEN})


def test_predictions_do_not_move_when_the_deleted_points_carry_no_information(rng):
    """Curves linear in t lose interior points (a block by design in half the curves, scattered points in
    others): their interpolants are the curves, so the default fit and its predictions are identical; the
    plug-in (the former default) moves."""
    ds = _linear_curves(rng)
    gappy = ds.copy(deep=True)
    Y = gappy["y"].values
    Y[::2, 8:14] = np.nan
    Y[1::4, [3, 22, 23]] = np.nan
    gappy["y"] = gappy["y"].copy(data=Y)
    new = ds.isel(sample=slice(0, 30, 3))
    kw = dict(center=False, progress=False, dictionary=Fourier(5))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        full = FunctionalRegression("y ~ x", ds, **kw).fit()
        gap = FunctionalRegression("y ~ x", gappy, **kw).fit()
        plug_full = FunctionalRegression("y ~ x", ds, integration="plugin", **kw).fit()
        plug_gap = FunctionalRegression("y ~ x", gappy, integration="plugin", **kw).fit()
    assert gap.estimator.integration_ == "interpolate" and full.estimator.integration_ == "quadrature"
    assert gap.lam == full.lam
    assert gap.kernels["scalars"].sigma == pytest.approx(full.kernels["scalars"].sigma, rel=1e-12)
    p_full, p_gap = full.predict(new).values, gap.predict(new).values
    np.testing.assert_allclose(p_gap, p_full, rtol=1e-8, atol=1e-10 * np.abs(p_full).max())
    moved = np.abs(plug_gap.predict(new).values - plug_full.predict(new).values).max()
    assert moved > 1e-4 * np.abs(p_full).max()


def test_summary_says_which_integration_ran_and_why(rng):
    ds = _linear_curves(rng)
    Y = ds["y"].values.copy()
    Y[::2, 8:14] = np.nan
    ds["y"] = ds["y"].copy(data=Y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = FunctionalRegression("y ~ x", ds, progress=False, dictionary=Fourier(3)).fit()
        forced = FunctionalRegression("y ~ x", ds, progress=False, dictionary=Fourier(3), integration="plugin").fit()
    text = str(res.summary())
    assert "Integration: interpolate (auto: dense curves with gaps)" in " ".join(text.split())
    full = " ".join(str(res.summary(diagnostics="full")).split())
    expected = "interpolate: trapezoid on the grid of each curve's linear interpolant (auto: dense curves with gaps)"
    assert expected in full
    assert "(requested)" in str(forced.summary()) and forced.estimator.integration_ == "plugin"
    with pytest.raises(ValueError, match="integration must be one of"):
        FunctionalRegression("y ~ x", ds, integration="trapz")


def test_kfold_cv_integrates_the_interpolants_as_the_fit_does(rng):
    """lam='cv' on curves with gaps: each fold's training side is the interpolants with the grid's weights, so at
    the fold level the K-fold closed form agrees with refits of the estimator."""
    from fdakpl.tuning.kfold_grid import kfold_grid

    ds = _linear_curves(rng, n=20)
    Y = ds["y"].values.copy()
    Y[::2, 8:14] = np.nan
    X = ds["x"].values[:, None]
    K = Gaussian(0.7)(X)
    folds = [(np.arange(20)[np.arange(20) % 4 != f], np.arange(20)[np.arange(20) % 4 == f]) for f in range(4)]
    lams = np.array([1e-3, 1e-1])
    grid_scores = kfold_grid(K, Y, UNEVEN, [Fourier(3)], [None], lams, folds, integration="interpolate")
    for f, (tr, te) in enumerate(folds):
        for j, lam in enumerate(lams):
            m = KPLRegressor(dictionary=Fourier(3), kernel=Gaussian(0.7), output_matrix=None, lam=lam,
                             integration="interpolate", domain=(0.0, 1.0)).fit(X[tr], Y[tr], locations=UNEVEN)
            pred = m.predict(X[te], at=UNEVEN)
            obs = ~np.isnan(Y[te])
            r2 = np.where(obs, (Y[te] - np.asarray(pred)) ** 2, 0.0)
            want = float(np.mean(r2.sum(axis=1) / obs.sum(axis=1)))
            assert grid_scores[0, 0, f, j] == pytest.approx(want, rel=1e-8)


def test_interpolate_is_the_quadrature_fit_of_the_filled_curves(rng):
    """Without centring, integration='interpolate' on curves with gaps is the fully observed fit of the curves
    filled by linear interpolation: coefficients, the path's criteria (train MSE, edf, leave-one-curve-out; GCV
    with the observed points' count) and predictions."""
    X = rng.normal(size=(12, 2))
    Y = np.sin(np.outer(X[:, 0], 3 * UNEVEN)) + 0.1 * rng.normal(size=(12, UNEVEN.size))
    gappy = Y.copy()
    gappy[::2, 6:15] = np.nan
    gappy[1::3, -3:] = np.nan  # the end missing: constant beyond the last point
    filled = np.stack([np.interp(UNEVEN, UNEVEN[np.isfinite(r)], r[np.isfinite(r)]) for r in gappy])
    kw = dict(dictionary=Fourier(4), kernel=Gaussian(1.0), output_matrix=None, center=False, lam=1e-3)
    a = KPLRegressor(**kw).fit(X, gappy, locations=UNEVEN)
    b = KPLRegressor(**kw).fit(X, filled, locations=UNEVEN)
    assert (a.integration_, b.integration_) == ("interpolate", "quadrature")
    np.testing.assert_allclose(a.dual_coef_, b.dual_coef_, rtol=1e-10, atol=1e-12)
    lams = np.array([1e-4, 1e-2, 1.0])
    ca, cb = a.path_.criteria(lams), b.path_.criteria(lams)
    for name in ("train_mse", "loo", "edf"):
        np.testing.assert_allclose(getattr(ca, name), getattr(cb, name), rtol=1e-9, err_msg=name)
    # GCV counts the observed points (the data), not the grid points of the interpolants
    n_obs = int(np.isfinite(gappy).sum())
    np.testing.assert_allclose(ca.gcv, ca.train_mse / (1 - ca.edf / n_obs) ** 2, rtol=1e-9)
    np.testing.assert_allclose(a.predict(X[:3]), b.predict(X[:3]), rtol=1e-10, atol=1e-12)


def test_gram_deviation_on_a_grid_equals_the_per_curve_sums_in_any_block_size():
    """The grid route (one product W x (phi phi^T) per block of distinct rows of weights) against each curve's sum
    over its points, with curves that share their points and one without points."""
    from fdakpl.data.functional import Observations
    from fdakpl.data.integration import gram_deviation, integration_weights

    gen = np.random.default_rng(1)
    grid = np.sort(gen.uniform(0, 1, 40))
    Y = gen.normal(size=(30, 40))
    Y[gen.uniform(size=Y.shape) < 0.3] = np.nan
    Y[20:25] = gen.normal(size=(5, 40))  # complete curves: one row of weights, computed once for all of them
    Y[25:28, 5:12] = np.nan  # three curves seen at the same points
    Y[28, :] = np.nan  # a curve without points: G_i = 0
    obs = Observations.from_dense(Y, grid)
    phi = np.stack([np.ones(40), np.cos(2 * np.pi * grid), np.sin(2 * np.pi * grid)], axis=1)
    G = np.diag([1.0, 0.5, 0.5])
    for mode in ("plugin", "quadrature"):
        w, _ = integration_weights(obs, (0.0, 1.0), mode)
        slow = np.empty(30)
        for i in range(30):
            sel = obs.index == i
            P = phi[obs.grid_index[sel]]
            slow[i] = np.abs((P * w[sel, None]).T @ P - G).max()
        for chunk in (9, 20, 1 << 20):  # one curve, a few curves, all curves per block
            np.testing.assert_allclose(gram_deviation(obs, w, phi, G, chunk=chunk), slow, rtol=0, atol=1e-14)


def test_fill_gaps_on_a_grid_gives_numpy_interp_numbers_row_by_row():
    """The vectorised interpolation of dense curves equals ``numpy.interp`` curve by curve, bit for bit: uneven
    grids, random and block gaps, curves seen at one point or none, values of any size."""
    rng = np.random.default_rng(23)
    for _ in range(60):
        x = np.unique(rng.uniform(-5.0, 5.0, rng.integers(2, 40)))
        n = int(rng.integers(2, 25))
        Y = rng.normal(size=(n, x.size)) * 10.0 ** rng.uniform(-3, 3)
        Y[rng.uniform(size=Y.shape) < rng.uniform(0.0, 0.9)] = np.nan
        Y[0] = np.nan
        Y[1] = np.nan
        Y[1, rng.integers(0, x.size)] = 1.5
        obs = Observations.from_dense(Y, x)
        grid = observed_locations(obs)
        expected = np.zeros((n, grid.size))
        for i in range(n):
            ok = ~np.isnan(Y[i])
            if ok.any():
                expected[i] = np.interp(grid, x[ok], Y[i, ok])
        np.testing.assert_array_equal(fill_gaps(obs).to_dense(), expected)


def test_histogram_median_is_the_median_of_the_counts():
    """integration="auto"'s median number of points per curve, from a histogram (what a streamed fit sums), equals
    statistics.median of the counts themselves: odd and even totals, repeated and missing values."""
    import statistics

    from fdakpl.data.integration import histogram_median

    rng = np.random.default_rng(24)
    for _ in range(500):
        counts = rng.integers(0, int(rng.integers(1, 60)), size=int(rng.integers(1, 40)))
        assert histogram_median(np.bincount(counts)) == statistics.median(counts.tolist())
