"""A catalogue of bad inputs: each raises a clear error and leaves the user's objects untouched.

Every case of ``CATALOGUE`` is listed in ``docs/bad_inputs.md`` (checked by
``test_docs_table_lists_every_case``).
"""

import copy
import re
import tracemalloc
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
import xarray as xr

from fdakpl import Fourier, FunctionalRegression, Gaussian, KPLRegressor, Product
from fdakpl.data import functional
from fdakpl.estimators.kpl import check_exact_memory

from .conftest import make_problem

DOCS = Path(__file__).resolve().parents[1] / "docs" / "bad_inputs.md"
N, M, P = 12, 20, 15


def make_data(seed: int = 0) -> xr.Dataset:
    """A small, clean dataset: response curve y, input curve x, scalar z, category g."""
    rng = np.random.default_rng(seed)
    t, s = np.linspace(0, 1, M), np.linspace(0, 1, P)
    a = rng.uniform(-1, 1, N)
    x = np.sin(np.pi * np.outer(a, s)) + 0.1 * rng.normal(size=(N, P))
    y = np.cos(np.pi * np.outer(a, t)) + 0.05 * rng.normal(size=(N, M))
    return xr.Dataset(
        {"y": (("sample", "t"), y), "x": (("sample", "s"), x), "z": ("sample", rng.normal(size=N)),
         "g": ("sample", np.array(["a", "b", "c"])[np.arange(N) % 3])},
        coords={"sample": [f"id{i}" for i in range(N)], "t": t, "s": s},
        attrs={"acknowledgment": "synthetic"},
    )


def fit(data: Any, formula: str = "y ~ x", **kw: Any):
    kw.setdefault("dictionary", Fourier(2))
    kw.setdefault("lam", 1e-2)
    kw.setdefault("progress", False)
    if "kernel" not in kw and "kernels" not in kw:
        kw["kernel"] = Gaussian(1.0)
    return FunctionalRegression(formula, data, **kw).fit()


def arrays(seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(N, 2))
    grid = np.linspace(0, 1, M)
    return X, np.sin(np.outer(X[:, 0], grid)), grid


def _edit(ds: xr.Dataset, var: str, index: Any, value: Any) -> xr.Dataset:
    out = ds.copy(deep=True)
    vals = out[var].values.copy()
    vals[index] = value
    out[var] = out[var].copy(data=vals)
    return out


@dataclass
class Case:
    id: str
    input: str  # what the user passes (for the docs table)
    error: type
    match: str  # regex the message must match
    run: Callable[[], tuple[Callable[[], Any], list[Any]]]  # -> (action, user objects that must stay unchanged)


def _c(id, input, error, match):
    def deco(f):
        CATALOGUE.append(Case(id, input, error, match, f))
        return f

    return deco


CATALOGUE: list[Case] = []


# -- samples and labels
@_c("n-mismatch", "X and Y with different numbers of samples (arrays)", ValueError,
    r"X has 5 samples but Y has 12")
def _():
    X, Y, grid = arrays()
    return (lambda: KPLRegressor().fit(X[:5], Y, locations=grid)), [X, Y]


@_c("label-mismatch", "X and Y DataArrays whose sample labels differ (or are in another order)", ValueError,
    r"different sample labels.*xr\.align")
def _():
    ds = make_data()
    X = ds.x
    Y = ds.y.assign_coords(sample=ds.sample.values[::-1])
    return (lambda: KPLRegressor(dictionary=Fourier(2)).fit(X, Y)), [X, Y]


@_c("mapping-label-mismatch", "data as a mapping of DataArrays with different sample labels", ValueError,
    r"'x' and 'y' have different sample labels.*join='inner'")
def _():
    ds = make_data()
    data = {"y": ds.y, "x": ds.x.assign_coords(sample=[f"other{i}" for i in range(N)])}
    return (lambda: fit(data)), [data["y"], data["x"]]


@_c("duplicated-labels", "duplicated sample labels", ValueError, r"duplicated sample labels \['id0'\]")
def _():
    ds = make_data().assign_coords(sample=["id0"] * N)
    return (lambda: fit(ds)), [ds]


@_c("duplicated-labels-inputs", "duplicated sample labels on an input DataArray (KPLRegressor)", ValueError,
    r"duplicated sample labels \[0\]")
def _():
    X, Y, grid = arrays()
    Xd = xr.DataArray(X, dims=("sample", "f"), coords={"sample": [0] * N})
    return (lambda: KPLRegressor().fit(Xd, Y, locations=grid)), [Xd, Y]


@_c("empty", "an empty dataset (no samples)", ValueError, r"Y has no samples")
def _():
    ds = make_data().isel(sample=slice(0, 0))
    return (lambda: fit(ds)), [ds]


@_c("empty-arrays", "empty arrays (KPLRegressor)", ValueError, r"Y has no samples")
def _():
    X, Y, grid = arrays()
    return (lambda: KPLRegressor().fit(X[:0], Y[:0], locations=grid)), [X, Y]


