"""One decision for "is this the square loss?" (issue 14): fdakpl.losses.is_square, used by every route.

Every route accepts loss=None, "square", "l2" and Square() as the same loss (same predictions to 1e-12), and a
route that cannot fit a robust loss refuses it with an error naming ``loss`` and the fix.
"""

import warnings

import numpy as np
import pytest
import xarray as xr

from fdakpl import Fourier, FunctionalRegression, Gaussian, KPLRegressor
from fdakpl.estimators.approx import ApproxKPLRegressor, Nystroem
from fdakpl.losses import CustomLoss, Huber, LogCosh, Square, is_square, make_loss

SQUARE = [None, "square", "l2", "L2", "squared", Square()]


def test_is_square_decides_for_names_objects_and_none():
    assert all(is_square(x) for x in SQUARE)
    assert all(make_loss(x) == Square() for x in SQUARE)
    for robust in ("logcosh", "logcosh(3)", "huber", LogCosh(1e-6), Huber(10.0), "pseudo_huber(2)",
                   CustomLoss(lambda y, f: (f - y) ** 2, lambda y, f: 2 * (f - y))):
        assert not is_square(robust)
    with pytest.raises(ValueError, match="unknown loss 'absolute'"):
        is_square("absolute")
    with pytest.raises(ValueError, match="has no parameter"):
        is_square("l2(3)")


@pytest.fixture
def data(rng):
    n, m = 30, 25
    X = rng.uniform(-1, 1, size=(n, 2))
    grid = np.linspace(0, 1, m)
    Y = np.sin(np.pi * X[:, :1] * grid) + X[:, 1:] * grid + 0.05 * rng.normal(size=(n, m))
    partial = Y.copy()
    partial[rng.uniform(size=Y.shape) < 0.3] = np.nan
    partial[:, 0] = np.where(np.isnan(partial[:, 0]), 0.2, partial[:, 0])
    return X, Y, partial, grid


def _same_for_every_square_spelling(fit):
    preds = [np.asarray(fit(loss), dtype=float) for loss in SQUARE]
    for p in preds[1:]:
        np.testing.assert_allclose(p, preds[0], rtol=0, atol=1e-12)
    return preds[0]


@pytest.mark.parametrize("route", [
    dict(),                                            # closed form, eigendecompositions
    dict(solver="sylvester"),
    dict(solver="exact_partial", partial=True),        # exact minimiser for partially observed curves
    dict(solver="iterative", partial=True, solver_options={"tol": 1e-10}),
    dict(approx_estimator=True),                       # ApproxKPLRegressor
    dict(approx_estimator=True, partial=True),
])
def test_array_routes_accept_every_spelling_of_the_square_loss(data, route):
    X, Y, partial, grid = data
    route = dict(route)
    Yfit = partial if route.pop("partial", False) else Y
    cls = ApproxKPLRegressor if route.pop("approx_estimator", False) else KPLRegressor
    if cls is ApproxKPLRegressor:
        route["approx"] = Nystroem(15, random_state=0)

    def fit(loss):
        est = cls(dictionary=Fourier(2), kernel=Gaussian(1.0), lam=1e-3, loss=loss, **route)
        return est.fit(X, Yfit, locations=grid).predict(X[:7])

    pred = _same_for_every_square_spelling(fit)
    assert np.all(np.isfinite(pred))


def test_approx_routes_refuse_a_robust_loss_naming_loss_and_the_fix(data):
    X, Y, _, grid = data
    for est in (ApproxKPLRegressor(loss="logcosh", approx=Nystroem(10)), ApproxKPLRegressor(loss=Huber(1.0))):
        with pytest.raises(ValueError, match=r"approx= solves the square loss only .*got loss=.*use loss='square', "
                                             r"or drop approx="):
            est.fit(X, Y, locations=grid)
    for solver in ("eig", "sylvester", "exact_partial"):
        with pytest.raises(ValueError, match=rf"solver='{solver}' solves the square loss only; with "
                                             r"loss=LogCosh.* use solver='iterative'"):
            KPLRegressor(loss="logcosh", solver=solver).fit(X, Y, locations=grid)


@pytest.fixture
def curves(data):
    X, Y, partial, grid = data
    sparse = np.full_like(Y, np.nan)
    rng = np.random.default_rng(3)
    for i in range(Y.shape[0]):  # 3 points per curve out of 25 locations: the sparse route
        keep = rng.choice(Y.shape[1], size=3, replace=False)
        sparse[i, keep] = Y[i, keep]
    coords = {"sample": np.arange(Y.shape[0]), "t": grid, "j": [0, 1]}
    return {name: xr.Dataset({"x": (("sample", "j"), X), "y": (("sample", "t"), resp)}, coords=coords)
            for name, resp in (("full", Y), ("partial", partial), ("sparse", sparse))}


@pytest.mark.parametrize(("which", "extra", "solver"), [
    ("full", {}, "eig"),
    ("partial", {}, "eig"),
    ("sparse", {}, "exact_partial"),
    ("full", {"approx": True}, "eig"),
    ("sparse", {"approx": True}, "eig"),  # no exact partial route with approx=: the plug-in primal form
])
def test_formula_routes_accept_every_spelling_of_the_square_loss(curves, which, extra, solver):
    ds = curves[which]
    extra = dict(extra)
    if extra.pop("approx", False):
        extra["approx"] = Nystroem(15, random_state=0)

    def fit(loss):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # edge warnings of the lambda grid
            res = FunctionalRegression("y ~ x", ds, dictionary=Fourier(2), lam=1e-3, loss=loss, progress=False,
                                       **extra).fit()
        assert res.solver == solver
        return res.fitted.values

    _same_for_every_square_spelling(fit)


def test_formula_routes_refuse_a_robust_loss_where_they_cannot_fit_one(curves):
    ds = curves["full"]
    with pytest.raises(ValueError, match=r"approx= solves the square loss only .*got loss='logcosh'.*use "
                                         r"loss='square'"):
        FunctionalRegression("y ~ x", ds, lam=1e-3, loss="logcosh", approx=Nystroem(10), progress=False).fit()
    with pytest.raises(ValueError, match=r"solver='eig' solves the square loss only; with loss='huber' use "
                                         r"solver='iterative'"):
        FunctionalRegression("y ~ x", ds, lam=1e-3, loss="huber", solver="eig", progress=False).fit()
