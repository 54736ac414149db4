"""Dictionaries: representation error and ridge-KPL test error against the number of atoms.

For the toy data (clean, 100 training and 100 test curves) and the DTI data
(70/30 splits), and for four families -- Fourier, Daubechies-3 wavelets (the
number of atoms set by the resolution of the discrete transform), FPCA and
learnt dictionaries (sparse coding, ``tau = 0.01``) -- this measures

* the *representation error*: relative squared error of the best
  approximation of the centred, fully observed test curves in the span of
  the dictionary (weighted least squares on the response grid with
  trapezoidal weights), ``sum_i ||y_i - P y_i||^2 / sum_i ||y_i||^2``;
* the test error of ridge-KPL (``B = I``, the paper's Gaussian kernel scale,
  lambda by 5-fold CV), mean over test curves of the mean (toy) or the sum
  (DTI) over observed points;
* the time to fit the dictionary on the training curves and the time of the
  KPL cross-validation and final fit.

Usage::

    nice -n 10 python -m experiments.dictionaries --quick
    nice -n 10 python -m experiments.dictionaries --full

Results: summary in ``experiments/results/dictionaries[_quick].json``; raw records and
``.png`` in ``experiments/output/``.
"""

from __future__ import annotations

import argparse
import time
import warnings
from typing import Any

import numpy as np
import pywt
import xarray as xr

from fdakpl import FPCA, Fourier, KPLRegressor, Wavelet
from fdakpl.data.functional import Observations, quadrature_weights
from fdakpl.dictionaries import Learned
from fdakpl.kernels import Gaussian

from .common import curve_errors, machine, paper_gaussian_sigma, parallel_map, random_splits, write_json
from .cv import cross_validate, fit_best

FAMILIES = ("Fourier", "wavelets (db3)", "FPCA", "learnt")


def settings(kind: str = "full") -> dict[str, Any]:
    full = {
        "sizes": {"Fourier": [1, 2, 3, 4, 6, 8, 10, 15, 20], "wavelets (db3)": [8, 16, 24, 32, 48, 64],
                  "FPCA": [1, 2, 3, 4, 6, 8, 10, 15, 20, 30], "learnt": [2, 3, 4, 6, 8, 10, 15, 20, 30]},
        "runs": {"toy": 5, "dti": 10}, "lams": np.geomspace(1e-9, 1e-1, 17), "n_folds": 5, "tau": 0.01,
        "dl_iter": 50,
    }
    if kind == "full":
        return full
    if kind == "quick":
        return {**full, "sizes": {"Fourier": [1, 3, 6, 10, 20], "wavelets (db3)": [8, 16, 32, 64],
                                  "FPCA": [1, 3, 6, 10, 20], "learnt": [3, 6, 10, 20]},
                "runs": {"toy": 2, "dti": 3}, "lams": np.geomspace(1e-9, 1e-1, 9)}
    if kind == "tiny":
        return {**full, "sizes": {"Fourier": [2], "wavelets (db3)": [8], "FPCA": [2], "learnt": [2]},
                "runs": {"toy": 1, "dti": 1}, "lams": np.array([1e-6, 1e-3]), "n_folds": 2, "dl_iter": 3}
    raise ValueError(f"unknown settings {kind!r}")


def make_dict(family: str, size: int, s: dict[str, Any], seed: int = 0) -> Any:
    """A dictionary of the family with (about) ``size`` atoms (frequencies for Fourier)."""
    if family == "Fourier":
        return Fourier(size)
    if family == "wavelets (db3)":
        level = max(1, min(4, pywt.dwt_max_level(size, pywt.Wavelet("db3").dec_len)))
        return Wavelet("db3", level=level, resolution=size)
    if family == "FPCA":
        return FPCA(size)
    if family == "learnt":
        return Learned(size, tau=s["tau"], max_iter=s["dl_iter"], random_state=seed, progress=False)
    raise ValueError(family)


