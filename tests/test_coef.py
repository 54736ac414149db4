"""Coefficients (issue 14): ``dual_coef_`` of exact fits, ``coef_`` of approximate fits, ``res.coef`` for both,
and the scaling of lambda against scikit-learn's KernelRidge."""

import warnings

import numpy as np
import pytest
import xarray as xr
from scipy.linalg import sqrtm
from scipy.spatial.distance import cdist
from sklearn.kernel_ridge import KernelRidge

from fdakpl import BSpline, Fourier, FunctionalRegression, Gaussian, KPLRegressor, datasets
from fdakpl.data.preprocessing import prepare_inputs
from fdakpl.estimators.approx import ApproxKPLRegressor, Nystroem, RandomFourierFeatures
from fdakpl.kernels import Matrix

SIGMA = 0.9


def problem(rng, n=40, m=30, p=3, missing=0.0):
    X = rng.uniform(-1, 1, size=(n, p))
    grid = np.linspace(0, 1, m)
    Y = np.sin(np.pi * X[:, :1] * grid) + X[:, 1:2] ** 2 * np.cos(2 * np.pi * grid) + 0.05 * rng.normal(size=(n, m))
    if missing:
        Y[rng.uniform(size=Y.shape) < missing] = np.nan
        Y[:, 0] = np.where(np.isnan(Y[:, 0]), 0.1, Y[:, 0])
    return X, Y, grid


def gaussian(A, B):
    """The Gaussian kernel exp(-|a - b|^2 / (2 sigma^2)), written out (not fdakpl's)."""
    return np.exp(-cdist(A, B, "sqeuclidean") / (2 * SIGMA**2))


