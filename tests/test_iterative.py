"""Iterative KPL and the exact partially observed ridge against brute force, finite differences and each other."""

import warnings

import numpy as np
import pytest
from scipy.optimize import approx_fprime, minimize
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning

from fdakpl import BSpline, Fourier, Gaussian, KPLRegressor, Wavelet
from fdakpl.data.functional import Observations
from fdakpl.data.integration import integration_weights
from fdakpl.data.preprocessing import center_responses
from fdakpl.losses import CustomLoss, Huber, LogCosh, PseudoHuber, Square
from fdakpl.solvers.closed_form import decompose, ridge_coef
from fdakpl.solvers.iterative import kpl_iterative, kpl_iterative_path
from fdakpl.solvers.partial import brute_force_partial_ridge, exact_partial_ridge
from fdakpl.solvers.points import kpl_objective, point_design

from .conftest import make_problem

LOSSES = [Square(), LogCosh(0.7), LogCosh(20.0), Huber(0.2), PseudoHuber(0.2),
          CustomLoss(lambda y, f: (f - y) ** 2 + 0.1 * (f - y) ** 4, lambda y, f: 2 * (f - y) + 0.4 * (f - y) ** 3)]


def _spd(rng, d):
    M = rng.normal(size=(d, d))
    return M @ M.T / d + 0.3 * np.eye(d)


def _setup(rng, n=12, m=15, d=5, missing=0.0, layout="auto", irregular=False, B="spd"):
    """A small problem: kernel matrix, output matrix, design of observed points."""
    X, Y, grid = make_problem(rng, n=n, m=m, missing=missing)
    dic = BSpline(n_atoms=d).fit(domain=(0.0, 1.0))
    if irregular:  # curve-specific random locations, no common grid
        counts = rng.integers(4, 9, size=n)
        index = np.repeat(np.arange(n), counts)
        loc = np.concatenate([np.sort(rng.uniform(0, 1, size=c)) for c in counts])
        value = np.sin(3 * loc) * X[index, 0] + 0.1 * rng.normal(size=loc.size)
        obs = Observations(index, loc, value, n)
        phi = dic.evaluate(loc)
    else:
        obs = Observations.from_dense(Y, grid)
        phi = dic.evaluate(grid)
    w, _ = integration_weights(obs, (0.0, 1.0), "auto" if not irregular else "plugin")
    design = point_design(obs, phi, w, layout=layout)
    K = Gaussian(1.5)(X)
    Bm = _spd(rng, d) if B == "spd" else np.eye(d)
    return K, Bm, design, obs, phi, w


# ----------------------------------------------------------------------------- gradients
@pytest.mark.parametrize("loss", LOSSES, ids=repr)
@pytest.mark.parametrize("case", ["full", "partial-grid", "partial-points", "irregular"])
def test_objective_gradient_matches_finite_differences(rng, loss, case):
    kw = {"full": {}, "partial-grid": {"missing": 0.4, "layout": "grid"},
          "partial-points": {"missing": 0.4, "layout": "points"}, "irregular": {"irregular": True}}[case]
    K, B, design, *_ = _setup(rng, n=7, m=9, d=4, **kw)
    lam = 0.05
    A = 0.3 * rng.normal(size=(7, 4))
    f = lambda a: kpl_objective(a.reshape(7, 4), K, B, design, lam, loss)[0]  # noqa: E731
    _, g = kpl_objective(A, K, B, design, lam, loss)
    fd = approx_fprime(A.ravel(), f, 1e-7)
    np.testing.assert_allclose(g.ravel(), fd, rtol=1e-4, atol=1e-5 * np.abs(fd).max())


def test_objective_value_is_the_stated_sum(rng):
    K, B, design, obs, phi, w = _setup(rng, n=6, m=8, d=4, missing=0.3)
    A = rng.normal(size=(6, 4))
    lam, loss = 0.1, LogCosh(3.0)
    H = K @ A @ B
    pred = (H @ phi.T)[obs.index, obs.grid_index]
    expected = np.sum(w * loss.value(obs.value, pred)) / 6 + lam * np.trace(A.T @ K @ A @ B)
    assert kpl_objective(A, K, B, design, lam, loss)[0] == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("loss", LOSSES, ids=repr)
