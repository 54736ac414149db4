"""Approximate KPL (Nyström / random Fourier features, primal form), streaming and dask (issue 6)."""

import warnings

import numpy as np
import pandas as pd
import pytest
import xarray as xr

from fdakpl import BSpline, Fourier, Gaussian, KPLRegressor, Laplace, Product, Wavelet
from fdakpl.data.functional import quadrature_weights
from fdakpl.dictionaries import FPCA
from fdakpl.estimators.approx import (
    ApproxKPLRegressor,
    Nystroem,
    RandomFourierFeatures,
    SufficientStats,
    primal_decompose,
)
from fdakpl.kernels import Matrix
from fdakpl.ridge.path import RidgePath
from fdakpl.ridge.problem import prepare_problem
from fdakpl.solvers.closed_form import decompose
from fdakpl.tuning.criteria import DEFAULT_LAMBDAS


@pytest.fixture
def dask():
    """The dask module, for the tests that read chunked data; only they skip when dask is missing."""
    return pytest.importorskip("dask")


def rel(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return float(np.abs(a - b).max() / max(np.abs(b).max(), 1e-300))


def curves(rng, n=120, p=25, m=30, missing=0.0):
    """Input curves on [0, 1] (sample x t) and nonlinear responses (sample x s), as a Dataset."""
    t = np.linspace(0, 1, p)
    s = np.linspace(0, 1, m)
    coef = rng.normal(size=(n, 3))
    X = coef @ np.vstack([np.ones(p), np.sin(2 * np.pi * t), np.cos(2 * np.pi * t)])
    Y = (np.sin(np.outer(coef[:, 0], s) * 2) + np.tanh(coef[:, [1]]) * np.cos(2 * np.pi * s)
         + 0.1 * rng.normal(size=(n, m)))
    if missing:
        Y[rng.uniform(size=Y.shape) < missing] = np.nan
        Y[:, 0] = np.where(np.isnan(Y[:, 0]), 0.3, Y[:, 0])  # every curve keeps a point
    return xr.Dataset({"x": (("sample", "t"), X), "y": (("sample", "s"), Y)},
                      coords={"sample": [f"c{i}" for i in range(n)], "t": t, "s": s})


B_FULL = Matrix(np.eye(7) + 0.3 * np.diag(np.ones(6), 1) + 0.3 * np.diag(np.ones(6), -1))


# --------------------------------------------------------------------------
# primal solution = exact KPL when Z Z^T = K
# --------------------------------------------------------------------------


@pytest.mark.parametrize(("dictionary", "output_matrix", "missing"), [
    (Fourier(3), 1.5, 0.0),                     # quadrature, diagonal B
    (Fourier(3), B_FULL, 0.3),                  # plug-in, full B
    (Wavelet("db2", level=2), 1.5, 0.2),        # redundant dictionary: singular Gram
    (FPCA(4), None, 0.2),                       # data-dependent dictionary
    (BSpline(8), None, 0.0),                    # non-orthonormal Gram
])
def test_nystroem_all_landmarks_equals_exact(rng, dictionary, output_matrix, missing):
    ds = curves(rng, n=90, missing=missing)
    new = curves(np.random.default_rng(7), n=15)
    # the approximate route estimates partially observed inner products by the plug-in (it streams the curves)
    kw = dict(dictionary=dictionary, kernel=Gaussian(1.0), output_matrix=output_matrix, lam=1e-3,
              integration="plugin" if missing else "auto")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        exact = KPLRegressor(**kw).fit(ds.x, ds.y)
        approx = ApproxKPLRegressor(**kw, approx=Nystroem(90), chunk_size=16).fit(ds.x, ds.y)
    assert approx.approx_.n_features_ == 90  # K well conditioned: no eigenvalue dropped
    assert approx.integration_ == exact.integration_
    assert rel(approx.predict_coefficients(new.x), exact.predict_coefficients(new.x)) < 1e-8
    assert rel(approx.predict(new.x, at=[0.05, 0.5, 0.93]), exact.predict(new.x, at=[0.05, 0.5, 0.93])) < 1e-8
    assert rel(approx.mean_.values, exact.mean_.values) < 1e-12
    # M = Z^T A B with the exact representer coefficients A
    Z = approx.approx_.transform(ds.x.values, quadrature_weights(ds.t.values))
    assert rel(approx.coef_, Z.T @ exact.dual_coef_ @ exact.B_) < 1e-8
    # the whole lambda path: effective dof equals the exact one
    dec = decompose(exact.K_, exact.gram_, exact.B_, exact.nu_)
    for lam in (1e-5, 1e-2):
        assert approx.primal_.edf(lam) == pytest.approx(float(dec.spectrum(lam)[:, approx.primal_.active].sum()),
                                                        rel=1e-8)


@pytest.mark.parametrize("design", ["random gaps", "gaps by design"])
def test_partial_curves_integrated_as_the_exact_fits_do(rng, design):
    """Curves with gaps: the approximate fit chooses the exact fits' integration ("interpolate") and, with every
    landmark, gives their predictions and their exact leave-one-curve-out errors (RidgePath.loo) along lambda."""
    ds = curves(rng, n=60, missing=0.3 if design == "random gaps" else 0.0)
    if design == "gaps by design":  # every other curve misses the same block of the grid
        y = ds.y.values.copy()
        y[::2, 8:14] = np.nan
        ds["y"] = (("sample", "s"), y)
    lams = np.array([1e-5, 1e-3, 1e-1])
    kw = dict(dictionary=Fourier(3), kernel=Gaussian(1.0), output_matrix=1.5)
    exact = KPLRegressor(**kw, lam=1e-3).fit(ds.x, ds.y)
    approx = ApproxKPLRegressor(**kw, lam=1e-3, approx=Nystroem(60), chunk_size=7).fit(ds.x, ds.y)
    assert exact.integration_ == approx.integration_ == "interpolate"
    assert rel(approx.predict(ds.x), exact.predict(ds.x)) < 1e-10
    tuned = ApproxKPLRegressor(**kw, lam=lams, approx=Nystroem(60), chunk_size=7).fit(ds.x, ds.y)
    problem = prepare_problem(ds.x, ds.y, dictionary=Fourier(3))
    B, identity = problem.output_matrix(1.5)
    loo = RidgePath.fit(problem, Gaussian(1.0), B, identity).loo(lams)
    assert rel(tuned.scores_, loo) < 1e-10
    # the plug-in remains available, and gives other numbers on these curves
    plugin = ApproxKPLRegressor(**kw, lam=1e-3, approx=Nystroem(60), integration="plugin").fit(ds.x, ds.y)
    assert plugin.integration_ == "plugin" and rel(plugin.predict(ds.x), exact.predict(ds.x)) > 1e-4


def test_auto_integration_is_the_exact_fits_choice(rng):
    """integration="auto" from the streamed counts (a histogram of points per curve) chooses what the exact fits
    choose from the whole data: complete, dense with gaps, sparse."""
    for missing, expected in [(0.0, "quadrature"), (0.3, "interpolate"), (0.85, "plugin")]:
        ds = curves(rng, n=40, missing=missing)
        kw = dict(dictionary=Fourier(2), kernel=Gaussian(1.0), lam=1e-3)
        exact = KPLRegressor(**kw).fit(ds.x, ds.y)
        approx = ApproxKPLRegressor(**kw, approx=Nystroem(20), chunk_size=9).fit(ds.x, ds.y)
        assert exact.integration_ == approx.integration_ == expected, missing
    with pytest.raises(ValueError, match=r"needs every curve observed on the whole grid.*use 'interpolate'"):
        ApproxKPLRegressor(**kw, approx=Nystroem(20), integration="quadrature").fit(ds.x, ds.y)


def test_approximate_fits_go_through_their_own_estimator(rng):
    """One estimator per fitted form: KPLRegressor has no approx= (ApproxKPLRegressor does)."""
    ds = curves(rng, n=60, missing=0.2)
    kw = dict(dictionary=Fourier(3), kernel=Gaussian(1.0), output_matrix=1.5, lam=1e-3, integration="plugin")
    with pytest.raises(TypeError, match="approx"):
        KPLRegressor(**kw, approx=Nystroem(60))
    est = ApproxKPLRegressor(**kw, approx=Nystroem(60)).fit(ds.x, ds.y)
    exact = KPLRegressor(**kw).fit(ds.x, ds.y)
    assert est.approx_description_ == "Nyström, 60 uniform landmarks"
    assert est.coef_.shape == (60, 7) and not hasattr(est, "dual_coef_")
    pred = est.predict(ds.x.isel(sample=slice(0, 5)))
    assert isinstance(pred, xr.DataArray) and list(pred.sample.values) == [f"c{i}" for i in range(5)]
    assert rel(pred, exact.predict(ds.x.isel(sample=slice(0, 5)))) < 1e-8
    assert est.score(ds.x, ds.y) == pytest.approx(exact.score(ds.x, ds.y), rel=1e-10)


def test_product_kernel_on_terms_equals_exact(rng):
    ds = curves(rng, n=70, missing=0.1)
    ds["z"] = ("sample", rng.normal(size=70))
    kernel = Product({"x": Gaussian(1.5), "z": Gaussian(0.8)})
    kw = dict(dictionary=Fourier(2), kernel=kernel, lam=1e-3, integration="plugin")
    exact = KPLRegressor(**kw).fit(ds[["x", "z"]], ds.y)
    approx = ApproxKPLRegressor(**kw, approx=Nystroem(70), chunk_size=9).fit(ds[["x", "z"]], ds.y)
    assert rel(approx.predict(ds[["x", "z"]]), exact.predict(ds[["x", "z"]])) < 1e-8


# --------------------------------------------------------------------------
# the primal closed form, GCV and edf against brute force
# --------------------------------------------------------------------------


def _problem(rng, n=40, r=12, d=5):
    Z = rng.normal(size=(n, r))
    N = Z @ rng.normal(size=(r, d)) + 0.3 * rng.normal(size=(n, d))
    Lg = rng.normal(size=(d, d))
    G = Lg @ Lg.T + 0.5 * np.eye(d)
    Lb = rng.normal(size=(d, d))
    B = Lb @ Lb.T + np.eye(d)
    return Z, N, G, B


def test_primal_solves_normal_equations(rng):
    Z, N, G, B = _problem(rng)
    n, r = Z.shape
    d = N.shape[1]
    dec = primal_decompose(SufficientStats.from_chunk(Z, N), G, B)
    for lam in (1e-4, 0.1):
        M = dec.coef(lam)
        # (S kron G + n lam I kron B^{-1}) vec(M) = vec(Z^T N), row-major vec
        S = Z.T @ Z
        lhs = np.kron(S, G) + n * lam * np.kron(np.eye(r), np.linalg.inv(B))
        M_bf = np.linalg.solve(lhs, (Z.T @ N).reshape(-1)).reshape(r, d)
        assert rel(M, M_bf) < 1e-10


def test_gcv_rss_edf_brute_force(rng):
    Z, N, G, B = _problem(rng)
    n, d = N.shape
    dec = primal_decompose(SufficientStats.from_chunk(Z, N), G, B)
    Ginv = np.linalg.inv(G)
    for lam in (1e-3, 0.05, 2.0):
        M = dec.coef(lam)
        H = Z @ M
        # RSS = sum_i ||P_phi y_i - phi^T h_i||^2 = sum_i nu^T G^-1 nu - 2 nu^T h + h^T G h
        rss = float(np.einsum("ij,jk,ik->", N, Ginv, N) - 2 * np.sum(N * H) + np.einsum("ij,jk,ik->", H, G, H))
        assert dec.rss(lam) == pytest.approx(rss, rel=1e-9)
        # edf = trace of the linear map R -> H, with R = N G^{-1} the coefficient-space responses
        tr = 0.0
        for i in range(n):
            for j in range(d):
                R = np.zeros((n, d))
                R[i, j] = 1.0
                Mi = primal_decompose(SufficientStats.from_chunk(Z, R @ G), G, B).coef(lam)
                tr += (Z @ Mi)[i, j]
        assert dec.edf(lam) == pytest.approx(tr, rel=1e-9)
        assert dec.gcv(lam)[0] == pytest.approx(n * d * rss / (n * d - tr) ** 2, rel=1e-8)


def test_lambda_path_and_gcv_selection(rng):
    ds = curves(rng, n=150)
    lams = np.logspace(-6, 0, 13)
    sel = ApproxKPLRegressor(dictionary=Fourier(3), approx=Nystroem(40), lam=lams, criterion="gcv").fit(ds.x, ds.y)
    assert sel.lam_ == lams[int(np.argmin(sel.gcv_))] and sel.criterion_ == "gcv"
    assert 0 < int(np.argmin(sel.gcv_)) < lams.size - 1  # an interior minimum on this problem
    fixed = ApproxKPLRegressor(dictionary=Fourier(3), approx=Nystroem(40), lam=float(lams[3])).fit(ds.x, ds.y)
    assert rel(sel.primal_.coef(lams[3]), fixed.coef_) < 1e-12
    gcv_default = ApproxKPLRegressor(dictionary=Fourier(3), approx=Nystroem(40), lam="gcv").fit(ds.x, ds.y)
    assert gcv_default.gcv_.size == DEFAULT_LAMBDAS.size  # the one default grid


# --------------------------------------------------------------------------
# feature maps converge to the kernel / to exact KPL
# --------------------------------------------------------------------------


def test_random_fourier_features_match_gaussian_in_l2_geometry(rng):
    ds = curves(rng, n=6)
    w = quadrature_weights(ds.t.values)
    K = Gaussian(0.7)(ds.x.values, None, w)
    rff = RandomFourierFeatures(200_000, random_state=1).fit(Gaussian(0.7), lambda idx: (ds.x.values[idx], w), 6)
    Z = rff.transform(ds.x.values, w)
    assert np.abs(Z @ Z.T - K).max() < 0.02
    # a product of Gaussians over terms is the Gaussian of the scaled concatenation
    terms = {"x": ds.x.values, "z": rng.normal(size=(6, 1))}
    kern = Product({"x": Gaussian(0.7), "z": Gaussian(0.5)})
    Kp = kern(terms, None, {"x": w, "z": None})
    rff = RandomFourierFeatures(200_000, random_state=2).fit(
        kern, lambda idx: ({k: v[idx] for k, v in terms.items()}, {"x": w, "z": None}), 6)
    Zp = rff.transform(terms)
    assert np.abs(Zp @ Zp.T - Kp).max() < 0.02


@pytest.mark.parametrize(("make", "factor"), [
    (lambda r: Nystroem(r, random_state=3), 10),
    (lambda r: Nystroem(r, landmarks="kmeans", random_state=3), 10),
    (lambda r: RandomFourierFeatures(r * 10, random_state=3), 2.5),  # Monte Carlo: error ~ r^(-1/2)
])
def test_converges_to_exact_as_rank_grows(rng, make, factor):
    ds = curves(rng, n=160, missing=0.2)
    new = curves(np.random.default_rng(5), n=30)
    kw = dict(dictionary=Fourier(3), kernel=Gaussian(2.0), lam=1e-4, integration="plugin")
    target = KPLRegressor(**kw).fit(ds.x, ds.y).predict_coefficients(new.x)
    errs = [rel(ApproxKPLRegressor(**kw, approx=make(r)).fit(ds.x, ds.y).predict_coefficients(new.x), target)
            for r in (4, 16, 64)]
    assert errs[0] > errs[1] > errs[2]
    assert errs[2] < errs[0] / factor


# --------------------------------------------------------------------------
# streaming, dask and distributed
# --------------------------------------------------------------------------


@pytest.mark.parametrize("missing", [0.0, 0.3])
def test_streaming_chunks_equal_in_memory(rng, missing):
    ds = curves(rng, n=101, missing=missing)
    kw = dict(dictionary=Fourier(3), kernel=Gaussian(1.0), output_matrix=1.5, lam=1e-3,
              approx=RandomFourierFeatures(64, random_state=0))
    one = ApproxKPLRegressor(**kw, chunk_size=1000).fit(ds.x.values, ds.y.values, locations=ds.s.values)
    many = ApproxKPLRegressor(**kw, chunk_size=7).fit(ds.x.values, ds.y.values, locations=ds.s.values)
    assert rel(many.stats_.T, one.stats_.T) < 1e-12
    assert rel(many.coef_, one.coef_) < 1e-10
    assert rel(many.predict(ds.x.values), one.predict(ds.x.values)) < 1e-10
    assert many.integration_ == ("quadrature" if missing == 0 else "interpolate")  # as the exact fits choose


def test_streaming_mean_function_matches_pointwise_mean(rng):
    ds = curves(rng, n=50, missing=0.4)
    ds["y"][:, 5] = np.nan  # a grid point nobody observes: interpolated, as in the exact estimator
    model = ApproxKPLRegressor(dictionary=Fourier(2), approx=Nystroem(10), chunk_size=6).fit(ds.x, ds.y)
    exact = KPLRegressor(dictionary=Fourier(2)).fit(ds.x, ds.y)
    assert rel(model.mean_.values, exact.mean_.values) < 1e-12
    assert np.isfinite(model.mean_.values).all()


@pytest.mark.parametrize("missing", [0.0, 0.3])
def test_dask_backed_dataset_equals_numpy(rng, tmp_path, missing, dask):
    ds = curves(rng, n=140, missing=missing)
    path = tmp_path / "curves.nc"
    ds.to_netcdf(path)
    kw = dict(dictionary=Fourier(3), kernel=Gaussian(1.0), output_matrix=1.5, lam=1e-3,
              approx=Nystroem(30, landmarks="kmeans"))
    mem = ApproxKPLRegressor(**kw).fit(ds.x, ds.y)
    with xr.open_dataset(path, chunks={"sample": 33}) as lazy:
        assert lazy.x.chunks is not None
        fitted = ApproxKPLRegressor(**kw).fit(lazy.x, lazy.y)
        pred = fitted.predict(lazy.x)
        assert dask.is_dask_collection(pred.data)  # prediction stays lazy, chunk by chunk
        assert pred.chunks[0] == lazy.x.chunks[0]
        assert rel(fitted.coef_, mem.coef_) < 1e-10
        assert rel(pred.values, mem.predict(ds.x).values) < 1e-10
        assert list(pred.sample.values) == list(ds.sample.values)


def test_zarr_store(rng, tmp_path, dask):
    pytest.importorskip("zarr")
    ds = curves(rng, n=80, missing=0.2).assign_coords(sample=np.arange(80))
    ds.chunk({"sample": 25}).to_zarr(tmp_path / "c.zarr", consolidated=False)
    kw = dict(dictionary=Fourier(3), approx=RandomFourierFeatures(50), lam=1e-3)
    mem = ApproxKPLRegressor(**kw).fit(ds.x, ds.y)
    lazy = xr.open_zarr(tmp_path / "c.zarr", consolidated=False)
    assert rel(ApproxKPLRegressor(**kw).fit(lazy.x, lazy.y).coef_, mem.coef_) < 1e-10


def test_local_cluster_equals_in_memory(rng, tmp_path, dask):
    distributed = pytest.importorskip("distributed")
    ds = curves(rng, n=150, missing=0.25)
    path = tmp_path / "curves.nc"
    ds.to_netcdf(path)
    kw = dict(dictionary=Fourier(3), kernel=Gaussian(1.0), output_matrix=1.5, lam=1e-3, approx=Nystroem(40))
    mem = ApproxKPLRegressor(**kw).fit(ds.x, ds.y)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cl, \
            distributed.Client(cl) as client, xr.open_dataset(path, chunks={"sample": 40}) as lazy:
        with distributed.get_task_stream(client) as ts:
            fitted = ApproxKPLRegressor(**kw).fit(lazy.x, lazy.y)
        workers = {t["worker"] for t in ts.data}
        pred = fitted.predict(lazy.x).compute()
    assert len(workers) >= 1 and len(ts.data) >= 8  # the reductions ran on the cluster's workers
    assert rel(fitted.coef_, mem.coef_) < 1e-10
    assert rel(pred.values, mem.predict(ds.x).values) < 1e-10


# --------------------------------------------------------------------------
# bad input
# --------------------------------------------------------------------------


def test_bad_input(rng):
    ds = curves(rng, n=30, missing=0.2)
    X, Y = ds.x, ds.y
    with pytest.raises(ValueError, match="n_components=40 exceeds the number of training curves n=30"):
        ApproxKPLRegressor(approx=Nystroem(40)).fit(X, Y)
    with pytest.raises(TypeError, match=r"Gaussian kernels .* use Nystroem"):
        ApproxKPLRegressor(kernel=Laplace(1.0), approx=RandomFourierFeatures(10)).fit(X, Y)
    with pytest.raises(ValueError, match="landmarks must be 'uniform' or 'kmeans'"):
        ApproxKPLRegressor(approx=Nystroem(5, landmarks="random")).fit(X, Y)
    with pytest.raises(ValueError, match="n_components must be an integer >= 1"):
        ApproxKPLRegressor(approx=RandomFourierFeatures(0)).fit(X, Y)
    with pytest.raises(TypeError, match="approx must be Nystroem"):
        ApproxKPLRegressor(approx="nystroem").fit(X, Y)
    with pytest.raises(ValueError, match="'gcv' or a sequence"):
        ApproxKPLRegressor(approx=Nystroem(5), lam="best").fit(X, Y)
    with pytest.raises(ValueError, match="criterion must be 'loo' or 'gcv'"):
        ApproxKPLRegressor(approx=Nystroem(5), lam=[1e-3, 1e-2], criterion="aic").fit(X, Y)
    with pytest.raises(ValueError, match=r"lam must hold finite numbers > 0, got -1\.0"):
        ApproxKPLRegressor(approx=Nystroem(5), lam=[1e-3, -1.0]).fit(X, Y)
    with pytest.raises(ValueError, match="chunk_size must be an integer >= 1"):
        ApproxKPLRegressor(approx=Nystroem(5), chunk_size=0).fit(X, Y)
    with pytest.raises(ValueError, match="needs every curve observed"):
        ApproxKPLRegressor(approx=Nystroem(5), integration="quadrature").fit(X, Y)
    with pytest.raises(ValueError, match="square loss only"):
        ApproxKPLRegressor(approx=Nystroem(5), loss="logcosh").fit(X, Y)
    long = pd.DataFrame({"sample": ["c0", "c1"], "location": [0.1, 0.2], "value": [1.0, 2.0]})
    with pytest.raises(TypeError, match="dense responses on a grid"):
        ApproxKPLRegressor(approx=Nystroem(2)).fit(X[:2], long)
    with pytest.raises(ValueError, match="X has 29 samples but Y has 30"):
        ApproxKPLRegressor(approx=Nystroem(5)).fit(X[:29].values, Y.values)


def test_bad_values_in_later_chunks_name_the_samples(rng, tmp_path):
    ds = curves(rng, n=40, missing=0.1)
    ds["x"][33, 4] = np.nan
    with pytest.raises(ValueError, match=r"'X' has NaN for samples at positions \[33\]"):
        ApproxKPLRegressor(approx=Nystroem(5), chunk_size=10).fit(ds.x.values, ds.y.values)
    # NaN in input curves can be filled chunk by chunk
    ds = curves(rng, n=40)
    ds["x"][33, 4] = np.nan
    filled = ds.copy(deep=True)
    filled["x"][33, 4] = 0.5 * (ds.x[33, 3] + ds.x[33, 5])
    kw = dict(dictionary=Fourier(2), approx=Nystroem(10), chunk_size=10)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        a = ApproxKPLRegressor(**kw, interpolate_inputs=True).fit(ds.x, ds.y)
    b = ApproxKPLRegressor(**kw).fit(filled.x, filled.y)
    assert rel(a.coef_, b.coef_) < 1e-12


def test_empty_curve_in_a_later_dask_chunk_is_named(rng, tmp_path, dask):
    ds = curves(rng, n=40, missing=0.1)
    ds["y"][27, :] = np.nan
    path = tmp_path / "bad.nc"
    ds.to_netcdf(path)
    with xr.open_dataset(path, chunks={"sample": 10}) as lazy, \
            pytest.raises(ValueError, match=r"no observed point for samples at positions \[27\]"):
        assert dask.is_dask_collection(lazy.y.data)
        ApproxKPLRegressor(approx=Nystroem(5)).fit(lazy.x, lazy.y)


def test_sklearn_check_estimator():
    from sklearn.utils.estimator_checks import check_estimator

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_estimator(ApproxKPLRegressor())  # default: Nystroem(min(300, n)) landmarks
