"""Markdown table and figure of the accuracy benchmark's JSON (``benchmarks/accuracy.py``)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

LABELS = {"mean": "training mean curve", "default": "fdakpl defaults", "loo": 'fdakpl lam="loo"',
          "cv": 'fdakpl lam="cv" (wide grid)', "mgcv": "mgcv linear reference (pffr-type, REML)"}


def summarise(errors: dict[str, list[float]], facts: dict[str, list[dict]], ref: str | None) -> dict[str, Any]:
    """Mean, sd over splits; paired differences against the reference and the mean; median fit time."""
    out: dict[str, Any] = {}
    for m, e in errors.items():
        e = np.asarray(e, dtype=float)
        row: dict[str, Any] = {"mean": float(np.mean(e)), "sd": float(np.std(e, ddof=1)) if e.size > 1 else 0.0}
        for other in ("mgcv", "mean"):
            if other == m or other not in errors or (other == "mgcv" and ref is None):
                continue
            d = e - np.asarray(errors[other], dtype=float)
            row[f"vs_{other}"] = {"diff": float(np.mean(d)),
                                  "se": float(np.std(d, ddof=1) / np.sqrt(d.size)) if d.size > 1 else 0.0,
                                  "ratio": float(np.mean(e) / np.mean(errors[other])),
                                  "won": int(np.sum(d < 0)), "of": int(d.size)}
        times = [f["fit_s"] for f in facts[m] if "fit_s" in f]
        if times:
            row["median_fit_s"] = float(np.median(times))
        lams = [f["lam"] for f in facts[m] if "lam" in f]
        if lams:
            row["median_lam"] = float(np.median(lams))
            row["lam_on_edge"] = int(sum(f.get("lam_on_edge", False) for f in facts[m]))
        fails = [f["error"] for f in facts[m] if "error" in f]
        if fails:
            row["failed"] = {"count": len(fails), "first": fails[0]}
        out[m] = row
    return out



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
    """Mean test error / mgcv's (splits won) of every sweep configuration: one row per dictionary and width,
    one column per data set (two for partially observed responses: plug-in and exact partial estimator)."""
    cols: list[tuple[str, str]] = []  # (data set, estimator suffix)
    rows: list[str] = []
    for n, r in payload["datasets"].items():
        keys = [k for k in r["summary"] if k.startswith("loo/")]
        suffixes = sorted({k.split("/")[3] for k in keys if k.count("/") == 3}, key=lambda x: x != "plugin")
        cols += [(n, suf) for suf in (suffixes or [""])]
        for k in keys:
            base = "/".join(k.split("/")[1:3])
            if base not in rows:
                rows.append(base)
    if not rows:
        return ""
    head = "| dictionary / width × median heuristic | " + " | ".join(
        f"{n}{' ' + suf if suf else ''}" for n, suf in cols) + " |"
    lines = [head, "| --- |" + " --- |" * len(cols)]
    for base in rows:
        cells = []
        for n, suf in cols:
            r = payload["datasets"][n]["summary"].get(f"loo/{base}" + (f"/{suf}" if suf else ""))
            if r is None or not np.isfinite(r["mean"]):
                cells.append("—" if r is None else "failed")
            elif "vs_mgcv" in r:
                cells.append(f"{r['vs_mgcv']['ratio']:.3f} ({r['vs_mgcv']['won']}/{r['vs_mgcv']['of']})")
            else:
                cells.append(_fmt(r["mean"]))
        lines.append(f"| {base} | " + " | ".join(cells) + " |")
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
    runs = payload.get("runs") or [payload]
    where = "; ".join(
        f"`{r.get('command', '')}`: {r.get('seconds') or float('nan'):.0f} s, load average "
        f"{r['machine']['loadavg'][0]:.1f} → {r['machine'].get('loadavg_end', [float('nan')])[0]:.1f} on "
        f"{r['machine']['cpu_count']} CPUs" for r in runs)
    m = payload["machine"]
    text = ["# Accuracy benchmark (generated by benchmarks/accuracy.py)", "",
            f"Python {m['python']}, numpy {m['numpy']}, fdakpl {m['fdakpl']}, mgcv {m.get('mgcv', '-')}, "
            f"BLAS on 1 thread. Runs: {where}. Times are wall-clock on a shared, loaded machine: compare "
            "them within a row set, not across machines.", ""]
    for name, res in payload["datasets"].items():
        text.append(f"- **{name}**: `{res['formula']}`; {res['splits']}; error `{res['error']}`; "
                    + "; ".join(res["notes"]))
    text += ["", table(payload), ""]
    sw = sweep_table(payload)
    if sw:
        text += ["## Sweep of candidate defaults", "",
                 "lam='loo'; every Gaussian term's width = multiple × its median heuristic. Cells: mean test error "
                 "/ mgcv's mean test error (splits on which the configuration beats mgcv).", "",
                 sw, ""]
    md.write_text("\n".join(text))
    figure(payload, png)


def merge(paths: list[Path]) -> dict[str, Any]:
    """One payload from several runs on different data sets (e.g. run in two processes); machines listed."""
    runs = [json.loads(p.read_text()) for p in paths]
    out = dict(runs[0])
    out["datasets"] = {}
    for r in runs:
        for k, v in r["datasets"].items():
            if k not in out["datasets"]:
                out["datasets"][k] = json.loads(json.dumps(v))
                continue
            mine = out["datasets"][k]  # the same data set run in parts (--splits A:B): concatenate the splits
            for m in mine["errors"]:
                mine["errors"][m] += v["errors"][m]
                mine["facts"][m] += v["facts"][m]
            mine["split_indices"] = mine.get("split_indices", []) + v.get("split_indices", [])
            mine["n_splits_run"] += v["n_splits_run"]
    for v in out["datasets"].values():
        v["summary"] = summarise(v["errors"], v["facts"], "mgcv" if "mgcv" in v["errors"] else None)
    out["runs"] = [{"command": r.get("command"), "machine": r["machine"], "seconds": r.get("seconds"),
                    "datasets": list(r["datasets"])} for r in runs]
    out["command"] = " ; ".join(str(r.get("command")) for r in runs)
    out["seconds"] = sum(r.get("seconds") or 0.0 for r in runs)
    return out


if __name__ == "__main__":
    # python accuracy_report.py RESULT.json            regenerate the table and figure of RESULT.json
    # python accuracy_report.py RESULT.json A.json B.json   merge runs A and B into RESULT.json first
    path = Path(sys.argv[1])
    if len(sys.argv) > 2:
        path.write_text(json.dumps(merge([Path(p) for p in sys.argv[2:]]), indent=1))
    data = json.loads(path.read_text())
    write_report(data, path.with_suffix(".md"), path.with_suffix(".png"))
    print(path.with_suffix(".md").read_text())
