"""Issue 13 ("trust"): the formula front end, threads, options that must not be ignored, feature names."""

import threading
import warnings

import numpy as np
import pandas as pd
import pytest
import xarray as xr

from fdakpl import Fourier, FunctionalRegression, Gaussian, KPLRegressor

from .test_bad_inputs import fit, make_data


# ----------------------------------------------------------------------------- formula front end (item 9)
def _raw(res, ds):
    return res.model.parsed.scalar.raw(ds)


@pytest.mark.parametrize("formula, other", [
    ("y ~ x + z - 1", "y ~ x + z"),
    ("y ~ x + z + w - w", "y ~ x + z"),
    ("y ~ 0 + x + z", "y ~ x + z"),
    ("y ~ . - g - w", "y ~ x + z"),
])
def test_formula_algebra_is_supported(formula, other):
    ds = make_data().assign(w=("sample", np.arange(12.0)))
    a, b = fit(ds, formula), fit(ds, other)
    assert a.model.parsed.functional_terms == b.model.parsed.functional_terms == ["x"]
    assert a.model.parsed.scalar.columns == b.model.parsed.scalar.columns == ["z"]
    np.testing.assert_array_equal(a.predict(ds).values, b.predict(ds).values)


def test_non_syntactic_and_unicode_names_are_variables():
    ds = make_data()
    z = ds.z.values
    ds = ds.assign({"visit.time": ("sample", z), "âge": ("sample", z), "visit time": ("sample", z)})
    res = fit(ds, "y ~ x + visit.time + âge + `visit time` + I(Q('visit time') * 2)")
    assert res.model.parsed.scalar.columns == ["visit.time", "âge", "visit time", "I(Q('visit time') * 2)"]
    np.testing.assert_array_equal(_raw(res, ds), np.column_stack([z, z, z, 2 * z]))


def test_transforms_compute_what_they_say():
    ds = make_data()
    z = ds.z.values
    res = fit(ds, "y ~ x + np.exp(z) + I(z ** 2 - 3 / 2) + np.sqrt(np.abs(z)) + np.log1p(z ** 2) + C(g):z")
    g = ds.g.values
    expected = np.column_stack([np.exp(z), z ** 2 - 1.5, np.sqrt(np.abs(z)), np.log1p(z ** 2),
                                (g == "a") * z, (g == "b") * z, (g == "c") * z])
    np.testing.assert_allclose(_raw(res, ds), expected, rtol=1e-15)
    d = res.model.parsed.scalar.matrix(ds)
    np.testing.assert_allclose(d.mean(0), 0, atol=1e-12)
    np.testing.assert_allclose(d.std(0), 1, atol=1e-12)


def test_categorical_coding_matches_formulaic():
    """Factor terms get the indicators of their cells, and a factor in a numeric term all its levels (issue 24):
    each piece is formulaic's full-rank coding of that term alone."""
    from formulaic import model_matrix

    ds = make_data().assign(h=("sample", np.array(["u", "v"] * 6)))
    res = fit(ds, "y ~ x + C(g) + C(h) + C(g):C(h) + C(g):z")
    df = pd.DataFrame({"g": ds.g.values, "h": ds.h.values, "z": ds.z.values})
    inputs = res.model.parsed.inputs(ds)
    for term in ("C(g)", "C(h)", "C(g):C(h)"):  # the same columns (formulaic orders the cells otherwise)
        ours, theirs = inputs[term], np.asarray(model_matrix("0 + " + term, df), dtype=float)
        assert sorted(map(tuple, ours.T)) == sorted(map(tuple, theirs.T))
    ref = model_matrix("0 + C(g):z", df)
    assert res.model.parsed.scalar.columns == list(ref.model_spec.column_names)
    np.testing.assert_array_equal(_raw(res, ds), np.asarray(ref, dtype=float))


