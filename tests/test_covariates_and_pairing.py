"""Issue 24, items 4 and 5: covariate types that were silently miscoded, and long-form responses paired by label."""

import numpy as np
import pandas as pd
import pytest
import xarray as xr

from fdakpl import Fourier, FunctionalRegression, Gaussian, KPLRegressor
from fdakpl.tuning.kfold import kfold_path


def _data(n=30, seed=0):
    rng = np.random.default_rng(seed)
    t = np.linspace(0, 1, 12)
    g = rng.integers(0, 2, n)
    y = np.sin(2 * np.pi * np.outer(1 + g, t)) + 0.1 * rng.normal(size=(n, t.size))
    return xr.Dataset({"y": (("sample", "t"), y), "g": ("sample", g)}, coords={"t": t, "sample": np.arange(n)}), rng


def _fit(ds, formula, **kw):
    kw.setdefault("dictionary", Fourier(2))
    return FunctionalRegression(formula, ds, progress=False, **kw).fit()


# ----------------------------------------------------------------------------- item 4: covariate types
def test_nullable_boolean_with_na_is_refused_not_a_third_level():
    ds, _ = _data()
    flag = pd.array(ds.g.values == 1, dtype="boolean")
    flag[3] = pd.NA
    bad = ds.assign(flag=("sample", flag))
    for formula in ("y ~ C(flag)", "y ~ flag"):
        with pytest.raises(ValueError, match=r"scalar covariates \['flag'\] have missing values \(NA\) for some "
                                             r"samples; drop them, e.g. ds.dropna\('sample', subset=\['flag'\]\)"):
            _fit(bad, formula)
    # the fix the message gives works, and a nullable boolean without NA is the plain boolean it holds
    clean = bad.dropna("sample", subset=["flag"])
    plain = clean.assign(flag=("sample", np.asarray(clean.flag.values, dtype=bool)))
    np.testing.assert_array_equal(_fit(clean, "y ~ flag").fitted.values, _fit(plain, "y ~ flag").fitted.values)
    assert _fit(clean, "y ~ C(flag)").model.parsed.scalar.levels == {"flag": ["False", "True"]}


def test_timezone_aware_dates_are_refused_with_a_fix_that_works():
    ds, _ = _data()
    when = pd.date_range("2020-03-28", periods=30, freq="6h", tz="Europe/Paris")
    frame = pd.DataFrame({"when": when}, index=pd.Index(np.arange(30), name="sample"))
    bad = xr.Dataset.from_dataframe(frame).merge(ds)
    assert bad.when.dtype == object  # Timestamps with their time zone, not datetime64
    with pytest.raises(ValueError, match=r"the scalar covariate 'when' holds timezone-aware dates; convert them to "
                                         r"numbers first .* t = pd.DatetimeIndex\(ds\['when'\].values\)"):
        _fit(bad, "y ~ when")
    with pytest.raises(ValueError, match=r"holds timezone-aware dates"):
        _fit(bad, "y ~ C(when)")
    ds_fixed = bad.copy()
    t = pd.DatetimeIndex(ds_fixed["when"].values)
    ds_fixed["when"] = ("sample", np.asarray((t - t.min()) / pd.Timedelta(days=1)))  # the message's fix
    days = _fit(ds_fixed, "y ~ when").model.parsed.scalar.raw(ds_fixed)[:, 0]
    np.testing.assert_allclose(days, np.arange(30) * 0.25)  # 6-hourly, across the DST change of 2020-03-29


def test_integer_ids_beyond_2_53_stay_distinct_levels():
    ds, _ = _data()
    big = np.int64(2 ** 53) + ds.g.values.astype(np.int64)  # 2**53 and 2**53 + 1: one float, two integers
    res = _fit(ds.assign(id=("sample", big)), "y ~ C(id)")
    assert res.model.parsed.scalar.levels == {"id": ["9007199254740992", "9007199254740993"]}
    small = _fit(ds, "y ~ C(g)")  # the same factor with small labels: the same model
    np.testing.assert_allclose(res.fitted.values, small.fitted.values, rtol=1e-12)
    levels = np.array([2 ** 60 + 2, 2 ** 60 + 1, 2 ** 60], dtype=np.uint64)[np.arange(30) % 3]
    assert _fit(ds.assign(u=("sample", levels)), "y ~ C(u)").model.parsed.scalar.levels["u"] == \
        [str(2 ** 60), str(2 ** 60 + 1), str(2 ** 60 + 2)]  # numeric order, exactly


def test_names_are_read_verbatim_not_nfkc_normalised():
    ds, rng = _data()
    micro, mu = "dose_\u00b5g", "dose_\u03bcg"  # MICRO SIGN and GREEK SMALL LETTER MU: NFKC makes them one name
    dose = rng.uniform(1, 2, 30)
    alone = ds.assign({micro: ("sample", dose)})
    res = _fit(alone, f"y ~ np.log({micro})")
    np.testing.assert_allclose(res.model.parsed.scalar.raw(alone)[:, 0], np.log(dose), rtol=1e-15)
    twins = alone.assign({mu: ("sample", dose[::-1] + 5)})
    for name, values in ((micro, dose), (mu, dose[::-1] + 5)):
        for formula in (f"y ~ np.log({name})", f"y ~ I({name} * 2)", f"y ~ {name}", f"y ~ C({name})"):
            raw = _fit(twins, formula).model.parsed
            assert raw.scalar.variables == [name], formula
            if "C(" not in formula:
                got = raw.scalar.raw(twins)[:, 0]
                want = np.log(values) if "log" in formula else values * (2 if "I(" in formula else 1)
                np.testing.assert_allclose(got, want, rtol=1e-15)
    with pytest.raises(ValueError, match=rf"unknown name '{mu}'"):
        _fit(alone, f"y ~ np.log({mu})")  # the twin that is not in the data is named as written


