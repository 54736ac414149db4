"""Shared pieces of numpydoc docstrings, written once and filled in when a module is imported.

A parameter described the same way in several places (the ``relative`` and ``scale`` of the
robust losses, the shared parameters of the baselines), or an example that starts the same way
(fitting the DTI model), is written once as a snippet. A docstring names it on a line of its own,
``%(name)s``, and :func:`fill_doc` replaces that line by the snippet, indented as the line was.
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

__all__ = ["DTI_FIT_EXAMPLE", "PLOT_EXAMPLE_SETUP", "fill_doc", "substitute"]

T = TypeVar("T")

_PLACEHOLDER = re.compile(r"^(?P<indent>[ \t]*)%\((?P<name>\w+)\)s[ \t]*$")

#: doctest lines fitting the DTI model of the examples (``res``)
DTI_FIT_EXAMPLE = """\
>>> from fdakpl import FunctionalRegression, datasets
>>> res = FunctionalRegression("rcst ~ cca", datasets.dti_first_visits(), interpolate_inputs=True,
...                            progress=False).fit()"""

#: doctest lines of a plotting example: a backend without display, then the DTI fit ``res``
PLOT_EXAMPLE_SETUP = '>>> import matplotlib; matplotlib.use("Agg")\n' + DTI_FIT_EXAMPLE


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
    >>> print(substitute("Parameters\\n    ----------\\n    %(scale)s\\n", {"scale": "scale : float\\n    > 0."}))
    Parameters
        ----------
        scale : float
            > 0.
    <BLANKLINE>
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
