import warnings

import numpy as np
import pandas as pd
import pytest
import xarray as xr
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, KFold, cross_val_score

from fdakpl import FPCA, Fourier, Gaussian, KPLRegressor, Laplace, Product, Wavelet
from fdakpl.data.functional import to_long
from fdakpl.dictionaries import Learned

from .conftest import make_problem


def _xy(rng, missing=0.0, n=30, m=40):
    X, Y, grid = make_problem(rng, n=n, m=m, missing=missing)
    labels = [f"s{i}" for i in range(n)]
    Xda = xr.DataArray(X, dims=("sample", "feature"), coords={"sample": labels})
    Yda = xr.DataArray(Y, dims=("sample", "t"), coords={"sample": labels, "t": grid}, name="y")
    return X, Y, grid, Xda, Yda


def test_clone_get_set_params_and_cross_validation(rng):
    X, Y, grid = make_problem(rng, n=40, m=30)
    model = KPLRegressor(dictionary=Fourier(4), kernel=Gaussian(0.5), lam=1e-3)
    c = clone(model)
    assert c.get_params()["kernel__sigma"] == 0.5
    c.set_params(kernel__sigma=2.0, lam=0.1)
    assert c.kernel.sigma == 2.0 and model.kernel.sigma == 0.5
    scores = cross_val_score(model, X, Y, cv=KFold(4, shuffle=True, random_state=0))
    assert scores.shape == (4,) and np.all(scores > 0.5)
    gs = GridSearchCV(model, {"kernel__sigma": [0.1, 1.0, 10.0], "lam": [1e-4, 1e-2]}, cv=3).fit(X, Y)
    assert gs.best_params_["kernel__sigma"] in (0.1, 1.0, 10.0)


def test_sklearn_check_estimator():
    from sklearn.utils.estimator_checks import check_estimator

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_estimator(KPLRegressor())


def test_long_form_fit_equals_dense_fit(rng):
    X, Y, grid, Xda, Yda = _xy(rng, missing=0.3)
    dense = KPLRegressor(dictionary=Fourier(5), lam=1e-3, domain=(0.0, 1.0)).fit(Xda, Yda)
    long = KPLRegressor(dictionary=Fourier(5), lam=1e-3, domain=(0.0, 1.0)).fit(Xda, to_long(Yda))
    np.testing.assert_allclose(long.nu_, dense.nu_, rtol=1e-12, atol=1e-12)
    # the mean function differs in construction (bins vs grid) only when centring; compare uncentred fits
    d2 = KPLRegressor(dictionary=Fourier(5), lam=1e-3, center=False).fit(Xda, Yda)
    l2 = KPLRegressor(dictionary=Fourier(5), lam=1e-3, center=False, domain=(0.0, 1.0)).fit(Xda, to_long(Yda))
    np.testing.assert_allclose(l2.dual_coef_, d2.dual_coef_, rtol=1e-10, atol=1e-12)


def _irregular(rng, n, m_lo, m_hi):
    X = rng.uniform(-1, 1, size=(n, 2))
    rows = []
    for i in range(n):
        t = np.sort(rng.uniform(0, 1, size=rng.integers(m_lo, m_hi)))
        rows += [(i, tt, np.sin(2 * np.pi * tt) * X[i, 0]) for tt in t]
    return X, pd.DataFrame(rows, columns=["sample", "location", "value"])


