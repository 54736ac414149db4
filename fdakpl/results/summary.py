"""FDA-style summary tables of a fitted functional regression (statsmodels ``Summary``)."""

from __future__ import annotations

from typing import Any

import numpy as np
from statsmodels.iolib.summary import Summary
from statsmodels.iolib.table import SimpleTable
from statsmodels.iolib.tableformatting import fmt_2cols

__all__ = ["build_summary", "condition_warnings", "diagnostics_notes", "kv_table"]

_FMT = dict(fmt_2cols, data_fmts=["%-24s", "%-28s", "%-24s", "%s"], data_aligns="l", colwidths=None)


def _g(x: Any, digits: int = 4) -> str:
    if x is None:
        return "-"
    if isinstance(x, bool | np.bool_):
        return "yes" if x else "no"
    if isinstance(x, int | np.integer):
        return str(int(x))
    if isinstance(x, float | np.floating):
        if not np.isfinite(x):
            return str(x)
        return f"{x:.{digits}g}"
    return str(x)


def kv_table(pairs: list[tuple[str, Any]], title: str) -> SimpleTable:
    """Two columns of ``key: value`` pairs, statsmodels style.

    Examples
    --------
    >>> print(kv_table([("n", 3), ("d", 5)], "Model").as_text().splitlines()[2].split())
    ['n:', '3', 'd:', '5']
    """
    half = (len(pairs) + 1) // 2
    left, right = pairs[:half], pairs[half:]
    rows = []
    for i in range(half):
        lk, lv = left[i]
        rk, rv = right[i] if i < len(right) else ("", "")
        rows.append([f"{lk}:", _g(lv), f"{rk}:" if rk else "", _g(rv) if rk else ""])
    return SimpleTable(rows, title=title, txt_fmt=_FMT)


def _short(text: str, width: int = 28) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


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


def diagnostics_notes(diag: dict[str, Any]) -> list[str]:
    """The notes under the excess-risk diagnostics: which bound applies, why, and what the number means.

    Examples
    --------
    >>> from fdakpl.applicability import Applicability
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


def build_summary(res: Any, eta: float = 0.05, importance: Any = "auto") -> Summary:
    """Build the summary of a :class:`~fdakpl.results.FunctionalRegressionResults`.

    ``importance``: see :func:`fdakpl.results.importance.importance_for_summary`.
    """
    est = res.estimator
    obs = res._obs()
    Y = res.response
    grid = Y[res.response_dim].values
    diag = res.diagnostics(eta)
    dic = est.dictionary_
    kern = ", ".join(f"{t}: {k!r}" for t, k in res.kernels.items())
    from ..kernels import make_output_matrix

    B = est.output_matrix
    b_desc = repr(make_output_matrix(B)) if not isinstance(B, np.ndarray) else f"matrix {B.shape}"
    loss = res.model.loss if isinstance(res.model.loss, str) else repr(res.model.loss)
    pct = 100.0 * obs.index.size / (obs.n_samples * grid.size)
    model_rows = [
        ("Formula", res.model.formula),
        ("Curves n", obs.n_samples),
        ("Response grid", f"{res.response_dim}: {grid.size} pts [{grid[0]:.3g}, {grid[-1]:.3g}]"),
        ("Observed points", f"{pct:.1f}% ({obs.index.size})"),
        ("Dictionary", _short(dic.describe())),
        ("Atoms d", dic.n_atoms_),
        ("Output matrix B", _short(b_desc)),
        ("Loss", loss),
        ("Solver", res.solver),
        ("Approximation", _short(getattr(getattr(est, "approx_", None), "approx_description_", None)
                                 or "none (exact)")),
        ("Integration", est.integration_),
        ("lambda", res.lam),
        ("lambda chosen by", res.lam_how),
    ]
    r2p = res.r2_pointwise.values
    fit_rows = [
        ("Integrated R2", res.r2),
        ("Pointwise R2 min", np.nanmin(r2p)),
        ("Pointwise R2 median", np.nanmedian(r2p)),
        ("Pointwise R2 max", np.nanmax(r2p)),
        ("Training MSE", res.train_mse),
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
    fit_rows += [("Repr. error median", diag["representation_error_median"]),
                 ("Repr. error max", diag["representation_error_max"])]
    bound, app = diag["bound"], diag["applicability"]
    diag_rows = [
        ("Riesz c_phi", diag["c_phi"]),
        ("Riesz C_phi", diag["C_phi"]),
        ("Normed family", diag["normed"]),
        ("Riesz (independent)", diag["riesz"]),
        ("cond(Gram)", diag["gram_condition"]),
        ("cond(K + n lambda I)", res.condition_numbers["kernel"]),
        ("kappa", diag["kappa"]),
        ("M(d)", diag["M"]),
        ("L = max|y| (plug-in)", diag["L"]),
        ("R = ||h||_H (plug-in)", diag["R"]),
        ("m per curve min/mean", f"{diag['m_min']} / {diag['m_mean']:.1f}"),
        (f"lambda* (eta={eta})", diag["lambda_star"]),
        ("lambda / lambda*", diag["lambda_over_lambda_star"]),
        ("Proposition", app.label),
        ("Bound at lambda*", "not applicable" if bound is None else bound.bound),
    ]
    if bound is not None:
        for k, v in bound.terms.items():
            diag_rows.append((f"  term {k}", v))
        at = diag["bound_at_lambda"]
        diag_rows.append(("Bound at fitted lambda", at.bound if at is not None else "none: lambda < lambda*"))
        if bound.sqrt_n_rate is not None:
            diag_rows.append(("m >= sqrt(n) (n^-1/2 rate)", bound.sqrt_n_rate))
    smry = Summary()
    smry.tables.append(kv_table(model_rows, "Functional regression (kernel-based projection learning)"))
    smry.tables.append(kv_table(fit_rows, "Fit"))
    smry.tables.append(kv_table(diag_rows, "Excess-risk diagnostics (Bouche et al. 2021, section 5)"))
    from .importance import importance_for_summary

    imp, imp_note = importance_for_summary(res, importance)
    if imp is not None:
        smry.tables.append(imp.table())
    extra = [f"Kernels: {kern} (combined by {res.model.combine}).", f"Solver: {res.solver_reason}."]
    extra += diagnostics_notes(diag)
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
