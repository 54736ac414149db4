"""Partially observed responses with gaps by design (issue 24, item 1): which route, which integration weights.

Writes ``benchmarks/results/partial_observation.json``. Run:
``python benchmarks/partial_observation.py [n_reps] [n_folds] [--no-mgcv] [--only=sim|dti|aemet_uneven|...]``
(defaults 2 and 5); pieces run with ``--only=`` write ``partial_observation_<piece>.json``, merged into
``partial_observation.json`` (and a table, ``partial_observation.md``) by ``--merge``.

Training response curves lose points in one of four shapes; the test curves are kept whole and scored on
every observed point: integrated squared error (trapezoid on the curve's observed points; on an even grid the
mean squared error over points up to the ends' half weights), relative to the training mean's on the same
split (``relative_ise``; the mean over points, which on an uneven grid weighs the dense stretch more, is
recorded as ``relative_point_mse``). Shapes:

* ``mcar``: each point missing with probability 0.3;
* ``block``: each curve misses a random contiguous 20% of its locations;
* ``design``: the curves of one factor level (or one half) miss the same contiguous block (~10-15% of the
  locations), as when an instrument changes mode for them;
* ``sparse``: each curve keeps 5-8 random points (simulations only).

Data: **simulations** (``y ~ x + C(g)``, a functional input on 30 points and a 2-level factor; 100 training,
100 test curves; response on an even grid of 50 points or an uneven grid, a point every 0.01 on [0, 0.3]
then every 0.025, 59 points; noise sd 0.2) and **real data**
(bundled): DTI (``rcst ~ cca``, the designed block in every other curve), aemet (``logprec ~ temp``, made
uneven as in the issue: every 2nd day over the first half of the year, every 10th after), poblenou
(``nox ~ C(day_week) + C(day_festive)``, the block in the curves of Monday-Wednesday) and emotion
(``EMG ~ EEG + C(power) + ...``, every 4th time point, the block in the curves with power 'high'); K-fold
splits.

Routes, every one through ``FunctionalRegression(...).fit()`` (lambda, widths, b and atoms tuned as by
default): ``default`` (integration="auto"), ``plugin`` (integration="plugin": the former default),
``quadrature`` (trapezoid on each curve's observed points), ``interpolate`` (the grid's trapezoid on each
centred curve's linear interpolant), ``exact_partial`` and ``exact_partial_plugin`` (the exact
partial ridge with the per-curve quadrature / plug-in point weights), ``interp_quadrature`` and
``interp_plugin`` (training gaps filled by linear interpolation first, constant beyond the ends),
``ls_projection`` (each training curve replaced on its gaps by its least-squares fit on 21 Fourier atoms,
then the defaults) and ``mgcv`` (pffr's construction on the long form, ``benchmarks/mgcv_reference.py``).
"""

from __future__ import annotations

import os
import platform
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import xarray as xr
from _results import write_results

from fdakpl import Fourier, FunctionalRegression, datasets
from fdakpl.data.functional import Observations, interpolate_missing
from fdakpl.data.integration import curve_quadrature_weights

OUT = Path(__file__).parent / "results" / "partial_observation.json"
ROUTES = ("default", "plugin", "quadrature", "interpolate", "exact_partial", "exact_partial_plugin",
          "interp_quadrature", "interp_plugin", "ls_projection", "mgcv")


# ----------------------------------------------------------------------------------------------- missingness
def delete(Y: np.ndarray, shape: str, rng: np.random.Generator, designed: np.ndarray | None = None,
           block: tuple[float, float] = (0.45, 0.57)) -> np.ndarray:
    """A copy of ``Y`` (n, m) with training points deleted in one missingness shape."""
    Y = Y.copy()
    n, m = Y.shape
    if shape == "mcar":
        Y[rng.uniform(size=Y.shape) < 0.3] = np.nan
    elif shape == "block":
        w = max(2, round(0.2 * m))
        for i in range(n):
            s = rng.integers(0, m - w + 1)
            Y[i, s:s + w] = np.nan
    elif shape == "design":
        a, b = int(block[0] * m), max(int(block[0] * m) + 2, int(block[1] * m))
        Y[np.asarray(designed, dtype=bool), a:b] = np.nan
    elif shape == "sparse":
        for i in range(n):
            keep = rng.choice(m, size=rng.integers(5, 9), replace=False)
            mask = np.ones(m, dtype=bool)
            mask[keep] = False
            Y[i, mask] = np.nan
    else:
        raise ValueError(shape)
    return Y


