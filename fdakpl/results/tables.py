"""Key-value tables at one width, as text and as HTML, with the summary's number formatting.

The printed form follows fixed rules (checked by ``tests/test_summary.py``):

* every table is :data:`WIDTH` (80) characters wide, and so is the text under the tables;
* numbers have 4 significant digits, inside descriptions too (:func:`round_numbers`);
* a number that is zero up to rounding *relative to its scale* (:data:`ZERO_RTOL`) prints as ``0``;
* names and descriptions are never cut: a value too long for its column gets a row of the full
  width, wrapped at spaces.

:class:`FunctionalSummary` is a statsmodels ``Summary`` made of :class:`KVTable` tables and notes
(``print()`` it, ``.as_text()``, ``.as_html()``); notebooks and the documentation show its HTML.
"""

from __future__ import annotations

import html
import math
import re
import textwrap
from typing import Any

import numpy as np
from statsmodels.iolib.summary import Summary
from statsmodels.iolib.table import SimpleTable
from statsmodels.iolib.tableformatting import fmt_2cols

__all__ = ["KEY_WIDTH", "WIDTH", "ZERO_RTOL", "ColumnTable", "FunctionalSummary", "KVTable", "fmt_number",
           "kv_table", "round_numbers"]

#: width of every table and of the text under them, in characters
WIDTH = 80
#: a value below ``ZERO_RTOL * scale`` in absolute value prints as 0 (about the square root of float64's
#: machine epsilon: what survives of a zero after a square root or a cancellation)
ZERO_RTOL = 1e-8
#: the widest key column of the two-column layout (longer keys get a full-width row)
KEY_WIDTH = 24
_GAP = 2


def fmt_number(x: Any, scale: float | None = None, digits: int = 4) -> str:
    """A number as the summary prints it: 4 significant digits, 0 for a numerical zero, words for bools.

    Parameters
    ----------
    x : number, bool, str or None
    scale : float, optional
        The size ``x`` is compared with: ``|x| <= ZERO_RTOL * scale`` prints ``0``.
    digits : int

    Examples
    --------
    >>> fmt_number(0.07977134593926301), fmt_number(9.196e-31, scale=1.0), fmt_number(1e-8)
    ('0.07977', '0', '1e-08')
    >>> fmt_number(True), fmt_number(None), fmt_number(12), fmt_number(float("inf"))
    ('yes', '-', '12', 'inf')
    """
    if x is None:
        return "-"
    if isinstance(x, bool | np.bool_):
        return "yes" if x else "no"
    if isinstance(x, int | np.integer):
        return str(int(x))
    if isinstance(x, float | np.floating):
        x = float(x)
        if math.isnan(x):
            return "nan"
        if math.isinf(x):
            return "inf" if x > 0 else "-inf"
        if x == 0 or (scale is not None and np.isfinite(scale) and abs(x) <= ZERO_RTOL * abs(scale)):
            return "0"
        return f"{x:.{digits}g}"
    return str(x)


_FLOAT = re.compile(r"(?<![\w.])[-+]?\d+\.\d+(?:[eE][-+]?\d+)?(?![\w.])")


def round_numbers(text: str, digits: int = 4) -> str:
    """Decimal numbers inside a description to ``digits`` significant digits.

    Examples
    --------
    >>> round_numbers("Gaussian(sigma=0.07977134593926301), ScaleDecay(b=1.5), db3")
    'Gaussian(sigma=0.07977), ScaleDecay(b=1.5), db3'
    """
    return _FLOAT.sub(lambda m: f"{float(m.group()):.{digits}g}", text)


def _wrap(text: str, width: int) -> list[str]:
    """Wrap at spaces (and after commas of long descriptions), never inside a word or name."""
    lines = textwrap.wrap(text, width, break_long_words=False, break_on_hyphens=False)
    return lines or [""]


