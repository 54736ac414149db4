"""FDA-style summary tables of a fitted functional regression.

The printed form follows fixed rules (checked by ``tests/test_summary.py``):

* every table is :data:`WIDTH` (80) characters wide, and so is the text under the tables;
* numbers have 4 significant digits, inside descriptions too (``Gaussian(sigma=0.07977)``);
* a number that is zero up to rounding *relative to its scale* (:data:`ZERO_RTOL`) prints as ``0``;
* names and descriptions are never cut: a value too long for its column gets a row of the full
  width, wrapped at spaces;
* ``inf`` says what it means (``inf (singular)``), and a bound whose assumptions fail reads
  ``not applicable`` with the reason.

:class:`FunctionalSummary` is a statsmodels ``Summary`` (``print()`` it, ``.as_text()``,
``.as_html()``); notebooks and the documentation show its HTML tables.
"""

from __future__ import annotations

import html
import math
import re
import textwrap
from typing import Any

import numpy as np
from statsmodels.iolib.summary import Summary
from statsmodels.iolib.table import SimpleTable
from statsmodels.iolib.tableformatting import fmt_2cols

__all__ = ["WIDTH", "ZERO_RTOL", "FunctionalSummary", "KVTable", "build_summary", "condition_warnings",
           "diagnostics_verdict", "fmt_number", "kv_table", "round_numbers"]

#: width of every table and of the text under them, in characters
WIDTH = 80
#: a value below ``ZERO_RTOL * scale`` in absolute value prints as 0 (about the square root of float64's
#: machine epsilon: what survives of a zero after a square root or a cancellation)
ZERO_RTOL = 1e-8
#: the widest key column of the two-column layout (longer keys get a full-width row)
KEY_WIDTH = 24
_GAP = 2


def fmt_number(x: Any, scale: float | None = None, digits: int = 4) -> str:
    """A number as the summary prints it: 4 significant digits, 0 for a numerical zero, words for bools.

    Parameters
    ----------
    x : number, bool, str or None
    scale : float, optional
        The size ``x`` is compared with: ``|x| <= ZERO_RTOL * scale`` prints ``0``.
    digits : int

    Examples
    --------
    >>> fmt_number(0.07977134593926301), fmt_number(9.196e-31, scale=1.0), fmt_number(1e-8)
    ('0.07977', '0', '1e-08')
    >>> fmt_number(True), fmt_number(None), fmt_number(12), fmt_number(float("inf"))
    ('yes', '-', '12', 'inf')
    """
    if x is None:
        return "-"
    if isinstance(x, bool | np.bool_):
        return "yes" if x else "no"
    if isinstance(x, int | np.integer):
        return str(int(x))
    if isinstance(x, float | np.floating):
        x = float(x)
        if math.isnan(x):
            return "nan"
        if math.isinf(x):
            return "inf" if x > 0 else "-inf"
        if x == 0 or (scale is not None and np.isfinite(scale) and abs(x) <= ZERO_RTOL * abs(scale)):
            return "0"
        return f"{x:.{digits}g}"
    return str(x)


_FLOAT = re.compile(r"(?<![\w.])[-+]?\d+\.\d+(?:[eE][-+]?\d+)?(?![\w.])")


def round_numbers(text: str, digits: int = 4) -> str:
    """Decimal numbers inside a description to ``digits`` significant digits.

    Examples
    --------
    >>> round_numbers("Gaussian(sigma=0.07977134593926301), ScaleDecay(b=1.5), db3")
    'Gaussian(sigma=0.07977), ScaleDecay(b=1.5), db3'
    """
    return _FLOAT.sub(lambda m: f"{float(m.group()):.{digits}g}", text)


def _wrap(text: str, width: int) -> list[str]:
    """Wrap at spaces (and after commas of long descriptions), never inside a word or name."""
    lines = textwrap.wrap(text, width, break_long_words=False, break_on_hyphens=False)
    return lines or [""]


