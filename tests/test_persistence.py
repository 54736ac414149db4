"""Saving and loading fitted models (fdakpl.io.netcdf): round trips, foreign and corrupted files, no pickle."""

import copy
import importlib.util
import json
import os
import pickle
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import xarray as xr

import fdakpl
from fdakpl import (
    FPCA,
    BSpline,
    Fourier,
    FunctionalRegression,
    Gaussian,
    KPLRegressor,
    Laplace,
    PiecewiseLinear,
    Sum,
    Wavelet,
    datasets,
)
from fdakpl.dictionaries import Learned, RandomFourier
from fdakpl.io.netcdf import _checksum, _restore_dtype, load, registered_classes, save
from fdakpl.kernels import Kernel
from fdakpl.utils.saved import saved_fields

from .conftest import make_problem

ENGINES = ["scipy"] + [e for e, mods in (("netcdf4", ["netCDF4"]), ("h5netcdf", ["h5netcdf", "h5py"]))
                       if all(importlib.util.find_spec(m) for m in mods)]


def _same(a, b, where="obj"):
    """Recursive bit-for-bit equality of two restored object trees."""
    if isinstance(a, np.ndarray):
        assert isinstance(b, np.ndarray) and a.dtype == b.dtype and a.shape == b.shape, where
        np.testing.assert_array_equal(a, b, err_msg=where)
    elif isinstance(a, dict):
        assert isinstance(b, dict) and set(a) == set(b), (where, set(a) ^ set(b))
        for k in a:
            _same(a[k], b[k], f"{where}.{k}")
    elif isinstance(a, (list, tuple)):
        assert type(a) is type(b) and len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            _same(x, y, f"{where}[{i}]")
    elif isinstance(a, float) and np.isnan(a):
        assert isinstance(b, float) and np.isnan(b), where
    elif hasattr(a, "__dict__") and type(a).__module__.startswith("fdakpl"):
        assert type(a) is type(b), where
        fields = saved_fields(type(a))  # what a file stores: the fields the class declares
        assert fields or not vars(a), (where, "an fdakpl object that declares no saved fields")
        _same({k: v for k, v in vars(a).items() if k in fields},
              {k: v for k, v in vars(b).items() if k in fields}, where)
    else:
        assert type(a) is type(b) and a == b, (where, a, b)


@pytest.fixture(scope="module")
def dti():
    ds = datasets.dti_first_visits()
    from fdakpl.data.functional import interpolate_missing

    return ds.assign(cca=ds.cca.copy(data=interpolate_missing(ds.cca.values, ds.cca_loc.values)))


@pytest.fixture(scope="module")
def dti_results(dti):
    return FunctionalRegression("rcst ~ cca + C(sex) + pasat", dti, dictionary="db3", level=4, output_matrix=1.5,
                                progress=False).fit()


@pytest.mark.parametrize("engine", ENGINES)
def test_results_round_trip_is_exact(tmp_path, dti, dti_results, engine):
    res = dti_results
    before = copy.deepcopy(dti)
    path = res.save(tmp_path / "dti.nc", engine=engine)
    xr.testing.assert_identical(dti, before)  # saving does not touch the user's data
    again = fdakpl.load(path)
    new = dti.isel(sample=slice(10, 30))
    np.testing.assert_array_equal(again.predict(new).values, res.predict(new).values)
    xr.testing.assert_identical(again.predict(new, at=[0.0, 0.33, 1.0]), res.predict(new, at=[0.0, 0.33, 1.0]))
    xr.testing.assert_identical(again.fitted, res.fitted)
    xr.testing.assert_identical(again.coef, res.coef)
    assert again.edf == res.edf and again.lam == res.lam and again.lam_how == res.lam_how
    assert str(again.summary()) == str(res.summary())
    xr.testing.assert_identical(again.model.data, dti[["rcst", "cca", "sex", "pasat"]])
    assert again.model.data.attrs["acknowledgment"] == dti.attrs["acknowledgment"]
    assert again.estimator.K_ is None and again.path is None  # no n x n matrix is stored or rebuilt at load
    _same(again.estimator, res.estimator, "estimator")
    _same(again.kernels, res.kernels, "kernels")
    _same(again.criteria, res.criteria, "criteria")
    np.testing.assert_array_equal(again.model.parsed.scalar.mean, res.model.parsed.scalar.mean)
    with pytest.raises(ValueError, match="levels"):  # the rebuilt scalar design still guards its levels
        again.predict(new.assign(sex=new.sex.copy(data=np.array(["x"] * 20))))


