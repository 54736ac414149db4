"""Excess-risk bounds of section 5, recomputed from the supplement's own inequalities (independently of the code).

The supplement (``../shared/papers/000_495220e2f178c59c.txt``, section E) proves both propositions
through an intermediate inequality in the concentration radii delta_1, delta_2, delta_3. The
helpers below retype those definitions; they share no code with ``fdakpl.diagnostics.bounds``.
"""

import math
import warnings

import numpy as np
import pandas as pd
import pytest
import xarray as xr

from fdakpl import FunctionalRegression, Gaussian, IntegralGaussian, datasets
from fdakpl.diagnostics.bounds import (
    excess_risk_bound,
    feasible_n,
    kernel_kappa,
    lambda_star,
    required_m,
    required_n,
)
from fdakpl.dictionaries import Fourier


def _flat(summary) -> str:
    """The summary's text with its line wrapping undone (it wraps at 80 characters)."""
    return " ".join(str(summary).split())


# ----------------------------------------------------------------------------- the supplement, retyped

def delta1(n, eta, kappa, C, L, R):  # Lemma "concentration result 1", eq. (def delta1)
    return 6 * (np.sqrt(kappa) * C * L + kappa * C**2 * R) * np.log(2 / eta) / np.sqrt(n)


def delta2(n, d, eta, kappa, C):  # Lemma "concentration result 2", eq. (def delta2)
    return 6 * kappa * C**2 * np.log(2 / eta) * np.sqrt(d) / np.sqrt(n)


def delta3(n, m, d, eta, kappa, C, L, R, M, step="L"):
    """Lemma "concentration result 3". The supplement bounds ||K_x Phi^# y||_H by sqrt(kappa) C R
    (``step="R"``); the bound that follows from ||K_x|| <= sqrt(kappa), ||Phi^#|| <= C, ||y|| <= L
    is sqrt(kappa) C L (``step="L"``)."""
    b = L if step == "L" else R
    A0 = 4 * (L * np.sqrt(kappa) * np.sqrt(d) * M + np.sqrt(kappa) * C * b)
    A1 = 2 * L * np.sqrt(kappa) * np.sqrt(d) * M
    return (A0 / m + A1 / (np.sqrt(n) * np.sqrt(m))) * np.log(2 / eta)


def intermediate_5_1(n, d, lam, eta, kappa, C, L, R):  # Prop. "intermediate bound with lambda"
    assert lam >= delta2(n, d, eta / 2, kappa, C) * (1 - 1e-12)
    return 9 / 2 * (delta1(n, eta / 2, kappa, C, L, R) ** 2 / lam + R**2 * lam)


def intermediate_5_2(n, m, d, lam, eta, kappa, C, L, R, M, step="L"):  # Prop. "intermediate bound partial"
    assert lam >= delta2(n, d, eta / 3, kappa, C) * (1 - 1e-12)
    return 27 / 4 * (delta3(n, m, d, eta / 3, kappa, C, L, R, M, step) ** 2 / lam
                     + delta1(n, eta / 3, kappa, C, L, R) ** 2 / lam + R**2 * lam)


def printed_5_2(n, m, d, eta, kappa, C, L, R, M):  # the closed form printed in Proposition 5.2
    B0 = (L + np.sqrt(kappa) * C * R) ** 2
    B1 = kappa * C**2 * R**2
    Cd = L * M / C
    B2 = 18 * np.sqrt(d) * (Cd + R / np.sqrt(d)) ** 2
    B3 = B2 - 18 * R**2 / np.sqrt(d)
    B4 = 81 / 2 * (B0 / np.sqrt(d) + B1 * np.sqrt(d))
    return (B2 * np.sqrt(n) / m**2 + B3 / m**1.5 + 9 * Cd**2 / (2 * np.sqrt(n) * m) + B4 / np.sqrt(n)) \
        * np.log(6 / eta)


def lam_star(n, d, eta, kappa, C, partial):  # the lambda* of the propositions = delta_2 at eta/2 or eta/3
    return delta2(n, d, eta / (3 if partial else 2), kappa, C)


ISSUE = dict(kappa=1.0, C=1.0089, L=0.624, R=0.126, M=5.984)  # issue 18's DTI example, n=100, d=74, m=43


