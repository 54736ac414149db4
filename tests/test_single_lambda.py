"""The single-lambda route (Cholesky factorisations, preconditioned conjugate gradients, tridiagonal reduction)
against the eigendecomposition route, the Kronecker system and dense solves; the dictionary caches against
direct computations."""

import numpy as np
import pytest

import fdakpl.estimators.kpl as kpl
import fdakpl.solvers.shifted as shifted
from fdakpl import BSpline, Fourier, Gaussian, KPLRegressor, Wavelet
from fdakpl.kernels import Matrix, ScaleDecay, check_spd
from fdakpl.solvers.closed_form import brute_force_ridge, decompose, ridge_coef, ridge_single
from fdakpl.solvers.shifted import ShiftPlan, cg_iterations, plan_shifts, solve_shifted

from .conftest import make_problem


def _spd(rng, d):
    A = rng.normal(size=(d, d))
    return A @ A.T / d + 0.5 * np.eye(d)


def _rel(a, b):
    return float(np.abs(a - b).max() / np.abs(b).max())


@pytest.mark.parametrize("gram", ["identity", "spd", "singular"])
@pytest.mark.parametrize("output", ["identity", "diagonal", "two_values", "spd"])
def test_single_lambda_equals_eig_and_kronecker(rng, gram, output):
    n, d = 25, 6
    X = rng.normal(size=(n, 3))
    K = Gaussian(1.5)(X)
    N = rng.normal(size=(n, d))
    G = {"identity": np.eye(d), "spd": _spd(rng, d),
         "singular": (lambda v: v @ v.T)(rng.normal(size=(d, 3)))}[gram]
    B = {"identity": np.eye(d), "diagonal": np.diag(1.5 ** -np.arange(d, dtype=float)),
         "two_values": np.diag([1.0] * 3 + [0.5] * 3), "spd": _spd(rng, d)}[output]
    for lam in (1e-5, 1e-2):
        A, route = ridge_single(K, G, B, N, lam)
        assert _rel(A, ridge_coef(decompose(K, G, B, N), lam)) < 1e-8
        assert _rel(A, brute_force_ridge(K, G, B, N, lam)) < 1e-8
    # at n = 25 iterations are not worth it (the tests below force them)
    assert route in {"cholesky", "tridiagonal"}


#: cost models that force each route of the planner (iterations nearly free: groups as wide as allowed and
#: shifts without a factorisation; the tridiagonal reduction nearly free)
FORCED = {"cholesky_cg": {"ITERATION_WEIGHT": 1e-4, "ITERATION_OVERHEAD": 0.0},
          "tridiagonal": {"TRIDIAGONAL_WEIGHT": 1e-6}}


