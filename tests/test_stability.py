"""Numerical stability (ill-conditioned Gram and kernel matrices, lambda down to 1e-12) against an
extended-precision solve, condition-number warnings, and determinism (seeds, threads)."""

import warnings
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
import xarray as xr

from fdakpl import Fourier, FunctionalRegression, Gaussian, KPLRegressor, Wavelet
from fdakpl.data.functional import Observations
from fdakpl.dictionaries import Learned, RandomFourier
from fdakpl.solvers.closed_form import brute_force_ridge, decompose, ridge_coef, ridge_sylvester

mp = pytest.importorskip("mpmath", reason="mpmath gives the extended-precision reference")

EPS = np.finfo(float).eps
DPS = 40  # decimal digits of the reference solves


@pytest.fixture(autouse=True)
def _restore_mpmath_precision():
    dps = mp.mp.dps
    yield
    mp.mp.dps = dps
LAMBDAS = [1e-2, 1e-6, 1e-9, 1e-12]


def mp_system(K, G, B, n):
    """``K kron (G B)`` in 40-digit arithmetic, from the exact float64 entries (no float64 product)."""
    d = G.shape[0]
    mp.mp.dps = DPS
    GB = mp.matrix(G.tolist()) * mp.matrix(B.tolist())
    M = mp.zeros(n * d, n * d)
    for i in range(n):
        for j in range(n):
            kij = mp.mpf(float(K[i, j]))
            for k in range(d):
                for m in range(d):
                    M[i * d + k, j * d + m] = kij * GB[k, m]
    return M


def mp_solve(M, N, lam):
    n, d = N.shape
    mp.mp.dps = DPS
    A = M.copy()
    nl = mp.mpf(n) * mp.mpf(float(lam))
    for i in range(n * d):
        A[i, i] += nl
    x = mp.lu_solve(A, mp.matrix(N.reshape(-1).tolist()))
    return np.array([float(v) for v in x]).reshape(n, d)


def system_cond(K, G, B, lam):
    n = K.shape[0]
    return np.linalg.cond(np.kron(K, G @ B) + n * lam * np.eye(n * G.shape[0]))



def _problem(kind, seed=0):
    rng = np.random.default_rng(seed)
    n, d = 8, 6
    X = rng.normal(size=(n, 2))
    if kind in {"near-duplicate-curves", "both"}:
        X[1] = X[0] + 1e-9  # two curves that differ by 1e-9: K is singular to working precision
        X[5] = X[4] + 1e-7
    K = Gaussian(1.0)(X)
    if kind == "redundant-dictionary":  # a wavelet frame with boundary extension: singular Gram
        G = Wavelet("db2", level=1, resolution=4, domain=(0, 1)).fit().gram()
    elif kind in {"learnt-like-dictionary", "both"}:  # nearly dependent atoms: cond(G) = 1e10
        Q, _ = np.linalg.qr(rng.normal(size=(d, d)))
        G = (Q * np.geomspace(1.0, 1e-10, d)) @ Q.T
        G = 0.5 * (G + G.T)
    else:
        G = np.eye(d)
    Q, _ = np.linalg.qr(rng.normal(size=(d, d)))
    B = (Q * rng.uniform(0.5, 2.0, d)) @ Q.T
    B = 0.5 * (B + B.T)
    return K, G, B, rng.normal(size=(n, d))


KINDS = ["near-duplicate-curves", "learnt-like-dictionary", "redundant-dictionary", "both"]


@pytest.mark.parametrize("kind", KINDS)
def test_eig_solver_is_finite_and_accurate_against_extended_precision(kind):
    K, G, B, N = _problem(kind)
    n = K.shape[0]
    M = mp_system(K, G, B, n)
    dec = decompose(K, G, B, N)
    for lam in LAMBDAS:
        ref = mp_solve(M, N, lam)
        A = ridge_coef(dec, lam)
        assert np.all(np.isfinite(A))
        cond = system_cond(K, G, B, lam)
        err = np.linalg.norm(A - ref) / np.linalg.norm(ref)
        # backward-stable solvers: relative error <= (small constant) x cond x eps
        assert err <= 50 * cond * EPS + 1e-13, (kind, lam, err, cond)
        # the fitted coefficients h_i = sum_j k(x_i, x_j) B alpha_j are better conditioned than alpha
        H, Href = K @ A @ B, K @ ref @ B
        assert np.linalg.norm(H - Href) / np.linalg.norm(Href) <= max(1e-5, 50 * cond * EPS), (kind, lam)
        # the Kronecker brute force agrees within the same bound
        Ab = brute_force_ridge(K, G, B, N, lam)
        assert np.linalg.norm(Ab - ref) / np.linalg.norm(ref) <= 50 * cond * EPS + 1e-13


