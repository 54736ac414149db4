"""Unit invariance (issue 24, item 2): the fit does not depend on the units of the data.

Multiplying the response's locations, the inputs' locations, the response values or the input values by any
power of ten from 1e-9 to 1e9 (or by factors that are not powers of two) leaves the predictions of the
defaults unchanged to 1e-8 (relative to their size; the response values' factor is divided back out). Lambda
is measured in the unit of the atoms' norms (:meth:`fdakpl.dictionaries.Dictionary.lambda_unit`); before
that, hat functions and B-splines (whose norms grow with the length of the domain) fitted another model when
the response's locations were in other units (relative change 0.8 at a factor 1e-9 on the data below).
"""

import warnings

import numpy as np
import pytest
import xarray as xr

from fdakpl import FunctionalRegression, KPLRegressor
from fdakpl.dictionaries import BSpline, Fourier, PiecewiseLinear, Wavelet
from fdakpl.estimators.approx import ApproxKPLRegressor
from fdakpl.solvers.features import Nystroem

POWERS_OF_TEN = [10.0**k for k in range(-9, 10)]
OTHER_FACTORS = [3.7, 0.3, 1 / 7]  # not powers of two: no exact rescaling in floating point
AXES = ["t", "s", "y", "x"]  # response locations, input locations, response values, input values


def _data(n=30, m_in=25, m_out=15, seed=0, sparse=False, partial=False):
    rng = np.random.default_rng(seed)
    s, t = np.linspace(0.0, 1.0, m_in), np.linspace(0.0, 1.0, m_out)
    a = rng.normal(size=(n, 3))
    X = a[:, :1] * np.sin(np.pi * s) + a[:, 1:2] * s**2 + 0.1 * rng.normal(size=(n, m_in))
    Y = np.tanh(a[:, :1]) * np.cos(2 * t) + a[:, 1:2] ** 2 * t + 0.1 * rng.normal(size=(n, m_out))
    if sparse:  # about a quarter of the points of each curve, at least one
        keep = rng.uniform(size=Y.shape) < 0.25
        keep[np.arange(n), rng.integers(0, m_out, n)] = True
        Y[~keep] = np.nan
    if partial:  # half the curves miss a block
        Y[: n // 2, m_out // 3: m_out // 2] = np.nan
    return xr.Dataset({"x": (("sample", "s"), X), "y": (("sample", "t"), Y), "z": ("sample", a[:, 2]),
                       "g": ("sample", np.repeat(np.arange(n // 3), 3))}, coords={"s": s, "t": t})


def _scaled(ds, axis, c):
    return ds.assign_coords({axis: ds[axis] * c}) if axis in "st" else ds.assign({axis: ds[axis] * c})


def _predict(ds, formula="y ~ x + z", **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # edge notices: the same at every scale
        res = FunctionalRegression(formula, ds, progress=False, **kw).fit()
    return res, res.predict(ds).values


def _change(p, p0):
    return float(np.nanmax(np.abs(p - p0)) / np.nanmax(np.abs(p0)))


def _check(ds, axes, factors, rtol, **kw):
    res0, p0 = _predict(ds, **kw)
    for axis in axes:
        for c in factors:
            res, p = _predict(_scaled(ds, axis, c), **kw)
            if axis == "y":
                p = p / c
            assert res.lam == res0.lam, (axis, c)
            assert _change(p, p0) <= rtol, (axis, c, _change(p, p0))
    return res0


@pytest.mark.parametrize("axis", AXES)
def test_defaults_do_not_depend_on_units(axis):
    """The default route on 15 response points: hat functions (their norms scale with the domain)."""
    ds = _data()
    res = _check(ds, [axis], POWERS_OF_TEN + OTHER_FACTORS, 1e-8)
    assert isinstance(res.estimator.dictionary_, PiecewiseLinear) and res.solver == "eig"


@pytest.mark.parametrize("case, data, options, rtol", [
    ("fourier, partially observed (plug-in)", {"m_out": 30, "partial": True}, {}, 1e-8),
    # conjugate gradients to a relative residual of 1e-10 (exact_partial_ridge's tol): rounding in another unit
    # moves the solution by up to the system's condition number times that
    ("sparse: B-splines, exact partial ridge", {"m_out": 30, "sparse": True}, {}, 1e-6),
    ("GCV", {}, {"lam": "gcv"}, 1e-8),
    ("leave one group out", {}, {"groups": "g"}, 1e-8),
    ("K-fold CV", {}, {"lam": "cv"}, 1e-8),
    ("B-splines", {"m_out": 40}, {"dictionary": "bspline"}, 1e-8),
    ("wavelets", {"m_out": 64}, {"dictionary": "db3"}, 1e-8),
])
def test_other_routes_do_not_depend_on_units(case, data, options, rtol):
    _check(_data(**data), AXES, [1e-9, 1e-3, 1e6, 3.7], rtol, **options)


def test_iterative_route_does_not_depend_on_units():
    """A robust loss (iterative solver). Before its variables were scaled by the size of the objective, L-BFGS-B
    stopped at its first step on responses 1e9 times larger (predictions 7% off)."""
    _check(_data(), ["t", "y"], [1e-9, 1e9, 3.7], 1e-8, loss="logcosh")


@pytest.mark.parametrize("dictionary", [BSpline(7), PiecewiseLinear(), Fourier(3), Wavelet("db2", level=2)])
def test_estimators_do_not_depend_on_the_response_locations_unit(dictionary):
    """KPLRegressor at a fixed lambda, and the approximate route choosing lambda by its own LOO."""
    ds = _data(m_out=16)
    X, Y, t = ds["x"].values[:, ::3], ds["y"].values, ds["t"].values
    p0 = KPLRegressor(dictionary=dictionary, lam=1e-3).fit(X, Y, locations=t).predict(X)
    a0 = ApproxKPLRegressor(dictionary=dictionary, approx=Nystroem(20), lam="loo").fit(X, Y, locations=t)
    for c in [1e-9, 1e4, 3.7]:
        p = KPLRegressor(dictionary=dictionary, lam=1e-3).fit(X, Y, locations=t * c).predict(X)
        assert _change(p, p0) <= 1e-8
        a = ApproxKPLRegressor(dictionary=dictionary, approx=Nystroem(20), lam="loo").fit(X, Y, locations=t * c)
        assert a.lam_ == a0.lam_ and _change(a.predict(X), a0.predict(X)) <= 1e-8