def ls_fill(Y: np.ndarray, grid: np.ndarray) -> np.ndarray:
    """Gaps of each curve filled by its least-squares fit on Fourier(10) (21 atoms, ridge 1e-4 of the mean diagonal)."""
    obs = Observations.from_dense(np.nan_to_num(Y[:1] * 0 + 1.0), grid)
    phi = Fourier(10).fit(obs, domain=(grid[0], grid[-1])).evaluate(grid)
    out = Y.copy()
    for i in range(Y.shape[0]):
        seen = ~np.isnan(Y[i])
        P = phi[seen]
        PtP = P.T @ P
        coef = np.linalg.solve(PtP + 1e-4 * np.trace(PtP) / PtP.shape[0] * np.eye(P.shape[1]), P.T @ Y[i, seen])
        out[i, ~seen] = phi[~seen] @ coef
    return out


# ------------------------------------------------------------------------------------------------- routes
def fit_route(route: str, formula: str, train: xr.Dataset, response: str, interpolate_inputs: bool) -> Any:
    """The fitted results of one route on the training set (gaps in ``train[response]``)."""
    ds = train.copy()
    Y = ds[response]
    grid = Y[Y.dims[1]].values
    opts: dict[str, Any] = {"progress": False, "interpolate_inputs": interpolate_inputs}
    if route in {"interp_quadrature", "interp_plugin"}:
        ds[response] = Y.copy(data=interpolate_missing(Y.values, grid, response))
    elif route == "ls_projection":
        ds[response] = Y.copy(data=ls_fill(Y.values, grid))
    if route in {"plugin", "interp_plugin", "exact_partial_plugin"}:
        opts["integration"] = "plugin"
    if route in {"quadrature", "interpolate"}:
        opts["integration"] = route
    if route.startswith("exact_partial"):
        opts["solver"] = "exact_partial"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return FunctionalRegression(formula, ds, **opts).fit()


def mgcv_predict(train: xr.Dataset, test: xr.Dataset, response: str, inputs: tuple[str, ...],
                 factors: tuple[str, ...]) -> np.ndarray:
    """pffr's construction fitted by mgcv on the training long form; predictions of the test curves."""
    from mgcv_reference import fit_predict

    Y = train[response]
    t = Y[Y.dims[1]].values
    X, Xn = {}, {}
    for name in inputs:
        g = train[name][train[name].dims[1]].values
        X[name] = (interpolate_missing(train[name].values, g, name), g)
        Xn[name] = interpolate_missing(test[name].values, g, name)
    Z = Zn = None
    if factors:
        levels = {f: sorted(set(np.asarray(train[f].values).astype(str))) for f in factors}
        Z = np.column_stack([(np.asarray(train[f].values).astype(str) == lev).astype(float)
                             for f in factors for lev in levels[f][1:]])
        Zn = np.column_stack([(np.asarray(test[f].values).astype(str) == lev).astype(float)
                              for f in factors for lev in levels[f][1:]])
    pred, _ = fit_predict(Y.values, t, X, Xn, Z, Zn)
    return pred


def score(Ytest: np.ndarray, pred: np.ndarray, grid: np.ndarray, kind: str = "integrated") -> float:
    """Mean over test curves of the integrated squared error (trapezoid on the curve's observed points over the
    grid's range: an L2 error, the same in any spacing of the grid), or the mean over points (``"points"``)."""
    r2 = (Ytest - pred) ** 2
    if kind == "points":
        return float(np.nanmean(r2))
    obs = Observations.from_dense(r2, grid)
    w = curve_quadrature_weights(obs, (grid[0], grid[-1]))
    return float(np.bincount(obs.index, w * obs.value, minlength=obs.n_samples).mean())


