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

__all__ = ["bound_applicability", "bound_applies", "bound_cell", "build_summary", "condition_warnings",
           "diagnostics_notes", "diagnostics_verdict"]


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


def build_summary(res: Any, eta: float = 0.05, importance: Any = "auto") -> FunctionalSummary:
    """Build the summary of a :class:`~fdakpl.results.FunctionalRegressionResults`.

    ``importance``: see :func:`fdakpl.results.importance.importance_for_summary`.
    """
    est = res.estimator
    obs = res.observations()
    Y = res.response
    grid = Y[res.response_dim].values
    diag = res.diagnostics(eta)
    dic = est.dictionary_
    kern = round_numbers(", ".join(f"{t}: {k!r}" for t, k in res.kernels.items()))
    from ..kernels import make_output_matrix

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
        ("Approximation", round_numbers(getattr(est, "approx_description_", None)
                                        or "none (exact)")),
        ("Integration", describe_integration(getattr(est, "integration", "auto"), est.integration_,
                                             obs.fully_observed)),
        ("lambda", res.lam),
        ("lambda chosen by", res.lam_how),
    ]
    tun = getattr(res, "tuning", None)
    if tun is not None:  # hyper-parameters chosen jointly with lambda (fdakpl.tuning.search)
        for t, m in zip(tun.terms, tun.multiples, strict=True):
            model_rows.append((f"Width of {t}", f"{res.kernels[t].sigma:.3g} ({m:g} x median)"))
        if not np.isnan(tun.b):
            model_rows.append(("b (scale decay)", f"{tun.b:g}"))
    r2p = res.r2_pointwise.values
    fit_rows = [
        ("Integrated R2", _zero(res.r2, 1.0)),
        ("Pointwise R2 min", _zero(np.nanmin(r2p), 1.0) if np.isfinite(r2p).any() else np.nan),  # sparse: no
        ("Pointwise R2 median", _zero(np.nanmedian(r2p), 1.0) if np.isfinite(r2p).any() else np.nan),  # location
        ("Pointwise R2 max", _zero(np.nanmax(r2p), 1.0) if np.isfinite(r2p).any() else np.nan),  # seen twice
        ("Training MSE", _zero(res.train_mse, float(np.nanvar(Y.values)))),
        ("Effective dof", res.edf),
    ]
    score = _criterion_score(res)
    if score is not None:
        fit_rows.append(score)
    else:
        fit_rows.append(("Fit time (s)", res.fit_seconds))
    fit_rows += [("Repr. error median", _zero(diag["representation_error_median"], 1.0)),  # relative errors
                 ("Repr. error max", _zero(diag["representation_error_max"], 1.0))]
    bound, app = diag["bound"], diag["applicability"]
    diag_rows = [
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
        ("Proposition", app.label),
        ("Bound at lambda*", bound_cell(diag)),
    ]
    if bound is not None and bound_applies(diag):
        for k, v in bound.terms.items():
            diag_rows.append((f"  term {k}", _zero(v, bound.bound)))
        at = diag["bound_at_lambda"]
        diag_rows.append(("Bound at fitted lambda", at.bound if at is not None else "none: lambda < lambda*"))
        if bound.sqrt_n_rate is not None:
            diag_rows.append(("m >= sqrt(n) (n^-1/2 rate)", bound.sqrt_n_rate))
    smry = FunctionalSummary()
    smry.tables.append(kv_table(model_rows, "Functional regression (kernel-based projection learning)"))
    smry.tables.append(kv_table(fit_rows, "Fit"))
    smry.tables.append(kv_table(diag_rows, "Excess-risk diagnostics (Bouche et al. 2021, section 5)"))
    from .importance import importance_for_summary

    imp, imp_note = importance_for_summary(res, importance)
    if imp is not None:
        smry.tables.append(imp.table())
    extra = [diagnostics_verdict(diag, res),
             f"Kernels: {kern} (combined by {res.model.combine}).", f"Solver: {res.solver_reason}."]
    extra += diagnostics_notes(diag)
    if not np.isfinite(diag["gram_condition"]):
        extra.append("cond(Gram) = inf: the Gram matrix is singular (some atoms are linear combinations of others: "
                     "a redundant dictionary, c_phi = 0); the ridge solution is still unique.")
    extra += condition_warnings(res.condition_numbers, diag["riesz"])
    if res.lam_on_edge:
        extra.append("The chosen lambda lies on the edge of its grid: extend lam_grid.")
    if imp is not None:
        extra.append("Term importance: dLOO drop = increase of the leave-one-curve-out error without the term's "
                     "kernel (each model at its best lambda); dLOO perm = mean increase when the term is permuted "
                     "across curves (fitted lambda); p-value of that permutation test.")
    if imp_note:
        extra.append(imp_note)
    extra += [f"Note: {n}" for n in dict.fromkeys(res.notes)]
    smry.add_extra_txt(extra)
    return smry
