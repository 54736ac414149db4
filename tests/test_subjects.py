"""Issue 29: subject effects re(ID) (a RandomEffect kernel added to the other terms'), new subjects, labels, files."""

import warnings

import numpy as np
import pandas as pd
import pytest
import xarray as xr

from fdakpl import Fourier, FunctionalRegression, KPLRegressor, load
from fdakpl.data.preprocessing import prepare_inputs
from fdakpl.factor_kernels import RandomEffect, indicators
from fdakpl.formula.grammar import level_key
from fdakpl.kernels import Gaussian, Linear, Product, Sum
from fdakpl.results.subjects import variance_shares

N_SUBJECTS, PER_SUBJECT = 9, 4


def subject_data(seed=0, ids=None):
    """Curves y = f(x) + u_subject(t) + noise: 9 subjects x 4 curves, a smooth effect curve per subject."""
    rng = np.random.default_rng(seed)
    n = N_SUBJECTS * PER_SUBJECT
    t, s = np.linspace(0, 1, 20), np.linspace(0, 1, 15)
    code = np.repeat(np.arange(N_SUBJECTS), PER_SUBJECT)
    a = rng.uniform(-1, 1, n)
    u = rng.normal(size=(N_SUBJECTS, 2)) @ np.vstack([np.sin(np.pi * t), np.cos(np.pi * t)])
    y = np.sin(np.pi * np.outer(a, t)) + 0.6 * u[code] + 0.1 * rng.normal(size=(n, t.size))
    x = np.sin(np.pi * np.outer(a, s)) + 0.05 * rng.normal(size=(n, s.size))
    labels = np.array([f"p{k}" for k in range(N_SUBJECTS)], dtype=object) if ids is None else ids
    return xr.Dataset({"y": (("sample", "t"), y), "x": (("sample", "s"), x), "id": ("sample", labels[code])},
                      coords={"sample": [f"c{i}" for i in range(n)], "t": t, "s": s})


@pytest.fixture(scope="module")
def data():
    return subject_data()


@pytest.fixture(scope="module")
def fitted(data):
    return FunctionalRegression("y ~ x + re(id)", data).fit()


def test_the_kernel_equals_a_ridge_with_explicit_subject_dummies():
    """K = X X^T + w Z Z^T is the ridge on the features [X, sqrt(w) Z] (closed form: the primal solution), and a new
    subject (a row of zeros) gets the features [x, 0]."""
    rng = np.random.default_rng(1)
    n, t = 30, np.linspace(0, 1, 40, endpoint=False)
    X, Z = rng.normal(size=(n, 3)), indicators(rng.integers(0, 6, n), 6)
    Y = rng.normal(size=(n, t.size))
    w, lam = 0.7, 1e-2
    est = KPLRegressor(dictionary=Fourier(3), kernel=Product({"x": Linear(), "re(g)": RandomEffect(w)}), lam=lam,
                       center=False).fit({"x": X, "re(g)": Z}, Y)
    F = np.hstack([X, np.sqrt(w) * Z])
    beta = np.linalg.solve(F.T @ F + n * lam * np.eye(F.shape[1]), F.T @ est.nu_)  # Fourier on [0, 1): alpha = n lam
    Xn, Zn = rng.normal(size=(4, 3)), np.vstack([indicators([2, 5, 0], 6), np.zeros((1, 6))])
    got = est.predict_coefficients({"x": Xn, "re(g)": Zn})
    np.testing.assert_allclose(got, np.hstack([Xn, np.sqrt(w) * Zn]) @ beta, rtol=1e-10, atol=1e-12)


def test_a_subject_kernel_is_added_in_a_product_and_in_a_sum():
    X = {"x": np.array([[0.0], [1.0], [3.0]]), "re": indicators([0, 1, 0], 2)}
    Kx, Ks = Gaussian(1.0)(X["x"]), 0.5 * indicators([0, 1, 0], 2) @ indicators([0, 1, 0], 2).T
    for comb in (Product, Sum):
        K = comb({"x": Gaussian(1.0), "re": RandomEffect(0.5)})
        np.testing.assert_array_equal(K(X), Kx + Ks)
        assert K.exact_symmetric() and K.diagonal_bound() == 1.5
    assert repr(Product({"re": RandomEffect(0.5), "x": Gaussian(1.0)})) == \
        "x:Gaussian(sigma=1.0) + re:RandomEffect(weight=0.5)"
    with pytest.raises(ValueError, match="indicator rows of the subjects"):
        RandomEffect(1.0)(np.array([[0.5, 0.5]]))
    with pytest.raises(ValueError, match="weight must be >= 0"):
        RandomEffect(-1.0)


def test_the_weight_is_tuned_with_the_widths_and_the_subject_term_helps(data, fitted):
    assert fitted.tuning.terms == ["x", "re(id)"]
    assert fitted.kernels["re(id)"].weight > 0
    plain = FunctionalRegression("y ~ x", data).fit()
    assert fitted.tuning.score < 0.5 * plain.tuning.score  # leave-one-curve-out with the subjects known