def representation_error(dic: Any, Yc: np.ndarray, grid: np.ndarray, domain: tuple[float, float]) -> float:
    """Relative squared error of the best approximation of fully observed centred curves in the span.

    Weighted least squares on the grid (trapezoidal weights), i.e. the
    orthogonal projection for the quadrature inner product:
    ``sum_i ||y_i - P y_i||^2 / sum_i ||y_i||^2``.
    """
    sw = np.sqrt(quadrature_weights(grid, domain))
    phi = dic.evaluate(grid) * sw[:, None]
    coef, *_ = np.linalg.lstsq(phi, (Yc * sw).T, rcond=None)
    resid = (Yc * sw).T - phi @ coef
    return float(np.sum(resid**2) / np.sum((Yc * sw) ** 2))


def load(dataset: str, run: int) -> tuple[xr.DataArray, xr.DataArray, xr.DataArray, xr.DataArray, float]:
    """Training and test inputs/outputs and the kernel scale for one run."""
    if dataset == "toy":
        from fdakpl.datasets import make_toy

        ds = make_toy(200, random_state=run)
        tr, te = ds.isel(sample=slice(0, 100)), ds.isel(sample=slice(100, None))
        return tr.x, tr.y, te.x, te.y, paper_gaussian_sigma(20.0, ds.sizes["zeta"], length=5.0)
    from .dti_table1 import _x, _y, load_data

    data = load_data()
    tr, te = random_splits(100, 70, run + 1, seed=0)[run]
    return _x(data, tr), _y(data, tr), _x(data, te), _y(data, te), paper_gaussian_sigma(0.9, 93)


def run_task(args: tuple[str, int, str, dict[str, Any]]) -> list[dict[str, Any]]:
    dataset, run, family, s = args
    Xtr, Ytr, Xte, Yte, sigma = load(dataset, run)
    grid = Ytr[Ytr.dims[1]].values
    domain = (float(grid[0]), float(grid[-1]))
    mean = np.nanmean(Ytr.values, axis=0)
    full = ~np.isnan(Yte.values).any(axis=1)
    rows = []
    for size in s["sizes"][family]:
        proto = make_dict(family, size, s, seed=run)
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            dic = proto.unfitted_copy().fit(Observations.from_dense(Ytr.values - mean, grid), domain=domain)
        t_dict = time.perf_counter() - t0
        rep = representation_error(dic, Yte.values[full] - mean, grid, domain)
        spec = {"configs": [{}], "lams": s["lams"], "path": "ridge",
                "make": lambda c, lam, proto=proto: KPLRegressor(proto, Gaussian(sigma), None, lam=lam, solver="eig")}
        cv = cross_validate(spec, Xtr, Ytr, s["n_folds"], seed=run)
        model, t_fit = fit_best(spec, cv, Xtr, Ytr)
        errs = curve_errors(Yte.values, np.asarray(model.predict(Xte), dtype=float))
        rows.append({"dataset": dataset, "run": run, "family": family, "size": size,
                     "n_atoms": int(model.dictionary_.n_atoms_), "representation_error": rep,
                     "test_mse": errs["mean_of_means"] if dataset == "toy" else errs["mean_of_sums"],
                     **{f"test_{k}": v for k, v in errs.items()}, "lam": cv["lam"],
                     "lam_at_grid_edge": cv["lam_at_grid_edge"], "time_dictionary_s": t_dict,
                     "time_kpl_cv_s": cv["time_cv_s"], "time_kpl_fit_s": t_fit})
    return rows


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for dataset in ("toy", "dti"):
        out[dataset] = {}
        for fam in FAMILIES:
            rs = [r for r in rows if r["dataset"] == dataset and r["family"] == fam]
            sizes = sorted({r["size"] for r in rs})
            agg = {k: [] for k in ("n_atoms", "representation_error", "test_mse", "test_mse_std",
                                   "time_dictionary_s", "time_kpl_cv_s", "time_kpl_fit_s")}
            for size in sizes:
                sel = [r for r in rs if r["size"] == size]
                agg["n_atoms"].append(float(np.mean([r["n_atoms"] for r in sel])))
                for k in ("representation_error", "test_mse", "time_dictionary_s", "time_kpl_cv_s", "time_kpl_fit_s"):
                    agg[k].append(float(np.mean([r[k] for r in sel])))
                agg["test_mse_std"].append(float(np.std([r["test_mse"] for r in sel])))
            out[dataset][fam] = {"sizes": sizes, **agg}
    return out


