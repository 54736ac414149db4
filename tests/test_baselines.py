"""The competitors against independent brute-force computations on tiny problems."""

import warnings

import numpy as np
import pytest
import xarray as xr
from scipy.integrate import trapezoid
from sklearn.base import clone
from sklearn.kernel_ridge import KernelRidge
from sklearn.linear_model import Ridge

from fdakpl import Fourier, Gaussian, KPLRegressor, Laplace
from fdakpl.baselines import (
    FunctionalKRR,
    KernelAdditiveModel,
    KernelEstimator,
    OneBasisEstimator,
    TripleBasisEstimator,
    fkrr_system,
    random_fourier_features,
)
from fdakpl.data.functional import to_long

from .conftest import make_problem


def _curves(rng, n=12, t=9, m=11, missing=0.0):
    """Tiny function-to-function problem as labelled DataArrays (inputs on [0, 1], outputs on [0, 1])."""
    s = np.linspace(0, 1, t)
    theta = np.linspace(0, 1, m)
    a = rng.uniform(-1, 1, size=(n, 2))
    X = a[:, :1] * np.sin(2 * np.pi * s) + a[:, 1:] * s + 0.05 * rng.normal(size=(n, t))
    Y = np.cos(np.pi * a[:, :1] * theta) + a[:, 1:] ** 2 * theta + 0.05 * rng.normal(size=(n, m))
    if missing:
        mask = rng.uniform(size=Y.shape) < missing
        mask[:, 0] = False
        Y[mask] = np.nan
    labels = [f"s{i}" for i in range(n)]
    Xda = xr.DataArray(X, dims=("sample", "s"), coords={"sample": labels, "s": s}, name="x")
    Yda = xr.DataArray(Y, dims=("sample", "theta"), coords={"sample": labels, "theta": theta}, name="y")
    return Xda, Yda


def _fill(Yda):
    """Linear interpolation of NaN along theta, constant beyond the ends (independent of fdakpl)."""
    out = Yda.copy()
    t = Yda.theta.values
    for i, row in enumerate(Yda.values):
        ok = ~np.isnan(row)
        out.values[i] = np.interp(t, t[ok], row[ok])
    return out


def _trap_w(grid):
    """Trapezoidal weights computed independently of fdakpl."""
    w = np.zeros(grid.size)
    h = np.diff(grid)
    w[:-1] += h / 2
    w[1:] += h / 2
    return w


# --------------------------------------------------------------------------- KE
def test_ke_brute_force_with_missing_values(rng):
    Xda, Yda = _curves(rng, missing=0.3)
    h = 0.2
    model = KernelEstimator(bandwidth=h).fit(Xda[:9], Yda[:9])
    pred = model.predict(Xda[9:])
    X, Y = Xda.values, Yda.values
    s = Xda.s.values
    expected = np.empty((3, Y.shape[1]))
    for a, i in enumerate(range(9, 12)):
        w = np.array([np.exp(-trapezoid((X[i] - X[j]) ** 2, s) / (2 * h**2)) for j in range(9)])
        for p in range(Y.shape[1]):
            obs = [j for j in range(9) if not np.isnan(Y[j, p])]
            expected[a, p] = sum(w[j] * Y[j, p] for j in obs) / sum(w[j] for j in obs)
    np.testing.assert_allclose(pred.values, expected, rtol=1e-10)
    assert list(pred.sample.values) == ["s9", "s10", "s11"]


def test_ke_small_bandwidth_is_nearest_neighbour_and_long_equals_dense(rng):
    Xda, Yda = _curves(rng)
    model = KernelEstimator(bandwidth=1e-6).fit(Xda, Yda)  # all weights underflow without the shift
    np.testing.assert_allclose(model.predict(Xda).values, Yda.values, atol=1e-12)
    Xda, Yda = _curves(rng, missing=0.3)
    dense = KernelEstimator(bandwidth=0.3).fit(Xda, Yda).predict(Xda)
    long = KernelEstimator(bandwidth=0.3).fit(Xda, to_long(Yda)).predict(Xda, at=Yda.theta.values)
    # long form interpolates each curve inside its observed range: equal wherever the dense form observes
    interior = np.isfinite(Yda.values).all(axis=0)
    np.testing.assert_allclose(long.values[:, interior], dense.values[:, interior], rtol=1e-10)


