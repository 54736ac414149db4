"""Serve MathJax from the built site, so that formulas render without a network.

Sphinx loads MathJax from a CDN by default: a site built and read offline then shows raw
``\\(\\lambda\\)``. This extension copies Debian's MathJax 2 (package ``libjs-mathjax``, installed
by ``tools/test-all``) into ``_static/mathjax/`` of the HTML output and points ``mathjax_path``
at it. The MathJax directory is ``$FDAKPL_MATHJAX_DIR``, else ``/usr/share/javascript/mathjax``.

Without it the build warns (an error under ``-W``, as CI builds) and falls back to the CDN.
Only the files that the ``TeX-AMS_CHTML`` configuration loads are copied (about 1.6 MB).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

from sphinx.util import logging

logger = logging.getLogger(__name__)

DEFAULT_DIR = "/usr/share/javascript/mathjax"
CONFIG = "TeX-AMS_CHTML"
#: what the TeX-AMS_CHTML configuration loads: the combined config, on-demand extensions and fonts
NEEDED = ["MathJax.js", f"config/{CONFIG}.js", "config/local", "extensions", "jax/input/TeX", "jax/element",
          "jax/output/CommonHTML", "jax/output/PreviewHTML", "fonts/HTML-CSS/TeX/woff", "localization/en"]


def mathjax_dir() -> Path:
    """Where MathJax 2 is installed (``$FDAKPL_MATHJAX_DIR`` or Debian's ``libjs-mathjax``)."""
    return Path(os.environ.get("FDAKPL_MATHJAX_DIR", DEFAULT_DIR))


def tex_macros_v2(mathjax3_config: dict[str, Any] | None) -> dict[str, Any]:
    """MathJax 3's ``{"tex": {"macros": ...}}`` as MathJax 2's ``MathJax.Hub.Config`` object."""
    macros = ((mathjax3_config or {}).get("tex") or {}).get("macros") or {}
    # MyST marks the page "tex2jax_ignore mathjax_ignore" and its formulas "math": process only those
    return {"TeX": {"Macros": dict(macros)}, "messageStyle": "none",
            "tex2jax": {"inlineMath": [["\\(", "\\)"]], "displayMath": [["\\[", "\\]"]],
                        "processEscapes": False, "processClass": "tex2jax_process|mathjax_process|math|output_area",
                        "ignoreClass": "tex2jax_ignore|mathjax_ignore"}}


def copy_mathjax(source: Path, static: Path) -> Path:
    """Copy the files MathJax needs from ``source`` into ``static/mathjax``; return that directory."""
    target = static / "mathjax"
    for rel in NEEDED:
        src = source / rel
        if src.is_dir():
            shutil.copytree(src, target / rel, dirs_exist_ok=True)  # follows Debian's symlinks to fonts-mathjax
        elif src.is_file():
            (target / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, target / rel)
    return target


def _configure(app: Any, config: Any) -> None:
    source = mathjax_dir()
    if not (source / "MathJax.js").is_file():
        logger.warning(f"MathJax not found in {source}: the pages load it from a CDN and show raw TeX offline; "
                       "install Debian's libjs-mathjax (apt-get install libjs-mathjax) or set FDAKPL_MATHJAX_DIR "
                       "to a MathJax 2 directory")
        app.fdakpl_mathjax_source = None
        return
    app.fdakpl_mathjax_source = source
    config.mathjax_path = f"mathjax/MathJax.js?config={CONFIG}"  # relative to _static of the built site
    config.mathjax2_config = tex_macros_v2(config.mathjax3_config)
    config.mathjax3_config = None
    config.myst_update_mathjax = False  # MyST would add a MathJax 3 configuration


def _copy(app: Any, exception: Exception | None) -> None:
    source = getattr(app, "fdakpl_mathjax_source", None)
    if exception is None and source is not None and app.builder.format == "html":
        copy_mathjax(source, Path(app.outdir) / "_static")


def setup(app: Any) -> dict[str, Any]:
    app.connect("config-inited", _configure, priority=900)
    app.connect("build-finished", _copy)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
