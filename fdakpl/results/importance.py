"""Term importance from the exact leave-one-curve-out error (one row per term, as mgcv's ``summary.gam``).

For each covariate ``t`` of a closed-form fit (a functional term, a factor term, or a column of the numeric
scalar design, which the ``"scalars"`` kernel combines):

* ``delta_drop``: increase of the leave-one-curve-out (LOO) error when ``t``'s
  kernel is removed (replaced by the constant 1 in a product, dropped from a
  sum; a lone term leaves the constant kernel, i.e. a mean-like model), each
  model at its own best lambda on the fit's lambda path (closed-form LOO, one
  eigendecomposition per model);
* ``delta_perm``: mean increase of the LOO error at the fitted lambda when
  ``t``'s values are permuted (the other terms fixed): across curves, or with
  ``groups=`` across groups (:mod:`fdakpl.results.exchange`), the error then
  being leave-one-group-out;
* ``p_value``: the permutation p-value ``(1 + #{LOO_perm <= LOO_obs}) / (B + 1)``
  of the same permutations, i.e. :meth:`FunctionalRegressionResults.permutation_test`
  for every term (same permutations for the same ``random_state``).

Only the input kernel changes when a term is permuted or removed (the mean
function, the dictionary and the projections of the responses depend on the
responses alone), so each refit is one eigendecomposition of an ``n x n``
matrix built from cached per-term kernel matrices.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..kernels import Product, Sum
from ..ridge.path import RidgePath
from ..tuning.criteria import DEFAULT_LAMBDAS
from ..utils.docstrings import dti_fit_example, fill_doc
from ..utils.progress import progress as bar
from .exchange import Covariate, Exchange, covariates, exchange_scheme
from .permutation import format_pvalue

__all__ = ["AUTO_MAX_SAMPLES", "AUTO_PERMUTATIONS", "TermImportance", "TermMatrices", "closed_form_path",
           "fit_groups", "importance_for_summary", "term_importance"]

#: the summary computes importance by default up to this many curves (measured: benchmarks/bench_importance.py)
AUTO_MAX_SAMPLES = 300
#: permutations per term of summary(importance=True) (smallest attainable p-value 0.005)
AUTO_PERMUTATIONS = 199


@dataclass
class TermImportance:
    """Importance of the covariates of a fit (arrays aligned with ``terms``; one row per functional term, factor
    term and column of the numeric scalar design).

    Attributes
    ----------
    terms : list of str
    loo : float
        Held-out error of the fitted model at its lambda (leave-one-curve-out, or leave-one-group-out with
        ``groups=``).
    delta_drop, delta_perm, p_value : numpy.ndarray
    n_permutations : int
    kinds : list of str
        ``"functional"``, ``"factor"`` or ``"scalar"`` per row.
    schemes : list of str
        What each row's permutations exchange (curves, group-level values or whole groups), in words.
    statistic : str
        The held-out error, in words.
    """

    terms: list[str]
    loo: float
    delta_drop: np.ndarray
    delta_perm: np.ndarray
    p_value: np.ndarray
    n_permutations: int
    kinds: list[str] = field(default_factory=list)
    schemes: list[str] = field(default_factory=list)
    statistic: str = "leave-one-curve-out error"

    @property
    def short(self) -> str:
        """The held-out error's abbreviation: ``"LOO"`` (leave one curve out) or ``"LOGO"`` (one group).

        Examples
        --------
        >>> z = np.zeros(1)
        >>> TermImportance(["a"], 1.0, z, z, z, 9, statistic="leave-one-group-out error").short
        'LOGO'
        """
        return "LOO" if "curve" in self.statistic else "LOGO"

    def pvalue_text(self, i: int) -> str:
        """Row ``i``'s p-value as printed (``"< 0.005"`` at the floor ``1/(B+1)``).

        Examples
        --------
        >>> TermImportance(["a"], 1.0, np.array([0.5]), np.array([0.4]), np.array([0.005]), 199).pvalue_text(0)
        '< 0.005'
        """
        p = self.p_value[i]
        return "-" if not np.isfinite(p) else format_pvalue(float(p), self.n_permutations)

    def scheme_note(self) -> str:
        """One sentence: the statistic, the permutations and what they exchange.

        Examples
        --------
        >>> imp = TermImportance(["a"], 1.0, np.array([0.5]), np.array([0.4]), np.array([0.01]), 99,
        ...                      schemes=["curves permuted (60 exchangeable curves)"])
        >>> imp.scheme_note()[:60]
        'Term importance: dLOO drop = increase of the leave-one-curve'
        """
        text = (f"Term importance: d{self.short} drop = increase of the {self.statistic} without the covariate (each "
                f"model at its best lambda); p-value of the permutation test at the fitted lambda "
                f"({self.n_permutations} permutations, smallest attainable {1 / (self.n_permutations + 1):.2g})")
        shown = list(dict.fromkeys(s for s in self.schemes if s))
        if shown:
            pairs = list(zip(self.terms, self.schemes, strict=True))
            text += "; " + "; ".join(f"{', '.join(t for t, s in pairs if s == x)}: {x}" if len(shown) > 1 else x
                                     for x in shown)
        return text + "."

    def table(self):
        """The table as a statsmodels ``SimpleTable`` (one row per covariate), for the summary.

        Examples
        --------
        >>> imp = TermImportance(["a"], 1.0, np.array([0.5]), np.array([0.4]), np.array([0.01]), 99)
        >>> "p-value" in imp.table().as_text()
        True
        """
        from statsmodels.iolib.table import SimpleTable

        def g(x: float) -> str:
            return "-" if not np.isfinite(x) else f"{x:.4g}"

        short = self.short
        rows = [[t, g(d), g(p), g(100.0 * p / self.loo) if np.isfinite(p) else "-", self.pvalue_text(i)]
                for i, (t, d, p) in enumerate(zip(self.terms, self.delta_drop, self.delta_perm, strict=True))]
        return SimpleTable(rows, headers=["term", f"d{short} drop", f"d{short} perm", "perm %", "p-value"],
                           title=f"Term importance ({self.statistic} {self.loo:.4g}; "
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

    def row(self, name: str) -> dict[str, Any]:
        """One row's numbers and texts (for the summary's term table).

        Examples
        --------
        >>> TermImportance(["a"], 1.0, np.array([0.5]), np.array([0.4]), np.array([0.05]), 99).row("a")["p"]
        '0.05'
        """
        i = self.terms.index(name)
        return {"drop": float(self.delta_drop[i]), "perm": float(self.delta_perm[i]), "p": self.pvalue_text(i)}


class TermMatrices:
    """The per-term kernel matrices of a closed-form fit, to refit its LOO error with a term permuted or dropped.

    Only the input kernel changes when a term is permuted or removed (the mean function, the dictionary and
    the projections of the responses depend on the responses alone), so each refit is one eigendecomposition
    of an ``n x n`` matrix built from these matrices. With ``groups`` the error is leave-one-group-out and the
    permutations exchange what :func:`fdakpl.results.exchange.exchange_scheme` says.

    Examples
    --------
    >>> from fdakpl import FunctionalRegression, datasets
    >>> res = FunctionalRegression("rcst ~ cca", datasets.dti_first_visits(), interpolate_inputs=True,
    ...                            progress=False).fit()
    >>> tm = TermMatrices(res.path)
    >>> tm.terms, bool(np.isclose(tm.loo(tm.combined(), np.array([res.lam]))[0], res.path.loo([res.lam])[0]))
    (['cca'], True)
    """

    def __init__(self, path: RidgePath, groups: np.ndarray | None = None) -> None:
        kernel = path.kernel
        self.path = path
        self.groups = groups
        self.terms: list[str] = list(kernel.kernels) if isinstance(kernel, (Product, Sum)) else []
        self.op = kernel.op if isinstance(kernel, (Product, Sum)) else "*"
        problem = path.problem
        X, W = problem.inputs, problem.input_weights or {}
        self.inputs = {t: np.asarray(X[t]) for t in self.terms}
        self.weights = {t: W.get(t) for t in self.terms}
        self.matrices = {t: k(X[t], None, W.get(t)) for t, k in kernel.kernels.items()} if self.terms else {}

    @property
    def statistic(self) -> str:
        """The held-out error the tests use, in words."""
        return "leave-one-curve-out error" if self.groups is None else "leave-one-group-out error"

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
        """Exact leave-one-curve-out (leave-one-group-out with groups) error along ``lams`` with kernel matrix
        ``K`` (same problem and ``B``)."""
        path = self.path
        return RidgePath.fit(path.problem, path.kernel, path.B, path.identity, K=K).loo(lams, groups=self.groups)

    def _columns_matrix(self, cov: Covariate, rows: np.ndarray | None) -> np.ndarray:
        """The term's kernel matrix with the covariate's columns taken from ``rows`` (None: the columns dropped)."""
        X = self.inputs[cov.term].copy()
        cols = list(cov.columns or ())
        if rows is None:
            X = np.delete(X, cols, axis=1)
            if X.shape[1] == 0:
                return np.ones((X.shape[0], X.shape[0])) if self.op == "*" else np.zeros((X.shape[0],) * 2)
        else:
            X[:, cols] = self.inputs[cov.term][rows][:, cols]
        return self.path.kernel.kernels[cov.term](X, None, self.weights[cov.term])

    def exchange(self, cov: Covariate) -> Exchange:
        """The exchangeable units of the covariate's values."""
        X = self.inputs[cov.term]
        return exchange_scheme(X if cov.columns is None else X[:, list(cov.columns)], self.groups)

    def dropped(self, cov: Covariate) -> np.ndarray:
        """The kernel matrix without the covariate (its term, or its columns of the scalar design)."""
        if cov.columns is None:
            return self.combined(drop=cov.term)
        return self.combined({cov.term: self._columns_matrix(cov, None)})

    def null_loo(self, term: str | Covariate, lam: float, n_permutations: int, random_state: Any = 0,
                 progress: bool | None = None) -> np.ndarray:
        """Held-out errors at ``lam`` with the covariate's values permuted (by its exchange scheme), one per
        permutation."""
        cov = term if isinstance(term, Covariate) else Covariate(term, term, "functional")
        rng = np.random.default_rng(random_state)
        ex = self.exchange(cov)
        Kt = self.matrices[cov.term]
        out = np.empty(n_permutations)
        lams = np.array([lam])
        for b in bar(range(n_permutations), desc=f"permutations ({cov.name})", enabled=progress):
            p = ex.draw(rng)
            Kp = Kt[np.ix_(p, p)] if cov.columns is None else self._columns_matrix(cov, p)
            out[b] = self.loo(self.combined({cov.term: Kp}), lams)[0]
        return out