# ----------------------------------------------------------------------------- item 1: the bound of 5.2
def test_issue_example_printed_vs_intermediate():
    n, d, m, eta = 100, 74, 43, 0.05
    lam = lam_star(n, d, eta, ISSUE["kappa"], ISSUE["C"], True)
    assert printed_5_2(n, m, d, eta, **ISSUE) == pytest.approx(96.30, abs=0.01)
    assert intermediate_5_2(n, m, d, lam, eta, **ISSUE, step="R") == pytest.approx(101.38, abs=0.01)
    assert intermediate_5_2(n, m, d, lam, eta, **ISSUE, step="L") == pytest.approx(103.68, abs=0.01)
    b = excess_risk_bound(n, d, kappa=1.0, C_phi=1.0089, L=0.624, R=0.126, m=m, M=5.984, eta=eta)
    assert b.bound == pytest.approx(intermediate_5_2(n, m, d, lam, eta, **ISSUE), rel=1e-12)
    assert b.printed == pytest.approx(printed_5_2(n, m, d, eta, **ISSUE), rel=1e-12)
    assert b.lam == b.lam_star == pytest.approx(lam, rel=1e-12)


@pytest.mark.parametrize("seed", range(5))
def test_bound_is_the_intermediate_inequality(seed):
    r = np.random.default_rng(seed)
    kappa, C, L, R, M = r.uniform(0.2, 3, size=5)
    n, m, d, eta = int(r.integers(5, 5000)), float(r.integers(1, 300)), int(r.integers(1, 200)), r.uniform(0.01, 0.5)
    for partial in (False, True):
        lam = lam_star(n, d, eta, kappa, C, partial)
        for factor in (1.0, 3.7):
            got = excess_risk_bound(n, d, kappa=kappa, C_phi=C, L=L, R=R, m=m if partial else None, M=M, eta=eta,
                                    lam=lam * factor)
            want = (intermediate_5_2(n, m, d, lam * factor, eta, kappa, C, L, R, M) if partial
                    else intermediate_5_1(n, d, lam * factor, eta, kappa, C, L, R))
            assert got.bound == pytest.approx(want, rel=1e-12)
        if partial:  # at lambda* the expansion's terms add up to the inequality
            at = excess_risk_bound(n, d, kappa=kappa, C_phi=C, L=L, R=R, m=m, M=M, eta=eta)
            assert sum(at.terms.values()) == pytest.approx(at.bound, rel=1e-12)
    with pytest.raises(ValueError, match="below lambda"):
        excess_risk_bound(n, d, kappa=kappa, C_phi=C, L=L, R=R, lam=0.5 * lam_star(n, d, eta, kappa, C, False))


def test_expansion_coefficients_recovered_from_the_inequality():
    """At lambda*, the inequality is l (a sqrt(n)/m^2 + c/m^1.5 + e/(sqrt(n) m) + f/sqrt(n)); solve for a, c, e, f
    from four evaluations and compare with the corrected closed form (the third term carries sqrt(d))."""
    d, eta, kappa, C, L, R, M = 9, 0.1, 2.0, 1.3, 0.7, 2.5, 1.9
    ell = np.log(6 / eta)
    pts = [(100, 5), (400, 20), (2500, 7), (90, 300)]
    A = np.array([[np.sqrt(n) / m**2, m**-1.5, 1 / (np.sqrt(n) * m), 1 / np.sqrt(n)] for n, m in pts]) * ell
    y = [intermediate_5_2(n, m, d, lam_star(n, d, eta, kappa, C, True), eta, kappa, C, L, R, M) for n, m in pts]
    a, c, e, f = np.linalg.solve(A, y)
    Cd = L * M / C
    assert a == pytest.approx(18 * np.sqrt(d) * (Cd + L / np.sqrt(d)) ** 2, rel=1e-8)
    assert c == pytest.approx(18 * np.sqrt(d) * Cd * (Cd + L / np.sqrt(d)), rel=1e-8)
    assert e == pytest.approx(9 * np.sqrt(d) * Cd**2 / 2, rel=1e-8)
    B0, B1 = (L + np.sqrt(kappa) * C * R) ** 2, kappa * C**2 * R**2
    assert f == pytest.approx(81 / 2 * (B0 / np.sqrt(d) + B1 * np.sqrt(d)), rel=1e-8)
    co = excess_risk_bound(100, d, kappa=kappa, C_phi=C, L=L, R=R, m=5, M=M, eta=eta).constants
    np.testing.assert_allclose([co["B2"], co["B3"], co["B5"], co["B4"]], [a, c, e, f], rtol=1e-8)


