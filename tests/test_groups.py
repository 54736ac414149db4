"""``groups=`` on every route (issue 24, item 7): exact leave-one-group-out on the exact partial route (brute force),
an explicit ``width_grid=`` there, a single group refused, missing labels named, routes without a use for groups
refusing them."""

import warnings

import numpy as np
import pandas as pd
import pytest
import xarray as xr

from fdakpl import FunctionalRegression
from fdakpl.data.functional import Observations
from fdakpl.kernels import Gaussian
from fdakpl.solvers.features import Nystroem
from fdakpl.solvers.partial import brute_force_partial_ridge
from fdakpl.solvers.points import point_design
from fdakpl.tuning.partial import exact_partial_path


def _sparse_problem(seed=3, n=18):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    idx, loc, val = [], [], []
    for i in range(n):
        t = np.sort(rng.uniform(0, 1, rng.integers(2, 6)))
        idx += [i] * t.size
        loc += list(t)
        val += list(np.sin(3 * t * X[i, 0]) + X[i, 1] * t + 0.2 * rng.normal(size=t.size))
    obs = Observations(np.array(idx), np.array(loc), np.array(val), n)
    phi = np.c_[np.ones(obs.index.size), obs.location, np.cos(np.pi * obs.location)]
    K = Gaussian(1.3)(X)
    return obs, phi, K, rng.uniform(0.5, 1.5, size=obs.index.size)


def _brute_force_group_loo(K, B, phi, obs, w, lam, groups):
    """Refit the exact partial ridge without each group (the objective's 1/n kept: lambda n / (n - |g|))."""
    n = obs.n_samples
    total = 0.0
    for g in np.unique(groups):
        out_curves = np.flatnonzero(groups == g)
        keep = np.setdiff1d(np.arange(n), out_curves)
        kept_pts = np.isin(obs.index, keep)
        design = point_design(obs.subset(keep), phi[kept_pts], w[kept_pts])
        coef = brute_force_partial_ridge(K[np.ix_(keep, keep)], B, design, lam * n / keep.size)
        for i in out_curves:
            pts = obs.index == i
            r = obs.value[pts] - phi[pts] @ (K[i, keep] @ coef @ B)
            total += float(np.sum(w[pts] * r**2))
    return total / n


def test_exact_partial_group_loo_equals_brute_force_refits():
    obs, phi, K, w = _sparse_problem()
    B = np.diag([1.0, 0.5, 0.25])
    groups = np.repeat(np.arange(6), 3)[np.random.default_rng(1).permutation(18)]  # groups of 3, interleaved
    lams = np.array([1e-3, 3e-2, 0.5])
    crit = exact_partial_path(K, B, phi, obs, w, lams, lam_unit=2.0, groups=groups)
    brute = [_brute_force_group_loo(K, B, phi, obs, w, 2.0 * lam, groups) for lam in lams]
    np.testing.assert_allclose(crit.group_loo, brute, rtol=1e-7)
    # one curve per group: the leave-one-curve-out error
    single = exact_partial_path(K, B, phi, obs, w, lams, groups=np.arange(18))
    np.testing.assert_allclose(single.group_loo, single.loo, rtol=1e-12)
    assert not np.allclose(crit.group_loo, crit.loo, rtol=1e-3)