# --------------------------------------------------------------------------- 1BE / 3BE
def test_one_basis_estimator_equals_plugin_kpl_with_identity(rng):
    Xda, Yda = _curves(rng, missing=0.3)
    kw = dict(kernel=Gaussian(0.3), lam=1e-3, domain=(0.0, 1.0), integration="plugin")
    obe = OneBasisEstimator(Fourier(3), **kw).fit(Xda, Yda)
    kpl = KPLRegressor(dictionary=Fourier(3), output_matrix=None, **kw).fit(Xda, Yda)
    assert obe.integration_ == "plugin"
    np.testing.assert_allclose(obe.dual_coef_, kpl.dual_coef_, rtol=0, atol=1e-10)
    at = np.linspace(0, 1, 23)
    np.testing.assert_allclose(obe.predict(Xda, at=at).values, kpl.predict(Xda, at=at).values, rtol=0, atol=1e-10)
    # each coefficient is an independent kernel ridge regression (scikit-learn's, alpha = n lambda)
    K = Gaussian(0.3)(Xda.values, None, _trap_w(Xda.s.values))
    kr = KernelRidge(alpha=12 * 1e-3, kernel="precomputed").fit(K, obe.nu_)
    np.testing.assert_allclose(obe.dual_coef_, kr.dual_coef_, rtol=1e-8, atol=1e-12)


def test_triple_basis_input_coefficients_and_ridge_against_sklearn(rng):
    Xda, Yda = _curves(rng, n=15, t=41, m=31)
    m = TripleBasisEstimator(Fourier(2), Fourier(3), n_components=40, sigma=0.7, lam=1e-2, random_state=1).fit(Xda, Yda)
    s = Xda.s.values
    f = Fourier(2, domain=(0, 1)).fit()
    beta = np.array([[trapezoid(x * f.evaluate(s)[:, l], s) for l in range(5)] for x in Xda.values])
    np.testing.assert_allclose(m.input_coef_, beta, rtol=1e-10, atol=1e-12)
    Z = np.sqrt(2 / 40) * np.cos(beta @ m.omega_ + m.offset_)
    ridge = Ridge(alpha=15 * 1e-2, fit_intercept=False).fit(Z, m.nu_)
    np.testing.assert_allclose(m.weights_, ridge.coef_.T, rtol=1e-8, atol=1e-10)
    expected = Z @ ridge.coef_.T @ Fourier(3, domain=(0, 1)).fit().evaluate(Yda.theta.values).T
    expected += Yda.mean("sample").values
    np.testing.assert_allclose(m.predict(Xda).values, expected, rtol=1e-8, atol=1e-10)
    # more random features than samples switch to the dual form: same solution
    m2 = clone(m).set_params(n_components=400).fit(Xda, Yda)
    Z2 = random_fourier_features(m2.input_coef_, m2.omega_, m2.offset_)
    np.testing.assert_allclose(m2.weights_, Ridge(alpha=0.15, fit_intercept=False).fit(Z2, m2.nu_).coef_.T,
                               rtol=1e-7, atol=1e-9)


def test_random_fourier_features_approximate_the_gaussian_kernel(rng):
    Z = rng.normal(size=(6, 3))
    J = 200_000
    omega = rng.normal(0, 1 / 1.5, size=(3, J))
    R = random_fourier_features(Z, omega, rng.uniform(0, 2 * np.pi, size=J))
    np.testing.assert_allclose(R @ R.T, Gaussian(1.5)(Z), atol=0.02)


# --------------------------------------------------------------------------- FKRR
def test_fkrr_operator_on_constants_matches_closed_form():
    grid = np.linspace(0, 1, 801)
    S, w = fkrr_system(grid, (0.0, 1.0), Laplace(0.3))
    L_const = (np.sqrt(1 / w)[:, None] * S * np.sqrt(w)[None, :]) @ np.ones(grid.size)  # (K_out W) 1
    exact = 0.3 * (2 - np.exp(-grid / 0.3) - np.exp(-(1 - grid) / 0.3))
    np.testing.assert_allclose(L_const, exact, atol=1e-4)


@pytest.mark.parametrize("solver", ["eig", "sylvester"])
def test_fkrr_brute_force_kronecker(rng, solver):
    Xda, Yda = _curves(rng, n=8, m=7)
    lam = 1e-3
    model = FunctionalKRR(kernel=Gaussian(0.4), output_kernel=Laplace(0.5), lam=lam, solver=solver).fit(Xda, Yda)
    theta = Yda.theta.values
    w = _trap_w(theta)
    K = np.array([[np.exp(-trapezoid((a - b) ** 2, Xda.s.values) / (2 * 0.16)) for b in Xda.values]
                  for a in Xda.values])
    Kout = np.exp(-np.abs(theta[:, None] - theta[None, :]) / 0.5)
    L = Kout * w[None, :]  # (L y)_p = sum_q k(theta_p, theta_q) w_q y_q
    Yc = Yda.values - Yda.values.mean(axis=0)
    alpha = np.linalg.solve(np.kron(K, L) + 8 * lam * np.eye(8 * 7), Yc.reshape(-1)).reshape(8, 7)
    np.testing.assert_allclose(model.dual_coef_, alpha, rtol=1e-7, atol=1e-9)
    at = np.array([0.05, 0.5, 0.97])
    Kat = np.exp(-np.abs(at[:, None] - theta[None, :]) / 0.5) * w[None, :]
    expected = K @ alpha @ Kat.T + np.interp(at, theta, Yda.values.mean(axis=0))
    np.testing.assert_allclose(model.predict(Xda, at=at).values, expected, rtol=1e-7, atol=1e-9)