def test_proposition_5_1_as_printed_is_its_proof():
    for n, d, kappa, C, L, R in [(400, 9, 2.0, 1.5, 0.5, 3.0), (37, 120, 0.3, 1.0, 4.0, 0.01)]:
        B0, B1 = (L + np.sqrt(kappa) * C * R) ** 2, kappa * C**2 * R**2
        printed = 27 * (B0 / np.sqrt(d) + B1 * np.sqrt(d)) * np.log(4 / 0.05) / np.sqrt(n)
        lam = lam_star(n, d, 0.05, kappa, C, False)
        assert intermediate_5_1(n, d, lam, 0.05, kappa, C, L, R) == pytest.approx(printed, rel=1e-12)
        b = excess_risk_bound(n, d, kappa=kappa, C_phi=C, L=L, R=R)
        assert b.bound == pytest.approx(printed, rel=1e-12) and b.lam_star == pytest.approx(lam, rel=1e-12)
        assert lambda_star(n, d, kappa, C) == pytest.approx(lam, rel=1e-12)


def test_the_delta3_step_bounds_by_L_not_R():
    """||W||_H = ||y(t) K_x phi(t) - K_x Phi^# y||_H <= L sqrt(kappa d) M + sqrt(kappa) C L on random draws, while
    sqrt(kappa) C R (the supplement's) fails when Y does not depend on X (then h_H = 0 and R may be 0)."""
    r = np.random.default_rng(3)
    t = np.linspace(0, 1, 2001)
    w = np.full(t.size, 1 / (t.size - 1))
    w[[0, -1]] /= 2
    phi = Fourier(2).fit(domain=(0.0, 1.0)).evaluate(t) * np.array([1.0, 0.6, 1.4, 0.8, 1.1])  # not normed
    d = phi.shape[1]
    G = phi.T @ (w[:, None] * phi)
    C, M = np.sqrt(np.linalg.eigvalsh(G).max()), np.abs(phi).max()
    Q = r.normal(size=(d, d))
    B = Q @ Q.T + 0.1 * np.eye(d)
    kxx = 1.7  # k(x, x); ||K_x v||_H^2 = v^T K(x, x) v = kxx v^T B v
    kappa = kxx * np.linalg.eigvalsh(B).max()
    L, worst_ratio = 1.0, 0.0
    for _ in range(300):
        y = np.clip(np.cumsum(r.normal(size=t.size)) / 20, -1, 1) * r.uniform(0.2, 1)
        v_full = phi.T @ (w * y)  # Phi^# y
        j = r.integers(t.size)
        v = y[j] * phi[j] - v_full
        norm_W = np.sqrt(kxx * v @ B @ v)
        assert norm_W <= L * np.sqrt(kappa * d) * M + np.sqrt(kappa) * C * L + 1e-12
        worst_ratio = max(worst_ratio, np.sqrt(kxx * v_full @ B @ v_full) / (np.sqrt(kappa) * C * L))
    assert 0.05 < worst_ratio <= 1 + 1e-12  # ||K_x Phi^# y|| is of the order of sqrt(kappa) C L, and below it


@pytest.mark.parametrize("s", [0.1, 10.0])
def test_bound_is_invariant_to_rescaling_the_atoms(s):
    """Atoms phi -> s phi: C, M -> sC, sM and R -> R/s for the same predictor. The bound must not move."""
    n, d, m = 100, 74, 43
    base = dict(kappa=1.0, L=0.624, m=m)
    b1 = excess_risk_bound(n, d, C_phi=1.0089, R=0.126, M=5.984, **base)
    bs = excess_risk_bound(n, d, C_phi=1.0089 * s, R=0.126 / s, M=5.984 * s, **base)
    assert bs.bound == pytest.approx(b1.bound, rel=1e-12)
    assert bs.printed != pytest.approx(b1.printed, rel=1e-3)  # the printed closed form moves (102.9, 95.7)
    f1 = excess_risk_bound(n, d, kappa=1.0, C_phi=1.0089, L=0.624, R=0.126)
    fs = excess_risk_bound(n, d, kappa=1.0, C_phi=1.0089 * s, L=0.624, R=0.126 / s)
    assert fs.bound == pytest.approx(f1.bound, rel=1e-12)


