"""The documentation: its Python examples run, its release metadata agree, and the site builds.

* Every ```` ```python ```` block of ``docs/index.md`` and ``docs/guide/*.md`` runs (the blocks of a
  page share one namespace, in order), so the guide cannot drift from the code.
* One version (``pyproject.toml``) is what the installed package, ``CITATION.cff`` and
  ``CHANGELOG.md`` say; the license and the data notice are there.
* The vignette extension of ``docs/conf.py`` lists whatever ``vignettes/*.py`` exist.
* Every ```` ```python ```` block of ``README.md`` runs too (one namespace, in order).
* ``-m docs`` (deselected by plain ``pytest``; ``tools/test-all`` selects it): the Sphinx build itself,
  with warnings as errors, as CI runs it (``sphinx-build -W --keep-going -b html docs <tmp>/html``): API
  pages for every public module, executed vignettes and guide pages without errors; and the formulas of the built pages
  render in headless Chromium from the site's own copy of MathJax, with no network.
* MathJax served from the site (``docs/_ext/fdakpl_mathjax.py``): a one-page site renders its
  formulas in headless Chromium. Without Chromium these checks skip locally, and fail in CI.
"""

from __future__ import annotations

import functools
import http.server
import importlib
import os
import pkgutil
import re
import shutil
import subprocess
import sys
import tempfile
import threading
from html.parser import HTMLParser
from pathlib import Path

import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    tomllib = pytest.importorskip("tomli")

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
PAGES = sorted([DOCS / "index.md", *(DOCS / "guide").glob("*.md")])
FENCE = re.compile(r"^```python[ \t]*\n(.*?)^```[ \t]*$", re.M | re.S)
VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]


def python_blocks(text: str) -> list[str]:
    """The ```` ```python ```` fenced blocks of a MyST page (``{code-cell}`` blocks are not included)."""
    return FENCE.findall(text)


def test_python_blocks_are_found() -> None:
    text = "a\n```python\nx = 1\n```\n\n```bash\nls\n```\n```python\ny = x + 1\n```\n"
    assert python_blocks(text) == ["x = 1\n", "y = x + 1\n"]


