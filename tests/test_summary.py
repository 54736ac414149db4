"""The summary's formatting rules (issue 16, item 2): one width, 4 digits, 0 for zero, nothing cut."""

from __future__ import annotations

import re

import numpy as np
import pytest

from fdakpl import FunctionalRegression, datasets
from fdakpl.results.summary import bound_cell, diagnostics_verdict
from fdakpl.results.tables import WIDTH, KVTable, fmt_number, round_numbers

NUMBER = re.compile(r"(?<![\w.^])[-+]?(\d+\.\d+|\d+)(?:e[-+]?\d+)?(?![\w.(])")


def significant_digits(token: str) -> int:
    mantissa = token.lstrip("+-").split("e")[0].replace(".", "").lstrip("0")
    return len(mantissa.rstrip("0")) if "." not in token.split("e")[0] else len(mantissa)


@pytest.fixture(scope="module")
def res():
    ds = datasets.dti_first_visits()
    return FunctionalRegression("rcst ~ cca", data=ds, dictionary="db3", level=4, output_matrix=1.5,
                                interpolate_inputs=True, progress=False).fit()


@pytest.fixture(scope="module")
def text(res):
    return str(res.summary(importance=19, diagnostics="full"))  # computed on request (and kept): every table


def test_one_width_for_all_tables_and_notes(text, res):
    lines = text.splitlines()
    assert max(map(len, lines)) <= WIDTH
    rules = [line for line in lines if set(line) <= {"=", "-"} and line]
    assert rules and {len(r) for r in rules} == {WIDTH}  # every table has the same width
    n_tables = len(res.summary(diagnostics="full").tables)  # model, fit, terms and the diagnostics
    assert len(res.summary().tables) == 3  # the diagnostics table only in full
    assert n_tables == 4 and sum(set(r) == {"="} for r in rules) == 2 * n_tables  # each opened and closed


def test_four_significant_digits(text, res):
    body = text.replace("1 - eta", "").replace("Def. 4.1", "")
    decimals = [m.group(0) for m in NUMBER.finditer(body) if "." in m.group(0)]
    assert decimals, body
    too_long = [t for t in decimals if significant_digits(t) > 4]
    assert not too_long, too_long
    sigma = res.kernels["cca"].sigma
    assert f"Gaussian(sigma={sigma:.4g})" in text and repr(sigma) not in text  # not 16 digits


def test_numerical_zero_prints_as_zero(text, res):
    diag = res.diagnostics()
    assert 0 <= diag["representation_error_median"] < 1e-20  # float64 round-off of an exact representation
    assert re.search(r"Repr\. error median:\s+0\s", text) and re.search(r"Riesz c_phi:\s+0\s", text)
    assert "e-3" not in text and "e-2" not in text  # no 1e-30-like round-off anywhere
    assert fmt_number(1e-9, scale=1.0) == "0" and fmt_number(1e-9) == "1e-09"  # zero only relative to a scale
    assert fmt_number(-2e-12, scale=5.0) == "0" and fmt_number(3e-7, scale=5.0) == "3e-07"


def test_names_are_never_cut(text, res):
    flat = " ".join(text.split())
    assert "…" not in text
    for name in (res.estimator.dictionary_.describe(), res.model.formula, res.solver_reason):
        assert " ".join(round_numbers(name).split()) in flat, name
    long = KVTable([("Dictionary", "Learned(" + ", ".join(f"atom_{i}=0.5" for i in range(40)) + ")"),
                    ("a very long key that does not fit any key column", "value")], "T")
    out = long.as_text()
    assert max(map(len, out.splitlines())) <= WIDTH
    assert " ".join(out.split()).count("atom_") == 40 and "a very long key that does not fit any key column:" in out


def test_inf_is_explained(text):
    assert re.search(r"cond\(Gram\):\s+inf \(singular\)", text)
    assert "cond(Gram) = inf: the Gram matrix is singular" in " ".join(text.split())


def test_one_line_verdict(text):
    verdicts = [p for p in text.split("\n\n")[1].replace("\n", " ").split(". ") if p.startswith("In short:")]
    assert len(verdicts) == 1 and "not as this fit's error" in verdicts[0]