@pytest.mark.parametrize("missing", [0.0, 0.35])
def test_iterative_solution_is_stationary_for_the_objective(rng, loss, missing):
    """The optimiser works in whitened coordinates; check stationarity in the representer coordinates."""
    K, B, design, *_ = _setup(rng, n=15, m=20, d=6, missing=missing)
    lam = 1e-2
    res = kpl_iterative(K, B, design, lam, loss, tol=1e-9, warn=False)
    assert res.rel_grad_norm < 1e-7
    _, g = kpl_objective(res.coef, K, B, design, lam, loss)
    _, g0 = kpl_objective(np.zeros_like(res.coef), K, B, design, lam, loss)
    assert np.linalg.norm(g) < 1e-6 * np.linalg.norm(g0)
    # the coefficients reproduce the fitted coefficients: H = K A B
    np.testing.assert_allclose(K @ res.coef @ B, res.fitted_coef, rtol=1e-6, atol=1e-7 * np.abs(res.fitted_coef).max())
    # and nothing nearby is better
    f_star = kpl_objective(res.coef, K, B, design, lam, loss)[0]
    for _ in range(5):
        A = res.coef + 1e-3 * rng.normal(size=res.coef.shape)
        assert kpl_objective(A, K, B, design, lam, loss)[0] >= f_star - 1e-12


# ----------------------------------------------------------------------------- exact partial ridge
@pytest.mark.parametrize("case", ["partial-grid", "partial-points", "irregular", "full"])
def test_exact_partial_equals_brute_force(rng, case):
    kw = {"full": {}, "partial-grid": {"missing": 0.4, "layout": "grid"},
          "partial-points": {"missing": 0.4, "layout": "points"}, "irregular": {"irregular": True}}[case]
    K, B, design, *_ = _setup(rng, n=10, m=12, d=5, **kw)
    for lam in [1e-4, 1e-2, 1.0]:
        res = exact_partial_ridge(K, B, design, lam, tol=1e-13)
        A_bf = brute_force_partial_ridge(K, B, design, lam)
        assert res.converged
        np.testing.assert_allclose(res.coef, A_bf, rtol=1e-8, atol=1e-9 * np.abs(A_bf).max())


def test_brute_force_partial_system_is_the_supplement_formula(rng):
    """Check the reference itself: per-curve Gram matrices G_i = sum_p c_ip phi phi^T from the observed points."""
    K, B, design, obs, phi, w = _setup(rng, n=5, m=10, d=4, missing=0.5, B="identity")
    lam = 0.1
    A = brute_force_partial_ridge(K, B, design, lam)
    H = K @ A @ B
    for i in range(5):
        pts = obs.index == i
        Phi_i = phi[obs.grid_index[pts]]
        G_i = Phi_i.T @ (w[pts][:, None] * Phi_i)
        nu_i = Phi_i.T @ (w[pts] * obs.value[pts])
        np.testing.assert_allclose(G_i @ H[i] + 5 * lam * A[i], nu_i, atol=1e-12)


def test_exact_partial_on_full_data_is_the_closed_form_with_the_quadrature_gram(rng):
    """Fully observed: every G_i is the quadrature Gram sum_p w_p phi phi^T; one PCG step (exact preconditioner)."""
    K, B, design, obs, phi, w = _setup(rng, n=14, m=25, d=6)
    Gq = phi.T @ (w[:25, None] * phi)
    N = design.nu()
    for lam in [1e-5, 1e-2]:
        res = exact_partial_ridge(K, B, design, lam, tol=1e-12)
        A_cf = ridge_coef(decompose(K, Gq, B, N), lam)
        np.testing.assert_allclose(res.coef, A_cf, rtol=1e-9, atol=1e-10 * np.abs(A_cf).max())
        assert res.n_iter <= 1


