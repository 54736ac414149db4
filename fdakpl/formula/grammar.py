"""The scalar part of a formula as data: a small, checked grammar and its interpreter.

fdakpl never hands the text of a formula to Python's ``eval``. A formula is
split into terms by formulaic's *parser* (text only: ``+``, ``-``, ``:``,
``*``, ``.``, backquotes), and every factor of a scalar term is then read with
Python's :mod:`ast` and checked against this grammar before anything is
computed:

* a variable: a bare name (``age``, ``visit.time``, ``âge``), a name
  between backquotes (for names that are not identifiers, e.g. with a
  space) or ``Q("visit time")``;
* a number (``2``, ``0.5``, ``1e-3``);
* arithmetic on those: ``+``, ``-``, ``*``, ``/``, ``**`` and unary minus,
  written inside ``I(...)`` or inside a function call (at the top level of a
  formula ``+ - * : **`` are formula operators, as in R);
* the functions ``np.log``, ``np.log1p``, ``np.log2``, ``np.log10``,
  ``np.exp``, ``np.sqrt`` and ``np.abs`` of one argument;
* ``C(x)`` (a factor), ``C(x, levels=["a", "b"])`` (its levels) and
  ``C(x, Treatment("b"))`` (accepted for R users; it changes nothing, see below);
* ``re(x)``: a subject (random) effect of the labels ``x`` (a term of its own: the
  subject kernel :class:`~fdakpl.factor_kernels.RandomEffect`, added to the other terms').

Anything else is refused with a :class:`ValueError` naming the term. Names are read
verbatim (:mod:`fdakpl.formula.names`: no Unicode normalisation of ``dose_µg``). A
checked factor is a tree of plain data (lists, strings, numbers) that :func:`evaluate`
computes, at fit, at prediction and after loading; how factors make the kernels' inputs
is :mod:`fdakpl.formula.design`. Factors are not coded by contrasts (the kernel of a
factor treats every level alike), so ``C(x, Treatment("b"))`` changes nothing and other
contrasts are refused.

Examples
--------
>>> import xarray as xr
>>> tree = check_factor("np.log(age)", {"age"})["tree"]
>>> tree
['fun', 'log', ['var', 'age']]
>>> evaluate(tree, xr.Dataset({"age": ("sample", [1.0, 2.0])})).round(3)
array([0.   , 0.693])
"""

from __future__ import annotations

import ast
import datetime
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from ..data.functional import SAMPLE
from .names import Verbatim

__all__ = ["FUNCTIONS", "FormulaError", "check_factor", "evaluate", "factor_variables", "is_missing", "level_key"]

#: the functions a formula may apply (``np.<name>``)
FUNCTIONS = {"log": np.log, "log1p": np.log1p, "log2": np.log2, "log10": np.log10, "exp": np.exp,
             "sqrt": np.sqrt, "abs": np.abs}
_BINOPS = {ast.Add: np.add, ast.Sub: np.subtract, ast.Mult: np.multiply, ast.Div: np.divide, ast.Pow: np.power}
_MAX_EXPR = 2000
_MAX_DEPTH = 40


class FormulaError(ValueError):
    """A formula term outside fdakpl's grammar (a :class:`ValueError`)."""


