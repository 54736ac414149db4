"""fdakpl.r.convert (rpy2 converters), fdakpl.r.bridge (reticulate entry points) and the R loaders of the datasets."""

import shutil
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
import xarray as xr

ro = pytest.importorskip("rpy2.robjects", reason="rpy2 is not importable (pip install 'fdakpl[r]', needs R)")

from fdakpl import datasets  # noqa: E402
from fdakpl.datasets._dti import bundled_path  # noqa: E402
from fdakpl.r import bridge as rbridge  # noqa: E402
from fdakpl.r import convert as r  # noqa: E402

R_DTI = f'local({{e <- new.env(); load("{bundled_path()}", envir = e); e$DTI}})'

# every kind of column the converters accept, with R's NA and NaN in each where R allows them
R_MIXED = """data.frame(
  num = c(1.5, NA, NaN, -2),
  int = c(1L, NA, 3L, 4L),
  int_full = 1:4,
  lgl = c(TRUE, NA, FALSE, TRUE),
  lgl_full = c(TRUE, FALSE, FALSE, TRUE),
  chr = c("a", NA, "c", "d"),
  fac = factor(c("lo", "hi", NA, "lo"), levels = c("lo", "mid", "hi")),
  ord = factor(c("b", "a", "b", "a"), levels = c("b", "a"), ordered = TRUE),
  day = as.Date("2020-01-01") + 0:3,
  curve = I(matrix(c(1, NA, NaN, 4, 5, 6, 7, 8, NA, 10, 11, 12), 4,
                   dimnames = list(NULL, c("t1", "t2", "t3")))),
  counts = I(matrix(c(1L, 2L, NA, 4L, 5L, 6L, 7L, 8L), 4)),
  row.names = c("s1", "s2", "s3", "s4"),
  stringsAsFactors = FALSE
)"""


def r_identical(a, b) -> bool:
    return bool(ro.baseenv["identical"](a, b)[0])


def r_eval(code):
    with ro.default_converter.context():
        return ro.r(code)


# --------------------------------------------------------------------------- a stand-in package "refund"


@pytest.fixture(scope="module")
def refund_library(tmp_path_factory):
    """Install a minimal package named refund (DESCRIPTION + data/) into a temporary R library."""
    root = tmp_path_factory.mktemp("refund")
    pkg, lib = root / "refund", root / "lib"
    (pkg / "data").mkdir(parents=True)
    lib.mkdir()
    (pkg / "DESCRIPTION").write_text(
        "Package: refund\nVersion: 0.1-40\nTitle: Test Stand-in Holding Data of refund\n"
        "Description: Test stand-in: refund's DTI data and two small data sets, so that\n"
        "    data(\"DTI\", package = \"refund\") runs where refund cannot be installed.\n"
        "License: GPL (>= 2)\n"
    )
    (pkg / "NAMESPACE").write_text("")
    shutil.copy(bundled_path(), pkg / "data" / "DTI.RData")
    r_eval(f"""local({{
      sim <- data.frame(id = 1:5, g = factor(c("a", "b", "a", NA, "b")))
      sim$Y <- I(matrix(seq(0.5, 7.5, by = 0.5)[1:15], 5))
      sim$Y[2, 3] <- NA
      save(sim, file = "{pkg / 'data' / 'sim.RData'}")
      mat <- matrix(c(1, 2, NA, 4, 5, 6), 2, dimnames = list(c("u", "v"), NULL))
      save(mat, file = "{pkg / 'data' / 'mat.RData'}")
      lst <- list(a = 1)
      save(lst, file = "{pkg / 'data' / 'lst.RData'}")
    }})""")
    rbin = r_eval("file.path(R.home('bin'), 'R')")[0]
    subprocess.run([rbin, "CMD", "INSTALL", "--no-test-load", f"--library={lib}", str(pkg)],
                   check=True, capture_output=True)
    return str(lib)