def test_irregular_sampling_fits_predicts_anywhere_and_is_consistent_in_m(rng):
    """Plug-in KPL on curves sampled at their own random points; the error shrinks as m grows."""
    errs, mean_errs = [], []
    for m in (15, 1500):
        X, df = _irregular(rng, 25, m, m + 1)
        model = KPLRegressor(dictionary=Fourier(3), kernel=Gaussian(1.0), lam=1e-5, domain=(0.0, 1.0)).fit(X, df)
        pred = model.predict(X, at=[0.25, 0.75])
        assert pred.shape == (25, 2) and pred.dims == ("sample", "location")
        # irregular locations are each seen once: the mean function must pool curves (bins), not copy them
        assert model.mean_.grid.size < np.unique(df.location).size
        assert np.abs(model.nu_).max() > 0.1
        errs.append(np.abs(pred.values - np.c_[X[:, 0], -X[:, 0]]).max())
        theta = np.linspace(0, 1, 101)
        mean_errs.append(np.abs(model.mean_(theta) - X[:, 0].mean() * np.sin(2 * np.pi * theta)).max())
    # the fit is dominated by the kernel ridge error (about 0.09 at m = 1500), the (smoothed) mean is much closer
    assert errs[1] < 0.1 < 0.5 < errs[0] and mean_errs[1] < 0.01 < mean_errs[0]


def test_predict_returns_labelled_curves_and_centring(rng):
    X, Y, grid, Xda, Yda = _xy(rng)
    model = KPLRegressor(dictionary=Fourier(6), kernel=Gaussian(1.0), lam=1e-4).fit(Xda, Yda)
    pred = model.predict(Xda.isel(sample=slice(0, 5)))
    assert pred.dims == ("sample", "t") and list(pred.sample.values) == [f"s{i}" for i in range(5)]
    np.testing.assert_allclose(pred.t.values, grid)
    at = model.predict(Xda.isel(sample=slice(0, 5)), at=[0.0, 0.5])
    assert at.shape == (5, 2)
    # with lam -> infinity the prediction is the training mean function
    big = KPLRegressor(dictionary=Fourier(6), lam=1e9).fit(Xda, Yda)
    np.testing.assert_allclose(big.predict(Xda).values, np.broadcast_to(Y.mean(0), Y.shape), atol=1e-6)


def test_functional_input_uses_l2_geometry(rng):
    X, Y, grid, _, Yda = _xy(rng)
    tin = np.linspace(0, 2, 50)
    curves = X[:, :1] * np.sin(np.pi * tin) + X[:, 1:2]
    Xc = xr.DataArray(curves, dims=("sample", "s"), coords={"s": tin, "sample": Yda.sample.values})
    model = KPLRegressor(dictionary=Fourier(4), kernel=Gaussian(0.5), lam=1e-3).fit(Xc, Yda)
    from fdakpl.data.functional import quadrature_weights

    w = quadrature_weights(tin)
    d2 = ((curves[0] - curves[1]) ** 2 * w).sum()
    assert model.K_[0, 1] == pytest.approx(np.exp(-d2 / (2 * 0.25)), rel=1e-12)
    with pytest.raises(ValueError, match="different grid"):
        model.predict(Xc.isel(s=slice(0, 40)))


def test_product_kernel_over_terms(rng):
    X, Y, grid, Xda, Yda = _xy(rng)
    terms = {"a": X[:, :2], "b": X[:, 2:]}
    ker = Product({"a": Gaussian(1.0), "b": Laplace(0.5)})
    model = KPLRegressor(dictionary=Fourier(3), kernel=ker, lam=1e-3).fit(terms, Y, locations=grid)
    K = Gaussian(1.0)(X[:, :2]) * Laplace(0.5)(X[:, 2:])
    np.testing.assert_allclose(model.K_, K)
    assert model.predict({"a": X[:3, :2], "b": X[:3, 2:]}).shape == (3, grid.size)


@pytest.mark.parametrize("dictionary", [FPCA(4), Learned(5, tau=0.05, max_iter=10, progress=False), Wavelet("db2", 2)])
def test_data_dependent_and_wavelet_dictionaries_fit(rng, dictionary):
    X, Y, grid = make_problem(rng, n=30, m=32, missing=0.2)
    model = KPLRegressor(dictionary=dictionary, lam=1e-3).fit(X, Y, locations=grid)
    assert np.isfinite(model.predict(X)).all()
    assert model.score(X, Y) > 0.3