class KVTable:
    """Two columns of ``key: value`` pairs under a title, :data:`WIDTH` characters wide.

    Pairs whose key or value does not fit its column get a row of the full width (after the
    two-column part), with the value wrapped, so that nothing is cut.

    Examples
    --------
    >>> t = KVTable([("n", "3"), ("d", "5"), ("Dictionary", "Wavelet(" + "x, " * 30 + "y)")], "Model")
    >>> lines = t.as_text().splitlines()
    >>> max(map(len, lines)) <= 80, lines[2].split()
    (True, ['n:', '3', 'd:', '5'])
    >>> "Wavelet(" in t.as_html()
    True
    """

    def __init__(self, pairs: list[tuple[str, str]], title: str) -> None:
        self.pairs = [(str(k), str(v)) for k, v in pairs]
        self.title = title

    def _layout(self, width: int) -> tuple[int, int, list[tuple[str, str]], list[tuple[str, str]]]:
        half = (width - _GAP) // 2
        keys = [len(k) + 2 for k, _ in self.pairs if len(k) + 2 <= KEY_WIDTH]
        kw = max(keys, default=KEY_WIDTH)
        narrow = [(k, v) for k, v in self.pairs if len(k) + 2 <= kw and len(v) <= half - kw]
        wide = [(k, v) for k, v in self.pairs if (k, v) not in narrow]
        return half, kw, narrow, wide

    def as_text(self, width: int = WIDTH) -> str:
        half, kw, narrow, wide = self._layout(width)
        lines = [line.center(width).rstrip() for line in _wrap(self.title, width)]
        lines.append("=" * width)
        rows = (len(narrow) + 1) // 2
        left, right = narrow[:rows], narrow[rows:]
        for i in range(rows):
            k, v = left[i]
            line = f"{k + ':':<{kw}}{v:<{half - kw}}"
            if i < len(right):
                rk, rv = right[i]
                line += " " * _GAP + f"{rk + ':':<{kw}}{rv}"
            lines.append(line.rstrip())
        if narrow and wide:
            lines.append("-" * width)
        for k, v in wide:
            kk = max(kw, len(k) + 2)
            body = _wrap(v, width - kk)
            lines.append(f"{k + ':':<{kk}}{body[0]}".rstrip())
            lines += [" " * kk + b for b in body[1:]]
        lines.append("=" * width)
        return "\n".join(lines)

    def as_html(self) -> str:
        _, _, narrow, wide = self._layout(WIDTH)
        e = html.escape
        rows = (len(narrow) + 1) // 2
        left, right = narrow[:rows], narrow[rows:]
        out = [f'<table class="fdakpl-summary" style="{_TABLE_CSS}"><caption style="{_CAPTION_CSS}">'
               f"{e(self.title)}</caption>"]
        for i in range(rows):
            cells = [left[i], right[i] if i < len(right) else ("", "")]
            out.append("<tr>" + "".join(f'<th style="{_TH_CSS}">{e(k) + ":" if k else ""}</th>'
                                        f'<td style="{_TD_CSS}{_NOWRAP if " " not in v else ""}">{e(v)}</td>'
                                        for k, v in cells) + "</tr>")
        for k, v in wide:
            out.append(f'<tr><th style="{_TH_CSS}">{e(k)}:</th><td colspan="3" style="{_WIDE_TD_CSS}">{e(v)}</td></tr>')
        out.append("</table>")
        return "".join(out)

    def to_simple_table(self) -> SimpleTable:
        """The same pairs as a statsmodels ``SimpleTable`` (for LaTeX and CSV output)."""
        half = (len(self.pairs) + 1) // 2
        left, right = self.pairs[:half], self.pairs[half:]
        rows = [[f"{k}:", v, *((f"{right[i][0]}:", right[i][1]) if i < len(right) else ("", ""))]
                for i, (k, v) in enumerate(left)]
        return SimpleTable(rows, title=self.title, txt_fmt=dict(fmt_2cols, data_aligns="l", colwidths=None))

    def as_latex_tabular(self, **kwargs: Any) -> str:
        return self.to_simple_table().as_latex_tabular(**kwargs)

    def as_csv(self, **kwargs: Any) -> str:
        return self.to_simple_table().as_csv(**kwargs)


_TABLE_CSS = "border-collapse:collapse;margin:0 0 1em 0;width:auto;max-width:100%;table-layout:auto"
_CAPTION_CSS = "caption-side:top;font-weight:bold;text-align:left;padding:0.2em 0"
_TH_CSS = "text-align:left;font-weight:normal;padding:0.1em 0.6em 0.1em 0;vertical-align:top"
_TD_CSS = "text-align:left;padding:0.1em 1.5em 0.1em 0;vertical-align:top"
_NOWRAP = ";white-space:nowrap"  # a number or a name without spaces stays on one line (9.986e-05)
_WIDE_TD_CSS = "text-align:left;padding:0.1em 0 0.1em 0;white-space:normal;overflow-wrap:break-word;vertical-align:top"


