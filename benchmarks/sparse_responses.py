"""Sparse, irregular responses through the formula front end (issue 12, item 4): held-out accuracy.

Writes ``benchmarks/results/sparse_responses.json``. Run: ``python benchmarks/sparse_responses.py [n_draws]``.

Two settings, each response curve observed at 3-8 random locations:

* **simulation** -- 200 training and 200 test curves; inputs ``x_i(s) = a1 sin(pi s) + a2 cos(pi s) + a3 / 2``
  (+ noise) on 30 points; responses ``y_i(t) = cos 3t + 1.5 tanh(a1) sin 2 pi t + (a2^2 - 1) t +
  a3 cos(pi t) / 2`` observed at 3-8 uniform random locations with noise sd 0.3, given in long form and put in
  the Dataset by ``fdakpl.data.functional.from_long``. Error: integrated squared error against the noiseless truth on
  101 points, divided by the variance of the truth across test curves (the training mean scores about 1).
* **DTI, sparsified (real data)** -- the 100 first visits of the MS cases, random 70/30 splits; each training
  ``rcst`` curve keeps 3-8 of its observed points; error on every observed point of the (complete) test curves,
  relative to the training mean's error on the same split (the training centre of the sparsified curves).

Models (every one through ``FunctionalRegression(...).fit()``): the training mean; the defaults (for sparse
responses: exact partial ridge, BSpline(8), lambda by its exact leave-one-curve-out), and the same with the lambda
pointwise GCV picks on its path; plug-in (``solver="eig"``) and exact partial (``solver="exact_partial"``) ridge
with Fourier(10) (the former default, 21 atoms), Fourier(3), BSpline(6), BSpline(8) and BSpline(10), each with
``lam="loo"``; and both solvers with BSpline(8) at the lambda chosen in hindsight on the test curves over 25
values (oracle bounds for the choice of lambda).
The centre of the responses is also scored alone: bins (the former long-form centre) against the bins smoothed
by a spline (the current one) and a spline through the raw points.
"""

from __future__ import annotations

import json
import os
import platform
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import xarray as xr

from fdakpl import BSpline, Fourier, FunctionalRegression, datasets
from fdakpl.data.functional import from_long, observations_from_long
from fdakpl.data.preprocessing import MeanFunction

OUT = Path(__file__).parent / "results" / "sparse_responses.json"
S = np.linspace(0, 1, 30)
THETA = np.linspace(0, 1, 101)