# ----------------------------------------------------------------------------- exact fits: dual_coef_
def test_exact_fit_predicts_from_dual_coef_and_the_kernel(rng):
    X, Y, grid = problem(rng)
    Xnew = rng.uniform(-1, 1, size=(6, 3))
    est = KPLRegressor(dictionary=Fourier(3), kernel=Gaussian(SIGMA), output_matrix=1.5, lam=1e-3).fit(
        X, Y, locations=grid)
    A = est.dual_coef_
    assert A.shape == (40, 7)
    at = np.array([0.03, 0.4, 0.77])
    # y(theta) = mean(theta) + sum_l [B sum_i k(x, x_i) alpha_i]_l phi_l(theta)
    expected = gaussian(Xnew, X) @ A @ est.B_ @ est.dictionary_.evaluate(at).T + est.mean_(at)[None, :]
    np.testing.assert_allclose(est.predict(Xnew, at=at), expected, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(est.dual_coef_B_, A @ est.B_, rtol=0, atol=0)
    with pytest.raises(AttributeError, match=r"exact KPLRegressor fit has no coef_.*are dual_coef_"):
        est.coef_  # noqa: B018
    assert not hasattr(est, "coef_")
    with pytest.raises(AttributeError, match=r"no attribute 'coef_'"):  # not fitted: the plain message
        KPLRegressor().coef_  # noqa: B018


def test_approximate_fit_predicts_from_coef_and_the_feature_map(rng):
    X, Y, grid = problem(rng)
    Xnew = rng.uniform(-1, 1, size=(6, 3))
    at = np.array([0.03, 0.4, 0.77])
    kw = dict(dictionary=Fourier(3), kernel=Gaussian(SIGMA), output_matrix=1.5, lam=1e-3)
    for chunk in (16, 1000):
        est = ApproxKPLRegressor(**kw, approx=RandomFourierFeatures(25, random_state=1), chunk_size=chunk)
        est.fit(X, Y, locations=grid)
        M = est.coef_
        assert M.shape == (25, 7)  # feature x atom
        fmap = est.approx_
        # random Fourier features of the Gaussian kernel, written out: sqrt(2 / r) cos(x Omega / sigma + b)
        Z = np.sqrt(2 / 25) * np.cos(Xnew / SIGMA @ fmap.omega_ + fmap.offset_)
        expected = Z @ M @ est.dictionary_.evaluate(at).T + est.mean_(at)[None, :]
        np.testing.assert_allclose(est.predict(Xnew, at=at), expected, rtol=1e-12, atol=1e-12)
        with pytest.raises(AttributeError, match=r"approximate \w+ fit has no dual_coef_.*are coef_"):
            est.dual_coef_  # noqa: B018
        assert not hasattr(est, "dual_coef_") and not hasattr(est, "dual_coef_B_")


# ----------------------------------------------------------------------------- res.coef for both
@pytest.fixture(scope="module")
def dti():
    return datasets.dti_first_visits()


def test_results_coef_of_exact_and_approximate_fits(dti):
    kw = dict(dictionary="db3", level=4, interpolate_inputs=True, lam=1e-3, width_grid=None, b_grid=None,
              progress=False)
    exact = FunctionalRegression("rcst ~ cca", dti, **kw).fit()
    A = exact.coef
    assert A.name == "alpha" and A.dims == ("sample", "atom")
    np.testing.assert_array_equal(A["sample"].values, dti["sample"].values)
    np.testing.assert_array_equal(A["atom"].values, np.arange(A.sizes["atom"]))
    np.testing.assert_array_equal(A["scale"].values, exact.estimator.dictionary_.scales_)
    np.testing.assert_array_equal(A.values, exact.estimator.dual_coef_)
    # the fitted curves from alpha: mean + K alpha B Phi^T, with K the training kernel matrix
    est = exact.estimator
    grid = dti["rcst_loc"].values
    fitted = est.mean_(grid)[None, :] + est.K_ @ A.values @ est.B_ @ est.dictionary_.evaluate(grid).T
    np.testing.assert_allclose(exact.fitted.values, fitted, rtol=1e-10, atol=1e-12)

    approx = FunctionalRegression("rcst ~ cca", dti, **kw, approx=Nystroem(30, random_state=0)).fit()
    M = approx.coef
    assert M.name == "primal_weights" and M.dims == ("feature", "atom")
    np.testing.assert_array_equal(M["feature"].values, np.arange(30))
    np.testing.assert_array_equal(M["scale"].values, approx.estimator.dictionary_.scales_)
    np.testing.assert_array_equal(M.values, approx.estimator.coef_)
    assert isinstance(M, xr.DataArray) and not hasattr(approx.estimator, "dual_coef_")
    # the fitted curves from M: mean + Z M Phi^T, with Z the feature map of the training inputs
    est = approx.estimator
    Xv, Xw, _, _ = prepare_inputs(approx.model.parsed.inputs(dti), interpolate=True, spec=est.input_spec_)
    Z = est.approx_.transform(Xv, Xw)
    assert Z.shape == (dti.sizes["sample"], 30)
    fitted = est.mean_(grid)[None, :] + Z @ M.values @ est.dictionary_.evaluate(grid).T
    np.testing.assert_allclose(approx.fitted.values, fitted, rtol=1e-10, atol=1e-12)


# ----------------------------------------------------------------------------- n * lam vs KernelRidge
def test_coefficients_equal_kernel_ridge_with_alpha_n_lam(rng):
    """fdakpl minimises (1/n) sum_i ||y_i - f(x_i)||^2 + lam ||f||^2: KernelRidge(alpha=n*lam) on the coefficients.

    Orthonormal dictionary (G = I), B = I: dual_coef_ = KernelRidge(alpha=n*lam, kernel="precomputed")
    .fit(K, nu).dual_coef_, with nu_i = <y_i, phi> the atom coefficients.

    Any dictionary (Gram G): in the orthonormal basis psi = G^{-1/2} phi the coefficients of y_i are
    c_i = G^{-1/2} nu_i, and with B = G^{-1} (the identity in psi coordinates)
        dual_coef_ G^{-1/2} = KernelRidge(alpha=n*lam, kernel="precomputed").fit(K, C).dual_coef_,
        predict_coefficients(x) G^{1/2} = that KernelRidge's predict(k(x, X)),
    (G^{1/2} h(x) are the psi coordinates of the predicted curve). With B = I instead, each eigenvector v_l
    of G (eigenvalue g_l) decouples: g_l dual_coef_ v_l = KernelRidge(alpha=n*lam/g_l).fit(K, nu v_l).dual_coef_.
    """
    X, Y, grid = problem(rng, n=35, m=64)
    Xnew = rng.uniform(-1, 1, size=(5, 3))
    n, lam = X.shape[0], 2e-3
    K, Knew = gaussian(X, X), gaussian(Xnew, X)

    fourier = KPLRegressor(dictionary=Fourier(4), kernel=Gaussian(SIGMA), lam=lam, center=False).fit(
        X, Y, locations=grid)
    assert fourier.dictionary_.orthonormal
    np.testing.assert_allclose(fourier.gram_, np.eye(9), atol=1e-12)
    kr = KernelRidge(alpha=n * lam, kernel="precomputed").fit(K, fourier.nu_)
    scale = np.abs(kr.dual_coef_).max()
    np.testing.assert_allclose(fourier.dual_coef_, kr.dual_coef_, rtol=0, atol=1e-10 * scale)
    np.testing.assert_allclose(fourier.predict_coefficients(Xnew), kr.predict(Knew), rtol=0, atol=1e-10)

    spline = BSpline(8).fit(domain=(0.0, 1.0))
    G = spline.gram()
    assert np.abs(G - np.eye(G.shape[0])).max() > 0.05  # far from orthonormal
    G_half = np.real(sqrtm(G))
    G_mhalf = np.linalg.inv(G_half)
    est = KPLRegressor(dictionary=BSpline(8), kernel=Gaussian(SIGMA), output_matrix=Matrix(np.linalg.inv(G)),
                       lam=lam, center=False).fit(X, Y, locations=grid)
    np.testing.assert_allclose(est.gram_, G, rtol=1e-12, atol=1e-14)
    C = est.nu_ @ G_mhalf  # coordinates in the orthonormal basis psi = G^{-1/2} phi
    kr = KernelRidge(alpha=n * lam, kernel="precomputed").fit(K, C)
    scale = np.abs(kr.dual_coef_).max()
    np.testing.assert_allclose(est.dual_coef_ @ G_mhalf, kr.dual_coef_, rtol=0, atol=1e-10 * scale)
    np.testing.assert_allclose(est.predict_coefficients(Xnew) @ G_half, kr.predict(Knew), rtol=0, atol=1e-10)

    ident = KPLRegressor(dictionary=BSpline(8), kernel=Gaussian(SIGMA), lam=lam, center=False).fit(
        X, Y, locations=grid)
    g, V = np.linalg.eigh(G)
    for ell in range(g.size):
        kr = KernelRidge(alpha=n * lam / g[ell], kernel="precomputed").fit(K, ident.nu_ @ V[:, ell])
        scale = np.abs(kr.dual_coef_).max()
        np.testing.assert_allclose(g[ell] * ident.dual_coef_ @ V[:, ell], kr.dual_coef_, rtol=0, atol=1e-10 * scale)


def test_baselines_name_their_dual_coefficients_dual_coef_(rng):
    from fdakpl.baselines import FunctionalKRR, OneBasisEstimator

    X, Y, grid = problem(rng, n=12, m=9)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for est in (OneBasisEstimator(Fourier(2)), FunctionalKRR()):
            est.fit(X, Y, locations=grid)
            assert est.dual_coef_.shape[0] == 12
            with pytest.raises(AttributeError, match="dual_coef_"):
                est.coef_  # noqa: B018