def _sparse_dataset(seed=0, n=45, subjects=15):
    """Sparse responses, three curves per subject sharing a subject effect (dependent curves)."""
    rng = np.random.default_rng(seed)
    s, t = np.linspace(0, 1, 20), np.linspace(0, 1, 30)
    a = rng.normal(size=(n, 2))
    subject = np.repeat(np.arange(subjects), n // subjects)
    effect = rng.normal(size=subjects)[subject]
    X = a[:, :1] * np.sin(np.pi * s) + a[:, 1:2] * s + 0.1 * rng.normal(size=(n, s.size))
    Y = np.sin(2 * t) * a[:, :1] + effect[:, None] * np.cos(3 * t) + 0.2 * rng.normal(size=(n, t.size))
    keep = rng.uniform(size=Y.shape) < 0.2
    keep[np.arange(n), rng.integers(0, t.size, n)] = True
    Y[~keep] = np.nan
    return xr.Dataset({"x": (("sample", "s"), X), "y": (("sample", "t"), Y),
                       "subject": ("sample", np.array([f"s{k}" for k in subject], dtype=object))},
                      coords={"s": s, "t": t, "sample": [f"c{i}" for i in range(n)]})


def _fit(ds, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return FunctionalRegression("y ~ x", ds, progress=False, **kw).fit()


def test_sparse_route_leaves_out_groups():
    """Before: groups= was ignored on the exact partial route while the result said leave-one-group-out."""
    ds = _sparse_dataset()
    res = _fit(ds, groups="subject")
    assert res.solver == "exact_partial" and res.lam_how.startswith("leave-one-group-out")
    est = res.estimator
    crit = res.criteria
    assert crit.group_loo is not None
    obs = est.problem_.centred
    phi = est.dictionary_.evaluate(obs.location)
    codes = pd.factorize(ds["subject"].values)[0]
    lams = crit.lams[::5]
    brute = [_brute_force_group_loo(est.K_, est.B_, phi, obs, est.problem_.weights, lam * est.problem_.lam_unit, codes)
             for lam in lams]
    np.testing.assert_allclose(crit.group_loo[::5], brute, rtol=1e-6)
    assert res.lam == crit.lams[int(np.argmin(crit.group_loo))]


def test_sparse_route_honours_an_explicit_width_grid():
    """Before: width_grid= was ignored on the exact partial route."""
    ds = _sparse_dataset()
    default = _fit(ds)
    res = _fit(ds, width_grid=[0.25, 1.0, 4.0])
    assert res.solver == "exact_partial" and res.tuning is not None
    assert res.tuning.terms == ["x"] and len(res.tuning.candidates) == 3
    m = res.tuning.multiples[0]
    assert res.kernels["x"].sigma == pytest.approx(m * default.kernels["x"].sigma, rel=1e-12)
    # the choice is the minimum of the exact partial LOO over (width, lambda)
    est = res.estimator
    obs = est.problem_.centred
    phi = est.dictionary_.evaluate(obs.location)
    best = []
    for mult in (0.25, 1.0, 4.0):
        K = Gaussian(mult * default.kernels["x"].sigma)(est.problem_.inputs["x"], None, est.problem_.input_weights["x"])
        crit = exact_partial_path(K, est.B_, phi, obs, est.problem_.weights, res.criteria.lams, est.problem_.lam_unit)
        best.append((float(np.min(crit.loo)), mult, float(crit.lams[int(np.argmin(crit.loo))])))
    assert (m, res.lam) == min(best)[1:]


def test_a_single_group_is_refused():
    """Before: accepted; the criterion is flat and the smallest lambda was chosen."""
    ds = _sparse_dataset().assign(one=("sample", np.array(["a"] * 45, dtype=object)))
    with pytest.raises(ValueError, match="one group"):
        FunctionalRegression("y ~ x", ds, groups="one", progress=False).fit()
    with pytest.raises(ValueError, match="one group"):
        FunctionalRegression("y ~ x", ds, groups=np.zeros(45), progress=False).fit()


@pytest.mark.parametrize("missing", [None, np.nan, pd.NA])
def test_missing_labels_in_a_text_group_column_are_named(missing):
    """Before: raw TypeErrors from sorting str against float (or an accepted None group)."""
    ds = _sparse_dataset()
    labels = ds["subject"].values.copy()
    labels[[4, 7]] = missing
    ds = ds.assign(subject=("sample", labels))
    with pytest.raises(ValueError, match=r"groups='subject' has no label for samples \['c4', 'c7'\]"):
        FunctionalRegression("y ~ x", ds, groups="subject", progress=False).fit()


def test_routes_that_cannot_use_groups_refuse_them():
    ds = _sparse_dataset()
    dense = ds.assign(y=ds["y"].fillna(0.0))
    with pytest.raises(ValueError, match="not available with approx="):
        FunctionalRegression("y ~ x", dense, groups="subject", approx=Nystroem(10), lam=1e-3, progress=False).fit()
    with pytest.raises(ValueError, match="ignored by lam='gcv'"):
        FunctionalRegression("y ~ x", dense, groups="subject", lam="gcv", progress=False).fit()
    with pytest.raises(ValueError, match="at least 5 groups"):
        FunctionalRegression("y ~ x", dense.isel(sample=slice(0, 12)), groups="subject", lam="cv",
                             progress=False).fit()


def test_mixed_type_labels_are_groups():
    ds = _sparse_dataset()
    labels = ds["subject"].values.copy()
    labels[:3] = 7  # an int among strings: its own group
    res = _fit(ds.assign(subject=("sample", labels)), groups="subject")
    assert res.criteria.group_loo is not None
