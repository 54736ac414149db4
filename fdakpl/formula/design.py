"""The scalar part of a formula as data: factors, factor terms, numeric columns and their standardisation.

The factors of a formula's scalar terms are checked and computed by the grammar's
interpreter (:mod:`fdakpl.formula.grammar`). Factors are not coded by contrasts. A term
made only of factors (``C(g)``, a text variable, ``C(a):C(b)``) is a *factor term*: its
kernel input is the indicator matrix of its cells (:func:`fdakpl.factor_kernels.indicators`)
and its kernel a :class:`~fdakpl.factor_kernels.Categorical` kernel, under which every
level is equally far from every other, so the names, the order and the reference level of
a factor do not change the fit. Terms with a numeric factor (``age``, ``np.log(dose)``,
``age:C(sex)``) make the columns of one design matrix (no intercept; a factor in them
coded by all its levels; columns standardised with the training mean and standard
deviation), the input of the kernel named ``"scalars"``.

The checked factors, the categorical levels, how each column and each factor term is built
from them and the standardisation are plain data (:meth:`ScalarDesign.to_dict`), so a saved
design is rebuilt by :meth:`ScalarDesign.from_dict` without evaluating any text: the same
interpreter computes the columns at fit, at prediction and after loading.

Examples
--------
>>> import numpy as np, xarray as xr
>>> ds = xr.Dataset({"age": ("sample", [20.0, 30.0, 40.0]), "sex": ("sample", ["f", "m", "f"])})
>>> d = build_design(["np.log(age)", "C(sex)"], [["np.log(age)"], ["C(sex)"]], ds)
>>> d.columns, [t.name for t in d.factor_terms]
(['np.log(age)'], ['C(sex)'])
>>> d.to_dict()["factors"][1]
{'expr': 'C(sex)', 'kind': 'categorical', 'levels': ['f', 'm']}
>>> d.term_inputs(ds)["C(sex)"]
array([[1., 0.],
       [0., 1.],
       [1., 0.]])
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from ..data.functional import SAMPLE
from ..factor_kernels import indicators
from ..utils.notices import warn
from .grammar import check_factor, evaluate, factor_variables, is_missing, level_key

__all__ = ["FactorTerm", "ScalarDesign", "build_design"]


#: the kinds of factors: numbers, factors (C(), text) and subject labels (re())
KINDS = ("numeric", "categorical", "subject")


@dataclass
class _Factor:
    expr: str
    kind: str  # one of KINDS
    tree: list[Any]
    levels: list[str] = field(default_factory=list)

    def values(self, ds: xr.Dataset) -> np.ndarray:
        with np.errstate(all="ignore"):
            v = np.broadcast_to(evaluate(self.tree, ds), (ds.sizes.get(SAMPLE, 1),))
        if self.kind == "numeric":
            return v.astype(float)
        return np.array([None if is_missing(x) else level_key(x) for x in v.tolist()], dtype=object)


@dataclass(frozen=True)
class FactorTerm:
    """A term made only of categorical factors: one kernel term (a :class:`~fdakpl.factor_kernels.Categorical`
    kernel on the indicator rows of its cells).

    ``name`` is the term as written (``"C(g)"``, ``"C(a):C(b)"``); ``factors`` the indices of its factors in
    :attr:`ScalarDesign.factors`. A cell is a combination of one level per factor; the columns of the indicator
    matrix are the cells in the order of ``itertools.product`` of the factors' levels. ``subject``: a subject
    term ``re(ID)`` (one factor; its kernel is a :class:`~fdakpl.factor_kernels.RandomEffect`, and a subject not
    seen when fitting has a row of zeros: the population prediction).
    """

    name: str
    factors: tuple[int, ...]
    subject: bool = False


@dataclass
class ScalarDesign:
    """The scalar part of a formula as data: factors, the numeric design's columns, factor terms, standardisation.

    ``columns_spec[j]`` lists, for column ``j`` of the numeric design (the ``"scalars"`` kernel's input),
    the pairs ``(factor index, level)`` whose product makes the column (``level=None``: the factor's
    numeric value; a level: the indicator of that level). ``factor_terms`` are the terms made only of
    factors, each the input of its own kernel (:meth:`term_inputs`).
    """

    formula: str
    factors: list[_Factor]
    columns: list[str]
    columns_spec: list[list[tuple[int, str | None]]]
    mean: np.ndarray
    scale: np.ndarray
    variables: list[str] = field(default_factory=list)
    factor_terms: list[FactorTerm] = field(default_factory=list)

    @property
    def levels(self) -> dict[str, list[str]]:
        """Categorical levels seen when fitting, by factor (``"sex"`` or ``"C(sex)"``)."""
        return {_short(f): list(f.levels) for f in self.factors if f.kind == "categorical"}

    def _values(self, ds: xr.Dataset) -> list[np.ndarray]:
        """Every factor's values for the samples of ``ds``, checked (finite numbers, seen levels, no NA)."""
        vals = []
        for f in self.factors:
            v = f.values(ds)
            if f.kind == "numeric":
                bad = ~np.isfinite(v)
                if bad.any():
                    raise ValueError(_nonfinite_message(f, ds, bad))
            elif f.kind == "subject":
                if any(x is None for x in v):
                    raise ValueError(f"the subject labels {factor_variables(f.tree)} are missing (NA) for some "
                                     f"samples; give every curve a subject, or drop those curves, e.g. "
                                     f"ds.dropna('sample', subset={factor_variables(f.tree)})")
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
        return vals

    def raw(self, ds: xr.Dataset, values: list[np.ndarray] | None = None) -> np.ndarray:
        """Numeric design matrix before standardisation."""
        vals = self._values(ds) if values is None else values
        out = np.ones((ds.sizes.get(SAMPLE, 0), len(self.columns_spec)))
        for j, parts in enumerate(self.columns_spec):
            for i, level in parts:
                out[:, j] *= vals[i] if level is None else (vals[i] == level)
        return out

    def matrix(self, ds: xr.Dataset, values: list[np.ndarray] | None = None) -> np.ndarray:
        """Standardised numeric design matrix for the samples of ``ds`` (the ``"scalars"`` kernel's input)."""
        with np.errstate(all="ignore"):
            out = (self.raw(ds, values) - self.mean) / self.scale
        if not np.all(np.isfinite(out)):
            bad = [c for c, ok in zip(self.columns, np.isfinite(out).all(axis=0), strict=True) if not ok]
            raise ValueError(f"the scalar design columns {bad} overflow after standardisation (values far beyond "
                             "the training range); check the units of those covariates")
        return out

    def term_inputs(self, ds: xr.Dataset, values: list[np.ndarray] | None = None) -> dict[str, np.ndarray]:
        """Indicator rows of every factor term's cells for the samples of ``ds`` (the Categorical kernels' inputs).

        Examples
        --------
        >>> ds = xr.Dataset({"a": ("sample", ["u", "v", "u"]), "b": ("sample", [1, 1, 2])})
        >>> build_design(["a", "C(b)"], [["a", "C(b)"]], ds).term_inputs(ds)["a:C(b)"]
        array([[1., 0., 0., 0.],
               [0., 0., 1., 0.],
               [0., 1., 0., 0.]])
        """
        vals = self._values(ds) if values is None else values
        out = {}
        for term in self.factor_terms:
            code = np.zeros(ds.sizes.get(SAMPLE, 0), dtype=np.intp)
            if term.subject:  # a subject not seen when fitting: a row of zeros (no subject effect)
                lv = self.factors[term.factors[0]].levels
                code = pd.Index(lv).get_indexer(vals[term.factors[0]])
                rows = np.zeros((code.size, len(lv)))
                seen = np.flatnonzero(code >= 0)
                rows[seen, code[seen]] = 1.0
                out[term.name] = rows
                continue
            for i in term.factors:  # mixed radix: the cell's position in product(levels of each factor)
                lv = self.factors[i].levels
                code = code * len(lv) + pd.Index(lv).get_indexer(vals[i])
            out[term.name] = indicators(code, int(np.prod([len(self.factors[i].levels) for i in term.factors])))
        return out

    def inputs(self, ds: xr.Dataset, name: str) -> dict[str, np.ndarray]:
        """Kernel inputs of the scalar terms: the numeric design under ``name`` (when it has columns) and the
        indicator rows of each factor term under the term's name."""
        vals = self._values(ds)
        out = {name: self.matrix(ds, vals)} if self.columns else {}
        return {**out, **self.term_inputs(ds, vals)}

    def new_subjects(self, ds: xr.Dataset) -> dict[str, list[str]]:
        """Subjects of ``ds`` not seen when fitting, by subject term (only the terms that have some).

        Examples
        --------
        >>> train = xr.Dataset({"id": ("sample", [7, 8, 7])})
        >>> build_design(["re(id)"], [["re(id)"]], train).new_subjects(xr.Dataset({"id": ("sample", [8, 9])}))
        {'re(id)': ['9']}
        """
        out = {}
        for term in self.factor_terms:
            if term.subject:
                f = self.factors[term.factors[0]]
                new = sorted(set(f.values(ds).tolist()) - set(f.levels) - {None})
                if new:
                    out[term.name] = new
        return out

    def to_dict(self) -> dict[str, Any]:
        """The design as plain data (no code): what :func:`fdakpl.save` stores."""
        return {"formula": self.formula,
                "factors": [{"expr": f.expr, "kind": f.kind, "levels": list(f.levels)} for f in self.factors],
                "columns": list(self.columns),
                "columns_spec": [[[i, lv] for i, lv in parts] for parts in self.columns_spec],
                "mean": np.asarray(self.mean, dtype=float), "scale": np.asarray(self.scale, dtype=float),
                "variables": list(self.variables),
                "factor_terms": [{"name": t.name, "factors": list(t.factors),
                                  **({"subject": True} if t.subject else {})} for t in self.factor_terms]}

    @classmethod
    def from_dict(cls, d: dict[str, Any], variables: set[str]) -> ScalarDesign:
        """Rebuild a stored design, checking every factor against the grammar (nothing is evaluated).

        Designs stored before factor terms existed (no ``"factor_terms"``) load as they were fitted: every
        scalar term in the numeric design.

        Raises
        ------
        ValueError
            A factor outside the grammar, or parts that do not fit together.
        """
        factors = []
        for f in d["factors"]:
            kind, levels = f["kind"], [str(v) for v in f["levels"]]
            if kind not in KINDS:
                raise ValueError(f"unknown factor kind {kind!r}")
            checked = check_factor(f["expr"], variables, lookup=f["expr"] in variables)
            if checked["kind"] == "categorical" and kind != "categorical":
                raise ValueError(f"the factor {f['expr']!r} is C() but stored as numeric")
            if (checked["kind"] == "subject") != (kind == "subject"):
                raise ValueError(f"the factor {f['expr']!r} is stored as {kind!r}, which does not match its text")
            factors.append(_Factor(str(f["expr"]), kind, checked["tree"], levels))
        spec = []
        for parts in d["columns_spec"]:
            spec.append([(_factor_index(i, factors), lv) for i, lv in parts])
            for i, lv in spec[-1]:
                if factors[i].kind == "subject" or (lv is None) != (factors[i].kind == "numeric") \
                    or (lv is not None and lv not in factors[i].levels):
                    raise ValueError(f"a column refers to the level {lv!r} of {factors[i].expr!r}")
        terms = []
        for t in d.get("factor_terms", []):
            idx = tuple(_factor_index(i, factors) for i in t["factors"])
            subject = bool(t.get("subject", False))
            ok = len(idx) == 1 and factors[idx[0]].kind == "subject" if subject else \
                idx and all(factors[i].kind == "categorical" for i in idx)
            if not ok:
                raise ValueError(f"the factor term {t['name']!r} refers to factors that are not "
                                 f"{'one subject factor' if subject else 'categorical'}")
            terms.append(FactorTerm(str(t["name"]), idx, subject))
        mean, scale = np.asarray(d["mean"], dtype=float), np.asarray(d["scale"], dtype=float)
        columns = [str(c) for c in d["columns"]]
        if not (len(columns) == len(spec) == mean.shape[0] == scale.shape[0]) or mean.ndim != 1 \
                or not np.all(np.isfinite(mean)) or not np.all(np.isfinite(scale)) or not np.all(scale > 0):
            raise ValueError("the columns, means and scales of the scalar design do not fit together")
        used = sorted({v for f in factors for v in factor_variables(f.tree)})
        return cls(str(d["formula"]), factors, columns, spec, mean, scale, used, terms)


def _factor_index(i: Any, factors: list[_Factor]) -> int:
    if not isinstance(i, int) or isinstance(i, bool) or not 0 <= i < len(factors):
        raise ValueError(f"a column or a factor term refers to the factor {i!r}, which the design lacks")
    return i


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
    """Check and compute the factors, split the terms into factor terms and numeric columns, and standardise.

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
        Factor terms in a canonical order (by the variables they read, not by their place in the formula), numeric
        columns in the formula's order; a factor inside a numeric term is coded by all its levels.

    Examples
    --------
    >>> import xarray as xr
    >>> ds = xr.Dataset({"a": ("sample", ["u", "v", "w"]), "z": ("sample", [0.5, 1.0, 2.0])})
    >>> d = build_design(["z", "a"], [["z"], ["a"], ["z", "a"]], ds)
    >>> d.columns, [t.name for t in d.factor_terms]
    (['z', 'z:a[u]', 'z:a[v]', 'z:a[w]'], ['a'])
    """
    variables = {str(v) for v in ds.variables}
    lookups = lookups or set()
    factors: list[_Factor] = []
    for expr in factor_exprs:
        checked = check_factor(expr, variables, lookup=expr in lookups)
        probe = _Factor(expr, checked["kind"] if checked["kind"] in KINDS else "numeric", checked["tree"])
        with np.errstate(all="ignore"):
            raw = np.asarray(evaluate(probe.tree, ds))
        if probe.kind == "numeric" and raw.dtype.kind not in "biuf":
            probe.kind = "categorical"  # text is categorical, as in R and formulaic
        if probe.kind == "subject":
            present = {x for x in probe.values(ds).tolist() if x is not None}
            probe.levels = sorted(present, key=lambda s: _sort_key(s, raw))
        elif probe.kind == "categorical":
            present = [x for x in probe.values(ds).tolist() if x is not None]
            order = sorted(set(present), key=lambda s: _sort_key(s, raw))
            levels = checked.get("levels") or order
            extra = sorted(set(present) - set(levels))
            if extra:
                raise ValueError(f"{expr!r} has values {extra} outside its levels=[...] {levels}")
            if len(set(levels)) != len(levels):
                raise ValueError(f"{expr!r} lists a level twice in levels=[...] {levels}")
            ref = checked.get("reference")
            if ref is not None:
                if ref not in levels:
                    raise ValueError(f"the reference level {ref!r} of {expr!r} is not one of its levels {levels}")
                levels = [ref] + [lv for lv in levels if lv != ref]  # shown first; the fit does not depend on it
            probe.levels = levels
        factors.append(probe)
    label = formula or " + ".join(":".join(t) for t in terms)
    design = ScalarDesign(label, factors, [], [], np.zeros(0), np.ones(0),
                          sorted({v for f in factors for v in factor_variables(f.tree)}))
    index = {f.expr: i for i, f in enumerate(factors)}
    spec: list[list[tuple[int, str | None]]] = []
    names: list[str] = []
    fterms: list[FactorTerm] = []
    for t in terms:
        idx = [index[e] for e in t]
        if any(factors[i].kind == "subject" for i in idx):
            if len(idx) > 1:
                raise ValueError(f"the term {':'.join(t)!r} interacts a subject effect re() with other factors; "
                                 "fdakpl has one subject effect per re() term, alone (nested or interacted "
                                 "subject effects are not supported): write re(ID) as a term of its own")
            fterms.append(FactorTerm(t[0], (idx[0],), subject=True))
            continue
        if all(factors[i].kind == "categorical" for i in idx):
            fterms.append(FactorTerm(":".join(t), tuple(idx)))
            continue
        choices = [[(i, None, factors[i].expr)] if factors[i].kind == "numeric" else
                   [(i, level, f"{factors[i].expr}[{level}]") for level in factors[i].levels] for i in idx]
        for combo in itertools.product(*choices):
            spec.append([(i, level) for i, level, _ in combo])
            names.append(":".join(n for _, _, n in combo))
    design.columns, design.columns_spec = names, spec
    # canonical order (the tuning visits terms in order): by the variables the term reads (not by its place in the
    # formula, nor by how its levels are written: C(g, levels=[...]) reads g), then by its text
    design.factor_terms = sorted(fterms, key=lambda ft: (sorted(v for i in ft.factors
                                                                for v in factor_variables(factors[i].tree)),
                                                         sorted(factors[i].expr for i in ft.factors)))
    values = design._values(ds)
    design.mean, design.scale = _standardisation(design.raw(ds, values), names)
    for ft in design.factor_terms:
        cells = {tuple(values[i][r] for i in ft.factors) for r in range(ds.sizes.get(SAMPLE, 0))}
        if len(cells) < 2:
            warn(f"the factor term {ft.name!r} has a single level (or combination of levels) in the training data: "
                 "it does not enter the model (drop it from the formula)", stacklevel=4)
    return design


def _sort_key(level: str, raw: np.ndarray) -> tuple[int, Any]:
    """Numeric levels in numeric order (integers exactly: Python compares int and float exactly), text after."""
    if raw.dtype.kind in "biuf":
        if level in {"True", "False"}:
            return (0, int(level == "True"))
        try:
            return (0, int(level))
        except ValueError:
            return (0, float(level))
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
