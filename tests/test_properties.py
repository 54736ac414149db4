"""Property-based tests (hypothesis): conversions, invariances of the fit, solver agreement."""

import importlib.util
import warnings

import numpy as np
import pytest
import xarray as xr
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from fdakpl import Fourier, Gaussian, KPLRegressor, Wavelet
from fdakpl.data.functional import Observations, from_long, observations_from_long, to_long
from fdakpl.solvers.closed_form import brute_force_ridge, decompose, ridge_coef, ridge_sylvester

SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
finite = st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False, width=64)


@st.composite
def grids(draw, min_size=1, max_size=8):
    pts = draw(st.lists(st.floats(-100, 100, allow_nan=False, width=64), min_size=min_size, max_size=max_size,
                        unique=True))
    pts = np.sort(np.asarray(pts, dtype=float))
    if pts.size > 1 and np.min(np.diff(pts)) < 1e-6:  # from_long matches locations to the grid at 1e-12
        pts = np.arange(pts.size, dtype=float)
    return pts


@st.composite
def functional_arrays(draw, max_n=6, max_m=8):
    grid = draw(grids(max_size=max_m))
    n = draw(st.integers(1, max_n))
    values = draw(arrays(np.float64, (n, grid.size), elements=finite))
    mask = draw(arrays(np.bool_, (n, grid.size)))
    values = np.where(mask, np.nan, values)
    labels = draw(st.one_of(
        st.lists(st.text("abcxyz_", min_size=1, max_size=4), min_size=n, max_size=n, unique=True),
        st.lists(st.integers(-50, 50), min_size=n, max_size=n, unique=True)))
    return xr.DataArray(values, dims=("sample", "theta"), coords={"sample": labels, "theta": grid}, name="y")


# ----------------------------------------------------------------------------- dense <-> long
@SETTINGS
@given(functional_arrays())
def test_dense_long_round_trip(da):
    df = to_long(da)
    assert len(df) == int(np.sum(~np.isnan(da.values)))
    assert np.all(np.isfinite(df["value"]))
    back = from_long(df, grid=da.theta.values)
    xr.testing.assert_identical(back, da)
    # the irregular (long) route sees the same observed points as the dense one
    obs_long, labels = observations_from_long(df)
    obs_dense = Observations.from_dense(da.values, da.theta.values)
    np.testing.assert_array_equal(labels, da.sample.values)
    np.testing.assert_array_equal(obs_long.index, obs_dense.index)
    np.testing.assert_array_equal(obs_long.location, obs_dense.location)
    np.testing.assert_array_equal(obs_long.value, obs_dense.value)
    np.testing.assert_array_equal(obs_dense.to_dense(), da.values)


@SETTINGS
@given(functional_arrays(), st.randoms(use_true_random=False))
def test_long_form_row_order_does_not_matter(da, rnd):
    df = to_long(da)
    shuffled = df.sample(frac=1.0, random_state=rnd.randint(0, 2**31 - 1))
    shuffled.attrs = dict(df.attrs)
    xr.testing.assert_identical(from_long(shuffled, grid=da.theta.values), da)


# ----------------------------------------------------------------------------- R <-> xarray
R_AVAILABLE = importlib.util.find_spec("rpy2") is not None and importlib.util.find_spec("fdakpl.r.convert") is not None


@st.composite
def r_datasets(draw):
    n = draw(st.integers(1, 5))
    m = draw(st.integers(1, 4))
    grid = np.sort(draw(st.lists(st.floats(0, 1, allow_nan=False), min_size=m, max_size=m, unique=True)))
    if m > 1 and np.min(np.diff(grid)) <= 0:
        grid = np.linspace(0, 1, m)
    curve = draw(arrays(np.float64, (n, m), elements=st.one_of(finite, st.just(np.nan))))
    num = draw(arrays(np.float64, (n,), elements=st.one_of(finite, st.just(np.nan))))
    levels = ["lo", "mid", "hi"]
    fac = np.array(draw(st.lists(st.sampled_from(levels), min_size=n, max_size=n)), dtype=object)
    labels = [f"s{i}" for i in draw(st.lists(st.integers(0, 999), min_size=n, max_size=n, unique=True))]
    ds = xr.Dataset({"num": ("sample", num), "fac": ("sample", fac, {"levels": levels}),
                     "curve": (("sample", "t"), curve)}, coords={"sample": labels, "t": grid})
    return ds, grid


