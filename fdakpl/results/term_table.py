"""The summary's term table: one row per term, as mgcv's ``summary.gam`` (term, kind, fitted kernel and width,
importance and p-value when computed).

The table is built from a list of :class:`TermRecord` (one per row), so that a new kind of term is one more
record: :func:`term_records` makes them from a fit; :func:`term_table` lays them out.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .tables import ColumnTable, round_numbers

__all__ = ["TermRecord", "term_records", "term_table"]


@dataclass(frozen=True)
class TermRecord:
    """One row of the term table.

    Attributes
    ----------
    name : str
        The term or covariate (``"cca"``, ``"pasat"``, ``"C(sex)"``).
    kind : str
        ``"curve"``, ``"scalar"`` or ``"factor"`` (or any other kind of term).
    kernel : str
        The fitted kernel of its term (a scalar covariate shares the ``"scalars"`` kernel).
    width : str
        The fitted width as a multiple of the median heuristic, when tuned (else ``""``).
    drop, pvalue : str
        Drop importance and permutation p-value, as printed (``""`` when not computed).
    """

    name: str
    kind: str
    kernel: str
    width: str = ""
    drop: str = ""
    pvalue: str = ""


_KINDS = {"functional": "curve", "scalar": "scalar", "factor": "factor", "scalars": "scalars", "subject": "subject"}


def term_records(res: Any, importance: Any = None) -> list[TermRecord]:
    """The rows of a fit's term table: its covariates with their fitted kernels (``res.kernels``), the width
    multiples the tuning chose, and the importance when computed.

    Examples
    --------
    >>> from fdakpl import FunctionalRegression, datasets
    >>> res = FunctionalRegression("rcst ~ cca + pasat", datasets.dti_first_visits(), interpolate_inputs=True,
    ...                            progress=False).fit()
    >>> [(r.name, r.kind, r.width) for r in term_records(res)]
    [('cca', 'curve', '4 x median'), ('pasat', 'scalar', '16 x median')]
    """
    from .exchange import covariates

    kernels = res.kernels
    tun = getattr(res, "tuning", None)
    multiples = dict(zip(tun.terms, tun.multiples, strict=True)) if tun is not None else {}
    rows = covariates(res.model.parsed, list(kernels))
    out = []
    for c in rows:
        kernel = round_numbers(repr(kernels[c.term]))
        if c.term != c.name:  # a covariate of a combined kernel: say which
            kernel = f"{c.term}: {kernel}"
        # a subject term's kernel has a weight (shown in the kernel), not a width
        width = f"{multiples[c.term]:g} x median" if c.term in multiples and c.kind != "subject" else ""
        drop = p = ""
        if importance is not None and c.name in importance.terms:
            row = importance.row(c.name)
            drop, p = (f"{row['drop']:.3g}" if np.isfinite(row["drop"]) else "-"), row["p"]
        out.append(TermRecord(c.name, _KINDS.get(c.kind, c.kind), kernel, width, drop, p))
    return out


def term_table(records: list[TermRecord], importance: Any = None, title: str = "Terms") -> ColumnTable:
    """The term table of ``records`` (importance columns only when computed).

    Examples
    --------
    >>> t = term_table([TermRecord("cca", "curve", "Gaussian(sigma=0.3191)", "4 x median")])
    >>> t.as_text().splitlines()[2].split()
    ['term', 'kind', 'kernel', '(fitted)', 'width']
    >>> t.as_text().splitlines()[4]
    'cca   curve  Gaussian(sigma=0.3191)  4 x median'
    """
    headers = ["term", "kind", "kernel (fitted)", "width"]
    computed = importance is not None
    if computed:
        short = importance.short
        headers += [f"d{short} drop", "p-value"]
    rows = [[r.name, r.kind, r.kernel, r.width or "-"] + ([r.drop or "-", r.pvalue or "-"] if computed else [])
            for r in records]
    return ColumnTable(headers, rows, title, aligns="llll" + ("rr" if computed else ""))