def run_case(name: str, shape: str, formula: str, full: xr.Dataset, response: str, inputs: tuple[str, ...],
             factors: tuple[str, ...], splits: list[tuple[np.ndarray, np.ndarray]], designed: np.ndarray | None,
             rng: np.random.Generator, routes: tuple[str, ...], interpolate_inputs: bool = False,
             block: tuple[float, float] = (0.45, 0.57)) -> dict[str, Any]:
    """Every route on every split of one (data set, shape); errors relative to the training mean's."""
    errs: dict[str, list[float]] = {r: [] for r in routes}
    errs_pts: dict[str, list[float]] = {r: [] for r in routes}
    grid = full[response][full[response].dims[1]].values
    secs: dict[str, float] = {r: 0.0 for r in routes}
    chosen: dict[str, str] = {}
    for tr, te in splits:
        train, test = full.isel(sample=tr), full.isel(sample=te)
        Ytr = delete(train[response].values, shape, rng, None if designed is None else designed[tr], block)
        if np.isnan(Ytr).all(axis=1).any():  # a curve that lost every point: keep one
            Ytr[np.isnan(Ytr).all(axis=1), 0] = train[response].values[np.isnan(Ytr).all(axis=1), 0]
        train = train.assign({response: train[response].copy(data=Ytr)})
        Yte = test[response].values
        centre = np.broadcast_to(np.nanmean(Ytr, axis=0), Yte.shape)
        base, base_pts = score(Yte, centre, grid), score(Yte, centre, grid, "points")
        for r in routes:
            t0 = time.perf_counter()
            try:
                if r == "mgcv":
                    pred = mgcv_predict(train, test, response, inputs, factors)
                else:
                    res = fit_route(r, formula, train, response, interpolate_inputs)
                    pred = res.predict(test).values
                    if r == "default":
                        chosen = {"solver": res.solver, "integration": res.estimator.integration_}
                errs[r].append(score(Yte, pred, grid) / base)
                errs_pts[r].append(score(Yte, pred, grid, "points") / base_pts)
            except Exception as exc:  # a route that fails is recorded, not fatal
                errs[r].append(float("nan"))
                errs_pts[r].append(float("nan"))
                chosen[f"{r}_error"] = f"{type(exc).__name__}: {exc}"[:200]
            secs[r] += time.perf_counter() - t0
    mean = {r: float(np.mean(v)) for r, v in errs.items()}
    kpl = {r: v for r, v in mean.items() if r != "mgcv" and np.isfinite(v)}
    best = min(kpl, key=kpl.get)  # type: ignore[arg-type]
    out = {"data": name, "shape": shape, "n_splits": len(splits), "relative_ise": mean, "per_split": errs,
           "relative_point_mse": {r: float(np.mean(v)) for r, v in errs_pts.items()},
           "seconds": {r: round(s, 1) for r, s in secs.items()}, "default_route": chosen, "best_kpl_route": best,
           "default_over_best": mean["default"] / kpl[best],
           "default_over_mgcv": mean["default"] / mean["mgcv"] if "mgcv" in mean else None,
           "missing_fraction": float(np.isnan(delete(full[response].values, shape, np.random.default_rng(0),
                                                     designed, block)).mean())}
    print(f"{name:10s} {shape:7s} " + " ".join(f"{r}={v:.3f}" for r, v in mean.items())
          + f"  default/best={out['default_over_best']:.3f} {chosen}", flush=True)
    return out


# --------------------------------------------------------------------------------------------------- data
def simulated(grid_kind: str, n: int, rng: np.random.Generator) -> xr.Dataset:
    """``y_i(t) = sin(2 pi t (1 + a1/2)) + tanh(a2) t^2 + 0.5 g_i cos(3 pi t) + noise`` with input
    ``x_i(s) = a1 sin(pi s) + a2 cos(pi s)``, ``g_i`` a 2-level factor."""
    t = np.linspace(0, 1, 50) if grid_kind == "even" else np.concatenate([np.arange(0, 0.3, 0.01),
                                                                            np.arange(0.3, 1.0001, 0.025)])
    s = np.linspace(0, 1, 30)
    a = rng.uniform(-1.5, 1.5, size=(n, 2))  # bounded: no test input far outside the training inputs
    g = rng.integers(0, 2, size=n)
    x = a[:, :1] * np.sin(np.pi * s) + a[:, 1:] * np.cos(np.pi * s) + 0.05 * rng.normal(size=(n, s.size))
    y = (np.sin(2 * np.pi * t * (1 + a[:, :1] / 2)) + np.tanh(a[:, 1:]) * t ** 2 + 0.5 * g[:, None]
         * np.cos(3 * np.pi * t) + 0.2 * rng.normal(size=(n, t.size)))
    return xr.Dataset({"x": (("sample", "s"), x), "y": (("sample", "t"), y),
                       "g": ("sample", np.array(["a", "b"], dtype=object)[g])}, coords={"s": s, "t": t})