def test_loaded_results_support_bands_and_tests(tmp_path, dti, dti_results):
    again = load(dti_results.save(tmp_path / "m.nc"))
    for a, b in zip(again.prediction_bands(dti.isel(sample=[0, 1]), alpha=0.2, random_state=3),
                    dti_results.prediction_bands(dti.isel(sample=[0, 1]), alpha=0.2, random_state=3), strict=True):
        xr.testing.assert_identical(a, b)
    p1 = again.permutation_test("cca", n_permutations=3, random_state=1, progress=False)
    p2 = dti_results.permutation_test("cca", n_permutations=3, random_state=1, progress=False)
    np.testing.assert_array_equal(p1.null_distribution, p2.null_distribution)
    d1, d2 = again.diagnostics(), dti_results.diagnostics()
    for key in ("C_phi", "kappa", "M", "L", "R", "lambda_star", "representation_error_max"):
        assert d1[key] == d2[key], key


def test_file_is_plain_netcdf_with_provenance(tmp_path, dti_results):
    path = dti_results.save(tmp_path / "m.nc", engine="scipy")
    with xr.open_dataset(path) as f:
        assert f.attrs["fdakpl_format"] == "fdakpl.results"
        assert f.attrs["fdakpl_version"] == fdakpl.__version__
        for key in ("fdakpl_created", "fdakpl_python_version", "fdakpl_numpy_version", "fdakpl_checksum",
                    "acknowledgment"):
            assert key in f.attrs
        assert f.attrs["fdakpl_formula"] == "rcst ~ cca + C(sex) + pasat"
        coef = f["fdakpl.model.estimator.dual_coef_"]
        assert coef.dims == ("sample", "fdakpl.atom")
        np.testing.assert_array_equal(coef.values, dti_results.estimator.dual_coef_)
        np.testing.assert_array_equal(f["fdakpl.model.estimator.B_"].values, dti_results.estimator.B_)
        state = json.loads(str(f["fdakpl_state"].values))
        assert state["root"]["__object__"] == "fdakpl.FunctionalRegressionResults"
        assert "rcst" in f and "cca" in f


def test_loading_never_unpickles(tmp_path, dti_results, monkeypatch):
    path = dti_results.save(tmp_path / "m.nc")

    def boom(*a, **k):
        raise AssertionError("pickle used")

    monkeypatch.setattr(pickle, "loads", boom)
    monkeypatch.setattr(pickle, "load", boom)
    assert isinstance(load(path), fdakpl.FunctionalRegressionResults)


# ----------------------------------------------------------------------------- estimator round trips
def _problem(rng, missing=0.0):
    X, Y, grid = make_problem(rng, n=25, m=30, missing=missing)
    return X, Y, grid


CONFIGS = {
    "fourier-gaussian": dict(dictionary=Fourier(3), kernel=Gaussian(0.7)),
    "bspline-laplace-matrixB": dict(dictionary=BSpline(6), kernel=Laplace(1.0),
                                    output_matrix=np.diag(np.linspace(1, 2, 6)) + 0.1),
    "rff-unseeded": dict(dictionary=RandomFourier(8, length_scale=0.2, random_state=None)),
    "wavelet-decay": dict(dictionary=Wavelet("db2", level=2), output_matrix=2.0),
    "fpca": dict(dictionary=FPCA(3)),
    "learned": dict(dictionary=Learned(4, tau=0.05, max_iter=5, progress=False, random_state=0)),
    "hat-sylvester": dict(dictionary=PiecewiseLinear(), solver="sylvester", center=False),
    "logcosh-iterative": dict(dictionary=Fourier(2), loss="logcosh(2)", solver_options={"max_iter": 30}),
    "exact-partial": dict(dictionary=Fourier(2), solver="exact_partial"),
}


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_estimator_round_trip(tmp_path, rng, name):
    missing = 0.2 if name in {"exact-partial", "fpca"} else 0.0
    X, Y, grid = _problem(rng, missing)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = KPLRegressor(lam=1e-3, **CONFIGS[name]).fit(X, Y, locations=grid)
    again = load(est.save(tmp_path / "e.nc"))
    Xn = rng.uniform(-1, 1, size=(7, 3))
    np.testing.assert_array_equal(again.predict(Xn), est.predict(Xn))
    np.testing.assert_array_equal(again.predict(Xn, at=[0.05, 0.5]), est.predict(Xn, at=[0.05, 0.5]))
    _same(again, est, name)


def test_estimator_with_terms_and_labels_round_trip(tmp_path, rng):
    X, Y, grid = _problem(rng)
    labels = [f"s{i}" for i in range(25)]
    curves = xr.DataArray(np.sin(np.outer(X[:, 0], np.linspace(0, 3, 11))), dims=("sample", "t"),
                          coords={"sample": labels, "t": np.linspace(0, 1, 11)})
    Xt = {"curve": curves, "vec": xr.DataArray(X[:, 1:], dims=("sample", "f"), coords={"sample": labels})}
    Yd = xr.DataArray(Y, dims=("sample", "theta"), coords={"sample": labels, "theta": grid}, name="y")
    est = KPLRegressor(dictionary=Fourier(3), kernel=Sum({"curve": Gaussian(1.0), "vec": Laplace(2.0)})).fit(Xt, Yd)
    again = load(est.save(tmp_path / "t.nc", engine=ENGINES[-1]))
    xr.testing.assert_identical(again.predict(Xt), est.predict(Xt))
    _same(again, est, "terms")