class KVTable:
    """Two columns of ``key: value`` pairs under a title, :data:`WIDTH` characters wide.

    Pairs whose key or value does not fit its column get a row of the full width (after the
    two-column part), with the value wrapped, so that nothing is cut.

    Examples
    --------
    >>> t = KVTable([("n", "3"), ("d", "5"), ("Dictionary", "Wavelet(" + "x, " * 30 + "y)")], "Model")
    >>> lines = t.as_text().splitlines()
    >>> max(map(len, lines)) <= 80, lines[2].split()
    (True, ['n:', '3', 'd:', '5'])
    >>> "Wavelet(" in t.as_html()
    True
    """

    def __init__(self, pairs: list[tuple[str, str]], title: str) -> None:
        self.pairs = [(str(k), str(v)) for k, v in pairs]
        self.title = title

    def _layout(self, width: int) -> tuple[int, int, list[tuple[str, str]], list[tuple[str, str]]]:
        half = (width - _GAP) // 2
        keys = [len(k) + 2 for k, _ in self.pairs if len(k) + 2 <= KEY_WIDTH]
        kw = max(keys, default=KEY_WIDTH)
        narrow = [(k, v) for k, v in self.pairs if len(k) + 2 <= kw and len(v) <= half - kw]
        wide = [(k, v) for k, v in self.pairs if (k, v) not in narrow]
        return half, kw, narrow, wide

    def as_text(self, width: int = WIDTH) -> str:
        half, kw, narrow, wide = self._layout(width)
        lines = [line.center(width).rstrip() for line in _wrap(self.title, width)]
        lines.append("=" * width)
        rows = (len(narrow) + 1) // 2
        left, right = narrow[:rows], narrow[rows:]
        for i in range(rows):
            k, v = left[i]
            line = f"{k + ':':<{kw}}{v:<{half - kw}}"
            if i < len(right):
                rk, rv = right[i]
                line += " " * _GAP + f"{rk + ':':<{kw}}{rv}"
            lines.append(line.rstrip())
        if narrow and wide:
            lines.append("-" * width)
        for k, v in wide:
            kk = max(kw, len(k) + 2)
            body = _wrap(v, width - kk)
            lines.append(f"{k + ':':<{kk}}{body[0]}".rstrip())
            lines += [" " * kk + b for b in body[1:]]
        lines.append("=" * width)
        return "\n".join(lines)

    def as_html(self) -> str:
        _, _, narrow, wide = self._layout(WIDTH)
        e = html.escape
        rows = (len(narrow) + 1) // 2
        left, right = narrow[:rows], narrow[rows:]
        out = [f'<table class="fdakpl-summary" style="{_TABLE_CSS}"><caption style="{_CAPTION_CSS}">'
               f"{e(self.title)}</caption>"]
        for i in range(rows):
            cells = [left[i], right[i] if i < len(right) else ("", "")]
            out.append("<tr>" + "".join(f'<th style="{_TH_CSS}">{e(k) + ":" if k else ""}</th>'
                                        f'<td style="{_TD_CSS}{_NOWRAP if " " not in v else ""}">{e(v)}</td>'
                                        for k, v in cells) + "</tr>")
        for k, v in wide:
            out.append(f'<tr><th style="{_TH_CSS}">{e(k)}:</th><td colspan="3" style="{_WIDE_TD_CSS}">{e(v)}</td></tr>')
        out.append("</table>")
        return "".join(out)

    def to_simple_table(self) -> SimpleTable:
        """The same pairs as a statsmodels ``SimpleTable`` (for LaTeX and CSV output)."""
        half = (len(self.pairs) + 1) // 2
        left, right = self.pairs[:half], self.pairs[half:]
        rows = [[f"{k}:", v, *((f"{right[i][0]}:", right[i][1]) if i < len(right) else ("", ""))]
                for i, (k, v) in enumerate(left)]
        return SimpleTable(rows, title=self.title, txt_fmt=dict(fmt_2cols, data_aligns="l", colwidths=None))

    def as_latex_tabular(self, **kwargs: Any) -> str:
        return self.to_simple_table().as_latex_tabular(**kwargs)

    def as_csv(self, **kwargs: Any) -> str:
        return self.to_simple_table().as_csv(**kwargs)