@_c("single-sample", "a single sample", ValueError, r"at least 2 samples, got n_samples = 1")
def _():
    ds = make_data().isel(sample=slice(0, 1))
    return (lambda: fit(ds)), [ds]


# -- location coordinates and domains
@_c("string-locations", "a non-numeric location coordinate", ValueError,
    r"location coordinate 't' has dtype <U\d+; it must be numeric")
def _():
    ds = make_data().assign_coords(t=[f"p{i}" for i in range(M)])
    return (lambda: fit(ds)), [ds]


@_c("decreasing-locations", "a non-increasing location coordinate (response)", ValueError,
    r"'y'.*'t' is not strictly increasing; sort it with da\.sortby\('t'\)")
def _():
    ds = make_data().assign_coords(t=np.linspace(1, 0, M))
    return (lambda: fit(ds)), [ds]


@_c("duplicated-locations", "a repeated location in an input's coordinate", ValueError,
    r"'x'.*'s' is not strictly increasing.*drop duplicated locations")
def _():
    s = np.linspace(0, 1, P)
    s[4] = s[3]
    ds = make_data().assign_coords(s=s)
    return (lambda: fit(ds)), [ds]


@_c("nan-location", "NaN in a location coordinate", ValueError, r"location coordinate 't' has non-finite values")
def _():
    t = np.linspace(0, 1, M)
    t[2] = np.nan
    ds = make_data().assign_coords(t=t)
    return (lambda: fit(ds)), [ds]


@_c("outside-domain", "response locations outside the dictionary's domain", ValueError,
    r"response locations span \[0, 1\] but the dictionary's domain is \[0, 0\.5\]; pass domain=")
def _():
    ds = make_data()
    return (lambda: fit(ds, dictionary=Fourier(2, domain=(0, 0.5)))), [ds]


@_c("predict-outside-domain", "prediction locations at= outside the domain", ValueError,
    r"locations span \[2, 2\] but the dictionary's domain is \[0, 1\]")
def _():
    ds = make_data()
    res = fit(ds)
    return (lambda: res.predict(ds, at=[2.0])), [ds]


@_c("shared-dim-coords", "two variables sharing a location dim with different coordinates (mapping)", ValueError,
    r"'x' and 'y' share the location dim 't' with different coordinates.*rename")
def _():
    ds = make_data()
    y = ds.y
    x = xr.DataArray(ds.x.values[:, :10], dims=("sample", "t"),
                     coords={"sample": ds.sample, "t": np.linspace(0, 2, 10)})
    data = {"y": y, "x": x}
    return (lambda: fit(data)), [y, x]


# -- missing and non-finite values
@_c("nan-input", "NaN in an input curve", ValueError,
    r"'x' has NaN for samples \['id3'\].*interpolate_inputs=True")
def _():
    ds = _edit(make_data(), "x", (3, 5), np.nan)
    return (lambda: fit(ds)), [ds]


@_c("inf-input", "Inf in an input curve", ValueError, r"'x' has infinite values")
def _():
    ds = _edit(make_data(), "x", (3, 5), np.inf)
    return (lambda: fit(ds)), [ds]


@_c("inf-response", "Inf in the response", ValueError, r"response has infinite values; replace them by NaN")
def _():
    ds = _edit(make_data(), "y", (3, 5), -np.inf)
    return (lambda: fit(ds)), [ds]


@_c("nan-array-input", "NaN in an input array (KPLRegressor)", ValueError, r"'X' has NaN or infinite values")
def _():
    X, Y, grid = arrays()
    X = X.copy()
    X[0, 0] = np.nan
    return (lambda: KPLRegressor().fit(X, Y, locations=grid)), [X, Y]


@_c("unobserved-curve", "a response curve with no observed point", ValueError,
    r"no observed point for samples \['id2'\]; drop them, e.g. ds\.dropna")
def _():
    ds = _edit(make_data(), "y", 2, np.nan)
    return (lambda: fit(ds)), [ds]


@_c("all-nan-response", "an all-NaN response", ValueError, r"no observed point for samples \['id0', .*\(and more\)")
def _():
    ds = _edit(make_data(), "y", slice(None), np.nan)
    return (lambda: fit(ds)), [ds]


@_c("nan-scalar", "NA in a scalar covariate", ValueError, r"scalar covariates \['z'\] have missing values")
def _():
    ds = _edit(make_data(), "z", 0, np.nan)
    return (lambda: fit(ds, "y ~ x + z")), [ds]


@_c("inf-scalar", "Inf in a scalar covariate", ValueError, r"scalar covariates \['z'\] have infinite values")
def _():
    ds = _edit(make_data(), "z", 0, np.inf)
    return (lambda: fit(ds, "y ~ x + z")), [ds]


@_c("long-nan", "a long DataFrame with NaN", ValueError, r"long data has non-finite 'location' or 'value'")
def _():
    X, _, _ = arrays()
    df = pd.DataFrame({"sample": [0, 0, 1], "location": [0.1, np.nan, 0.2], "value": [1.0, 2.0, 3.0]})
    return (lambda: KPLRegressor().fit(X[:2], df)), [X, df]