@pytest.fixture
def with_refund(refund_library):
    old = r_eval(".libPaths()")
    ro.baseenv[".libPaths"](ro.StrVector([refund_library, *old]))
    yield refund_library
    ro.baseenv[".libPaths"](old)


# --------------------------------------------------------------------------- converters


def test_dti_round_trip_is_identical_in_r():
    dti = r_eval(R_DTI)
    ds = r.r_to_xarray(dti)
    assert ds.sizes == {"sample": 382, "cca_loc": 93, "rcst_loc": 55}
    assert ds.sample.values[0] == "1001_1"  # from the matrices' row names (row.names are automatic)
    assert list(ds.cca_colname.values[:2]) == ["cca_1", "cca_2"]
    np.testing.assert_array_equal(ds.rcst_loc.values, np.arange(1.0, 56.0))  # column index by default
    assert int(ds.rcst.isnull().sum()) == 738 and int(ds.pasat.isnull().sum()) == int(
        r_eval(f"sum(is.na({R_DTI}$pasat))")[0])
    assert ds.sex.attrs["levels"] == ["male", "female"]
    # same numbers as the rdata reader
    ref = datasets.load_dti(source="rdata")
    np.testing.assert_array_equal(ds.cca.values, ref.cca.values)
    np.testing.assert_array_equal(ds["visit.time"].values, ref.visit_time.values)
    assert r_identical(r.xarray_to_r(ds), dti)


def test_subset_keeps_curve_labels_and_row_names():
    sub = r_eval(f"local({{d <- {R_DTI}; d[d$case == 1 & d$visit == 1, ][1:3, ]}})")
    ds = r.r_to_xarray(sub)
    assert list(ds.sample.values) == ["2001_1", "2002_1", "2003_1"]  # the curves' labels, not "43", "48", ...
    assert list(ds.r_row_name.values) == list(r_eval("row.names")(sub))
    assert r_identical(r.xarray_to_r(ds), sub)
    relabelled = r_eval(f"local({{d <- {R_DTI}[1:2, ]; rownames(d$cca) <- c('a', 'b'); d}})")
    ds = r.r_to_xarray(relabelled)
    assert list(ds.sample.values) == ["a", "b"] and list(ds.rcst_rowname.values) == ["1001_1", "1002_1"]
    assert r_identical(r.xarray_to_r(ds), relabelled)


def test_mixed_columns_values_and_labels():
    ds = r.r_to_xarray(R_MIXED)
    assert list(ds.sample.values) == ["s1", "s2", "s3", "s4"]
    np.testing.assert_array_equal(np.isnan(ds.num.values), [False, True, True, False])
    assert ds.int.dtype == np.float64 and ds.int.attrs["r_type"] == "integer"
    np.testing.assert_array_equal(ds.int.values, [1, np.nan, 3, 4])
    assert ds.int_full.dtype == np.int32
    assert ds.lgl_full.dtype == bool and ds.lgl.attrs["r_type"] == "logical"
    np.testing.assert_array_equal(ds.lgl.values, [1, np.nan, 0, 1])
    assert ds.chr.values[0] == "a" and isinstance(ds.chr.values[1], float) and np.isnan(ds.chr.values[1])
    assert ds.fac.attrs["levels"] == ["lo", "mid", "hi"]  # unused level kept, order kept
    assert ds.fac.values[1] == "hi" and np.isnan(ds.fac.values[2])
    assert ds.ord.attrs["r_class"] == ["ordered", "factor"]
    assert ds.day.attrs["r_class"] == ["Date"]
    np.testing.assert_array_equal(ds.day.values, [18262.0, 18263.0, 18264.0, 18265.0])
    assert ds.curve.dims == ("sample", "curve_loc") and ds.curve.attrs["r_class"] == ["AsIs"]
    np.testing.assert_array_equal(np.isnan(ds.curve.values), [[0, 0, 1], [1, 0, 0], [1, 0, 0], [0, 0, 0]])
    assert list(ds.curve_colname.values) == ["t1", "t2", "t3"]
    assert ds.counts.attrs["r_type"] == "integer" and np.isnan(ds.counts.values[2, 0])