class FunctionalSummary(Summary):
    """The summary: :class:`KVTable` tables and notes (a statsmodels ``Summary``).

    ``print()`` gives the text (every line at most :data:`WIDTH` characters); ``_repr_html_``
    (notebooks, the documentation) gives HTML tables that wrap to the page.

    Examples
    --------
    >>> s = FunctionalSummary()
    >>> s.tables.append(kv_table([("n", 3)], "Model")); s.add_extra_txt(["A note " * 20])
    >>> max(len(line) for line in s.as_text().splitlines()) <= 80, "<table" in s.as_html()
    (True, True)
    >>> "tabular" in s._repr_latex_() and "A note" in s.as_csv()  # every format IPython asks for
    True
    """

    def as_text(self, width: int = WIDTH) -> str:
        txt = "\n".join(t.as_text(width) for t in self.tables)
        if self.extra_txt:
            notes = ["\n".join(_wrap(par, width)) for par in self.extra_txt.split("\n")]
            txt += "\n\n" + "\n".join(notes)
        return txt

    def as_latex(self) -> str:
        latex = "\n\n".join(t.as_latex_tabular() for t in self.tables)
        if self.extra_txt:
            latex += "\n\n" + self.extra_txt.replace("\n", " \\newline\n ")
        return latex

    def as_csv(self) -> str:
        csv = "\n\n".join(t.as_csv() for t in self.tables)
        return csv + ("\n\n" + self.extra_txt if self.extra_txt else "")

    def as_html(self) -> str:
        parts = [t.as_html() for t in self.tables]
        if self.extra_txt:
            parts += [f"<p style=\"margin:0.2em 0\">{html.escape(par)}</p>" for par in self.extra_txt.split("\n")]
        return '<div class="fdakpl-summary">' + "".join(parts) + "</div>"


def kv_table(pairs: list[tuple[str, Any]], title: str) -> KVTable:
    """Two columns of ``key: value`` pairs, values formatted by :func:`fmt_number`.

    Examples
    --------
    >>> print(kv_table([("n", 3), ("d", 5)], "Model").as_text().splitlines()[2].split())
    ['n:', '3', 'd:', '5']
    """
    return KVTable([(k, fmt_number(v)) for k, v in pairs], title)


def _zero(x: float, scale: float) -> str:
    """``x`` for a row whose numerical zero is judged against ``scale``."""
    return fmt_number(x, scale=scale)


def _cond(x: float) -> str:
    return "inf (singular)" if np.isinf(x) else fmt_number(x)


#: condition numbers above this lose more than 10 of float64's 16 digits
ILL_CONDITIONED = 1e10


def condition_warnings(cond: dict[str, float], riesz: bool = True) -> list[str]:
    """Warnings for the summary when the fit's linear algebra is ill-conditioned.

    Examples
    --------
    >>> condition_warnings({"kernel": 1e13, "gram": 10.0, "system": 1e14})[0][:34]
    'Warning: cond(K + n lambda I) = 1e'
    """
    out = []
    if np.isfinite(cond["kernel"]) and cond["kernel"] > ILL_CONDITIONED:
        out.append(f"Warning: cond(K + n lambda I) = {cond['kernel']:.2g} (near-duplicate input curves with a small "
                   f"lambda): the coefficients alpha lose about {np.log10(cond['system']):.0f} of 16 digits "
                   "(cond of the whole system "
                   f"{cond['system']:.2g}); predictions are less affected. Increase lambda or drop duplicated curves.")
    if riesz and cond["gram"] > ILL_CONDITIONED / 100:
        out.append(f"Warning: cond(Gram) = {cond['gram']:.2g}: the atoms are nearly linearly dependent (learnt or "
                   "redundant dictionary); the eigendecomposition solver stays accurate, but the coefficients of "
                   "single atoms are poorly determined. Use fewer atoms or a larger lambda.")
    return out


