"""Subject terms ``re(ID)`` of a fitted model: the estimated subject effect curves and their share of the variation.

With a subject term the kernel is ``K = K_rest + w Z Z^T`` (``Z``: the indicator rows of the training subjects,
:class:`~fdakpl.factor_kernels.RandomEffect`), so the fitted coefficients ``h(x_i) = B sum_j K(x_i, x_j) alpha_j``
split into a population part and one effect per subject:

.. math::

    u_s = w\\, B \\sum_{j \\in s} \\alpha_j, \\qquad h(x_i) = h_{\\text{rest}}(x_i) + u_{s(i)},

a curve in the response's dictionary for every subject ``s`` seen when fitting (0 for a new one: the population
prediction). The *share* of the subject term is the analogue of a random-effect variance: over the training
curves, the squared L2 norm of the subject effects over the sum of those of the subject effects, the population
part (about its mean) and the residuals, each averaged over curves and locations.

Pure functions of the estimator's arrays (:func:`effect_coefficients`, :func:`variance_shares`); the labelled
results (:func:`subject_effects`, :func:`subject_facts`) read a fitted
:class:`~fdakpl.results.FunctionalRegressionResults`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import xarray as xr

__all__ = ["effect_coefficients", "plot_subject_effects", "subject_effects", "subject_facts", "subject_rows",
           "variance_shares"]


def effect_coefficients(Z: np.ndarray, alpha_B: np.ndarray, weight: float) -> np.ndarray:
    """Dictionary coefficients of the subject effects ``u_s = w sum_{j in s} (alpha B)_j``, shape ``(L, d)``.

    Parameters
    ----------
    Z : numpy.ndarray, shape (n, L)
        Indicator rows of the training curves' subjects.
    alpha_B : numpy.ndarray, shape (n, d)
        ``alpha B`` (``KPLRegressor.dual_coef_B_``).
    weight : float
        ``w`` of the :class:`~fdakpl.factor_kernels.RandomEffect` kernel.

    Examples
    --------
    >>> Z = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 0.0]])
    >>> effect_coefficients(Z, np.array([[1.0], [2.0], [3.0]]), 0.5)
    array([[2.],
           [1.]])
    """
    return weight * (Z.T @ alpha_B)


def variance_shares(subject: np.ndarray, rest: np.ndarray, resid: np.ndarray) -> dict[str, float]:
    """Shares of the subject effects, the population part (about its mean curve) and the residuals in their summed
    mean squares over curves and locations (NaN residuals, at unobserved points, left out).

    Examples
    --------
    >>> s = np.array([[1.0], [-1.0]]); r = np.array([[2.0], [0.0]]); e = np.array([[0.0], [np.nan]])
    >>> variance_shares(s, r, e)
    {'subject': 0.5, 'rest': 0.5, 'residual': 0.0}
    """
    parts = {"subject": float(np.mean(subject ** 2)),
             "rest": float(np.mean((rest - rest.mean(axis=0)) ** 2)),
             "residual": float(np.nanmean(resid ** 2))}
    total = sum(parts.values())
    return {k: (v / total if total > 0 else 0.0) for k, v in parts.items()}


def _term(res: Any, term: str | None) -> str:
    terms = res.model.parsed.subject_terms
    if not terms:
        raise ValueError(f"the formula {res.model.formula!r} has no subject term re(ID)")
    if term is None:
        if len(terms) > 1:
            raise ValueError(f"the formula has several subject terms {terms}; name one, e.g. term={terms[0]!r}")
        return terms[0]
    if term not in terms:
        raise ValueError(f"{term!r} is not a subject term of the formula; its subject terms: {terms}")
    return term


def _levels(res: Any, term: str) -> list[str]:
    design = res.model.parsed.scalar
    ft = next(t for t in design.factor_terms if t.name == term)
    return list(design.factors[ft.factors[0]].levels)


def subject_effects(res: Any, term: str | None = None, at: Any = None) -> xr.DataArray:
    """The estimated effect curve of every subject seen when fitting, ``(subject, <response location dim>)``.

    What the subject term adds to the population prediction of a curve of that subject (a new subject: 0).

    Examples
    --------
    >>> from fdakpl import FunctionalRegression, datasets
    >>> ds = datasets.load_dti().isel(sample=slice(300, 382))
    >>> res = FunctionalRegression("rcst ~ cca + re(ID)", ds, interpolate_inputs=True).fit()
    >>> u = subject_effects(res)
    >>> u.dims, u.sizes["subject"] == len(set(ds["ID"].values))
    (('subject', 'rcst_loc'), True)
    """
    term = _term(res, term)
    est = res.estimator
    if not hasattr(est, "dual_coef_B_"):
        raise ValueError("subject effects need an exact fit (representer coefficients); approx= has none")
    coefs = effect_coefficients(est.X_fit_[term], est.dual_coef_B_, res.kernels[term].weight)
    theta = est.grid_ if at is None else np.asarray(at, dtype=float)
    values = coefs @ est.dictionary_.evaluate(theta).T
    rdim = res.response_dim
    return xr.DataArray(values, dims=("subject", rdim), coords={"subject": _levels(res, term), rdim: theta},
                        name=f"{res.model.parsed.response}_{term}",
                        attrs={"long_name": f"subject effect {term} on {res.model.parsed.response}",
                               "term": term, "weight": res.kernels[term].weight})


def subject_facts(res: Any, term: str | None = None) -> dict[str, Any]:
    """The facts of a subject term: its weight ``w``, the number of subjects and the shares of variation.

    ``share`` is the share of the subject effects (the analogue of a random-effect variance, see the module's
    description); ``shares`` has the population part's and the residuals' too.

    Examples
    --------
    >>> from fdakpl import FunctionalRegression, datasets
    >>> ds = datasets.load_dti().isel(sample=slice(300, 382))
    >>> res = FunctionalRegression("rcst ~ cca + re(ID)", ds, interpolate_inputs=True).fit()
    >>> f = subject_facts(res)
    >>> sorted(f), 0.0 <= f["share"] <= 1.0
    (['n_subjects', 'share', 'shares', 'term', 'weight'], True)
    """
    term = _term(res, term)
    est = res.estimator
    u = subject_effects(res, term)
    Z = est.X_fit_[term]
    per_curve = Z @ u.values  # each training curve's subject effect
    fitted = res.fitted.values
    mean = est.mean_(est.grid_)[None, :] if est.mean_ is not None else 0.0
    rest = fitted - mean - per_curve
    shares = variance_shares(per_curve, rest, res.resid.values)
    return {"term": term, "weight": float(res.kernels[term].weight), "n_subjects": int(Z.shape[1]),
            "share": shares["subject"], "shares": shares}


def subject_rows(res: Any) -> list[tuple[str, str]]:
    """One summary row per subject term: its weight, number of subjects and share of variation.

    Examples
    --------
    >>> from fdakpl import FunctionalRegression, datasets
    >>> ds = datasets.load_dti().isel(sample=slice(300, 382))
    >>> res = FunctionalRegression("rcst ~ cca + re(ID)", ds, interpolate_inputs=True).fit()
    >>> subject_rows(res)[0][0]
    'Subject term re(ID)'
    """
    rows = []
    for term in res.model.parsed.subject_terms:
        f = subject_facts(res, term)
        rows.append((f"Subject term {term}", f"weight {f['weight']:.3g}, {f['n_subjects']} subjects, "
                                             f"{100 * f['share']:.1f}% of the variation"))
    return rows


def plot_subject_effects(res: Any, term: str | None = None, subjects: Any = None, ax: Any = None) -> Any:
    """Plot the estimated subject effect curves (one line per subject; ``subjects``: a subset of their labels).

    Examples
    --------
    >>> from fdakpl import FunctionalRegression, datasets
    >>> ds = datasets.load_dti().isel(sample=slice(300, 382))
    >>> res = FunctionalRegression("rcst ~ cca + re(ID)", ds, interpolate_inputs=True).fit()
    >>> plot_subject_effects(res).get_ylabel()
    'subject effect re(ID) on rcst'
    """
    import matplotlib.pyplot as plt

    u = subject_effects(res, term)
    if subjects is not None:
        wanted = [str(s) if not isinstance(s, (int, float, np.number)) else _key(s) for s in np.atleast_1d(subjects)]
        missing = [s for s in wanted if s not in set(u["subject"].values.tolist())]
        if missing:
            raise ValueError(f"subjects {missing} were not seen when fitting; seen: {u['subject'].values.tolist()}")
        u = u.sel(subject=wanted)
    if ax is None:
        _, ax = plt.subplots()
    theta = u[res.response_dim].values
    for s, row in zip(u["subject"].values.tolist(), u.values, strict=True):
        ax.plot(theta, row, lw=1, alpha=0.7, label=s)
    ax.axhline(0.0, color="black", lw=0.8)
    ax.set_xlabel(res.response_dim)
    ax.set_ylabel(u.attrs["long_name"])
    ax.set_title(f"{u.sizes['subject']} subject effects (weight {u.attrs['weight']:.3g})")
    if u.sizes["subject"] <= 10:
        ax.legend(title="subject", fontsize="small")
    return ax


def _key(v: Any) -> str:
    from ..formula.grammar import level_key

    return level_key(v)