# -- dtypes
@_c("object-response", "an object-dtype response", TypeError, r"'y' has dtype object; .*astype\(float\)")
def _():
    ds = make_data()
    ds = ds.assign(y=ds.y.astype(object))
    return (lambda: fit(ds)), [ds]


@_c("string-input-curve", "a string-dtype input curve", TypeError, r"'x' has dtype <U\d+; functional values")
def _():
    ds = make_data()
    ds = ds.assign(x=ds.x.astype(str))
    return (lambda: fit(ds)), [ds]


@_c("string-array", "numbers as text in an input array (KPLRegressor)", TypeError,
    r"'X' holds text \(dtype <U\d+\).*astype\(float\)")
def _():
    X, Y, grid = arrays()
    Xs = X.astype(str)
    return (lambda: KPLRegressor().fit(Xs, Y, locations=grid)), [Xs, Y]


@_c("not-a-dataset", "data that is not a Dataset or mapping", TypeError, r"data must be an xarray\.Dataset")
def _():
    data = [[1.0, 2.0]]
    return (lambda: fit(data)), [data]


# -- regularisation, output matrix, loss, kernels
@_c("lam-zero", "lam = 0", ValueError, r"lam must be a number > 0, got 0\.0")
def _():
    ds = make_data()
    return (lambda: fit(ds, lam=0.0)), [ds]


@_c("lam-negative", "lam < 0 (KPLRegressor)", ValueError, r"lam must be a finite number > 0, got -1\.0")
def _():
    X, Y, grid = arrays()
    return (lambda: KPLRegressor(lam=-1.0).fit(X, Y, locations=grid)), [X, Y]


@_c("lam-grid-zero", "a lambda grid containing 0", ValueError, r"lam must hold finite numbers > 0, got 0\.0; e\.g")
def _():
    ds = make_data()
    grid = np.array([0.0, 1e-3])
    return (lambda: fit(ds, lam=grid)), [ds, grid]


@_c("lam-bool", "lam = True", TypeError, r"lam must be a number > 0, got True")
def _():
    X, Y, grid = arrays()
    return (lambda: KPLRegressor(lam=True).fit(X, Y, locations=grid)), [X, Y]


@_c("lam-unknown", "an unknown lam rule", ValueError, r"lam must be 'loo', 'gcv', 'cv', a number > 0 or a grid")
def _():
    ds = make_data()
    return (lambda: fit(ds, lam="aic")), [ds]


@_c("b-not-spd", "a non-SPD output matrix B", ValueError, r"B is not positive definite \(smallest eigenvalue -1\)")
def _():
    ds = make_data()
    B = -np.eye(5)
    return (lambda: fit(ds, output_matrix=B)), [ds, B]


@_c("b-not-symmetric", "a non-symmetric B", ValueError, r"B is not symmetric")
def _():
    ds = make_data()
    B = np.eye(5)
    B[0, 1] = 0.5
    return (lambda: fit(ds, output_matrix=B)), [ds, B]


@_c("b-wrong-shape", "B whose size is not the number of atoms", ValueError,
    r"B has shape \(3, 3\) but the dictionary has 5 atoms")
def _():
    ds = make_data()
    B = np.eye(3)
    return (lambda: fit(ds, output_matrix=B)), [ds, B]


@_c("gamma-zero", "logcosh with gamma <= 0", ValueError, r"LogCosh: gamma must be a finite number > 0, got 0")
def _():
    ds = make_data()
    return (lambda: fit(ds, loss="logcosh(0)")), [ds]


@_c("kernel-type", "a kernel that is not a fdakpl Kernel", TypeError, r"kernel must be a fdakpl\.kernels\.Kernel")
def _():
    X, Y, grid = arrays()
    return (lambda: KPLRegressor(kernel="rbf").fit(X, Y, locations=grid)), [X, Y]


@_c("kernel-terms", "per-term kernels for a name that is not a term", ValueError,
    r"kernels given for \['w'\], which are not terms")
def _():
    ds = make_data()
    return (lambda: fit(ds, kernels={"x": Gaussian(1.0), "w": Gaussian(1.0)})), [ds]


@_c("sylvester-singular", "solver='sylvester' with a redundant (singular-Gram) dictionary", ValueError,
    r"Gram matrix is singular or ill-conditioned.*use solver='eig'")
def _():
    X, Y, grid = arrays()
    return (lambda: KPLRegressor(solver="sylvester", dictionary="db3").fit(X, Y, locations=grid)), [X, Y]


@_c("too-large", "more curves than the exact solver fits in memory", ValueError,
    r"n_samples = 12 curves need about .* GB for the exact KPL solver.*"
    r"ApproxKPLRegressor\(approx=fdakpl\.Nystroem\(500\)\).*instead of KPLRegressor")
def _():
    X, Y, grid = arrays()
    return (lambda: KPLRegressor(memory_limit=1000).fit(X, Y, locations=grid)), [X, Y]