def test_mixed_columns_round_trip_exactly():
    df = r_eval(R_MIXED)
    back = r.xarray_to_r(r.r_to_xarray(df))
    assert r_identical(back, df)
    # R's NA and NaN in a double column both read as NaN, and both come back as they were
    ro.globalenv["back_"] = back
    assert list(r_eval("c(is.na(back_$num[2]) && !is.nan(back_$num[2]), is.nan(back_$num[3]))")) == [True, True]


def test_r_columns_gives_categoricals():
    columns, labels, info = r.r_columns(R_MIXED)
    assert isinstance(columns["fac"], pd.Categorical)
    assert list(columns["fac"].categories) == ["lo", "mid", "hi"] and columns["fac"].codes[2] == -1
    assert info["curve"]["colnames"] == ["t1", "t2", "t3"] and info[""]["r_row_names"] == "names"


def test_grids():
    unit = r.r_to_xarray(R_MIXED, grids="unit")
    np.testing.assert_allclose(unit.curve_loc.values, [0.0, 0.5, 1.0])
    given = r.r_to_xarray(R_MIXED, grids={"curve": [0.1, 0.2, 0.4]})
    np.testing.assert_array_equal(given.curve_loc.values, [0.1, 0.2, 0.4])
    np.testing.assert_array_equal(given.counts_loc.values, [1.0, 2.0])
    with pytest.raises(ValueError, match="grid for 'curve' has 2 locations"):
        r.r_to_xarray(R_MIXED, grids={"curve": [0.0, 1.0]})
    with pytest.raises(ValueError, match="strictly increasing"):
        r.r_to_xarray(R_MIXED, grids={"curve": [0.0, 1.0, 0.5]})


def test_xarray_to_r_from_a_python_dataset():
    ds = datasets.load_dti(source="rdata")
    df = r.xarray_to_r(ds)
    ro.globalenv["py_dti_"] = df
    ro.globalenv["ref_dti_"] = r_eval(R_DTI)
    assert list(r_eval("names(py_dti_)")) == list(r_eval("names(ref_dti_)"))  # visit_time -> visit.time
    assert bool(r_eval("identical(unname(py_dti_$rcst), unname(ref_dti_$rcst))")[0])
    assert bool(r_eval("identical(py_dti_$sex, ref_dti_$sex)")[0])
    assert bool(r_eval("identical(rownames(py_dti_$cca), rownames(ref_dti_$cca))")[0])
    assert bool(r_eval("identical(py_dti_$pasat, ref_dti_$pasat)")[0])  # integer with NA, as in refund
    # all but the row names (refund's are automatic) and the column names (not kept by load_dti)
    assert bool(r_eval("identical(lapply(py_dti_, unname), lapply(ref_dti_, unname))")[0])


def test_converter_errors():
    with pytest.raises(TypeError, match=r"expected an R data\.frame"):
        r.r_to_xarray("matrix(1:4, 2)")
    with pytest.raises(TypeError, match="column 'm' has R type 'character'"):
        r.r_to_xarray('data.frame(m = I(matrix(c("a", "b"), 2)))')
    with pytest.raises(TypeError, match="list column"):
        r.r_to_xarray("local({d <- data.frame(a = 1:2); d$l <- list(1, 2); d})")
    bad = xr.Dataset({"x": (("sample", "t", "u"), np.zeros((2, 2, 2)))})
    with pytest.raises(ValueError, match="only \\('sample',\\) and"):
        r.xarray_to_r(bad)
    fac = xr.Dataset({"f": ("sample", np.array(["a", "z"]), {"levels": ["a", "b"]})})
    with pytest.raises(ValueError, match="values \\['z'\\] that are not among its levels"):
        r.xarray_to_r(fac)