def test_fkrr_partial_responses_are_linearly_interpolated(rng):
    Xda, Yda = _curves(rng, n=10, m=9, missing=0.3)
    model = FunctionalKRR(kernel=Gaussian(0.4), output_kernel=Laplace(0.5), lam=1e-3, center=False).fit(Xda, Yda)
    filled = _fill(Yda)
    ref = FunctionalKRR(kernel=Gaussian(0.4), output_kernel=Laplace(0.5), lam=1e-3, center=False).fit(Xda, filled)
    np.testing.assert_allclose(model.dual_coef_, ref.dual_coef_, rtol=1e-10, atol=1e-12)


# --------------------------------------------------------------------------- KAM
@pytest.mark.parametrize("solver", ["eig", "sylvester"])
def test_kam_brute_force(rng, solver):
    n, t, m, J, lam = 7, 5, 6, 3, 1e-3
    Xda, Yda = _curves(rng, n=n, t=t, m=m)
    kw = dict(location_kernel=Gaussian(0.3), output_location_kernel=Gaussian(0.4), value_kernel=Gaussian(0.5))
    model = KernelAdditiveModel(n_atoms=J, lam=lam, solver=solver, **kw).fit(Xda[:n], Yda[:n])
    s, theta = Xda.s.values, Yda.theta.values
    ws, wt = _trap_w(s), _trap_w(theta)
    g = lambda a, b, sig: np.exp(-((a - b) ** 2) / (2 * sig**2))  # noqa: E731
    X = Xda.values
    A_in = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            A_in[i, j] = sum(ws[p] * ws[q] * g(s[p], s[q], 0.3) * g(X[i, p], X[j, q], 0.5)
                             for p in range(t) for q in range(t))
    np.testing.assert_allclose(model.A_in_, A_in, rtol=1e-10)
    # the cached Gram (same curves, another lambda) is the same matrix
    from fdakpl.baselines.kam import kam_input_gram

    again = kam_input_gram(model.X_fit_, model.X_fit_, model.input_grid_, model.input_weights_, Gaussian(0.3),
                           Gaussian(0.5))
    np.testing.assert_allclose(again, A_in, rtol=1e-10)
    # principal components: orthonormal for the quadrature, spanning the top eigenspace of the covariance
    psi = model.components_
    np.testing.assert_allclose(psi.T @ (wt[:, None] * psi), np.eye(J), atol=1e-10)
    Yc = Yda.values - Yda.values.mean(axis=0)
    cov = Yc.T @ Yc / (n - 1)
    ev, vec = np.linalg.eigh(np.sqrt(wt)[:, None] * cov * np.sqrt(wt)[None, :])
    top = vec[:, ::-1][:, :J]
    proj = top @ top.T
    np.testing.assert_allclose(proj @ (np.sqrt(wt)[:, None] * psi), np.sqrt(wt)[:, None] * psi, atol=1e-8)
    A_out = np.array([[sum(wt[p] * wt[q] * psi[p, a] * g(theta[p], theta[q], 0.4) * psi[q, b]
                           for p in range(m) for q in range(m)) for b in range(J)] for a in range(J)])
    C = (Yc * wt) @ psi
    alpha = np.linalg.solve(np.kron(A_in, A_out) + n * lam * np.eye(n * J), C.reshape(-1)).reshape(n, J)
    np.testing.assert_allclose(model.dual_coef_, alpha, rtol=1e-6, atol=1e-8)
    at = np.array([0.1, 0.6])
    basis_at = np.array([[sum(g(th, theta[q], 0.4) * wt[q] * psi[q, j] for q in range(m)) for j in range(J)]
                         for th in at])
    expected = A_in @ alpha @ basis_at.T + np.interp(at, theta, Yda.values.mean(axis=0))
    np.testing.assert_allclose(model.predict(Xda, at=at).values, expected, rtol=1e-6, atol=1e-8)


def test_kam_input_resampling_and_partial_responses(rng):
    Xda, Yda = _curves(rng, n=10, t=9, m=8, missing=0.25)
    model = KernelAdditiveModel(n_atoms=3, lam=1e-3, input_points=17, value_kernel=Gaussian(0.5)).fit(Xda, Yda)
    assert model.input_grid_.size == 17 and model.X_fit_.shape == (10, 17)
    filled = _fill(Yda - model.mean_(Yda.theta.values))  # centre at the observed points, then interpolate
    ref = KernelAdditiveModel(n_atoms=3, lam=1e-3, input_points=17, value_kernel=Gaussian(0.5),
                              center=False).fit(Xda, filled)
    np.testing.assert_allclose(np.abs(model.scores_), np.abs(ref.scores_), rtol=1e-8, atol=1e-10)


