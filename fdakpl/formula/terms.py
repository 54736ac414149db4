"""Formulas such as ``"rcst ~ cca + C(sex) + age"`` → kernel inputs for KPL.

The response is one functional variable. On the right-hand side,

* a *bare name* of a functional variable is a functional term: it gets its
  own kernel on curves (L2 geometry of its grid);
* a term made only of factors (``C(sex)``, a text variable, ``C(a):C(b)``) is a
  factor term: its own :class:`~fdakpl.factor_kernels.Categorical` kernel on the
  factor itself (every level equally far from the others), named by the term's
  text (``"C(sex)"``);
* ``re(ID)`` is a subject effect (a functional random intercept): the kernel
  :class:`~fdakpl.factor_kernels.RandomEffect` on the subject labels (``w`` for
  curves of the same subject, 0 otherwise), *added* to the other terms' kernel
  whatever ``combine=`` says (``K = K_rest + w K_subject``), its weight ``w`` tuned
  with the widths, ``b`` and lambda;
* every other scalar term (``age``, ``np.log(dose)``, ``age:C(sex)``) goes into
  one numeric design matrix (no intercept; columns standardised with the training
  mean and standard deviation), which gets one kernel on its rows under the name
  ``"scalars"``.

Terms combine by a product (default) or a sum of their kernels. No name is reserved
silently: a variable whose name is that of another term (a curve named ``scalars``
next to scalar covariates) is refused. The text of a formula is never evaluated as
Python: formulaic's parser splits it into terms (names kept verbatim,
:mod:`fdakpl.formula.names`), and :mod:`fdakpl.formula.grammar` checks every scalar
factor against a small grammar before computing it (:mod:`fdakpl.formula.design`
builds the kernels' inputs from them).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import xarray as xr

from ..data.functional import SAMPLE, as_dataset, validate_functional
from ..data.labels import coordinate_values
from ..data.scaling import power_of_two_scale
from .design import ScalarDesign, build_design
from .expansion import check_expansion
from .names import Verbatim

__all__ = ["SCALARS", "TERM_NAMES", "ParsedFormula", "ScalarDesign", "median_heuristic", "parse_formula"]

SCALARS = "scalars"
#: how scalar terms are named, for messages
TERM_NAMES = (f"numeric scalar covariates share the kernel named {SCALARS!r}; a term made only of factors, or a "
              "subject effect, has its own, named as written, e.g. 'C(sex)', 're(ID)'")


def _is_functional(da: xr.DataArray | xr.Variable) -> bool:
    return da.ndim == 2 and SAMPLE in da.dims


@dataclass
class ParsedFormula:
    """A parsed formula with what is needed to build kernel inputs for any data."""

    formula: str
    response: str
    response_dim: str
    functional_terms: list[str]
    scalar: ScalarDesign | None
    input_grids: dict[str, np.ndarray] = field(default_factory=dict)

    @property
    def scalar_terms(self) -> list[str]:
        """Kernel terms of the scalar part: ``"scalars"`` (numeric design) if it has columns, then the factor terms."""
        if self.scalar is None:
            return []
        return ([SCALARS] if self.scalar.columns else []) + self.factor_terms + self.subject_terms

    @property
    def factor_terms(self) -> list[str]:
        """Names of the terms made only of factors (a :class:`~fdakpl.factor_kernels.Categorical` kernel each by
        default), in their canonical order; not the subject terms."""
        return [] if self.scalar is None else [t.name for t in self.scalar.factor_terms if not t.subject]

    @property
    def subject_terms(self) -> list[str]:
        """Names of the subject terms ``re(ID)`` (a :class:`~fdakpl.factor_kernels.RandomEffect` kernel each, added
        to the other terms' kernel).

        Examples
        --------
        >>> from fdakpl import datasets
        >>> parse_formula("rcst ~ cca + re(ID)", datasets.load_dti()).subject_terms
        ['re(ID)']
        """
        return [] if self.scalar is None else [t.name for t in self.scalar.factor_terms if t.subject]

    @property
    def terms(self) -> list[str]:
        """Kernel terms: the functional terms in the formula's order, then :attr:`scalar_terms`."""
        return self.functional_terms + self.scalar_terms

    def inputs(self, ds: xr.Dataset) -> dict[str, Any]:
        """Kernel inputs ``{term: DataArray or array}`` for the samples of ``ds`` (validated where they are
        prepared, :func:`~fdakpl.data.preprocessing.prepare_inputs`; here only selected).

        Examples
        --------
        >>> from fdakpl import datasets
        >>> ds = datasets.dti_first_visits()
        >>> sorted(parse_formula("rcst ~ cca + pasat", ds).inputs(ds))
        ['cca', 'scalars']
        """
        ds = as_dataset(ds)
        out: dict[str, Any] = {}
        for t in self.functional_terms:
            if t not in ds:
                raise ValueError(f"new data lacks the functional input {t!r}")
            out[t] = ds[t]
        if self.scalar is not None:
            missing = [v for v in self.scalar.variables if v not in ds]
            if missing:
                raise ValueError(f"new data lacks the scalar covariates {missing}")
            out.update(self.scalar.inputs(ds, SCALARS))
        return out


def parse_formula(formula: str, data: Any) -> ParsedFormula:
    """Parse ``formula`` against ``data``.

    The formula is split into terms by formulaic's parser (text only: ``+``,
    ``-``, ``:``, ``*``, ``.``, ``0``/``1``, backticks); every scalar factor is
    then checked against the grammar of :mod:`fdakpl.formula.grammar` before it is
    computed. Nothing in a formula is evaluated as Python.

    Parameters
    ----------
    formula : str
        ``"response ~ term + term + ..."``.
    data : xarray.Dataset
        Variables sharing the ``sample`` dim.

    Returns
    -------
    ParsedFormula

    Raises
    ------
    ValueError
        Unknown names, a scalar response, a response without location dim,
        transformations or interactions of functional variables, NA in
        scalar covariates, terms outside the grammar.

    Examples
    --------
    >>> from fdakpl import datasets
    >>> p = parse_formula("rcst ~ cca + C(sex)", datasets.dti_first_visits())
    >>> p.response, p.functional_terms, p.terms
    ('rcst', ['cca'], ['cca', 'C(sex)'])
    """
    ds = as_dataset(data)
    lhs_terms, rhs_terms = split_formula(formula, ds)
    available = sorted(str(v) for v in ds.data_vars)
    if len(lhs_terms) != 1 or len(lhs_terms[0]) != 1:
        raise ValueError(f"formula must look like 'response ~ term + term' with one response, got {formula!r}")
    lhs, how = lhs_terms[0][0]
    if lhs not in ds:
        raise ValueError(f"the response {lhs!r} is not in data; available variables: {available}")
    resp = ds[lhs]
    if resp.dims == (SAMPLE,):
        raise ValueError(
            f"the response {lhs!r} is a scalar; FunctionalRegression predicts curves (a variable with a "
            "location dim). For a scalar response use a scalar-on-function method, or put it on the right-hand side"
        )
    if SAMPLE not in resp.dims or resp.ndim != 2:
        raise ValueError(f"the response {lhs!r} has dims {resp.dims}; it needs ('sample', <location>)")
    resp = validate_functional(resp, lhs)
    rdim = next(d for d in resp.dims if d != SAMPLE)
    functional_vars = {str(v) for v in ds.data_vars if _is_functional(ds.variables[v])}
    fterms: list[str] = []
    sterms: list[list[str]] = []
    lookups: set[str] = set()
    unknown: list[str] = []
    for term in rhs_terms:
        if len(term) == 1 and term[0][1] == "lookup" and term[0][0] in functional_vars:
            if term[0][0] == lhs:
                raise ValueError(f"{lhs!r} is both the response and an input")
            fterms.append(term[0][0])
            continue
        label = ":".join(e for e, _ in term)
        for expr, how in term:
            names = {expr} if how == "lookup" else _names_in(expr)
            used_f = sorted(names & functional_vars)
            if used_f:
                raise ValueError(
                    f"unsupported term {label!r}: functional variables ({used_f}) enter a formula as bare names "
                    "(transformations and interactions of curves are not supported; transform the curves in the data)"
                )
            if how == "lookup":
                lookups.add(expr)
                if expr not in ds.variables:
                    unknown.append(expr)
            elif how != "python":
                raise ValueError(f"the formula term {label!r} is a constant; list variables (the kernel needs no "
                                 "intercept)")
        sterms.append([e for e, _ in term])
    if unknown:
        raise ValueError(f"unknown names {unknown} in {' + '.join(':'.join(t) for t in sterms)!r}; available "
                         f"variables: {available}")
    if not fterms and not sterms:
        raise ValueError(f"formula {formula!r} has no input term")
    scalar = None
    if sterms:
        exprs = list(dict.fromkeys(e for t in sterms for e in t))
        scalar = build_design(exprs, sterms, ds, lookups=lookups)
    _check_term_names(fterms, scalar)
    grids = {t: coordinate_values(validate_functional(ds[t], t), next(d for d in ds.variables[t].dims if d != SAMPLE))
             for t in fterms}
    return ParsedFormula(formula, lhs, rdim, fterms, scalar, grids)


def _check_term_names(fterms: list[str], scalar: ScalarDesign | None) -> None:
    """Kernel terms are named by their text, the numeric design by ``"scalars"``: refuse a curve of the same name."""
    if scalar is None:
        return
    names = ([SCALARS] if scalar.columns else []) + [t.name for t in scalar.factor_terms]
    clash = [t for t in fterms if t in names]
    if clash:
        what = "the kernel of the numeric scalar covariates" if clash[0] == SCALARS else "a factor term"
        raise ValueError(f"the curve variable {clash[0]!r} has the name of {what} ({clash[0]!r}), so the two "
                         f"kernel terms would be confused; rename the variable, e.g. "
                         f"ds.rename({{{clash[0]!r}: {clash[0] + '_curve'!r}}})")


#: longest formula accepted (a guard for forged files)
MAX_FORMULA = 10_000


def split_formula(formula: Any, ds: xr.Dataset) -> tuple[list[list[tuple[str, str]]], list[list[tuple[str, str]]]]:
    """Terms of both sides as lists of ``(factor text, "lookup" | "python" | "literal")``, by formulaic's parser
    (which reads text only; nothing is evaluated)."""
    if not isinstance(formula, str) or "~" not in formula:
        raise ValueError(f"formula must look like 'response ~ term + term', got {formula!r}")
    if len(formula) > MAX_FORMULA:
        raise ValueError(f"the formula has {len(formula)} characters; at most {MAX_FORMULA} are accepted")
    names = [str(v) for v in ds.data_vars]
    verbatim = Verbatim(formula, *names)  # formulaic's parser would NFKC-normalise names (dose_µg -> dose_μg)
    try:  # the terms counted on formulaic's syntax tree before formulaic expands them (a ** power is unbounded)
        check_expansion(verbatim.protect(formula), len(names), shown=formula)
    except RecursionError:
        raise ValueError(f"the formula {formula[:80]!r}... nests too deeply") from None
    try:
        lhs, rhs = _parsed_sides(verbatim.protect(formula), tuple(verbatim.protect(v) for v in names))
    except RecursionError:
        raise ValueError(f"the formula {formula[:80]!r}... nests too deeply") from None
    except Exception as err:  # formulaic raises several types
        msg = verbatim.restore(str(err).split("\n")[0])
        if formula.count("~") != 1:
            raise ValueError(f"formula must look like 'response ~ term + term', got {formula!r}") from None
        hint = _backquote_hint(formula, names)
        raise ValueError(f"cannot parse the formula {formula!r}: {msg.rstrip('.')}{hint}") from None
    if lhs is None:
        raise ValueError(f"formula must look like 'response ~ term + term', got {formula!r}")

    def restored(side: Any) -> list[list[tuple[str, str]]]:
        return [[(verbatim.restore(e), how) for e, how in t] for t in side]

    return restored(lhs), restored(rhs)


def _backquote_hint(formula: str, names: list[str]) -> str:
    """Advice for variables whose names are not identifiers (``my y``) written without backquotes."""
    bare = [n for n in sorted(names, key=len, reverse=True) if not n.isidentifier() and n in formula
            and f"`{n}`" not in formula and f"Q('{n}')" not in formula and f'Q("{n}")' not in formula]
    if not bare:
        return ""
    fixed = formula
    for n in bare:
        fixed = fixed.replace(n, f"`{n}`")
    return (f"; names that are not identifiers ({', '.join(repr(n) for n in bare[:3])}) go between backquotes: "
            f"{fixed!r}")


@functools.lru_cache(maxsize=128)
def _parsed_sides(formula: str, names: tuple[str, ...]) -> tuple[Any, Any]:
    """The terms of both sides by formulaic's parser (kept for the next model with the same formula and
    variables: parsing costs more than a fit), or ``(None, None)`` for a formula that is not ``lhs ~ rhs``."""
    from formulaic import Formula

    parsed = Formula(formula, _context={"__formulaic_variables_available__": list(names)})
    lhs, rhs = parsed.lhs, parsed.rhs
    if not hasattr(lhs, "__iter__") or not hasattr(rhs, "__iter__") or hasattr(rhs, "lhs"):
        return None, None

    def terms(side: Any) -> tuple[tuple[tuple[str, str], ...], ...]:
        out = []
        for term in side:
            factors = tuple((str(f.expr), f.eval_method.value) for f in term.factors)
            if factors == (("1", "literal"),):
                continue  # the intercept: the kernel needs none
            out.append(factors)
        return tuple(out)

    return terms(lhs), terms(rhs)


def _names_in(expr: str) -> set[str]:
    """Names and dotted names (``visit.time``) in a factor, for messages (nothing is evaluated)."""
    import ast

    verbatim = Verbatim(expr)
    try:
        tree = ast.parse(verbatim.protect(expr), mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return set()
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            out.add(node.id)
        elif isinstance(node, ast.Attribute):
            parts, cur = [node.attr], node.value
            while isinstance(cur, ast.Attribute):
                parts.append(cur.attr)
                cur = cur.value
            if isinstance(cur, ast.Name):
                out.add(".".join([cur.id, *reversed(parts)]))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            out.add(node.value)  # Q("name")
    return {verbatim.restore(n) for n in out}


def median_heuristic(values: np.ndarray, weights: np.ndarray | None = None, max_rows: int = 2000) -> float:
    """Median of the pairwise (L2) distances between rows, a default Gaussian width.

    With more than ``max_rows`` rows, the median is taken over an evenly
    spaced subsample of ``max_rows`` rows (memory stays ``O(max_rows^2)``).

    Examples
    --------
    >>> median_heuristic(np.array([[0.0], [1.0], [3.0]]))
    2.0
    """
    from scipy.spatial.distance import pdist

    X = np.asarray(values, dtype=float)
    if X.shape[0] > max_rows:  # pdist is O(n^2) in memory: an evenly spaced subsample estimates the median
        X = X[np.linspace(0, X.shape[0] - 1, max_rows).astype(int)]
    if weights is not None:
        X = X * np.sqrt(weights)
    # distances of X / max|X|, times max|X|: no overflow (inputs near 1e160) or underflow (near 1e-200) of the
    # squared distances, and the width scales exactly with the inputs (the scale is a power of two)
    big = float(np.max(np.abs(X))) if X.size else 0.0
    if not np.isfinite(big):
        raise ValueError("the kernel inputs have infinite values (or overflow after weighting); rescale them")
    scale = power_of_two_scale(big)
    d = pdist(X / scale)
    d = d[d > 0]
    return float(np.median(d)) * scale if d.size else 1.0