# -- formulas
@_c("unknown-name", "an unknown name in the formula", ValueError, r"unknown names \['w'\] in 'w'; available")
def _():
    ds = make_data()
    return (lambda: fit(ds, "y ~ x + w")), [ds]


@_c("unknown-response", "an unknown response", ValueError, r"the response 'w' is not in data")
def _():
    ds = make_data()
    return (lambda: fit(ds, "w ~ x")), [ds]


@_c("scalar-response", "a scalar response", ValueError, r"the response 'z' is a scalar")
def _():
    ds = make_data()
    return (lambda: fit(ds, "z ~ x")), [ds]


@_c("transformed-curve", "a transformed functional term (np.log(x))", ValueError,
    r"unsupported term 'np\.log\(x\)': functional variables")
def _():
    ds = make_data()
    return (lambda: fit(ds, "y ~ np.log(x)")), [ds]


@_c("curve-interaction", "an interaction with a curve (x:g)", ValueError, r"unsupported term 'x:g'")
def _():
    ds = make_data()
    return (lambda: fit(ds, "y ~ x:g")), [ds]


@_c("term-code", "a formula term outside the grammar (code)", ValueError,
    r"the formula term \"I\(__import__\('os'\)\)\" is not allowed: the function '__import__' is not one")
def _():
    ds = make_data()
    return (lambda: fit(ds, "y ~ x + I(__import__('os'))")), [ds]


@_c("unknown-function", "a function outside the whitelist (center(z))", ValueError,
    r"the function 'center' is not one of the allowed transforms")
def _():
    ds = make_data()
    return (lambda: fit(ds, "y ~ x + center(z)")), [ds]


@_c("string-constant", "a text constant in a term (I('a'))", ValueError, r"the constant 'a' is not a number")
def _():
    ds = make_data()
    return (lambda: fit(ds, "y ~ x + I('a')")), [ds]


@_c("log-negative", "np.log of negative values", ValueError,
    r"the formula term 'np\.log\(z\)' is NaN or infinite for \d+ samples")
def _():
    ds = make_data()
    return (lambda: fit(ds, "y ~ x + np.log(z)")), [ds]


@_c("complex-scalar", "a complex scalar covariate", ValueError, r"the scalar covariate 'z' is complex")
def _():
    ds = make_data()
    ds = ds.assign(z=ds.z * (1 + 1j))
    return (lambda: fit(ds, "y ~ x + z")), [ds]


@_c("nullable-boolean-na", "a pandas nullable boolean covariate with pd.NA", ValueError,
    r"scalar covariates \['flag'\] have missing values \(NA\) for some samples; drop them")
def _():
    ds = make_data()
    flag = pd.array(ds.z.values > 0, dtype="boolean")
    flag[2] = pd.NA
    ds = ds.assign(flag=("sample", flag))
    return (lambda: fit(ds, "y ~ x + flag")), [ds]


@_c("timezone-dates", "timezone-aware dates as a covariate", ValueError,
    r"the scalar covariate 'when' holds timezone-aware dates; convert them to numbers first")
def _():
    when = pd.DataFrame({"when": pd.date_range("2020-01-01", periods=N, freq="D", tz="UTC")},
                        index=pd.Index([f"id{i}" for i in range(N)], name="sample"))
    ds = make_data().merge(xr.Dataset.from_dataframe(when))
    return (lambda: fit(ds, "y ~ x + when")), [ds]


@_c("curve-named-scalars", "a curve named like the numeric covariates' kernel ('scalars')", ValueError,
    r"the curve variable 'scalars' has the name of the kernel of the numeric scalar covariates")
def _():
    ds = make_data().rename(x="scalars")
    return (lambda: fit(ds, "y ~ scalars + z")), [ds]


@_c("contrast", "a contrast other than Treatment (C(g, Sum))", ValueError,
    r"factors are not coded by contrasts: the kernel of a factor treats every level alike")
def _():
    ds = make_data()
    return (lambda: fit(ds, "y ~ x + C(g, Sum)")), [ds]


@_c("long-unlabelled-x", "long-form Y with text sample labels and a plain array X (KPLRegressor)", ValueError,
    r"X has no sample labels \(a plain array\) but Y is long-form data")
def _():
    X, Y, grid = arrays()
    df = pd.DataFrame({"sample": np.repeat([f"c{i}" for i in range(N)], M), "location": np.tile(grid, N),
                       "value": Y.ravel()}).sort_values("location")
    return (lambda: KPLRegressor().fit(X, df)), [X, df]


@_c("long-other-labels", "long-form Y whose sample labels are not X's (KPLRegressor)", ValueError,
    r"X has samples \['x0'\] that the long-form Y lacks \(Y has \['c0'\] instead\)")
def _():
    X, Y, grid = arrays()
    Xdf = pd.DataFrame(X, index=["x0"] + [f"c{i}" for i in range(1, N)])
    df = pd.DataFrame({"sample": np.repeat([f"c{i}" for i in range(N)], M), "location": np.tile(grid, N),
                       "value": Y.ravel()})
    return (lambda: KPLRegressor().fit(Xdf, df)), [Xdf, df]


