"""Shared pieces of numpydoc docstrings, written once and filled in when a module is imported.

A parameter described the same way in several places (the ``relative`` and ``scale`` of the
robust losses, the shared parameters of the baselines), or an example that starts the same way
(fitting the DTI model of the results' examples), is written once as a snippet. A docstring names
it on a line of its own, ``%(name)s``, and :func:`fill_doc` replaces that line by the snippet, indented as the line was.
The filled text is the object's ``__doc__``, so ``help()``, Sphinx autodoc and the doctests
(``pytest --doctest-modules``) all see the complete docstring. The choice follows matplotlib's
``_docstring.interpd`` and scipy's ``_lib.doccer`` (``%(name)s`` placeholders), restricted to
whole lines so that no ``%`` elsewhere in a docstring needs escaping, and strict: an unknown
placeholder raises ``KeyError`` at import instead of leaking into the documentation.

This module imports nothing else of fdakpl, so every layer may use it.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable
from typing import TypeVar

__all__ = ["FIGURE_RETURNS", "dti_fit_example", "fill_doc", "substitute"]

T = TypeVar("T")

_PLACEHOLDER = re.compile(r"^(?P<indent>[ \t]*)%\((?P<name>\w+)\)s[ \t]*$")

#: the Returns section of a function drawing a figure
FIGURE_RETURNS = """\
Returns
-------
matplotlib.figure.Figure"""


def dti_fit_example(formula: str = "rcst ~ cca", *, plot: bool = False) -> str:
    """Doctest lines fitting ``formula`` on the DTI first visits (``res``), for the examples of results.

    With ``plot``, a first line selects matplotlib's Agg backend (no display needed).

    Examples
    --------
    >>> lines = dti_fit_example("rcst ~ cca + pasat", plot=True).splitlines()
    >>> len(lines), lines[0]
    (4, '>>> import matplotlib; matplotlib.use("Agg")')
    >>> lines[2].startswith('>>> res = FunctionalRegression("rcst ~ cca + pasat", datasets.dti_first_visits()')
    True
    """
    lines = ['>>> import matplotlib; matplotlib.use("Agg")'] if plot else []
    lines += [">>> from fdakpl import FunctionalRegression, datasets",
              f'>>> res = FunctionalRegression("{formula}", datasets.dti_first_visits(), interpolate_inputs=True,',
              "...                            progress=False).fit()"]
    return "\n".join(lines)


def substitute(doc: str | None, snippets: dict[str, str]) -> str | None:
    """``doc`` with each line ``%(name)s`` replaced by ``snippets[name]``, indented as the line was.

    Parameters
    ----------
    doc : str or None
        A docstring (``None``, as under ``python -OO``, is returned as it is).
    snippets : dict of str to str
        The snippets, written without indentation (they are dedented first).

    Returns
    -------
    str or None

    Raises
    ------
    KeyError
        A placeholder names no snippet.

    Examples
    --------
    >>> substitute("Draw.\\n    %(seed)s", {"seed": "seed : int\\n    Seed of the generator."}).splitlines()
    ['Draw.', '    seed : int', '        Seed of the generator.']
    """
    if doc is None:
        return None
    out = []
    for line in doc.split("\n"):
        m = _PLACEHOLDER.match(line)
        if m is None:
            out.append(line)
            continue
        name = m.group("name")
        if name not in snippets:
            raise KeyError(f"docstring placeholder %({name})s names no snippet; known: {sorted(snippets)}")
        indent = m.group("indent")
        out.extend(indent + s if s.strip() else "" for s in textwrap.dedent(snippets[name]).split("\n"))
    return "\n".join(out)


def fill_doc(**snippets: str) -> Callable[[T], T]:
    """Decorator filling the ``%(name)s`` lines of a function's or class's docstring (see :func:`substitute`).

    Examples
    --------
    >>> @fill_doc(seed="seed : int\\n    Seed of the generator.")
    ... def draw(seed: int = 0) -> int:
    ...     '''Draw.
    ...
    ...     Parameters
    ...     ----------
    ...     %(seed)s
    ...     '''
    ...     return seed
    >>> "Seed of the generator." in draw.__doc__
    True
    """
    def decorate(obj: T) -> T:
        obj.__doc__ = substitute(obj.__doc__, snippets)
        return obj

    return decorate