# ----------------------------------------------------------------------------- item 4: planning
def test_required_n_finds_the_feasible_interval_of_issue_18():
    d, m, eta = 4, 50, 0.05
    ns = np.arange(1, 40_000)
    vals = np.array([intermediate_5_2(n, m, d, lam_star(n, d, eta, 1, 1, True), eta, 1, 1, 1, 1, 1) for n in ns])
    eps = 1.0001 * vals.min()
    inside = ns[vals <= eps]
    lo, hi = feasible_n(eps, d, kappa=1, C_phi=1, L=1, R=1, m=m, M=1, eta=eta)
    assert (lo, hi) == (inside.min(), inside.max())
    assert inside.size == hi - lo + 1  # an interval
    assert 4800 < lo < 4900 and 5100 < hi < 5200  # the issue's 4861-5149 is the printed formula's; here 4864-5151
    assert required_n(eps, d, kappa=1, C_phi=1, L=1, R=1, m=m, M=1, eta=eta) == lo
    assert required_n(0.999 * vals.min(), d, kappa=1, C_phi=1, L=1, R=1, m=m, M=1, eta=eta) == float("inf")


def test_required_n_fully_observed_and_required_m():
    b = excess_risk_bound(400, 9, kappa=2.0, C_phi=1.5, L=0.5, R=3.0)
    n = required_n(b.bound, 9, kappa=2.0, C_phi=1.5, L=0.5, R=3.0)
    assert n == 400
    assert feasible_n(b.bound, 9, kappa=2.0, C_phi=1.5, L=0.5, R=3.0)[1] == float("inf")
    m = required_m(100.0, 10_000, 4, kappa=1.0, C_phi=1.0, L=1.0, R=1.0, M=2.0)
    at = excess_risk_bound(10_000, 4, kappa=1.0, C_phi=1.0, L=1.0, R=1.0, m=m, M=2.0).bound
    before = excess_risk_bound(10_000, 4, kappa=1.0, C_phi=1.0, L=1.0, R=1.0, m=m - 1, M=2.0).bound
    assert at <= 100.0 < before
    floor = excess_risk_bound(10_000, 4, kappa=1.0, C_phi=1.0, L=1.0, R=1.0, m=1e15, M=2.0).bound
    assert required_m(0.99 * floor, 10_000, 4, kappa=1.0, C_phi=1.0, L=1.0, R=1.0, M=2.0) == float("inf")
    with pytest.raises(ValueError, match="eta must be in"):
        excess_risk_bound(10, 2, kappa=1, C_phi=1, L=1, R=1, eta=1.5)
    with pytest.raises(ValueError, match="kappa must be a finite number"):
        excess_risk_bound(10, 2, kappa=float("inf"), C_phi=1, L=1, R=1)


# ----------------------------------------------------------------------------- fits
@pytest.fixture(scope="module")
def dti():
    return datasets.dti_first_visits()


def _fit(ds, formula="rcst ~ cca", **kw):
    kw = {"dictionary": "db3", "level": 4, "lam": 1e-3, "interpolate_inputs": True, "progress": False, **kw}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return FunctionalRegression(formula, ds, **kw).fit()


def test_diagnostics_constants_by_hand(dti):
    res = _fit(dti)
    dg = res.diagnostics()
    est = res.estimator
    assert dg["C_phi"] == pytest.approx(np.sqrt(np.linalg.eigvalsh(est.gram_).max()))
    A = est.dual_coef_
    assert dg["R"] == pytest.approx(np.sqrt(np.trace(A.T @ est.K_ @ A @ est.B_)))
    y = dti.rcst.values
    assert dg["L"] == pytest.approx(np.nanmax(np.abs(y - res.mean_function.values)))
    m = int(np.isfinite(y).sum(1).min())
    assert dg["m_min"] == m == 43
    assert dg["kappa"] == pytest.approx(np.diag(est.K_).max() * np.linalg.eigvalsh(est.B_).max())
    lam = lam_star(100, dg["d"], 0.05, dg["kappa"], dg["C_phi"], True)
    want = intermediate_5_2(100, m, dg["d"], lam, 0.05, dg["kappa"], dg["C_phi"], dg["L"], dg["R"], dg["M"])
    assert dg["bound"].bound == pytest.approx(want, rel=1e-12)
    # the paper's lambda is the fit's penalty lam * u (u = trace(G) / d): lambda* is reported in the unit of lam
    u = est.dictionary_.lambda_unit()
    assert u == pytest.approx(np.trace(est.gram_) / est.gram_.shape[0], rel=1e-12)
    assert dg["lambda_star"] == pytest.approx(lam / u)
    assert res.lam * u < lam and dg["bound_at_lambda"] is None  # the proof needs lambda >= lambda*