@_c("no-tilde", "a formula without ~", ValueError, r"formula must look like 'response ~ term \+ term'")
def _():
    ds = make_data()
    return (lambda: fit(ds, "y x")), [ds]


@_c("response-as-input", "the response on both sides", ValueError, r"'y' is both the response and an input")
def _():
    ds = make_data()
    return (lambda: fit(ds, "y ~ y")), [ds]


# -- prediction
@_c("predict-other-grid", "predicting on inputs sampled on another grid", ValueError,
    r"'x' is sampled on a different grid than at fit time \(30 vs 15 points\); interpolate it first, "
    r"e\.g\. new\.interp\(s=fitted_grid\)")
def _():
    ds = make_data()
    res = fit(ds)
    new = ds.interp(s=np.linspace(0, 1, 30))
    return (lambda: res.predict(new)), [ds, new]


@_c("unseen-level", "an unseen categorical level at predict", ValueError,
    r"'g' has levels \['d'\] that were not seen when fitting \(seen: \['a', 'b', 'c'\]\)")
def _():
    ds = make_data()
    res = fit(ds, "y ~ x + C(g)")
    new = ds.assign(g=ds.g.copy(data=np.array(["d"] * N)))
    return (lambda: res.predict(new)), [ds, new]


@_c("predict-missing-term", "new data without a functional input", ValueError,
    r"new data lacks the functional input 'x'")
def _():
    ds = make_data()
    res = fit(ds)
    new = ds.drop_vars("x")
    return (lambda: res.predict(new)), [ds, new]


@_c("predict-features", "new array inputs with another number of features", ValueError,
    r"X has 1 features, but KPLRegressor is expecting 2")
def _():
    X, Y, grid = arrays()
    m = KPLRegressor().fit(X, Y, locations=grid)
    Xn = X[:, :1]
    return (lambda: m.predict(Xn)), [X, Y, Xn]


# -- issue 13: options that would be ignored, messages that named the wrong cause, files
@_c("param-grid-without-cv", "param_grid with lam='gcv' (it would be ignored)", ValueError,
    r"param_grid is searched only with lam='cv' \(got lam='gcv'\)")
def _():
    ds = make_data()
    return (lambda: fit(ds, lam="gcv", param_grid={"b": [1.0, 2.0]})), [ds]


@_c("r-grids-typo", "R bridge: grids= naming no matrix column (a typo)", ValueError,
    r"grids= names \['yy'\], which are not matrix columns; the matrix columns are \['y'\]")
def _():
    from fdakpl.r.bridge import dataset_from_columns

    cols = {"y": np.ones((3, 4)), "g": np.array([1.0, 2.0, 1.0])}
    return (lambda: dataset_from_columns(cols, grids={"yy": [0, 1, 2, 3]})), [cols["y"], cols["g"]]


@_c("r-levels-typo", "R bridge: factor_levels= naming no vector column", ValueError,
    r"factor_levels= names \['gg'\], which are not vector columns")
def _():
    from fdakpl.r.bridge import dataset_from_columns

    cols = {"y": np.ones((3, 4)), "g": np.array([1.0, 2.0, 1.0])}
    return (lambda: dataset_from_columns(cols, factor_levels={"gg": ["a", "b"]})), [cols["y"], cols["g"]]


@_c("r-one-column", "R bridge: a one-column matrix as a curve", ValueError,
    r"column 'y' is a matrix with 1 column; a curve needs at least 2 locations")
def _():
    from fdakpl.r.bridge import dataset_from_columns

    y = np.ones((3, 1))
    return (lambda: dataset_from_columns({"y": y})), [y]


@_c("nan-locations", "NaN in locations=", ValueError, r"locations has NaN or infinite values at positions \[3\]")
def _():
    X, Y, grid = arrays()
    grid[3] = np.nan
    return (lambda: KPLRegressor(dictionary=Fourier(2)).fit(X, Y, locations=grid)), [X, Y, grid]


@_c("inf-at", "Inf in at= (prediction locations)", ValueError, r"at has NaN or infinite values at positions \[1\]")
def _():
    ds = make_data()
    res = fit(ds)
    return (lambda: res.predict(ds, at=[0.1, np.inf])), [ds]


@_c("at-2d", "a 2-d at=", ValueError, r"at has shape \(2, 2\); locations are a 1-d list of numbers")
def _():
    ds = make_data()
    res = fit(ds)
    at = np.zeros((2, 2))
    return (lambda: res.predict(ds, at=at)), [ds, at]


@_c("long-nan-location", "NaN in the location column of long data (from_long)", ValueError,
    r"the long data's 'location' column has NaN or infinite values at positions \[1\]")
def _():
    df = pd.DataFrame({"sample": [0, 0, 1, 1], "location": [0.0, np.nan, 0.0, 1.0], "value": [1.0, 2, 3, 4]})
    return (lambda: functional.from_long(df)), [df]


