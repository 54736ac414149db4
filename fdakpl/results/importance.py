"""Term importance from the exact leave-one-curve-out error (one row per term, as mgcv's ``summary.gam``).

For each term ``t`` of a closed-form fit:

* ``delta_drop``: increase of the leave-one-curve-out (LOO) error when ``t``'s
  kernel is removed (replaced by the constant 1 in a product, dropped from a
  sum; a lone term leaves the constant kernel, i.e. a mean-like model), each
  model at its own best lambda on the fit's lambda path (closed-form LOO, one
  eigendecomposition per model);
* ``delta_perm``: mean increase of the LOO error at the fitted lambda when
  ``t``'s values are permuted across curves (the other terms fixed);
* ``p_value``: the permutation p-value ``(1 + #{LOO_perm <= LOO_obs}) / (B + 1)``
  of the same permutations, i.e. :meth:`FunctionalRegressionResults.permutation_test`
  for every term (same permutations for the same ``random_state``).

Only the input kernel changes when a term is permuted or removed (the mean
function, the dictionary and the projections of the responses depend on the
responses alone), so each refit is one eigendecomposition of an ``n x n``
matrix built from cached per-term kernel matrices.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..kernels import Product, Sum
from ..solvers.closed_form import decompose
from ..tuning.selection import DEFAULT_LAMBDAS, ridge_path
from ..utils.docstrings import dti_fit_example, fill_doc
from ..utils.progress import progress as bar

__all__ = ["AUTO_MAX_SAMPLES", "AUTO_PERMUTATIONS", "TermImportance", "importance_for_summary", "term_importance"]

#: the summary computes importance by default up to this many curves (measured: benchmarks/bench_importance.py)
AUTO_MAX_SAMPLES = 300
#: permutations per term in the default summary (smallest attainable p-value 0.05)
AUTO_PERMUTATIONS = 19


@dataclass
class TermImportance:
    """Importance of the terms of a fit (arrays aligned with ``terms``).

    Attributes
    ----------
    terms : list of str
    loo : float
        LOO error of the fitted model at its lambda.
    delta_drop, delta_perm, p_value : numpy.ndarray
    n_permutations : int
    """

    terms: list[str]
    loo: float
    delta_drop: np.ndarray
    delta_perm: np.ndarray
    p_value: np.ndarray
    n_permutations: int

    def table(self):
        """The table as a statsmodels ``SimpleTable`` (one row per term), for the summary.

        Examples
        --------
        >>> imp = TermImportance(["a"], 1.0, np.array([0.5]), np.array([0.4]), np.array([0.01]), 99)
        >>> "p-value" in imp.table().as_text()
        True
        """
        from statsmodels.iolib.table import SimpleTable

        def g(x: float) -> str:
            return "-" if not np.isfinite(x) else f"{x:.4g}"

        rows = [[t, g(d), g(p), g(100.0 * p / self.loo) if np.isfinite(p) else "-", g(pv)]
                for t, d, p, pv in zip(self.terms, self.delta_drop, self.delta_perm, self.p_value, strict=True)]
        return SimpleTable(rows, headers=["term", "dLOO drop", "dLOO perm", "perm %", "p-value"],
                           title=f"Term importance (leave-one-curve-out error {self.loo:.4g}; "
                                 f"{self.n_permutations} permutations per term)")

    def to_frame(self):
        """The table as a pandas DataFrame indexed by term.

        Examples
        --------
        >>> TermImportance(["a"], 1.0, np.array([0.5]), np.array([0.4]), np.array([0.01]), 99).to_frame().shape
        (1, 4)
        """
        import pandas as pd

        return pd.DataFrame({"delta_LOO_drop": self.delta_drop, "delta_LOO_perm": self.delta_perm,
                             "rel_increase_perm": self.delta_perm / self.loo, "p_value": self.p_value},
                            index=pd.Index(self.terms, name="term"))


class _LooPath:
    """Exact LOO error of the fit's data for any input kernel matrix."""

    def __init__(self, res: Any) -> None:
        from ..data.integration import integration_weights
        from ..data.preprocessing import prepare_response

        est = res.estimator
        obs, info = prepare_response(res.response, None, est.response_info_.domain)
        if est.mean_ is not None:
            obs = obs.with_values(obs.value - est.mean_(obs.location))
        self.obs = obs
        self.w, _ = integration_weights(obs, info.domain, est.integration_)
        self.phi = est.dictionary_.evaluate(obs.grid if obs.grid is not None else obs.location)
        self.est = est

    def __call__(self, K: np.ndarray, lams: np.ndarray) -> np.ndarray:
        est = self.est
        dec = decompose(K, est.gram_, est.B_, est.nu_)
        return ridge_path(dec, self.phi, self.obs, self.w, lams, loo=True).loo