def test_bound_at_the_fitted_lambda_when_it_is_large_enough(dti):
    res = _fit(dti, lam=100.0)
    dg = res.diagnostics()
    u = res.estimator.dictionary_.lambda_unit()  # the bound is at the fit's penalty 100 u (u = 0.495 here)
    want = intermediate_5_2(100, 43, dg["d"], 100.0 * u, 0.05, dg["kappa"], dg["C_phi"], dg["L"], dg["R"], dg["M"])
    assert 100.0 > dg["lambda_star"] and dg["bound_at_lambda"].bound == pytest.approx(want, rel=1e-12)


def test_kappa_of_integral_gaussian_on_curves_is_the_sum_of_weights():
    r = np.random.default_rng(0)
    s = np.linspace(0, 10, 41)
    x = r.normal(size=(30, 41)).cumsum(1) / 5
    y = np.sin(x[:, ::4]) + 0.1 * r.normal(size=(30, 11))
    ds = xr.Dataset({"x": (("sample", "s"), x), "y": (("sample", "t"), y)},
                    coords={"s": s, "t": np.linspace(0, 1, 11)})
    res = FunctionalRegression("y ~ x", ds, kernels={"x": IntegralGaussian(2.0)}, dictionary=Fourier(2),
                               output_matrix=np.diag([3.0, 1.0, 1.0, 0.5, 0.5]), lam=1e-2, progress=False).fit()
    est = res.estimator
    lmax = np.linalg.eigvalsh(est.B_).max()
    assert lmax == pytest.approx(3.0)
    dg = res.diagnostics()
    assert np.diag(est.K_) == pytest.approx(np.full(30, 10.0))  # k(x, x) = sum of the quadrature weights
    assert dg["kappa"] == pytest.approx(10.0 * lmax) and dg["kappa_how"].startswith("exact")
    # the same from the inputs alone (no kernel matrix), as for a refitted or loaded model
    k2, _ = kernel_kappa(est.kernel_, est.B_, X=est.X_fit_, weights=est.X_weights_)
    assert k2 == pytest.approx(10.0 * lmax)


def test_kappa_of_an_unbounded_kernel_is_a_plug_in():
    from fdakpl import Linear

    r = np.random.default_rng(0)
    x = r.normal(size=(40, 20)).cumsum(1) / 5
    ds = xr.Dataset({"x": (("sample", "s"), x), "y": (("sample", "t"), np.sin(x[:, ::2]))},
                    coords={"s": np.linspace(0, 1, 20), "t": np.linspace(0, 1, 10)})
    res = FunctionalRegression("y ~ x", ds, kernels={"x": Linear()}, lam=1e-2, progress=False).fit()
    dg = res.diagnostics()
    w = res.estimator.X_weights_["x"]  # the formula front end passes a term -> weights mapping
    assert dg["kappa"] == pytest.approx(np.max(np.sum(w * x**2, axis=1)))  # max_i ||x_i||^2_{L2}
    assert dg["kappa_how"].endswith("(plug-in)") and "a plug-in like L" in _flat(res.summary(diagnostics="full"))
    # sup k(x, x) is infinite: the propositions' bounded kernel is not this one, the number is indicative
    app = dg["applicability"]
    assert app.status == "indicative" and any("the kernel is unbounded" in r for r in app.reasons)
    bounded = FunctionalRegression("y ~ x", ds, kernels={"x": Gaussian(1.0)}, lam=1e-2, progress=False).fit()
    assert not any("unbounded" in r for r in bounded.diagnostics()["applicability"].reasons)


