"""Markdown tables of the experiments' JSON results (what README's "Reproducing the paper" shows).

Usage: ``python -m experiments.report > experiments/results/README.md`` (reads the summaries
``experiments/results/*.json``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .common import RESULTS
from .dti_table1 import METHODS, PAPER


def _load(name: str) -> dict[str, Any] | None:
    path = RESULTS / f"{name}.json"
    return json.loads(path.read_text()) if path.exists() else None


def table1(results: Path = RESULTS) -> str:
    """Table 1: paper, paper's grids, widened grids (sum definition), per-point MSE, CV time per split."""
    full, ext, kcv = _load("dti_table1"), _load("dti_table1_extended"), _load("dti_table1_kernel_cv")
    if full is None:
        return "(no results/dti_table1.json yet: run python -m experiments.dti_table1 --full)"
    head = ["method", "paper", "fdakpl, paper's grids", "fdakpl, widened grids", "fdakpl, input kernel scale by CV",
            "per-point MSE (paper's grids)", "ridge-KPL better (splits)", "CV + fit time per split"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for m in METHODS:
        s = full["summary"].get(m)
        if s is None:
            continue
        e = (ext or {}).get("summary", {}).get(m)
        k = (kcv or {}).get("summary", {}).get(m)
        mu, sd = PAPER[m]
        paired = s.get("paired_minus_ridge_kpl")
        wins = f"{paired['splits_where_ridge_kpl_is_better']}/{paired['n']}" if paired else "–"
        cells = [m, f"{mu:.3f} ± {sd:.3f}", "{:.4f} ± {:.4f}".format(*s["mean_of_sums"]),
                 "{:.4f} ± {:.4f}".format(*e["mean_of_sums"]) if e else "–",
                 "{:.4f} ± {:.4f}".format(*k["mean_of_sums"]) if k else "(as paper's grids)",
                 "{:.5f} ± {:.5f}".format(*s["mean_of_means"]), wins,
                 f"{s['time_cv_s_mean'] + s['time_final_fit_s_mean']:.1f} s"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def toy(results: Path = RESULTS) -> str:
    """Mean test MSE per corruption level and method (toy robustness)."""
    d = _load("toy_robustness") or _load("toy_robustness_quick")
    if d is None:
        return "(no toy results yet)"
    out = []
    for kind, block in d["summary"].items():
        levels = block["levels"]
        lab = "SNR" if kind == "noise" else "level"
        out.append(f"**{kind}** ({lab}: {', '.join(f'{v:g}' for v in levels)})\n")
        out.append("| method | " + " | ".join(f"{v:g}" for v in levels) + " |")
        out.append("|---|" + "---|" * len(levels))
        for m, v in block.items():
            if m == "levels":
                continue
            out.append(f"| {m} | " + " | ".join(f"{x:.4f}" for x in v["mean"]) + " |")
        out.append("")
    return "\n".join(out)


def main() -> int:
    print("## Table 1\n")
    print(table1())
    print("\n## Toy robustness\n")
    print(toy())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
