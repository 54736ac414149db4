"""Markdown table and figure of the accuracy benchmark's JSON (``benchmarks/accuracy.py``)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

LABELS = {"mean": "training mean curve", "default": "fdakpl defaults", "loo": 'fdakpl lam="loo"',
          "cv": 'fdakpl lam="cv" (wide grid)', "mgcv": "mgcv linear reference (pffr-type, REML)"}


def _fmt(x: float) -> str:
    return f"{x:.4g}"


def best_sweep(summary: dict[str, Any], n: int = 3) -> list[str]:
    keys = [k for k in summary if k.startswith("loo/") and np.isfinite(summary[k]["mean"])]
    return sorted(keys, key=lambda k: summary[k]["mean"])[:n]


def table(payload: dict[str, Any]) -> str:
    lines = ["| data set | model | test error (mean ± sd) | − mgcv (± se) | splits won vs mgcv | "
             "vs training mean (won) | median fit (s) |", "| --- | --- | --- | --- | --- | --- | --- |"]
    for name, res in payload["datasets"].items():
        s = res["summary"]
        rows = [m for m in ("mean", "default", "loo", "cv", "mgcv") if m in s]
        rows += [k for k in best_sweep(s) if k not in rows]
        for k in ("loo/auto/w1", "loo/auto/w1/plugin", "loo/auto/w1/exact"):
            if k in s and k not in rows:
                rows.append(k)
        for m in rows:
            r = s[m]
            ref = r.get("vs_mgcv")
            mean = r.get("vs_mean")
            lines.append("| " + " | ".join([
                f"{name} ({res['n_splits_run']})", LABELS.get(m, m), f"{_fmt(r['mean'])} ± {_fmt(r['sd'])}",
                f"{ref['diff']:+.4f} ± {ref['se']:.4f}" if ref else "",
                f"{ref['won']}/{ref['of']}" if ref else "",
                f"{mean['diff']:+.4f} ({mean['won']}/{mean['of']})" if mean else "",
                f"{r['median_fit_s']:.3f}" if "median_fit_s" in r else ""]) + " |")
    return "\n".join(lines)


def sweep_table(payload: dict[str, Any]) -> str:
    """Mean test error relative to mgcv (ratio) of every sweep configuration, one column per data set."""
    names = [n for n, r in payload["datasets"].items() if any(k.startswith("loo/") for k in r["summary"])]
    if not names:
        return ""
    keys: list[str] = []
    for n in names:
        keys += [k for k in payload["datasets"][n]["summary"] if k.startswith("loo/") and k not in keys]
    head = "| configuration | " + " | ".join(f"{n}: error / mgcv (won)" for n in names) + " |"
    lines = [head, "| --- |" + " --- |" * len(names)]
    for k in keys:
        cells = []
        for n in names:
            r = payload["datasets"][n]["summary"].get(k)
            if r is None or not np.isfinite(r["mean"]):
                cells.append("—" if r is None else "failed")
            elif "vs_mgcv" in r:
                cells.append(f"{r['vs_mgcv']['ratio']:.3f} ({r['vs_mgcv']['won']}/{r['vs_mgcv']['of']})")
            else:
                cells.append(_fmt(r["mean"]))
        lines.append(f"| {k} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def figure(payload: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(payload["datasets"])
    sweep = any(k.startswith("loo/") for r in payload["datasets"].values() for k in r["summary"])
    fig, axes = plt.subplots(2 if sweep else 1, len(names), figsize=(4.2 * len(names), 7.5 if sweep else 3.8),
                             squeeze=False)
    for j, name in enumerate(names):
        res = payload["datasets"][name]
        s, errs = res["summary"], res["errors"]
        ref = np.asarray(errs["mgcv"]) if "mgcv" in errs else None
        ax = axes[0, j]
        models = [m for m in ("mean", "default", "loo", "cv", "mgcv") if m in s]
        models += [k for k in best_sweep(s, 2) if k not in models]
        for i, m in enumerate(models):
            e = np.asarray(errs[m], dtype=float)
            vals = e / ref - 1 if ref is not None else e
            ax.scatter(np.full(e.size, i) + np.linspace(-0.15, 0.15, e.size), vals, s=6, alpha=0.5)
            ax.errorbar(i, np.mean(vals), yerr=np.std(vals, ddof=1) / np.sqrt(vals.size) if vals.size > 1 else 0,
                        fmt="o", color="k", ms=4)
        ax.axhline(0, color="grey", lw=0.8)
        ax.set_xticks(range(len(models)), [m.replace("loo/", "") for m in models], rotation=40, ha="right",
                      fontsize=7)
        ax.set_title(f"{name} ({res['n_splits_run']} splits)", fontsize=9)
        if j == 0:
            ax.set_ylabel("test error / mgcv error − 1 (per split)" if ref is not None else "test error")
        if sweep:
            ax = axes[1, j]
            groups: dict[str, list[tuple[float, float]]] = {}
            for k, r in s.items():
                if not k.startswith("loo/") or not np.isfinite(r["mean"]):
                    continue
                parts = k.split("/")
                label = "/".join(parts[1:2] + parts[3:])
                groups.setdefault(label, []).append((float(parts[2][1:]), r["mean"]))
            for label, pts in groups.items():
                pts.sort()
                ax.plot(*zip(*pts, strict=True), marker="o", ms=3, lw=1, label=label)
            for m, style in (("mgcv", "k--"), ("mean", "k:")):
                if m in s:
                    ax.axhline(s[m]["mean"], color="k", ls=style[1:], lw=1, label=m)
            ax.set_xscale("log", base=2)
            ax.set_xlabel("kernel width / median heuristic (lam='loo')")
            if j == 0:
                ax.set_ylabel("mean test error")
            ax.legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def write_report(payload: dict[str, Any], md: Path, png: Path) -> None:
    text = ["# Accuracy benchmark (generated by benchmarks/accuracy.py)", "",
            f"Command: `{payload.get('command', '')}`; machine: {payload['machine']}; "
            f"total {payload.get('seconds', float('nan')):.0f} s.", ""]
    for name, res in payload["datasets"].items():
        text.append(f"- **{name}**: `{res['formula']}`; {res['splits']}; error `{res['error']}`; "
                    + "; ".join(res["notes"]))
    text += ["", table(payload), ""]
    sw = sweep_table(payload)
    if sw:
        text += ["## Sweep of candidate defaults (lam='loo'; ratio of mean test error to mgcv's, splits won)", "",
                 sw, ""]
    md.write_text("\n".join(text))
    figure(payload, png)


if __name__ == "__main__":  # regenerate the table and figure from a JSON
    path = Path(sys.argv[1])
    data = json.loads(path.read_text())
    write_report(data, path.with_suffix(".md"), path.with_suffix(".png"))
    print(path.with_suffix(".md").read_text())