def test_dependent_curves_make_the_bound_indicative():
    r = np.random.default_rng(1)
    x = r.normal(size=(40, 20)).cumsum(1) / 5
    ds = xr.Dataset({"x": (("sample", "s"), x), "y": (("sample", "t"), np.sin(x[:, ::2])),
                     "subject": ("sample", np.repeat(np.arange(10), 4))},
                    coords={"s": np.linspace(0, 1, 20), "t": np.linspace(0, 1, 10)})
    kw = dict(kernels={"x": Gaussian(1.0)}, lam=1e-2, progress=False)
    free = FunctionalRegression("y ~ x", ds, **kw).fit().diagnostics()["applicability"]
    grouped = FunctionalRegression("y ~ x", ds, groups="subject", **kw).fit().diagnostics()["applicability"]
    assert free.status == "applies" and grouped.status == "indicative"
    assert grouped.reasons[0].startswith("groups= given: curves of a group are dependent")
    assert "only 10 groups are independent" in grouped.reasons[0]


def test_rescaling_response_locations_leaves_the_bound_unchanged(dti):
    res = _fit(dti)
    big = _fit(dti.assign_coords(rcst_loc=dti.rcst_loc.values * 55))
    np.testing.assert_allclose(big.fitted.values, res.fitted.values, rtol=1e-9, atol=1e-12)
    d1, d55 = res.diagnostics(), big.diagnostics()
    assert d55["domain_length"] == pytest.approx(55.0)
    assert d55["M"] == pytest.approx(d1["M"] / np.sqrt(55)) and d55["R"] == pytest.approx(d1["R"] * np.sqrt(55))
    assert d55["bound"].bound == pytest.approx(d1["bound"].bound, rel=1e-9)
    assert "per unit length" in _flat(big.summary(diagnostics="full"))


# ----------------------------------------------------------------------------- item 3: applicability
def _toy(n=60, m=12, long=False, missing=0.0, seed=0):
    r = np.random.default_rng(seed)
    x = r.uniform(-1, 1, size=(n, 2))
    if long:
        theta = r.uniform(0, 1, size=(n, m))
        vals = np.sin(2 * np.pi * theta * x[:, :1]) + x[:, 1:] ** 2 + 0.1 * r.normal(size=(n, m))
        df = pd.DataFrame({"sample": np.repeat(np.arange(n), m), "location": theta.ravel(), "value": vals.ravel()})
        return x, df
    grid = np.linspace(0, 1, m)
    y = np.sin(2 * np.pi * np.outer(x[:, 0], grid)) + x[:, 1:] ** 2 + 0.1 * r.normal(size=(n, m))
    if missing:
        y[r.uniform(size=y.shape) < missing] = np.nan
    return x, y, grid


def test_verdicts_on_the_dti_data(dti):
    dg = _fit(dti).diagnostics()
    app = dg["applicability"]
    assert app.status == "indicative" and app.proposition == "5.2"
    text = " ".join(app.reasons)
    assert "m varies from 43 to 55" in text and "not uniform" in text and "66%" in text
    assert any("redundant dictionary (c_phi = 0)" in c for c in app.checks)
    for kw, why in [({"loss": "logcosh"}, "square loss only"), ({"solver": "iterative"}, "L-BFGS-B"),
                    ({"solver": "exact_partial"}, "exact minimiser")]:
        res = _fit(dti, **kw)
        dg = res.diagnostics()
        assert dg["applicability"].status == "not applicable" and dg["bound"] is None
        assert why in " ".join(dg["applicability"].reasons)
        text = _flat(res.summary(diagnostics="full"))
        assert "Bound at lambda*:" in text and "not applicable" in text and why in text
        assert "Excess-risk bound: not applicable" in _flat(res.summary()) and why in _flat(res.summary())


def test_nystroem_fit_is_not_covered(dti):
    from fdakpl import Nystroem

    dg = _fit(dti, approx=Nystroem(30, random_state=0)).diagnostics()
    assert dg["applicability"].status == "not applicable" and "approximated" in dg["applicability"].reasons[0]


def test_uniform_long_form_design_applies_and_half_domain_does_not():
    from fdakpl.diagnostics.applicability import bound_applicability

    _, df = _toy(long=True)
    counts = df.groupby("sample").size().to_numpy()
    common = dict(loss="square", solver="eig", approx=None, fully_observed=False, integration="plugin",
                  domain=(0.0, 1.0))
    ok = bound_applicability(counts=counts, location=df.location.to_numpy(), **common)
    assert ok.status == "applies" and ok.label == "5.2", ok.reasons
    # curves seen on the first half of the domain only: the design is not uniform
    half = df[df.location < 0.5]
    counts = half.groupby("sample").size().to_numpy()
    bad = bound_applicability(counts=counts, location=half.location.to_numpy(), **common)
    assert bad.status == "indicative" and any("not uniform" in r for r in bad.reasons)