def bound_applicability(diag: dict[str, Any]) -> tuple[bool, str]:
    """Whether the excess-risk bound applies to the fit, and why not: read from the diagnostics.

    The diagnostics decide (:meth:`~fdakpl.results.FunctionalRegressionResults.diagnostics`);
    the summary only renders their verdict. Read, in this order:

    * ``diag["applicability"]``, an object with ``status`` (``"applies"``, ``"indicative"`` or
      ``"not applicable"``) and ``reasons`` (list of str);
    * ``diag["bound_applicable"]`` (bool) and ``diag["bound_reason"]`` (str);
    * neither: the bound applies when one was computed.

    Examples
    --------
    >>> bound_applicability({"bound_applicable": False, "bound_reason": "the loss is logcosh", "bound": None})
    (False, 'the loss is logcosh')
    >>> bound_applicability({"bound": None})
    (False, 'it could not be evaluated for this fit')
    """
    app = diag.get("applicability")
    if app is not None and hasattr(app, "status"):
        reasons = "; ".join(getattr(app, "reasons", []) or [])
        return app.status != "not applicable", reasons
    if "bound_applicable" in diag:
        return bool(diag["bound_applicable"]), str(diag.get("bound_reason") or "")
    if diag.get("bound") is None:
        return False, "it could not be evaluated for this fit"
    return True, ""


def bound_applies(diag: dict[str, Any]) -> bool:
    """``bound_applicability(diag)[0]``."""
    return bound_applicability(diag)[0]


def bound_cell(diag: dict[str, Any]) -> str:
    """The table cell of the bound: its value, or ``not applicable: <reason>``.

    Examples
    --------
    >>> bound_cell({"bound_applicable": False, "bound_reason": "the loss is logcosh"})
    'not applicable: the loss is logcosh'
    """
    applies, reason = bound_applicability(diag)
    bound = diag.get("bound")
    if not applies or bound is None:
        return "not applicable" + (f": {reason}" if reason else "")
    return fmt_number(bound.bound)


def diagnostics_verdict(diag: dict[str, Any], res: Any = None) -> str:
    """One line: what the diagnostics mean for this fit.

    Examples
    --------
    >>> diagnostics_verdict({"bound_applicable": False, "bound_reason": "the loss is logcosh"})[:60]
    "In short: the paper's excess-risk bound does not cover this "
    """
    applies, reason = bound_applicability(diag)
    bound = diag.get("bound")
    if not applies or bound is None:
        text = ("In short: the paper's excess-risk bound does not cover this fit"
                + (f" ({reason})" if reason else "") + "; the constants above still describe the dictionary "
                "and the kernel")
    else:
        text = f"In short: the excess-risk bound ({fmt_number(bound.bound)}) is a worst-case guarantee at lambda*"
        err = getattr(res, "train_mse", None) if res is not None else None
        if err is not None and np.isfinite(err) and err > 0:
            text += f", {bound.bound / err:.2g} times the training MSE ({fmt_number(err)})"
        text += ": use it to compare numbers of curves, points and atoms, not as this fit's error"
        app = diag.get("applicability")
        if getattr(app, "status", None) == "indicative" and reason:
            text += f" (indicative only: {reason})"
    if res is not None:
        cond = res.condition_numbers
        if np.isfinite(cond["kernel"]) and cond["kernel"] > ILL_CONDITIONED:
            text += "; the kernel system is ill-conditioned (see the warning below)"
    rep = diag.get("representation_error_max")
    if rep is not None and np.isfinite(rep) and rep > 0.1:
        text += (f"; the dictionary misses up to {100 * min(rep, 1.0):.2g}% of a curve (representation error), "
                 "which no kernel or lambda recovers")
    return text + "."