# ----------------------------------------------------------------------------- threads (item 10)
def test_fits_in_threads_keep_their_notes_and_change_no_warning_filter():
    clean = make_data()
    holes = make_data(1)
    x = holes.x.values.copy()
    x[0, 3] = np.nan
    holes = holes.assign(x=holes.x.copy(data=x))
    filters = list(warnings.filters)
    out: dict[int, list[str]] = {}
    seen_filters = []

    def work(i):
        ds = holes if i % 2 else clean
        res = FunctionalRegression("y ~ x", ds, dictionary=Fourier(2), kernel=Gaussian(1.0), lam=1e-2,
                                   interpolate_inputs=True, progress=False).fit()
        out[i] = res.notes

    threads = [threading.Thread(target=work, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    while any(t.is_alive() for t in threads):
        seen_filters.append(list(warnings.filters))
    for t in threads:
        t.join()
    assert warnings.filters == filters
    assert all(f == filters for f in seen_filters)
    for i, notes in out.items():
        interpolated = [n for n in notes if "missing input values" in n and "linear interpolation" in n]
        assert len(interpolated) == (1 if i % 2 else 0), (i, notes)


# ----------------------------------------------------------------------------- ignored options (item 8)
def test_param_grid_without_cv_is_refused():
    ds = make_data()
    with pytest.raises(ValueError, match=r"param_grid is searched only with lam='cv' \(got lam='gcv'\)"):
        fit(ds, lam="gcv", param_grid={"b": [1.0, 2.0]})


def test_r_bridge_option_typos_are_refused():
    from fdakpl.r.bridge import dataset_from_columns

    cols = {"y": np.ones((3, 4)), "g": [1.0, 2.0, 1.0]}
    with pytest.raises(ValueError, match=r"grids= names \['yy'\], which are not matrix columns; the matrix columns "
                                         r"are \['y'\]"):
        dataset_from_columns(cols, grids={"yy": [0, 1, 2, 3]})
    with pytest.raises(ValueError, match=r"factor_levels= names \['gg'\]"):
        dataset_from_columns(cols, factor_levels={"gg": ["a", "b"]})
    with pytest.raises(ValueError, match=r"column 'y' is a matrix with 1 column; a curve needs at least 2"):
        dataset_from_columns({"y": np.ones((3, 1))})
    ds = dataset_from_columns(cols, grids={"y": [0, 1, 2, 3]}, factor_levels={"g": ["a", "b"]})
    assert ds.g.values.tolist() == ["a", "b", "a"] and ds.y_loc.values.tolist() == [0, 1, 2, 3]


# ----------------------------------------------------------------------------- feature names (item 13)
def test_feature_names_are_recorded_and_checked_at_predict():
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(12, 2)), columns=["a", "b"])
    grid = np.linspace(0, 1, 8)
    Y = np.sin(np.outer(X["a"].to_numpy(), grid)) + X["b"].to_numpy()[:, None]
    m = KPLRegressor(dictionary=Fourier(1), lam=1e-3).fit(X, Y, locations=grid)
    assert m.feature_names_in_.tolist() == ["a", "b"]
    np.testing.assert_array_equal(m.predict(X), m.predict(X.to_numpy()))
    with pytest.raises(ValueError, match=r"X has the columns \['b', 'a'\], but the model was fitted on \['a', 'b'\]"):
        m.predict(X[["b", "a"]])
    with pytest.raises(ValueError, match=r"fitted on \['a', 'b'\]"):
        m.predict(X.rename(columns={"b": "c"}))
    assert not hasattr(KPLRegressor(dictionary=Fourier(1), lam=1e-3).fit(X.to_numpy(), Y, locations=grid),
                       "feature_names_in_")


# ----------------------------------------------------------------------------- extreme scales (item 7)
def _fit_default(ds, formula="y ~ x + z"):
    return FunctionalRegression(formula, ds, dictionary=Fourier(2), progress=False).fit()


@pytest.fixture(scope="module")
def base():
    ds = make_data()
    return ds, _fit_default(ds)


