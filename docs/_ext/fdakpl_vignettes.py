"""Sphinx extension: render the jupytext vignettes ``vignettes/*.py`` as executed notebook pages.

At ``builder-inited`` every ``vignettes/*.py`` (jupytext percent format) is converted to
``docs/vignettes/generated/<name>.ipynb`` with a ``python3`` kernelspec, and
``docs/vignettes/index.md`` is written with a toctree over them (or a placeholder when there is no
vignette yet). myst-nb then executes the notebooks (see ``nb_execution_*`` in ``conf.py``). Files
are rewritten only when their content changes, so incremental builds stay incremental, and
notebooks of vignettes that were removed are deleted.
"""

from __future__ import annotations

import re
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.util import logging

logger = logging.getLogger(__name__)

KERNELSPEC = {"name": "python3", "display_name": "Python 3", "language": "python"}

INTRO = """\
# Vignettes

Worked analyses with fdakpl. Each page is the vignette `vignettes/<name>.py` of the repository
(a [jupytext](https://jupytext.readthedocs.io) percent-format script: open it as a notebook, or
run it with `python vignettes/<name>.py`), executed when these pages were built.
"""

PLACEHOLDER = """
```{note}
No vignette has been written yet. Vignettes are jupytext percent-format scripts
`vignettes/*.py`; every script placed there is converted, executed and listed on this page at the
next documentation build, with no change to the documentation sources.
```
"""


def _title(text: str) -> str | None:
    """First markdown heading of a percent-format script (``# # Title``), or None."""
    in_markdown = False
    for line in text.splitlines():
        if line.startswith("# %%"):
            in_markdown = "[markdown]" in line or "[md]" in line
            continue
        if in_markdown:
            match = re.match(r"#\s+#\s+(.+)", line)
            if match:
                return match.group(1).strip()
    return None


def _write_if_changed(path: Path, text: str) -> None:
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def build_vignette_pages(srcdir: Path, vignette_dir: Path) -> list[tuple[str, str]]:
    """Convert ``vignette_dir/*.py`` into ``srcdir/vignettes/generated/*.ipynb``; write the index page.

    Returns the list of ``(name, title)`` of the vignettes found.
    """
    import jupytext
    import nbformat

    out = srcdir / "vignettes" / "generated"
    out.mkdir(parents=True, exist_ok=True)
    found: list[tuple[str, str]] = []
    for script in sorted(vignette_dir.glob("*.py")):
        if script.name.startswith("_"):
            continue
        text = script.read_text(encoding="utf-8")
        notebook = jupytext.reads(text, fmt="py:percent")
        title = _title(text)
        if title is None:  # every page needs a title for the toctree
            title = script.stem.replace("_", " ").capitalize()
            notebook.cells.insert(0, nbformat.v4.new_markdown_cell(f"# {title}"))
        notebook.metadata["kernelspec"] = KERNELSPEC
        notebook.metadata.pop("jupytext", None)
        _write_if_changed(out / f"{script.stem}.ipynb", nbformat.writes(notebook))
        found.append((script.stem, title))
    names = {name for name, _ in found}
    for stale in out.glob("*.ipynb"):
        if stale.stem not in names:
            stale.unlink()

    lines = [INTRO]
    if found:
        lines.append("| vignette | source |\n| --- | --- |")
        lines += [f"| [{title}](generated/{name}) | `vignettes/{name}.py` |" for name, title in found]
        lines.append("\n```{toctree}\n:hidden:\n:maxdepth: 1\n")
        lines += [f"generated/{name}" for name, _ in found]
        lines.append("```")
    else:
        lines.append(PLACEHOLDER)
    _write_if_changed(srcdir / "vignettes" / "index.md", "\n".join(lines) + "\n")
    return found


def _on_builder_inited(app: Sphinx) -> None:
    srcdir = Path(app.srcdir)
    vignette_dir = Path(app.config.fdakpl_vignette_dir or srcdir.parent / "vignettes")
    found = build_vignette_pages(srcdir, vignette_dir)
    logger.info("fdakpl_vignettes: %d vignette(s) from %s", len(found), vignette_dir)


def setup(app: Sphinx) -> dict[str, object]:
    app.add_config_value("fdakpl_vignette_dir", "", "env")
    app.connect("builder-inited", _on_builder_inited)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
