"""Fitted widths, b and lambda are reported from the fitted model on every route (issue 25, item 5)."""

import re
import warnings

import numpy as np
import pytest
import xarray as xr

from fdakpl import FunctionalRegression
from fdakpl.results.tables import round_numbers


def _data(n=40, seed=0):
    rng = np.random.default_rng(seed)
    s, t = np.linspace(0, 1, 25), np.linspace(0, 1, 30)
    a, b = rng.uniform(-1, 1, size=(2, n))
    x = a[:, None] * np.sin(np.pi * s) + b[:, None] * s
    y = np.sin(2 * np.pi * np.outer(a, t)) + b[:, None] ** 2 + 0.1 * rng.normal(size=(n, t.size))
    return xr.Dataset({"x": (("sample", "s"), x), "y": (("sample", "t"), y), "z": ("sample", rng.normal(size=n))},
                      coords={"s": s, "t": t})


ROUTES = {
    "loo": {},
    "gcv": {"lam": "gcv"},
    "cv": {"lam": "cv", "cv": 4},
    "cv_sigma": {"lam": "cv", "cv": 4, "param_grid": {"sigma": [0.5, 2.0]}},
    "fixed": {"lam": 1e-3},
    "logcosh": {"loss": "logcosh"},
    "exact_partial": {"solver": "exact_partial", "width_grid": [1.0, 2.0]},
}


@pytest.mark.parametrize("route", list(ROUTES))
def test_widths_b_and_lambda_come_from_the_fitted_model(route):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = FunctionalRegression("y ~ x + z", _data(), dictionary="fourier", progress=False,
                                   **ROUTES[route]).fit()
    est = res.estimator
    fitted = est.kernel_.kernels  # what predicts
    assert {t: repr(k) for t, k in res.kernels.items()} == {t: repr(k) for t, k in fitted.items()}
    assert res.lam == est.lam
    text = str(res.summary())
    for name, term in (("x", "x"), ("z", "scalars")):  # one row per covariate, with its term's fitted kernel
        assert re.search(rf"^{name}\s+\w+\s+(scalars: )?{re.escape(round_numbers(repr(fitted[term])))}", text,
                         re.M), (route, name)
    assert f"lambda:     {res.lam:.4g}" in text or f"lambda: {res.lam:.4g}" in " ".join(text.split())
    B = est.output_matrix
    if B is not None and not isinstance(B, np.ndarray):
        assert f"B = {round_numbers(repr(B))}" in " ".join(text.split())
    full = " ".join(str(res.summary(diagnostics="full")).split())
    assert round_numbers(repr(fitted["x"])) in full.split("Kernels: ")[1]  # the full summary's Kernels line
    if res.tuning is not None and res.tuning.terms:  # the width multiple the tuning chose, on the term's row
        m = res.tuning.multiples[res.tuning.terms.index("x")]
        assert re.search(rf"^x\s+curve\s+\S+\s+{m:g} x median", text, re.M), route