@pytest.mark.parametrize("page", PAGES, ids=[p.relative_to(DOCS).as_posix() for p in PAGES])
def test_page_examples_run(page: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run_blocks(page, tmp_path, monkeypatch)


def test_readme_examples_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every Python block of README.md runs, in order, in one namespace (as a reader pastes them)."""
    blocks = python_blocks((ROOT / "README.md").read_text(encoding="utf-8"))
    assert len(blocks) >= 6
    run_blocks(ROOT / "README.md", tmp_path, monkeypatch)


def run_blocks(page: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run the ```` ```python ```` blocks of ``page`` in one namespace, from an empty directory."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("FDAKPL_PROGRESS", "0")
    blocks = python_blocks(page.read_text(encoding="utf-8"))
    namespace: dict[str, object] = {"__name__": f"docs_{page.stem}"}
    try:
        for i, block in enumerate(blocks):
            exec(compile(block, f"{page.relative_to(ROOT)}[block {i + 1}]", "exec"), namespace)
    finally:
        plt.close("all")


def test_summary_page_fits_fewer_atoms_than_points(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The guide's summary page shows a sound default fit (it used 74 wavelets on 55 points: a singular
    Gram matrix and zero representation error that looked like a broken fit)."""
    import numpy as np

    text = (DOCS / "guide" / "summary.md").read_text(encoding="utf-8")
    first = re.search(r"^```\{code-cell\} ipython3\n(.*?)^```", text, re.M | re.S).group(1)
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {}
    exec(compile(first, "summary.md[first cell]", "exec"), namespace)
    res = namespace["res"]
    d, m = res.estimator.dictionary_.n_atoms_, res.response.sizes[res.response_dim]
    assert d < m, (d, m)
    diag = res.diagnostics()
    assert np.isfinite(diag["gram_condition"]) and diag["gram_condition"] < 1e6
    assert diag["representation_error_median"] > 0.01  # 21 smooth atoms cannot interpolate noisy profiles
    assert "db3" not in first and "level=" not in first  # today's defaults, as the page says
    assert res.coef.dims == ("sample", "atom") and res.coef.shape == (res.response.sizes["sample"], d)


# ---------------------------------------------------------------------------------------------
# release metadata


def test_one_version_everywhere() -> None:
    import fdakpl

    assert fdakpl.__version__ == VERSION, "reinstall (pip install -e .) after changing pyproject.toml's version"
    cff = (ROOT / "CITATION.cff").read_text(encoding="utf-8")
    assert re.search(rf'^version:\s*"?{re.escape(VERSION)}"?\s*$', cff, re.M)
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert re.search(rf"^## \[{re.escape(VERSION)}\]", changelog, re.M)
    conf = (DOCS / "conf.py").read_text(encoding="utf-8")
    assert "pyproject.toml" in conf and not re.search(r"^release\s*=\s*['\"]", conf, re.M)


def test_license_and_data_notice() -> None:
    from fdakpl.datasets import DTI_ACKNOWLEDGMENT

    meta = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert meta["license"] == "GPL-2.0-or-later" and meta["license-files"] == ["LICENSE"]
    text = " ".join((ROOT / "LICENSE").read_text(encoding="utf-8").split())
    assert "GNU GENERAL PUBLIC LICENSE" in text and "Version 2, June 1991" in text
    assert "either version 2 of the License, or (at your option) any later version" in text
    from importlib.resources import files

    data = files("fdakpl.datasets") / "data"
    notice = (data / "NOTICE").read_text(encoding="utf-8")
    assert DTI_ACKNOWLEDGMENT in notice and "GPL (>= 2)" in notice
    assert (data / "DTI.RData").is_file() and (data / "DTI-README.md").is_file()
    cff = (ROOT / "CITATION.cff").read_text(encoding="utf-8")
    assert "Nonlinear Functional Output Regression: A Dictionary Approach" in cff
    assert all(name in cff for name in ("Bouche", "Clausel", "Roueff", "d'Alché-Buc"))


# ---------------------------------------------------------------------------------------------
# the vignette pages


@pytest.fixture()
def vignette_ext():
    sys.path.insert(0, str(DOCS / "_ext"))
    try:
        yield importlib.import_module("fdakpl_vignettes")
    finally:
        sys.path.remove(str(DOCS / "_ext"))


def test_vignette_pages_without_vignettes(vignette_ext, tmp_path: Path) -> None:
    (tmp_path / "vignettes").mkdir()
    assert vignette_ext.build_vignette_pages(tmp_path / "docs", tmp_path / "vignettes") == []
    index = (tmp_path / "docs" / "vignettes" / "index.md").read_text(encoding="utf-8")
    assert "No vignette has been written yet" in index and "toctree" not in index


def test_vignette_pages_list_every_script(vignette_ext, tmp_path: Path) -> None:
    import nbformat

    src = tmp_path / "vignettes"
    src.mkdir()
    (src / "01_first.py").write_text("# %% [markdown]\n# # A first analysis\n# text\n\n# %%\nx = 1\n")
    (src / "02_untitled.py").write_text("# %%\ny = 2\n")
    (src / "_helper.py").write_text("z = 3\n")
    found = vignette_ext.build_vignette_pages(tmp_path / "docs", src)
    assert found == [("01_first", "A first analysis"), ("02_untitled", "02 untitled")]
    out = tmp_path / "docs" / "vignettes"
    index = (out / "index.md").read_text(encoding="utf-8")
    assert "generated/01_first" in index and "generated/02_untitled" in index and "_helper" not in index
    nb = nbformat.read(out / "generated" / "02_untitled.ipynb", as_version=4)
    assert nb.cells[0].source == "# 02 untitled" and nb.cells[1].source == "y = 2"
    assert nb.metadata["kernelspec"]["name"] == "python3"
    (src / "02_untitled.py").unlink()  # a removed vignette disappears from the pages
    assert vignette_ext.build_vignette_pages(tmp_path / "docs", src) == [("01_first", "A first analysis")]
    assert not (out / "generated" / "02_untitled.ipynb").exists()


def _executed(nb, images: bool = True, error: bool = False, stamp: dict | None = None):
    import nbformat

    nb = nbformat.from_dict(nb)
    if stamp is not None:
        nb.metadata["fdakpl_executed"] = stamp
    for k, cell in enumerate(c for c in nb.cells if c.cell_type == "code"):
        cell.execution_count = k + 1
        cell.outputs = [nbformat.v4.new_output("display_data", data={"image/png": "iVBOR", "text/plain": "fig"})
                        if images else nbformat.v4.new_output("stream", name="stdout", text="ok\n")]
        if error:
            cell.outputs.append(nbformat.v4.new_output("error", ename="ValueError", evalue="x", traceback=[]))
    return nb


def test_vignette_pages_reuse_current_executed_copies_only(vignette_ext, tmp_path: Path) -> None:
    import jupytext
    import nbformat

    src, copies = tmp_path / "vignettes", tmp_path / "executed"
    src.mkdir()
    copies.mkdir()
    text = "# %% [markdown]\n# # Plots\n\n# %%\nimport matplotlib.pyplot as plt\nplt.plot([1, 2])\nplt.show()\n"
    (src / "v.py").write_text(text)
    fresh = jupytext.reads(text, fmt="py:percent")
    out = tmp_path / "docs" / "vignettes" / "generated" / "v.ipynb"

    def build() -> list[str]:
        reused: list[str] = []
        vignette_ext.build_vignette_pages(tmp_path / "docs", src, copies, reused)
        return reused

    assert build() == []  # no copy: executed by myst-nb
    assert "mystnb" not in nbformat.read(out, as_version=4).metadata
    current = vignette_ext.source_stamp(text)
    assert current["code_sha256"] == vignette_ext.code_digest(str(Path(importlib.import_module("fdakpl").__file__)
                                                                  .parent))
    nbformat.write(_executed(fresh), copies / "v.ipynb")
    assert build() == []  # an unstamped copy: its source is unknown, so it is executed again
    older_code = {**current, "code_sha256": "0" * 64}
    nbformat.write(_executed(fresh, stamp=older_code), copies / "v.ipynb")
    assert build() == []  # run by other library code (older than the installed one): executed again
    nbformat.write(_executed(fresh, stamp=current), copies / "v.ipynb")
    assert build() == ["v"]
    page = nbformat.read(out, as_version=4)
    assert page.metadata["mystnb"] == {"execution_mode": "off"}
    assert page.cells[1].outputs[0]["data"]["image/png"] == "iVBOR"
    assert page.cells[0].source == "# Plots"
    stripped = _executed(fresh, stamp=current)
    stripped.cells = [c for c in stripped.cells if c.cell_type == "code"]  # a copy without its text cells
    nbformat.write(stripped, copies / "v.ipynb")
    assert build() == ["v"]
    page = nbformat.read(out, as_version=4)  # the text comes from the script, the outputs from the copy
    assert page.cells[0].source == "# Plots" and page.cells[1].outputs[0]["data"]["image/png"] == "iVBOR"
    for bad in (_executed(fresh, images=False, stamp=current), _executed(fresh, error=True, stamp=current)):
        nbformat.write(bad, copies / "v.ipynb")  # no figures (non-inline backend), or an error
        assert build() == []
        assert "mystnb" not in nbformat.read(out, as_version=4).metadata
    nbformat.write(_executed(fresh, stamp=current), copies / "v.ipynb")
    (src / "v.py").write_text(text.replace("[1, 2]", "[2, 1]"))  # the script changed: the copy is stale
    assert build() == []
    (src / "v.py").write_text(text + "# a comment\n")  # same code cells, other script text: stale too
    assert build() == []


def test_stamp_records_script_and_code(vignette_ext, tmp_path: Path) -> None:
    """tools/run-vignettes stamps the notebook before executing it; the stamp follows any change of the code."""
    import jupytext
    import nbformat

    script = tmp_path / "v.py"
    script.write_text("# %%\nx = 1\n")
    nb = tmp_path / "v.ipynb"
    nbformat.write(jupytext.reads(script.read_text(), fmt="py:percent"), nb)
    subprocess.run([sys.executable, str(DOCS / "_ext" / "fdakpl_vignettes.py"), "stamp", str(nb), str(script)],
                   check=True, capture_output=True, timeout=300)
    assert nbformat.read(nb, as_version=4).metadata["fdakpl_executed"] == vignette_ext.source_stamp(script.read_text())
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "a.py").write_text("x = 1\n")
    before = vignette_ext.code_digest(str(pkg))
    (pkg / "a.py").write_text("x = 2\n")
    vignette_ext.code_digest.cache_clear()
    assert vignette_ext.code_digest(str(pkg)) != before