@_c("int64-locations-collide", "distinct int64 locations equal as float64 (beyond 2**53)", ValueError,
    r"location coordinate 't' has distinct integers that are equal as floats")
def _():
    ds = make_data()
    ds = ds.assign_coords(t=np.arange(2 ** 53, 2 ** 53 + M, dtype=np.int64))
    return (lambda: fit(ds)), [ds]


@_c("empty-lam-grid", "lam_grid=[]", ValueError, r"lam_grid must be a non-empty 1-d list of numbers > 0")
def _():
    ds = make_data()
    return (lambda: fit(ds, lam="gcv", lam_grid=[])), [ds]


@_c("lam-2d", "a 2-d lambda grid", ValueError, r"lam must be a non-empty 1-d list .* got shape \(2, 2\)")
def _():
    ds = make_data()
    lam = np.full((2, 2), 1e-2)
    return (lambda: fit(ds, lam=lam)), [ds, lam]


@_c("domain-number", "domain=1", ValueError, r"domain must be None or two finite numbers \(lo, hi\) with lo < hi")
def _():
    ds = make_data()
    return (lambda: fit(ds, domain=1)), [ds]


@_c("negative-permutations", "n_permutations=-1", ValueError, r"n_permutations must be a whole number >= 1")
def _():
    ds = make_data()
    res = fit(ds)
    return (lambda: res.permutation_test("x", n_permutations=-1, progress=False)), [ds]


@_c("dict-plain-arrays", "data as a dict of plain arrays", TypeError,
    r"data\['y'\] is a plain array, so its dims are unknown; give each variable its dims")
def _():
    data = {"y": np.ones((N, 4)), "x": np.ones((N, 3))}
    return (lambda: fit(data)), [data["y"], data["x"]]


@_c("plot-unknown-sample", "res.plot(samples=[...]) with an unknown label", ValueError,
    r"samples \['unknown'\] are not sample labels of the data; its labels are \['id0'")
def _():
    ds = make_data()
    res = fit(ds)
    return (lambda: res.plot(samples=["unknown"])), [ds]


@_c("reordered-columns", "KPLRegressor fitted on a DataFrame, predict with reordered columns", ValueError,
    r"X has the columns \['b', 'a'\], but the model was fitted on \['a', 'b'\]")
def _():
    X, Y, grid = arrays()
    df = pd.DataFrame(X, columns=["a", "b"])
    m = KPLRegressor(dictionary=Fourier(2), lam=1e-2).fit(df, Y, locations=grid)
    new = df[["b", "a"]]
    return (lambda: m.predict(new)), [df, new]


@_c("save-over-foreign-file", "save() onto an existing file that is not an fdakpl model", FileExistsError,
    r"notes\.nc exists and is not an fdakpl model file; pass overwrite=True to replace it")
def _():
    import tempfile

    ds = make_data()
    res = fit(ds)
    path = Path(tempfile.mkdtemp()) / "notes.nc"
    path.write_text("my notes")
    return (lambda: res.save(path)), [ds]


@_c("duration-locations", "durations (timedelta64) as the location coordinate", ValueError,
    r"location coordinate 't' holds durations; locations must be numbers in the unit you mean")
def _():
    ds = make_data().assign_coords(t=pd.to_timedelta(np.arange(M), unit="h"))
    return (lambda: fit(ds)), [ds]


@_c("bands-too-few-curves", "prediction_bands with too few calibration curves (12 curves, alpha=0.1)", ValueError,
    r"a conformal band at alpha=0\.1 needs at least 9 calibration curves")
def _():
    ds = make_data()
    res = fit(ds)
    return (lambda: res.prediction_bands(ds.isel(sample=[0]), alpha=0.1)), [ds]


@_c("groups-one-group", "groups= naming a variable with a single label", ValueError,
    r"groups='one' puts every curve in one group")
def _():
    ds = make_data().assign(one=("sample", np.array(["a"] * N, dtype=object)))
    return (lambda: fit(ds, groups="one", lam="loo")), [ds]


@_c("groups-missing-label", "a missing label (None, NaN, pd.NA) in a text group column", ValueError,
    r"groups='g' has no label for samples \['id4'\]")
def _():
    ds = make_data()
    g = ds["g"].values.astype(object)
    g[4] = None
    ds = ds.assign(g=("sample", g))
    return (lambda: fit(ds, groups="g", lam="loo")), [ds]


@_c("groups-with-gcv", "groups= with lam='gcv' (pointwise: it cannot leave groups out)", ValueError,
    r"groups='g' would be ignored by lam='gcv'")
def _():
    ds = make_data()
    return (lambda: fit(ds, groups="g", lam="gcv")), [ds]


# -- subject effects re(ID) (issue 29)
@_c("re-interaction", "a subject effect re() interacted with other factors, e.g. re(g):C(g)", ValueError,
    r"interacts a subject effect re\(\) with other factors.*write re\(ID\) as a term of its own")