@pytest.mark.parametrize("route", ["cholesky_cg", "tridiagonal"])
@pytest.mark.parametrize("case", ["many_values", "nearly_singular_K", "singular_gram"])
def test_single_lambda_routes_equal_eig_and_kronecker(rng, monkeypatch, route, case):
    """Many distinct eigenvalues of B^1/2 G B^1/2 (an SPD B), a nearly singular K (repeated inputs, wide
    bandwidth, tiny lambda) and a redundant dictionary, through the planner's routes."""
    n, d = 60, 7
    X = rng.normal(size=(n, 2))
    if case == "nearly_singular_K":
        X = np.repeat(X[: n // 3], 3, axis=0) + 1e-9 * rng.normal(size=(n, 2))
    K = Gaussian(3.0 if case == "nearly_singular_K" else 1.0)(X)
    G = (lambda v: v @ v.T)(rng.normal(size=(d, 5))) if case == "singular_gram" else _spd(rng, d)
    B = _spd(rng, d)
    N = rng.normal(size=(n, d))
    for name, value in FORCED[route].items():
        monkeypatch.setattr(shifted, name, value)
    # nearly singular K: rank 20 of 60; at lam = 1e-7 the systems' condition number is about 1e7, and the
    # eigendecomposition and Kronecker routes themselves differ by 3e-9 (by 2e-7 at lam = 1e-9)
    for lam in ((1e-7, 1e-5) if case == "nearly_singular_K" else (1e-5, 1e-2)):
        A, got = ridge_single(K, G, B, N, lam)
        assert got == route
        assert _rel(A, ridge_coef(decompose(K, G, B, N), lam)) < 1e-8
        assert _rel(A, brute_force_ridge(K, G, B, N, lam)) < 1e-8


def _shifted_problem(rng, n=300, c=40):
    X = rng.normal(size=(n, 3))
    K = Gaussian(1.0)(X)
    t = np.exp(rng.uniform(np.log(1e-3), np.log(1e3), size=c))  # a spread of 1e6: many groups
    b = rng.normal(size=(n, c))
    exact = np.column_stack([np.linalg.solve(K + s * np.eye(n), b[:, j]) for j, s in enumerate(t)])
    return K, t, b, exact


@pytest.mark.parametrize("weights, expected", [
    ({}, "tridiagonal"),  # 40 distinct shifts at n = 300: one reduction is cheapest by the cost model
    (FORCED["cholesky_cg"], "cholesky_cg"),
    ({"ITERATION_WEIGHT": 0.3, "ITERATION_OVERHEAD": 0.0, "TRIDIAGONAL_WEIGHT": 1e4}, "cholesky_cg"),
    (FORCED["tridiagonal"], "tridiagonal"),
    ({"ITERATION_WEIGHT": 1e4, "TRIDIAGONAL_WEIGHT": 1e4}, "cholesky"),  # one factorisation per shift
])
def test_solve_shifted_equals_dense_solves(rng, monkeypatch, weights, expected):
    K, t, b, exact = _shifted_problem(rng)
    for name, value in weights.items():
        monkeypatch.setattr(shifted, name, value)
    Z, route = solve_shifted(K, t, b)
    assert route == expected
    assert _rel(Z, exact) < 1e-9
    if expected == "cholesky_cg":  # few factorisations; the largest shifts (above ||K||) without one
        plan = plan_shifts(np.sort(t), np.ones(t.size, int), K.shape[0], float(np.abs(K).sum(1).max()))
        assert plan.anchors[-1] is None and 1 <= len(plan.anchors) - 1 <= 3


def test_solve_shifted_falls_back_to_factorisations(rng, monkeypatch):
    """No convergence within the allowed iterations, or a failed check of the true residual: every iterative
    column is factorised at its own shift, and the answer is exact."""
    K, t, b, exact = _shifted_problem(rng, n=200, c=6)
    for name, value in FORCED["cholesky_cg"].items():
        monkeypatch.setattr(shifted, name, value)
    Z, route = solve_shifted(K, t, b)
    assert route == "cholesky_cg" and _rel(Z, exact) < 1e-9
    with monkeypatch.context() as m:  # two iterations allowed: far from the stopping rule
        m.setattr(shifted, "ITERATION_MARGIN", 0)
        m.setattr(shifted, "cg_iterations", lambda kappa, rtol=1e-12: 2)
        Z, route = solve_shifted(K, t, b)
    assert route == "cholesky" and _rel(Z, exact) < 1e-9
    monkeypatch.setattr(shifted, "BACKWARD_TOL", 0.0)
    Z, route = solve_shifted(K, t, b)
    assert route == "cholesky" and _rel(Z, exact) < 1e-9


def test_iteration_bound_holds_without_margin(rng, monkeypatch):
    """The Chebyshev bound of cg_iterations suffices without the safety margin, on a K whose preconditioned
    spectrum fills [1, kappa] (no factorisation beyond the anchor's, no fallback)."""
    n = 400
    Q, _ = np.linalg.qr(rng.normal(size=(n, n)))
    s = np.geomspace(1e-6, 1e3, n)
    K = (Q * s) @ Q.T
    K = 0.5 * (K + K.T)
    t = np.array([1.0, 30.0])  # anchor at one end: kappa = 30 for the other
    b = rng.normal(size=(n, 2))
    monkeypatch.setattr(shifted, "ITERATION_MARGIN", 0)
    factored = []
    real = shifted._factor
    monkeypatch.setattr(shifted, "_factor", lambda K, t0: factored.append(t0) or real(K, t0))
    plan = ShiftPlan("cholesky_cg", [0], [np.array([0, 1])], 0.0)
    Z, route = solve_shifted(K, t, b, plan=plan)
    assert factored == [1.0] and route == "cholesky_cg"
    exact = np.column_stack([np.linalg.solve(K + s_ * np.eye(n), b[:, j]) for j, s_ in enumerate(t)])
    assert _rel(Z, exact) < 1e-9
    assert cg_iterations(30.0) < 200  # the bound is a number of iterations, not a property of K


def test_solve_shifted_rejects_bad_shifts(rng):
    with pytest.raises(ValueError, match="positive"):
        solve_shifted(np.eye(3), np.array([1.0, -1.0]), np.ones((3, 2)))


@pytest.mark.parametrize("missing", [0.0, 0.3])
@pytest.mark.parametrize("dictionary, output_matrix", [
    (Fourier(4), None),
    (Fourier(4), ScaleDecay(1.5)),
    (BSpline(9), None),
    (Wavelet("db2", level=2), ScaleDecay(1.7)),  # redundant: singular Gram
    (BSpline(6), "spd"),
])
def test_estimator_auto_single_lambda_equals_eig(rng, monkeypatch, missing, dictionary, output_matrix):
    X, Y, grid = make_problem(rng, n=40, m=33, missing=missing)
    if output_matrix == "spd":
        output_matrix = Matrix(_spd(rng, 6))
    kw = dict(dictionary=dictionary, kernel=Gaussian(0.8), output_matrix=output_matrix, lam=3e-3)
    ref = KPLRegressor(**kw).fit(X, Y, locations=grid)  # n = 40 < SINGLE_LAMBDA_MIN_N: eigendecomposition
    assert ref.route_ == "eigendecomposition" and ref.decomposition_ is not None
    monkeypatch.setattr(kpl, "SINGLE_LAMBDA_MIN_N", 10)
    fast = KPLRegressor(**kw).fit(X, Y, locations=grid)
    assert fast.route_ in {"cholesky", "cholesky_cg", "tridiagonal"} and fast.decomposition_ is None
    assert _rel(fast.coef_, ref.coef_) < 1e-8
    Xn = rng.uniform(-1, 1, size=(5, 3))
    assert _rel(fast.predict(Xn), ref.predict(Xn)) < 1e-8
    # an explicit solver="eig" keeps the lambda path at any n
    assert KPLRegressor(**kw, solver="eig").fit(X, Y, locations=grid).route_ == "eigendecomposition"


def test_dictionary_state_reuse_is_keyed_by_parameters_domain_and_grid():
    a = Wavelet("db3", level=2).fit(domain=(0.0, 1.0))
    b = Wavelet("db3", level=2).fit(domain=(0.0, 2.0))
    c = Wavelet("db3", level=2, resolution=32).fit(domain=(0.0, 1.0))
    again = Wavelet("db3", level=2).fit(domain=(0.0, 1.0))
    np.testing.assert_array_equal(a.gram(), again.gram())
    assert a.grid_[-1] == 1.0 and b.grid_[-1] == 2.0  # not the state of the other domain
    assert a.n_atoms_ != c.n_atoms_
    fresh = Wavelet("db3", level=2)
    fresh._setup_key = lambda obs: None  # no reuse: computed from scratch
    fresh.fit(domain=(0.0, 1.0))
    np.testing.assert_allclose(a.gram(), fresh.gram(), rtol=0, atol=0)


def test_scaled_gram_eigh_is_the_eigendecomposition(rng):
    dic = BSpline(7).fit(domain=(0.0, 1.0))
    G = dic.gram()
    Bh = np.diag(rng.uniform(0.5, 2.0, size=7))
    for arg, C in [(None, G), (Bh, Bh @ G @ Bh)]:
        e, V = dic.scaled_gram_eigh(arg)
        np.testing.assert_allclose(V @ np.diag(e) @ V.T, C, atol=1e-12)
        assert dic.scaled_gram_eigh(arg)[0] is e  # cached


def test_check_spd_diagonal_without_eigensolver():
    np.testing.assert_array_equal(check_spd(np.diag([1.0, 2.0])), np.diag([1.0, 2.0]))
    with pytest.raises(ValueError, match="not positive definite"):
        check_spd(np.diag([1.0, 0.0]))
    with pytest.raises(ValueError, match="not positive definite"):
        check_spd(np.diag([1.0, -2.0]))


def test_rank_warning_from_cached_eigenvalues(rng):
    X, Y, _ = make_problem(rng, n=10, m=4)
    with pytest.warns(UserWarning, match="spans 9 dimensions but the responses are observed at only 4"):
        KPLRegressor(dictionary=Fourier(4), lam=1e-3).fit(X, Y, locations=np.linspace(0, 1, 4))