@pytest.mark.skipif(not R_AVAILABLE, reason="rpy2 / fdakpl.r.convert (R bridge) is not available")
@SETTINGS
@given(r_datasets())
def test_r_xarray_round_trips(data):
    from fdakpl.r import convert as r

    ro = pytest.importorskip("rpy2.robjects")
    ds, grid = data
    df = r.xarray_to_r(ds)
    back = r.r_to_xarray(df, grids={"curve": grid})
    np.testing.assert_array_equal(back["num"].values, ds["num"].values)
    np.testing.assert_array_equal(back["curve"].values, ds["curve"].values)
    np.testing.assert_array_equal(back["curve"][back["curve"].dims[1]].values, grid)
    np.testing.assert_array_equal(np.asarray(back["fac"].values, dtype=str), np.asarray(ds["fac"].values, dtype=str))
    np.testing.assert_array_equal(np.asarray(back.sample.values, dtype=str), np.asarray(ds.sample.values, dtype=str))
    # and R -> xarray -> R is the identity on the data.frame
    again = r.xarray_to_r(back)
    assert bool(ro.baseenv["identical"](again, df)[0])


# ----------------------------------------------------------------------------- invariances of the fit
@st.composite
def problems(draw, missing=True):
    seed = draw(st.integers(0, 2**32 - 1))
    n = draw(st.integers(4, 12))
    m = draw(st.integers(6, 16))
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, 2))
    grid = np.linspace(0, 1, m)
    Y = np.sin(np.pi * np.outer(X[:, 0], grid)) + X[:, [1]] * grid + 0.1 * rng.normal(size=(n, m))
    if missing:
        mask = rng.uniform(size=Y.shape) < draw(st.floats(0.0, 0.5))
        mask[:, 0] = False
        mask[0, :] = False  # every curve and every location keeps a point
        Y[mask] = np.nan
    lam = draw(st.floats(1e-5, 1.0))
    return X, Y, grid, lam, rng