@pytest.mark.parametrize("kind", ["integers", "int64 above 2**53", "reordered strings", "categorical", "floats"])
def test_renaming_or_reordering_subject_labels_changes_nothing(data, fitted, kind):
    old = [f"p{k}" for k in range(N_SUBJECTS)]
    new = {"integers": [40, 3, 17, 0, 8, 22, 5, 11, 1],
           "int64 above 2**53": [2**53 + k for k in (8, 1, 0, 7, 2, 6, 3, 5, 4)],  # distinct only as exact integers
           "reordered strings": ["zeta", "alpha", "m", "b", "y", "c", "x", "d", "w"],
           "categorical": ["u", "v", "a", "b", "c", "d", "e", "f", "g"],
           "floats": [1001.0, 2.5, -3.0, 7.25, 1e6, 0.0, 9.5, 11.0, 12.0]}[kind]
    mapping = dict(zip(old, new, strict=True))
    values = [mapping[v] for v in data["id"].values.tolist()]
    if kind == "int64 above 2**53":
        col = np.array(values, dtype=np.int64)
    elif kind == "categorical":
        col = pd.Categorical(values, categories=list(reversed(new)))
    else:
        col = np.array(values, dtype=object if kind == "reordered strings" else float if kind == "floats" else int)
    other = data.assign(id=("sample", col))
    res = FunctionalRegression("y ~ x + re(id)", other).fit()
    assert res.lam == fitted.lam and res.tuning.multiples == fitted.tuning.multiples
    np.testing.assert_allclose(res.fitted.values, fitted.fitted.values, rtol=1e-10, atol=1e-10)
    effects = res.subject_effects()
    np.testing.assert_allclose(effects.sel(subject=[level_key(v) for v in new]).values,
                               fitted.subject_effects().sel(subject=old).values, rtol=1e-10, atol=1e-10)


def test_a_new_subject_gets_the_population_prediction_said_once(data, fitted):
    """Known subject: population + its effect curve; new subject: the population prediction (subject kernel 0)."""
    first = data.isel(sample=[0, 5])
    new = first.assign(id=("sample", np.array(["never seen", "nor this"], dtype=object)))
    res = FunctionalRegression("y ~ x + re(id)", data).fit()
    with pytest.warns(UserWarning, match="population prediction") as said:
        pop = res.predict(new)
    assert len(said) == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # said once for these results
        again = res.predict(new)
        known = res.predict(first)
    np.testing.assert_array_equal(pop.values, again.values)
    u = res.subject_effects().sel(subject=data["id"].values[[0, 5]])
    np.testing.assert_allclose(known.values - pop.values, u.values, rtol=1e-10, atol=1e-12)
    # the population part is the other terms' kernel alone: K_rest(x, X) alpha B
    est = res.estimator
    Xv, Xw, _, _ = prepare_inputs(res.model.parsed.inputs(new), spec=est.input_spec_)
    Kx = res.kernels["x"].checked_matrix(Xv["x"], est.X_fit_["x"], (Xw or {}).get("x"))
    by_hand = (Kx @ est.dual_coef_B_) @ est.dictionary_.evaluate(est.grid_).T + est.mean_(est.grid_)
    np.testing.assert_allclose(pop.values, by_hand, rtol=1e-10, atol=1e-12)


def test_new_subjects_tunes_by_leaving_out_whole_subjects(data):
    a = FunctionalRegression("y ~ x + re(id)", data, new_subjects=True).fit()
    b = FunctionalRegression("y ~ x + re(id)", data, groups="id").fit()
    assert a.criterion.key == "group_loo" and a.lam == b.lam and a.tuning.multiples == b.tuning.multiples
    np.testing.assert_array_equal(a.fitted.values, b.fitted.values)
    with pytest.raises(ValueError, match="no subject term"):
        FunctionalRegression("y ~ x", data, new_subjects=True).fit()
    with pytest.raises(ValueError, match="groups= is given too"):
        FunctionalRegression("y ~ x + re(id)", data, new_subjects=True, groups="id").fit()


def test_models_with_subject_terms_save_and_load(data, fitted, tmp_path):
    again = load(fitted.save(tmp_path / "subjects.nc"))
    new = data.isel(sample=[0, 1, 7]).assign(id=("sample", np.array(["p0", "new", "p1"], dtype=object)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        np.testing.assert_array_equal(again.predict(new).values, fitted.predict(new).values)
    np.testing.assert_array_equal(again.predict(data).values, fitted.predict(data).values)
    np.testing.assert_array_equal(again.subject_effects().values, fitted.subject_effects().values)
    assert again.kernels["re(id)"] == fitted.kernels["re(id)"]


def test_subject_terms_are_refused_where_they_do_not_fit(data):
    with pytest.raises(ValueError, match="interacts a subject effect"):
        FunctionalRegression("y ~ x + re(id):C(id)", data)
    with pytest.raises(ValueError, match="re\\(\\) takes one variable"):
        FunctionalRegression("y ~ x + re(id, 2)", data)
    bad = data.assign(id=("sample", np.array([None, *data["id"].values[1:]], dtype=object)))
    with pytest.raises(ValueError, match="subject labels \\['id'\\] are missing"):
        FunctionalRegression("y ~ x + re(id)", bad)


def test_summary_row_shares_and_plot(fitted):
    facts = fitted.subject_facts()
    assert facts["n_subjects"] == N_SUBJECTS and 0.2 < facts["share"] < 1.0
    assert sum(facts["shares"].values()) == pytest.approx(1.0)
    assert f"Subject term re(id): weight {facts['weight']:.3g}, 9 subjects" in str(fitted.summary())
    from fdakpl.results.term_table import term_records

    row = {r.name: r for r in term_records(fitted)}["re(id)"]
    assert (row.kind, row.width) == ("subject", "")  # a weight, shown in the kernel, not a width multiple
    assert "weight of re(id)" in str(fitted.summary())
    ax = fitted.plot_subject_effects(subjects=["p0", "p3"])
    assert ax.get_xlabel() == "t" and ax.get_ylabel() == "subject effect re(id) on y" and len(ax.lines) == 3
    assert variance_shares(np.ones((2, 1)), np.zeros((2, 1)), np.zeros((2, 1)))["subject"] == 1.0
    with pytest.raises(ValueError, match=r"subject labels of 're\(id\)'.*subject_effects"):
        fitted.partial_dependence("id")
