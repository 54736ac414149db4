"""One-lambda exact fit: eigendecomposition route vs the single-lambda route (issue 15, item 3).

Writes ``benchmarks/results/single_lambda.json``. Run: ``python benchmarks/bench_single_lambda.py [max_n]
[--min-n N] [--outputs identity,decay] [--max-eig-n N] [--drivers N]`` (``--drivers 2000``: SciPy's eigen-solver
drivers against a Cholesky factorisation at that size, ``eigh_drivers`` in the JSON).

Synthetic problem of ``benchmarks/bench_closed_form.synthetic`` (5 scalar inputs, 100 locations, 30% of the
points missing), Fourier(10) (21 atoms), Gaussian kernel, ``lam = 1e-3``, two output matrices: ``B = I`` (one
distinct eigenvalue of ``B^1/2 G B^1/2``: the single-lambda route is one Cholesky factorisation) and
``B = 1.5^-scale`` (11 distinct eigenvalues, a span of 1.5^10 = 58 between the shifts ``n lam / e_l``: the
planner of :mod:`fdakpl.solvers.shifted` factorises once and solves the other shifts by preconditioned
conjugate gradients). Timed at the solver level (kernel matrix, projections and dictionary given):
``decompose + ridge_coef`` ("eig", the route of every fit before the single-lambda route) against
``ridge_single`` ("single"), and for ``B = 1.5^-scale`` the previous single-lambda route, one tridiagonal
reduction ("tridiagonal", forced through the plan), interleaved on one BLAS thread (``_timing.compare``: 5
repetitions up to n = 2000; above, one timing of each, ``repeat = 1``: the eigendecomposition at n = 10,000
takes minutes on one thread; ``--max-eig-n`` times only the single-lambda route above N). The coefficients of
every route are compared with the eigendecomposition's (relative max difference). Rows of earlier runs are
kept (the sweep can be run in pieces); a row measured again moves to ``replaced_runs`` (the spread between
runs is the machine's noise); each row carries the load average before and after.
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
from fdakpl.solvers import shifted
from fdakpl.solvers.closed_form import decompose, output_side, ridge_coef, ridge_single

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


def plan_of(K, G, B, N) -> dict:
    """The planner's choice for this problem (as ``ridge_single`` makes it)."""
    n = K.shape[0]
    e = output_side(G, B)[2]
    shifts = np.sort(n * LAM / e[e > 1e-14 * e.max()])
    cols = np.split(shifts, np.nonzero(np.diff(shifts) > 1e-12 * shifts[1:])[0] + 1)  # as solve_shifted
    t, counts = np.array([c.mean() for c in cols]), np.array([c.size for c in cols])
    plan = shifted.plan_shifts(t, counts, n, float(np.abs(K).sum(axis=1).max()))
    return {"distinct_shifts": int(t.size), "factorisations": sum(a is not None for a in plan.anchors),
            "groups": [int(g.size) for g in plan.groups], "modelled_cost_in_factorisations": plan.cost}


def tridiagonal(K, G, B, N):
    """The previous single-lambda route for many distinct eigenvalues: one reduction to tridiagonal form."""
    real = shifted.plan_shifts
    shifted.plan_shifts = lambda t, *a, **k: shifted.ShiftPlan("tridiagonal", [], [np.arange(t.size)], 0.0)
    try:
        return ridge_single(K, G, B, N, LAM)
    finally:
        shifted.plan_shifts = real


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


def eigh_drivers(n: int, rounds: int = 3) -> dict:
    """LAPACK's symmetric eigen-solvers through SciPy at size ``n`` (``dsyevd``, ``dsyevr``, ``dsyev``; the
    eigenvalues alone, i.e. the tridiagonal reduction ``dsytrd`` and ``dsterf``), against one Cholesky
    factorisation, interleaved, ``rounds`` rounds, minimum times. SciPy 1.17 exposes no two-stage (BLAS-3)
    tridiagonal reduction (``dsytrd_2stage``, ``dsyevd_2stage``)."""
    import os
    import time

    import scipy.linalg as sla
    from threadpoolctl import threadpool_limits

    K = problem(n, None)[0]
    M = K + np.eye(n)
    cmds = {"cholesky": lambda: sla.cho_factor(M, lower=True, check_finite=False),
            "evd": lambda: sla.eigh(K, driver="evd", check_finite=False),
            "evr": lambda: sla.eigh(K, driver="evr", check_finite=False),
            "ev": lambda: sla.eigh(K, driver="ev", check_finite=False),
            "eigenvalues_only": lambda: sla.eigh(K, eigvals_only=True, driver="evd", check_finite=False)}
    best = {k: float("inf") for k in cmds}
    before = list(os.getloadavg())
    with threadpool_limits(1):
        for _ in range(rounds):
            for k, f in cmds.items():
                t0 = time.perf_counter()
                f()
                best[k] = min(best[k], time.perf_counter() - t0)
    return {"n": n, "rounds": rounds, "min_s": best,
            "in_cholesky_factorisations": {k: v / best["cholesky"] for k, v in best.items()},
            "loadavg_before": before, "loadavg_after": list(os.getloadavg())}