# ----------------------------------------------------------------------------- iterative square loss
@pytest.mark.parametrize("layout", ["grid", "points"])
def test_iterative_square_loss_equals_exact_partial(rng, layout):
    K, B, design, *_ = _setup(rng, n=25, m=30, d=8, missing=0.3, layout=layout)
    for lam in [1e-4, 1e-2]:
        it = kpl_iterative(K, B, design, lam, "square", tol=1e-9)
        ex = exact_partial_ridge(K, B, design, lam, tol=1e-13)
        assert it.converged and ex.converged
        rel = np.linalg.norm(it.coef - ex.coef) / np.linalg.norm(ex.coef)
        assert rel < 1e-6
        np.testing.assert_allclose(it.objective, ex.objective, rtol=1e-10)


def test_iterative_square_loss_full_data_equals_closed_form_with_matching_gram(rng):
    """Fully observed, the iterative objective integrates by trapezoidal quadrature, i.e. uses the Gram matrix
    Gq = sum_p w_p phi(theta_p) phi(theta_p)^T. For a Fourier dictionary on a uniform grid Gq equals the exact Gram
    (the trapezoidal rule is exact for trigonometric polynomials), so the iterative fit is the "eig" closed form
    itself; for B-splines Gq differs from the exact Gram, and we compare with the closed form using Gq."""
    X, Y, grid = make_problem(rng, n=30, m=40)
    w, _ = integration_weights(Observations.from_dense(Y, grid), (0.0, 1.0))
    w = w[:40]
    kw = dict(kernel=Gaussian(1.0), lam=1e-3)
    opts = {"tol": 1e-10}
    # Fourier: matching Grams
    itr = KPLRegressor(dictionary=Fourier(3), solver="iterative", solver_options=opts, **kw).fit(X, Y, locations=grid)
    eig = KPLRegressor(dictionary=Fourier(3), **kw).fit(X, Y, locations=grid)
    phi = itr.dictionary_.evaluate(grid)
    np.testing.assert_allclose(phi.T @ (w[:, None] * phi), eig.gram_, atol=1e-12)
    assert itr.integration_ == "quadrature" and itr.converged_
    np.testing.assert_allclose(itr.dual_coef_, eig.dual_coef_, rtol=1e-6, atol=1e-7 * np.abs(eig.dual_coef_).max())
    # B-splines: the closed form with the matching (quadrature) Gram
    itr = KPLRegressor(dictionary=BSpline(8), solver="iterative", solver_options=opts, **kw).fit(X, Y, locations=grid)
    phi = itr.dictionary_.evaluate(grid)
    Gq = phi.T @ (w[:, None] * phi)
    assert np.abs(Gq - itr.gram_).max() > 1e-3 * np.abs(Gq).max()
    A_cf = ridge_coef(decompose(itr.K_, Gq, itr.B_, itr.nu_), 1e-3 * itr.problem_.lam_unit)  # lambda's unit
    np.testing.assert_allclose(itr.dual_coef_, A_cf, rtol=1e-6, atol=1e-7 * np.abs(A_cf).max())
    exact = KPLRegressor(dictionary=BSpline(8), solver="exact_partial", **kw).fit(X, Y, locations=grid)
    np.testing.assert_allclose(exact.dual_coef_, A_cf, rtol=1e-8, atol=1e-9 * np.abs(A_cf).max())


def test_path_warm_starts_and_equals_separate_fits(rng):
    K, B, design, *_ = _setup(rng, n=20, m=20, d=6, missing=0.2)
    lams = [1e-1, 1e-2, 1e-3]
    path = kpl_iterative_path(K, B, design, lams, "logcosh(8)", tol=1e-8, progress=False)
    for lam, res in zip(lams, path, strict=True):
        single = kpl_iterative(K, B, design, lam, "logcosh(8)", tol=1e-8)
        assert res.lam == lam and res.converged
        np.testing.assert_allclose(res.coef, single.coef, rtol=1e-5, atol=1e-6 * np.abs(single.coef).max())
    # starting exactly at the solution costs no iteration
    again = kpl_iterative(K, B, design, lams[-1], "logcosh(8)", init=path[-1].coef, tol=1e-6)
    assert again.n_iter <= 2