def test_times_B_route_matches_at_tiny_lambda():
    K, G, B, N = _problem("both")
    dec = decompose(K, G, B, N)
    for lam in LAMBDAS:
        np.testing.assert_allclose(ridge_coef(dec, lam, times_B=True), ridge_coef(dec, lam) @ B,
                                   rtol=1e-6, atol=1e-9 * np.abs(ridge_coef(dec, lam) @ B).max())


def test_sylvester_is_accurate_for_a_well_conditioned_gram_and_refuses_a_singular_one():
    K, G, B, N = _problem("near-duplicate-curves")
    M = mp_system(K, G, B, K.shape[0])
    for lam in LAMBDAS:
        ref = mp_solve(M, N, lam)
        A = ridge_sylvester(K, G, B, N, lam)
        cond = system_cond(K, G, B, lam)
        assert np.linalg.norm(A - ref) / np.linalg.norm(ref) <= 50 * cond * EPS + 1e-13
    K, G, B, N = _problem("redundant-dictionary")
    with pytest.raises(ValueError, match=r"singular or ill-conditioned.*solver='eig'"):
        ridge_sylvester(K, G, B, N, 1e-3)


def _near_duplicate_data(n=10, m=16, seed=0):
    rng = np.random.default_rng(seed)
    t, s = np.linspace(0, 1, m), np.linspace(0, 1, 12)
    a = rng.uniform(-1, 1, n)
    a[1] = a[0] + 1e-10
    x = np.sin(np.pi * np.outer(a, s))
    y = np.cos(np.pi * np.outer(a, t)) + 0.05 * rng.normal(size=(n, m))
    return xr.Dataset({"y": (("sample", "t"), y), "x": (("sample", "s"), x)}, coords={"t": t, "s": s})


def test_fitted_estimator_matches_extended_precision_at_lambda_1e_12():
    ds = _near_duplicate_data()
    X, Y = ds.x, ds.y
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = KPLRegressor(dictionary=Learned(5, tau=1e-3, max_iter=20, progress=False, random_state=0),
                           kernel=Gaussian(0.3), lam=1e-12).fit(X, Y)
    K, G, B, N = est.K_, est.gram_, est.B_, est.nu_
    lam = 1e-12 * est.dictionary_.lambda_unit()  # the fit's penalty: lambda in the unit of the atoms' norms
    ref = mp_solve(mp_system(K, G, B, K.shape[0]), N, lam)
    cond = system_cond(K, G, B, lam)
    assert np.all(np.isfinite(est.dual_coef_)) and np.all(np.isfinite(est.predict(X).values))
    assert np.linalg.norm(est.dual_coef_ - ref) / np.linalg.norm(ref) <= 50 * cond * EPS + 1e-13
    pred = est.predict(X).values
    assert np.abs(pred[0] - pred[1]).max() < 1e-4  # near-identical curves, near-identical predictions


def test_path_criteria_stay_finite_with_a_singular_gram_and_tiny_lambdas():
    ds = _near_duplicate_data()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = FunctionalRegression("y ~ x", ds, dictionary="db2", level=2, kernel=Gaussian(0.3), lam="loo",
                                   lam_grid=np.geomspace(1e-12, 1e-2, 11), progress=False).fit()
    c = res.criteria
    for v in (c.train_mse, c.edf, c.loo):
        assert np.all(np.isfinite(v))
    assert np.all(c.edf >= 0)
    assert np.all(np.diff(c.edf) <= 1e-8)  # more regularisation, fewer effective degrees of freedom


def test_summary_warns_with_condition_numbers():
    ds = _near_duplicate_data()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        bad = FunctionalRegression("y ~ x", ds, dictionary=Fourier(2), kernel=Gaussian(0.3), lam=1e-12,
                                   progress=False).fit()
        good = FunctionalRegression("y ~ x", ds.isel(sample=slice(1, None)), dictionary=Fourier(2),
                                    kernel=Gaussian(0.3), lam=1e-2, progress=False).fit()
    cond = bad.condition_numbers
    K = bad.estimator.K_
    n = K.shape[0]
    np.testing.assert_allclose(cond["kernel"], np.linalg.cond(K + n * 1e-12 * np.eye(n)), rtol=1e-3)
    assert cond["kernel"] > 1e10
    text = str(bad.summary())
    assert "cond(K + n lambda I)" in text and "Warning: cond(K + n lambda I) = " in text
    assert "Warning: cond(" not in str(good.summary())
    # a learnt dictionary with nearly dependent atoms: the Gram warning
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        learnt = FunctionalRegression("y ~ x", ds.isel(sample=slice(1, None)), kernel=Gaussian(0.3), lam=1e-3,
                                      dictionary=Learned(8, tau=1e-4, max_iter=3, progress=False, random_state=0),
                                      progress=False).fit()
    g = learnt.condition_numbers["gram"]
    np.testing.assert_allclose(g, np.linalg.cond(learnt.estimator.gram_), rtol=1e-6)
    assert ("Warning: cond(Gram)" in str(learnt.summary())) == bool(g > 1e8 and learnt.diagnostics()["riesz"])
    # random Fourier atoms with a long length scale are nearly dependent: cond(Gram) between 1e8 and 1e10
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rff = FunctionalRegression("y ~ x", ds.isel(sample=slice(1, None)), kernel=Gaussian(0.3), lam=1e-3,
                                   dictionary=RandomFourier(4, length_scale=0.5, random_state=0),
                                   progress=False).fit()
    assert 1e8 < rff.condition_numbers["gram"] < 1e10
    assert "Warning: cond(Gram) = " in str(rff.summary())