def figure(summary: dict[str, Any], path: Any) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    colors = dict(zip(FAMILIES, ("tab:blue", "tab:orange", "tab:green", "tab:purple"), strict=True))
    fig, axes = plt.subplots(2, 3, figsize=(13, 6.5))
    for row, dataset in enumerate(("toy", "dti")):
        for fam in FAMILIES:
            d = summary[dataset].get(fam)
            if not d or not d["sizes"]:
                continue
            kw = dict(color=colors[fam], marker="o", ms=3.5, lw=1.3, label=fam)
            axes[row, 0].plot(d["n_atoms"], np.maximum(d["representation_error"], 1e-6), **kw)
            axes[row, 1].plot(d["n_atoms"], d["test_mse"], **kw)
            axes[row, 2].plot(d["n_atoms"], np.add(d["time_dictionary_s"], d["time_kpl_fit_s"]), **kw)
        name = "toy data" if dataset == "toy" else "DTI"
        axes[row, 0].set_ylabel(f"{name}\nrelative representation error\n(floored at 1e-6)")
        axes[row, 0].set_yscale("log")
        axes[row, 1].set_ylabel("ridge-KPL test MSE" + (" (sum over points)" if dataset == "dti" else ""))
        axes[row, 1].set_yscale("log")
        axes[row, 2].set_ylabel("fit time (dictionary + KPL), s")
        axes[row, 2].set_yscale("log")
        for ax in axes[row]:
            ax.set_xscale("log")
            ax.grid(alpha=0.3, which="both", lw=0.5)
    for ax in axes[1]:
        ax.set_xlabel("number of atoms")
    axes[0, 0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=150)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m experiments.dictionaries", description=__doc__.splitlines()[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_true")
    mode.add_argument("--full", action="store_true")
    parser.add_argument("--settings", choices=["full", "quick", "tiny"], default=None)
    parser.add_argument("--datasets", nargs="+", default=["toy", "dti"], choices=["toy", "dti"])
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--name", default=None)
    args = parser.parse_args(argv)
    kind = args.settings or ("full" if args.full else "quick")
    s = settings(kind)
    tasks = [(d, run, fam, s) for d in args.datasets for run in range(s["runs"][d]) for fam in FAMILIES]
    t0 = time.perf_counter()
    info0 = machine()
    rows = [r for res in parallel_map(run_task, tasks, n_jobs=args.n_jobs, desc="dictionaries") for r in res]
    elapsed = time.perf_counter() - t0
    summary = summarise(rows)
    name = args.name or ("dictionaries" if kind == "full" else f"dictionaries_{kind}")
    path = write_json(name, {"experiment": "dictionaries", "settings": s, "summary": summary, "runs": rows,
                             "wall_time_s": elapsed, "machine_start": info0, "machine_end": machine(),
                             "command": "python -m experiments.dictionaries " + " ".join(argv or [])})
    figure(summary, path.with_suffix(".png"))
    print(f"dictionaries ({kind}, {elapsed:.0f} s; results in {path})")
    for dataset in args.datasets:
        for fam in FAMILIES:
            d = summary[dataset][fam]
            print(f"{dataset:>4} {fam:<15} atoms " + " ".join(f"{a:5.0f}" for a in d["n_atoms"]))
            print(f"{'':>4} {'':<15} repr. " + " ".join(f"{a:5.3f}" for a in d["representation_error"]))
            print(f"{'':>4} {'':<15} MSE   " + " ".join(f"{a:5.3f}" for a in d["test_mse"]))
            fit = np.add(d["time_dictionary_s"], d["time_kpl_fit_s"])
            print(f"{'':>4} {'':<15} fit s " + " ".join(f"{a:5.2f}" for a in fit))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