# ---------------------------------------------------------------------------------------------
# the Sphinx build (as CI runs it)


def public_modules() -> list[str]:
    import fdakpl

    names = ["fdakpl"]
    for info in pkgutil.walk_packages(fdakpl.__path__, "fdakpl."):
        if not any(part.startswith("_") for part in info.name.split(".")):
            names.append(info.name)
    return names


@pytest.fixture(scope="module")
def built_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The Sphinx build, as CI runs it (once per test module), into a temporary directory, not the tree.

    (autosummary and the vignette extension still write their generated sources under ``docs/api/generated``
    and ``docs/vignettes/``, which git ignores.)
    """
    out = tmp_path_factory.mktemp("sphinx") / "html"
    env = {**os.environ, "FDAKPL_PROGRESS": "0"}
    proc = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-b", "html", str(DOCS), str(out)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=1800,
    )
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-8000:]
    return out


@pytest.mark.docs
def test_sphinx_build(built_site: Path) -> None:
    out = built_site
    api = out / "api" / "generated"
    missing = [m for m in public_modules() if not (api / f"{m}.html").is_file()]
    assert not missing, f"modules without an API page: {missing}"
    for script in sorted((ROOT / "vignettes").glob("[!_]*.py")):
        page = out / "vignettes" / "generated" / f"{script.stem}.html"
        assert page.is_file(), f"vignette {script.name} has no page"
        assert "Traceback" not in page.read_text(encoding="utf-8")
    summary = (out / "guide" / "summary.html").read_text(encoding="utf-8")
    assert "Excess-risk diagnostics" in summary and "Traceback" not in summary
    assert "<table" in summary and "<pre>                  Functional regression" not in summary  # HTML tables
    assert (out / "_static" / "mathjax" / "MathJax.js").is_file()  # served by the site, not a CDN
    assert "cdn.jsdelivr.net" not in (out / "guide" / "summary.html").read_text(encoding="utf-8")


# ---------------------------------------------------------------------------------------------
# formulas render offline (headless Chromium, the site's own MathJax)

CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def chromium() -> str:
    """The Chromium executable; skips the test locally without it, fails in CI (tools/test-all installs it)."""
    exe = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    if exe is None:
        message = "headless Chromium is needed to check that formulas render (apt-get install chromium)"
        if os.environ.get("CI"):
            pytest.fail(f"{message}; tools/test-all installs it in CI")
        pytest.skip(f"{message}: the offline-math check did not run")
    return exe


def rendered_dom(site: Path, page: str, budget_ms: int = 20000, width: int = 1280) -> tuple[str, list[str]]:
    """The DOM of ``site/page`` after its scripts ran in headless Chromium, served on localhost only.

    Returns the DOM and the paths that the page asked for but the site lacks (404).
    """
    missing: list[str] = []

    class Handler(http.server.SimpleHTTPRequestHandler):
        def log_message(self, fmt: str, *args: object) -> None:
            if len(args) > 1 and str(args[1]) == "404":
                missing.append(str(args[0]))

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Handler, directory=str(site)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        with tempfile.TemporaryDirectory() as profile:
            proc = subprocess.run(
                [chromium(), *CHROMIUM_FLAGS, f"--user-data-dir={profile}", f"--virtual-time-budget={budget_ms}",
                 f"--window-size={width},1600", "--hide-scrollbars",
                 "--dump-dom", f"http://127.0.0.1:{server.server_address[1]}/{page}"],
                capture_output=True, text=True, timeout=180)
    finally:
        server.shutdown()
        server.server_close()
    assert proc.returncode == 0 and "</html>" in proc.stdout, proc.stderr[-2000:]
    return proc.stdout, [m for m in missing if "favicon" not in m]


_PROBE = """<script>window.addEventListener("load", function () { setTimeout(function () {
  var wide = [];
  document.querySelectorAll("%s").forEach(function (e) {
    var box = e.closest(".cell_output") || e.parentElement;
    if (e.getBoundingClientRect().right > box.getBoundingClientRect().right + 1 || e.scrollWidth > e.clientWidth + 1)
      wide.push(e.tagName + ":" + Math.round(e.getBoundingClientRect().width) + ">" + box.clientWidth);
  });
  document.body.setAttribute("data-too-wide", wide.join(" ") || "none");
}, 500); });</script>"""


def too_wide(site: Path, page: str, selector: str, width: int) -> str:
    """Elements matching ``selector`` wider than their output area at a window ``width`` pixels wide."""
    path = site / page
    probe = path.with_name(f"_probe_{path.name}")  # same directory: the page's relative links still work
    probe.write_text(path.read_text(encoding="utf-8").replace("</body>", _PROBE % selector + "</body>"),
                     encoding="utf-8")
    try:
        dom, _ = rendered_dom(site, probe.relative_to(site).as_posix(), width=width)
    finally:
        probe.unlink()
    found = re.search(r'data-too-wide="([^"]*)"', dom)
    assert found, "the probe did not run"
    return found.group(1)


class _VisibleText(HTMLParser):
    """The text a reader sees: everything outside ``<script>`` and ``<style>``."""

    def __init__(self) -> None:
        super().__init__()
        self.skip = 0
        self.parts: list[str] = []

    def handle_starttag(self, tag: str, attrs: list) -> None:
        self.skip += tag in ("script", "style")

    def handle_endtag(self, tag: str) -> None:
        self.skip -= tag in ("script", "style") and self.skip > 0

    def handle_data(self, data: str) -> None:
        if not self.skip:
            self.parts.append(data)


def math_problems(dom: str) -> list[str]:
    """What is wrong with the formulas of a rendered page: raw TeX left, MathJax errors, nothing typeset."""
    parser = _VisibleText()
    parser.feed(dom)
    text = "".join(parser.parts)
    problems = [f"raw TeX left: ...{text[max(0, m.start() - 40):m.start() + 40]!r}..."
                for m in re.finditer(r"\\\(|\\\[", text)][:5]
    if 'class="mjx-merror' in dom or "Math Processing Error" in text:
        problems.append("MathJax reports an error (an unknown macro?)")
    if 'class="math' in dom and "mjx-chtml" not in dom:
        problems.append("no formula was typeset")
    return problems


def test_math_problems_detects_raw_tex() -> None:
    assert math_problems('<p><span class="math">\\(\\lambda\\)</span></p>')
    assert not math_problems('<script>MathJax.Hub.Config({"inlineMath": [["\\(", "\\)"]]})</script>'
                             '<p><span class="math"><span class="mjx-chtml">λ</span></span></p>')


def test_mathjax_is_served_by_a_small_site(tmp_path: Path) -> None:
    """The docs' MathJax extension on a one-page site: formulas render offline in headless Chromium."""
    pytest.importorskip("myst_parser", reason="the documentation's packages: pip install -e '.[docs]'")
    chromium()
    src = tmp_path / "src"
    src.mkdir()
    (src / "conf.py").write_text(
        f"import sys\nsys.path.insert(0, {str(DOCS / '_ext')!r})\n"
        "extensions = ['sphinx.ext.mathjax', 'myst_parser', 'fdakpl_mathjax']\n"
        "myst_enable_extensions = ['dollarmath', 'amsmath']\n"
        "mathjax3_config = {'tex': {'macros': {'R': r'\\mathbb{R}', 'argmin': r'\\operatorname*{arg\\,min}'}}}\n",
        encoding="utf-8")
    (src / "index.md").write_text("# Math\n\nInline $\\lambda \\in \\R$ and $\\argmin_h \\|h\\|$.\n\n"
                                  "$$\n\\frac{B_0}{\\sqrt d} + \\mathcal R(\\Phi \\circ h)\n$$\n", encoding="utf-8")
    proc = subprocess.run([sys.executable, "-m", "sphinx", "-W", "-q", "-b", "html", str(src), str(tmp_path / "out")],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-4000:]
    page = (tmp_path / "out" / "index.html").read_text(encoding="utf-8")
    assert "_static/mathjax/MathJax.js" in page and "://" not in page.split("MathJax.js")[0].rsplit("src=", 1)[-1]
    dom, missing = rendered_dom(tmp_path / "out", "index.html")
    assert not math_problems(dom), math_problems(dom)
    assert dom.count('class="mjx-chtml MJXc-display"') == 1 and not missing, missing


@pytest.mark.docs
@pytest.mark.parametrize("width", [1280, 900])
def test_summary_tables_fit_the_page(built_site: Path, width: int) -> None:
    """The guide's executed summary shows HTML tables that fit the page: no horizontal scrollbar."""
    page = (built_site / "guide" / "summary.html").read_text(encoding="utf-8")
    assert page.count('<table class="fdakpl-summary"') >= 3  # model, fit, diagnostics (and term importance)
    assert too_wide(built_site, "guide/summary.html", "table.fdakpl-summary, div.fdakpl-summary", width) == "none"


@pytest.mark.docs
def test_math_renders_offline(built_site: Path) -> None:
    """Open the built pages that have formulas in headless Chromium: every formula is typeset."""
    pages = [p for p in sorted([built_site / "index.html", *(built_site / "guide").glob("*.html")])
             if 'class="math' in p.read_text(encoding="utf-8")]
    assert any(p.name == "summary.html" for p in pages)
    for path in pages:
        dom, missing = rendered_dom(built_site, path.relative_to(built_site).as_posix())
        assert not math_problems(dom), (path.name, math_problems(dom))
        assert not [m for m in missing if "mathjax" in m], (path.name, missing)