def _():
    ds = make_data()
    return (lambda: fit(ds, "y ~ x + re(g):C(g)")), [ds]


@_c("re-two-variables", "re() with more than the subject labels, e.g. re(g, 2)", ValueError,
    r"re\(\) takes one variable, the subject labels: re\(ID\)")
def _():
    ds = make_data()
    return (lambda: fit(ds, "y ~ x + re(g, 2)")), [ds]


@_c("re-missing-label", "a missing subject label (None) in the variable of re()", ValueError,
    r"the subject labels \['g'\] are missing \(NA\) for some samples.*dropna")
def _():
    ds = make_data()
    ds = ds.assign(g=("sample", np.array([None, *ds["g"].values[1:]], dtype=object)))
    return (lambda: fit(ds, "y ~ x + re(g)")), [ds]


@_c("new-subjects-without-re", "new_subjects=True with no subject term re(ID) in the formula", ValueError,
    r"new_subjects=True leaves out the curves of one subject at a time.*the formula has no subject term re\(ID\)")
def _():
    ds = make_data()
    return (lambda: fit(ds, new_subjects=True, lam="loo")), [ds]


@_c("new-subjects-with-groups", "new_subjects=True together with groups=", ValueError,
    r"new_subjects=True leaves out.*groups= is given too: give one re\(ID\) term and no groups=")
def _():
    ds = make_data()
    return (lambda: fit(ds, "y ~ x + re(g)", new_subjects=True, groups="g", lam="loo")), [ds]


@_c("re-negative-weight", "a negative weight for the subject kernel RandomEffect", ValueError,
    r"RandomEffect kernel: weight must be >= 0, got -1.0")
def _():
    from fdakpl.factor_kernels import RandomEffect

    return (lambda: RandomEffect(-1.0)), []


def _snapshot(objs):
    return [copy.deepcopy(o) for o in objs]


def _assert_unchanged(before, after):
    for b, a in zip(before, after, strict=True):
        if isinstance(b, xr.Dataset):  # pandas extension arrays (NA != NA for xarray): compared by pandas
            ext = [k for k, v in b.variables.items() if isinstance(v.dtype, pd.api.extensions.ExtensionDtype)]
            for k in ext:
                pd.testing.assert_extension_array_equal(a.variables[k].data, b.variables[k].data)
            xr.testing.assert_identical(a.drop_vars(ext), b.drop_vars(ext))
        elif isinstance(b, xr.DataArray):
            xr.testing.assert_identical(a, b)
        elif isinstance(b, pd.DataFrame):
            pd.testing.assert_frame_equal(a, b)
        elif isinstance(b, np.ndarray):
            np.testing.assert_array_equal(a, b)
            assert a.dtype == b.dtype
        else:
            assert a == b


@pytest.mark.parametrize("case", CATALOGUE, ids=[c.id for c in CATALOGUE])
def test_bad_input_raises_clearly_and_changes_nothing(case):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        action, objs = case.run()
        before = _snapshot(objs)
        with pytest.raises(case.error, match=case.match):
            action()
    _assert_unchanged(before, objs)


def test_catalogue_ids_are_unique():
    ids = [c.id for c in CATALOGUE]
    assert len(ids) == len(set(ids))


def test_docs_table_lists_every_case():
    text = DOCS.read_text()
    rows = {m.group(1): m.group(2) for m in re.finditer(r"^\| `([a-z0-9-]+)` \|[^|]*\| `?(\w+)`? \|", text, re.M)}
    missing = [c.id for c in CATALOGUE if c.id not in rows]
    assert not missing, f"docs/bad_inputs.md lacks rows for {missing}"
    wrong = [c.id for c in CATALOGUE if rows[c.id] != c.error.__name__]
    assert not wrong, f"docs/bad_inputs.md gives the wrong error type for {wrong}"


# ----------------------------------------------------------------------------- inputs that must work
def test_float32_inputs_work_and_compute_in_float64():
    ds = make_data()
    ds32 = ds.assign(y=ds.y.astype(np.float32), x=ds.x.astype(np.float32), z=ds.z.astype(np.float32))
    ds64 = ds32.assign(y=ds32.y.astype(np.float64), x=ds32.x.astype(np.float64), z=ds32.z.astype(np.float64))
    before = copy.deepcopy(ds32)
    r32, r64 = fit(ds32, "y ~ x + z"), fit(ds64, "y ~ x + z")
    xr.testing.assert_identical(ds32, before)
    p32, p64 = r32.predict(ds32), r64.predict(ds64)
    assert p32.dtype == np.float64
    np.testing.assert_array_equal(p32.values, p64.values)  # same float64 computation on the same numbers
    X, Y, grid = arrays()
    m32 = KPLRegressor(dictionary=Fourier(2)).fit(X.astype(np.float32), Y.astype(np.float32), locations=grid)
    X64, Y64 = X.astype(np.float32).astype(float), Y.astype(np.float32).astype(float)
    m64 = KPLRegressor(dictionary=Fourier(2)).fit(X64, Y64, locations=grid)
    np.testing.assert_array_equal(m32.dual_coef_, m64.dual_coef_)
    assert m32.dual_coef_.dtype == np.float64