@fill_doc(fit=dti_fit_example("rcst ~ cca + pasat"))
def term_importance(res: Any, terms: list[str] | None = None, n_permutations: int = 99, random_state: Any = 0,
                    progress: bool | None = None) -> TermImportance:
    """Drop and permutation importance of each term from the closed-form LOO error.

    Parameters
    ----------
    res : FunctionalRegressionResults
        A fit with a closed-form solver (``solver="eig"``).
    terms : list of str, optional
        Default: every term of the formula.
    n_permutations : int
        Permutations per term (0: drop importance only, NaN p-values).
    random_state : int, numpy.random.Generator or None, default 0
        Seed (the default 0 gives the same result on every run, ``None`` draws fresh randomness);
        term ``t`` uses the same permutations as ``res.permutation_test(t, random_state=...)``.
    progress : bool, optional
        Progress bar (default: the model's setting).

    Returns
    -------
    TermImportance

    Examples
    --------
    %(fit)s
    >>> imp = term_importance(res, n_permutations=9)
    >>> imp.terms, imp.p_value.shape
    (['cca', 'scalars'], (2,))
    """
    est = res.estimator
    if getattr(est, "decomposition_", None) is None:
        raise ValueError("term importance uses the closed-form leave-one-curve-out error; refit with solver='eig' "
                         "(the default for the square loss)")
    kernel = est._kernel()
    all_terms = list(kernel.kernels) if isinstance(kernel, (Product, Sum)) else []
    terms = all_terms if terms is None else list(terms)
    unknown = [t for t in terms if t not in all_terms]
    if unknown:
        raise ValueError(f"{unknown} are not terms of the fitted kernel; terms: {all_terms}")
    if n_permutations < 0:
        raise ValueError(f"n_permutations must be >= 0, got {n_permutations}")
    op = kernel.op
    Ks = {t: k(est.X_fit_[t], None, est.X_weights_.get(t)) for t, k in kernel.kernels.items()}
    n = est.n_samples_fit_

    def combine(mats: list[np.ndarray]) -> np.ndarray:
        if not mats:
            return np.ones((n, n))
        out = mats[0].copy()
        for m in mats[1:]:
            out = out * m if op == "*" else out + m
        return out

    loo = _LooPath(res)
    lam = np.array([res.lam])
    grid = np.asarray(res.lam_grid if res.lam_grid is not None else DEFAULT_LAMBDAS, dtype=float)
    K_full = combine(list(Ks.values()))
    loo_obs = float(loo(K_full, lam)[0])
    best_full = float(np.nanmin(loo(K_full, grid)))
    show = res.model.progress if progress is None else progress
    drop, perm, pval = (np.full(len(terms), np.nan) for _ in range(3))
    steps = [(i, b) for i in range(len(terms)) for b in range(n_permutations)]
    rngs = {t: np.random.default_rng(random_state) for t in terms}
    for i, t in enumerate(terms):
        rest = [Ks[u] for u in Ks if u != t]
        drop[i] = float(np.nanmin(loo(combine(rest), grid))) - best_full
    null = {t: np.empty(n_permutations) for t in terms}
    for i, b in bar(steps, desc="term importance (permutations)", enabled=show, total=len(steps)):
        t = terms[i]
        p = rngs[t].permutation(n)
        Kt = Ks[t][np.ix_(p, p)]
        null[t][b] = loo(combine([Kt if u == t else Ks[u] for u in Ks]), lam)[0]
    for i, t in enumerate(terms):
        if n_permutations:
            perm[i] = float(np.mean(null[t])) - loo_obs
            pval[i] = (1 + np.sum(null[t] <= loo_obs)) / (n_permutations + 1)
    return TermImportance(terms, loo_obs, drop, perm, pval, n_permutations)


def importance_for_summary(res: Any, importance: Any) -> tuple[TermImportance | None, str | None]:
    """Resolve the summary's ``importance`` option: ``"auto"``, ``True``, ``False`` or a number of permutations.

    ``"auto"``: :data:`AUTO_PERMUTATIONS` permutations per term when the fit is closed-form with at most
    :data:`AUTO_MAX_SAMPLES` curves, else none (with a note saying how to ask for it).

    Examples
    --------
    >>> from fdakpl import FunctionalRegression, datasets
    >>> res = FunctionalRegression("rcst ~ cca", datasets.dti_first_visits(), interpolate_inputs=True,
    ...                            progress=False).fit()
    >>> importance_for_summary(res, False)
    (None, None)
    """
    if importance is False or importance is None:
        return None, None
    closed = getattr(res.estimator, "decomposition_", None) is not None
    n = res.estimator.n_samples_fit_
    if isinstance(importance, str):
        if importance != "auto":
            raise ValueError(f"importance must be 'auto', True, False or a number of permutations, got {importance!r}")
        if not closed:
            return None, "Term importance needs the closed-form solver (solver='eig'); not computed."
        if n > AUTO_MAX_SAMPLES:
            return None, (f"Term importance not computed by default for n > {AUTO_MAX_SAMPLES} curves; "
                          "ask for it with summary(importance=True) or summary(importance=<permutations>).")
        n_perm = AUTO_PERMUTATIONS
    elif importance is True:
        n_perm = 99
    else:
        n_perm = int(importance)
    return term_importance(res, n_permutations=n_perm), None