def test_long_response_round_trip(tmp_path, rng):
    X, Y, grid = _problem(rng, missing=0.5)
    da = xr.DataArray(Y, dims=("sample", "t"), coords={"sample": np.arange(25), "t": grid}, name="y")
    df = fdakpl.data.functional.to_long(da)
    est = KPLRegressor(dictionary=Fourier(2)).fit(X, df)
    again = load(est.save(tmp_path / "l.nc"))
    xr.testing.assert_identical(again.predict(X), est.predict(X))


def test_approximate_model_round_trip(tmp_path, rng):
    from fdakpl.estimators.approx import Nystroem

    X, Y, grid = _problem(rng)
    from fdakpl.estimators.approx import ApproxKPLRegressor

    est = ApproxKPLRegressor(dictionary=Fourier(2), approx=Nystroem(10, random_state=0)).fit(X, Y, locations=grid)
    again = load(est.save(tmp_path / "a.nc"))
    np.testing.assert_array_equal(again.predict(X), est.predict(X))
    _same(again, est, "approx")


# ----------------------------------------------------------------------------- what cannot be saved
class MyKernel(Kernel):
    def _matrix(self, X, Y, w):
        return X @ Y.T


def test_user_code_is_refused_at_save(tmp_path, rng):
    X, Y, grid = _problem(rng)
    with pytest.raises(TypeError, match=r"MyKernel.*not stored"):
        KPLRegressor(dictionary=Fourier(1), kernel=MyKernel()).fit(X, Y).save(tmp_path / "k.nc")
    custom = fdakpl.losses.CustomLoss(lambda y, f: (y - f) ** 2, lambda y, f: 2 * (f - y))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = KPLRegressor(dictionary=Fourier(1), loss=custom, solver_options={"max_iter": 5}).fit(X, Y)
    with pytest.raises(TypeError, match="Python functions"):
        est.save(tmp_path / "c.nc")
    assert not list(tmp_path.iterdir())  # nothing half-written
    with pytest.raises(ValueError, match="not fitted"):
        save(KPLRegressor(), tmp_path / "u.nc")
    with pytest.raises(TypeError, match="FunctionalRegressionResults or a fitted KPLRegressor"):
        save({"a": 1}, tmp_path / "d.nc")


def test_unstorable_random_state_is_dropped_with_a_warning(tmp_path, dti):
    res = FunctionalRegression("rcst ~ cca", dti, dictionary=Fourier(3), lam=1e-3, progress=False,
                               random_state=np.random.default_rng(0)).fit()
    with pytest.warns(UserWarning, match="random_state"):
        path = res.save(tmp_path / "r.nc")
    again = load(path)
    assert again.model.random_state is None
    np.testing.assert_array_equal(again.predict().values, res.predict().values)


def test_registry_holds_only_fdakpl_classes():
    names = registered_classes()
    assert all(n.startswith("fdakpl.") for n in names)
    assert "fdakpl.FunctionalRegressionResults" in names and "fdakpl.KPLRegressor" in names


# ----------------------------------------------------------------------------- foreign and corrupted files
@pytest.fixture
def saved(tmp_path, rng):
    X, Y, grid = _problem(rng)
    return KPLRegressor(dictionary=Fourier(2)).fit(X, Y, locations=grid).save(tmp_path / "ok.nc")


def test_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="no such file"):
        load(tmp_path / "nope.nc")


@pytest.mark.parametrize("content", [b"", b"hello, not netCDF\n", bytes(range(256)) * 10])
def test_not_netcdf(tmp_path, content):
    p = tmp_path / "junk.nc"
    p.write_bytes(content)
    with pytest.raises(ValueError, match=r"junk\.nc: cannot be read as a netCDF file"):
        load(p)