# ----------------------------------------------------------------------------- robustness
def _lad_reference(K, B, design, lam):
    """min (1/n) sum c |r| + lam ||Z||^2 as a smooth constrained problem (SLSQP), in whitened coordinates."""
    n, d = design.n_samples, design.n_atoms
    s, U = np.linalg.eigh(K)
    R = U * np.sqrt(s)
    w_, Q = np.linalg.eigh(B)
    Bh = (Q * np.sqrt(w_)) @ Q.T
    J = np.column_stack([design.fitted(R @ e.reshape(n, d) @ Bh) for e in np.eye(n * d)])
    c, y, nv, N = design.weight, design.value, n * d, design.n_points
    cons = [{"type": "ineq", "fun": lambda v: v[nv:] - (J @ v[:nv] - y), "jac": lambda v: np.hstack([-J, np.eye(N)])},
            {"type": "ineq", "fun": lambda v: v[nv:] + (J @ v[:nv] - y), "jac": lambda v: np.hstack([J, np.eye(N)])}]
    res = minimize(lambda v: c @ v[nv:] / n + lam * v[:nv] @ v[:nv],
                   np.concatenate([np.zeros(nv), np.abs(y) + 1.0]),
                   jac=lambda v: np.concatenate([2 * lam * v[:nv], c / n]),
                   constraints=cons, method="SLSQP", options={"ftol": 1e-14, "maxiter": 1000})
    assert res.success
    lad = lambda z: c @ np.abs(J @ z - y) / n + lam * z @ z  # noqa: E731
    to_z = lambda A: (np.sqrt(s)[:, None] * (U.T @ A @ Bh)).ravel()  # noqa: E731
    return res.x[:nv], lad, to_z


def test_logcosh_with_large_gamma_approaches_the_least_absolute_deviation_fit():
    """|a| - log2/gamma <= logcosh_gamma(a) <= |a| gives J_LAD(z_gamma) - J_LAD* <= C log2 / gamma (C = sum c / n),
    and the ridge penalty makes J_LAD lam-strongly convex: ||z_gamma - z*||^2 <= (J_LAD(z_gamma) - J_LAD*) / lam."""
    rng = np.random.default_rng(1)
    n, m = 8, 10
    X = rng.normal(size=(n, 2))
    grid = np.linspace(0, 1, m)
    Y = np.sin(3 * np.outer(X[:, 0], grid)) + 0.03 * rng.standard_cauchy(size=(n, m))
    obs = Observations.from_dense(Y, grid)
    w, _ = integration_weights(obs, (0.0, 1.0))
    design = point_design(obs, Fourier(1).fit(domain=(0.0, 1.0)).evaluate(grid), w)
    K, B, lam = Gaussian(1.0)(X), np.diag([1.0, 0.7, 0.7]), 0.01
    z_star, lad, to_z = _lad_reference(K, B, design, lam)
    C = w.sum() / n
    dists = []
    for gamma in [10.0, 100.0, 1000.0]:
        res = kpl_iterative(K, B, design, lam, LogCosh(gamma), tol=1e-8, warn=False)
        assert res.rel_grad_norm < 1e-7
        z = to_z(res.coef)
        gap = lad(z) - lad(z_star)
        assert -1e-9 <= gap <= C * np.log(2) / gamma
        dist2 = float(np.sum((z - z_star) ** 2))
        assert dist2 <= gap / lam + 1e-9
        dists.append(dist2)
    assert dists[2] < dists[0] / 10


def test_logcosh_resists_outliers_where_the_square_loss_does_not():
    """10% of the observed points replaced by draws from U(-10, 10) (the paper's "local outliers", made wild).

    Margin: over 3 seeds, logcosh(25)-KPL's error (against the noiseless truth) stays within 4x its error on clean
    data, while square-loss KPL's error grows more than 10x and is more than 5x logcosh's.
    """
    def truth(X, grid):
        return np.sin(np.pi * np.outer(X[:, 0], grid)) + X[:, [1]] ** 2 * np.cos(2 * np.pi * grid)

    for seed in range(3):
        rng = np.random.default_rng(seed)
        grid = np.linspace(0, 1, 30)
        X, X_test = rng.uniform(-1, 1, (40, 2)), rng.uniform(-1, 1, (100, 2))
        Y = truth(X, grid) + 0.05 * rng.normal(size=(40, 30))
        Y_bad = Y.copy()
        hit = rng.uniform(size=Y.shape) < 0.1
        Y_bad[hit] = rng.uniform(-10, 10, size=hit.sum())
        err = {}
        for loss in ["square", "logcosh(25)"]:
            for name, data in [("clean", Y), ("outliers", Y_bad)]:
                model = KPLRegressor(dictionary=Fourier(4), kernel=Gaussian(1.0), lam=1e-4, loss=loss)
                model.fit(X, data, locations=grid)
                err[loss, name] = np.mean((model.predict(X_test) - truth(X_test, grid)) ** 2)
        assert err["logcosh(25)", "outliers"] < 4 * err["logcosh(25)", "clean"]
        assert err["square", "outliers"] > 10 * err["square", "clean"]
        assert err["square", "outliers"] > 5 * err["logcosh(25)", "outliers"]