# issue 19.1 / 19.12: what cannot be represented is refused with the column named; the rest round-trips
@pytest.mark.parametrize(("code", "message"), [
    ("data.frame(x = 1:2, x = 3:4, check.names = FALSE)", "2 columns are named 'x'"),
    ("local({d <- data.frame(x_loc = 1:2); d$x <- matrix(1:4, 2); d})",
     "column 'x_loc' has the name of a coordinate made for the matrix column 'x'"),
    ("local({d <- data.frame(a = 1:2); d$x <- matrix(1:4, 2, dimnames = list(c('a', NA), NULL)); d})",
     "matrix column 'x' has NA row names"),
    ("data.frame(sample = 1:2)", "a column is named 'sample'"),
    ("local({d <- data.frame(a = 1:2); names(d) <- ''; d})", "column 1 has an empty name"),
    ("local({d <- data.frame(a = 1:2); d$x <- array(1:8, c(2, 2, 2)); d})", "column 'x' is an array with 3 dims"),
    ("local({d <- data.frame(a = 1:2); attr(d$a, 'foo') <- 'bar'; d})", "column 'a' has the R attribute 'foo'"),
])
def test_converter_refuses_what_it_cannot_represent(code, message):
    with pytest.raises(ValueError, match=message):
        r.r_to_xarray(code)


@pytest.mark.parametrize("code", [
    "data.frame(t = as.POSIXct(c('2020-01-01 10:00', '2020-06-01 11:00'), tz = 'America/New_York'),"
    "           d = as.difftime(c(1, 2.5), units = 'mins'))",
    "data.frame(a = numeric(0), f = factor(character(0), levels = 'u'), s = character(0))",
    "local({d <- data.frame(a = 1:2); d$x <- matrix(0, 2, 0); d})",
    "local({d <- data.frame(a = 1:2); d$x <- matrix(1:4, 2, dimnames = list(c('u', 'u'), NULL)); d})",
])
def test_converter_round_trips_zones_units_and_empty_shapes(code):
    df = r_eval(code)
    ds = r.r_to_xarray(df)
    assert r_identical(r.xarray_to_r(ds), df)


def test_time_zone_and_units_are_kept_as_attributes():
    ds = r.r_to_xarray("data.frame(t = as.POSIXct('2020-01-01 10:00', tz = 'Asia/Tokyo'),"
                       " d = as.difftime(90, units = 'secs'))")
    assert ds.t.attrs["r_tzone"] == "Asia/Tokyo" and ds.t.attrs["r_class"] == ["POSIXct", "POSIXt"]
    assert ds.t.values[0] == 1577840400.0  # 01:00 UTC
    assert ds.d.attrs["r_units"] == "secs" and ds.d.values[0] == 90.0
    # duplicated curve labels fall back to the (unique) row names: no sample is lost
    dup = r.r_to_xarray("local({d <- data.frame(a = 1:2); "
                        "d$x <- matrix(1:4, 2, dimnames = list(c('u', 'u'), NULL)); d})")
    assert list(dup.sample.values) == ["1", "2"] and list(dup.x_rowname.values) == ["u", "u"]


def test_missing_rpy2_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "rpy2.robjects", None)
    with pytest.raises(ImportError, match=r'pip install "fdakpl\[r\]"'):
        r.r_to_xarray(R_MIXED)
    assert not r.rpy2_available()


def test_not_inside_r_here():
    assert not r.inside_r() and r.rpy2_available()


# --------------------------------------------------------------------------- reticulate-side builder


def test_dataset_from_columns_rebuilds_dti():
    ref = datasets.load_dti(source="rdata")
    columns = {"cca": ref.cca.values, "rcst": ref.rcst.values, "sex": np.where(ref.sex.values == "male", 1.0, 2.0),
               "pasat": ref.pasat.values}
    ds = dataset_from = rbridge.dataset_from_columns(columns, ref.sample.values,
                                                     factor_levels={"sex": ["male", "female"]})
    xr.testing.assert_equal(ds.rcst.drop_vars("rcst_loc"), ref.rcst.drop_vars("rcst_loc"))
    np.testing.assert_array_equal(dataset_from.rcst_loc.values, ref.rcst_loc.values)
    np.testing.assert_array_equal(ds.sex.values, ref.sex.values)
    np.testing.assert_array_equal(ds.pasat.values, ref.pasat.values)