def fit_groups(res: Any) -> np.ndarray | None:
    """The group codes of a fit with ``groups=`` (None without): the tests leave out and permute whole groups."""
    labels = getattr(res.criterion, "labels", None)
    if labels is not None:
        return np.asarray(labels)
    model = res.model
    if getattr(model, "groups", None) is None:
        return None
    return model.group_codes()


def closed_form_path(res: Any) -> RidgePath:
    """The fit's ridge path (rebuilt once for a loaded model), or an error saying that importance and
    permutation tests need one."""
    if res.training_path() is None:
        raise ValueError("term importance and permutation tests use the closed-form leave-one-curve-out error; "
                         "refit with solver='eig' (the default for the square loss)")
    return res.path


@fill_doc(fit=dti_fit_example("rcst ~ cca + pasat"))
def term_importance(res: Any, terms: list[str] | None = None, n_permutations: int = AUTO_PERMUTATIONS,
                    random_state: Any = 0, progress: bool | None = None) -> TermImportance:
    """Drop and permutation importance of each covariate from the closed-form held-out error.

    One row per functional term, factor term and column of the numeric scalar design (the ``"scalars"``
    kernel combines the numeric covariates; a covariate is dropped or permuted by its column). Without
    ``groups=`` the error is leave-one-curve-out and curves are permuted; with ``groups=`` it is
    leave-one-group-out and the permutations exchange group-level values or whole groups
    (:func:`fdakpl.results.exchange.exchange_scheme`; the scheme is stated in ``schemes``).

    Parameters
    ----------
    res : FunctionalRegressionResults
        A fit with a closed-form solver (``solver="eig"``).
    terms : list of str, optional
        Rows to compute (covariate names, see :func:`fdakpl.results.exchange.resolve_covariate`). Default: every
        covariate of the formula.
    n_permutations : int, default 199
        Permutations per row (0: drop importance only, NaN p-values); the smallest attainable p-value is
        ``1 / (n_permutations + 1)``.
    random_state : int, numpy.random.Generator or None, default 0
        Seed (the default 0 gives the same result on every run, ``None`` draws fresh randomness);
        row ``t`` uses the same permutations as ``res.permutation_test(t, random_state=...)``.
    progress : bool, optional
        Progress bar (default: the model's setting).

    Returns
    -------
    TermImportance

    Examples
    --------
    %(fit)s
    >>> imp = term_importance(res, n_permutations=9)
    >>> imp.terms, imp.kinds, imp.p_value.shape
    (['cca', 'pasat'], ['functional', 'scalar'], (2,))
    """
    from .exchange import resolve_covariate

    path = closed_form_path(res)
    tm = TermMatrices(path, fit_groups(res))
    parsed = res.model.parsed
    rows = covariates(parsed, tm.terms) if terms is None else [resolve_covariate(t, parsed, tm.terms)
                                                                 for t in terms]
    tm.check(sorted({c.term for c in rows}))
    if isinstance(n_permutations, bool) or not isinstance(n_permutations, (int, np.integer)) or n_permutations < 0:
        raise ValueError(f"n_permutations must be a whole number >= 0 (e.g. 199), got {n_permutations!r}")
    lam = np.array([res.lam])
    grid = np.asarray(res.lam_grid if res.lam_grid is not None else DEFAULT_LAMBDAS, dtype=float)
    loo_obs = float(tm.loo(tm.combined(), lam)[0])
    best_full = float(np.nanmin(tm.loo(tm.combined(), grid)))
    show = res.model.progress if progress is None else progress
    drop, perm, pval = (np.full(len(rows), np.nan) for _ in range(3))
    schemes = []
    for i, c in enumerate(rows):
        drop[i] = float(np.nanmin(tm.loo(tm.dropped(c), grid))) - best_full
        schemes.append(tm.exchange(c).description)
        if n_permutations:
            null = tm.null_loo(c, res.lam, n_permutations, random_state, show)
            perm[i] = float(np.mean(null)) - loo_obs
            pval[i] = (1 + np.sum(null <= loo_obs)) / (n_permutations + 1)
    return TermImportance([c.name for c in rows], loo_obs, drop, perm, pval, n_permutations,
                          kinds=[c.kind for c in rows], schemes=schemes, statistic=tm.statistic)


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
        return None, "Term importance and p-values: res.term_importance() or summary(importance=True)."
    n_perm = AUTO_PERMUTATIONS if importance is True else int(importance)
    return res.term_importance(n_permutations=n_perm), None
