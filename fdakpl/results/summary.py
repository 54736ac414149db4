"""FDA-style summary of a fitted functional regression: what the tables and notes say.

The layout and the number formatting (one width of 80 characters, 4 significant digits, ``0``
for numerical zeros, nothing cut, HTML tables) are :mod:`fdakpl.results.tables`'s. Here: the rows, the
notes, ``inf`` explained (``inf (singular)``), and the excess-risk bound rendered as the
diagnostics decide -- its value, or ``not applicable`` with the reason -- with one line saying
what the diagnostics mean for the fit.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..data.integration import describe_integration
from .tables import FunctionalSummary, fmt_number, kv_table, round_numbers

__all__ = ["bound_applicability", "bound_applies", "bound_cell", "build_summary", "compact_bound",
           "condition_warnings", "diagnostics_notes", "diagnostics_verdict", "held_out_line", "tuning_route"]


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
    if not applies:
        return "not applicable" + (f": {reason}" if reason else "")
    return "not available" if bound is None else fmt_number(bound.bound)


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
        if getattr(app, "status", None) == "indicative":
            text += " (indicative only: the sampling is not the proposition's, see below)"
    if res is not None:
        cond = res.condition_numbers
        if np.isfinite(cond["kernel"]) and cond["kernel"] > ILL_CONDITIONED:
            text += "; the kernel system is ill-conditioned (see the warning below)"
    rep = diag.get("representation_error_max")
    if rep is not None and np.isfinite(rep) and rep > 0.1:
        text += (f"; the dictionary misses up to {100 * min(rep, 1.0):.2g}% of a curve (representation error), "
                 "which no kernel or lambda recovers")
    return text + "."


def diagnostics_notes(diag: dict[str, Any]) -> list[str]:
    """The notes under the excess-risk diagnostics: which bound applies, why, and what the number means.

    Examples
    --------
    >>> from fdakpl.diagnostics.applicability import Applicability
    >>> diagnostics_notes({"applicability": Applicability(None, "not applicable", ["the loss is huber"]),
    ...                    "bound": None, "domain_length": 1.0})[0]
    'Excess-risk bound: not applicable (the loss is huber).'
    """
    app, bound = diag["applicability"], diag["bound"]
    if app.status == "not applicable":
        return [f"Excess-risk bound: not applicable ({'; '.join(app.reasons)})."]
    if bound is None:
        return ["Excess-risk bound: not available (R could not be estimated)."]
    out = []
    if app.status == "indicative":
        out.append(f"Excess-risk bound: Proposition {app.proposition}, indicative only: {'; '.join(app.reasons)}.")
    else:
        out.append(f"Excess-risk bound: Proposition {app.proposition} applies to this fit.")
    out.append("The bound is the supplement's intermediate inequality at lambda* (it corrects the printed "
               "closed form of Prop. 5.2, see the guide). It holds with probability 1 - eta for the true "
               "constants; L and R are plug-in estimates (R at the fitted lambda, not at lambda*), so the "
               "number is an estimate of the bound, for comparing n, m and d, not an error estimate.")
    if diag.get("sqrt_n_rate") is not None:
        out.append("m >= sqrt(n) is not a condition for the bound: it is where the bound keeps the n^-1/2 rate "
                   "of fully observed curves.")
    if diag["domain_length"] != 1.0:
        out.append(f"The response domain has length {diag['domain_length']:.4g}, not 1: the bound is stated on "
                   "the domain mapped onto [0, 1] (L and M(d) times sqrt(length)) and divided by the length, "
                   "i.e. for the excess risk per unit length.")
    if diag.get("kappa_how", "").startswith("the largest"):
        out.append("kappa is the largest k(x_i, x_i) over the training inputs (the kernel's diagonal varies), "
                   "a plug-in like L.")
    for check in app.checks:
        if check.startswith(("redundant dictionary", "atoms not of unit norm")):
            out.append(check[0].upper() + check[1:] + ".")
    return out


def _criterion_score(res: Any) -> tuple[str, float] | None:
    """The summary's row for the criterion that chose lambda, at the choice (from the stored criteria)."""
    key = res.criterion.key
    if key == "cv" and res.cv_result is not None:
        i, j = res.cv_result["best_index"]
        return "CV score", float(res.cv_result["scores"][i, j])
    if key not in {"gcv", "loo", "group_loo"}:
        return None
    name = {"gcv": "GCV score", "loo": "LOO score", "group_loo": "Leave-group-out score"}[key]
    tun = res.tuning
    if tun is not None and tun.criterion == key:  # the table the choice was made from
        return name, tun.score
    crit = res.criteria
    if crit is None:
        return None
    values = getattr(crit, key, None)
    if values is None:
        return None
    i = int(np.argmin(np.abs(np.asarray(crit.lams) - res.lam)))
    return name, float(values[i])