def test_dataset_from_columns_errors():
    with pytest.raises(ValueError, match="different numbers of rows"):
        rbridge.dataset_from_columns({"a": np.zeros((3, 2)), "b": np.zeros(4)})
    with pytest.raises(ValueError, match=r"codes outside 1\.\.2"):
        rbridge.dataset_from_columns({"f": [1.0, 3.0]}, factor_levels={"f": ["x", "y"]})
    with pytest.raises(ValueError, match="3 sample labels for 2 rows"):
        rbridge.dataset_from_columns({"a": [1.0, 2.0]}, sample_labels=["a", "b", "c"])
    with pytest.raises(TypeError, match="column 'a' has dtype"):
        rbridge.dataset_from_columns({"a": np.array(["x", "y"])})


# --------------------------------------------------------------------------- loaders


def _without_source(ds):
    ds = ds.copy()
    ds.attrs.pop("source")
    return ds


def test_dti_sources_give_the_same_dataset(with_refund):
    rdata = datasets.load_dti(source="rdata")
    via_r = datasets.load_dti(source="r")
    via_refund = datasets.load_dti(source="refund")
    auto = datasets.load_dti()
    assert "refund 0.1-40" in via_refund.attrs["source"] and auto.attrs["source"] == via_refund.attrs["source"]
    assert "rdata" in rdata.attrs["source"] and "loaded by R" in via_r.attrs["source"]
    for other in (via_r, via_refund, auto):
        xr.testing.assert_identical(_without_source(other), _without_source(rdata))
    assert via_refund.attrs["acknowledgment"] == datasets.DTI_ACKNOWLEDGMENT


def test_without_refund():
    if bool(r_eval('nzchar(system.file(package = "refund"))')[0]):  # the real refund is installed here
        assert datasets.refund_available() and "refund" in datasets.load_dti().attrs["source"]
        return
    assert not datasets.refund_available()
    assert "rdata" in datasets.load_dti().attrs["source"]
    with pytest.raises(ModuleNotFoundError, match="R package refund is not installed"):
        datasets.load_dti(source="refund")
    with pytest.raises(ModuleNotFoundError, match="R package refund is not installed"):
        datasets.load_refund("DTI")
    with pytest.raises(ValueError, match="unknown source 'cran'"):
        datasets.load_dti(source="cran")


def test_load_refund_other_data_sets(with_refund):
    sim = datasets.load_refund("sim")
    assert sim.Y.dims == ("sample", "Y_loc") and sim.Y.attrs["r_class"] == ["AsIs"]
    expected = np.arange(0.5, 8.0, 0.5).reshape(3, 5).T.copy()
    expected[1, 2] = np.nan
    np.testing.assert_array_equal(sim.Y.values, expected)
    assert sim.g.attrs["levels"] == ["a", "b"] and np.isnan(sim.g.values[3])
    assert "refund 0.1-40" in sim.attrs["source"]
    mat = datasets.load_refund("mat", grids="unit")
    assert list(mat.sample.values) == ["u", "v"]
    np.testing.assert_array_equal(mat.mat.values, [[1, np.nan, 5], [2, 4, 6]])
    np.testing.assert_allclose(mat.mat_loc.values, [0, 0.5, 1])
    dti = datasets.load_refund("DTI")
    assert dti.attrs["acknowledgment"] == datasets.DTI_ACKNOWLEDGMENT
    with pytest.raises(ValueError, match="no data set 'nothere'; it has: DTI, lst, mat, sim"):
        datasets.load_refund("nothere")
    with pytest.raises(TypeError, match="class \\['list'\\]"):
        datasets.load_refund("lst")


# --------------------------------------------------------------------------- fitting through the bridges