# ----------------------------------------------------------------------------- determinism
def _data(seed=0, n=24, m=20):
    rng = np.random.default_rng(seed)
    t, s = np.linspace(0, 1, m), np.linspace(0, 1, 15)
    a = rng.uniform(-1, 1, n)
    y = np.cos(np.pi * np.outer(a, t)) + 0.1 * rng.normal(size=(n, m))
    y[rng.uniform(size=y.shape) < 0.2] = np.nan
    y[:, 0] = 1.0
    return xr.Dataset({"y": (("sample", "t"), y), "x": (("sample", "s"), np.sin(np.pi * np.outer(a, s))),
                       "z": ("sample", rng.normal(size=n))}, coords={"t": t, "s": s})


def _fit(ds, **kw):
    kw.setdefault("dictionary", Fourier(3))
    kw.setdefault("progress", False)
    return FunctionalRegression("y ~ x + z", ds, **kw).fit()


def test_same_seed_gives_bit_identical_cross_validation():
    ds = _data()
    kw = dict(lam="cv", cv=3, lam_grid=np.geomspace(1e-6, 1, 7), random_state=7, n_jobs=1,
              param_grid={"sigma": [0.5, 1.0]})
    a, b = _fit(ds, **kw), _fit(ds, **kw)
    np.testing.assert_array_equal(a.cv_result["fold_scores"], b.cv_result["fold_scores"])
    np.testing.assert_array_equal(a.predict().values, b.predict().values)
    # two worker processes (one BLAS thread each) give the same scores, bit for bit
    p = _fit(ds, **{**kw, "n_jobs": 2})
    np.testing.assert_array_equal(a.cv_result["fold_scores"], p.cv_result["fold_scores"])
    c = _fit(ds, **{**kw, "random_state": 8})
    assert not np.array_equal(a.cv_result["fold_scores"], c.cv_result["fold_scores"])  # the seed matters


def test_same_seed_gives_bit_identical_dictionaries_bands_and_tests():
    ds = _data()
    obs = Observations.from_dense(ds.y.values, ds.t.values)
    d1 = Learned(4, tau=0.01, max_iter=10, random_state=3, progress=False).fit(obs)
    d2 = Learned(4, tau=0.01, max_iter=10, random_state=3, progress=False).fit(obs)
    np.testing.assert_array_equal(d1.values_, d2.values_)
    r1 = RandomFourier(10, random_state=5, domain=(0, 1)).fit()
    r2 = RandomFourier(10, random_state=5, domain=(0, 1)).fit()
    np.testing.assert_array_equal(r1.evaluate(ds.t.values), r2.evaluate(ds.t.values))
    res = _fit(ds, kernel=Gaussian(1.0))
    for kind in ("pointwise", "simultaneous"):
        b1 = res.prediction_bands(alpha=0.2, kind=kind, random_state=11)
        b2 = res.prediction_bands(alpha=0.2, kind=kind, random_state=11)
        for u, v in zip(b1, b2, strict=True):
            np.testing.assert_array_equal(u.values, v.values)
    p1 = res.permutation_test("x", n_permutations=5, random_state=2, progress=False)
    p2 = res.permutation_test("x", n_permutations=5, random_state=2, progress=False)
    np.testing.assert_array_equal(p1.null_distribution, p2.null_distribution)
    assert p1.pvalue == p2.pvalue


def test_two_fits_in_two_threads_equal_sequential_fits_bit_for_bit():
    datasets = [_data(seed) for seed in (1, 2, 3, 4)]

    def job(ds):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = _fit(ds, dictionary=Learned(4, tau=0.01, max_iter=5, random_state=0, progress=False))
            return res.predict().values, res.lam, res.criteria.gcv

    sequential = [job(ds) for ds in datasets]
    with ThreadPoolExecutor(max_workers=2) as pool:
        threaded = list(pool.map(job, datasets))
    for (p1, l1, g1), (p2, l2, g2) in zip(sequential, threaded, strict=True):
        np.testing.assert_array_equal(p1, p2)
        assert l1 == l2
        np.testing.assert_array_equal(g1, g2)