def test_a_curve_named_scalars_is_refused_not_replaced():
    ds, rng = _data()
    ds = ds.assign(scalars=(("sample", "s"), rng.normal(size=(30, 5))), z=("sample", rng.normal(size=30)))
    ds = ds.assign_coords(s=np.arange(5.0))
    with pytest.raises(ValueError, match=r"the curve variable 'scalars' has the name of the kernel of the numeric "
                                         r"scalar covariates \('scalars'\).*"
                                         r"ds.rename\(\{'scalars': 'scalars_curve'\}\)"):
        _fit(ds, "y ~ scalars + z")
    assert _fit(ds, "y ~ scalars + C(g)").model.parsed.terms == ["scalars", "C(g)"]  # no clash: no numeric design
    renamed = ds.rename(scalars="scalars_curve")
    assert _fit(renamed, "y ~ scalars_curve + z").model.parsed.terms == ["scalars_curve", "scalars"]


# ----------------------------------------------------------------------------- item 5: pairing by label
def _long_problem(seed=0, n=30, m=10):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, (n, 1))
    t = np.linspace(0, 1, m)
    Y = np.sin(3 * x * t) + 0.05 * rng.normal(size=(n, m))
    long = pd.DataFrame({"sample": np.repeat(np.arange(n), m), "location": np.tile(t, n), "value": Y.ravel()})
    return x, Y, t, long


def _predict(model, X, t):
    return np.asarray(model.predict(X, at=t), dtype=float)


def test_long_responses_pair_with_an_unlabelled_x_by_row_number():
    x, Y, t, long = _long_problem()
    xt = np.linspace(-1, 1, 7)[:, None]
    want = _predict(KPLRegressor(dictionary=Fourier(2), lam=1e-4).fit(x, long), xt, t)  # rows in curve order
    # sorted by location (curve 0 no longer first), or shuffled: row i of X is still the curve labelled i
    for order in (long.sort_values(["location", "value"]), long.sample(frac=1.0, random_state=1)):
        np.testing.assert_allclose(_predict(KPLRegressor(dictionary=Fourier(2), lam=1e-4).fit(x, order), xt, t),
                                   want, rtol=1e-10, atol=1e-12)
    assert long["sample"].iloc[0] == 0  # the user's frames are not modified
    texts = long.assign(sample="c" + long["sample"].astype(str)).sort_values("location")
    with pytest.raises(ValueError, match=r"X has no sample labels \(a plain array\) but Y is long-form data whose "
                                         r"curves are identified by their 'sample' labels"):
        KPLRegressor(dictionary=Fourier(2)).fit(x, texts)
    # ... a declared order is one: the i-th curve of attrs['samples'] is row i
    texts.attrs["samples"] = [f"c{i}" for i in range(30)]
    np.testing.assert_allclose(_predict(KPLRegressor(dictionary=Fourier(2), lam=1e-4).fit(x, texts), xt, t), want,
                               rtol=1e-10, atol=1e-12)


def test_long_responses_pair_with_labelled_x_by_label():
    x, Y, t, long = _long_problem()
    labels = [f"c{i}" for i in range(30)]
    texts = long.assign(sample=np.array(labels)[long["sample"]]).sort_values(["location", "value"])
    X = pd.DataFrame({"x": x[:, 0]}, index=labels)
    xt = pd.DataFrame({"x": np.linspace(-1, 1, 7)})
    in_order = long.assign(sample=np.array(labels)[long["sample"]])  # curves c0, c1, ... in X's order
    want = _predict(KPLRegressor(dictionary=Fourier(2), lam=1e-4).fit(X, in_order), xt, t)
    got = KPLRegressor(dictionary=Fourier(2), lam=1e-4).fit(X.iloc[::-1], texts)  # X in another order: by label
    np.testing.assert_allclose(_predict(got, xt, t), want, rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(got.response_info_.labels, labels[::-1])
    other = X.rename(index={"c3": "zz"})
    with pytest.raises(ValueError, match=r"X has samples \['zz'\] that the long-form Y lacks \(Y has \['c3'\] "
                                         r"instead\)"):
        KPLRegressor(dictionary=Fourier(2)).fit(other, texts)


def test_kfold_cv_takes_the_same_curves_as_the_rows_of_x_for_long_responses():
    x, Y, t, long = _long_problem()
    est = KPLRegressor(dictionary=Fourier(2), kernel=Gaussian(1.0))
    kw = dict(lams=[1e-4, 1e-2], param_grid={}, n_splits=3, random_state=0, n_jobs=1)
    ref = kfold_path(est, x, long, **kw)
    shuffled = kfold_path(est, x, long.sample(frac=1.0, random_state=3), **kw)
    np.testing.assert_allclose(shuffled["fold_scores"], ref["fold_scores"], rtol=1e-10)
