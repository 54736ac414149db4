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
* ``C(x)`` (a factor), ``C(x, Treatment("b"))`` / ``C(x, Treatment(reference="b"))``
  (reference level ``b``) and ``C(x, levels=["a", "b"])``.

Anything else is refused with a :class:`ValueError` naming the term. The
checked factors, the categorical levels, how each column is built from them
and the standardisation are plain data (:meth:`ScalarDesign.to_dict`), so a
saved design is rebuilt by :meth:`ScalarDesign.from_dict` without evaluating
any text: the same interpreter computes the columns at fit, at prediction and
after loading. Which categorical factors are coded with all their levels and
which drop the reference level (no intercept) is decided by formulaic on
already computed columns (lookups only), and the interpreter's matrix is
checked against formulaic's at fit time.

Examples
--------
>>> import numpy as np, xarray as xr
>>> ds = xr.Dataset({"age": ("sample", [20.0, 30.0, 40.0]), "sex": ("sample", ["f", "m", "f"])})
>>> d = build_design(["np.log(age)", "C(sex)"], [["np.log(age)"], ["C(sex)"]], ds)
>>> d.columns
['np.log(age)', 'C(sex)[f]', 'C(sex)[m]']
>>> d.to_dict()["factors"][1]
{'expr': 'C(sex)', 'kind': 'categorical', 'levels': ['f', 'm']}
"""

from __future__ import annotations

import ast
import itertools
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from ..data.functional import SAMPLE
from ..utils.notices import warn

__all__ = ["FUNCTIONS", "ScalarDesign", "build_design", "check_factor", "factor_variables"]

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
        "and C(x) / C(x, Treatment('ref')) / C(x, levels=[...]); transform other things in the data first")


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
        a tree of plain data (lists, strings, numbers) that :func:`_evaluate` reads.

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
    try:
        node = ast.parse(expr.strip(), mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError) as err:
        raise _refuse(expr, f"it is not an expression ({type(err).__name__})") from None
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "C":
        return _categorical(expr, node, variables)
    return {"kind": "auto", "tree": _tree(expr, node, variables, 0, top=True)}


def _string_arg(expr: str, node: ast.AST) -> str:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    raise _refuse(expr, "a level or a quoted name must be a string constant")


def _categorical(expr: str, node: ast.Call, variables: set[str]) -> dict[str, Any]:
    if len(node.args) not in (1, 2):
        raise _refuse(expr, "C() takes a variable and optionally Treatment('reference')")
    out: dict[str, Any] = {"kind": "categorical", "tree": _tree(expr, node.args[0], variables, 1, top=True)}
    if len(node.args) == 2:
        c = node.args[1]
        ok_name = isinstance(c, ast.Call) and isinstance(c.func, ast.Name) and c.func.id in {"Treatment", "T"}
        if not ok_name or len(c.args) + len(c.keywords) > 1 or (c.keywords and c.keywords[0].arg not in
                                                                  {"reference", "base"}):
            raise _refuse(expr, "the only contrast is Treatment('reference') (other contrasts would change the "
                                "kernel geometry only by a rotation)")
        ref = c.args[0] if c.args else (c.keywords[0].value if c.keywords else None)
        if ref is not None:
            if not isinstance(ref, ast.Constant) or not isinstance(ref.value, (str, int, float)) \
                    or isinstance(ref.value, bool):
                raise _refuse(expr, "the reference level must be a constant")
            out["reference"] = _level_key(ref.value)
    for kw in node.keywords:
        if kw.arg != "levels" or not isinstance(kw.value, (ast.List, ast.Tuple)):
            raise _refuse(expr, "C() accepts only the keyword levels=[...]")
        lv = []
        for e in kw.value.elts:
            if not isinstance(e, ast.Constant) or not isinstance(e.value, (str, int, float)):
                raise _refuse(expr, "levels=[...] must list constants")
            lv.append(_level_key(e.value))
        out["levels"] = lv
    return out


def _tree(expr: str, node: ast.AST, variables: set[str], depth: int, top: bool = False) -> list[Any]:
    if depth > _MAX_DEPTH:
        raise _refuse(expr, f"it nests deeper than {_MAX_DEPTH} levels")
    dotted = _dotted(node)
    if dotted is not None and dotted in variables:
        return ["var", dotted]
    if isinstance(node, ast.Name):
        raise FormulaError(f"unknown name {node.id!r} in the formula term {expr!r}; available variables: "
                           f"{sorted(variables)}")
    if isinstance(node, ast.Constant):
        if isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
            return ["num", node.value]
        raise _refuse(expr, f"the constant {node.value!r} is not a number (put text in the data as a variable)")
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        return ["neg" if isinstance(node.op, ast.USub) else "pos", _tree(expr, node.operand, variables, depth + 1)]
    if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
        return ["op", type(node.op).__name__, _tree(expr, node.left, variables, depth + 1),
                _tree(expr, node.right, variables, depth + 1)]
    if isinstance(node, ast.Call) and not node.keywords and len(node.args) == 1:
        func = node.func
        if isinstance(func, ast.Name) and func.id in {"I", "Q"}:
            if func.id == "Q":
                name = _string_arg(expr, node.args[0])
                if name not in variables:
                    raise FormulaError(f"unknown name {name!r} in Q() of the formula; available variables: "
                                       f"{sorted(variables)}")
                return ["var", name]
            return _tree(expr, node.args[0], variables, depth + 1)
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in {"np", "numpy"} \
                and func.attr in FUNCTIONS:
            return ["fun", func.attr, _tree(expr, node.args[0], variables, depth + 1)]
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "C":
        raise _refuse(expr, "C() must be a whole factor, not inside arithmetic")
    if isinstance(node, ast.Call):
        raise _refuse(expr, f"the function {ast.unparse(node.func)!r} is not one of the allowed transforms (or it "
                            "has keywords or several arguments)")
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


def _level_key(v: Any) -> str:
    """The text of a categorical level: numbers as their shortest form (``3`` and ``3.0`` are one level)."""
    if isinstance(v, (bool, np.bool_)):
        return str(bool(v))
    if isinstance(v, (int, float, np.integer, np.floating)):
        f = float(v)
        return str(int(f)) if f.is_integer() and abs(f) < 2 ** 53 else repr(f)
    return str(v)


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
    if vals.dtype.kind in "mM":
        raise ValueError(f"the scalar covariate {name!r} holds dates or durations; convert them to numbers first, "
                         f"e.g. (ds[{name!r}] - ds[{name!r}].min()) / np.timedelta64(1, 'D')")
    return vals


def _evaluate(tree: list[Any], ds: xr.Dataset) -> np.ndarray:
    """Interpret a checked factor tree (the only place where formula terms are computed)."""
    op = tree[0]
    if op == "var":
        return _column(ds, tree[1])
    if op == "num":
        return np.asarray(float(tree[1]))
    if op in {"neg", "pos"}:
        v = _numeric(_evaluate(tree[1], ds), tree[1])
        return -v if op == "neg" else v
    if op == "fun":
        return FUNCTIONS[tree[1]](_numeric(_evaluate(tree[2], ds), tree[2]))
    if op == "op":
        return _BINOPS[getattr(ast, tree[1])](_numeric(_evaluate(tree[2], ds), tree[2]),
                                             _numeric(_evaluate(tree[3], ds), tree[3]))
    raise ValueError(f"unknown design node {op!r}")  # pragma: no cover - trees come from check_factor


def _numeric(v: np.ndarray, tree: list[Any]) -> np.ndarray:
    if v.dtype.kind not in "biuf":
        raise ValueError(f"arithmetic on {factor_variables(tree)} which hold text; wrap a categorical "
                         "variable in C() and leave it out of arithmetic")
    return v.astype(float)


@dataclass
class _Factor:
    expr: str
    kind: str  # "numeric" or "categorical"
    tree: list[Any]
    levels: list[str] = field(default_factory=list)

    def values(self, ds: xr.Dataset) -> np.ndarray:
        with np.errstate(all="ignore"):
            v = np.broadcast_to(_evaluate(self.tree, ds), (ds.sizes.get(SAMPLE, 1),))
        if self.kind == "numeric":
            return v.astype(float)
        return np.array([None if _missing(x) else _level_key(x) for x in v.tolist()], dtype=object)


def _missing(x: Any) -> bool:
    return x is None or (isinstance(x, float) and np.isnan(x))


@dataclass
class ScalarDesign:
    """The scalar part of a formula as data: factors, columns, levels and standardisation.

    ``columns_spec[j]`` lists, for column ``j``, the pairs ``(factor index, level)``
    whose product makes the column (``level=None``: the factor's numeric value;
    a level: the indicator of that level).
    """

    formula: str
    factors: list[_Factor]
    columns: list[str]
    columns_spec: list[list[tuple[int, str | None]]]
    mean: np.ndarray
    scale: np.ndarray
    variables: list[str] = field(default_factory=list)

    @property
    def levels(self) -> dict[str, list[str]]:
        """Categorical levels seen when fitting, by factor (``"sex"`` or ``"C(sex)"``)."""
        return {_short(f): list(f.levels) for f in self.factors if f.kind == "categorical"}

    def raw(self, ds: xr.Dataset) -> np.ndarray:
        """Design matrix before standardisation."""
        n = ds.sizes.get(SAMPLE, 0)
        vals = []
        for f in self.factors:
            v = f.values(ds)
            if f.kind == "numeric":
                bad = ~np.isfinite(v)
                if bad.any():
                    raise ValueError(_nonfinite_message(f, ds, bad))
            else:
                if any(x is None for x in v):
                    raise ValueError(f"scalar covariates {factor_variables(f.tree)} have missing values (NA) for "
                                     f"some samples; drop them, e.g. ds.dropna('sample', "
                                     f"subset={factor_variables(f.tree)})")
                unseen = sorted(set(v.tolist()) - set(f.levels))
                if unseen:
                    raise ValueError(f"{_short(f)!r} has levels {unseen} that were not seen when fitting "
                                     f"(seen: {f.levels}); drop those samples or refit with them")
            vals.append(v)
        out = np.ones((n, len(self.columns_spec)))
        for j, parts in enumerate(self.columns_spec):
            for i, level in parts:
                out[:, j] *= vals[i] if level is None else (vals[i] == level)
        return out

    def matrix(self, ds: xr.Dataset) -> np.ndarray:
        """Standardised design matrix for the samples of ``ds``."""
        with np.errstate(all="ignore"):
            out = (self.raw(ds) - self.mean) / self.scale
        if not np.all(np.isfinite(out)):
            bad = [c for c, ok in zip(self.columns, np.isfinite(out).all(axis=0), strict=True) if not ok]
            raise ValueError(f"the scalar design columns {bad} overflow after standardisation (values far beyond "
                             "the training range); check the units of those covariates")
        return out

    def to_dict(self) -> dict[str, Any]:
        """The design as plain data (no code): what :func:`fdakpl.save` stores."""
        return {"formula": self.formula,
                "factors": [{"expr": f.expr, "kind": f.kind, "levels": list(f.levels)} for f in self.factors],
                "columns": list(self.columns),
                "columns_spec": [[[i, lv] for i, lv in parts] for parts in self.columns_spec],
                "mean": np.asarray(self.mean, dtype=float), "scale": np.asarray(self.scale, dtype=float),
                "variables": list(self.variables)}

    @classmethod
    def from_dict(cls, d: dict[str, Any], variables: set[str]) -> ScalarDesign:
        """Rebuild a stored design, checking every factor against the grammar (nothing is evaluated).

        Raises
        ------
        ValueError
            A factor outside the grammar, or parts that do not fit together.
        """
        factors = []
        for f in d["factors"]:
            kind, levels = f["kind"], [str(v) for v in f["levels"]]
            if kind not in {"numeric", "categorical"}:
                raise ValueError(f"unknown factor kind {kind!r}")
            checked = check_factor(f["expr"], variables, lookup=f["expr"] in variables)
            if checked["kind"] == "categorical" and kind != "categorical":
                raise ValueError(f"the factor {f['expr']!r} is C() but stored as numeric")
            factors.append(_Factor(str(f["expr"]), kind, checked["tree"], levels))
        spec = []
        for parts in d["columns_spec"]:
            cols = []
            for i, lv in parts:
                if not isinstance(i, int) or not 0 <= i < len(factors):
                    raise ValueError(f"a column refers to the factor {i!r}, which the design lacks")
                if (lv is None) != (factors[i].kind == "numeric") or (lv is not None and lv not in factors[i].levels):
                    raise ValueError(f"a column refers to the level {lv!r} of {factors[i].expr!r}")
                cols.append((i, lv))
            spec.append(cols)
        mean, scale = np.asarray(d["mean"], dtype=float), np.asarray(d["scale"], dtype=float)
        columns = [str(c) for c in d["columns"]]
        if not (len(columns) == len(spec) == mean.shape[0] == scale.shape[0]) or mean.ndim != 1 \
                or not np.all(np.isfinite(mean)) or not np.all(np.isfinite(scale)) or not np.all(scale > 0):
            raise ValueError("the columns, means and scales of the scalar design do not fit together")
        used = sorted({v for f in factors for v in factor_variables(f.tree)})
        return cls(str(d["formula"]), factors, columns, spec, mean, scale, used)


def _short(f: _Factor) -> str:
    """The variable of a factor that reads one variable as it is (``sex`` for ``C(sex)``), else its text."""
    return f.tree[1] if f.tree[0] == "var" else f.expr


def _nonfinite_message(f: _Factor, ds: xr.Dataset, bad: np.ndarray) -> str:
    names = factor_variables(f.tree)
    num = {v: np.asarray(ds[v].values, dtype=float) for v in names if np.asarray(ds[v].values).dtype.kind in "biuf"}
    nan = [v for v, a in num.items() if np.isnan(a).any()]
    if nan:
        return (f"scalar covariates {nan} have missing values (NA) for some samples; drop them, e.g. "
                f"ds.dropna('sample', subset={nan})")
    inf = [v for v, a in num.items() if np.isinf(a).any()]
    if inf:
        return (f"scalar covariates {inf} have infinite values; drop those samples, e.g. "
                f"ds.isel(sample=np.isfinite(ds[{inf[0]!r}]).values)")
    return (f"the formula term {f.expr!r} is NaN or infinite for {int(bad.sum())} samples (e.g. np.log or np.sqrt "
            f"of values <= 0, or an overflow) although {names} are finite; change the transform (e.g. "
            f"np.log1p, or shift the variable) or drop those samples")


def build_design(factor_exprs: list[str], terms: list[list[str]], ds: xr.Dataset, *,
                 lookups: set[str] | None = None, formula: str | None = None) -> ScalarDesign:
    """Check and compute the factors, let formulaic choose the coding, and standardise.

    Parameters
    ----------
    factor_exprs : list of str
        Distinct factors (text) in order of appearance.
    terms : list of list of str
        Scalar terms, each the factors it multiplies (formulaic's term order).
    ds : xarray.Dataset
        Training data.
    lookups : set of str, optional
        Factors that are plain variable names (no parsing).
    formula : str, optional
        Label of the design (default: the terms joined by ``+``).

    Returns
    -------
    ScalarDesign

    Examples
    --------
    >>> import xarray as xr
    >>> ds = xr.Dataset({"a": ("sample", ["u", "v", "w"]), "b": ("sample", ["p", "q", "p"])})
    >>> build_design(["a", "b"], [["a"], ["b"]], ds).columns  # no intercept: b drops its first level
    ['a[u]', 'a[v]', 'a[w]', 'b[T.q]']
    """
    from formulaic import model_matrix

    variables = {str(v) for v in ds.variables}
    lookups = lookups or set()
    factors: list[_Factor] = []
    for expr in factor_exprs:
        checked = check_factor(expr, variables, lookup=expr in lookups)
        probe = _Factor(expr, "categorical" if checked["kind"] == "categorical" else "numeric", checked["tree"])
        with np.errstate(all="ignore"):
            raw = np.asarray(_evaluate(probe.tree, ds))
        if probe.kind == "numeric" and raw.dtype.kind not in "biuf":
            probe.kind = "categorical"  # text is categorical, as in R and formulaic
        vals = probe.values(ds)
        if probe.kind == "categorical":
            present = [x for x in vals.tolist() if x is not None]
            order = sorted(set(present), key=lambda s: _sort_key(s, raw))
            levels = checked.get("levels") or order
            extra = sorted(set(present) - set(levels))
            if extra:
                raise ValueError(f"{expr!r} has values {extra} outside its levels=[...] {levels}")
            ref = checked.get("reference")
            if ref is not None:
                if ref not in levels:
                    raise ValueError(f"the reference level {ref!r} of {expr!r} is not one of its levels {levels}")
                levels = [ref] + [lv for lv in levels if lv != ref]
            probe.levels = levels
        factors.append(probe)
    label = formula or " + ".join(":".join(t) for t in terms)
    design = ScalarDesign(label, factors, [], [], np.zeros(0), np.ones(0),
                          sorted({v for f in factors for v in factor_variables(f.tree)}))
    frame = {}
    for i, f in enumerate(factors):
        v = f.values(ds)
        if f.kind == "categorical":
            if any(x is None for x in v):
                design.raw(ds)  # raises the NA message
            frame[f"f{i}"] = pd.Categorical(v, categories=f.levels)
        else:
            frame[f"f{i}"] = v
    index = {f.expr: i for i, f in enumerate(factors)}
    synthetic = " + ".join(":".join(f"f{index[e]}" for e in t) for t in terms)
    try:  # lookups of computed columns only: formulaic evaluates no text of the user's formula here
        mm = model_matrix("0 + " + synthetic, pd.DataFrame(frame), na_action="ignore")
    except Exception as err:  # formulaic raises several types
        raise ValueError(f"cannot build the scalar design of {label!r}: {err}") from None
    spec: list[list[tuple[int, str | None]]] = []
    names: list[str] = []
    for st in mm.model_spec.structure:
        for scoped in st.scoped_terms:
            choices = []
            for sf in scoped.factors:
                i = int(sf.factor.expr[1:])
                f = factors[i]
                if f.kind == "numeric":
                    choices.append([(i, None, f.expr)])
                else:
                    lv = f.levels[1:] if sf.reduced else f.levels
                    tag = "T." if sf.reduced else ""
                    choices.append([(i, level, f"{f.expr}[{tag}{level}]") for level in lv])
            for combo in itertools.product(*reversed(choices)):
                combo = tuple(reversed(combo))
                spec.append([(i, level) for i, level, _ in combo])
                names.append(":".join(n for _, _, n in combo))
    design.columns, design.columns_spec = names, spec
    X = design.raw(ds)
    reference = np.asarray(mm, dtype=float)
    if X.shape != reference.shape or not np.allclose(X, reference, rtol=1e-12, atol=0, equal_nan=True):
        raise ValueError(f"the scalar design of {label!r} could not be reproduced from its parts "
                         "(please report this formula)")  # pragma: no cover - a guard against formulaic changes
    design.mean, design.scale = _standardisation(X, names)
    return design


def _sort_key(level: str, raw: np.ndarray) -> tuple[int, Any]:
    if raw.dtype.kind in "biuf":
        return (0, float(level) if level not in {"True", "False"} else float(level == "True"))
    return (1, level)


def _standardisation(X: np.ndarray, names: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Column means and standard deviations, computed on columns divided by their largest magnitude
    (no overflow or underflow for values near 1e+-300); constant columns keep scale 1 (with a warning)."""
    big = np.max(np.abs(X), axis=0) if X.size else np.zeros(X.shape[1])
    big = np.where(big > 0, big, 1.0)
    Z = X / big
    mean = Z.mean(axis=0) * big
    sd = Z.std(axis=0) * big
    const = [n for n, s in zip(names, sd, strict=True) if not s > 0]
    if const:
        warn(f"the scalar design columns {const} are constant in the training data: they do not enter "
                      "the model (drop them from the formula)", stacklevel=4)
    if not (np.all(np.isfinite(mean)) and np.all(np.isfinite(sd))):
        bad = [n for n, m, s in zip(names, mean, sd, strict=True) if not (np.isfinite(m) and np.isfinite(s))]
        raise ValueError(f"the scalar design columns {bad} have values too large to standardise; rescale them "
                         "(e.g. divide by a power of ten)")
    return mean, np.where(sd > 0, sd, 1.0)