# --------------------------------------------------------------------------- API
ALL = [KernelEstimator(0.5), OneBasisEstimator(),
       TripleBasisEstimator("hat", n_components=100, sigma=3.0, random_state=0),
       FunctionalKRR(), KernelAdditiveModel(n_atoms=2, value_kernel=Gaussian(0.5))]


@pytest.mark.parametrize("model", ALL, ids=lambda m: type(m).__name__)
def test_api_labels_clone_and_errors(rng, model):
    Xda, Yda = _curves(rng, missing=0.2)
    fitted = clone(model).fit(Xda[:9], Yda[:9])
    pred = fitted.predict(Xda[9:])
    assert pred.dims == ("sample", "theta") and list(pred.sample.values) == ["s9", "s10", "s11"]
    assert np.isfinite(pred.values).all()
    assert np.isfinite(fitted.score(Xda[9:], Yda[9:]))
    assert clone(model).get_params().keys() == model.get_params().keys()
    with pytest.raises(ValueError, match="samples"):
        clone(model).fit(Xda[:5], Yda[:6])
    with pytest.raises(ValueError, match="NaN"):
        bad = Xda.copy()
        bad[0, 0] = np.nan
        clone(model).fit(bad, Yda)
    with pytest.raises((ValueError, TypeError), match=r"lam|bandwidth"):
        clone(model).set_params(**{"lam" if "lam" in model.get_params() else "bandwidth": -1.0}).fit(Xda, Yda)


def test_curve_methods_reject_non_curve_inputs(rng):
    X, Y, grid = make_problem(rng, n=10, m=8)
    with pytest.raises(TypeError, match="input curves"):
        TripleBasisEstimator().fit({"a": X[:, 0], "b": X[:, 1]}, Y)
    # plain arrays are curves on the midpoints of [0, 1]
    m = TripleBasisEstimator(Fourier(1), Fourier(1), n_components=10, random_state=0).fit(X, Y, locations=grid)
    assert m.input_coef_.shape == (10, 3)


@pytest.mark.parametrize("model", ALL, ids=lambda m: type(m).__name__)
def test_sklearn_check_estimator(model):
    from sklearn.utils.estimator_checks import check_estimator

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_estimator(model)


@pytest.mark.parametrize("model", ALL[1:], ids=lambda m: type(m).__name__)
def test_predict_path_equals_refits(rng, model):
    Xda, Yda = _curves(rng, missing=0.2)
    lams = [1e-5, 3e-3, 0.2]
    fitted = clone(model).set_params(lam=0.01).fit(Xda[:9], Yda[:9])
    at = np.array([0.0, 0.37, 1.0])
    path = fitted.predict_path(Xda[9:], lams, at=at)
    assert path.shape == (3, 3, 3)
    for k, lam in enumerate(lams):
        ref = clone(model).set_params(lam=lam).fit(Xda[:9], Yda[:9]).predict(Xda[9:], at=at).values
        np.testing.assert_allclose(path[k], ref, rtol=1e-7, atol=1e-9)
    with pytest.raises(ValueError, match="lams"):
        fitted.predict_path(Xda[9:], [0.0])


# --------------------------------------------------------------------------- experiments (smoke)
def test_table1_code_path_on_one_split_with_tiny_grids():
    from experiments import dti_table1 as t1
    from experiments.common import random_splits

    data = t1.load_data()
    g = t1.grids("tiny")
    tr, te = random_splits(100, 70, 1, 0)[0]
    methods = t1.METHODS if t1.logcosh_available() else t1.METHODS[:-1]
    rows = t1.run_split((0, tr, te, data, g, methods))
    assert [r["method"] for r in rows] == list(methods)
    for r in rows:
        # per-point errors are ~ (0.06)^2 and curves have up to 55 points
        assert 1e-3 < r["mean_of_means"] < 0.02 < r["mean_of_sums"] < 1.0
    # the lambda path used by the cross-validation equals refits at each lambda
    cfg = {"wavelet": ("db2", 3), "b": 1.5}
    model = t1._kpl(cfg, 1e-5, g).fit(t1._x(data, tr), t1._y(data, tr))
    path = t1.kpl_ridge_path(model, t1._x(data, te), np.array([1e-5, 1e-3]))
    ref = t1._kpl(cfg, 1e-3, g).fit(t1._x(data, tr), t1._y(data, tr)).predict(t1._x(data, te)).values
    np.testing.assert_allclose(path[1], ref, rtol=1e-9, atol=1e-12)