def test_robust_centre_is_the_pointwise_m_estimate(rng):
    Y = rng.normal(size=(41, 5))
    Y[:3] += 100.0
    obs = Observations.from_dense(Y, np.linspace(0, 1, 5))
    grid = np.linspace(0, 1, 5)

    def centre(loss):
        return center_responses(obs, (0, 1), derivative=None if loss.is_square else loss.derivative)[0](grid)

    np.testing.assert_allclose(centre(Square()), Y.mean(axis=0), rtol=1e-12)
    np.testing.assert_allclose(centre(LogCosh(1e6)), np.median(Y, axis=0), atol=1e-5)
    mu = centre(LogCosh(2.0))
    np.testing.assert_allclose(np.tanh(2.0 * (mu[None, :] - Y)).sum(axis=0), 0.0, atol=1e-9)


# ----------------------------------------------------------------------------- estimator
def test_estimator_solvers_and_fitted_attributes(rng):
    X, Y, grid = make_problem(rng, n=30, m=25, missing=0.3)
    kw = dict(dictionary=BSpline(8), kernel=Gaussian(1.0), lam=1e-3)
    eig = KPLRegressor(**kw).fit(X, Y, locations=grid)
    assert eig.solver_ == "eig" and eig.n_iter_ == 0 and eig.converged_ and eig.grad_norm_ is None
    exact = KPLRegressor(solver="exact_partial", **kw).fit(X, Y, locations=grid)
    itr = KPLRegressor(solver="iterative", solver_options={"tol": 1e-9}, **kw).fit(X, Y, locations=grid)
    assert exact.solver_ == "exact_partial" and exact.converged_ and exact.n_iter_ >= 1
    assert itr.solver_ == "iterative" and itr.converged_ and itr.grad_norm_ is not None and itr.n_iter_ >= 1
    assert np.linalg.norm(itr.dual_coef_ - exact.dual_coef_) < 1e-6 * np.linalg.norm(exact.dual_coef_)
    # the exact partial solution differs from the plug-in one (different Gram matrices)
    assert np.linalg.norm(eig.dual_coef_ - exact.dual_coef_) > 1e-3 * np.linalg.norm(exact.dual_coef_)
    robust = KPLRegressor(loss="logcosh(10)", **kw).fit(X, Y, locations=grid)
    assert robust.solver_ == "iterative" and robust.loss_ == LogCosh(10.0).at_scale(robust.response_scale_)
    assert robust.predict(X[:3]).shape == (3, 25)
    params = clone(robust).get_params()
    assert params["loss"] == "logcosh(10)" and params["solver"] == "auto"


def test_estimator_on_dti_wavelets_logcosh():
    """The paper's DTI setting (redundant wavelet dictionary: singular Gram) runs and converges."""
    from fdakpl import datasets

    ds = datasets.dti_first_visits().isel(sample=slice(0, 40))
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*missing input values.*")
        model = KPLRegressor(dictionary=Wavelet("db3", level=4), kernel=Gaussian(0.9), output_matrix=1.5, lam=1e-3,
                             interpolate_inputs=True, loss="logcosh(5)").fit(ds["cca"], ds["rcst"])
        assert model.converged_
        pred = model.predict(ds["cca"])
    resid = pred.values - ds["rcst"].values
    assert np.nanmean(resid ** 2) < np.nanvar(ds["rcst"].values)