def main() -> None:
    warnings.simplefilter("ignore")
    import argparse

    ap = argparse.ArgumentParser()
    ap.add_argument("max_n", type=int, nargs="?", default=10_000)
    ap.add_argument("--min-n", type=int, default=0)
    ap.add_argument("--outputs", default="identity,decay", help="which B: identity, decay (1.5^-scale)")
    ap.add_argument("--max-eig-n", type=int, default=10_000,
                    help="above this n only the single-lambda route is timed (the eigendecomposition takes minutes)")
    ap.add_argument("--max-tridiagonal-n", type=int, default=5000,
                    help="above this n the previous (tridiagonal) route is not timed (93 s at n = 10,000)")
    ap.add_argument("--drivers", type=int, default=0, help="also time the eigen-solvers at this n (0: no)")
    args = ap.parse_args()
    sizes = [n for n in (100, 250, 500, 1000, 2000, 5000, 10_000) if args.min_n <= n <= args.max_n]
    # rows of earlier runs are kept (the sweep can be run in pieces); a row is replaced by a new one
    old = json.loads(OUT.read_text()) if OUT.exists() else {}
    res: dict = {"machine_at_start": machine(), "lam": LAM, "n_locations": 100, "n_atoms": 21,
                 "runs": old.get("runs", []), "replaced_runs": old.get("replaced_runs", [])}
    if old.get("eigh_drivers"):
        res["eigh_drivers"] = old["eigh_drivers"]
    if args.drivers:
        res["eigh_drivers"] = eigh_drivers(args.drivers)
        print(json.dumps(res["eigh_drivers"]), flush=True)
        OUT.write_text(json.dumps({**res, "machine_at_end": machine()}, indent=2))
    for b, label in [(None, "B=I"), (1.5, "B=1.5^-scale")]:
        if ("identity" if b is None else "decay") not in args.outputs.split(","):
            continue
        for n in sizes:
            K, G, B, N = problem(n, b)
            with_eig = n <= args.max_eig_n
            got: dict = {}  # each command keeps its coefficients (the eigendecomposition is timed once only)

            def keep(name, f, K=K, G=G, B=B, N=N, got=got):
                def run():
                    got[name] = f(K, G, B, N)
                return run

            cmds = {"single": keep("single", lambda K, G, B, N: ridge_single(K, G, B, N, LAM))}
            if with_eig:
                cmds["eig"] = keep("eig", lambda K, G, B, N: ridge_coef(decompose(K, G, B, N), LAM))
            with_tri = b is not None and n <= args.max_tridiagonal_n
            if with_tri:
                cmds["tridiagonal"] = keep("tridiagonal", lambda K, G, B, N: tridiagonal(K, G, B, N)[0])
            t = compare(cmds, repeat=5, warmup=0 if n >= 2000 else 1) if n <= 2000 else once(cmds)
            ts = t["times"]

            coef_single, route = got.pop("single")
            got["single"] = coef_single

            def rel(name, got=got):
                if name not in got or "eig" not in got:
                    return None
                return float(np.abs(got[name] - got["eig"]).max() / np.abs(got["eig"]).max())

            def s_(name, ts=ts):
                return ts[name]["min_ms"] / 1e3 if name in ts else None

            def ratio(num, stat="min_ms", ts=ts):
                return ts[num][stat] / ts["single"][stat] if num in ts else None

            row = {"B": label, "n": n, "route": route, **plan_of(K, G, B, N),
                   "relative_max_difference": rel("single"),
                   "tridiagonal_relative_max_difference": rel("tridiagonal"),
                   "eig_min_s": s_("eig"), "single_min_s": s_("single"), "tridiagonal_min_s": s_("tridiagonal"),
                   "speedup_min": ratio("eig"), "speedup_median": ratio("eig", "median_ms"),
                   "speedup_over_tridiagonal_min": ratio("tridiagonal"),
                   "repeat": t["repeat"], "loadavg_before": t["loadavg_before"], "loadavg_after": t["loadavg_after"]}
            res["replaced_runs"] += [r for r in res["runs"] if (r["B"], r["n"]) == (label, n)]  # kept: noise
            res["runs"] = [r for r in res["runs"] if (r["B"], r["n"]) != (label, n)] + [row]
            print(json.dumps(row), flush=True)
            OUT.parent.mkdir(exist_ok=True)
            OUT.write_text(json.dumps({**res, "machine_at_end": machine()}, indent=2))


if __name__ == "__main__":
    main()
