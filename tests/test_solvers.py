"""Closed forms against brute-force Kronecker solves and against each other."""

import numpy as np
import pytest
from sklearn.kernel_ridge import KernelRidge

from fdakpl import BSpline, Fourier, Gaussian, KPLRegressor, Wavelet
from fdakpl.data.functional import Observations, quadrature_weights
from fdakpl.kernels import Matrix, ScaleDecay
from fdakpl.solvers.closed_form import brute_force_ridge, decompose, project_observations, ridge_coef, ridge_sylvester

from .conftest import make_problem


def _spd(rng, d):
    A = rng.normal(size=(d, d))
    return A @ A.T / d + 0.5 * np.eye(d)


def _kernel(rng, n):
    X = rng.normal(size=(n, 3))
    return Gaussian(1.5)(X)


@pytest.mark.parametrize("orthonormal", [True, False])
@pytest.mark.parametrize("B_identity", [True, False])
def test_eig_path_equals_brute_force_kronecker(rng, orthonormal, B_identity):
    n, d = 12, 5
    K = _kernel(rng, n)
    G = np.eye(d) if orthonormal else _spd(rng, d)
    B = np.eye(d) if B_identity else _spd(rng, d)
    N = rng.normal(size=(n, d))
    dec = decompose(K, G, B, N)
    for lam in [1e-6, 1e-3, 0.1, 10.0]:
        A = ridge_coef(dec, lam)
        A_bf = brute_force_ridge(K, G, B, N, lam)
        np.testing.assert_allclose(A, A_bf, rtol=1e-9, atol=1e-9 * np.abs(A_bf).max())
        np.testing.assert_allclose(ridge_coef(dec, lam, times_B=True), A_bf @ B, rtol=1e-9,
                                   atol=1e-9 * np.abs(A_bf @ B).max())


def test_sylvester_equals_eig_at_several_lambdas(rng):
    n, d = 15, 6
    K = _kernel(rng, n)
    G, B = _spd(rng, d), np.diag(1.5 ** -np.arange(d))
    N = rng.normal(size=(n, d))
    dec = decompose(K, G, B, N)
    for lam in [1e-4, 1e-2, 1.0]:
        A_s = ridge_sylvester(K, G, B, N, lam)
        np.testing.assert_allclose(A_s, ridge_coef(dec, lam), rtol=1e-8, atol=1e-10 * np.abs(A_s).max())


def test_sylvester_refuses_singular_gram(rng):
    n, d = 6, 4
    v = rng.normal(size=(d, 2))
    G = v @ v.T  # rank 2
    with pytest.raises(ValueError, match="use solver='eig'"):
        ridge_sylvester(_kernel(rng, n), G, np.eye(d), rng.normal(size=(n, d)), 0.1)


