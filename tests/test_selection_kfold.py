"""K-fold CV of the closed form on arrays (fdakpl.tuning.kfold_grid) against independent refits per fold and setting."""

import numpy as np
import pytest
import xarray as xr
from sklearn.model_selection import KFold

import fdakpl.tuning.kfold as selection
import fdakpl.tuning.kfold_grid as skf
from fdakpl import FPCA, BSpline, Fourier, FunctionalRegression, Gaussian, KPLRegressor, datasets
from fdakpl.dictionaries import Wavelet
from fdakpl.kernels import ScaleDecay
from fdakpl.tuning.kfold import kfold_path
from fdakpl.tuning.kfold_grid import kfold_grid

from .conftest import make_problem

SIGMA = 0.9


def _refit_error(X, Y, grid, tr, te, dic, B, lam):
    """The paper's test MSE of an independent KPLRegressor fit on the fold (mean over curves of the mean over
    their observed points)."""
    m = KPLRegressor(dictionary=dic, kernel=Gaussian(SIGMA), output_matrix=B, lam=lam, solver="eig")
    pred = m.fit(X[tr], Y[tr], locations=grid).predict(X[te])
    return float(np.mean(np.nanmean((pred - Y[te]) ** 2, axis=1)))


@pytest.mark.parametrize("missing", [0.0, 0.3])
def test_kfold_grid_equals_independent_refits(rng, missing):
    X, Y, grid = make_problem(rng, n=24, m=16, missing=missing)
    # data-independent dictionaries (Fourier, B-splines, wavelets whose resolution follows the grid), a data-dependent
    # one (FPCA: new atoms in every fold) and the "auto" rule
    dics = [Fourier(3), BSpline(6), Wavelet("db2", level=2), FPCA(3), "auto"]
    bs = [None, 1.5, ScaleDecay(2.5)]
    lams = np.array([1e-5, 1e-3, 1e-1])
    folds = list(KFold(3, shuffle=True, random_state=0).split(X))
    err = kfold_grid(Gaussian(SIGMA)(X), Y, grid, dics, bs, lams, folds)
    assert err.shape == (len(dics), len(bs), len(folds), lams.size)
    for j, dic in enumerate(dics):
        for k, B in enumerate(bs):
            for f, (tr, te) in enumerate(folds):
                for li, lam in enumerate(lams):
                    ref = _refit_error(X, Y, grid, tr, te, dic, B, lam)
                    assert err[j, k, f, li] == pytest.approx(ref, rel=1e-10), (dic, B, f, lam)


def test_one_decomposition_per_fold_and_per_setting(rng, monkeypatch):
    """Each fold's K is decomposed once for every setting and lambda; the output side once per (dictionary, B)
    across folds when the atoms do not depend on the fold, once per fold for FPCA."""
    X, Y, grid = make_problem(rng, n=20, m=12, missing=0.2)
    n_tr = []
    eigh = np.linalg.eigh

    def counting_eigh(a, *args, **kwargs):
        n_tr.append(a.shape[0])
        return eigh(a, *args, **kwargs)

    sides = []
    output_side = skf.output_side

    def counting_side(*args, **kwargs):
        sides.append(1)
        return output_side(*args, **kwargs)

    monkeypatch.setattr(skf.np.linalg, "eigh", counting_eigh)
    monkeypatch.setattr(skf, "output_side", counting_side)
    folds = list(KFold(4, shuffle=True, random_state=1).split(X))
    kfold_grid(Gaussian(1.0)(X), Y, grid, [Fourier(2), BSpline(5)], [None, 1.5, 2.0], np.geomspace(1e-6, 1, 9), folds)
    assert sum(k == 15 for k in n_tr) == 4  # one eigendecomposition of each fold's 15 x 15 K
    assert len(sides) == 2 * 3  # one output side per (dictionary, B), shared by the four folds
    sides.clear()
    kfold_grid(Gaussian(1.0)(X), Y, grid, [FPCA(3)], [None, 1.5], [1e-3], folds)
    assert len(sides) == 4 * 2  # FPCA is fitted on each fold's responses: its atoms change


def test_kfold_path_closed_form_equals_per_fold_fits(rng, monkeypatch):
    """kfold_path on labelled data (a DataArray with unobserved points) by the closed form equals the generic route
    (a fit and a prediction per setting and fold), and takes the closed form."""
    X, Y, grid = make_problem(rng, n=25, m=14, missing=0.25)
    Yda = xr.DataArray(Y, dims=("sample", "t"), coords={"t": grid, "sample": np.arange(25)})
    Xda = xr.DataArray(X, dims=("sample", "feature"), coords={"sample": np.arange(25)})
    est = KPLRegressor(dictionary=Fourier(3), kernel=Gaussian(1.0))
    kw = dict(lams=np.geomspace(1e-6, 1e-1, 6), n_splits=5, random_state=2, n_jobs=1, progress=False,
              param_grid={"dictionary": [Fourier(2), Wavelet("db3", level=2)], "output_matrix": [None, 1.5],
                          "kernel__sigma": [0.7, 1.4]})
    calls = []
    grid_fn = skf.kfold_grid
    monkeypatch.setattr(skf, "kfold_grid", lambda *a, **k: calls.append(1) or grid_fn(*a, **k))
    fast = kfold_path(est, Xda, Yda, **kw)
    assert len(calls) == 2  # one call per kernel width; every dictionary and B inside it
    monkeypatch.setattr(selection, "kfold_labelled", lambda *a, **k: None)
    slow = kfold_path(est, Xda, Yda, **kw)
    np.testing.assert_allclose(fast["fold_scores"], slow["fold_scores"], rtol=1e-10)
    assert fast["best_params"] == slow["best_params"] and fast["best_lam"] == slow["best_lam"]


