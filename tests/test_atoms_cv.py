"""lam="cv" tunes what the default tunes, and dictionary="auto" chooses its number of atoms (issue 24, item 6)."""

import warnings

import numpy as np
import pytest
import xarray as xr

from fdakpl import Fourier, FunctionalRegression, Gaussian, KPLRegressor
from fdakpl.kernels import ScaleDecay
from fdakpl.tuning.kfold import kfold_path


def _data(n=40, m=60, seed=0):
    """Curves with a sharp peak whose height depends on the input: 21 Fourier atoms cannot follow it."""
    rng = np.random.default_rng(seed)
    s, t = np.linspace(0, 1, 20), np.linspace(0, 1, m)
    a = rng.uniform(0.2, 0.8, n)
    X = np.sin(np.pi * np.outer(a, s)) + 0.05 * rng.normal(size=(n, s.size))
    Y = a[:, None] * np.exp(-((t[None, :] - 0.5) / 0.03) ** 2) + np.outer(a, t) + 0.05 * rng.normal(size=(n, m))
    return xr.Dataset({"x": (("sample", "s"), X), "y": (("sample", "t"), Y)}, coords={"s": s, "t": t})


def _fit(ds, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return FunctionalRegression("y ~ x", ds, progress=False, **kw).fit()


def test_auto_chooses_the_number_of_atoms_by_the_criterion():
    """Before: 21 Fourier atoms whatever the curves."""
    ds = _data()
    res = _fit(ds)
    scores = {k: _fit(ds, dictionary=Fourier(k)).tuning.score for k in (10, 20)}  # 60 locations: 81 atoms too many
    best = min(scores, key=scores.get)
    assert res.estimator.dictionary_.n_freqs == best == 20
    assert res.tuning.score == pytest.approx(scores[best], rel=1e-12)
    assert any("Fourier atoms chosen by leave-one-curve-out" in note for note in res.notes)
    assert res.diagnostics()["representation_error_max"] < _fit(ds, dictionary="fourier").diagnostics()[
        "representation_error_max"]


def test_lam_cv_tunes_widths_b_and_lambda_by_kfold():
    """Before: lam="cv" tuned lambda only, at the median-heuristic width, with B = I."""
    ds = _data(m=30)  # 30 locations: Fourier(10) only
    lams = np.geomspace(1e-6, 1e-1, 6)
    res = _fit(ds, lam="cv", lam_grid=lams, width_grid=[1.0, 4.0], b_grid=[1.0, 2.0], n_jobs=1)
    assert res.tuning is not None and res.tuning.criterion == "cv"
    assert len(res.tuning.candidates) == 2 and list(res.tuning.b_grid) == [1.0, 2.0]
    # brute force: K-fold of KPLRegressor at every width and b (same folds), the minimum over the grid
    sigma = _fit(ds, width_grid=None, b_grid=None).kernels["x"].sigma
    X, Y = ds["x"], ds["y"]
    best = (np.inf, None)
    for m in (1.0, 4.0):
        est = KPLRegressor(dictionary="auto", kernel=Gaussian(m * sigma))
        cv = kfold_path(est, X, Y, lams=lams, param_grid={"output_matrix": [ScaleDecay(1.0), ScaleDecay(2.0)]},
                        n_splits=5, random_state=0, n_jobs=1, progress=False)
        i, j = np.unravel_index(np.argmin(cv["scores"]), cv["scores"].shape)
        if cv["scores"][i, j] < best[0]:
            best = (cv["scores"][i, j], (m, [1.0, 2.0][i], lams[j]))
    assert (res.tuning.multiples[0], res.tuning.b, res.lam) == best[1]
    assert res.tuning.score == pytest.approx(best[0], rel=1e-9)
    assert res.kernels["x"].sigma == pytest.approx(best[1][0] * sigma, rel=1e-12)


def test_lam_cv_with_a_param_grid_searches_exactly_that_grid():
    ds = _data(m=30)
    res = _fit(ds, lam="cv", lam_grid=[1e-4, 1e-2], param_grid={"b": [1.0, 1.5]}, n_jobs=1)
    assert res.tuning is None and len(res.cv_result["params"]) == 2