def kfold(n: int, k: int, seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    perm = np.random.default_rng(seed).permutation(n)
    folds = np.array_split(perm, k)
    return [(np.sort(np.concatenate(folds[:i] + folds[i + 1:])), np.sort(folds[i])) for i in range(k)]


def real_cases(n_folds: int) -> list[dict[str, Any]]:
    aemet = datasets.load_aemet()
    days = np.concatenate([np.arange(0, 182, 2), np.arange(182, 365, 10)])
    aemet = aemet.isel(logprec_loc=days, temp_loc=np.arange(0, 365, 4))
    emo = datasets.load_emotion().isel(EMG_loc=slice(0, None, 4), EEG_loc=slice(0, None, 4))
    dti = datasets.dti_first_visits()
    pob = datasets.load_poblenou()
    return [
        {"name": "dti", "ds": dti, "formula": "rcst ~ cca", "response": "rcst", "inputs": ("cca",), "factors": (),
         "designed": np.arange(dti.sizes["sample"]) % 2 == 0, "interp": True,
         "designed_by": "every other curve"},
        {"name": "aemet_uneven", "ds": aemet, "formula": "logprec ~ temp", "response": "logprec",
         "inputs": ("temp",), "factors": (), "designed": np.arange(aemet.sizes["sample"]) % 2 == 0,
         "interp": False, "designed_by": "every other station", "block": (0.3, 0.38)},
        {"name": "poblenou", "ds": pob, "formula": "nox ~ C(day_week) + C(day_festive)", "response": "nox",
         "inputs": (), "factors": ("day_week", "day_festive"),
         "designed": np.isin(pob["day_week"].values.astype(str), ["1", "2", "3"]), "interp": False,
         "designed_by": "day_week in 1-3 (Monday-Wednesday)"},
        {"name": "emotion", "ds": emo, "formula": "EMG ~ EEG + C(power) + C(game_outcome) + C(control)",
         "response": "EMG", "inputs": ("EEG",), "factors": ("power", "game_outcome", "control"),
         "designed": emo["power"].values.astype(str) == "high", "interp": False,
         "designed_by": "power == 'high'"},
    ]


def merge() -> None:
    """Merge the pieces' JSON into ``partial_observation.json`` and write the table ``partial_observation.md``."""
    import json

    rows, secs, meta = [], 0.0, {}
    for piece in sorted(OUT.parent.glob("partial_observation_*.json")):
        d = json.loads(piece.read_text())
        rows += d["rows"]
        secs += d["seconds_total"]
        meta = {k: d[k] for k in ("benchmark", "issue", "sizes", "routes", "machine")}
    routes = meta["routes"]
    lines = ["| data | shape | " + " | ".join(routes) + " | default / best | default / mgcv |",
             "|---" * (len(routes) + 4) + "|"]
    for r in rows:
        e = r["relative_ise"]
        best = min(v for k, v in e.items() if k != "mgcv")
        cells = [f"**{e[k]:.3f}**" if k != "mgcv" and e[k] == best else f"{e[k]:.3f}" for k in routes]
        mg = f"{r['default_over_mgcv']:.3f}" if r.get("default_over_mgcv") else "-"
        lines.append(f"| {r['data']}{'' if 'rep' not in r else ' #' + str(r['rep'])} | {r['shape']} | "
                     + " | ".join(cells) + f" | {r['default_over_best']:.3f} | {mg} |")
    table = "\n".join(lines) + "\n"
    OUT.with_suffix(".md").write_text(
        "Held-out integrated squared error relative to the training mean's (mean over splits; bold: best KPL "
        "route). Written by `python benchmarks/partial_observation.py --merge`.\n\n" + table)
    write_results(OUT, {**meta, "rows": rows, "seconds_total": round(secs, 1)})
    print(table)


def main() -> None:
    if "--merge" in sys.argv:
        merge()
        return
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    n_reps = int(args[0]) if args else 2
    n_folds = int(args[1]) if len(args) > 1 else 5
    routes = ROUTES if "--no-mgcv" not in sys.argv else ROUTES[:-1]
    only = [a[len("--only="):] for a in sys.argv[1:] if a.startswith("--only=")]
    t_start = time.perf_counter()
    rows = []
    for grid_kind in ("even", "uneven"):
        if only and "sim" not in only:
            break
        for shape in ("mcar", "block", "design", "sparse"):
            for rep in range(n_reps):
                rng = np.random.default_rng(1000 * rep + len(shape))
                ds = simulated(grid_kind, 200, rng)
                split = [(np.arange(100), np.arange(100, 200))]
                r = run_case(f"sim_{grid_kind}", shape, "y ~ x + C(g)", ds, "y", ("x",), ("g",), split,
                             ds["g"].values == "b", rng, routes)
                r["rep"] = rep
                rows.append(r)
    for case in real_cases(n_folds):
        if only and case["name"] not in only:
            continue
        for shape in ("mcar", "block", "design"):
            rng = np.random.default_rng(7)
            rows.append(run_case(case["name"], shape, case["formula"], case["ds"], case["response"],
                                 case["inputs"], case["factors"], kfold(case["ds"].sizes["sample"], n_folds, 0),
                                 case["designed"], rng, routes, case["interp"], case.get("block", (0.45, 0.57))))
            rows[-1]["designed_by"] = case["designed_by"]
    out = OUT if not only else OUT.with_name(f"partial_observation_{'_'.join(only)}.json")
    write_results(out, {
        "benchmark": "partial_observation", "issue": 24,
        "sizes": {"simulation": "200 curves (100 train / 100 test) per replicate", "n_reps": n_reps,
                  "n_folds_real": n_folds},
        "routes": list(routes), "rows": rows, "seconds_total": round(time.perf_counter() - t_start, 1),
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count(),
                    "threads": os.environ.get("OMP_NUM_THREADS")},
    })


if __name__ == "__main__":
    main()