def test_fit_from_r_matches_functional_regression():
    from fdakpl import FunctionalRegression

    ds = datasets.dti_first_visits()
    train, test = ds.isel(sample=slice(0, 70)), ds.isel(sample=slice(70, None))
    kwargs = {"lam": 1e-3, "interpolate_inputs": True, "progress": False}
    ref = FunctionalRegression("rcst ~ cca + C(sex)", data=train, **kwargs).fit()
    sex_codes = np.where(train.sex.values == "male", 1.0, 2.0)
    cols = {"cca": train.cca.values, "rcst": train.rcst.values, "sex": sex_codes}
    res = rbridge.fit_from_r("rcst ~ cca + C(sex)", cols, train.sample.values,
                             factor_levels={"sex": ["male", "female"]}, **kwargs)
    out = rbridge.results_for_r(res)
    np.testing.assert_allclose(out["fitted"], ref.fitted.values, rtol=0, atol=1e-10)
    np.testing.assert_array_equal(np.isnan(out["residuals"]), np.isnan(train.rcst.values))
    assert out["samples"] == list(train.sample.values)
    new = {"cca": test.cca.values, "sex": np.where(test.sex.values == "male", 1.0, 2.0)}
    pred = rbridge.predict_from_r(res, new, test.sample.values, factor_levels={"sex": ["male", "female"]})
    np.testing.assert_allclose(pred["values"], ref.predict(newdata=test).values, rtol=0, atol=1e-10)
    assert pred["samples"] == list(test.sample.values)


def test_r_data_frame_through_rpy2_fits_as_the_python_dataset():
    from fdakpl import FunctionalRegression

    sub = r_eval(f"local({{d <- {R_DTI}; d[d$case == 1 & d$visit == 1, ]}})")
    from_r = r.r_to_xarray(sub, grids="unit")
    ref_ds = datasets.dti_first_visits()
    kwargs = {"lam": 1e-2, "interpolate_inputs": True, "progress": False}
    a = FunctionalRegression("rcst ~ cca", data=from_r, **kwargs).fit()
    b = FunctionalRegression("rcst ~ cca", data=ref_ds, **kwargs).fit()
    np.testing.assert_allclose(a.fitted.values, b.fitted.values, rtol=0, atol=1e-10)
    np.testing.assert_array_equal(a.fitted.sample.values, b.fitted.sample.values)


# --------------------------------------------------------------------------- rbridge: warnings, workers, bands


def test_warning_recorder_keeps_each_distinct_warning_once():
    import warnings

    from fdakpl.r.bridge import WarningRecorder

    rec = WarningRecorder()
    rec.start()
    for _ in range(3):
        warnings.warn("same cause", UserWarning, stacklevel=1)
    warnings.warn("other", RuntimeWarning, stacklevel=1)
    assert rec.stop() == [["UserWarning", "same cause"], ["RuntimeWarning", "other"]]
    with warnings.catch_warnings(record=True) as after:  # recording has stopped: warnings flow again
        warnings.simplefilter("always")
        warnings.warn("free", UserWarning, stacklevel=1)
    assert len(after) == 1


def test_cv_fit_through_the_bridge_leaves_no_worker_process():
    psutil = pytest.importorskip("psutil")
    from fdakpl.r.bridge import fit_from_r

    ds = datasets.dti_first_visits().isel(sample=slice(0, 40))
    before = {c.pid for c in psutil.Process().children(recursive=True)}
    res = fit_from_r("rcst ~ cca", {"cca": ds.cca.values, "rcst": ds.rcst.values}, ds.sample.values,
                     lam="cv", cv=3, n_jobs=2, interpolate_inputs=True, progress=False)
    assert res.lam > 0
    children = [c for c in psutil.Process().children(recursive=True)
                if c.pid not in before and "resource_tracker" not in " ".join(c.cmdline())]
    assert [c for c in children if c.is_running() and c.status() != psutil.STATUS_ZOMBIE] == []
    assert res.model.n_jobs == 2 and res.lam > 0  # the workers were used


