"""Subject effects (issue 29): repeated curves per subject, held-out error paired against the references.

Two protocols, as a user with repeated curves would use the model:

* ``dti``: all visits of the 100 multiple-sclerosis cases of DTI (``datasets.load_dti()``, ``case == 1``);
  each patient's last visit is predicted from all earlier visits of all patients (100 test curves, 240
  training curves; a patient with one visit is a new subject: population prediction). ``rcst ~ cca``;
  error: sum of squared errors over the observed points of a curve.
* ``emotion``: the 23 subjects x 8 trials of ``datasets.load_emotion()``; split ``s`` (0..7) holds out trial
  ``s`` of every subject (23 test curves, 161 training curves), ``EMG ~ EEG + C(power) + C(game_outcome) +
  C(control)``; error: mean squared error over every 4th time point (mgcv fitted on those points, as in the
  accuracy benchmark).

Models (the same training curves):

* ``fdakpl``: ``FunctionalRegression`` with its defaults, without a subject term;
* ``fdakpl + re(ID)``: with the subject term ``re(ID)`` (defaults: leave-one-curve-out, the subjects of the test
  curves are known);
* ``fdakpl + re(ID), new_subjects``: the same tuned by leave-one-subject-out (``new_subjects=True``);
* ``fdakpl + re(ID) grid[...]``: the same with other grids of subject weights (set as
  ``fdakpl.regression.steps.DEFAULT_SUBJECT_WEIGHTS``, this script only): the default grid's choice;
* ``fdakpl * C(ID)``: the subject as a factor term, whose Categorical kernel *multiplies* the others (the
  product alternative to the sum ``K_rest + w K_subject``);
* ``subject mean``: the mean of the subject's own training curves (the training mean curve for a new subject);
* ``training mean``: the mean training curve;
* ``mgcv``: pffr's construction (``benchmarks/mgcv_reference.py``) fitted by ``bam(method = "fREML")``;
* ``mgcv + ti(id, t)``: the same with pffr's functional random intercept ``ti(id, t, bs = c("re", "ps"))``
  (a new subject: the term excluded, the population prediction).

Per test curve errors; paired differences (mean, standard error over test curves, curves won / lost) of
every model against ``fdakpl + re(ID)`` go to ``benchmarks/results/subject_effects.json`` and ``.md``.

Usage::

    python benchmarks/subject_effects.py                    # both data sets (about 10 min on a loaded machine)
    python benchmarks/subject_effects.py --datasets dti --no-mgcv
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402
import xarray as xr  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
from _results import write_results  # noqa: E402
from accuracy_data import dummies  # noqa: E402
from mgcv_reference import long_form, r_with_pffr  # noqa: E402

import fdakpl.regression.steps as front_end  # noqa: E402
from fdakpl import FunctionalRegression, datasets  # noqa: E402

RESULTS = Path(__file__).parent / "results"
REFERENCE = "fdakpl + re(ID)"
DEFAULT_WEIGHTS = front_end.DEFAULT_SUBJECT_WEIGHTS.copy()
#: other grids of subject weights tried (name -> grid)
WEIGHT_GRIDS = {"grid[0, 1/16, 1, 16]": np.array([0.0, 1 / 16, 1.0, 16.0]),
                "grid[0, 1/256 .. 16 x4]": np.array([0.0, 1 / 256, 1 / 64, 1 / 16, 1 / 4, 1.0, 4.0, 16.0])}

R_CODE = r"""
fdakpl_pffr_re <- function(y, tt, id, inputs, Z, newinputs, newZ, tnew, newid, known, k_int, k_ff, k_by,
                           with_re) {
  suppressPackageStartupMessages(library(mgcv))
  lev <- sort(unique(id))
  nid <- ifelse(known, newid, lev[1])  # a new subject: any level, its random intercept excluded below
  design <- fdakpl_pffr_design(list(y = y, t = tt, id = factor(id, levels = lev)),
                               list(t = tnew, id = factor(nid, levels = lev)), inputs, Z, newinputs, newZ,
                               k_int, k_ff, k_by)  # benchmarks/mgcv_reference.py
  dat <- design$dat; nd <- design$nd; terms <- design$terms
  if (with_re) terms <- c(terms, sprintf("ti(id, t, bs = c(\"re\", \"ps\"), k = c(%d, %d))", length(lev), k_by))
  fml <- as.formula(paste("y ~", paste(terms, collapse = " + ")))
  fit <- bam(fml, data = dat, method = "fREML")
  full <- as.numeric(predict(fit, newdata = nd))
  if (with_re && any(!known)) {
    pop <- as.numeric(predict(fit, newdata = nd, exclude = "ti(id,t)"))
    full <- ifelse(known, full, pop)
  }
  list(pred = full, edf = sum(fit$edf))
}
"""


def mgcv_fit_predict(Y: np.ndarray, t: np.ndarray, ids: np.ndarray, X: dict[str, tuple[np.ndarray, np.ndarray]],
                     X_new: dict[str, np.ndarray], new_ids: np.ndarray, Z: np.ndarray | None, Z_new: np.ndarray | None,
                     with_re: bool) -> tuple[np.ndarray, float]:
    """pffr's construction (benchmarks/mgcv_reference.py), by bam(fREML), with or without ``ti(id, t, bs =
    c("re", "ps"))``; predictions of the new curves on ``t`` (a new subject: the random intercept excluded)."""
    from rpy2.robjects import numpy2ri
    from rpy2.robjects.conversion import localconverter

    ro = r_with_pffr()  # defines fdakpl_pffr_design
    ro.r(R_CODE)
    rows, cols, design = long_form(Y, t, X, X_new, Z, Z_new)
    n_new = len(new_ids)
    labels = {v: i for i, v in enumerate(sorted(set(ids.tolist()), key=str))}
    known = np.array([v in labels for v in new_ids.tolist()])
    new_codes = np.array([labels.get(v, 0) for v in new_ids.tolist()], dtype=float)
    codes = np.array([labels[v] for v in ids.tolist()], dtype=float)
    with localconverter(ro.default_converter + numpy2ri.converter):
        out = ro.r["fdakpl_pffr_re"](Y[rows, cols], t[cols], codes[rows], design["inputs"], design["Z"],
                                     design["newinputs"], design["newZ"],
                                     np.tile(t, n_new), np.repeat(new_codes, t.size), np.repeat(known, t.size),
                                     20, 5, 5, with_re)
        pred = np.asarray(out["pred"]).reshape(n_new, t.size)
        edf = float(np.asarray(out["edf"]).ravel()[0])
    return pred, edf


def interpolated(values: np.ndarray, grid: np.ndarray) -> np.ndarray:
    """Rows with NaN filled by linear interpolation over the grid (for mgcv, which takes complete inputs)."""
    out = np.array(values, dtype=float)
    for row in out:
        bad = np.isnan(row)
        if bad.any():
            row[bad] = np.interp(grid[bad], grid[~bad], row[~bad])
    return out


def dti() -> dict[str, Any]:
    ds = datasets.load_dti()
    ds = ds.isel(sample=np.flatnonzero(ds["case"].values == 1))
    ids, visit = ds["ID"].values, ds["visit"].values
    last = np.array([visit[i] == visit[ids == ids[i]].max() for i in range(ids.size)])
    return {"data": ds, "splits": [(np.flatnonzero(~last), np.flatnonzero(last))], "formula": "rcst ~ cca",
            "response": "rcst", "inputs": ("cca",), "factors": (), "subject": "ID", "thin": 1, "error": "curve_sse",
            "interpolate_inputs": True,
            "protocol": "all visits of the 100 MS cases; each patient's last visit predicted from all earlier "
                        "visits of all patients (100 test, 240 training curves)"}


def emotion() -> dict[str, Any]:
    ds = datasets.load_emotion()
    subj = ds["subject"].values
    trial = np.array([int((subj[:i] == subj[i]).sum()) for i in range(subj.size)])  # the trial's rank in its subject
    splits = [(np.flatnonzero(trial != s), np.flatnonzero(trial == s)) for s in range(int(trial.max()) + 1)]
    return {"data": ds, "splits": splits, "formula": "EMG ~ EEG + C(power) + C(game_outcome) + C(control)",
            "response": "EMG", "inputs": ("EEG",), "factors": ("power", "game_outcome", "control"),
            "subject": "subject", "thin": 4, "error": "point_mse", "interpolate_inputs": False,
            "protocol": "23 subjects x 8 trials; split s = 0..7 holds out trial s of every subject (23 test, 161 "
                        "training curves); scored on every 4th time point"}


DATASETS = {"dti": dti, "emotion": emotion}


def curve_errors(Y: np.ndarray, pred: np.ndarray, kind: str) -> np.ndarray:
    r2 = np.where(np.isnan(Y), np.nan, (Y - pred) ** 2)
    return np.nansum(r2, axis=1) if kind == "curve_sse" else np.nanmean(r2, axis=1)


def kpl(spec: dict[str, Any], train: xr.Dataset, test: xr.Dataset, formula: str, weights: np.ndarray | None = None,
        **kwargs: Any) -> tuple[np.ndarray, dict[str, Any]]:
    front_end.DEFAULT_SUBJECT_WEIGHTS = DEFAULT_WEIGHTS if weights is None else weights
    try:
        return _kpl(spec, train, test, formula, **kwargs)
    finally:
        front_end.DEFAULT_SUBJECT_WEIGHTS = DEFAULT_WEIGHTS


def _kpl(spec: dict[str, Any], train: xr.Dataset, test: xr.Dataset, formula: str,
         **kwargs: Any) -> tuple[np.ndarray, dict[str, Any]]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0 = time.perf_counter()
        res = FunctionalRegression(formula, train, interpolate_inputs=spec["interpolate_inputs"], progress=False,
                                   **kwargs).fit()
        seconds = time.perf_counter() - t0
        pred = res.predict(test).values
    tuned = dict(zip(res.tuning.terms, map(float, res.tuning.multiples), strict=True)) if res.tuning else {}
    return pred, {"fit_s": seconds, "lam": float(res.lam), "multiples": tuned}


def subject_mean(Y: np.ndarray, ids: np.ndarray, new_ids: np.ndarray) -> np.ndarray:
    overall = np.nanmean(Y, axis=0)
    out = []
    for v in new_ids.tolist():
        own = Y[ids == v]
        out.append(np.where(np.isnan(m := np.nanmean(own, axis=0)), overall, m) if own.size else overall)
    return np.array(out)


def run(name: str, use_mgcv: bool, splits: list[int] | None = None, skip: tuple[str, ...] = ()) -> dict[str, Any]:
    spec = DATASETS[name]()
    if splits is not None:
        spec["splits"] = [spec["splits"][s] for s in splits]
        spec["protocol"] += f" (splits {splits} of this run)"
    ds, resp, subj = spec["data"], spec["response"], spec["subject"]
    rdim = next(d for d in ds[resp].dims if d != "sample")
    t = ds[rdim].values
    keep = np.arange(0, t.size, spec["thin"])
    lhs, rhs = spec["formula"].split("~")
    models = {
        "fdakpl": lambda tr, te: kpl(spec, tr, te, spec["formula"]),
        REFERENCE: lambda tr, te: kpl(spec, tr, te, f"{spec['formula']} + re({subj})"),
        "fdakpl + re(ID), new_subjects": lambda tr, te: kpl(spec, tr, te, f"{spec['formula']} + re({subj})",
                                                             new_subjects=True),
        "fdakpl * C(ID)": lambda tr, te: kpl(spec, tr, te, f"{spec['formula']} + C({subj})"),
    }
    for g, grid in WEIGHT_GRIDS.items():
        models[f"{REFERENCE} {g}"] = (lambda w: lambda tr, te: kpl(spec, tr, te, f"{spec['formula']} + re({subj})",
                                                                   weights=w))(grid)
    grids_skipped = "grids" in skip
    models = {m: f for m, f in models.items()
              if m not in skip and not (grids_skipped and m.startswith(f"{REFERENCE} grid"))}
    errors: dict[str, list[float]] = {}
    facts: dict[str, list[Any]] = {}
    new_subject_curves = 0
    for tr, te in spec["splits"]:
        train = ds.isel(sample=tr)
        # a test curve of a subject without training curves: its label is new to the subject term (and to C(ID),
        # which refuses unseen levels: such curves get the population prediction of fdakpl without the term)
        ids, new_ids = train[subj].values, ds[subj].values[te]
        seen = np.isin(new_ids, ids)
        new_subject_curves += int((~seen).sum())
        test = ds.isel(sample=te)
        Y = test[resp].values[:, keep]
        preds: dict[str, np.ndarray] = {}
        for m, f in models.items():
            if m == "fdakpl * C(ID)" and not seen.all():
                pred = preds["fdakpl"].copy()
                p, info = f(train, test.isel(sample=np.flatnonzero(seen)))
                pred[seen] = p[:, keep]
            else:
                p, info = f(train, test)
                pred = p[:, keep]
            preds[m] = pred
            facts.setdefault(m, []).append(info)
        Ytr = train[resp].values[:, keep]
        preds["subject mean"] = subject_mean(Ytr, ids, new_ids)
        preds["training mean"] = np.broadcast_to(np.nanmean(Ytr, axis=0), Y.shape)
        if use_mgcv:
            grids = {v: train[v][train[v].dims[1]].values[::spec["thin"]] for v in spec["inputs"]}
            X = {v: (interpolated(train[v].values[:, ::spec["thin"]], g), g) for v, g in grids.items()}
            Xn = {v: interpolated(test[v].values[:, ::spec["thin"]], X[v][1]) for v in spec["inputs"]}
            Z = dummies(train, spec["factors"])
            Zn = dummies(test, spec["factors"])
            for m, with_re in (("mgcv", False), ("mgcv + ti(id, t)", True)):
                t0 = time.perf_counter()
                pred, edf = mgcv_fit_predict(Ytr, t[keep], ids, X, Xn, new_ids, Z, Zn, with_re)
                preds[m] = pred
                facts.setdefault(m, []).append({"fit_s": time.perf_counter() - t0, "edf": edf})
        for m, p in preds.items():
            errors.setdefault(m, []).extend(curve_errors(Y, p, spec["error"]).tolist())
    return {"formula": spec["formula"], "subject": subj, "protocol": spec["protocol"], "error": spec["error"],
            "splits": len(spec["splits"]), "test_curves_of_new_subjects": new_subject_curves,
            "summary": summarize(errors), "facts": facts, "errors": errors}


def summarize(errors: dict[str, list[float]]) -> dict[str, Any]:
    """Mean error of every model and its paired difference against ``REFERENCE`` over the test curves."""
    ref = np.array(errors[REFERENCE])
    summary = {}
    for m, e in errors.items():
        d = np.array(e) - ref
        summary[m] = {"mean": float(np.mean(e)), f"diff_vs_{REFERENCE}": float(d.mean()),
                      "diff_se": float(d.std(ddof=1) / np.sqrt(d.size)), "curves_ref_better": int((d > 0).sum()),
                      "curves_ref_worse": int((d < 0).sum()), "test_curves": int(d.size)}
    return summary


def merged(parts: list[dict[str, Any]], protocol: str) -> dict[str, Any]:
    """One data set's results from runs on disjoint splits (``--splits``), the curves' errors concatenated."""
    out = dict(parts[0], protocol=protocol, splits=sum(p["splits"] for p in parts),
               test_curves_of_new_subjects=sum(p["test_curves_of_new_subjects"] for p in parts))
    models = [m for m in parts[0]["errors"] if all(m in p["errors"] for p in parts)]
    out["errors"] = {m: [e for p in parts for e in p["errors"][m]] for m in models}
    out["facts"] = {m: [f for p in parts for f in p["facts"].get(m, [])] for m in models}
    out["summary"] = summarize(out["errors"])
    return out


def report(payload: dict[str, Any]) -> str:
    procs = f" (wall times summed over {payload['processes']} processes)" if payload.get("processes") else ""
    lines = ["# Subject effects (generated by benchmarks/subject_effects.py)", "",
             f"Held-out error per test curve, paired against `{REFERENCE}` (difference = model - {REFERENCE}: "
             f"positive means {REFERENCE} is better). {payload['seconds']:.0f} s{procs} on "
             f"{payload['machine']['cpu_count']} shared CPUs.", ""]
    for name, r in payload["datasets"].items():
        lines += [f"## {name}: `{r['formula']}`, subject `{r['subject']}`", "", r["protocol"] +
                  f"; error {r['error']}; {r['test_curves_of_new_subjects']} test curves of new subjects.", "",
                  "| model | error (mean) | model - re(ID) (± se) | curves re(ID) better / worse |",
                  "| --- | --- | --- | --- |"]
        for m, s in sorted(r["summary"].items(), key=lambda kv: kv[1]["mean"]):
            diff = "" if m == REFERENCE else f"{s[f'diff_vs_{REFERENCE}']:+.4g} ± {s['diff_se']:.2g}"
            won = "" if m == REFERENCE else f"{s['curves_ref_better']} / {s['curves_ref_worse']}"
            lines.append(f"| {m} | {s['mean']:.5g} | {diff} | {won} |")
        lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--datasets", default=",".join(DATASETS), help="comma-separated subset of " + ",".join(DATASETS))
    p.add_argument("--no-mgcv", action="store_true", help="skip the mgcv references")
    p.add_argument("--splits", default=None, help="comma-separated indices of the splits to run (default: all)")
    p.add_argument("--skip", default="", help="comma-separated fdakpl variants to leave out ('grids' for the "
                                              "weight grids)")
    p.add_argument("--merge", nargs="*", default=None, help="JSON files of runs on disjoint splits of one data set "
                                                            "to merge into --out (nothing is fitted)")
    p.add_argument("--out", default=str(RESULTS / "subject_effects.json"))
    args = p.parse_args(argv)
    if args.merge:
        import json

        runs = [json.loads(Path(f).read_text()) for f in args.merge]
        payload = {"machine": runs[0]["machine"], "command": " + ".join(r["command"] for r in runs),
                   "seconds": sum(r["seconds"] for r in runs), "processes": len(runs), "datasets": {}}
        for name in runs[0]["datasets"]:
            parts = [r["datasets"][name] for r in runs]
            runs_of = [p["protocol"].split("(splits ")[-1][:-1] for p in parts]
            payload["datasets"][name] = merged(parts, f"{DATASETS[name]()['protocol']} (splits run in {len(parts)} "
                                                      f"processes: {runs_of})")
        write_results(Path(args.out), payload, indent=1)
        Path(args.out).with_suffix(".md").write_text(report(payload))
        return payload
    payload: dict[str, Any] = {"machine": {"cpu_count": os.cpu_count(), "loadavg": list(os.getloadavg())},
                               "command": " ".join(["python", "benchmarks/subject_effects.py",
                                                    *(argv or sys.argv[1:])]),
                               "datasets": {}}
    t0 = time.perf_counter()
    for name in [n.strip() for n in args.datasets.split(",") if n.strip()]:
        splits = None if args.splits is None else [int(s) for s in args.splits.split(",")]
        skip = tuple(s.strip() for s in args.skip.split(",") if s.strip())
        payload["datasets"][name] = run(name, not args.no_mgcv, splits, skip)
    payload["seconds"] = time.perf_counter() - t0
    out = Path(args.out)
    write_results(out, payload, indent=1)
    out.with_suffix(".md").write_text(report(payload))
    print(out.with_suffix(".md").read_text())
    return payload


if __name__ == "__main__":
    main()
