"""fdakpl.utils.docstrings: shared docstring snippets are filled in completely, and only where named."""

from __future__ import annotations

import importlib
import pkgutil

import pytest

import fdakpl
from fdakpl.losses import RELATIVE_SCALE_DOC, Huber, LogCosh, PseudoHuber
from fdakpl.utils.docstrings import FIGURE_RETURNS, dti_fit_example, fill_doc, substitute


def test_substitute_indents_the_snippet_as_the_placeholder_line():
    doc = "Title.\n\n    Parameters\n    ----------\n    %(p)s\n    q : int\n"
    out = substitute(doc, {"p": "p : float\n    Described once."})
    assert out == "Title.\n\n    Parameters\n    ----------\n    p : float\n        Described once.\n    q : int\n"


def test_only_whole_line_placeholders_are_replaced():
    doc = "Rate in %(p)s of the total, 100% sure.\n"
    assert substitute(doc, {"p": "X"}) == doc


def test_unknown_placeholder_raises_at_decoration():
    with pytest.raises(KeyError, match="missing"):
        @fill_doc(known="x")
        def f() -> None:
            """Doc.

            %(missing)s
            """


def test_no_docstring_is_left_alone():
    def f() -> None:
        pass

    assert fill_doc(x="y")(f).__doc__ is None


def test_losses_document_relative_and_scale_in_full():
    snippet_lines = [line.strip() for line in RELATIVE_SCALE_DOC.splitlines()]
    for cls in (LogCosh, Huber, PseudoHuber):
        doc_lines = [line.strip() for line in cls.__doc__.splitlines()]
        start = doc_lines.index(snippet_lines[0])
        assert doc_lines[start:start + len(snippet_lines)] == snippet_lines
        # numpydoc: the parameter line sits at the section's indentation, its description 4 spaces deeper
        raw = cls.__doc__.splitlines()
        i = next(k for k, line in enumerate(raw) if line.strip().startswith("relative : bool"))
        assert raw[i].startswith("    relative") and raw[i + 1].startswith("        The parameter")


def test_results_examples_start_with_the_dti_fit():
    from fdakpl.results.core import FunctionalRegressionResults
    from fdakpl.results.plotting import plot_overview

    for f in (FunctionalRegressionResults.plot, plot_overview):
        body = "\n".join(line.strip() for line in f.__doc__.splitlines())
        assert dti_fit_example(plot=True) in body
        assert FIGURE_RETURNS in body


def test_no_placeholder_left_in_any_docstring():
    """Every module of the package imports, and no ``%(name)s`` line survives in a docstring."""
    left = []
    for info in pkgutil.walk_packages(fdakpl.__path__, "fdakpl."):
        if info.name.startswith("fdakpl.__main__"):
            continue
        try:
            mod = importlib.import_module(info.name)
        except ImportError:  # optional dependency (rpy2, dask, ...) missing
            continue
        objs = [mod, *vars(mod).values()]
        objs += [m for o in list(objs) if isinstance(o, type) for m in vars(o).values()]
        for obj in objs:
            doc = getattr(obj, "__doc__", None)
            if isinstance(doc, str) and any(line.strip().startswith("%(") and line.strip().endswith(")s")
                                            for line in doc.splitlines()):
                left.append(f"{info.name}: {getattr(obj, '__qualname__', obj)!r}")
    assert not left, left