def test_predict_from_r_bands_are_the_conformal_bands():
    from fdakpl.r.bridge import fit_from_r, predict_from_r

    ds = datasets.dti_first_visits()
    cols = {"cca": ds.cca.values[:70], "rcst": ds.rcst.values[:70]}
    res = fit_from_r("rcst ~ cca", cols, ds.sample.values[:70], lam=1e-3, interpolate_inputs=True, progress=False)
    new = {"cca": ds.cca.values[70:]}
    out = predict_from_r(res, new, ds.sample.values[70:], level=0.8)
    lo, hi, pred = res.prediction_bands(rbridge.dataset_from_columns(new, ds.sample.values[70:]), alpha=0.2)
    np.testing.assert_array_equal(out["lower"], lo.values)
    np.testing.assert_array_equal(out["upper"], hi.values)
    np.testing.assert_array_equal(out["values"], pred.values)
    with pytest.raises(ValueError, match="drop `at`"):
        predict_from_r(res, new, level=0.8, at=[0.5])


def test_r_na_bits_become_a_quiet_nan():
    """R's NA_real_ is a NaN with payload 1954 and the quiet bit unset: NumPy warns on arithmetic with it."""
    import warnings

    r_na = np.array([0x7FF00000000007A2], dtype=np.uint64).view(np.float64)[0]
    ds = rbridge.dataset_from_columns({"y": np.array([[1.0, r_na], [2.0, 3.0]])})
    assert np.isnan(ds.y.values[0, 1])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _ = ds.y.values - 1.0  # no "invalid value encountered in subtract"


# --------------------------------------------------------------------------- issue 27 (R, round 3)


def test_27_5_numeric_column_names_are_the_grid_as_in_kpl():
    # the R package's kpl() reads numeric column names as the locations; the converter reads them alike,
    # so the same data.frame gives the same Dataset (and fit) through both bridges
    df = r_eval("""local({
      d <- data.frame(id = 1:4)
      d$y <- matrix(1:12, 4, dimnames = list(NULL, c("0.5", "2", "2.25")))
      d$w <- matrix(1:8, 4, dimnames = list(NULL, c("1000", "400")))  # wavenumbers, decreasing
      d$z <- matrix(1:8, 4, dimnames = list(NULL, c("t1", "t2")))
      d})""")
    ds = r.r_to_xarray(df)
    np.testing.assert_array_equal(ds.y_loc.values, [0.5, 2.0, 2.25])
    np.testing.assert_array_equal(ds.w_loc.values, [1000.0, 400.0])  # R's column order is kept
    np.testing.assert_array_equal(ds.z_loc.values, [1.0, 2.0])  # not numbers: the column index
    reticulate_side = rbridge.dataset_from_columns({"y": ds.y.values}, grids={"y": [0.5, 2.0, 2.25]})
    np.testing.assert_array_equal(reticulate_side.y_loc.values, ds.y_loc.values)
    assert r_identical(r.xarray_to_r(ds), df)
    np.testing.assert_array_equal(r.r_to_xarray(df, grids="index").y_loc.values, [1.0, 2.0, 3.0])


def test_27_12_add_na_factors_and_lists_convert_or_say_how():
    df = r_eval('data.frame(region = addNA(factor(c("Europe", "NA", NA, "Europe"))))')
    ds = r.r_to_xarray(df)
    # the real level "NA" (North America) and the missing-region level stay apart
    assert ds.region.attrs["levels"] == ["Europe", "NA", "<NA>"] and ds.region.attrs["r_na_level"] == "<NA>"
    assert list(ds.region.values) == ["Europe", "NA", "<NA>", "Europe"]
    assert r_identical(r.xarray_to_r(ds), df)
    plain = r.r_to_xarray('data.frame(f = addNA(factor(c("a", NA))))')
    assert plain.f.attrs["levels"] == ["a", "NA"]
    with pytest.raises(TypeError, match=r"got an R object of class list \(a named list .* data\.frame\(lapply"):
        r.r_to_xarray("list(a = 1:2, m = matrix(1:4, 2))")


