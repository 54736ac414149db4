"""Issue 24, item 3: factor kernels that do not depend on level names, level order, reference level or term order."""

import numpy as np
import pytest
import xarray as xr

from fdakpl import Categorical, Fourier, FunctionalRegression, Gaussian, load
from fdakpl.factor_kernels import indicators
from fdakpl.formula.design import ScalarDesign

LEVELS = {"a": ["a0", "a1"], "b": ["b0", "b1", "b2"], "c": ["c0", "c1", "c2", "c3", "c4"]}
FORMULA = "y ~ x + C(a) + C(b) + C(c) + C(a):C(b) + z:C(c)"


def factor_data(n=48, seed=0):
    """Curves y driven by an input curve x, a numeric z and factors with 2, 3 and 5 levels (with an interaction)."""
    rng = np.random.default_rng(seed)
    t, s = np.linspace(0, 1, 25), np.linspace(0, 1, 15)
    u = rng.uniform(-1, 1, n)
    codes = {f: rng.integers(0, len(lv), n) for f, lv in LEVELS.items()}
    z = rng.normal(size=n)
    effect = (0.8 * codes["a"] - 0.5 * (codes["b"] == 2) + 0.3 * np.sin(codes["c"])
              + 0.6 * codes["a"] * (codes["b"] == 1) + 0.2 * z * (codes["c"] > 2))
    y = np.sin(np.pi * np.outer(u, t)) + effect[:, None] * np.cos(2 * np.pi * t) + 0.1 * rng.normal(size=(n, t.size))
    x = np.cos(np.pi * np.outer(u, s)) + 0.05 * rng.normal(size=(n, s.size))
    data = {f: ("sample", np.array(lv)[codes[f]]) for f, lv in LEVELS.items()}
    return xr.Dataset({"y": (("sample", "t"), y), "x": (("sample", "s"), x), "z": ("sample", z), **data},
                      coords={"sample": [f"c{i}" for i in range(n)], "t": t, "s": s})


def _rename(ds, maps):
    return ds.assign({f: ("sample", np.array([m[v] for v in ds[f].values.tolist()], dtype=object))
                      for f, m in maps.items()})


# renamed levels change their sorted order (and the dropped reference level of a treatment coding); c becomes numbers
RENAMED = {"a": {"a0": "zeta", "a1": "alpha"}, "b": {"b0": "m", "b1": "z", "b2": "a"},
           "c": {"c0": 40, "c1": 3, "c2": 17, "c3": 0, "c4": 8}}
VARIANTS = {
    "renamed levels": (FORMULA, lambda ds: _rename(ds, RENAMED)),
    "reordered levels": ("y ~ x + C(a, levels=['a1', 'a0']) + C(b, levels=['b2', 'b0', 'b1']) "
                         "+ C(c, levels=['c3', 'c1', 'c4', 'c0', 'c2']) "
                         "+ C(a, levels=['a1', 'a0']):C(b, levels=['b2', 'b0', 'b1']) "
                         "+ z:C(c, levels=['c3', 'c1', 'c4', 'c0', 'c2'])", lambda ds: ds),
    "another reference level": ("y ~ x + C(a, Treatment('a1')) + C(b, Treatment('b2')) + C(c, Treatment('c3')) "
                                "+ C(a, Treatment('a1')):C(b, Treatment('b2')) + z:C(c, Treatment('c3'))",
                                lambda ds: ds),
    "reversed term order": ("y ~ z:C(c) + C(b):C(a) + C(c) + C(b) + C(a) + x", lambda ds: ds),
}


@pytest.fixture(scope="module")
def reference():
    ds = factor_data()
    train, test = ds.isel(sample=slice(0, 40)), ds.isel(sample=slice(40, None))
    res = FunctionalRegression(FORMULA, train, progress=False).fit()
    return train, test, res