def _added(res: Any) -> str:
    """How subject terms enter the kernel, for the line that says how the kernels combine."""
    subjects = res.model.parsed.subject_terms
    return f"; the subject term{'s' if len(subjects) > 1 else ''} {', '.join(subjects)} added" if subjects else ""


def tuning_route(res: Any) -> str:
    """What the tuning chose and by which criterion, in words (the summary's ``Tuning`` row).

    Examples
    --------
    >>> from fdakpl import FunctionalRegression, datasets
    >>> res = FunctionalRegression("rcst ~ cca", datasets.dti_first_visits(), interpolate_inputs=True,
    ...                            progress=False).fit()
    >>> tuning_route(res)
    'width of cca, b, lambda and atoms by LOO'
    """
    crit = res.criterion
    if crit.key == "cv" and res.cv_result is not None and res.model.param_grid:
        keys = ", ".join(res.model.param_grid)
        return f"{keys} and lambda by {crit.name} (param_grid)"
    what = []
    tun = res.tuning
    if tun is not None:
        subjects = set(res.model.parsed.subject_terms)
        widths = [t for t in tun.terms if t not in subjects]
        if widths:
            what.append(f"width of {', '.join(widths)}")
        if subjects & set(tun.terms):
            what.append(f"weight of {', '.join(t for t in tun.terms if t in subjects)}")
        if not np.isnan(tun.b):
            what.append("b")
    fixed = crit.key == "fixed"
    if not fixed:
        what.append("lambda")
    if any(n.startswith("dictionary='auto'") for n in res.notes):
        what.append("atoms")
    if not what:
        return "none (lambda fixed, kernels given)"
    how = _short(crit) if not fixed else "LOO at the fixed lambda"
    text = (", ".join(what[:-1]) + " and " + what[-1]) if len(what) > 1 else what[0]
    return f"{text} by {how}"


def _short(crit: Any) -> str:
    """A criterion's name in a few letters (``LOO``, ``LOGO``, ``GCV``, ``5-fold CV``)."""
    key = getattr(crit, "key", "")
    if key == "cv":
        return f"{getattr(crit, 'n_splits', 'K')}-fold CV"
    return {"loo": "LOO", "group_loo": "LOGO", "gcv": "GCV"}.get(key, crit.name)


def held_out_line(res: Any) -> tuple[str, str] | None:
    """The model's held-out error against the mean curve's: leave-one-curve-out (leave-one-group-out with
    ``groups=``) at the fitted lambda and as lambda grows without bound, where the fit is the mean curve;
    both from the fit's ridge path (``res.held_out``, read from the path on first use and saved with the model),
    the mean function held at its full-data value in both. Fits without a closed-form path show their criterion's
    score alone.

    Examples
    --------
    >>> from fdakpl import FunctionalRegression, datasets
    >>> res = FunctionalRegression("rcst ~ cca", datasets.dti_first_visits(), interpolate_inputs=True,
    ...                            progress=False).fit()
    >>> held_out_line(res)
    ('LOO error', '0.003923; mean curve 0.004536 (13.5% lower)')
    """
    held = getattr(res, "held_out", None)
    if held is not None:
        name = "LOGO error" if held.get("groups") else "LOO error"
        model, mean = held["model"], held["mean"]
        if not (np.isfinite(model) and np.isfinite(mean) and mean > 0):
            return None
        change = 100.0 * (1.0 - model / mean)
        verdict = f"{change:.3g}% lower" if change > 0 else f"{-change:.3g}% higher: no better than the mean"
        return name, f"{fmt_number(model)}; mean curve {fmt_number(mean)} ({verdict})"
    score = _criterion_score(res)
    if score is None:
        return None
    return score[0], fmt_number(score[1])