def test_truncated_file(saved):
    raw = saved.read_bytes()
    saved.write_bytes(raw[: len(raw) // 2])
    with pytest.raises(ValueError, match=r"ok\.nc: "):
        load(saved)


def test_foreign_netcdf(tmp_path):
    p = tmp_path / "foreign.nc"
    xr.Dataset({"t2m": ("x", np.arange(3.0))}).to_netcdf(p, engine="scipy")
    with pytest.raises(ValueError, match=r"foreign\.nc: not an fdakpl model file.*t2m"):
        load(p)


def _rewrite(path, change):
    with xr.open_dataset(path) as f:
        ds = f.load()
    change(ds)
    ds.to_netcdf(path, engine="scipy")


def test_modified_array_fails_the_checksum(saved):
    def change(ds):
        name = "fdakpl.estimator.dual_coef_"
        ds[name] = ds[name].copy(data=ds[name].values + 1e-12)

    _rewrite(saved, change)
    with pytest.raises(ValueError, match=r"ok\.nc: checksum mismatch"):
        load(saved)


def test_missing_array_is_reported(saved):
    _rewrite(saved, lambda ds: ds.__delitem__("fdakpl.estimator.dual_coef_"))
    with pytest.raises(ValueError, match=r"ok\.nc: (checksum mismatch|.*lacks)"):
        load(saved)


def _forge(ds, mutate):
    """Change the JSON state and re-sign it, as an attacker could: the registry must still refuse."""
    state = json.loads(str(ds["fdakpl_state"].values))
    mutate(state)
    text = json.dumps(state, ensure_ascii=True, allow_nan=True)
    ds["fdakpl_state"] = xr.DataArray(np.array(text, dtype=str), attrs=ds["fdakpl_state"].attrs)
    arrays = {str(k): _restore_dtype(ds[k].values, ds[k].attrs["fdakpl_dtype"])
              for k in ds.data_vars if str(k).startswith("fdakpl.")}
    arrays.update({f"data:{k}": _restore_dtype(ds[meta.get("stored_as", k)].values, meta["dtype"])
                   for k, meta in state.get("data", {}).get("variables", {}).items()})
    ds.attrs["fdakpl_checksum"] = _checksum(text, arrays)


def test_unknown_class_is_refused_even_with_a_valid_checksum(saved):
    def mutate(state):
        state["root"]["state"]["kernel"] = {"__object__": "os.system", "state": {}}

    _rewrite(saved, lambda ds: _forge(ds, mutate))
    with pytest.raises(ValueError, match=r"ok\.nc: .*'os\.system'.*not one of fdakpl's classes"):
        load(saved)


def test_newer_format_is_refused(saved):
    _rewrite(saved, lambda ds: _forge(ds, lambda s: s.update(format_version=99)))
    with pytest.raises(ValueError, match=r"ok\.nc: written in fdakpl file format 99"):
        load(saved)


def test_invalid_json_is_reported(saved):
    def change(ds):
        ds["fdakpl_state"] = xr.DataArray(np.array("{not json", dtype=str))

    _rewrite(saved, change)
    with pytest.raises(ValueError, match=r"ok\.nc: the model description 'fdakpl_state' is not valid JSON"):
        load(saved)


def test_long_data_frame_attrs_are_kept(tmp_path, rng):
    # attrs of any JSON-able kind survive (lists of strings, nested dicts), as in the DTI 'sex' levels
    X, Y, grid = _problem(rng)
    ds = xr.Dataset({"y": (("sample", "t"), Y), "x": (("sample", "s"), np.tile(X[:, :1], (1, 4)))},
                    coords={"t": grid, "s": np.linspace(0, 1, 4), "sample": [f"id{i}" for i in range(25)]},
                    attrs={"levels": ["a", "b"], "nested": {"k": [1, 2]}, "n": 3})
    ds["y"].attrs = {"units": "mm", "flags": [1, 2, 3]}
    ds = ds.assign_coords(visit=("sample", np.datetime64("2020-01-01") + np.arange(25).astype("timedelta64[D]")),
                          case=("sample", np.arange(25) % 2 == 0))
    res = FunctionalRegression("y ~ x", ds, dictionary=Fourier(2), lam=1e-2, progress=False).fit()
    again = load(res.save(tmp_path / "a.nc"))
    xr.testing.assert_identical(again.model.data, ds[["y", "x"]])
    assert again.model.data.attrs == ds.attrs
    assert isinstance(pd.Series(again.model.data.sample.values).iloc[0], str)


def _scalar_data(seed=0, n=20):
    rng = np.random.default_rng(seed)
    t, s = np.linspace(0, 1, 15), np.linspace(0, 1, 10)
    a = rng.uniform(-1, 1, n)
    y = np.cos(np.pi * np.outer(a, t)) + 0.1 * rng.normal(size=(n, 15))
    y[rng.uniform(size=y.shape) < 0.2] = np.nan
    y[:, 0] = 1.0
    return xr.Dataset({"y": (("sample", "t"), y), "x": (("sample", "s"), np.sin(np.pi * np.outer(a, s))),
                       "z": ("sample", rng.normal(size=n))}, coords={"t": t, "s": s})


@pytest.mark.parametrize("options", [
    dict(lam="cv", cv=3, lam_grid=np.geomspace(1e-6, 1, 4), random_state=7, n_jobs=1,
         param_grid={"sigma": [0.5, 1.0], "b": [1.0, 2.0]}),
    dict(loss="logcosh(3)", lam=1e-3),
    dict(lam="loo", output_matrix=np.eye(7) * 2),
], ids=["cv", "logcosh", "loo-matrixB"])
def test_results_of_every_tuning_route_round_trip(tmp_path, options):
    ds = _scalar_data()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = FunctionalRegression("y ~ x + z", ds, dictionary=Fourier(3), progress=False, **options).fit()
    again = load(res.save(tmp_path / "r.nc"))
    assert list(again.kernels) == list(res.kernels) == ["x", "scalars"]  # term order kept (not sorted)
    np.testing.assert_array_equal(again.predict(ds).values, res.predict(ds).values)
    assert str(again.summary()) == str(res.summary())
    _same(again.cv_result, res.cv_result, "cv_result")


@pytest.mark.parametrize("formula", [
    "y ~ x + I(print('pwned') or z)",
    "y ~ x + np.lib.npyio.os.getcwd()",
    "y ~ x + z.__class__",
    "y ~ x + I(f'{z}')",
    "y ~ x + (lambda: z)()",
])
def test_a_forged_formula_is_not_evaluated(tmp_path, capsys, formula):
    # a saved formula is checked against the grammar (fdakpl.formula.grammar); nothing from the file is evaluated
    ds = _scalar_data()
    res = FunctionalRegression("y ~ x + z", ds, dictionary=Fourier(2), lam=1e-2, progress=False).fit()
    path = res.save(tmp_path / "f.nc")

    def mutate(state):
        state["root"]["state"]["model"]["state"]["formula"] = formula

    _rewrite(path, lambda f: _forge(f, mutate))
    with pytest.raises(ValueError, match=r"f\.nc: the stored formula .*refused, nothing was evaluated"):
        load(path)
    assert "pwned" not in capsys.readouterr().out


def test_usual_formula_transforms_still_load(tmp_path):
    ds = _scalar_data().assign(g=("sample", np.array(["a", "b"] * 10)))
    res = FunctionalRegression("y ~ x + np.log(z**2) + C(g, Treatment('b')) + I(z / 2)", ds, dictionary=Fourier(2),
                               lam=1e-2, progress=False).fit()
    again = load(res.save(tmp_path / "ok.nc"))
    np.testing.assert_array_equal(again.predict(ds).values, res.predict(ds).values)


# ----------------------------------------------------------------------------- issue 13: loading never runs code
def _marker_code(marker):
    return f"__import__('os').system('touch {marker}')"


@pytest.mark.parametrize("where", ["formula", "design", "eval-coordinate", "design-only"])
def test_forged_file_with_code_creates_no_marker(tmp_path, where):
    """A forged file (valid checksum recomputed) whose formula or stored design would run a command: the command
    must not run, and load refuses the file naming it."""
    ds = _scalar_data()
    res = FunctionalRegression("y ~ x + np.log(z**2)", ds, dictionary=Fourier(2), lam=1e-2, progress=False).fit()
    path = res.save(tmp_path / "forged.nc")
    marker = tmp_path / "MARKER"
    code = _marker_code(marker)

    def mutate(state):
        model = state["root"]["state"]["model"]["state"]
        sc = state["parsed"]["scalar"]
        if where in {"formula", "design", "eval-coordinate"}:
            model["formula"] = f"y ~ x + I(eval(\"{code}\"))" if where == "eval-coordinate" else f"y ~ x + {code}"
        if where in {"design", "design-only", "eval-coordinate"}:
            sc["factors"][0]["expr"] = code if where != "eval-coordinate" else f"I(eval(\"{code}\"))"
        if where == "eval-coordinate":  # the variable check alone is not enough: a name 'eval' is in the data
            state["data"]["variables"]["eval"] = dict(state["data"]["variables"]["z"], stored_as="eval")

    def change(f):
        f["eval"] = f["z"]
        _forge(f, mutate)

    _rewrite(path, change)
    with pytest.raises(ValueError, match=r"forged\.nc: .*(refused|not allowed)"):
        load(path)
    assert not marker.exists()


def test_typed_formula_outside_the_grammar_is_refused_before_anything_runs(tmp_path):
    ds = _scalar_data()
    marker = tmp_path / "MARKER"
    for formula in (f"y ~ x + I({_marker_code(marker)})", f"y ~ x + {_marker_code(marker)}",
                    "y ~ x + z.__class__", "y ~ x + np.lib.npyio.os.getcwd()", "y ~ x + I(f'{z}')"):
        with pytest.raises(ValueError, match=r"is not allowed|unknown name|cannot parse"):
            FunctionalRegression(formula, ds, progress=False)
    assert not marker.exists()


def test_saved_design_is_data_not_code(tmp_path):
    ds = _scalar_data().assign(g=("sample", np.array(["a", "b"] * 10)))
    res = FunctionalRegression("y ~ x + np.log(z**2) + C(g, Treatment('b')):z", ds, dictionary=Fourier(2),
                               lam=1e-2, progress=False).fit()
    with xr.open_dataset(res.save(tmp_path / "d.nc")) as f:
        state = json.loads(str(f["fdakpl_state"].values))
    sc = state["parsed"]["scalar"]
    assert [fa["kind"] for fa in sc["factors"]] == ["numeric", "categorical", "numeric"]
    assert sc["factors"][1]["levels"] == ["b", "a"]  # reference level first
    assert sc["columns"] == ["np.log(z ** 2)", "C(g, Treatment('b'))[b]:z", "C(g, Treatment('b'))[a]:z"]
    # the columns are the products the design says: np.log(z**2) and indicator(g == level) * z
    z, g = ds.z.values, ds.g.values
    raw = np.column_stack([np.log(z ** 2), (g == "b") * z, (g == "a") * z])
    np.testing.assert_allclose(res.model.parsed.scalar.raw(ds), raw, rtol=1e-15)


# ----------------------------------------------------------------------------- issue 13: nothing lost
NAMES = ["visit.time", "visit time", "_private", "a-b", "a/b", "fdakpl_state", "fdakpl.x", "âge", "fdakpl_var0"]


@pytest.mark.parametrize("engine", ENGINES)
def test_every_accepted_name_round_trips(tmp_path, engine):
    """Names xarray and the R bridge accept (R-style, spaces, leading _, -, /, fdakpl's own) survive save/load, as
    scalar covariates and as curves with their location dims."""
    base = _scalar_data()
    rng = np.random.default_rng(3)
    scal = {name: ("sample", rng.normal(size=20)) for name in NAMES}
    ds = base.rename({"y": "y/resp", "t": "t loc", "x": "_curve-x", "s": "fdakpl.atom"}).assign(scal)
    terms = " + ".join(f"Q({n!r})" for n in NAMES)
    formula = f"`y/resp` ~ `_curve-x` + {terms}"
    res = FunctionalRegression(formula, ds, dictionary=Fourier(2), lam=1e-2, progress=False).fit()
    again = load(res.save(tmp_path / "names.nc", engine=engine))
    xr.testing.assert_identical(again.model.data, res.model.data[["y/resp", "_curve-x", *sorted(NAMES)]])
    np.testing.assert_array_equal(again.predict(ds).values, res.predict(ds).values)
    assert again.predict(ds).dims == ("sample", "t loc")
    assert list(again.model.parsed.scalar.variables) == sorted(NAMES)


def test_save_refuses_to_overwrite_a_file_that_is_not_a_model(tmp_path, dti_results, dti):
    text = tmp_path / "notes.nc"
    text.write_text("my notes")
    data = tmp_path / "data.nc"
    dti[["pasat"]].to_netcdf(data)
    before = data.read_bytes()
    for target in (text, data):
        with pytest.raises(FileExistsError, match=r"exists and is not an fdakpl model file; pass overwrite=True"):
            dti_results.save(target)
    assert text.read_text() == "my notes" and data.read_bytes() == before
    load(dti_results.save(text, overwrite=True))  # asked: replaced
    model = dti_results.save(tmp_path / "model.nc")
    load(dti_results.save(model))  # an fdakpl model file is replaced without asking
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data.nc", "model.nc", "notes.nc"]  # no temporary left


def test_save_is_atomic_and_keeps_permissions_and_symlinks(tmp_path, dti_results, monkeypatch):
    import stat

    path = dti_results.save(tmp_path / "m.nc")
    os.chmod(path, 0o644)
    before = path.read_bytes()

    def fail(self, *a, **k):
        raise OSError("disk full")

    with monkeypatch.context() as m:
        m.setattr(xr.Dataset, "to_netcdf", fail)
        with pytest.raises(OSError, match="disk full"):
            dti_results.save(path)
    assert path.read_bytes() == before  # the old file is intact
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.nc"]  # and no temporary file is left
    dti_results.save(path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o644
    link = tmp_path / "link.nc"
    link.symlink_to(path)
    os.chmod(path, 0o640)
    dti_results.save(link)
    assert link.is_symlink() and link.resolve() == path.resolve()
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    load(link)
    fresh = dti_results.save(tmp_path / "new.nc")
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(fresh.stat().st_mode) == 0o666 & ~umask  # as open() would create it (not 0600)


def test_results_hold_no_live_reference_to_the_users_data(tmp_path):
    ds = _scalar_data()
    ds["y"] = ds["y"].fillna(0.0)
    res = FunctionalRegression("y ~ x + z", ds, dictionary=Fourier(2), lam=1e-2, progress=False).fit()
    r2, fitted = float(res.r2), res.fitted.values.copy()
    ds["y"] = ds["y"] * 0 + 1e6  # the user replaces a variable ...
    ds["z"].values[:] = 0.0  # ... and edits another in place
    assert float(res.r2) == r2
    again = load(res.save(tmp_path / "m.nc"))
    assert float(again.r2) == r2
    assert float(np.abs(again.model.data["y"]).max()) < 1e3
    f = res.fitted
    f.values[:] = 0.0  # editing what fitted hands out changes nothing inside
    np.testing.assert_array_equal(res.fitted.values, fitted)
    assert float(res.r2) == r2


def test_estimator_does_not_share_memory_with_the_users_array():
    X = np.linspace(0, 1, 12)[:, None]
    Y = np.hstack([X, X ** 2, np.sin(X)])
    m = KPLRegressor(dictionary=Fourier(1), lam=1e-3).fit(X, Y, locations=np.linspace(0, 1, 3))
    assert not np.shares_memory(m.X_fit_, X)
    before = m.predict(X).copy()
    X[:] = 5.0
    np.testing.assert_array_equal(m.predict(np.linspace(0, 1, 12)[:, None]), before)


def _big_netcdf(path, attrs, n=2 ** 26):
    """A zlib-compressed netCDF4 file with one float64 variable of n zeros (512 MiB in memory by default)."""
    netCDF4 = pytest.importorskip("netCDF4")
    with netCDF4.Dataset(path, "w") as f:
        f.createDimension("n", n)
        v = f.createVariable("big", "f8", ("n",), zlib=True, complevel=1, chunksizes=(2 ** 22,))
        chunk = np.zeros(2 ** 22)
        for i in range(0, n, 2 ** 22):
            v[i:i + 2 ** 22] = chunk
        for k, val in attrs.items():
            f.setncattr(k, val)


def _peak_rss_mib_of_load(path):
    import subprocess
    import sys

    # VmHWM (peak resident memory of this process image; ru_maxrss would include the forking parent's)
    code = ("import fdakpl\n"
            f"try:\n    fdakpl.load({str(path)!r})\nexcept ValueError as e:\n    print('ERR', e)\n"
            "print([int(l.split()[1]) // 1024 for l in open('/proc/self/status') if l.startswith('VmHWM')][0])"
            )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    return out, int(out.strip().splitlines()[-1])


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="peak memory read from /proc (Linux)")
def test_load_checks_before_it_reads(tmp_path, dti_results):
    """A small compressed netCDF that would expand to 512 MiB: refused from its attributes, never read."""
    path = tmp_path / "bomb.nc"
    _big_netcdf(path, {})
    assert path.stat().st_size < 2 ** 22  # zlib: about 1000:1
    out, peak = _peak_rss_mib_of_load(path)
    assert "not an fdakpl model file" in out
    assert peak < 400, peak  # reading the variable alone would take 512 MiB
    # a model that refers to arrays larger than max_bytes is refused before reading them
    model = dti_results.save(tmp_path / "m.nc")
    with pytest.raises(ValueError, match=r"m\.nc: the model('s arrays| description).* more than max_bytes"):
        load(model, max_bytes=1000)


def test_forged_descriptions_give_value_errors_naming_the_file(tmp_path):
    """Deep nesting (RecursionError) or wrong types (AttributeError) in a forged description: a ValueError."""
    ds = _scalar_data()
    res = FunctionalRegression("y ~ x + z", ds, dictionary=Fourier(2), lam=1e-2, progress=False).fit()
    deep = tmp_path / "deep.nc"
    res.save(deep)

    def nest(f):
        text = str(f["fdakpl_state"].values)
        f["fdakpl_state"] = xr.DataArray(np.array(text[:-1] + ', "x": ' + "[" * 200000 + "]" * 200000 + "}",
                                                  dtype=str), attrs=f["fdakpl_state"].attrs)

    _rewrite(deep, nest)
    with pytest.raises(ValueError, match=r"deep\.nc: "):
        load(deep)
    for i, mutate in enumerate([
        lambda s: s["root"]["state"]["estimator"]["state"].update(dictionary_=5),
        lambda s: s["root"]["state"].update(model=[1, 2]),
        lambda s: s["parsed"].update(scalar={"factors": "x"}),
        lambda s: s["parsed"]["scalar"]["columns_spec"].append([[7, None]]),
        lambda s: s["data"]["variables"]["z"].update(shape=[10 ** 12]),
        lambda s: s["root"]["state"]["estimator"]["state"].update(lam={"__npscalar__": "V1000000000", "value": 1}),
    ]):
        path = res.save(tmp_path / f"forged{i}.nc")
        _rewrite(path, lambda f, m=mutate: _forge(f, m))
        with pytest.raises(ValueError, match=rf"forged{i}\.nc: "):
            load(path)


# ----------------------------------------------------------------------------- files of formats 2 and 3
OLD = Path(__file__).parent / "data" / "old_formats"


@pytest.mark.parametrize("name", ["exact-v2", "exact-v3", "approx-v2", "approx-v3", "results-v2", "results-v3",
                                  "results_gcv-v3"])
def test_files_of_earlier_formats_load_and_predict_the_same(name):
    """Files written by fdakpl before the declared fields (formats 2 and 3, tests/data/old_formats/README.md)
    load and predict bit for bit what the code that wrote them predicted."""
    kind, version = name.split("-")
    with xr.open_dataset(OLD / f"{name}.nc") as f:
        assert f.attrs["fdakpl_format_version"] == int(version[1])
    obj = load(OLD / f"{name}.nc")
    arrays = np.load(OLD / "arrays.npz")
    ref = np.load(OLD / f"{kind}-pred.npz")["pred"]
    if kind in {"exact", "approx"}:
        assert type(obj).__name__ == ("KPLRegressor" if kind == "exact" else "ApproxKPLRegressor")
        np.testing.assert_array_equal(obj.predict(arrays["X"]), ref)
        if kind == "exact":  # format 2's coef_ of an exact fit is today's dual_coef_
            assert obj.dual_coef_.shape == (25, 5) and not hasattr(obj, "coef_")
    else:
        np.testing.assert_array_equal(obj.predict().values, ref)
        assert obj.lam_how == ("GCV" if kind == "results_gcv" else "leave-one-curve-out")
        assert ("lambda by GCV" if kind == "results_gcv" else "lambda by LOO") in str(obj.summary())  # Tuning row
        if kind == "results_gcv":  # its stored lambda path is today's criteria
            assert obj.criteria.gcv.shape == (21,) and obj.criteria.best("gcv")[1] == obj.lam


# ----------------------------------------------------------------------------- files written before the 0.x renames
def _with_old_names(obj, renames):
    """The JSON state as fdakpl wrote it before the renames: every stored object's new parameter names replaced
    by the old ones (``renames``: class -> {old: new}, the loader's own table)."""
    if isinstance(obj, list):
        return [_with_old_names(v, renames) for v in obj]
    if not isinstance(obj, dict):
        return obj
    out = {k: _with_old_names(v, renames) for k, v in obj.items()}
    if "__object__" in obj and isinstance(out.get("state"), dict):
        back = {new: old for old, new in renames.get(obj["__object__"], {}).items()}
        out["state"] = {back.get(k, k): v for k, v in out["state"].items()}
    return out


@pytest.mark.parametrize(("dictionary", "old"), [(BSpline(6), "n_basis"), (FPCA(3), "n_components"),
                                                 (RandomFourier(5, length_scale=0.3), "n_features")])
def test_estimator_saved_with_the_old_size_names_still_loads(tmp_path, rng, dictionary, old):
    from fdakpl.io.netcdf_format import RENAMED

    X, Y, grid = _problem(rng)
    model = KPLRegressor(dictionary=dictionary, kernel=Gaussian(0.7), lam=1e-3).fit(X, Y, locations=grid)
    path = model.save(tmp_path / "old.nc")
    _rewrite(path, lambda ds: _forge(ds, lambda s: s.update(root=_with_old_names(s["root"], RENAMED))))
    with xr.open_dataset(path) as f:  # the file now names the parameter as fdakpl did before
        assert f'"{old}"' in str(f["fdakpl_state"].values) and '"n_atoms"' not in str(f["fdakpl_state"].values)
    again = load(path)
    assert again.dictionary.n_atoms == dictionary.n_atoms and not hasattr(again.dictionary, old)
    assert again.dictionary_.n_atoms == dictionary.n_atoms and not hasattr(again.dictionary_, old)
    np.testing.assert_array_equal(again.predict(X), model.predict(X))


def test_results_saved_with_levels_still_load(tmp_path, dti, dti_results):
    from fdakpl.io.netcdf_format import RENAMED

    path = dti_results.save(tmp_path / "old.nc")

    def old_names(state):
        root = _with_old_names(state["root"], RENAMED)
        assert "levels" in root["state"]["model"]["state"]  # the model's wavelet level, under its old name
        state["root"] = root

    _rewrite(path, lambda ds: _forge(ds, old_names))
    again = load(path)
    assert again.model.level == 4 and not hasattr(again.model, "levels")
    np.testing.assert_array_equal(again.predict(dti).values, dti_results.predict(dti).values)


def test_renamed_state_maps_the_cv_grid_key():
    from fdakpl.io.netcdf_format import renamed_state

    out = renamed_state("fdakpl.FunctionalRegression", {"levels": 4, "param_grid": {"levels": [3, 4], "b": [1.0]}})
    assert out == {"level": 4, "param_grid": {"level": [3, 4], "b": [1.0]}}
    assert renamed_state("fdakpl.Wavelet", {"level": 4}) == {"level": 4}


def test_top_level_save_mirrors_load(tmp_path, rng, dti_results, dti):
    X, Y, grid = _problem(rng)
    model = KPLRegressor(dictionary=BSpline(6), lam=1e-3).fit(X, Y, locations=grid)
    path = fdakpl.save(model, tmp_path / "m.nc")
    assert path == tmp_path / "m.nc"
    _same(fdakpl.load(path), model)  # the fields a file stores (not the training problem or its path)
    res_path = fdakpl.save(dti_results, tmp_path / "r.nc", engine="scipy")
    np.testing.assert_array_equal(fdakpl.load(res_path).predict(dti).values, dti_results.predict(dti).values)
    (tmp_path / "x.txt").write_text("keep")
    with pytest.raises(FileExistsError):
        fdakpl.save(model, tmp_path / "x.txt")
    assert fdakpl.load(fdakpl.save(model, tmp_path / "x.txt", overwrite=True)).lam == model.lam  # options reach save
    with pytest.raises(TypeError, match=r"fdakpl\.save stores a fitted model.*ndarray"):
        fdakpl.save(np.zeros(3), tmp_path / "a.nc")
