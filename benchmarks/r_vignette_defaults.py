"""Which settings should the R vignette use? Held-out error of its models on the DTI first visits.

The R vignette (``r-bridge/vignettes/fdakpl.Rmd``) fits ``rcst ~ cca`` and ``rcst ~ cca + factor(sex)``
on 70 of the 100 first visits of the multiple-sclerosis cases and predicts the other 30. Until issue 27
it chose lambda by pointwise GCV (``lambda = "gcv"``), which ``?kpl`` calls undersmoothing. This script
compares, on the same random 70/30 splits (paired), the held-out RMSE over observed points of

* ``cca_db3_gcv``: ``rcst ~ cca``, dictionary db3 with 4 levels, lambda by GCV (the old vignette);
* ``cca_db3_loo``: the same with the default criterion, exact leave-one-curve-out (``"loo"``);
* ``cca_default``: ``rcst ~ cca`` with every default (dictionary, widths, b and lambda by LOO);
* ``cca_sex_gcv`` / ``cca_sex_default``: ``rcst ~ cca + factor(sex)`` with GCV / with every default;
* ``mean_curve``: the training mean curve (the baseline the vignette prints).

The R package fits exactly what ``FunctionalRegression`` fits (``tests/testthat/test-kpl.R``: R and
Python agree to 1e-10), so the fits run here in Python, one BLAS thread each.

Usage::

    python benchmarks/r_vignette_defaults.py [--splits 20]   # a few minutes; writes results/r_vignette_defaults.json
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
from _results import write_results
from threadpoolctl import threadpool_limits

from fdakpl import FunctionalRegression, datasets

HERE = Path(__file__).parent
MODELS = {
    "cca_db3_gcv": ("rcst ~ cca", {"dictionary": "db3", "level": 4, "lam": "gcv"}),
    "cca_db3_loo": ("rcst ~ cca", {"dictionary": "db3", "level": 4}),
    "cca_default": ("rcst ~ cca", {}),
    "cca_sex_gcv": ("rcst ~ cca + C(sex)", {"lam": "gcv"}),
    "cca_sex_default": ("rcst ~ cca + C(sex)", {}),
}
PAIRS = [("cca_db3_loo", "cca_db3_gcv"), ("cca_default", "cca_db3_gcv"), ("cca_default", "cca_db3_loo"),
         ("cca_sex_default", "cca_sex_gcv"), ("cca_default", "mean_curve"), ("cca_sex_default", "mean_curve")]


def rmse(pred: np.ndarray, obs: np.ndarray) -> float:
    return float(np.sqrt(np.nanmean((pred - obs) ** 2)))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--splits", type=int, default=20)
    ap.add_argument("--out", type=Path, default=HERE / "results" / "r_vignette_defaults.json")
    args = ap.parse_args()
    ds = datasets.dti_first_visits()
    n = ds.sizes["sample"]
    errors: dict[str, list[float]] = {k: [] for k in [*MODELS, "mean_curve"]}
    t0 = time.perf_counter()
    with threadpool_limits(1):
        for seed in range(args.splits):
            perm = np.random.default_rng(seed).permutation(n)
            train, test = ds.isel(sample=np.sort(perm[:70])), ds.isel(sample=np.sort(perm[70:]))
            obs = test.rcst.values
            errors["mean_curve"].append(rmse(np.nanmean(train.rcst.values, axis=0)[None, :], obs))
            for name, (formula, kw) in MODELS.items():
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")  # grid-edge notices: the held-out error is what is compared
                    res = FunctionalRegression(formula, train, interpolate_inputs=True, progress=False, **kw).fit()
                    errors[name].append(rmse(res.predict(test).values, obs))
    summary = {k: {"mean": float(np.mean(v)), "sd": float(np.std(v, ddof=1))} for k, v in errors.items()}
    paired = {}
    for a, b in PAIRS:
        diff = np.asarray(errors[a]) - np.asarray(errors[b])
        paired[f"{a} - {b}"] = {"mean": float(diff.mean()), "se": float(diff.std(ddof=1) / np.sqrt(diff.size)),
                                 "a_better_splits": int(np.sum(diff < 0)), "splits": int(diff.size)}
    write_results(args.out, {
        "what": "held-out RMSE (observed points) of the R vignette's models, DTI first visits, 70/30 splits",
        "splits": args.splits, "seconds": time.perf_counter() - t0, "rmse": summary, "paired": paired,
        "per_split": errors,
    })


if __name__ == "__main__":
    main()