class ColumnTable:
    """A table with a header row and columns (first column left-aligned, the others right-aligned), :data:`WIDTH` wide.

    :class:`FunctionalSummary` renders any statsmodels ``SimpleTable`` appended to it as one of
    these, so that every table of the summary has the same width.

    Examples
    --------
    >>> t = ColumnTable(["term", "p-value"], [["cca", "0.01"], ["C(sex)", "0.3"]], "Term importance")
    >>> lines = t.as_text().splitlines()
    >>> {len(line) for line in lines if set(line) == {"="}}, lines[2].split()
    ({80}, ['term', 'p-value'])
    """

    def __init__(self, headers: list[str], rows: list[list[str]], title: str = "",
                 aligns: str | None = None) -> None:
        self.headers = [str(h) for h in headers]
        self.rows = [[str(c) for c in row] for row in rows]
        self.title = title
        self.aligns = aligns  # one "l" or "r" per column (default: the first left, the others right)

    @classmethod
    def from_simple_table(cls, table: SimpleTable) -> ColumnTable:
        """The cells of a statsmodels ``SimpleTable`` (its header rows, if any, give the headers)."""
        cells = [[str(c.data) for c in row] for row in table]
        kinds = [getattr(row, "datatype", None) for row in table]
        headers = cells[kinds.index("header")] if "header" in kinds else [""] * (len(cells[0]) if cells else 0)
        rows = [c for c, k in zip(cells, kinds, strict=True) if k != "header"]
        return cls(headers, rows, str(getattr(table, "title", "") or ""))

    def _widths(self, width: int) -> list[int]:
        cols = list(zip(self.headers, *self.rows, strict=True)) if self.headers else []
        natural = [max(len(c) for c in col) for col in cols]
        if not natural:
            return []
        if self.aligns is not None:  # columns at their natural widths, the last one taking what is left
            return [*natural[:-1], max(natural[-1], width - sum(natural[:-1]) - _GAP * (len(natural) - 1))]
        rest = len(natural) - 1
        spare = width - natural[0] - _GAP * rest
        if rest and spare >= sum(natural[1:]):  # the other columns share the rest of the width
            each = spare // rest
            return [natural[0] + spare - each * rest] + [each] * rest
        return natural

    def as_text(self, width: int = WIDTH) -> str:
        widths = self._widths(width)
        lines = [line.center(width).rstrip() for line in _wrap(self.title, width)] if self.title else []
        lines.append("=" * width)

        def fmt(cells: list[str]) -> str:
            aligns = self.aligns or "l" + "r" * (len(cells) - 1)
            out = [f"{c:<{w}}" if a == "l" else f"{c:>{w}}" for c, w, a in zip(cells, widths, aligns, strict=True)]
            return (" " * _GAP).join(out).rstrip()

        if any(self.headers):
            lines += [fmt(self.headers), "-" * width]
        lines += [fmt(row) for row in self.rows]
        lines.append("=" * width)
        return "\n".join(lines)

    def as_html(self) -> str:
        e = html.escape
        out = [f'<table class="fdakpl-summary" style="{_TABLE_CSS}"><caption style="{_CAPTION_CSS}">'
               f"{e(self.title)}</caption>"]
        if any(self.headers):
            out.append("<tr>" + "".join(f'<th style="{_TH_CSS}">{e(h)}</th>' for h in self.headers) + "</tr>")
        for row in self.rows:
            out.append("<tr>" + "".join(f'<td style="{_TD_CSS}{_NOWRAP if " " not in c else ""}">{e(c)}</td>'
                                        for c in row) + "</tr>")
        out.append("</table>")
        return "".join(out)

    def as_latex_tabular(self, **kwargs: Any) -> str:
        return SimpleTable(self.rows, headers=self.headers, title=self.title).as_latex_tabular(**kwargs)

    def as_csv(self, **kwargs: Any) -> str:
        return SimpleTable(self.rows, headers=self.headers, title=self.title).as_csv(**kwargs)


