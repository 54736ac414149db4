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
from ..ridge.path import RidgePath
from ..tuning.criteria import DEFAULT_LAMBDAS
from ..utils.docstrings import dti_fit_example, fill_doc
from ..utils.progress import progress as bar

__all__ = ["AUTO_MAX_SAMPLES", "AUTO_PERMUTATIONS", "TermImportance", "TermMatrices", "closed_form_path",
           "importance_for_summary", "term_importance"]

#: the summary computes importance by default up to this many curves (measured: benchmarks/bench_importance.py)
AUTO_MAX_SAMPLES = 300
#: permutations per term of summary(importance=True) (smallest attainable p-value 0.005)
AUTO_PERMUTATIONS = 199


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


class TermMatrices:
    """The per-term kernel matrices of a closed-form fit, to refit its LOO error with a term permuted or dropped.

    Only the input kernel changes when a term is permuted or removed (the mean function, the dictionary and
    the projections of the responses depend on the responses alone), so each refit is one eigendecomposition
    of an ``n x n`` matrix built from these matrices.

    Examples
    --------
    >>> from fdakpl import FunctionalRegression, datasets
    >>> res = FunctionalRegression("rcst ~ cca", datasets.dti_first_visits(), interpolate_inputs=True,
    ...                            progress=False).fit()
    >>> tm = TermMatrices(res.path)
    >>> tm.terms, bool(np.isclose(tm.loo(tm.combined(), np.array([res.lam]))[0], res.path.loo([res.lam])[0]))
    (['cca'], True)
    """

    def __init__(self, path: RidgePath) -> None:
        kernel = path.kernel
        self.path = path
        self.terms: list[str] = list(kernel.kernels) if isinstance(kernel, (Product, Sum)) else []
        self.op = kernel.op if isinstance(kernel, (Product, Sum)) else "*"
        problem = path.problem
        X, W = problem.inputs, problem.input_weights or {}
        self.matrices = {t: k(X[t], None, W.get(t)) for t, k in kernel.kernels.items()} if self.terms else {}

    def check(self, terms: list[str]) -> None:
        """Refuse names that are not terms of the fitted kernel."""
        unknown = [t for t in terms if t not in self.terms]
        if unknown:
            raise ValueError(f"{unknown} are not terms of the fitted kernel; terms: {self.terms}")

    def combined(self, replace: dict[str, np.ndarray] | None = None, drop: str | None = None) -> np.ndarray:
        """The kernel matrix with some terms' matrices replaced (``replace``) or one term dropped."""
        n = self.path.n
        mats = [(replace or {}).get(t, m) for t, m in self.matrices.items() if t != drop]
        if not mats:
            return np.ones((n, n))
        out = mats[0].copy()
        for m in mats[1:]:
            out = out * m if self.op == "*" else out + m
        return out

    def loo(self, K: np.ndarray, lams: np.ndarray) -> np.ndarray:
        """Exact leave-one-curve-out error along ``lams`` with kernel matrix ``K`` (same problem and ``B``)."""
        path = self.path
        return RidgePath.fit(path.problem, path.kernel, path.B, path.identity, K=K).loo(lams)

    def null_loo(self, term: str, lam: float, n_permutations: int, random_state: Any = 0,
                 progress: bool | None = None) -> np.ndarray:
        """LOO errors at ``lam`` with ``term``'s values permuted across curves, one per permutation."""
        rng = np.random.default_rng(random_state)
        Kt = self.matrices[term]
        out = np.empty(n_permutations)
        lams = np.array([lam])
        for b in bar(range(n_permutations), desc=f"permutations ({term})", enabled=progress):
            p = rng.permutation(self.path.n)
            out[b] = self.loo(self.combined({term: Kt[np.ix_(p, p)]}), lams)[0]
        return out


def closed_form_path(res: Any) -> RidgePath:
    """The fit's ridge path (rebuilt once for a loaded model), or an error saying that importance and
    permutation tests need one."""
    if res.training_path() is None:
        raise ValueError("term importance and permutation tests use the closed-form leave-one-curve-out error; "
                         "refit with solver='eig' (the default for the square loss)")
    return res.path


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
    path = closed_form_path(res)
    tm = TermMatrices(path)
    terms = tm.terms if terms is None else list(terms)
    tm.check(terms)
    if n_permutations < 0:
        raise ValueError(f"n_permutations must be >= 0, got {n_permutations}")
    lam = np.array([res.lam])
    grid = np.asarray(res.lam_grid if res.lam_grid is not None else DEFAULT_LAMBDAS, dtype=float)
    loo_obs = float(path.loo(lam)[0])
    best_full = float(np.nanmin(path.loo(grid)))
    show = res.model.progress if progress is None else progress
    drop, perm, pval = (np.full(len(terms), np.nan) for _ in range(3))
    for i, t in enumerate(terms):
        drop[i] = float(np.nanmin(tm.loo(tm.combined(drop=t), grid))) - best_full
        if n_permutations:
            null = tm.null_loo(t, res.lam, n_permutations, random_state, show)
            perm[i] = float(np.mean(null)) - loo_obs
            pval[i] = (1 + np.sum(null <= loo_obs)) / (n_permutations + 1)
    return TermImportance(terms, loo_obs, drop, perm, pval, n_permutations)


def importance_for_summary(res: Any, importance: Any) -> tuple[TermImportance | None, str | None]:
    """Resolve the summary's ``importance`` option: ``"auto"``, ``True``, ``False`` or a number of permutations.

    The summary formats what was computed: ``"auto"`` shows the importance computed last (by
    ``res.term_importance()`` or an earlier ``summary(importance=...)``), else a note saying how to ask for it;
    ``True`` computes it with :data:`AUTO_PERMUTATIONS` permutations per term (once: results keep it), a number
    with that many.

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
    if isinstance(importance, str):
        if importance != "auto":
            raise ValueError(f"importance must be 'auto', True, False or a number of permutations, got {importance!r}")
        computed = res.computed_importance()
        if computed is not None:
            return computed, None
        if getattr(res.estimator, "route_", None) != "eigendecomposition":  # no closed-form path: none to offer
            return None, None
        return None, ("Term importance (drop and permutation, with p-values) is computed on request: "
                      "res.term_importance() or summary(importance=True).")
    n_perm = AUTO_PERMUTATIONS if importance is True else int(importance)
    return res.term_importance(n_permutations=n_perm), None