@pytest.mark.parametrize("variant", VARIANTS)
def test_predictions_do_not_depend_on_how_factors_are_written(reference, variant):
    """Same data, same model: predictions equal to 1e-10 (default tuning of widths, b and lambda included)."""
    train, test, res = reference
    formula, change = VARIANTS[variant]
    other = FunctionalRegression(formula, change(train), progress=False).fit()
    assert other.tuning.multiples == res.tuning.multiples and other.lam == res.lam
    np.testing.assert_allclose(other.predict(change(test)).values, res.predict(test).values, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(other.fitted.values, res.fitted.values, rtol=1e-10, atol=1e-12)


def test_factor_terms_have_one_kernel_each_on_indicators(reference):
    train, _, res = reference
    parsed = res.model.parsed
    assert parsed.terms == ["x", "scalars", "C(a)", "C(a):C(b)", "C(b)", "C(c)"]
    assert all(isinstance(res.kernels[t], Categorical) for t in parsed.terms[2:])
    X = parsed.inputs(train)
    a, b = train.a.values, train.b.values
    np.testing.assert_array_equal(X["C(a)"], np.column_stack([a == lv for lv in LEVELS["a"]]))
    cells = [(p, q) for p in LEVELS["a"] for q in LEVELS["b"]]
    np.testing.assert_array_equal(X["C(a):C(b)"], np.column_stack([(a == p) & (b == q) for p, q in cells]))
    # a factor inside a numeric term is coded by all its levels (no reference level)
    assert parsed.scalar.columns == [f"z:C(c)[{lv}]" for lv in LEVELS["c"]]
    # the fitted kernel matrix is the product of the per-term kernels computed independently
    K = np.ones((40, 40))
    for t in parsed.terms:
        k = res.kernels[t]
        if isinstance(k, Categorical):
            same = (X[t] @ X[t].T) == 1
            K *= np.where(same, 1.0, np.exp(-1.0 / k.sigma ** 2))
        else:
            K *= k(X[t], None, res.estimator.X_weights_.get(t))
    np.testing.assert_allclose(res.estimator.K_, K, rtol=1e-12)


def test_categorical_kernel_is_one_for_equal_levels_and_rho_otherwise():
    codes = np.array([0, 2, 1, 2, 0, 3])
    X = indicators(codes, 4)
    for sigma in (0.3, 1.0, 7.0):
        k = Categorical(sigma)
        want = np.where(codes[:, None] == codes[None, :], 1.0, np.exp(-1.0 / sigma ** 2))
        np.testing.assert_allclose(k(X), want, rtol=1e-14)
        np.testing.assert_allclose(k(X[:2], X), want[:2], rtol=1e-14)
        assert k.correlation == pytest.approx(np.exp(-1.0 / sigma ** 2), rel=1e-15)
        # relabelling the levels (permuting the indicator columns) changes nothing
        np.testing.assert_array_equal(k(X[:, [3, 0, 2, 1]]), k(X))
    assert Categorical(1.0).exact_symmetric() and Categorical(1.0).diagonal_bound() == 1.0
    # a level no training sample has (an unseen cell of an interaction) is at correlation rho from every one
    np.testing.assert_allclose(Categorical(2.0)(indicators([4], 5), np.pad(X, ((0, 0), (0, 1)))), np.exp(-0.25))


def test_categorical_kernel_refuses_what_is_not_indicator_rows():
    with pytest.raises(ValueError, match=r"the Categorical kernel takes indicator rows .* X has other values"):
        Categorical(1.0)(np.array([[0.5, 0.5], [1.0, 0.0]]))
    with pytest.raises(ValueError, match=r"Y has other values"):
        Categorical(1.0)(np.eye(2), np.array([[1.0, 1.0]]))
    with pytest.raises(ValueError, match=r"Y has other values"):
        Categorical(1.0)(np.eye(2), np.zeros((1, 2)))
    with pytest.raises(ValueError, match=r"level codes must be"):
        indicators([0, 3], 3)


def test_contrasts_other_than_treatment_are_refused_with_a_true_reason():
    ds = factor_data()
    with pytest.raises(ValueError, match=r"factors are not coded by contrasts: the kernel of a factor treats every "
                                         r"level alike, so no coding .* would change the fit; write C\(x\)"):
        FunctionalRegression("y ~ x + C(b, Sum)", ds, progress=False)
    # ... and Treatment('reference') indeed changes nothing, also at a fixed kernel and lambda
    kw = dict(kernels={"x": Gaussian(1.0), "C(b)": Categorical(0.8)}, dictionary=Fourier(3), lam=1e-3, progress=False)
    a = FunctionalRegression("y ~ x + C(b)", ds, **kw).fit()
    kw["kernels"] = {"x": Gaussian(1.0), "C(b, Treatment('b1'))": Categorical(0.8)}
    b = FunctionalRegression("y ~ x + C(b, Treatment('b1'))", ds, **kw).fit()
    np.testing.assert_allclose(b.estimator.K_, a.estimator.K_, rtol=1e-15)
    np.testing.assert_allclose(b.fitted.values, a.fitted.values, rtol=1e-12)


def test_models_with_factor_kernels_save_and_load(reference, tmp_path):
    _, test, res = reference
    again = load(res.save(tmp_path / "factors.nc"))
    assert again.kernels == res.kernels and isinstance(again.kernels["C(c)"], Categorical)
    assert [t.name for t in again.model.parsed.scalar.factor_terms] == ["C(a)", "C(a):C(b)", "C(b)", "C(c)"]
    np.testing.assert_array_equal(again.predict(test).values, res.predict(test).values)


def test_designs_saved_before_factor_terms_load_as_they_were_fitted():
    """A stored design without 'factor_terms' (fdakpl before issue 24) keeps its treatment-coded columns."""
    ds = factor_data(n=6)
    old = {"formula": "C(b) + z", "factors": [{"expr": "C(b)", "kind": "categorical", "levels": ["b0", "b1", "b2"]},
                                              {"expr": "z", "kind": "numeric", "levels": []}],
           "columns": ["C(b)[b0]", "C(b)[b1]", "C(b)[b2]", "z"],
           "columns_spec": [[[0, "b0"]], [[0, "b1"]], [[0, "b2"]], [[1, None]]],
           "mean": np.zeros(4), "scale": np.ones(4), "variables": ["b", "z"]}
    design = ScalarDesign.from_dict(old, {"b", "z"})
    assert design.factor_terms == []
    b = ds.b.values
    want = np.column_stack([b == "b0", b == "b1", b == "b2", ds.z.values])
    assert list(design.inputs(ds, "scalars")) == ["scalars"]
    np.testing.assert_array_equal(design.inputs(ds, "scalars")["scalars"], want)
    with pytest.raises(ValueError, match="refers to factors that are not categorical"):
        ScalarDesign.from_dict({**old, "factor_terms": [{"name": "z", "factors": [1]}]}, {"b", "z"})


def test_a_factor_with_one_level_warns_that_it_does_not_enter():
    ds = factor_data().assign(one=("sample", ["same"] * 48))
    with pytest.warns(UserWarning, match=r"the factor term 'C\(one\)' has a single level"):
        FunctionalRegression("y ~ x + C(one)", ds, progress=False)