def test_bound_not_applicable_reads_as_such(res, monkeypatch):
    from fdakpl.diagnostics.applicability import Applicability

    diag = dict(res.diagnostics())
    diag["applicability"] = Applicability(None, "not applicable", ["the loss is logcosh(5): the propositions "
                                                                   "are proved for the square loss"])
    monkeypatch.setattr(type(res), "diagnostics", lambda self, eta=0.05: diag)
    compact = " ".join(str(res.summary()).split())
    assert "Excess-risk bound: not applicable (the loss is logcosh(5): the propositions are proved" in compact
    out = str(res.summary(diagnostics="full"))
    flat = " ".join(out.split())
    assert "Bound at lambda*: not applicable: the loss is logcosh(5): the propositions are proved" in flat
    assert "term B2" not in out and "Bound at fitted lambda" not in out
    assert "In short: the paper's excess-risk bound does not cover this fit (the loss is logcosh(5)" in flat
    assert max(map(len, out.splitlines())) <= WIDTH  # the long reason wraps
    assert bound_cell({"bound": None}) == "not applicable: it could not be evaluated for this fit"
    assert bound_cell({"bound_applicable": False, "bound_reason": "why"}) == "not applicable: why"
    applies = {"applicability": Applicability("5.1", "applies"), "bound": None}
    assert bound_cell(applies) == "not available"
    assert "(the loss is logcosh(5)" in diagnostics_verdict(diag)


def test_every_format_ipython_asks_for(res):
    smry = res.summary(diagnostics="full")
    from IPython.core.formatters import DisplayFormatter

    data, _ = DisplayFormatter().format(smry)  # what a notebook (and the docs' executed pages) computes
    assert {"text/plain", "text/html", "text/latex"} <= set(data)
    assert "Excess-risk diagnostics" in data["text/latex"] and "Dictionary:" in smry.as_csv()


def test_html_tables(res, text):
    page = res._repr_html_()  # after `text`: the importance computed there is shown (not recomputed)
    assert page.count("<table") == len(res.summary().tables) == 3 and "Wavelet(wavelet=&#x27;db3&#x27;, level=4" in page
    assert "<pre" not in page and "white-space:nowrap;overflow" not in page
    assert re.search(r"<td[^>]*>0</td>", page)  # the same number formatting as the text


def test_round_numbers_leaves_names_alone():
    text = "db3, level=4, Gaussian(sigma=0.123456), x2.5y"
    assert round_numbers(text) == "db3, level=4, Gaussian(sigma=0.1235), x2.5y"
    assert round_numbers("b=1.5e-07 and 3.14159265e+10") == "b=1.5e-07 and 3.142e+10"
    assert np.isclose(float(round_numbers("0.99999999")), 1.0)


def _readme_fit(formula):
    ds = datasets.dti_first_visits()
    return FunctionalRegression(formula, ds, interpolate_inputs=True, progress=False).fit()


@pytest.mark.parametrize("formula", ["rcst ~ cca", "rcst ~ cca + C(sex)"])
def test_default_summary_reads_first(formula):
    res = _readme_fit(formula)
    text = str(res.summary())
    lines = text.splitlines()
    assert len(lines) <= 35 and max(map(len, lines)) <= WIDTH
    flat = " ".join(text.split())
    # the held-out error against the mean curve's: the mean curve's is the mean over curves of the squared L2
    # distance to the training mean (held at its full-data value, as in the model's LOO), per unit of the domain;
    # DTI's curves have gaps, so the default integrates each centred curve's linear interpolant on the grid
    Y, t = res.response.values, res.response[res.response_dim].values
    mu = np.nanmean(Y, axis=0)
    assert "Integration: interpolate (auto: dense curves with gaps)" in text
    mean_err = float(np.mean([np.trapezoid(np.interp(t, t[o], (y - mu)[o]) ** 2, t) / (t[-1] - t[0])
                              for y, o in ((y, ~np.isnan(y)) for y in Y)]))
    model_err = float(res.path.loo([res.lam])[0])
    assert f"LOO error: {model_err:.4g}; mean curve {mean_err:.4g} ({100 * (1 - model_err / mean_err):.3g}% lower)" \
        in flat
    # one row per term with its fitted kernel and width multiple
    for t, k in res.kernels.items():
        m = res.tuning.multiples[res.tuning.terms.index(t)]
        assert re.search(rf"{re.escape(t)}\s+(curve|factor)\s+{re.escape(round_numbers(repr(k)))}\s+{m:g} x median",
                         text), t
    assert "Tuning: width of" in flat and "by LOO" in flat
    assert "Excess-risk bound (Prop. 5.2, indicative):" in flat and "not this fit's error" in flat
    assert "Riesz c_phi" not in text and "Riesz c_phi" in str(res.summary(diagnostics="full"))
    with pytest.raises(ValueError, match="diagnostics must be"):
        res.summary(diagnostics="long")


def test_summary_term_table_with_importance():
    ds = datasets.dti_first_visits()
    res = FunctionalRegression("rcst ~ cca + pasat", ds, interpolate_inputs=True, progress=False).fit()
    text = str(res.summary(importance=19))
    imp = res.computed_importance()
    assert imp.terms == ["cca", "pasat"]
    for i, t in enumerate(imp.terms):
        assert re.search(rf"{re.escape(t)}\s+\S+.*\s{re.escape(imp.pvalue_text(i))}$", text, re.M), t
    assert "19 permutations" in " ".join(text.split()) and "curves permuted (100 exchangeable curves)" in " ".join(
        text.split())