def compact_bound(diag: dict[str, Any]) -> str:
    """The excess-risk block in one or two lines: which proposition, the number, what it means.

    Examples
    --------
    >>> compact_bound({"bound_applicable": False, "bound_reason": "the loss is logcosh"})
    'Excess-risk bound: not applicable (the loss is logcosh).'
    """
    applies, reason = bound_applicability(diag)
    bound = diag.get("bound")
    head = "Excess-risk bound"
    if not applies:
        return f"{head}: not applicable" + (f" ({reason})." if reason else ".")
    if bound is None:
        return f"{head}: not available (R could not be estimated)."
    app = diag.get("applicability")
    prop = f"Prop. {getattr(app, 'proposition', '?')}"
    if getattr(app, "status", None) == "indicative":
        prop += ", indicative"
    return (f"{head} ({prop}): {fmt_number(bound.bound)} at lambda*, a worst-case guarantee, not this fit's "
            "error; summary(diagnostics=\"full\") says why.")


#: notes whose fact a row of the default summary shows (the atoms in "Tuning", b in "Dictionary"): full mode only
_ROWS_SAY = ("dictionary='auto'", "scale decay b = ")


def _model_rows(res: Any, full: bool) -> list[tuple[str, Any]]:
    est = res.estimator
    obs = res.observations()
    grid = res.response[res.response_dim].values
    dic = est.dictionary_
    from ..kernels import make_output_matrix

    B = est.output_matrix
    b_desc = round_numbers(repr(make_output_matrix(B))) if not isinstance(B, np.ndarray) else f"matrix {B.shape}"
    loss = res.model.loss if isinstance(res.model.loss, str) else repr(res.model.loss)
    pct = 100.0 * obs.index.size / (obs.n_samples * grid.size)
    rows: list[tuple[str, Any]] = [
        ("Formula", res.model.formula),
        ("Curves n", obs.n_samples),
        ("Response", f"{res.response_dim}: {grid.size} pts [{grid[0]:.4g}, {grid[-1]:.4g}], {pct:.1f}% observed"),
        ("Dictionary", f"{round_numbers(dic.describe())}, d = {dic.n_atoms_}; B = {b_desc}"),
        ("Solver", f"{res.solver}, {loss} loss"),
        ("lambda", res.lam),
    ]
    approx = getattr(est, "approx_description_", None)
    if approx or full:
        rows.append(("Approximation", round_numbers(approx or "none (exact)")))
    if full or not obs.fully_observed:  # which integration ran and why: where it matters, and in full
        how = describe_integration(getattr(est, "integration", "auto"), est.integration_, obs.fully_observed)
        if not full:  # the rule and the reason, without the description: "interpolate (auto: dense curves with gaps)"
            how = f"{est.integration_} {how[how.rindex('('):]}"
        rows.append(("Integration", how))
    if full:
        rows.append(("Observed points", obs.index.size))
    if res.model.parsed.subject_terms and hasattr(est, "dual_coef_B_"):
        from .subjects import subject_rows

        rows += subject_rows(res)
    rows.append(("Tuning", tuning_route(res)))
    return rows


def _fit_rows(res: Any, diag: dict[str, Any], full: bool = False) -> list[tuple[str, Any]]:
    r2p = res.r2_pointwise.values
    Y = res.response

    def trio(a: np.ndarray) -> str:
        if not np.isfinite(a).any():  # sparse: no location seen twice
            return "nan"
        return " / ".join(_zero(f(a), 1.0) for f in (np.nanmin, np.nanmedian, np.nanmax))

    rows = [
        ("Integrated R2", _zero(res.r2, 1.0)),
        ("Training MSE", _zero(res.train_mse, float(np.nanvar(Y.values)))),
        ("Effective dof", res.edf),
        ("Repr. error max", _zero(diag["representation_error_max"], 1.0)),
    ]
    if full:
        rows.append(("Repr. error median", _zero(diag["representation_error_median"], 1.0)))
        score = _criterion_score(res)
        rows.append(score if score is not None else ("Fit time (s)", res.fit_seconds))
    return [*rows, ("Pointwise R2", f"{trio(r2p)} (min / median / max)")]


