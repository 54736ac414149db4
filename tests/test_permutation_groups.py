"""Permutation tests and term importance with groups= and per covariate (issue 25, items 1-3)."""

import numpy as np
import pytest
import xarray as xr
from scipy import stats

from fdakpl import FunctionalRegression, Gaussian, datasets
from fdakpl.dictionaries import Fourier
from fdakpl.results.exchange import exchange_scheme
from fdakpl.results.permutation import format_pvalue


def _curves(rng, n, grid, k=4):
    out = rng.normal(size=(n, 1)) * np.ones(grid.size)
    for j in range(1, k + 1):
        a, b = rng.normal(size=(2, n, 1)) / j
        out = out + a * np.sin(2 * np.pi * j * grid) + b * np.cos(2 * np.pi * j * grid)
    return out


def _null_subjects(seed, n_subjects=12, size=3):
    """Inputs independent of the responses, but curves of one subject alike in both (the issue's case)."""
    rng = np.random.default_rng(seed)
    s_in, s_out = np.linspace(0, 1, 20), np.linspace(0, 1, 15)
    subject = np.repeat(np.arange(n_subjects), size)
    x = _curves(rng, n_subjects, s_in)[subject] + 0.5 * _curves(rng, subject.size, s_in)
    z = rng.normal(size=n_subjects)[subject]
    y = _curves(rng, n_subjects, s_out)[subject] + 0.3 * rng.normal(size=(subject.size, s_out.size))
    return xr.Dataset({"x": (("sample", "s"), x), "y": (("sample", "t"), y), "z": ("sample", z),
                       "subject": ("sample", subject)}, coords={"sample": np.arange(subject.size), "s": s_in,
                                                                "t": s_out})


def _fit(ds, groups):
    return FunctionalRegression("y ~ x + z", ds, kernels={"x": Gaussian(4.0), "scalars": Gaussian(2.0)},
                                dictionary=Fourier(5), lam=1e-2, width_grid=None, b_grid=None,
                                groups="subject" if groups else None, progress=False).fit()


def test_exchange_schemes_keep_the_groups():
    codes = np.array([0, 0, 1, 1, 2, 2, 2, 3, 3, 3, 4])  # sizes 2, 2, 3, 3, 1
    rng = np.random.default_rng(0)
    varying = np.arange(11.0)[:, None]
    ex = exchange_scheme(varying, codes)
    assert ex.scheme == "whole groups" and ex.n_arrangements == 4  # 2! * 2! * 1!
    seen = set()
    for _ in range(50):
        idx = ex.draw(rng)
        assert sorted(idx) == list(range(11))
        for g in range(5):  # a group takes a whole group of the same size, curves in order
            members = np.flatnonzero(codes == g)
            src = codes[idx[members]]
            assert np.all(src == src[0]) and np.sum(codes == src[0]) == members.size
            assert np.all(np.diff(idx[members]) == 1)
        seen.add(tuple(idx))
    assert len(seen) == 4 and idx[10] == 10  # every arrangement drawn; the lone size-1 group stays
    constant = codes[:, None] * 1.5
    ex = exchange_scheme(constant, codes)
    assert ex.scheme == "group values" and ex.n_arrangements == 120
    idx = ex.draw(np.random.default_rng(3))
    values = constant[idx, 0]
    assert all(np.unique(values[codes == g]).size == 1 for g in range(5))  # constant within groups still
    assert sorted(np.unique(values)) == sorted(np.unique(constant))  # a permutation of the group values
    assert exchange_scheme(varying, None).scheme == "curves"


