"""One-lambda exact fit: eigendecomposition route vs the single-lambda route (issue 15, item 3).

Writes ``benchmarks/results/single_lambda.json``. Run: ``python benchmarks/bench_single_lambda.py [max_n]
[--outputs identity,decay] [--max-eig-n N]``.

Synthetic problem of ``benchmarks/bench_closed_form.synthetic`` (5 scalar inputs, 100 locations, 30% of the
points missing), Fourier(10) (21 atoms), Gaussian kernel, ``lam = 1e-3``, two output matrices: ``B = I`` (the
single-lambda route is one Cholesky factorisation) and ``B = 1.5^-scale`` (11 distinct eigenvalues: one
tridiagonal reduction). Timed at the solver level (kernel matrix, projections and dictionary given):
``decompose + ridge_coef`` against ``ridge_single``, interleaved on one BLAS thread (``_timing.compare``: 5
repetitions up to n = 2000; above, one timing of each, ``repeat = 1``: the eigendecomposition at n = 10,000
takes minutes on one thread; ``--max-eig-n`` times only the single-lambda route above N). The two routes'
coefficients are compared (relative max difference). Rows of earlier runs are kept (the sweep can be run in
pieces).
"""

from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from _timing import compare, machine
from bench_closed_form import synthetic

from fdakpl import Gaussian, KPLRegressor
from fdakpl.dictionaries import Fourier
from fdakpl.solvers.closed_form import decompose, ridge_coef, ridge_single

OUT = Path(__file__).parent / "results" / "single_lambda.json"
LAM = 1e-3


def problem(n: int, b):
    X, Y, grid = synthetic(n, 100, np.random.default_rng(n))
    m = KPLRegressor(dictionary=Fourier(10), kernel=Gaussian(2.0), output_matrix=b, lam=LAM, solver="eig",
                     memory_limit="inf")
    m.fit(X[:2], Y[:2], locations=grid)  # dictionary, Gram, B only
    dic = m.dictionary_
    from fdakpl.data.integration import integration_weights
    from fdakpl.data.preprocessing import center_responses, prepare_response
    from fdakpl.solvers.closed_form import project_observations

    obs, info = prepare_response(Y, grid, None)
    _, obs_c = center_responses(obs, info.domain)
    w, _ = integration_weights(obs_c, info.domain)
    N = project_observations(obs_c, dic.evaluate(grid), w)
    K = Gaussian(2.0)(X)
    return K, dic.gram(), m.B_, N


def once(commands) -> dict:
    """One interleaved timing of each command (the eigendecomposition at n = 10,000 takes minutes)."""
    import os
    import time

    from threadpoolctl import threadpool_limits

    before, out = list(os.getloadavg()), {}
    with threadpool_limits(1):
        for name, f in commands.items():
            t0 = time.perf_counter()
            f()
            ms = (time.perf_counter() - t0) * 1e3
            out[name] = {"min_ms": ms, "median_ms": ms}
    return {"times": out, "repeat": 1, "loadavg_before": before, "loadavg_after": list(os.getloadavg())}


def main() -> None:
    warnings.simplefilter("ignore")
    import argparse

    ap = argparse.ArgumentParser()
    ap.add_argument("max_n", type=int, nargs="?", default=10_000)
    ap.add_argument("--min-n", type=int, default=0)
    ap.add_argument("--outputs", default="identity,decay", help="which B: identity, decay (1.5^-scale)")
    ap.add_argument("--max-eig-n", type=int, default=10_000,
                    help="above this n only the single-lambda route is timed (the eigendecomposition takes minutes)")
    args = ap.parse_args()
    sizes = [n for n in (100, 250, 500, 1000, 2000, 5000, 10_000) if args.min_n <= n <= args.max_n]
    # rows of earlier runs are kept (the sweep can be run in pieces); a row is replaced by a new one
    old = json.loads(OUT.read_text()) if OUT.exists() else {}
    res: dict = {"machine_at_start": machine(), "lam": LAM, "n_locations": 100, "n_atoms": 21,
                 "runs": old.get("runs", [])}
    for b, label in [(None, "B=I"), (1.5, "B=1.5^-scale")]:
        if ("identity" if b is None else "decay") not in args.outputs.split(","):
            continue
        for n in sizes:
            K, G, B, N = problem(n, b)
            with_eig = n <= args.max_eig_n
            A1, route = ridge_single(K, G, B, N, LAM)
            cmds = {"single": lambda K=K, G=G, B=B, N=N: ridge_single(K, G, B, N, LAM)}
            rel = None
            if with_eig:
                A0 = ridge_coef(decompose(K, G, B, N), LAM)
                rel = float(np.abs(A1 - A0).max() / np.abs(A0).max())
                cmds["eig"] = lambda K=K, G=G, B=B, N=N: ridge_coef(decompose(K, G, B, N), LAM)
            t = compare(cmds, repeat=5, warmup=0 if n >= 2000 else 1) if n <= 2000 else once(cmds)
            ts = t["times"]
            row = {"B": label, "n": n, "route": route, "relative_max_difference": rel,
                   "eig_min_s": ts["eig"]["min_ms"] / 1e3 if with_eig else None,
                   "single_min_s": ts["single"]["min_ms"] / 1e3,
                   "speedup_min": ts["eig"]["min_ms"] / ts["single"]["min_ms"] if with_eig else None,
                   "speedup_median": ts["eig"]["median_ms"] / ts["single"]["median_ms"] if with_eig else None,
                   "repeat": t["repeat"], "loadavg_before": t["loadavg_before"], "loadavg_after": t["loadavg_after"]}
            res["runs"] = [r for r in res["runs"] if (r["B"], r["n"]) != (label, n)] + [row]
            print(json.dumps(row), flush=True)
            OUT.parent.mkdir(exist_ok=True)
            OUT.write_text(json.dumps({**res, "machine_at_end": machine()}, indent=2))


if __name__ == "__main__":
    main()
