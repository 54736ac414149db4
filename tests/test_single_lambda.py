"""The single-lambda route (Cholesky / tridiagonal reduction) against the eigendecomposition route and the
Kronecker system; the dictionary caches against direct computations."""

import numpy as np
import pytest

import fdakpl.estimators.kpl as kpl
from fdakpl import BSpline, Fourier, Gaussian, KPLRegressor, Wavelet
from fdakpl.kernels import Matrix, ScaleDecay, check_spd
from fdakpl.solvers.closed_form import brute_force_ridge, decompose, ridge_coef, ridge_single

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
    # the route follows the number of distinct nonzero eigenvalues of B^1/2 G B^1/2
    if gram == "identity" and output in {"identity", "two_values"}:
        assert route == "cholesky"
    if output in {"diagonal", "spd"} and gram != "singular":
        assert route == "tridiagonal"


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
    assert fast.route_ in {"cholesky", "tridiagonal"} and fast.decomposition_ is None
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
