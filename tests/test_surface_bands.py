"""PenalizedLinear (roughness-penalised linear kernel), select_surface and Bayesian surface bands (issue 25)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.linalg as sla

import fdakpl
from fdakpl import BSpline, FunctionalRegression, Linear, PenalizedLinear, datasets
from fdakpl.data.functional import quadrature_weights
from fdakpl.results.surface_inference import select_surface, surface_bands
from fdakpl.roughness_kernels import roughness_matrix


@pytest.fixture(scope="module")
def sim():
    ds, beta = datasets.make_linear_surface(60, m_in=12, m_out=10, random_state=4)
    return ds.assign(x=ds["x"] - ds["x"].mean("sample")), beta


def _penalty(s: np.ndarray, w: np.ndarray, nu: float) -> np.ndarray:
    """``int beta''^2 / mu_* + |P_0 beta|^2 / nu`` built directly (scipy's generalized eigenproblem for mu_*)."""
    J = roughness_matrix(s, 2)
    W = np.diag(w)
    mu = sla.eigh(J, W, eigvals_only=True)
    N = np.column_stack([np.ones_like(s), s])
    proj = W @ N @ np.linalg.solve(N.T @ W @ N, N.T @ W)  # W times the W-orthogonal projector on linears
    return J / np.sort(mu)[2] + proj / nu


def _fit(ds, lam):
    return FunctionalRegression("y ~ x", ds, kernels={"x": PenalizedLinear()}, dictionary=BSpline(5), lam=lam,
                                progress=False).fit()


def test_roughness_matrix_integrates_squared_second_derivative():
    s = np.sort(np.r_[0.0, 1.0, np.random.default_rng(0).uniform(0, 1, 30)])
    J = roughness_matrix(s, 2)
    cubic = s**3  # beta'' = 6 s: int_0^1 36 s^2 = 12
    assert cubic @ J @ cubic == pytest.approx(12.0, rel=0.05)
    assert np.abs(J @ (2 - 5 * s)).max() < 1e-8 * np.abs(J).max()  # linear functions are free
    with pytest.raises(ValueError, match="at least 4 points"):
        roughness_matrix(np.linspace(0, 1, 3), 2)


def test_penalized_linear_kernel_is_the_penalty_inverse():
    s = np.linspace(0, 2, 15)
    w = quadrature_weights(s)
    X = np.random.default_rng(1).normal(size=(6, 15))
    P = _penalty(s, w, 1e4)
    # the representer of x -> int x beta in the RKHS with norm beta^T P beta is P^-1 W x
    Wx = X * w
    assert np.allclose(PenalizedLinear()(X, weights=w), Wx @ np.linalg.solve(P, Wx.T), rtol=1e-8)


def test_fit_is_the_penalised_least_squares_solved_directly(sim):
    ds, _ = sim
    lam = 1e-4
    res = _fit(ds, lam)
    est = res.estimator
    X = ds["x"].values
    s, t = ds["s"].values, ds["t"].values
    w = quadrature_weights(s)
    n, m = X.shape
    Yc = ds["y"].values - ds["y"].values.mean(axis=0)
    Phi = est.dictionary_.evaluate(t)
    nu_ = (Yc * quadrature_weights(t)) @ Phi  # <y_i, phi_l> by the responses' quadrature
    assert np.allclose(nu_, est.nu_)
    G = est.gram_
    Xw = X * w
    P = _penalty(s, w, 1e4)
    u = est.problem_.lam_unit
    # (1/n) sum_i [h_i^T G h_i - 2 h_i^T nu_i] + lam u sum_l b_l^T P b_l with h_i = b^T W x_i, b (m x d)
    H = np.kron(G, Xw.T @ Xw) + n * lam * u * np.kron(np.eye(G.shape[0]), P)
    b = np.linalg.solve(H, (Xw.T @ nu_).reshape(-1, order="F")).reshape(m, -1, order="F")
    assert np.allclose(res.coefficient_surface("x").values, b @ Phi.T, rtol=1e-6, atol=1e-8 * np.abs(b).max())


def test_bayes_sd_is_the_posterior_of_the_penalised_least_squares(sim):
    ds, _ = sim
    res = _fit(ds, [1e-4])  # a one-value grid: the criteria (and the solver's edf) are computed
    bands = surface_bands(res, "x", undersmooth=1.0)
    assert bands.attrs["method"].startswith("Bayesian")
    est = res.estimator
    X, s, t = ds["x"].values, ds["s"].values, ds["t"].values
    w = quadrature_weights(s)
    n, m = X.shape
    Xw = X * w
    G, Phi = est.gram_, est.dictionary_.evaluate(t)
    P = _penalty(s, w, 1e4)
    lam_u = 1e-4 * est.problem_.lam_unit
    prec = np.kron(G, Xw.T @ Xw) + n * lam_u * np.kron(np.eye(G.shape[0]), P)
    cov = np.linalg.inv(prec)
    # sigma2: weighted residual sum of squares over N - edf, edf = the solver's own trace of the smoother
    crit = res.criteria
    edf = float(crit.edf[np.argmin(np.abs(crit.lams - res.lam))])
    assert bands.attrs["edf"] == pytest.approx(edf, rel=1e-6)
    resid = ds["y"].values - ds["y"].values.mean(axis=0) - Xw @ (res.coefficient_surface("x").values)
    sigma2 = np.sum(resid**2 * quadrature_weights(t)) / (resid.size - edf)
    assert bands.attrs["sigma2"] == pytest.approx(sigma2, rel=1e-6)
    # Var beta(s_p, t) = (phi(t) kron e_p)^T cov (phi(t) kron e_p) sigma2
    A = np.kron(Phi, np.eye(m))  # rows (t, p) in column-major vec order of beta = b Phi^T
    var = sigma2 * np.einsum("ij,jk,ik->i", A, cov, A).reshape(len(t), m).T
    assert np.allclose(bands.sd.values, np.sqrt(var), rtol=1e-6)
    z = bands.attrs["z"]
    assert np.allclose(bands.upper - bands.lower, 2 * z * bands.sd)


def test_bayes_bands_cover_on_a_small_simulation():
    # average pointwise coverage of the 95% undersmoothed Bayesian bands over a few simulated surfaces
    cover = []
    for seed in range(4):
        ds, beta = datasets.make_linear_surface(80, m_in=20, m_out=15, random_state=100 + seed)
        ds = ds.assign(x=ds["x"] - ds["x"].mean("sample"))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res, _ = select_surface(FunctionalRegression("y ~ x", ds, lam_grid=np.geomspace(1e-10, 1, 31),
                                                         progress=False), "x", n_atoms=[4, 5, 6])
        b = surface_bands(res, "x")
        cover.append(float(((b.lower <= beta.values) & (beta.values <= b.upper)).mean()))
    assert np.mean(cover) >= 0.9


def test_undersmoothing_refits_at_a_smaller_lambda(sim):
    ds, _ = sim
    res = _fit(ds, 1e-3)
    half = surface_bands(res, "x", undersmooth=0.5)
    direct = surface_bands(_fit(ds, 5e-4), "x", undersmooth=1.0)
    assert half.attrs["lambda"] == pytest.approx(5e-4)
    assert np.allclose(half.estimate, direct.estimate) and np.allclose(half.sd, direct.sd)
    with pytest.raises(ValueError, match="undersmooth"):
        surface_bands(res, "x", undersmooth=0.0)


def test_auto_bands_are_bayes_for_penalized_and_bootstrap_for_linear(sim):
    ds, _ = sim
    lin = FunctionalRegression("y ~ x", ds, kernels={"x": Linear()}, dictionary=BSpline(5), lam=1e-4,
                               progress=False).fit()
    assert surface_bands(lin, "x", n_boot=5).attrs["method"] == "basic bootstrap over curves"
    assert surface_bands(_fit(ds, 1e-4), "x").attrs["method"].startswith("Bayesian")


def test_bayes_bands_refuse_several_terms(sim):
    ds, _ = sim
    two = ds.assign(z=ds["x"] ** 2)
    res = FunctionalRegression("y ~ x + z", two, kernels={"x": PenalizedLinear(), "z": Linear()},
                               dictionary=BSpline(5), lam=1e-4, progress=False).fit()
    with pytest.raises(ValueError, match="one functional term"):
        surface_bands(res, "x", method="bayes")


def test_select_surface_takes_the_smallest_criterion(sim):
    ds, _ = sim
    model = FunctionalRegression("y ~ x", ds, lam_grid=np.geomspace(1e-8, 1, 17), progress=False)
    res, path = select_surface(model, "x", n_atoms=[4, 6, 8])
    best = path.loc[path["criterion"].idxmin()]
    assert res.estimator.dictionary_.n_atoms == best["n_atoms"] and res.lam == best["lambda"]
    assert isinstance(res.kernels["x"], PenalizedLinear)
    assert any("chosen by LOO" in note for note in res.notes)
    with pytest.raises(ValueError, match="n_atoms"):
        select_surface(model, "x", n_atoms=[2])
    with pytest.raises(ValueError, match="functional term"):
        select_surface(model, "y", n_atoms=[4])


def test_penalized_linear_save_load_round_trip(sim, tmp_path):
    ds, _ = sim
    res = FunctionalRegression("y ~ x", ds, kernels={"x": PenalizedLinear(order=3, null_weight=1e3)},
                               dictionary=BSpline(5), lam=1e-4, progress=False).fit()
    again = fdakpl.load(res.save(tmp_path / "penalized.nc"))
    assert again.kernels["x"] == PenalizedLinear(order=3, null_weight=1e3)
    assert np.allclose(again.coefficient_surface("x"), res.coefficient_surface("x"))
    assert np.allclose(again.predict(ds).values, res.predict(ds).values)


def test_penalized_linear_bad_parameters():
    with pytest.raises(ValueError, match="order"):
        PenalizedLinear(order=4)
    with pytest.raises(ValueError, match="null_weight"):
        PenalizedLinear(null_weight=0.5)
    with pytest.raises(ValueError, match="at least 4 locations"):
        PenalizedLinear()(np.ones((2, 3)))


def test_penalized_linear_refuses_weights_of_no_grid():
    with pytest.raises(ValueError, match="trapezoidal quadrature weights"):
        PenalizedLinear()(np.ones((2, 5)), weights=np.ones(5))
