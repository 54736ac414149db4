"""Do the default tuning grids stop too early? Held-out error with the grids extended past their upper ends.

The front end tunes every Gaussian term's width over ``DEFAULT_WIDTH_MULTIPLES`` (4, 8, 16 x the median
heuristic) and the scale decay over ``DEFAULT_B_GRID`` (1, 1.5, 2) by leave-one-curve-out. A choice on the
upper end of a grid looks like a grid that should go further. This script answers that by held-out error:
it reruns the real-data accuracy benchmark (``accuracy.py``, the four data sets and their splits, mgcv's
errors reused from ``results/accuracy.json``) with

* ``shipped``: the default grids;
* ``wide_widths``: widths 4 ... 256 x the median heuristic;
* ``wide_widths_and_b``: the same and b in (1, 1.5, 2, 3, 4);

and reports, per data set, the mean test error of the defaults and the paired difference against the
shipped grids (mean, standard error over splits, splits where the wider grid did better). The front end
turns an upper-edge choice on a default grid into a note rather than a warning because of these numbers
(``benchmarks/README.md``, "Grid edges").

Usage::

    python benchmarks/grid_edges.py            # about a minute; writes results/grid_edges.json
"""

from __future__ import annotations

import json
import runpy
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).parent
VARIANTS = {
    "shipped": None,
    "wide_widths": {"DEFAULT_WIDTH_MULTIPLES": [4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0]},
    "wide_widths_and_b": {"DEFAULT_WIDTH_MULTIPLES": [4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0],
                          "DEFAULT_B_GRID": [1.0, 1.5, 2.0, 3.0, 4.0]},
}


def run_variant(grids: dict[str, list[float]] | None, out: Path) -> dict:
    """The accuracy benchmark with the front end's default grids replaced by ``grids``."""
    import fdakpl.regression.model as front_end

    saved = {name: getattr(front_end, name) for name in ("DEFAULT_WIDTH_MULTIPLES", "DEFAULT_B_GRID")}
    argv = sys.argv
    try:
        for name, values in (grids or {}).items():
            setattr(front_end, name, np.array(values))
        sys.argv = ["accuracy.py", "--reuse-mgcv", str(HERE / "results" / "accuracy.json"), "--no-progress",
                    "--out", str(out)]
        runpy.run_path(str(HERE / "accuracy.py"), run_name="__main__")
    finally:
        sys.argv = argv
        for name, value in saved.items():
            setattr(front_end, name, value)
    return json.loads(out.read_text())


def main() -> None:
    runs = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, grids in VARIANTS.items():
            runs[name] = run_variant(grids, Path(tmp) / f"{name}.json")
    report: dict = {"variants": {k: v for k, v in VARIANTS.items()}, "machine": runs["shipped"]["machine"],
                    "datasets": {}}
    print(f"{'data set':<10} {'variant':<18} {'mean error':>11} {'- shipped (se)':>22} {'better':>8}")
    for ds, shipped in runs["shipped"]["datasets"].items():
        base = np.asarray(shipped["errors"]["default"], dtype=float)
        rows = {}
        for name, run in runs.items():
            err = np.asarray(run["datasets"][ds]["errors"]["default"], dtype=float)
            d = err - base
            rows[name] = {"mean": float(err.mean()), "diff": float(d.mean()),
                          "se": float(d.std(ddof=1) / np.sqrt(d.size)) if d.size > 1 else 0.0,
                          "better": int(np.sum(d < 0)), "worse": int(np.sum(d > 0)), "of": int(d.size)}
            r = rows[name]
            print(f"{ds:<10} {name:<18} {r['mean']:>11.5g} {r['diff']:>+12.4g} ({r['se']:.2g}) "
                  f"{r['better']:>4}/{r['of']}")
        report["datasets"][ds] = {"formula": shipped["formula"], "splits": shipped["splits"], "variants": rows}
    path = HERE / "results" / "grid_edges.json"
    path.write_text(json.dumps(report, indent=1))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