def test_mapping_with_reordered_labels_is_aligned_by_label():
    ds = make_data()
    perm = np.random.default_rng(1).permutation(N)
    data = {"y": ds.y, "x": ds.x.isel(sample=perm)}
    res = fit(data)
    ref = fit(ds)
    pred = res.predict(ds).sel(sample=ref.predict(ds).sample)
    np.testing.assert_allclose(pred.values, ref.predict(ds).values, rtol=1e-10, atol=1e-12)


def test_string_scalar_is_a_category():
    # text in a scalar covariate is categorical (as in R and formulaic): numbers as text become levels
    ds = make_data()
    res = fit(ds.assign(z=ds.z.round(1).astype(str)), "y ~ x + z")
    assert res.model.parsed.scalar.levels["z"]


def test_exact_solver_refuses_before_allocating(monkeypatch):
    n = 3000
    rng = np.random.default_rng(0)
    X, Y = rng.normal(size=(n, 2)), rng.normal(size=(n, 3))
    tracemalloc.start()
    try:
        with pytest.raises(ValueError, match=r"n_samples = 3000 curves need about 0\.5 GB.*limit 0\.001 GB"):
            KPLRegressor(dictionary=Fourier(1), memory_limit=1e6).fit(X, Y)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < n * n * 8 / 8  # no n x n matrix was allocated
    # the environment variable reaches fits made by FunctionalRegression (proxy and CV fits alike)
    monkeypatch.setenv("FDAKPL_MEMORY_LIMIT", "1e6")
    ds = xr.Dataset({"y": (("sample", "t"), Y), "x": (("sample", "f"), X)},
                    coords={"t": [0.0, 0.5, 1.0], "f": [0.0, 1.0]})
    tracemalloc.start()
    try:
        with pytest.raises(ValueError, match=r"exact KPL solver.*FDAKPL_MEMORY_LIMIT"):
            FunctionalRegression("y ~ x", ds, dictionary=Fourier(1), progress=False).fit()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < n * n * 8 / 2  # the default kernel's median heuristic subsamples; no n x n matrix
    monkeypatch.setenv("FDAKPL_MEMORY_LIMIT", "inf")
    assert check_exact_memory(10**6) > 1e12  # turned off: returns the estimate
    with pytest.raises(ValueError, match="memory_limit must be a number of bytes"):
        check_exact_memory(10, limit="lots")


def test_memory_estimate_bounds_the_measured_peak():
    """The estimate check_exact_memory refuses by is an upper bound on what a fit really allocates.

    tracemalloc sees numpy's arrays (the kernel matrix, eigenvectors, products); at n = 500 they are
    n^2-sized, so the estimate must bound the peak and not overstate it more than 3.5-fold (measured: peak
    2.3 n^2 doubles since K, exactly symmetric, is no longer copied to be symmetrised (3.3 before), estimate
    7 n^2 + 4 N doubles, ratio 3.1). It does not see the workspace LAPACK
    allocates inside numpy.linalg, which the estimate also covers: benchmarks/bench_closed_form.py measures
    the resident high-water mark of a fit in a fresh process (n = 1500: 6.5 n^2 doubles of RSS increase).
    """
    def peak_of_fit(n, solver):
        X, Y, grid = make_problem(np.random.default_rng(0), n=n, m=20)
        tracemalloc.start()
        try:
            KPLRegressor(dictionary=Fourier(3), lam=1e-3, solver=solver).fit(X, Y, locations=grid)
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    peak_of_fit(20, "eig")  # warm-up: imports and caches are not the fit's memory
    n = 500
    # the estimate is written for the eigendecomposition route (the lambda path), the larger of the two;
    # from 500 curves solver="auto" with one lambda takes the single-lambda route, which needs less
    peak = peak_of_fit(n, "eig")
    single = peak_of_fit(n, "auto")
    estimate = check_exact_memory(n, n * 20, limit=np.inf)
    assert peak > n * n * 8  # the measurement sees the n x n matrices at all
    assert peak <= estimate <= 3.5 * peak, (peak / (8 * n * n), estimate / peak)
    assert n * n * 8 < single <= estimate


def test_long_and_dense_forms_reject_inconsistent_long_data():
    df = pd.DataFrame({"sample": ["a", "a"], "location": [0.0, 0.0], "value": [1.0, 2.0]})
    before = df.copy()
    with pytest.raises(ValueError, match="two values for the same"):
        functional.from_long(df)
    pd.testing.assert_frame_equal(df, before)


def test_product_kernel_with_unknown_term_is_refused():
    X, Y, grid = arrays()
    with pytest.raises(ValueError, match="input has no term 'b'"):
        KPLRegressor(kernel=Product({"a": Gaussian(1.0), "b": Gaussian(1.0)})).fit({"a": X}, Y, locations=grid)
