"""Formulas such as ``"rcst ~ cca + C(sex) + age"`` → kernel inputs for KPL.

The response is one functional variable. On the right-hand side,

* a *bare name* of a functional variable is a functional term: it gets its
  own kernel on curves (L2 geometry of its grid);
* every other term is scalar (covariates, ``C(sex)``, ``np.log(age)``,
  interactions among scalars) and goes into one scalar design matrix built
  by formulaic (no intercept; continuous columns standardised with the
  training mean and standard deviation), which gets one kernel on its rows
  under the name ``"scalars"``.

Terms combine by a product (default) or a sum of their kernels.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from .data.functional import SAMPLE, as_dataset, interpolate_missing, quadrature_weights, validate_functional
from .kernels import Gaussian, Kernel, Product, Sum

__all__ = ["ParsedFormula", "ScalarDesign", "default_kernels", "median_heuristic", "parse_formula"]

SCALARS = "scalars"
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*")


def _split_top(rhs: str, sep: str = "+") -> list[str]:
    out, depth, cur = [], 0, []
    for ch in rhs:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == sep and depth == 0:
            out.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    out.append("".join(cur).strip())
    return [t for t in out if t]




def _is_functional(da: xr.DataArray) -> bool:
    return da.ndim == 2 and SAMPLE in da.dims


@dataclass
class ScalarDesign:
    """The scalar part of a formula: formulaic model spec, standardisation and categorical levels."""

    formula: str
    spec: Any
    columns: list[str]
    mean: np.ndarray
    scale: np.ndarray
    levels: dict[str, list[str]] = field(default_factory=dict)
    variables: list[str] = field(default_factory=list)

    def matrix(self, ds: xr.Dataset) -> np.ndarray:
        """Standardised design matrix for the samples of ``ds``."""
        df = _scalar_frame(ds, self.variables)
        for var, lev in self.levels.items():
            unseen = sorted(set(df[var].dropna().astype(str)) - set(lev))
            if unseen:
                raise ValueError(
                    f"{var!r} has levels {unseen} that were not seen when fitting (seen: {lev}); drop those "
                    "samples or refit with them"
                )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                mm = self.spec.get_model_matrix(df, na_action="raise")
            except Exception as err:  # formulaic raises several types
                raise ValueError(f"cannot build the scalar design of {self.formula!r} for new data: {err}") from None
        out = (np.asarray(mm, dtype=float) - self.mean) / self.scale
        if not np.all(np.isfinite(out)):
            bad = [v for v in self.variables
                   if df[v].dtype != object and not np.all(np.isfinite(df[v].to_numpy(float)))] or self.variables
            raise ValueError(f"scalar covariates {bad} have infinite values (or give them in {self.formula!r}); "
                             f"drop those samples, e.g. ds.isel(sample=np.isfinite(ds[{bad[0]!r}]).values)")
        return out


def _scalar_frame(ds: xr.Dataset, variables: list[str]) -> pd.DataFrame:
    cols = {}
    for v in variables:
        da = ds[v]
        if da.dims != (SAMPLE,):
            raise ValueError(f"{v!r} has dims {da.dims}; scalar covariates must have only the 'sample' dim")
        vals = da.values
        if vals.dtype.kind in "OUS":
            cols[v] = pd.Series(vals).where(pd.Series(vals).notna(), None).astype(object)
        else:
            cols[v] = vals
    return pd.DataFrame(cols)


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
    def terms(self) -> list[str]:
        return self.functional_terms + ([SCALARS] if self.scalar is not None else [])

    def inputs(self, ds: xr.Dataset) -> dict[str, Any]:
        """Kernel inputs ``{term: DataArray or array}`` for the samples of ``ds``."""
        ds = as_dataset(ds)
        out: dict[str, Any] = {}
        for t in self.functional_terms:
            if t not in ds:
                raise ValueError(f"new data lacks the functional input {t!r}")
            out[t] = validate_functional(ds[t], t)
        if self.scalar is not None:
            missing = [v for v in self.scalar.variables if v not in ds]
            if missing:
                raise ValueError(f"new data lacks the scalar covariates {missing}")
            out[SCALARS] = self.scalar.matrix(ds)
        return out


def parse_formula(formula: str, data: Any) -> ParsedFormula:
    """Parse ``formula`` against ``data``.

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
        scalar covariates.

    Examples
    --------
    >>> from fdakpl import datasets
    >>> p = parse_formula("rcst ~ cca + C(sex)", datasets.dti_first_visits())
    >>> p.response, p.functional_terms, p.scalar.columns
    ('rcst', ['cca'], ['C(sex)[female]', 'C(sex)[male]'])
    """
    ds = as_dataset(data)
    if not isinstance(formula, str) or formula.count("~") != 1:
        raise ValueError(f"formula must look like 'response ~ term + term', got {formula!r}")
    lhs, rhs = (s.strip() for s in formula.split("~"))
    available = sorted(str(v) for v in ds.data_vars)
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
    functional_vars = {str(v) for v in ds.data_vars if _is_functional(ds[v])}
    fterms: list[str] = []
    sterms: list[str] = []
    for term in _split_top(rhs):
        if term in {"1", "0", "-1", "+1"}:
            continue
        if term.startswith("-"):
            raise ValueError(f"term removal ({term!r}) is not supported; list the terms you want")
        if term in functional_vars:
            if term == lhs:
                raise ValueError(f"{lhs!r} is both the response and an input")
            fterms.append(term)
            continue
        names = set(_IDENT.findall(term))
        used_f = names & functional_vars
        if used_f:
            raise ValueError(
                f"unsupported term {term!r}: functional variables ({sorted(used_f)}) enter a formula as bare names "
                "(transformations and interactions of curves are not supported; transform the curves in the data)"
            )
        sterms.append(term)
    if not fterms and not sterms:
        raise ValueError(f"formula {formula!r} has no input term")
    if len(set(fterms)) != len(fterms):
        raise ValueError(f"a functional term appears twice in {formula!r}")
    scalar = _scalar_design(" + ".join(sterms), ds, available) if sterms else None
    grids = {t: validate_functional(ds[t], t)[next(d for d in ds[t].dims if d != SAMPLE)].values for t in fterms}
    return ParsedFormula(formula, lhs, rdim, fterms, scalar, grids)


def _scalar_design(rhs: str, ds: xr.Dataset, available: list[str]) -> ScalarDesign:
    from formulaic import model_matrix

    names = set(_IDENT.findall(rhs))
    variables = sorted(n for n in names if n in ds.data_vars)
    df = _scalar_frame(ds, variables)
    levels = {v: sorted(set(df[v].dropna().astype(str))) for v in variables if df[v].dtype == object}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            mm = model_matrix("0 + " + rhs, df, na_action="raise")
        except Exception as err:  # formulaic raises several types
            msg = str(err)
            unknown = sorted(n for n in names if n not in ds.data_vars and n not in {"C", "I", "np", "log", "exp",
                                                                                      "center", "scale", "poly",
                                                                                      "bs", "sqrt", "abs"})
            if "null values" in msg or "contains null" in msg:
                bad = [v for v in variables if df[v].isna().any()]
                raise ValueError(
                    f"scalar covariates {bad} have missing values (NA) for some samples; drop them, e.g. "
                    f"ds.dropna('sample', subset={bad})"
                ) from None
            if unknown:
                raise ValueError(f"unknown names {unknown} in {rhs!r}; available variables: {available}") from None
            raise ValueError(f"cannot build the scalar design {rhs!r}: {msg}") from None
    X = np.asarray(mm, dtype=float)
    mean = X.mean(axis=0)
    sd = X.std(axis=0)
    scale = np.where(sd > 0, sd, 1.0)
    return ScalarDesign(rhs, mm.model_spec, list(mm.model_spec.column_names), mean, scale, levels, variables)


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
    d = pdist(X)
    d = d[d > 0]
    return float(np.median(d)) if d.size else 1.0


def default_kernels(parsed: ParsedFormula, ds: xr.Dataset, interpolate: bool) -> dict[str, Kernel]:
    """Gaussian kernels with median-heuristic widths for every term.

    Examples
    --------
    >>> from fdakpl import datasets
    >>> ds = datasets.dti_first_visits()
    >>> k = default_kernels(parse_formula("rcst ~ cca", ds), ds, interpolate=True)
    >>> type(k["cca"]).__name__
    'Gaussian'
    """
    out: dict[str, Kernel] = {}
    for t in parsed.functional_terms:
        da = validate_functional(ds[t], t)
        grid = parsed.input_grids[t]
        vals = da.values
        if np.isnan(vals).any():
            if not interpolate:
                vals = vals[~np.isnan(vals).any(axis=1)]
            else:
                vals = interpolate_missing(vals, grid, t)
        out[t] = Gaussian(median_heuristic(vals, quadrature_weights(grid)))
    if parsed.scalar is not None:
        out[SCALARS] = Gaussian(median_heuristic(parsed.scalar.matrix(ds)))
    return out


def combine_kernels(kernels: Mapping[str, Kernel], terms: list[str], combine: str) -> Kernel:
    """Product or sum of per-term kernels (validated against the formula's terms).

    Examples
    --------
    >>> combine_kernels({"a": Gaussian(1.0)}, ["a"], "product")
    a:Gaussian(sigma=1.0)
    """
    missing = [t for t in terms if t not in kernels]
    extra = [k for k in kernels if k not in terms]
    if missing:
        raise ValueError(f"no kernel for terms {missing}")
    if extra:
        raise ValueError(f"kernels given for {extra}, which are not terms of the formula {terms} "
                         f"(scalar covariates share the kernel named {SCALARS!r})")
    if combine not in {"product", "sum"}:
        raise ValueError(f"combine must be 'product' or 'sum', got {combine!r}")
    sub = {t: kernels[t] for t in terms}
    return Product(sub) if combine == "product" else Sum(sub)