def truth(a: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Noiseless response curves of the simulation at ``t``."""
    return (np.cos(3 * t)[None] + 1.5 * np.sin(2 * np.pi * t)[None] * np.tanh(a[:, :1])
            + (a[:, 1:2] ** 2 - 1) * t[None] + 0.5 * a[:, 2:3] * np.cos(np.pi * t)[None])


def simulate(seed: int, n: int = 200, n_test: int = 200, noise: float = 0.3, m: tuple[int, int] = (3, 8)):
    """Training Dataset (sparse response from long form), test inputs and test truth on ``THETA``."""
    rng = np.random.default_rng(seed)
    a = rng.normal(size=(n + n_test, 3))
    X = (a[:, :1] * np.sin(np.pi * S) + a[:, 1:2] * np.cos(np.pi * S) + 0.5 * a[:, 2:3]
         + 0.1 * rng.normal(size=(n + n_test, S.size)))
    rows = []
    for i in range(n):
        t = np.sort(rng.uniform(0, 1, rng.integers(m[0], m[1] + 1)))
        rows += list(zip([i] * t.size, t, truth(a[i:i + 1], t)[0] + noise * rng.normal(size=t.size), strict=True))
    long = pd.DataFrame(rows, columns=["sample", "location", "value"])
    x = xr.DataArray(X, dims=("sample", "s"), coords={"sample": np.arange(n + n_test), "s": S})
    train = xr.Dataset({"y": from_long(long, name="y"), "x": x.isel(sample=slice(0, n))})
    test = xr.Dataset({"x": x.isel(sample=slice(n, None))})
    return train, test, truth(a[n:], THETA), long


def sparsify(Y: xr.DataArray, rng: np.random.Generator, m: tuple[int, int] = (3, 8)) -> xr.DataArray:
    """Keep 3-8 random observed points of every curve."""
    out = np.full(Y.shape, np.nan)
    vals = Y.values
    for i in range(vals.shape[0]):
        obs = np.nonzero(~np.isnan(vals[i]))[0]
        keep = rng.choice(obs, size=min(obs.size, int(rng.integers(m[0], m[1] + 1))), replace=False)
        out[i, keep] = vals[i, keep]
    return Y.copy(data=out)


def models() -> dict[str, dict]:
    out: dict[str, dict] = {"defaults": {}}
    for name, dic in [("F10", Fourier(10)), ("F3", Fourier(3)), ("BS6", BSpline(6)), ("BS8", BSpline(8)),
                      ("BS10", BSpline(10))]:
        for solver in ["eig", "exact_partial"]:
            out[f"{solver}/{name}"] = {"dictionary": dic, "solver": solver, "lam": "loo"}
    return out


def fit_predict(formula: str, train: xr.Dataset, test: xr.Dataset, theta: np.ndarray, **kw):
    t0 = time.perf_counter()
    res = FunctionalRegression(formula, data=train, progress=False, **kw).fit()
    seconds = time.perf_counter() - t0
    pred = np.asarray(res.estimator.predict(res.model.parsed.inputs(test), at=theta))
    return res, pred, seconds


def oracle(formula: str, train: xr.Dataset, test: xr.Dataset, theta: np.ndarray, score, **kw) -> float:
    """Best test score over the lambda grid (hindsight)."""
    return min(score(fit_predict(formula, train, test, theta, lam=float(lam), **kw)[1])
               for lam in np.geomspace(1e-7, 1e-1, 25))


def run_simulation(seed: int) -> dict:
    train, test, F, long = simulate(seed)
    var = F.var(axis=0).mean()

    def score(P: np.ndarray) -> float:
        return float(((P - F) ** 2).mean() / var)

    out: dict = {}
    obs, _ = observations_from_long(long)
    mf = MeanFunction(obs, (0.0, 1.0))
    out["mean:smoothed_bins"] = score(np.broadcast_to(mf(THETA), F.shape))
    bins = MeanFunction.from_values(*_bins(obs))
    out["mean:bins"] = score(np.broadcast_to(bins(THETA), F.shape))
    from scipy.interpolate import make_smoothing_spline

    u, inv = np.unique(obs.location, return_inverse=True)
    cnt = np.bincount(inv)
    raw = make_smoothing_spline(u, np.bincount(inv, obs.value) / cnt, w=cnt.astype(float))
    out["mean:spline_raw_points"] = score(np.broadcast_to(raw(THETA), F.shape))
    times = {}
    for name, kw in models().items():
        res, P, sec = fit_predict("y ~ x", train, test, THETA, domain=(0, 1), **kw)
        out[name] = score(P)
        times[name] = sec
        if name == "defaults":
            out["defaults:solver"] = res.solver
            out["defaults:dictionary"] = repr(res.estimator.dictionary_)
            out["defaults:r2_finite"] = bool(np.isfinite(res.r2))
            out["defaults:lambda"] = res.lam
            out["defaults,pointwise_gcv"] = score(fit_predict("y ~ x", train, test, THETA, domain=(0, 1),
                                                              lam=_gcv_lambda(res))[1])
    for solver in ["exact_partial", "eig"]:
        out[f"oracle_lambda:{solver}/BS8"] = oracle("y ~ x", train, test, THETA, score, domain=(0, 1),
                                                    solver=solver, dictionary=BSpline(8))
    out["seconds"] = times
    return out


def _gcv_lambda(res) -> float:
    """The lambda pointwise GCV would have chosen on the defaults' path (exact partial ridge)."""
    return float(res.criteria.lams[int(np.argmin(res.criteria.gcv))])


def _bins(obs):
    """The former long-form centre: bin means at the bins' mean locations (no smoothing)."""
    from fdakpl.data.preprocessing import cell_locations, location_cells

    cells, cell_of, _ = location_cells(obs.location, (0.0, 1.0))
    cnt = np.bincount(cell_of, minlength=cells.size)
    ok = cnt > 0
    loc = np.bincount(cell_of, weights=obs.location, minlength=cells.size)[ok] / cnt[ok]
    return loc, cell_locations(obs.value, cell_of, cells.size)[ok]


def run_dti(seed: int, ds: xr.Dataset) -> dict:
    rng = np.random.default_rng(seed)
    perm = rng.permutation(ds.sizes["sample"])
    train, test = ds.isel(sample=np.sort(perm[:70])), ds.isel(sample=np.sort(perm[70:]))
    train = train.assign(rcst=sparsify(train["rcst"], rng))
    Yte = test["rcst"].values
    grid = test["rcst"]["rcst_loc"].values
    ok = ~np.isnan(Yte)
    train_mean = MeanFunction(observations_from_long(_long(train["rcst"]))[0], (0.0, 1.0))
    mean_err = float(np.mean((Yte - train_mean(grid)[None])[ok] ** 2))
    out: dict = {"mean:training_mse": mean_err}

    def score(P: np.ndarray) -> float:
        return float(np.mean((Yte - P)[ok] ** 2)) / mean_err

    for name, kw in models().items():
        res, P, _ = fit_predict("rcst ~ cca", train, test, grid, interpolate_inputs=True, **kw)
        out[name] = score(P)
        if name == "defaults":
            out["defaults:lambda"] = res.lam
            out["defaults,pointwise_gcv"] = score(fit_predict("rcst ~ cca", train, test, grid,
                                                              interpolate_inputs=True, lam=_gcv_lambda(res))[1])
    for solver in ["exact_partial", "eig"]:
        out[f"oracle_lambda:{solver}/BS8"] = oracle("rcst ~ cca", train, test, grid, score, interpolate_inputs=True,
                                                    solver=solver, dictionary=BSpline(8))
    return out


def _long(Y: xr.DataArray) -> pd.DataFrame:
    from fdakpl.data.functional import to_long

    return to_long(Y)


def summarise(runs: list[dict]) -> dict:
    keys = [k for k in runs[0] if isinstance(runs[0][k], float)]
    return {k: {"mean": float(np.mean([r[k] for r in runs])),
                "se": float(np.std([r[k] for r in runs], ddof=1) / np.sqrt(len(runs)))} for k in keys}


PAIRS = [("defaults", "eig/F10"), ("defaults", "defaults,pointwise_gcv"), ("defaults", "eig/BS8"),
         *[(f"exact_partial/{d}", f"eig/{d}") for d in ["F10", "F3", "BS6", "BS8", "BS10"]],
         ("exact_partial/BS8", "exact_partial/BS6"), ("exact_partial/BS8", "exact_partial/BS10"),
         ("exact_partial/BS8", "exact_partial/F3"), ("defaults", "exact_partial/BS8"),
         ("defaults", "oracle_lambda:exact_partial/BS8"), ("eig/BS8", "oracle_lambda:eig/BS8")]


def paired(runs: list[dict]) -> dict:
    """Paired differences ``a - b`` (negative: ``a`` better): mean, standard error, draws where ``a`` wins."""
    out = {}
    for a, b in PAIRS:
        diff = np.array([r[a] - r[b] for r in runs])
        out[f"{a} - {b}"] = {"mean": float(diff.mean()), "se": float(diff.std(ddof=1) / np.sqrt(diff.size)),
                             "wins": int(np.sum(diff < 0)), "of": int(diff.size)}
    return out


def main() -> None:
    warnings.simplefilter("ignore")
    n_draws = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    from threadpoolctl import threadpool_limits

    res: dict = {"machine": {"python": platform.python_version(), "cpu_count": os.cpu_count(),
                             "numpy": np.__version__, "loadavg_at_start": os.getloadavg()},
                 "n_draws": n_draws}
    with threadpool_limits(1):
        sim = [run_simulation(s) for s in range(n_draws)]
        ds = datasets.dti_first_visits(datasets.load_dti(source="rdata"))
        dti = [run_dti(s, ds) for s in range(n_draws)]
    res["simulation"] = {"summary": summarise(sim), "paired": paired(sim), "runs": sim,
                         "error": "integrated squared error against the truth / variance of the truth"}
    res["dti_sparse"] = {"summary": summarise(dti), "paired": paired(dti), "runs": dti,
                         "error": "test MSE over observed points / the training mean's (pointwise) test MSE"}
    res["loadavg_at_end"] = os.getloadavg()
    OUT.parent.mkdir(exist_ok=True)
    OUT.write_text(json.dumps(res, indent=1, default=str))
    for part in ["simulation", "dti_sparse"]:
        print(part)
        for k, v in res[part]["summary"].items():
            print(f"  {k:45s} {v['mean']:.4g} +- {v['se']:.2g}")
        for k, v in res[part]["paired"].items():
            print(f"  {k:45s} {v['mean']:+.4f} +- {v['se']:.4f}  wins {v['wins']}/{v['of']}")


if __name__ == "__main__":
    main()