def test_grouped_test_uses_leave_one_group_out_and_agrees_with_importance():
    ds = _null_subjects(1)
    res = _fit(ds, True)
    out = res.permutation_test("x", n_permutations=19, random_state=2, progress=False)
    groups = ds["subject"].values
    assert out.statistic == pytest.approx(float(res.path.loo([res.lam], groups=groups)[0]), rel=1e-10)
    assert out.statistic_name == "leave-one-group-out error" and out.scheme.startswith("whole groups")
    assert "permutations: whole groups permuted" in str(out)
    assert res.permutation_test("z", n_permutations=5, progress=False).scheme.startswith("group-level values")
    imp = res.term_importance(n_permutations=19, random_state=2)
    assert imp.statistic == "leave-one-group-out error" and imp.loo == pytest.approx(out.statistic, rel=1e-10)
    assert imp.p_value[imp.terms.index("x")] == out.pvalue
    assert "LOGO" in imp.table().as_text() and "whole groups" in imp.scheme_note()


def test_subject_shared_null_input_is_not_significant_with_groups():
    # the case: an input unrelated to the response but shared within subjects got the floor p-value
    # in 8 of 8 simulations when curves were permuted singly
    with_groups, without = [], []
    for seed in range(6):
        ds = _null_subjects(seed)
        with_groups.append(_fit(ds, True).permutation_test("x", n_permutations=19, progress=False).pvalue)
        without.append(_fit(ds, False).permutation_test("x", n_permutations=19, progress=False).pvalue)
    assert np.all(np.array(without) == 0.05)  # the old scheme: always at its floor
    assert np.sum(np.array(with_groups) <= 0.05) <= 1 and np.median(with_groups) > 0.2


def test_null_pvalues_with_groups_are_uniform_seeded():
    # a quick, seeded version of benchmarks/permutation_size.py (200 data sets there)
    p = np.array([_fit(_null_subjects(100 + s), True).permutation_test("x", n_permutations=19, random_state=s,
                                                                        progress=False).pvalue for s in range(40)])
    assert stats.kstest(p, "uniform").pvalue > 0.05 and np.mean(p <= 0.1) < 0.25


def test_scalar_covariates_have_their_own_rows_and_tests():
    ds = datasets.dti_first_visits()
    res = FunctionalRegression("rcst ~ cca + pasat + I(pasat**2) + C(sex)", ds, interpolate_inputs=True,
                               kernels={"cca": Gaussian(0.3), "scalars": Gaussian(3.0)}, lam=1e-3,
                               width_grid=None, b_grid=None, progress=False).fit()
    imp = res.term_importance(n_permutations=9, random_state=1)
    assert imp.terms == ["cca", "pasat", "I(pasat ** 2)", "C(sex)"]
    assert imp.kinds == ["functional", "scalar", "scalar", "factor"]
    one = res.permutation_test("pasat", n_permutations=9, random_state=1, progress=False)  # its column only
    assert one.term == "pasat" and one.pvalue == imp.p_value[1]
    assert one.statistic == pytest.approx(imp.loo, rel=1e-10)
    both = res.permutation_test("scalars", n_permutations=9, random_state=1, progress=False)  # the whole term
    assert both.term == "scalars" and not np.allclose(both.null_distribution, one.null_distribution)
    # the drop importance of a column is the refit without it (same kernels and lambda grid)
    fewer = FunctionalRegression("rcst ~ cca + I(pasat**2) + C(sex)", ds, interpolate_inputs=True,
                                 kernels={"cca": Gaussian(0.3), "scalars": Gaussian(3.0)}, lam=1e-3,
                                 width_grid=None, b_grid=None, progress=False).fit()
    grid = np.geomspace(1e-8, 1, 21)
    full, reduced = (float(np.min(r.path.loo(grid))) for r in (res, fewer))
    assert imp.delta_drop[1] == pytest.approx(reduced - full, rel=1e-6)
    with pytest.raises(ValueError, match="not a term or covariate"):
        res.permutation_test("age")


def test_pvalue_floor_is_printed_as_a_bound():
    assert format_pvalue(1 / 200, 199) == "< 0.005" and format_pvalue(2 / 200, 199) == "0.01"
    assert format_pvalue(1 / 100, 99) == "< 0.01"