@pytest.mark.parametrize("var, factor, exact", [
    ("x", 2.0 ** -600, True), ("x", 2.0 ** 500, True), ("x", 1e-200, False), ("x", 1e160, False),
    ("z", 1e-300, False), ("z", 1e300, False),
])
def test_default_kernels_are_invariant_to_the_input_scale(base, var, factor, exact):
    ds, res = base
    new = ds.assign({var: ds[var] * factor})
    other = _fit_default(new)
    assert other.lam == res.lam
    if exact:  # a power of two: every step scales exactly
        np.testing.assert_array_equal(other.predict(new).values, res.predict(ds).values)
    else:
        # not a power of two: rounding differs, magnified by 1/lambda at the grid's small end (measured: 9e-10)
        np.testing.assert_allclose(other.predict(new).values, res.predict(ds).values, rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("factor", [1e-200, 1e200, 2.0 ** -700, 2.0 ** 700])
def test_predictions_scale_with_the_response_at_extreme_scales(base, factor):
    ds, res = base
    new = ds.assign(y=ds.y * factor)
    other = _fit_default(new)
    assert other.lam == res.lam  # GCV does not underflow or overflow
    assert abs(other.r2 - res.r2) < 1e-12  # nor do the sums of squares of R^2
    # exact up to rounding of the non-power-of-two factors, magnified by 1/lambda at the small end of the grid
    np.testing.assert_allclose(other.predict(new).values / factor, res.predict(ds).values, rtol=1e-8, atol=1e-10)


def test_degenerate_widths_and_domains():
    ds = make_data()
    res = fit(ds, kernel=Gaussian(1e-300))  # the kernel matrix is the identity, not NaN
    np.testing.assert_array_equal(res.estimator.K_, np.eye(12))
    assert np.isfinite(res.predict(ds).values).all()
    with pytest.raises(ValueError, match=r"domain must be None or two finite numbers"):
        fit(ds, domain=(0, np.inf))


# ----------------------------------------------------------------------------- types and small samples (11, 12)
def test_multiindex_sample_labels_work():
    ds = make_data()
    mi = pd.MultiIndex.from_arrays([np.arange(12) % 3, np.arange(12)], names=("a", "b"))
    d2 = ds.drop_vars("sample").assign_coords(xr.Coordinates.from_pandas_multiindex(mi, "sample"))
    a, b = fit(d2, "y ~ x + z"), fit(ds, "y ~ x + z")
    np.testing.assert_array_equal(a.predict(d2).values, b.predict(ds).values)
    assert a.r2 == b.r2 and a.predict(d2).sample.values.tolist()[:2] == [(0, 0), (1, 1)]


def test_tuple_sample_labels_work():
    ds = make_data()
    lab = np.empty(12, dtype=object)
    lab[:] = [(i % 3, i) for i in range(12)]
    d2 = ds.assign_coords(sample=lab)
    a, b = fit(d2, "y ~ x + z"), fit(ds, "y ~ x + z")
    np.testing.assert_array_equal(a.predict(d2).values, b.predict(ds).values)
    assert a.r2 == b.r2 and a.predict(d2).sample.values[1] == (1, 1)
    m = KPLRegressor(dictionary=Fourier(2), lam=1e-2).fit(d2.x, d2.y)
    assert m.predict(d2.x).sample.values[1] == (1, 1)


def test_durations_as_locations_are_refused_with_the_conversion():
    ds = make_data().assign_coords(t=pd.to_timedelta(np.arange(20), unit="h"))
    with pytest.raises(ValueError, match=r"location coordinate 't' holds durations; .* np\.timedelta64\(1, 's'\)"):
        fit(ds)


def test_constant_response_r2_follows_scikit_learn():
    ds = make_data()
    res = fit(ds.assign(y=ds.y * 0 + 1.0))
    assert res.r2 == 1.0 or (np.nansum(res.resid.values ** 2) > 0 and res.r2 == 0.0)
    assert res.r2 == res.estimator.score(res.model.parsed.inputs(res.model.data), res.response)


def test_bands_that_would_be_infinite_are_refused():
    ds = make_data()
    res = fit(ds)
    with pytest.raises(ValueError, match=r"needs at least 9 calibration curves, but calibration=0\.3 of n=12 curves "
                                         r"gives 4"):
        res.prediction_bands(ds.isel(sample=[0]), alpha=0.1)
    lo, hi, _ = res.prediction_bands(ds.isel(sample=[0]), alpha=0.2, calibration=0.4)
    assert np.isfinite(lo.values).all() and np.isfinite(hi.values).all()


def test_the_advice_for_infinite_bands_is_enough():
    """Issue 27.8: the bounds the message advises give a finite band (rounded up, never down to the value refused)."""
    ds = make_data()
    res = fit(ds)
    with pytest.raises(ValueError, match=r"raise calibration \(at least 0\.75, at most 0\.83 here\) or alpha "
                                         r"\(at least 0\.143 with 6 calibration curves\)"):
        res.prediction_bands(ds.isel(sample=[0]), alpha=0.1, calibration=0.5)
    lo, hi, _ = res.prediction_bands(ds.isel(sample=[0]), alpha=0.143, calibration=0.5)  # the advised alpha works
    assert np.isfinite(lo.values).all() and np.isfinite(hi.values).all()
    lo, hi, _ = res.prediction_bands(ds.isel(sample=[0]), alpha=0.1, calibration=0.75)  # the advised calibration
    assert np.isfinite(lo.values).all() and np.isfinite(hi.values).all()


# ----------------------------------------------------------------------------- the model's own copy of its data
@pytest.mark.filterwarnings("ignore:the LOO-chosen lambda")
def test_editing_the_users_data_after_construction_changes_nothing():
    """The model copies the variables it uses (not the others): in-place edits and replaced variables of the
    user's Dataset, made between construction and fit or after the fit, change neither the fit nor its results."""
    ds = make_data().assign(subject=("sample", np.arange(12) // 2))
    kw = dict(dictionary=Fourier(2), lam="loo", lam_grid=[1e-3, 1e-2, 1e-1], kernel=Gaussian(1.0), groups="subject",
              progress=False)
    ref = FunctionalRegression("y ~ x + z", make_data().assign(subject=("sample", np.arange(12) // 2)), **kw).fit()
    model = FunctionalRegression("y ~ x + z", ds, **kw)
    assert sorted(model.data.data_vars) == ["subject", "x", "y", "z"]  # g is not used: not copied
    ds["x"].values[:] = 0.0  # in place, before the fit
    ds["y"].values[0, 0] = 1e6
    ds["z"].values[:] = np.nan
    ds["subject"].values[:] = 0
    res = model.fit()
    ds["y"] = ds["y"] * 0.0  # replaced, after the fit
    np.testing.assert_array_equal(res.predict().values, ref.predict().values)
    np.testing.assert_array_equal(res.fitted.values, ref.fitted.values)
    assert res.r2 == ref.r2 and res.lam == ref.lam and res.lam_how == ref.lam_how == "leave-one-group-out (subject)"
    assert float(res.model.data["y"].values[0, 0]) == float(ref.model.data["y"].values[0, 0])