def _dotted(node: ast.AST) -> str | None:
    """``a.b.c`` for a chain of attribute accesses on a name (R-style names such as ``visit.time``)."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return ".".join([node.id, *reversed(parts)])
    return None


def _refuse(expr: str, why: str) -> FormulaError:
    return FormulaError(
        f"the formula term {expr!r} is not allowed: {why}. fdakpl accepts variables (bare, `backticked` or "
        f"Q('name')), numbers, + - * / ** inside I(...), np.{'/np.'.join(sorted(FUNCTIONS))} of one argument, "
        "C(x) / C(x, levels=[...]) and re(x) (a subject effect); transform other things in the data first")


def check_factor(expr: str, variables: set[str], lookup: bool = False) -> dict[str, Any]:
    """Read one factor of a formula term with :mod:`ast` and check it against the grammar.

    Parameters
    ----------
    expr : str
        The factor as text (``"np.log(age)"``, ``"C(sex)"``, ``"visit time"`` for a lookup).
    variables : set of str
        Names of the data's variables.
    lookup : bool
        ``expr`` is a plain variable name (formulaic's lookup factors: bare and backticked names).

    Returns
    -------
    dict
        ``{"kind": "numeric" | "categorical", "tree": ..., "reference": ..., "levels": ...}``,
        a tree of plain data (lists, strings, numbers) that :func:`evaluate` reads.

    Raises
    ------
    ValueError
        Anything outside the grammar, or a name that is not a variable.

    Examples
    --------
    >>> check_factor("I(z / 2)", {"z"})["tree"]
    ['op', 'Div', ['var', 'z'], ['num', 2]]
    >>> check_factor("__import__('os')", {"z"})
    Traceback (most recent call last):
    ...
    fdakpl.formula.grammar.FormulaError: the formula term "__import__('os')" is not allowed: ...
    """
    if not isinstance(expr, str) or len(expr) > _MAX_EXPR:
        raise _refuse(str(expr)[:80], f"a term is text of at most {_MAX_EXPR} characters")
    if lookup:
        if expr not in variables:
            raise FormulaError(f"unknown name {expr!r} in the formula; available variables: {sorted(variables)}")
        return {"kind": "auto", "tree": ["var", expr]}
    names = Verbatim(expr)  # Python's parser would NFKC-normalise names (dose_µg -> dose_μg): read them verbatim
    try:
        node = ast.parse(names.protect(expr.strip()), mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError) as err:
        raise _refuse(expr, f"it is not an expression ({type(err).__name__})") from None
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "C":
        return _categorical(expr, node, variables, names)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "re":
        if len(node.args) != 1 or node.keywords:
            raise _refuse(expr, "re() takes one variable, the subject labels: re(ID)")
        return {"kind": "subject", "tree": _tree(expr, node.args[0], variables, 1, names, top=True)}
    return {"kind": "auto", "tree": _tree(expr, node, variables, 0, names, top=True)}


def _string_arg(expr: str, node: ast.AST, names: Verbatim) -> str:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return names.restore(node.value)
    raise _refuse(expr, "a level or a quoted name must be a string constant")


def _constant(expr: str, node: ast.AST, names: Verbatim, what: str) -> str:
    """A level written in a formula (a string or a number) as its text (:func:`level_key`)."""
    if not isinstance(node, ast.Constant) or not isinstance(node.value, (str, int, float)) \
            or isinstance(node.value, bool):
        raise _refuse(expr, f"{what} must be a constant")
    return level_key(names.restore(node.value) if isinstance(node.value, str) else node.value)


def _categorical(expr: str, node: ast.Call, variables: set[str], names: Verbatim) -> dict[str, Any]:
    if len(node.args) not in (1, 2):
        raise _refuse(expr, "C() takes a variable and optionally levels=[...]")
    out: dict[str, Any] = {"kind": "categorical", "tree": _tree(expr, node.args[0], variables, 1, names, top=True)}
    if len(node.args) == 2:
        c = node.args[1]
        ok_name = isinstance(c, ast.Call) and isinstance(c.func, ast.Name) and c.func.id in {"Treatment", "T"}
        if not ok_name or len(c.args) + len(c.keywords) > 1 or (c.keywords and c.keywords[0].arg not in
                                                                  {"reference", "base"}):
            raise _refuse(expr, "factors are not coded by contrasts: the kernel of a factor treats every level "
                                "alike, so no coding (Sum, Helmert, Treatment, ...) would change the fit; write "
                                "C(x) (Treatment('reference') is accepted and changes nothing)")
        ref = c.args[0] if c.args else (c.keywords[0].value if c.keywords else None)
        if ref is not None:
            out["reference"] = _constant(expr, ref, names, "the reference level")
    for kw in node.keywords:
        if kw.arg != "levels" or not isinstance(kw.value, (ast.List, ast.Tuple)):
            raise _refuse(expr, "C() accepts only the keyword levels=[...]")
        out["levels"] = [_constant(expr, e, names, "each of levels=[...]") for e in kw.value.elts]
    return out


def _tree(expr: str, node: ast.AST, variables: set[str], depth: int, names: Verbatim,
          top: bool = False) -> list[Any]:
    if depth > _MAX_DEPTH:
        raise _refuse(expr, f"it nests deeper than {_MAX_DEPTH} levels")
    dotted = _dotted(node)
    if dotted is not None and names.restore(dotted) in variables:
        return ["var", names.restore(dotted)]
    if isinstance(node, ast.Name):
        raise FormulaError(f"unknown name {names.restore(node.id)!r} in the formula term {expr!r}; available "
                           f"variables: {sorted(variables)}")
    if isinstance(node, ast.Constant):
        if isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
            try:
                float(node.value)
            except OverflowError:
                raise _refuse(expr, f"the number {str(node.value)[:20]}... is too large for a float "
                                    "(at most about 1.8e308)") from None
            return ["num", node.value]
        shown = names.restore(node.value) if isinstance(node.value, str) else node.value
        raise _refuse(expr, f"the constant {shown!r} is not a number (put text in the data as a variable)")
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        return ["neg" if isinstance(node.op, ast.USub) else "pos",
                _tree(expr, node.operand, variables, depth + 1, names)]
    if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
        return ["op", type(node.op).__name__, _tree(expr, node.left, variables, depth + 1, names),
                _tree(expr, node.right, variables, depth + 1, names)]
    if isinstance(node, ast.Call) and not node.keywords and len(node.args) == 1:
        func = node.func
        if isinstance(func, ast.Name) and func.id in {"I", "Q"}:
            if func.id == "Q":
                name = _string_arg(expr, node.args[0], names)
                if name not in variables:
                    raise FormulaError(f"unknown name {name!r} in Q() of the formula; available variables: "
                                       f"{sorted(variables)}")
                return ["var", name]
            return _tree(expr, node.args[0], variables, depth + 1, names)
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in {"np", "numpy"} \
                and func.attr in FUNCTIONS:
            return ["fun", func.attr, _tree(expr, node.args[0], variables, depth + 1, names)]
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in {"C", "re"}:
        raise _refuse(expr, f"{node.func.id}() must be a whole factor, not inside arithmetic")
    if isinstance(node, ast.Call):
        raise _refuse(expr, f"the function {names.restore(ast.unparse(node.func))!r} is not one of the allowed "
                            "transforms (or it has keywords or several arguments)")
    raise _refuse(expr, f"{type(node).__name__} is not part of the grammar")


def factor_variables(tree: list[Any]) -> list[str]:
    """Variables a checked factor tree reads.

    Examples
    --------
    >>> factor_variables(["op", "Add", ["var", "a"], ["fun", "log", ["var", "b"]]])
    ['a', 'b']
    """
    if tree[0] == "var":
        return [tree[1]]
    out: list[str] = []
    for sub in tree[1:]:
        if isinstance(sub, list):
            out += [v for v in factor_variables(sub) if v not in out]
    return out


def level_key(v: Any) -> str:
    """The text of a categorical level: numbers as their shortest form (``3`` and ``3.0`` are one level), integers
    exactly (IDs at or above 2**53 stay distinct).

    Examples
    --------
    >>> level_key(3.0), level_key(np.int64(2**53 + 1)), level_key(True), level_key("b")
    ('3', '9007199254740993', 'True', 'b')
    """
    if isinstance(v, (bool, np.bool_)):
        return str(bool(v))
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, (float, np.floating)):
        f = float(v)
        return str(int(f)) if f.is_integer() else repr(f)
    return str(v)


_DATES = "dates or durations"


def _is_date(x: Any) -> bool:
    return isinstance(x, (datetime.date, datetime.timedelta, np.datetime64, np.timedelta64))  # incl. pd.Timestamp


def _column(ds: xr.Dataset, name: str) -> np.ndarray:
    if name not in ds:
        raise ValueError(f"new data lacks the scalar covariate {name!r}")
    da = ds[name]
    if da.dims != (SAMPLE,):
        raise ValueError(f"{name!r} has dims {da.dims}; scalar covariates must have only the 'sample' dim")
    vals = np.asarray(da.values)
    if vals.dtype.kind == "c":
        raise ValueError(f"the scalar covariate {name!r} is complex; the kernel needs real numbers: use "
                         f"ds[{name!r}].real and ds[{name!r}].imag as two covariates, or np.abs(...)")
    if vals.dtype.kind in "mM" or (vals.dtype == object and any(_is_date(x) for x in vals.tolist())):
        zoned = vals.dtype == object and any(getattr(x, "tzinfo", None) is not None for x in vals.tolist())
        fix = (f"t = pd.DatetimeIndex(ds[{name!r}].values); ds[{name!r}] = ('sample', np.asarray((t - t.min()) / "
               "pd.Timedelta(days=1)))") if zoned else \
            f"(ds[{name!r}] - ds[{name!r}].min()) / np.timedelta64(1, 'D')"
        raise ValueError(f"the scalar covariate {name!r} holds {'timezone-aware dates' if zoned else _DATES}; "
                         f"convert them to numbers first (e.g. days since the first), e.g. {fix}")
    if vals.dtype == object:  # pandas' nullable booleans: numbers once their NA are dropped (refused in raw())
        present = [x for x in vals.tolist() if not is_missing(x)]
        if present and all(isinstance(x, (bool, np.bool_)) for x in present) and len(present) == vals.size:
            vals = vals.astype(bool)
    return vals


def evaluate(tree: list[Any], ds: xr.Dataset) -> np.ndarray:
    """Interpret a checked factor tree (the only place where formula terms are computed).

    Examples
    --------
    >>> evaluate(["op", "Mult", ["num", 2], ["var", "z"]], xr.Dataset({"z": ("sample", [1.0, 3.0])}))
    array([2., 6.])
    """
    op = tree[0]
    if op == "var":
        return _column(ds, tree[1])
    if op == "num":
        return np.asarray(float(tree[1]))
    if op in {"neg", "pos"}:
        v = _numeric(evaluate(tree[1], ds), tree[1])
        return -v if op == "neg" else v
    if op == "fun":
        return FUNCTIONS[tree[1]](_numeric(evaluate(tree[2], ds), tree[2]))
    if op == "op":
        return _BINOPS[getattr(ast, tree[1])](_numeric(evaluate(tree[2], ds), tree[2]),
                                             _numeric(evaluate(tree[3], ds), tree[3]))
    raise ValueError(f"unknown design node {op!r}")  # pragma: no cover - trees come from check_factor


def _numeric(v: np.ndarray, tree: list[Any]) -> np.ndarray:
    if v.dtype.kind not in "biuf":
        raise ValueError(f"arithmetic on {factor_variables(tree)} which hold text; wrap a categorical "
                         "variable in C() and leave it out of arithmetic")
    return v.astype(float)


def is_missing(x: Any) -> bool:
    """Whether one value is missing: None, NaN, pandas' NA or NaT.

    Examples
    --------
    >>> import pandas as pd
    >>> [is_missing(v) for v in (None, float("nan"), pd.NA, pd.NaT, "NA", 0)]
    [True, True, True, True, False, False]
    """
    return x is None or (isinstance(x, (float, np.floating)) and bool(np.isnan(x))) or x is pd.NA or x is pd.NaT