def _fit(X, Y, grid, lam, dictionary=None, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return KPLRegressor(dictionary=dictionary or Fourier(2, domain=(0, 1)), kernel=Gaussian(0.8), lam=lam,
                            **kw).fit(X, Y, locations=grid)


@SETTINGS
@given(problems())
def test_permuting_samples_permutes_predictions(p):
    X, Y, grid, lam, rng = p
    perm = rng.permutation(X.shape[0])
    a, b = _fit(X, Y, grid, lam), _fit(X[perm], Y[perm], grid, lam)
    Xn = rng.uniform(-1, 1, size=(5, 2))
    scale = max(1.0, np.abs(a.predict(Xn)).max())
    np.testing.assert_allclose(b.predict(Xn), a.predict(Xn), rtol=1e-8, atol=1e-9 * scale)
    np.testing.assert_allclose(b.predict(X[perm]), a.predict(X)[perm], rtol=1e-8, atol=1e-9 * scale)
    np.testing.assert_allclose(b.dual_coef_, a.dual_coef_[perm], rtol=1e-6, atol=1e-8 * np.abs(a.dual_coef_).max())


@SETTINGS
@given(problems(missing=True), st.lists(st.floats(0.001, 0.999), min_size=1, max_size=5, unique=True))
def test_adding_unobserved_points_changes_nothing(p, extra):
    X, Y, grid, lam, rng = p
    Y[1, 1] = np.nan  # partially observed: the plug-in estimator, which new NaN columns must not change
    extra = np.setdiff1d(np.round(extra, 6), grid)
    big = np.union1d(grid, extra)
    Ybig = np.full((Y.shape[0], big.size), np.nan)
    Ybig[:, np.searchsorted(big, grid)] = Y
    a, b = _fit(X, Y, grid, lam), _fit(X, Ybig, big, lam)
    Xn = rng.uniform(-1, 1, size=(4, 2))
    scale = max(1.0, np.abs(a.predict(Xn)).max())
    np.testing.assert_allclose(b.predict(Xn, at=grid), a.predict(Xn), rtol=1e-10, atol=1e-12 * scale)
    np.testing.assert_allclose(b.dual_coef_, a.dual_coef_, rtol=1e-9, atol=1e-12 * np.abs(a.dual_coef_).max())


@SETTINGS
@given(problems(missing=True), st.floats(0.01, 100.0), st.floats(-50.0, 50.0), st.sampled_from(["fourier", "wavelet"]))
def test_rescaling_locations_with_the_domain_changes_nothing(p, scale, shift, family):
    X, Y, grid, lam, rng = p

    def dic(lo, hi):
        return Fourier(2, domain=(lo, hi)) if family == "fourier" else Wavelet("db2", level=2, domain=(lo, hi))

    a = _fit(X, Y, grid, lam, dic(0.0, 1.0))
    b = _fit(X, Y, scale * grid + shift, lam, dic(shift, scale + shift))
    Xn = rng.uniform(-1, 1, size=(4, 2))
    ref = a.predict(Xn)
    np.testing.assert_allclose(b.predict(Xn), ref, rtol=1e-7, atol=1e-9 * max(1.0, np.abs(ref).max()))


# ----------------------------------------------------------------------------- solver agreement
@st.composite
def systems(draw):
    seed = draw(st.integers(0, 2**32 - 1))
    n = draw(st.integers(2, 7))
    d = draw(st.integers(1, 5))
    rng = np.random.default_rng(seed)
    K = Gaussian(draw(st.floats(0.3, 3.0)))(rng.normal(size=(n, 3)))

    def spd(k, lo, hi):
        Q, _ = np.linalg.qr(rng.normal(size=(k, k)))
        M = (Q * rng.uniform(lo, hi, k)) @ Q.T
        return 0.5 * (M + M.T)

    return K, spd(d, 0.1, 2.0), spd(d, 0.5, 2.0), rng.normal(size=(n, d)), draw(st.floats(1e-6, 10.0))


@SETTINGS
@given(systems())
def test_eig_sylvester_and_brute_force_agree(system):
    K, G, B, N, lam = system
    ref = brute_force_ridge(K, G, B, N, lam)
    cond = np.linalg.cond(np.kron(K, G @ B) + K.shape[0] * lam * np.eye(ref.size))
    tol = max(1e-10, 100 * cond * np.finfo(float).eps)
    norm = np.linalg.norm(ref)
    dec = decompose(K, G, B, N)
    assert np.linalg.norm(ridge_coef(dec, lam) - ref) <= tol * norm
    assert np.linalg.norm(ridge_sylvester(K, G, B, N, lam) - ref) <= tol * norm
    assert np.linalg.norm(ridge_coef(dec, lam, times_B=True) - ref @ B) <= tol * np.linalg.norm(ref @ B) * 10
    # the defining equation K A (B G) + n lam A = N holds
    A = ridge_coef(dec, lam)
    resid = K @ A @ B @ G + K.shape[0] * lam * A - N
    assert np.linalg.norm(resid) <= tol * (np.linalg.norm(N) + np.linalg.norm(K) * np.linalg.norm(A) * 10)


@SETTINGS
@given(problems(missing=False))
def test_estimator_solvers_agree_on_random_problems(p):
    X, Y, grid, lam, _ = p
    e = _fit(X, Y, grid, lam, solver="eig")
    s = _fit(X, Y, grid, lam, solver="sylvester")
    scale = np.abs(e.dual_coef_).max()
    np.testing.assert_allclose(s.dual_coef_, e.dual_coef_, rtol=1e-6, atol=1e-8 * scale)
    ref = brute_force_ridge(e.K_, e.gram_, e.B_, e.nu_, lam)
    np.testing.assert_allclose(e.dual_coef_, ref, rtol=1e-6, atol=1e-8 * scale)