_TABLE_CSS = "border-collapse:collapse;margin:0 0 1em 0;width:auto;max-width:100%;table-layout:auto"
_CAPTION_CSS = "caption-side:top;font-weight:bold;text-align:left;padding:0.2em 0"
_TH_CSS = "text-align:left;font-weight:normal;padding:0.1em 0.6em 0.1em 0;vertical-align:top"
_TD_CSS = "text-align:left;padding:0.1em 1.5em 0.1em 0;vertical-align:top"
_NOWRAP = ";white-space:nowrap"  # a number or a name without spaces stays on one line (9.986e-05)
_WIDE_TD_CSS = "text-align:left;padding:0.1em 0 0.1em 0;white-space:normal;overflow-wrap:break-word;vertical-align:top"


class FunctionalSummary(Summary):
    """The summary: :class:`KVTable` tables and notes (a statsmodels ``Summary``).

    ``print()`` gives the text (every line at most :data:`WIDTH` characters); ``_repr_html_``
    (notebooks, the documentation) gives HTML tables that wrap to the page.

    Examples
    --------
    >>> s = FunctionalSummary()
    >>> s.tables.append(kv_table([("n", 3)], "Model")); s.add_extra_txt(["A note " * 20])
    >>> max(len(line) for line in s.as_text().splitlines()) <= 80, "<table" in s.as_html()
    (True, True)
    >>> "tabular" in s._repr_latex_() and "A note" in s.as_csv()  # every format IPython asks for
    True
    >>> from statsmodels.iolib.table import SimpleTable
    >>> s.tables.append(SimpleTable([["x", "1"]], headers=["k", "v"], title="Other"))  # shown at the same width
    >>> {len(line) for line in s.as_text().splitlines() if set(line) == {"="}}, "Other" in s.as_html()
    ({80}, True)
    """

    def _own(self) -> list[KVTable | ColumnTable]:
        """The tables, a statsmodels ``SimpleTable`` (another part of fdakpl may append one) as a ColumnTable."""
        return [ColumnTable.from_simple_table(t) if isinstance(t, SimpleTable) else t for t in self.tables]

    def as_text(self, width: int = WIDTH) -> str:
        txt = "\n".join(t.as_text(width) for t in self._own())
        if self.extra_txt:
            notes = ["\n".join(_wrap(par, width)) for par in self.extra_txt.split("\n")]
            txt += "\n\n" + "\n".join(notes)
        return txt

    def as_latex(self) -> str:
        latex = "\n\n".join(t.as_latex_tabular() for t in self._own())
        if self.extra_txt:
            latex += "\n\n" + self.extra_txt.replace("\n", " \\newline\n ")
        return latex

    def as_csv(self) -> str:
        csv = "\n\n".join(t.as_csv() for t in self._own())
        return csv + ("\n\n" + self.extra_txt if self.extra_txt else "")

    def as_html(self) -> str:
        parts = [t.as_html() for t in self._own()]
        if self.extra_txt:
            parts += [f"<p style=\"margin:0.2em 0\">{html.escape(par)}</p>" for par in self.extra_txt.split("\n")]
        return '<div class="fdakpl-summary">' + "".join(parts) + "</div>"


def kv_table(pairs: list[tuple[str, Any]], title: str) -> KVTable:
    """Two columns of ``key: value`` pairs, values formatted by :func:`fmt_number`.

    Examples
    --------
    >>> print(kv_table([("n", 3), ("d", 5)], "Model").as_text().splitlines()[2].split())
    ['n:', '3', 'd:', '5']
    """
    return KVTable([(k, fmt_number(v)) for k, v in pairs], title)