def test_folds_in_threads_give_the_same_scores(rng):
    X, Y, grid = make_problem(rng, n=30, m=12, missing=0.2)
    args = (Gaussian(1.0)(X), Y, grid, [Fourier(3), "auto"], [None, 1.5], np.geomspace(1e-5, 1e-1, 5),
            list(KFold(5, shuffle=True, random_state=0).split(X)))
    np.testing.assert_array_equal(kfold_grid(*args), kfold_grid(*args, n_threads=2))


@pytest.mark.filterwarnings("ignore:the .*-chosen")  # a small grid: choices on its edges
def test_front_end_cv_grid_uses_the_closed_form(monkeypatch):
    """FunctionalRegression(lam="cv") over dictionaries, levels and b: the same fold scores as per-fold fits."""
    dti = datasets.dti_first_visits().isel(sample=slice(0, 40))
    kw = dict(dictionary="db3", level=4, interpolate_inputs=True, lam="cv", lam_grid=np.geomspace(1e-6, 1e-2, 5),
              cv=4, random_state=0, n_jobs=1, progress=False,
              param_grid={"dictionary": ["db2", "db3"], "level": [3, 4], "b": [1.0, 1.6]})
    calls = []
    grid_fn = skf.kfold_grid
    monkeypatch.setattr(skf, "kfold_grid", lambda *a, **k: calls.append(1) or grid_fn(*a, **k))
    fast = FunctionalRegression("rcst ~ cca", dti, **kw).fit()
    assert calls == [1]
    monkeypatch.setattr(selection, "kfold_labelled", lambda *a, **k: None)
    slow = FunctionalRegression("rcst ~ cca", dti, **kw).fit()
    np.testing.assert_allclose(fast.cv_result["fold_scores"], slow.cv_result["fold_scores"], rtol=1e-10)
    assert fast.lam == slow.lam and repr(fast.cv_result["best_params"]) == repr(slow.cv_result["best_params"])
    np.testing.assert_allclose(fast.predict(dti).values, slow.predict(dti).values, rtol=1e-10, atol=1e-12)


def test_grids_the_closed_form_does_not_cover_take_per_fold_fits(rng):
    X, Y, grid = make_problem(rng, n=12, m=8)
    folds = list(KFold(3).split(X))
    lams = np.array([1e-3])
    est = KPLRegressor(dictionary=Fourier(2))
    assert skf.kfold_labelled(est, X, Y, lams, [{}], folds, {"locations": grid}) is not None
    assert skf.kfold_labelled(est.set_params(loss="logcosh"), X, Y, lams, [{}], folds) is None
    assert skf.kfold_labelled(KPLRegressor(solver="sylvester"), X, Y, lams, [{}], folds) is None
    assert skf.kfold_labelled(est, X, Y, lams, [{"center": False}], folds) is None  # another parameter
    import pandas as pd

    long = pd.DataFrame({"sample": np.repeat(np.arange(12), 3), "location": rng.uniform(size=36),
                         "value": rng.normal(size=36)})
    assert skf.kfold_labelled(est, X, long, lams, [{}], folds) is None  # irregular responses


def test_closed_form_cv_refuses_too_large_problems_before_allocating(rng):
    X, Y, grid = make_problem(rng, n=12, m=8)
    est = KPLRegressor(dictionary=Fourier(2), memory_limit=1e3)
    folds = list(KFold(3).split(X))
    with pytest.raises(ValueError, match=r"need about .* for the exact KPL solver"):  # the closed form's own check
        skf.kfold_labelled(est, X, Y, np.array([1e-3]), [{}], folds, {"locations": grid})


def test_kfold_grid_bad_input(rng):
    X, Y, grid = make_problem(rng, n=10, m=6)
    K = Gaussian(1.0)(X)
    folds = list(KFold(2).split(X))
    Y[3] = np.nan
    with pytest.raises(ValueError, match=r"no observed point for curves at positions \[3\]"):
        kfold_grid(K, Y, grid, [Fourier(1)], [None], [1e-3], folds)
    with pytest.raises(ValueError, match="kernel matrix"):
        kfold_grid(K[:5], Y, grid, [Fourier(1)], [None], [1e-3], folds)
    with pytest.raises(ValueError, match="lams"):
        kfold_grid(K, Y, grid, [Fourier(1)], [None], [0.0], folds)
