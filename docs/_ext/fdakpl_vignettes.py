"""Sphinx extension: render the jupytext vignettes ``vignettes/*.py`` as executed notebook pages.

At ``builder-inited`` every ``vignettes/*.py`` (jupytext percent format) is converted to
``docs/vignettes/generated/<name>.ipynb`` with a ``python3`` kernelspec, and
``docs/vignettes/index.md`` is written with a toctree over them (or a placeholder when there is no
vignette yet). myst-nb then executes the notebooks (see ``nb_execution_*`` in ``conf.py``). Files
are rewritten only when their content changes, so incremental builds stay incremental, and
notebooks of vignettes that were removed are deleted.

Executed copies: when ``vignettes/_build/<name>.ipynb`` (``tools/run-vignettes``' output; another
directory with ``FDAKPL_DOCS_EXECUTED_DIR``, none with an empty value) holds an execution of the
*current* script by the *current* code -- its stamp (notebook metadata ``fdakpl_executed``, written by
``tools/run-vignettes`` through :func:`stamp`) gives the SHA-256 of the script and of the fdakpl package
that the build imports, the same code cells, all executed, no error output, and figures when the
script draws some -- its outputs are used and myst-nb does not execute that vignette again
(notebook metadata ``mystnb.execution_mode = "off"``). Otherwise the vignette is executed: a copy
older than its script or than the library code it ran is never reused.

Command line (``tools/run-vignettes``): ``python docs/_ext/fdakpl_vignettes.py stamp NOTEBOOK SCRIPT``.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import os
import re
import sys
from pathlib import Path
from typing import Any

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


def _code_cells(nb: Any) -> list[str]:
    return [c.source.strip() for c in nb.cells if c.cell_type == "code" and c.source.strip()]


@functools.cache
def code_digest(package_dir: str | None = None) -> str:
    """SHA-256 of the fdakpl package that this Python imports (every file but caches), by relative path."""
    if package_dir is None:
        spec = importlib.util.find_spec("fdakpl")
        if spec is None or spec.origin is None:
            return "no fdakpl"
        package_dir = os.path.dirname(spec.origin)
    root = Path(package_dir)
    digest = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def source_stamp(script_text: str) -> dict[str, str]:
    """What an executed copy must have run: the script's and the library code's SHA-256."""
    return {"script_sha256": hashlib.sha256(script_text.encode("utf-8")).hexdigest(), "code_sha256": code_digest()}


def stamp(notebook: Path, script: Path) -> None:
    """Record in ``notebook``'s metadata that it is an execution of ``script`` by the current fdakpl code."""
    import nbformat

    nb = nbformat.read(notebook, as_version=4)
    nb.metadata["fdakpl_executed"] = source_stamp(script.read_text(encoding="utf-8"))
    nbformat.write(nb, notebook)


def executed_copy(script_text: str, fresh: Any, copy: Path) -> Any | None:
    """The executed notebook ``copy`` if it is an execution of ``fresh`` (the current script), else None."""
    import nbformat

    if not copy.is_file():
        return None
    try:
        nb = nbformat.read(copy, as_version=4)
    except Exception:  # unreadable: execute instead
        return None
    if nb.metadata.get("fdakpl_executed") != source_stamp(script_text):
        return None  # stale or unstamped: the script or the library code changed since (or unknown)
    if _code_cells(nb) != _code_cells(fresh):
        return None  # stale: the script changed since
    code = [c for c in nb.cells if c.cell_type == "code" and c.source.strip()]
    if any(c.get("execution_count") is None for c in code):
        return None
    outputs = [o for c in code for o in c.get("outputs", [])]
    if any(o.get("output_type") == "error" for o in outputs):
        return None
    draws = "plt.show()" in script_text or ".plot(" in script_text
    images = sum(any(k.startswith("image/") for k in o.get("data", {})) for o in outputs)
    if draws and images == 0:
        return None  # executed with a non-inline matplotlib backend: figures are missing
    return nb


def _write_if_changed(path: Path, text: str) -> None:
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def build_vignette_pages(srcdir: Path, vignette_dir: Path, executed_dir: Path | None = None,
                         reused: list[str] | None = None) -> list[tuple[str, str]]:
    """Convert ``vignette_dir/*.py`` into ``srcdir/vignettes/generated/*.ipynb``; write the index page.

    ``executed_dir``: where to look for executed copies (see the module docstring); the names of
    the vignettes whose copies were used are appended to ``reused``. Returns the list of
    ``(name, title)`` of the vignettes found.
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
        copy = executed_copy(text, notebook, executed_dir / f"{script.stem}.ipynb") if executed_dir else None
        if copy is not None:  # the script's cells, with the copy's outputs
            done = iter(c for c in copy.cells if c.cell_type == "code" and c.source.strip())
            for cell in notebook.cells:
                if cell.cell_type == "code" and cell.source.strip():
                    ran = next(done)
                    cell.outputs, cell.execution_count = ran.get("outputs", []), ran.get("execution_count")
            if "language_info" in copy.metadata:
                notebook.metadata["language_info"] = copy.metadata["language_info"]
            notebook.metadata["mystnb"] = {"execution_mode": "off"}
            if reused is not None:
                reused.append(script.stem)
        title = _title(text)
        if title is None:  # every page needs a title for the toctree
            title = script.stem.replace("_", " ").capitalize()
            notebook.cells.insert(0, nbformat.v4.new_markdown_cell(f"# {title}"))
        notebook.metadata["kernelspec"] = KERNELSPEC
        notebook.metadata.pop("jupytext", None)
        if copy is None:
            notebook.metadata.pop("mystnb", None)
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
    executed = os.environ.get("FDAKPL_DOCS_EXECUTED_DIR", str(vignette_dir / "_build"))
    reused: list[str] = []
    found = build_vignette_pages(srcdir, vignette_dir, Path(executed) if executed else None, reused)
    logger.info("fdakpl_vignettes: %d vignette(s) from %s; executed copies used for %s", len(found),
                vignette_dir, reused or "none")


def setup(app: Sphinx) -> dict[str, object]:
    app.add_config_value("fdakpl_vignette_dir", "", "env")
    app.connect("builder-inited", _on_builder_inited)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}


if __name__ == "__main__":  # tools/run-vignettes: python docs/_ext/fdakpl_vignettes.py stamp NOTEBOOK SCRIPT
    if len(sys.argv) != 4 or sys.argv[1] != "stamp":
        sys.exit("usage: python docs/_ext/fdakpl_vignettes.py stamp NOTEBOOK SCRIPT")
    stamp(Path(sys.argv[2]), Path(sys.argv[3]))