def _diag_rows(diag: dict[str, Any], res: Any, eta: float) -> list[tuple[str, Any]]:
    bound = diag["bound"]
    rows = [
        ("Riesz c_phi", _zero(diag["c_phi"], diag["C_phi"])),
        ("Riesz C_phi", diag["C_phi"]),
        ("Normed family", diag["normed"]),
        ("Riesz (independent)", diag["riesz"]),
        ("cond(Gram)", _cond(diag["gram_condition"])),
        ("cond(K + n lambda I)", _cond(res.condition_numbers["kernel"])),
        ("kappa", diag["kappa"]),
        ("M(d)", diag["M"]),
        ("L = max|y| (plug-in)", diag["L"]),
        ("R = ||h||_H (plug-in)", diag["R"]),
        ("m per curve min/mean", f"{diag['m_min']} / {diag['m_mean']:.4g}"),
        (f"lambda* (eta={eta})", diag["lambda_star"]),
        ("lambda / lambda*", diag["lambda_over_lambda_star"]),
        ("Proposition", diag["applicability"].label),
        ("Bound at lambda*", bound_cell(diag)),
    ]
    if bound is not None and bound_applies(diag):
        for k, v in bound.terms.items():
            rows.append((f"  term {k}", _zero(v, bound.bound)))
        at = diag["bound_at_lambda"]
        rows.append(("Bound at fitted lambda", at.bound if at is not None else "none: lambda < lambda*"))
        if bound.sqrt_n_rate is not None:
            rows.append(("m >= sqrt(n) (n^-1/2 rate)", bound.sqrt_n_rate))
    return rows


def build_summary(res: Any, eta: float = 0.05, importance: Any = "auto",
                  diagnostics: str = "compact") -> FunctionalSummary:
    """Build the summary of a :class:`~fdakpl.results.FunctionalRegressionResults`.

    Statistician first: the model and how it was tuned, the fit with the held-out error against the mean
    curve's, one row per term (:mod:`fdakpl.results.term_table`), the excess-risk bound in one or two lines,
    then the notes. ``diagnostics="full"`` adds the table of section 5's constants and the notes on them.
    ``importance``: see :func:`fdakpl.results.importance.importance_for_summary`.
    """
    if diagnostics not in {"compact", "full"}:
        raise ValueError(f"diagnostics must be 'compact' or 'full', got {diagnostics!r}")
    full = diagnostics == "full"
    diag = res.diagnostics(eta)
    from .importance import importance_for_summary
    from .term_table import term_records, term_table

    imp, imp_note = importance_for_summary(res, importance)
    smry = FunctionalSummary()
    smry.tables.append(kv_table(_model_rows(res, full), "Functional regression (kernel-based projection learning)"))
    fit = kv_table(_fit_rows(res, diag, full), "Fit")
    line = held_out_line(res)
    if line is not None:
        fit.pairs.append(line)
    smry.tables.append(fit)
    title = f"Terms (combined by {res.model.combine}{_added(res)}" + (f"; {imp.n_permutations} permutations per term)"
                                                          if imp is not None else ")")
    smry.tables.append(term_table(term_records(res, imp), imp, title=title))
    if full:
        smry.tables.append(kv_table(_diag_rows(diag, res, eta), "Excess-risk diagnostics (Bouche et al. 2021, "
                                                                "section 5)"))
    extra = [compact_bound(diag)] if not full else [diagnostics_verdict(diag, res)]
    if full:
        kern = round_numbers(", ".join(f"{t}: {k!r}" for t, k in res.kernels.items()))
        extra += [f"Kernels: {kern} (combined by {res.model.combine}{_added(res)}).", f"Solver: {res.solver_reason}."]
        extra += diagnostics_notes(diag)
        if not np.isfinite(diag["gram_condition"]):
            extra.append("cond(Gram) = inf: the Gram matrix is singular (some atoms are linear combinations of "
                         "others: a redundant dictionary, c_phi = 0); the ridge solution is still unique.")
    extra += condition_warnings(res.condition_numbers, diag["riesz"])
    if res.lam_on_edge and not any("lambda" in n and "grid" in n for n in res.notes):
        extra.append("The chosen lambda lies on the edge of its grid: extend lam_grid.")
    if imp is not None:
        extra.append(imp.scheme_note())
    if imp_note:
        extra.append(imp_note)
    notes = list(dict.fromkeys(res.notes))
    shown = notes if full else [n for n in notes if not n.startswith(_ROWS_SAY)]
    extra += [f"Note: {n}" for n in shown]
    if len(shown) < len(notes):
        k = len(notes) - len(shown)
        extra.append(f"{k} more note{'s' if k > 1 else ''} on the tuning: res.notes or "
                     "summary(diagnostics=\"full\").")
    smry.add_extra_txt(extra)
    return smry