# ----------------------------------------------------------------------------- bad input
def test_bad_inputs_give_clear_errors(rng):
    X, Y, grid, Xda, Yda = _xy(rng)
    m = KPLRegressor(dictionary=Fourier(3))
    with pytest.raises(ValueError, match="X has 29 samples but Y has 30"):
        m.fit(X[:-1], Y)
    with pytest.raises(ValueError, match="different sample labels"):
        m.fit(Xda.assign_coords(sample=[f"z{i}" for i in range(30)]), Yda)
    with pytest.raises(ValueError, match="strictly increasing"):
        m.fit(Xda, Yda.assign_coords(t=grid[::-1]))
    with pytest.raises(ValueError, match="numeric"):
        m.fit(Xda, Yda.assign_coords(t=[str(v) for v in grid]))
    Xn = X.copy()
    Xn[3, 1] = np.nan
    with pytest.raises(ValueError, match="interpolate_inputs=True"):
        m.fit(Xn, Y)
    Xi = X.copy()
    Xi[3, 1] = np.inf
    with pytest.raises(ValueError, match="infinite"):
        m.fit(Xi, Y)
    Ye = Y.copy()
    Ye[[4, 7]] = np.nan
    with pytest.raises(ValueError, match=r"no observed point for samples \[4, 7\]"):
        m.fit(X, Ye)
    with pytest.raises(ValueError, match="lam must be a finite number > 0"):
        KPLRegressor(lam=0.0).fit(X, Y)
    with pytest.raises(ValueError, match="lam must be a finite number > 0"):
        KPLRegressor(lam=-1.0).fit(X, Y)
    with pytest.raises(ValueError, match="not symmetric"):
        KPLRegressor(dictionary=Fourier(1), output_matrix=np.array([[1, 2, 0], [0, 1, 0], [0, 0, 1.0]])).fit(X, Y)
    with pytest.raises(ValueError, match="not positive definite"):
        KPLRegressor(dictionary=Fourier(1), output_matrix=np.diag([1.0, 0.0, 1.0])).fit(X, Y)
    with pytest.raises(ValueError, match="domain"):
        KPLRegressor(dictionary=Fourier(3, domain=(0.0, 0.5))).fit(X, Y, locations=grid)
    with pytest.raises(ValueError, match="solver must be"):
        KPLRegressor(solver="magic").fit(X, Y)


def test_interpolate_inputs_fills_silently_by_linear_interpolation(rng):
    """interpolate_inputs=True is the user's request: filled without a warning (issue 28), by linear
    interpolation along the location dim (the same fit as on curves filled by numpy.interp)."""
    import warnings

    X, Y, grid, Xda, Yda = _xy(rng)
    tin = np.linspace(0, 1, 20)
    curves = np.outer(X[:, 0], tin) + np.sin(3 * tin)
    curves[2, 5] = np.nan
    Xc = xr.DataArray(curves, dims=("sample", "s"), coords={"s": tin, "sample": Yda.sample.values})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m = KPLRegressor(dictionary=Fourier(3), interpolate_inputs=True).fit(Xc, Yda)
    filled = curves.copy()
    ok = ~np.isnan(filled[2])
    filled[2] = np.interp(tin, tin[ok], filled[2, ok])
    ref = KPLRegressor(dictionary=Fourier(3)).fit(Xc.copy(data=filled), Yda)
    np.testing.assert_allclose(m.K_, ref.K_, rtol=1e-12, atol=1e-14)
    assert np.isnan(curves[2, 5])  # user's array untouched


def test_too_many_atoms_warns(rng):
    X, Y, grid = make_problem(rng, n=20, m=9)
    with pytest.warns(UserWarning, match="not identifiable"):
        KPLRegressor(dictionary=Fourier(8), lam=1e-3).fit(X, Y, locations=grid)


def test_user_objects_are_not_modified(rng):
    X, Y, grid, Xda, Yda = _xy(rng, missing=0.2)
    X0, Y0 = Xda.copy(deep=True), Yda.copy(deep=True)
    KPLRegressor(dictionary=Fourier(3)).fit(Xda, Yda).predict(Xda)
    xr.testing.assert_identical(Xda, X0)
    xr.testing.assert_identical(Yda, Y0)