def build_summary(res: Any, eta: float = 0.05) -> Summary:
    """Build the summary of a :class:`~fdakpl.results.FunctionalRegressionResults`."""
    est = res.estimator
    obs = res._obs()
    Y = res.response
    grid = Y[res.response_dim].values
    diag = res.diagnostics(eta)
    dic = est.dictionary_
    kern = round_numbers(", ".join(f"{t}: {k!r}" for t, k in res.kernels.items()))
    from .kernels import make_output_matrix

    B = est.output_matrix
    b_desc = round_numbers(repr(make_output_matrix(B))) if not isinstance(B, np.ndarray) else f"matrix {B.shape}"
    loss = res.model.loss if isinstance(res.model.loss, str) else repr(res.model.loss)
    pct = 100.0 * obs.index.size / (obs.n_samples * grid.size)
    model_rows = [
        ("Formula", res.model.formula),
        ("Curves n", obs.n_samples),
        ("Response grid", f"{res.response_dim}: {grid.size} pts [{grid[0]:.4g}, {grid[-1]:.4g}]"),
        ("Observed points", f"{pct:.1f}% ({obs.index.size})"),
        ("Dictionary", round_numbers(dic.describe())),
        ("Atoms d", dic.n_atoms_),
        ("Output matrix B", b_desc),
        ("Loss", loss),
        ("Solver", res.solver),
        ("Approximation", round_numbers(getattr(getattr(est, "approx_", None), "approx_description_", None)
                                        or "none (exact)")),
        ("Integration", est.integration_),
        ("lambda", res.lam),
        ("lambda chosen by", res.lam_how),
    ]
    r2p = res.r2_pointwise.values
    fit_rows = [
        ("Integrated R2", _zero(res.r2, 1.0)),
        ("Pointwise R2 min", _zero(np.nanmin(r2p), 1.0)),
        ("Pointwise R2 median", _zero(np.nanmedian(r2p), 1.0)),
        ("Pointwise R2 max", _zero(np.nanmax(r2p), 1.0)),
        ("Training MSE", _zero(res.train_mse, float(np.nanvar(Y.values)))),
        ("Effective dof", res.edf),
    ]
    crit = res._at_lam()
    if res.lam_how == "GCV" and crit is not None:
        fit_rows.append(("GCV score", float(crit.gcv[0])))
    elif res.lam_how == "leave-one-curve-out" and crit is not None:
        fit_rows.append(("LOO score", float(crit.loo[0])))
    elif res.cv_result is not None:
        i, j = res.cv_result["best_index"]
        fit_rows.append(("CV score", float(res.cv_result["scores"][i, j])))
    else:
        fit_rows.append(("Fit time (s)", res.fit_seconds))
    fit_rows += [("Repr. error median", _zero(diag["representation_error_median"], 1.0)),  # relative errors
                 ("Repr. error max", _zero(diag["representation_error_max"], 1.0))]
    bound = diag["bound"]
    diag_rows = [
        ("Riesz c_phi", _zero(diag["c_phi"], diag["C_phi"])),
        ("Riesz C_phi", diag["C_phi"]),
        ("Normed family", diag["normed"]),
        ("Riesz (independent)", diag["riesz"]),
        ("cond(Gram)", _cond(diag["gram_condition"])),
        ("cond(K + n lambda I)", _cond(res.condition_numbers["kernel"])),
        ("kappa", diag["kappa"]),
        ("M(d)", diag["M"]),
        ("L = max|y|", diag["L"]),
        ("R = ||h||_H (plug-in)", diag["R"]),
        ("m per curve min/mean", f"{diag['m_min']} / {diag['m_mean']:.4g}"),
        (f"lambda* (eta={eta})", diag["lambda_star"]),
        ("lambda / lambda*", diag["lambda_over_lambda_star"]),
        ("Proposition", None if bound is None else bound.proposition),
        ("Bound on excess risk", bound_cell(diag)),
    ]
    if bound is not None and bound_applies(diag):
        for k, v in bound.terms.items():
            if k not in {"B0", "B1", "B2", "B3", "B4", "C(d)"}:
                diag_rows.append((f"  term {k}", _zero(v, bound.bound)))
        if bound.consistent_regime is not None:
            diag_rows.append(("m >= sqrt(n) (consistency)", bound.consistent_regime))
    smry = FunctionalSummary()
    smry.tables.append(kv_table(model_rows, "Functional regression (kernel-based projection learning)"))
    smry.tables.append(kv_table(fit_rows, "Fit"))
    smry.tables.append(kv_table(diag_rows, "Excess-risk diagnostics (Bouche et al. 2021, section 5)"))
    extra = [diagnostics_verdict(diag, res),
             f"Kernels: {kern} (combined by {res.model.combine}).", f"Solver: {res.solver_reason}."]
    if diag["domain_length"] != 1.0:
        extra.append(f"The response domain has length {diag['domain_length']:.3g}; the paper's bounds assume 1.")
    if bound is not None and bound_applies(diag) and np.isfinite(diag["lambda_star"]):
        extra.append("The bound holds with probability 1 - eta at lambda = lambda*; it is conservative and "
                     "meant for comparisons across n, m and d, not as an error estimate.")
    if not diag["riesz"]:
        extra.append("cond(Gram) = inf: the Gram matrix is singular (redundant dictionary: some atoms are linear "
                     "combinations of others), so the family is not a Riesz basis (c_phi = 0); the ridge "
                     "solution is still unique.")
    extra += condition_warnings(res.condition_numbers, diag["riesz"])
    if res.lam_on_edge:
        extra.append("The chosen lambda lies on the edge of its grid: extend lam_grid.")
    extra += [f"Note: {n}" for n in dict.fromkeys(res.notes)]
    smry.add_extra_txt(extra)
    return smry
