"""What a permutation test exchanges, and what it permutes.

* :func:`exchange_scheme`: the exchangeable units of a term's values. Without groups, single curves.
  With ``groups=`` (several curves per subject), curves of a subject are not exchangeable with other
  subjects' curves, so:

  - a term whose values are the same for every curve of a group (a subject-level covariate) is permuted
    as group-level values: group ``g`` takes the value of group ``pi(g)``, over all groups;
  - a term that varies within groups is permuted by whole groups, exchanged only with groups of the
    same size (curve ``j`` of group ``g`` takes the values of curve ``j`` of group ``pi(g)``): the
    "whole-block" exchangeability of Winkler et al. (2015, NeuroImage 123, 268-281), which keeps the
    within-subject dependence of the term's values. Groups whose size no other group has stay in place.

  Under the null (the term's values independent of the responses, the groups independent and alike)
  these permutations leave the joint distribution unchanged, so the permutation p-value is exact. The
  statistic that goes with groups is the leave-one-group-out error (curves of the held-out subject do
  not help predict each other).
* :func:`covariates`: one row per covariate: a functional term, a factor term, or a column of the numeric
  scalar design (the ``"scalars"`` kernel combines them; one covariate is permuted by permuting its column).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["Covariate", "Exchange", "covariates", "exchange_scheme", "resolve_covariate"]


@dataclass(frozen=True)
class Exchange:
    """The exchangeable units of a permutation test and how to draw one permutation.

    Attributes
    ----------
    scheme : {"curves", "group values", "whole groups"}
    description : str
        The scheme in words (printed with the test).
    n_arrangements : float
        How many distinct arrangements the scheme has (``inf`` when too many to count).

    Examples
    --------
    >>> ex = exchange_scheme(np.array([[1.0], [1.0], [2.0], [2.0], [3.0], [3.0]]), np.array([0, 0, 1, 1, 2, 2]))
    >>> ex.scheme, ex.n_arrangements
    ('group values', 6.0)
    >>> idx = ex.draw(np.random.default_rng(0))
    >>> bool(np.all(idx[::2] // 2 == idx[1::2] // 2))  # both curves of a group take one group's values
    True
    """

    scheme: str
    description: str
    n_arrangements: float
    _codes: np.ndarray | None = None
    _members: tuple[np.ndarray, ...] = ()

    def draw(self, rng: np.random.Generator) -> np.ndarray:
        """One permutation as an index: row ``i`` takes the values of row ``idx[i]``."""
        if self.scheme == "curves":
            return rng.permutation(int(self._codes.size)) if self._codes is not None else np.empty(0, int)
        members = self._members
        if self.scheme == "group values":
            reps = np.array([m[0] for m in members])
            return reps[rng.permutation(len(members))][self._codes]
        idx = np.empty(int(self._codes.size), dtype=np.int64)  # type: ignore[union-attr]
        sizes = np.array([m.size for m in members])
        for size in np.unique(sizes):
            same = np.flatnonzero(sizes == size)
            for g, h in zip(same, same[rng.permutation(same.size)], strict=True):
                idx[members[g]] = members[h]
        return idx


def _log_factorial(k: int) -> float:
    return math.lgamma(k + 1)


def _count(log_value: float) -> float:
    return float(round(math.exp(log_value))) if log_value < 700 else float("inf")


def exchange_scheme(values: np.ndarray, groups: np.ndarray | None) -> Exchange:
    """The exchangeable units for permuting a term whose input rows are ``values`` (one row per curve).

    Parameters
    ----------
    values : numpy.ndarray
        The term's inputs, one row per curve (NaN compare equal).
    groups : numpy.ndarray or None
        One group code per curve (``groups=`` of the fit), or None.

    Returns
    -------
    Exchange

    Examples
    --------
    >>> exchange_scheme(np.arange(4.0)[:, None], None).description
    'curves permuted (4 exchangeable curves)'
    >>> exchange_scheme(np.arange(4.0)[:, None], np.array([0, 0, 1, 1])).scheme
    'whole groups'
    """
    values = np.asarray(values)
    n = values.shape[0]
    if groups is None:
        return Exchange("curves", f"curves permuted ({n} exchangeable curves)", _count(_log_factorial(n)),
                        np.zeros(n, dtype=np.int64))
    codes = np.unique(np.asarray(groups), return_inverse=True)[1].ravel()
    members = tuple(np.flatnonzero(codes == g) for g in range(int(codes.max()) + 1))
    rows = values.reshape(n, -1)
    constant = all(np.array_equal(rows[m], np.broadcast_to(rows[m[0]], rows[m].shape), equal_nan=True)
                   if rows.dtype.kind == "f" else bool(np.all(rows[m] == rows[m[0]])) for m in members)
    G = len(members)
    if constant:
        return Exchange("group values", f"group-level values permuted across the {G} groups (the term is constant "
                        "within groups)", _count(_log_factorial(G)), codes, members)
    sizes = np.bincount([m.size for m in members])
    log_count = sum(_log_factorial(int(c)) for c in sizes)
    movable = int(sum(int(c) for c in sizes if c > 1))
    text = (f"whole groups permuted among groups of the same size ({movable} of {G} groups exchangeable; the "
            "term varies within groups)")
    count = _count(log_count)
    if count < 1000:
        text += f"; only {count:.0f} distinct arrangements"
    return Exchange("whole groups", text, count, codes, members)


@dataclass(frozen=True)
class Covariate:
    """One row of the term table: a kernel term, or columns of the numeric scalar design.

    Attributes
    ----------
    name : str
    term : str
        The kernel term it belongs to.
    kind : {"functional", "factor", "subject", "scalar", "scalars"}
    columns : tuple of int or None
        The columns of the term's input it permutes or drops (None: the whole term).
    """

    name: str
    term: str
    kind: str
    columns: tuple[int, ...] | None = None


def covariates(parsed: Any, terms: list[str]) -> list[Covariate]:
    """The rows of importance and tests: each functional and factor term, and each column of the numeric
    scalar design (the ``"scalars"`` kernel's input) on its own row.

    Examples
    --------
    >>> from fdakpl import datasets
    >>> from fdakpl.formula.terms import parse_formula
    >>> ds = datasets.dti_first_visits()
    >>> [c.name for c in covariates(parse_formula("rcst ~ cca + pasat + C(sex)", ds), ["cca", "scalars", "C(sex)"])]
    ['cca', 'pasat', 'C(sex)']
    """
    from ..formula.terms import SCALARS

    factor_terms = set(getattr(parsed, "factor_terms", []) or [])
    subject_terms = set(getattr(parsed, "subject_terms", []) or [])
    columns = list(parsed.scalar.columns) if getattr(parsed, "scalar", None) is not None else []
    out = []
    for t in terms:
        if t == SCALARS and columns:
            out += [Covariate(c, t, "scalar", (j,)) for j, c in enumerate(columns)]
        else:
            kind = "factor" if t in factor_terms else "subject" if t in subject_terms else "functional"
            out.append(Covariate(t, t, kind))
    return out


def resolve_covariate(name: str, parsed: Any, terms: list[str]) -> Covariate:
    """The covariate ``name`` of a test: a row of :func:`covariates`, the whole ``"scalars"`` term, or a variable
    of the scalar design (every column it enters, permuted together).

    Examples
    --------
    >>> from fdakpl import datasets
    >>> from fdakpl.formula.terms import parse_formula
    >>> p = parse_formula("rcst ~ cca + pasat + I(pasat**2)", datasets.dti_first_visits())
    >>> terms = ["cca", "scalars"]
    >>> resolve_covariate("pasat", p, terms).columns, resolve_covariate("scalars", p, terms).kind
    ((0,), 'scalars')
    """
    from ..formula.grammar import factor_variables
    from ..formula.terms import SCALARS

    rows = covariates(parsed, terms)
    for c in rows:
        if c.name == name:
            return c
    if name in terms:
        return Covariate(name, name, "scalars" if name == SCALARS else "functional")
    scalar = getattr(parsed, "scalar", None)
    if scalar is not None and SCALARS in terms:
        cols = tuple(j for j, spec in enumerate(scalar.columns_spec)
                     if any(name in factor_variables(scalar.factors[i].tree) for i, _ in spec))
        if cols:
            return Covariate(name, SCALARS, "scalar", cols)
    raise ValueError(f"{name!r} is not a term or covariate of {parsed.formula!r}; covariates: "
                     f"{[c.name for c in rows]}" + (f", or the whole term {SCALARS!r}" if SCALARS in terms else ""))