def test_fully_observed_ridge_is_proposition_5_1():
    x, y, grid = _toy()
    ds = xr.Dataset({"x": (("sample", "f"), x), "y": (("sample", "t"), y)}, coords={"t": grid, "f": [0.0, 1.0]})
    res = FunctionalRegression("y ~ x", ds, dictionary="fourier", lam=1e-2, progress=False).fit()
    dg = res.diagnostics()
    assert dg["applicability"].label == "5.1" and dg["bound"].proposition == "5.1"
    assert dg["sqrt_n_rate"] is None and "m >= sqrt(n)" not in str(res.summary(diagnostics="full"))


def test_random_missing_on_a_grid_with_equal_m_applies():
    from fdakpl.diagnostics.applicability import sampling_design

    r = np.random.default_rng(5)
    n, T, m = 200, 30, 12
    idx = np.concatenate([np.sort(r.choice(T, m, replace=False)) for _ in range(n)])
    grid = np.linspace(0, 1, T)
    bad, ok = sampling_design(np.full(n, m), grid[idx], (0.0, 1.0), grid=grid, grid_index=idx)
    assert bad == [] and any("Cochran" in c for c in ok)
    # the first five grid points observed half as often: detected
    keep = np.concatenate([np.sort(r.choice(T, m, replace=False, p=np.r_[np.full(5, 0.5), np.ones(T - 5)]
                                            / (T - 2.5))) for _ in range(n)])
    bad, _ = sampling_design(np.full(n, m), grid[keep], (0.0, 1.0), grid=grid, grid_index=keep)
    assert len(bad) == 1 and "Cochran" in bad[0]


def test_summary_wording(dti):
    text = _flat(_fit(dti).summary(diagnostics="full"))
    for key in ("Proposition:", "5.2 (indicative)", "m >= sqrt(n) (n^-1/2 rate)", "not a condition for the bound",
                "L and R are plug-in estimates", "R at the fitted lambda, not at lambda*",
                "for the true constants", "no step of the proofs uses c_phi", "Bound at fitted lambda"):
        assert key in text, key
    assert not math.isnan(_fit(dti).diagnostics()["bound"].bound)


def test_bound_is_above_the_excess_risk_of_a_simulation_with_known_constants():
    """h_H in the RKHS with known norm R, bounded noise (known L), orthonormal atoms: excess risk at lambda*."""
    from fdakpl import Gaussian, KPLRegressor

    r = np.random.default_rng(11)
    kernel, dic = Gaussian(0.5), Fourier(1).fit(domain=(0.0, 1.0))  # d = 3 orthonormal atoms, sup |phi| = sqrt(2)
    d = dic.n_atoms_
    anchors, beta = r.uniform(-1, 1, size=(6, 2)), r.normal(size=(6, d)) * 0.3
    R = float(np.sqrt(np.sum(beta * (kernel(anchors) @ beta))))
    x_test = r.uniform(-1, 1, size=(2000, 2))
    h_test = kernel(x_test, anchors) @ beta
    L = float(np.abs(h_test @ dic.evaluate(np.linspace(0, 1, 200)).T).max() + 0.2)
    for n, m in [(50, 4), (200, 16)]:
        x, theta = r.uniform(-1, 1, size=(n, 2)), r.uniform(0, 1, size=(n, m))
        vals = np.einsum("nd,nmd->nm", kernel(x, anchors) @ beta, dic.evaluate(theta.ravel()).reshape(n, m, d))
        vals += r.uniform(-0.2, 0.2, size=vals.shape)
        df = pd.DataFrame({"sample": np.repeat(np.arange(n), m), "location": theta.ravel(), "value": vals.ravel()})
        b = excess_risk_bound(n, d, kappa=1.0, C_phi=1.0, L=L, R=R, m=m, M=np.sqrt(2))
        model = KPLRegressor(dictionary=Fourier(1), kernel=kernel, lam=b.lam_star, center=False,
                             domain=(0.0, 1.0)).fit(x, df)
        excess = float(np.mean(np.sum((model.predict_coefficients(x_test) - h_test) ** 2, axis=1)))
        assert 0 < excess < b.bound