def test_27_23_na_names_are_refused_not_made_strings():
    with pytest.raises(ValueError, match="matrix column 'm' has NA column names"):
        r.r_to_xarray('local({d <- data.frame(a = 1:2); d$m <- matrix(1:4, 2, dimnames = list(NULL, c("u", NA))); d})')
    with pytest.raises(ValueError, match="column 2 has an NA name"):
        r.r_to_xarray("structure(list(a = 1:2, b = 3:4), names = c('a', NA), class = 'data.frame', "
                      "row.names = c(NA, -2L))")


def test_27_24_rows_of_automatic_row_names_keep_their_numbers():
    df = r_eval("data.frame(x = c(10, 20, 30, 40, 50, 60))")
    ds = r.r_to_xarray(df)
    sub = ds.isel(sample=[5, 2])
    ro.globalenv["sub_"] = r.xarray_to_r(sub)
    ro.globalenv["df_"] = df
    assert r_identical(ro.globalenv["sub_"], r_eval("df_[c(6, 3), , drop = FALSE]"))
    assert list(r_eval("rownames(sub_)")) == ["6", "3"]
    assert r_identical(r.xarray_to_r(ds), df)  # all rows in order: automatic row names again
    # DTI's curves are labelled by the matrices' row names; a subset keeps R's row numbers too
    dti = r_eval(R_DTI)
    back = r.xarray_to_r(r.r_to_xarray(dti).isel(sample=[4, 0]))
    ro.globalenv["back_"], ro.globalenv["dti_"] = back, dti
    assert r_identical(back, r_eval("dti_[c(5, 1), ]"))


def test_27_25_xarray_to_r_refuses_what_r_cannot_hold_and_keeps_dimnames_names():
    fac = xr.Dataset({"f": ("sample", np.array(["a", "b"]), {"levels": ["a", "b", "a"]})})
    with pytest.raises(ValueError, match=r"factor 'f' has duplicated levels \['a'\]"):
        r.xarray_to_r(fac)
    two = xr.Dataset({"x": ("sample", [1.0, 2.0]), "x_": ("sample", [3.0, 4.0], {"r_name": "x"})})
    with pytest.raises(ValueError, match="several variables become the R column 'x'"):
        r.xarray_to_r(two)
    df = r_eval("""local({d <- data.frame(a = 1:2)
      d$m <- matrix(1:4, 2, dimnames = list(id = c("p", "q"), t = c("t1", "t2"))); d})""")
    assert r_identical(r.xarray_to_r(r.r_to_xarray(df)), df)


def test_27_19_no_numpy_warning_for_a_location_no_curve_observes():
    import warnings

    ds = datasets.dti_first_visits()
    y = ds.rcst.values.copy()
    y[:, 0] = np.nan  # the first location of the response is never observed
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # "Mean of empty slice" reached R as a warning
        res = rbridge.fit_from_r("rcst ~ cca", {"cca": ds.cca.values, "rcst": y}, lam=1e-2,
                                 interpolate_inputs=True, progress=False)
        out = rbridge.results_for_r(res)
        r2 = res.r2_pointwise.values
    assert np.isnan(r2[0]) and np.all(np.isfinite(r2[1:]))
    assert "Training MSE" in out["summary"]


def test_27_2_laplace_without_sigma_takes_the_median_heuristic_width():
    ds = datasets.dti_first_visits()
    from fdakpl import FunctionalRegression
    from fdakpl.kernels import Laplace

    width = FunctionalRegression("rcst ~ cca", ds, interpolate_inputs=True).default_kernels()["cca"].sigma
    k = rbridge.kernels_by_name("rcst ~ cca", ds, {"cca": "laplace"}, interpolate=True)["cca"]
    assert isinstance(k, Laplace) and k.sigma == width
    with pytest.raises(ValueError, match="other than 'laplace'"):
        rbridge.kernels_by_name("rcst ~ cca", ds, {"cca": "gaussian"}, interpolate=True)