def test_eig_is_exact_with_singular_gram(rng):
    n, d = 8, 6
    v = rng.normal(size=(d, 3))
    G = v @ v.T
    K, B, N = _kernel(rng, n), _spd(rng, d), rng.normal(size=(n, d))
    A = ridge_coef(decompose(K, G, B, N), 1e-3)
    np.testing.assert_allclose(A, brute_force_ridge(K, G, B, N, 1e-3), rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("missing", [0.0, 0.3])
@pytest.mark.parametrize("dictionary, output_matrix", [
    (Fourier(4), None),
    (BSpline(9), None),
    (Wavelet("db2", level=2), ScaleDecay(1.7)),
    (BSpline(6), "spd"),
])
def test_estimator_equals_brute_force_kronecker(rng, missing, dictionary, output_matrix):
    """End to end: the fitted coefficients solve the paper's dn x dn system with hand-made nu."""
    X, Y, grid = make_problem(rng, n=14, m=33, missing=missing)
    if output_matrix == "spd":
        output_matrix = Matrix(_spd(rng, 6))
    model = KPLRegressor(dictionary=dictionary, kernel=Gaussian(0.8), output_matrix=output_matrix, lam=3e-3,
                         integration="plugin" if missing else "auto")  # the paper's plug-in, by hand below
    model.fit(X, Y, locations=grid)
    # centred responses, inner products by hand
    mean = np.nanmean(Y, axis=0)
    Yc = Y - mean
    phi = model.dictionary_.evaluate(grid)
    if missing:
        m_i = np.isfinite(Yc).sum(1)
        N = np.nan_to_num(Yc) @ phi / m_i[:, None]  # plug-in (1/m_i) sum_p y_ip phi(theta_ip), |Theta| = 1
    else:
        w = quadrature_weights(grid, (0.0, 1.0))
        N = (Yc * w) @ phi
    K = Gaussian(0.8)(X)
    # the fit's penalty is lambda in the unit of the atoms' norms (trace(G) / d; 1 for orthonormal atoms)
    A_bf = brute_force_ridge(K, model.dictionary_.gram(), model.B_, N, 3e-3 * model.dictionary_.lambda_unit())
    np.testing.assert_allclose(model.dual_coef_, A_bf, rtol=1e-9, atol=1e-9 * np.abs(A_bf).max())
    assert model.integration_ == ("plugin" if missing else "quadrature")


def test_fourier_identity_equals_kernel_ridge_per_coefficient(rng):
    """Orthonormal dictionary, B = I, fully observed: d independent KernelRidge fits (the paper's 1BE)."""
    X, Y, grid = make_problem(rng, n=40, m=64)
    lam, sigma = 1e-3, 0.7
    model = KPLRegressor(dictionary=Fourier(6), kernel=Gaussian(sigma), lam=lam).fit(X, Y, locations=grid)
    assert model.dictionary_.orthonormal
    w = quadrature_weights(grid, (0.0, 1.0))
    nu = ((Y - Y.mean(0)) * w) @ Fourier(6).fit(domain=(0, 1)).evaluate(grid)
    n = X.shape[0]
    Xnew = rng.uniform(-1, 1, size=(7, 3))
    for l in range(nu.shape[1]):
        kr = KernelRidge(alpha=n * lam, kernel="rbf", gamma=1 / (2 * sigma**2)).fit(X, nu[:, l])
        np.testing.assert_allclose(model.predict_coefficients(Xnew)[:, l], kr.predict(Xnew), rtol=1e-8, atol=1e-10)


def test_unobserved_values_do_not_matter(rng):
    """The fit reads observed values only: garbage behind the mask changes nothing, an observed value does."""
    X, Y, grid = make_problem(rng, n=20, m=30, missing=0.25)
    mask = np.isnan(Y)
    assert mask.sum() > 50

    def fit(values):
        return KPLRegressor(dictionary=Fourier(5), lam=1e-3).fit(X, values, locations=grid).dual_coef_

    a = fit(Y)
    # the same mask, carried by a masked array (netCDF4 hands these out); behind it: huge values, not NaN
    garbage = np.where(mask, 1e6 * rng.standard_normal(Y.shape), Y)
    np.testing.assert_array_equal(fit(np.ma.masked_array(garbage, mask=mask)), a)
    # control: the same garbage unmasked, or one observed value moved, does change the fit
    assert np.abs(fit(garbage) - a).max() > 1.0
    moved = Y.copy()
    i, j = np.argwhere(~mask)[7]
    moved[i, j] += 1.0
    assert np.abs(fit(moved) - a).max() > 1e-3 * np.abs(a).max()


def test_grid_and_point_projection_agree(rng):
    X, Y, grid = make_problem(rng, n=10, m=20, missing=0.3)
    obs = Observations.from_dense(Y, grid)
    phi_grid = Fourier(3).fit(domain=(0, 1)).evaluate(grid)
    wts = rng.uniform(size=obs.index.size)
    a = project_observations(obs, phi_grid, wts)
    irregular = Observations(obs.index, obs.location, obs.value, obs.n_samples)
    b = project_observations(irregular, Fourier(3).fit(domain=(0, 1)).evaluate(obs.location), wts)
    np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


def test_lambda_must_be_positive(rng):
    with pytest.raises(ValueError, match="lam must be"):
        ridge_coef(decompose(np.eye(2), np.eye(1), np.eye(1), np.ones((2, 1))), 0.0)


def test_masked_inputs_count_as_missing(rng):
    """A masked input value is missing (the NaN error), never the number behind the mask."""
    X, Y, grid = make_problem(rng, n=20, m=30)
    mask = np.zeros(X.shape, dtype=bool)
    mask[3, 1] = True
    with pytest.raises(ValueError, match=r"has NaN or infinite values for samples at positions \[3\]"):
        KPLRegressor(dictionary=Fourier(3)).fit(np.ma.masked_array(X, mask=mask), Y, locations=grid)