def test_bad_input_is_refused(rng):
    X, Y, grid = make_problem(rng, n=10, m=8)
    with pytest.raises(ValueError, match="gamma must be a finite number > 0"):
        KPLRegressor(loss="logcosh(0)").fit(X, Y, locations=grid)
    with pytest.raises(ValueError, match="gamma must be a finite number > 0"):
        KPLRegressor(loss=LogCosh(-2.0))
    with pytest.raises(TypeError, match="needs derivative"):
        KPLRegressor(loss=CustomLoss(lambda y, f: np.abs(f - y), None))
    with pytest.raises(TypeError, match="wrap a function"):
        KPLRegressor(loss=lambda y, f: (f - y) ** 2).fit(X, Y, locations=grid)
    with pytest.raises(ValueError, match="solves the square loss only"):
        KPLRegressor(loss="logcosh", solver="eig").fit(X, Y, locations=grid)
    with pytest.raises(ValueError, match="solves the square loss only"):
        KPLRegressor(loss="huber(1)", solver="exact_partial").fit(X, Y, locations=grid)
    with pytest.raises(ValueError, match="solver must be one of"):
        KPLRegressor(solver="lbfgs").fit(X, Y, locations=grid)
    with pytest.raises(TypeError, match="unknown solver_options"):
        KPLRegressor(solver="iterative", solver_options={"maxiter": 3}).fit(X, Y, locations=grid)
    with pytest.raises(ValueError, match="tol must be"):
        KPLRegressor(solver="iterative", solver_options={"tol": 0.0}).fit(X, Y, locations=grid)


def test_non_finite_loss_stops_with_an_error_naming_the_iteration(rng):
    K, B, design, *_ = _setup(rng, n=10, m=12, d=4, missing=0.2)
    # finite near the data, overflowing once a prediction leaves [-3, 3]; the optimum lies outside (at y + 10),
    # so the optimiser's steps get there (value and derivative agree, as any line search expects)
    explode = CustomLoss(lambda y, f: np.where(np.abs(f) < 3, (f - y - 10) ** 2, np.inf),
                         lambda y, f: 2 * (f - y - 10), name="exploding")
    with pytest.raises(ValueError, match=r"exploding loss value is not finite .* at L-BFGS-B iteration \d+"):
        kpl_iterative(K, B, design, 1e-3, explode, warn=False)
    nan_deriv = CustomLoss(lambda y, f: (f - y) ** 2, lambda y, f: np.full_like(f, np.nan), name="broken")
    with pytest.raises(ValueError, match=r"broken loss .*derivative is not finite .* iteration 0"):
        kpl_iterative(K, B, design, 1e-3, nan_deriv)


def test_non_convergence_warns_and_reports(rng):
    X, Y, grid = make_problem(rng, n=20, m=15, missing=0.2)
    model = KPLRegressor(dictionary=BSpline(6), lam=1e-5, loss="logcosh(50)", solver_options={"max_iter": 1})
    with pytest.warns(ConvergenceWarning, match="did not converge"):
        model.fit(X, Y, locations=grid)
    assert not model.converged_ and model.n_iter_ == 1 and model.grad_norm_ > 0


def test_small_lambda_does_not_magnify_the_gradient_residual():
    """At tiny lambda the coefficients must come from the state, not from A = -Gamma / (2 n lambda) alone."""
    import warnings

    from fdakpl import Fourier, Gaussian, KPLRegressor
    from fdakpl.datasets import make_toy

    ds = make_toy(120, random_state=0)
    tr, te = ds.isel(sample=slice(0, 60)), ds.isel(sample=slice(60, 120))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for lam in (1e-9, 1e-7):
            robust = KPLRegressor(Fourier(15), Gaussian(2.24), lam=lam, loss="logcosh(10)").fit(tr.x, tr.y)
            ridge = KPLRegressor(Fourier(15), Gaussian(2.24), lam=lam).fit(tr.x, tr.y)
            e_r = float(((robust.predict(te.x).values - te.y.values) ** 2).mean())
            e_q = float(((ridge.predict(te.x).values - te.y.values) ** 2).mean())
            assert e_r < 2 * e_q, (lam, e_r, e_q)
