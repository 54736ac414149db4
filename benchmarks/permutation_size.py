"""Size of the permutation tests (issue 25): under the null, are the p-values uniform?

Simulated data sets where the inputs are unrelated to the responses; each is fitted with fixed kernels,
dictionary and lambda (so that a fit is fast and nothing is tuned), and ``permutation_test`` is run on
each input. Settings:

* ``iid``: one curve per subject (no groups): curves permuted, leave-one-curve-out statistic;
* ``groups_curve``: ``--size`` curves per subject; the input curve ``x`` is subject-level plus a
  visit-level part, the response a subject-level curve plus noise, independent of ``x``; fitted with
  ``groups=`` (leave-one-group-out, whole groups permuted);
* ``groups_scalar``: the same data, the subject-level scalar ``z`` (constant within subjects) with
  ``groups=`` (group-level values permuted);
* ``ignoring_groups``: the same grouped data fitted without ``groups=`` (leave-one-curve-out, single
  curves permuted): the scheme of fdakpl <= 560ccb8, for comparison.

For each setting: the Kolmogorov-Smirnov distance of the p-values from U(0, 1) and its p-value (the
p-values are discrete, on k / (B + 1); with B = 99 that moves the KS distance by at most 0.01), and
the rejection rates at 0.05 and 0.10 with their binomial standard errors.

Run: ``python benchmarks/permutation_size.py [--reps 200] [--perms 99]`` (about a minute per 100
reps and setting on one core); writes ``benchmarks/results/permutation_size.json``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import xarray as xr
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _results import write_results

from fdakpl import FunctionalRegression, Gaussian
from fdakpl.dictionaries import Fourier

OUT = Path(__file__).resolve().parent / "results" / "permutation_size.json"


def smooth_curves(rng: np.random.Generator, n: int, grid: np.ndarray, k: int = 4) -> np.ndarray:
    """``n`` smooth random curves on ``grid`` (random Fourier coefficients decaying as 1/j)."""
    out = rng.normal(size=(n, 1)) * np.ones(grid.size)
    for j in range(1, k + 1):
        a, b = rng.normal(size=(2, n, 1)) / j
        out = out + a * np.sin(2 * np.pi * j * grid) + b * np.cos(2 * np.pi * j * grid)
    return out


def simulate(seed: int, n_subjects: int, size: int) -> xr.Dataset:
    """Null data: ``n_subjects`` subjects with ``size`` curves each; inputs independent of the responses.

    ``x`` = subject curve + 0.5 visit curve; ``z`` = subject-level scalar; ``y`` = another, independent
    subject curve + 0.3 noise (so curves of one subject resemble each other in both ``x`` and ``y``).
    """
    rng = np.random.default_rng(seed)
    s_in, s_out = np.linspace(0, 1, 20), np.linspace(0, 1, 15)
    subject = np.repeat(np.arange(n_subjects), size)
    x = smooth_curves(rng, n_subjects, s_in)[subject] + 0.5 * smooth_curves(rng, subject.size, s_in)
    z = rng.normal(size=n_subjects)[subject]
    y = smooth_curves(rng, n_subjects, s_out)[subject] + 0.3 * rng.normal(size=(subject.size, s_out.size))
    return xr.Dataset({"x": (("sample", "s"), x), "y": (("sample", "t"), y), "z": ("sample", z),
                       "subject": ("sample", subject)},
                      coords={"sample": np.arange(subject.size), "s": s_in, "t": s_out})


def pvalues(ds: xr.Dataset, groups: bool, perms: int, seed: int) -> dict[str, float]:
    """The permutation p-values of ``x`` and ``z`` at fixed kernels and lambda."""
    res = FunctionalRegression("y ~ x + z", ds, kernels={"x": Gaussian(4.0), "scalars": Gaussian(2.0)},
                               dictionary=Fourier(5), lam=1e-2, width_grid=None, b_grid=None,
                               groups="subject" if groups else None, progress=False).fit()
    out = {}
    for term in ("x", "z"):
        t = res.permutation_test(term, n_permutations=perms, random_state=seed, progress=False)
        out[term] = t.pvalue
        out[f"{term}_scheme"] = t.scheme
    return out


def summarise(p: np.ndarray, perms: int) -> dict[str, float]:
    """KS distance and p-value against U(0, 1), rejection rates at 0.05 and 0.10 (with standard errors)."""
    ks = stats.kstest(p, "uniform")
    n = p.size
    out = {"reps": int(n), "ks_distance": float(ks.statistic), "ks_pvalue": float(ks.pvalue),
           "smallest_p": float(p.min()), "floor": 1.0 / (perms + 1),
           "share_at_floor": float(np.mean(p <= 1.0 / (perms + 1) + 1e-12))}
    for a in (0.05, 0.10):
        r = float(np.mean(p <= a + 1e-12))
        out[f"reject_{a:.2f}"] = r
        out[f"reject_{a:.2f}_se"] = float(np.sqrt(a * (1 - a) / n))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--perms", type=int, default=99)
    ap.add_argument("--subjects", type=int, default=12)
    ap.add_argument("--size", type=int, default=3)
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    t0 = time.perf_counter()
    rows: dict[str, list[float]] = {k: [] for k in ("iid_x", "iid_z", "groups_curve", "groups_scalar",
                                                   "ignoring_groups_x", "ignoring_groups_z")}
    schemes: dict[str, str] = {}
    for rep in range(args.reps):
        iid = simulate(10_000 + rep, args.subjects * args.size, 1)
        grouped = simulate(rep, args.subjects, args.size)
        a = pvalues(iid, False, args.perms, rep)
        b = pvalues(grouped, True, args.perms, rep)
        c = pvalues(grouped, False, args.perms, rep)
        rows["iid_x"].append(a["x"])
        rows["iid_z"].append(a["z"])
        rows["groups_curve"].append(b["x"])
        rows["groups_scalar"].append(b["z"])
        rows["ignoring_groups_x"].append(c["x"])
        rows["ignoring_groups_z"].append(c["z"])
        schemes.update({"iid_x": a["x_scheme"], "groups_curve": b["x_scheme"], "groups_scalar": b["z_scheme"],
                        "ignoring_groups_x": c["x_scheme"]})
    res = {
        "what": "null p-values of permutation_test (inputs unrelated to the responses); KS against U(0,1)",
        "settings": {"reps": args.reps, "n_permutations": args.perms, "subjects": args.subjects,
                     "curves_per_subject": args.size, "curves_iid": args.subjects * args.size,
                     "fit": "y ~ x + z, Gaussian(4) on x, Gaussian(2) on z, Fourier(5) dictionary (11 atoms), "
                            "lam=1e-2, no tuning"},
        "schemes": schemes,
        "results": {k: summarise(np.array(v), args.perms) for k, v in rows.items()},
        "seconds": time.perf_counter() - t0,
    }
    write_results(args.out, res)


if __name__ == "__main__":
    main()
