"""Excess-risk bounds of the paper's section 5 (Propositions 5.1 and 5.2), computed as the proof gives them.

The bounds are evaluated from the supplement's *intermediate inequalities*
(the last display of each proof), with the concentration radii ``delta_1,
delta_2, delta_3`` of the supplement's concentration lemmas (its section "Proofs for section 5"):

* Proposition 5.1 (fully observed), for any ``lambda >= delta_2(n, d, eta/2)``::

      excess risk <= 9/2 (delta_1(n, eta/2)^2 / lambda + R^2 lambda)

* Proposition 5.2 (``m`` uniform locations per curve), for any ``lambda >= delta_2(n, d, eta/3)``::

      excess risk <= 27/4 (delta_3(n, m, d, eta/3)^2 / lambda + delta_1(n, eta/3)^2 / lambda + R^2 lambda)

with ``delta_1(n, e) = 6 (sqrt(kappa) C L + kappa C^2 R) log(2/e) / sqrt(n)``,
``delta_2(n, d, e) = 6 kappa C^2 sqrt(d) log(2/e) / sqrt(n)`` and
``delta_3(n, m, d, e) = (A_0 / m + A_1 / sqrt(n m)) log(2/e)``, ``A_1 = 2 L sqrt(kappa d) M``,
``A_0 = 4 sqrt(kappa) (L sqrt(d) M + C L)``. The supplement prints ``C R`` instead
of ``C L`` in ``A_0``; the step it comes from bounds ``||K_x Phi^# y||_H``, which is at most
``sqrt(kappa) C ||y|| <= sqrt(kappa) C L`` and has nothing to do with ``R`` (see the guide page
"Excess-risk bounds: which one applies and what it means"). At ``lambda = lambda*`` (equality in
the condition) the inequality of 5.2 expands exactly into::

    (B2 sqrt(n) / m^2 + B3 / m^(3/2) + B5 / (sqrt(n) m) + B4 / sqrt(n)) log(6/eta),
    C(d) = L M / C,  B2 = 18 sqrt(d) (C(d) + L/sqrt(d))^2,  B3 = 18 sqrt(d) C(d) (C(d) + L/sqrt(d)),
    B5 = 9 sqrt(d) C(d)^2 / 2,  B4 = 81/2 (B0 / sqrt(d) + B1 sqrt(d)),

where the printed Proposition 5.2 has ``R`` for ``L`` in ``B2``, ``B3 = 18 sqrt(d) C(d) (C(d) + 2R/sqrt(d))``
and ``9 C(d)^2 / 2`` (no ``sqrt(d)``) for ``B5``. Proposition 5.1 as printed is what its proof gives:
``27 (B0 / sqrt(d) + B1 sqrt(d)) log(4/eta) / sqrt(n)``, ``B0 = (L + sqrt(kappa) C R)^2``,
``B1 = kappa C^2 R^2``.

Constants: ``C = C_phi`` the upper Riesz constant (``||Phi|| <= C``; neither ``c_phi`` nor unit-norm
atoms are used by the proofs), ``kappa = sup_x ||K(x, x)||_op = sup_x k(x, x) lambda_max(B)``,
``M = M(d) = max_l sup_theta |phi_l(theta)|``, ``L`` an almost-sure bound of ``|y(theta)|``, ``R`` a
bound of ``||h_H||_H``. The paper assumes a domain of length ``|Theta| = 1``; for another length the
bound is stated for the domain mapped onto ``[0, 1]`` (``L, M -> sqrt(|Theta|) L, sqrt(|Theta|) M``)
and divided by ``|Theta|``: it bounds the excess risk per unit length ``E ||y - f(x)||^2 / |Theta|``,
which does not change when the locations are rescaled.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from scipy.optimize import brentq

from ..kernels import Gaussian, IntegralGaussian, Kernel, Laplace, Product, Sum
from ..utils.arrays import distinct_rows

__all__ = [
    "BoundConstants",
    "ExcessRiskBound",
    "dictionary_constants",
    "excess_risk_bound",
    "feasible_n",
    "kernel_kappa",
    "lambda_star",
    "plot_bound",
    "proof_deltas",
    "representation_error",
    "required_m",
    "required_n",
]


@dataclass
class BoundConstants:
    """Constants entering the bounds (see the module docstring)."""

    c_phi: float
    C_phi: float
    normed: bool
    kappa: float
    M: float
    L: float
    R: float
    d: int

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class ExcessRiskBound:
    """A bound at one ``(n, m, eta)``, from the supplement's intermediate inequality.

    Attributes
    ----------
    bound : float
        The intermediate inequality evaluated at ``lam`` (per unit length of the domain).
    lam, lam_star : float
        Where the inequality is evaluated (``lam_star`` unless another ``lam >= lam_star`` was given)
        and the paper's ``lambda*``.
    terms : dict
        The closed-form terms of the expansion at ``lam_star`` (they sum to ``bound`` when
        ``lam == lam_star``), to see which one dominates.
    constants : dict
        ``B0, B1`` (and ``C(d), B2, B3, B4, B5`` for Proposition 5.2).
    printed : float
        The paper's printed closed form at ``lam_star`` with the same constants, for comparison.
    sqrt_n_rate : bool or None
        Proposition 5.2: ``m >= sqrt(n)``, where the bound keeps the ``n^{-1/2}`` rate of the fully
        observed case. It is not a condition for the bound to hold.
    """

    n: int
    m: float | None
    eta: float
    lam: float
    lam_star: float
    bound: float
    terms: dict[str, float]
    constants: dict[str, float]
    printed: float
    proposition: str
    sqrt_n_rate: bool | None
    domain_length: float = 1.0

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def dictionary_constants(gram: np.ndarray, sup_abs: float | None = None, tol: float = 1e-8) -> dict[str, Any]:
    """Riesz constants and related facts of a dictionary from its Gram matrix.

    Parameters
    ----------
    gram : numpy.ndarray
        ``Phi^# Phi``.
    sup_abs : float, optional
        ``M(d)``, passed through.
    tol : float
        Tolerance for "normed" (unit diagonal).

    Returns
    -------
    dict
        ``c_phi``, ``C_phi``, ``normed``, ``riesz`` (linearly independent), ``condition``, ``M``.

    Examples
    --------
    >>> dictionary_constants(np.diag([1.0, 4.0]))["C_phi"]
    2.0
    """
    ev = np.linalg.eigvalsh(0.5 * (gram + gram.T))
    lo, hi = max(float(ev.min()), 0.0), float(ev.max())
    return {"c_phi": math.sqrt(lo), "C_phi": math.sqrt(hi), "normed": bool(np.allclose(np.diag(gram), 1.0, atol=tol)),
            "riesz": bool(lo > 1e-10 * hi), "condition": hi / lo if lo > 0 else float("inf"), "M": sup_abs}


def _constant_diagonal(kernel: Kernel) -> bool:
    """Whether ``k(x, x)`` is the same for every ``x`` (stationary kernels and their sums/products)."""
    if isinstance(kernel, Gaussian | Laplace | IntegralGaussian):
        return True
    if isinstance(kernel, Product | Sum):
        return all(_constant_diagonal(k) for k in kernel.kernels.values())
    return False


def _needs_weights(kernel: Kernel) -> bool:
    if isinstance(kernel, IntegralGaussian):
        return True
    if isinstance(kernel, Product | Sum):
        return any(_needs_weights(k) for k in kernel.kernels.values())
    return False


def _row(X: Any, i: int) -> Any:
    if isinstance(X, dict):
        return {k: v[i : i + 1] for k, v in X.items()}
    return X[i : i + 1]


def kernel_kappa(kernel: Kernel, B: np.ndarray, *, K: np.ndarray | None = None, X: Any = None,
                 weights: Any = None) -> tuple[float, str]:
    """The paper's ``kappa = sup_x ||k(x, x) B||_op = sup_x k(x, x) lambda_max(B)``, and how it was obtained.

    ``k(x, x)`` is read off the kernel itself, with the quadrature weights of the fit: for an
    :class:`~fdakpl.kernels.IntegralGaussian` on curves it is the sum of the weights (the length of
    the input domain), not 1. For kernels whose diagonal is the same for every input (Gaussian,
    Laplace, integral-Gaussian, their sums and products) this is the exact supremum; otherwise
    (e.g. :class:`~fdakpl.kernels.Linear`) it is the largest ``k(x_i, x_i)`` over the training
    inputs, a plug-in estimate like ``L``.

    Parameters
    ----------
    kernel : Kernel
    B : numpy.ndarray
        The output matrix.
    K : numpy.ndarray, optional
        The training kernel matrix (its diagonal is used when given).
    X, weights : optional
        The training inputs and quadrature weights as the estimator passes them to the kernel.

    Returns
    -------
    kappa : float
        ``nan`` when it cannot be computed (no training inputs stored and a diagonal that depends on them).
    how : str

    Examples
    --------
    >>> X = np.zeros((3, 11, 1))
    >>> kernel_kappa(IntegralGaussian(1.0), np.eye(2), X=X, weights=np.full(11, 1.0))[0]
    11.0
    """
    lmax = float(np.linalg.eigvalsh(0.5 * (B + B.T)).max())
    const = _constant_diagonal(kernel)
    exact = "exact: k(x, x) is the same for every input"
    plug = "the largest k(x_i, x_i) over the training inputs (plug-in)"
    if K is not None:
        return float(np.max(np.diag(K))) * lmax, exact if const else plug
    if X is not None:
        n = len(next(iter(X.values()))) if isinstance(X, dict) else len(X)
        rows = range(1) if const else range(n)
        diag = [float(kernel(_row(X, i), None, weights)[0, 0]) for i in rows]
        return max(diag) * lmax, exact if const else plug
    if const and not _needs_weights(kernel):
        return float(kernel.diagonal_bound()) * lmax, exact
    return float("nan"), "unknown: the training inputs are not stored (approximate kernel)"


def lambda_star(n: int, d: int, kappa: float, C_phi: float, eta: float = 0.05, partial: bool = False) -> float:
    """The regularisation of Proposition 5.1 (``partial=False``) or 5.2: ``delta_2(n, d, eta/2)`` or ``eta/3``.

    Examples
    --------
    >>> round(lambda_star(100, 4, 1.0, 1.0, 0.05), 6)
    5.258432
    """
    _check_eta(eta)
    k = 6.0 if partial else 4.0
    return 6.0 * kappa * C_phi**2 * math.log(k / eta) * math.sqrt(d) / math.sqrt(n)


def _check_eta(eta: float) -> None:
    if not 0 < eta < 1:
        raise ValueError(f"eta must be in (0, 1), got {eta}")


def _check_constants(n: float, d: int, kappa: float, C_phi: float, L: float, R: float, m: float | None,
                     M: float | None, domain_length: float) -> None:
    if n < 1 or d < 1:
        raise ValueError(f"n and d must be >= 1, got n={n}, d={d}")
    for name, v in (("kappa", kappa), ("C_phi", C_phi), ("domain_length", domain_length)):
        if not (np.isfinite(v) and v > 0):
            raise ValueError(f"{name} must be a finite number > 0, got {v}")
    for name, v in (("L", L), ("R", R)):
        if not (np.isfinite(v) and v >= 0):
            raise ValueError(f"{name} must be a finite number >= 0, got {v}")
    if m is not None:
        if M is None:
            raise ValueError("the partially observed bound needs M = max sup |phi_l| (pass M=...)")
        if not (np.isfinite(M) and M >= 0):
            raise ValueError(f"M must be a finite number >= 0, got {M}")
        if not m > 0:
            raise ValueError(f"m must be > 0, got {m}")


def proof_deltas(n: float, d: int, *, kappa: float, C_phi: float, L: float, R: float, eta: float,
                 m: float | None = None, M: float | None = None) -> dict[str, float]:
    """The supplement's concentration radii, at ``eta/2`` (fully observed) or ``eta/3`` (``m`` given).

    ``delta_3`` uses ``sqrt(kappa) C_phi L`` for ``||K_x Phi^# y||_H`` (see the module docstring);
    constants are on the domain ``[0, 1]``.

    Examples
    --------
    >>> dl = proof_deltas(100, 4, kappa=1.0, C_phi=1.0, L=1.0, R=1.0, eta=0.05)
    >>> round(dl["delta1"], 4), round(dl["delta2"], 4)  # 6 * 2 * log(80) / 10, 6 * 2 * log(80) / 10
    (5.2584, 5.2584)
    """
    e = eta / (2.0 if m is None else 3.0)
    log = math.log(2.0 / e)
    sk, sn = math.sqrt(kappa), math.sqrt(n)
    out = {"delta1": 6.0 * (sk * C_phi * L + kappa * C_phi**2 * R) * log / sn,
           "delta2": 6.0 * kappa * C_phi**2 * math.sqrt(d) * log / sn}
    if m is not None:
        assert M is not None
        A0 = 4.0 * sk * L * (math.sqrt(d) * M + C_phi)
        A1 = 2.0 * L * sk * math.sqrt(d) * M
        out["delta3"] = (A0 / m + A1 / math.sqrt(n * m)) * log
    return out


def _coefficients(d: int, kappa: float, C_phi: float, L: float, R: float, M: float | None) -> dict[str, float]:
    sd = math.sqrt(d)
    out = {"B0": (L + math.sqrt(kappa) * C_phi * R) ** 2, "B1": kappa * C_phi**2 * R**2}
    if M is not None:
        Cd = L * M / C_phi
        out.update({"C(d)": Cd, "B2": 18.0 * sd * (Cd + L / sd) ** 2, "B3": 18.0 * sd * Cd * (Cd + L / sd),
                    "B5": 4.5 * sd * Cd**2, "B4": 40.5 * (out["B0"] / sd + out["B1"] * sd)})
    return out


def _printed_5_2(n: float, d: int, kappa: float, C_phi: float, L: float, R: float, m: float, M: float,
                 eta: float) -> float:
    """The closed form of Proposition 5.2 as printed in the paper (kept for comparison only)."""
    sd, sn = math.sqrt(d), math.sqrt(n)
    B0 = (L + math.sqrt(kappa) * C_phi * R) ** 2
    B1 = kappa * C_phi**2 * R**2
    Cd = L * M / C_phi
    B2 = 18.0 * sd * (Cd + R / sd) ** 2
    B3 = B2 - 18.0 * R**2 / sd
    B4 = 40.5 * (B0 / sd + B1 * sd)
    return (B2 * sn / m**2 + B3 / m**1.5 + 4.5 * Cd**2 / (sn * m) + B4 / sn) * math.log(6.0 / eta)


def excess_risk_bound(n: int, d: int, *, kappa: float, C_phi: float, L: float, R: float, m: float | None = None,
                      M: float | None = None, eta: float = 0.05, lam: float | None = None,
                      domain_length: float = 1.0) -> ExcessRiskBound:
    """Excess-risk bound of Proposition 5.1 (``m=None``) or 5.2 (``m`` points per curve), from its proof.

    Parameters
    ----------
    n : int
        Number of curves.
    d : int
        Number of atoms.
    kappa, C_phi, L, R : float
        Constants (see the module docstring), on the domain as given.
    m : float, optional
        Points per curve (partially observed setting).
    M : float, optional
        ``M(d)``, required with ``m``.
    eta : float
        The bound holds with probability ``1 - eta`` (for the true constants).
    lam : float, optional
        Evaluate the intermediate inequality at this ``lambda`` (default ``lambda*``). The proof
        needs ``lam >= lambda*``; a smaller value is refused.
    domain_length : float
        ``|Theta|``; the bound is on the excess risk per unit length (see the module docstring).

    Returns
    -------
    ExcessRiskBound

    Examples
    --------
    >>> b = excess_risk_bound(100, 4, kappa=1.0, C_phi=1.0, L=1.0, R=1.0)
    >>> round(b.bound, 4)  # 27 * (4/2 + 1*2) * log(80) / 10
    47.3259
    >>> p = excess_risk_bound(100, 74, kappa=1.0, C_phi=1.0089, L=0.624, R=0.126, m=43, M=5.984)
    >>> round(p.bound, 1), round(p.printed, 1)  # the proof's inequality vs the printed closed form
    (103.7, 96.3)
    """
    _check_eta(eta)
    _check_constants(n, d, kappa, C_phi, L, R, m, M, domain_length)
    s = math.sqrt(domain_length)
    Lu, Mu = L * s, (None if M is None else M * s)  # the same problem on [0, 1]
    partial = m is not None
    lam_star = lambda_star(n, d, kappa, C_phi, eta, partial=partial)
    if lam is None:
        lam = lam_star
    elif not lam >= lam_star * (1 - 1e-12):
        raise ValueError(f"lam = {lam:.4g} is below lambda* = {lam_star:.4g}: the proof needs lambda >= "
                         "delta_2 = lambda*, so no bound is available at this lambda")
    dl = proof_deltas(n, d, kappa=kappa, C_phi=C_phi, L=Lu, R=R, eta=eta, m=m, M=Mu)
    co = _coefficients(d, kappa, C_phi, Lu, R, Mu)
    sd, sn = math.sqrt(d), math.sqrt(n)
    if not partial:
        value = 4.5 * (dl["delta1"] ** 2 / lam + R**2 * lam)
        log = math.log(4.0 / eta)
        terms = {"27 B0 log(4/eta) / (sqrt(d) sqrt(n))": 27.0 * co["B0"] / sd * log / sn,
                 "27 B1 sqrt(d) log(4/eta) / sqrt(n)": 27.0 * co["B1"] * sd * log / sn}
        printed = sum(terms.values())
        rate = None
    else:
        assert m is not None and Mu is not None
        value = 6.75 * ((dl["delta3"] ** 2 + dl["delta1"] ** 2) / lam + R**2 * lam)
        log = math.log(6.0 / eta)
        terms = {"B2 sqrt(n) / m^2": co["B2"] * sn / m**2 * log, "B3 / m^(3/2)": co["B3"] / m**1.5 * log,
                 "B5 / (sqrt(n) m)": co["B5"] / (sn * m) * log, "B4 / sqrt(n)": co["B4"] / sn * log}
        printed = _printed_5_2(n, d, kappa, C_phi, Lu, R, m, Mu, eta)
        rate = bool(m >= sn)
    scale = 1.0 / domain_length
    return ExcessRiskBound(int(n), None if m is None else float(m), eta, float(lam), lam_star, value * scale,
                           {k: v * scale for k, v in terms.items()}, co, printed * scale,
                           "5.2" if partial else "5.1", rate, float(domain_length))


def feasible_n(eps: float, d: int, *, kappa: float, C_phi: float, L: float, R: float, m: float | None = None,
               M: float | None = None, eta: float = 0.05, domain_length: float = 1.0) -> tuple[float, float]:
    """All numbers of curves ``n`` whose bound (at ``lambda*_n``) is at most ``eps``: ``(n_lo, n_hi)``.

    Proposition 5.1 decreases in ``n``: ``n_hi = inf``. Proposition 5.2 at fixed ``m`` is
    ``f(t) = a t + c + b / t`` in ``t = sqrt(n)``, with ``a = B2 l / m^2``,
    ``b = (B5 / m + B4) l``, ``c = B3 l / m^{3/2}`` and ``l = log(6/eta)``: convex, smallest at
    ``t = sqrt(b / a)``, and ``f(t) <= eps`` between the roots of ``a t^2 + (c - eps) t + b``.
    Returns ``(inf, inf)`` when no ``n`` reaches ``eps``.

    Examples
    --------
    >>> lo, hi = feasible_n(25.0, 4, kappa=1, C_phi=1, L=1, R=1, m=50, M=1)
    >>> lo < hi < float("inf")
    True
    """
    _check_eta(eta)
    _check_constants(1, d, kappa, C_phi, L, R, m, M, domain_length)
    s = math.sqrt(domain_length)
    co = _coefficients(d, kappa, C_phi, L * s, R, None if M is None else M * s)
    target = eps * domain_length
    inf = float("inf")

    def ok(n: float) -> bool:
        return excess_risk_bound(int(n), d, kappa=kappa, C_phi=C_phi, L=L, R=R, m=m, M=M, eta=eta,
                                 domain_length=domain_length).bound <= eps

    if m is None:
        k = 27.0 * (co["B0"] / math.sqrt(d) + co["B1"] * math.sqrt(d)) * math.log(4.0 / eta)
        if k == 0:
            return 1.0, inf
        if target <= 0:
            return inf, inf
        lo = max(1.0, math.ceil((k / target) ** 2))
        while lo > 1 and ok(lo - 1):  # guard against rounding in the square
            lo -= 1
        while not ok(lo):
            lo += 1
        return float(lo), inf
    log = math.log(6.0 / eta)
    a, b, c = co["B2"] * log / m**2, (co["B5"] / m + co["B4"]) * log, co["B3"] * log / m**1.5
    if a == 0:  # L = 0: f(t) = c + b / t decreases
        if b == 0:
            return (1.0, inf) if c <= target else (inf, inf)
        t_lo, t_hi = (b / (target - c), inf) if target > c else (inf, inf)
    else:
        disc = (target - c) ** 2 - 4.0 * a * b
        if target <= c or disc < 0:
            return inf, inf
        t_lo = ((target - c) - math.sqrt(disc)) / (2.0 * a)
        t_hi = ((target - c) + math.sqrt(disc)) / (2.0 * a)
    lo = max(1.0, float(math.ceil(t_lo**2)))
    hi = float(math.floor(t_hi**2)) if np.isfinite(t_hi) else inf
    while lo > 1 and ok(lo - 1):
        lo -= 1
    while lo <= hi and not ok(lo):
        lo += 1
    if np.isfinite(hi):
        while ok(hi + 1):
            hi += 1
        while hi >= lo and not ok(hi):
            hi -= 1
    return (lo, hi) if lo <= hi else (inf, inf)


def required_n(eps: float, d: int, *, kappa: float, C_phi: float, L: float, R: float, m: float | None = None,
               M: float | None = None, eta: float = 0.05, domain_length: float = 1.0) -> float:
    """Smallest number of curves ``n`` for which the bound is at most ``eps`` (``inf`` if none).

    For the partially observed bound ``m`` is held fixed; the bound is then not monotone in
    ``n`` (its first term grows like ``sqrt(n)``) and the feasible ``n`` form an interval, see
    :func:`feasible_n`.

    Examples
    --------
    >>> n = required_n(1.0, 4, kappa=1.0, C_phi=1.0, L=1.0, R=1.0)
    >>> excess_risk_bound(int(n), 4, kappa=1.0, C_phi=1.0, L=1.0, R=1.0).bound <= 1.0
    True
    """
    return feasible_n(eps, d, kappa=kappa, C_phi=C_phi, L=L, R=R, m=m, M=M, eta=eta,
                      domain_length=domain_length)[0]


def required_m(eps: float, n: int, d: int, *, kappa: float, C_phi: float, L: float, R: float, M: float,
               eta: float = 0.05, m_max: float = 1e12, domain_length: float = 1.0) -> float:
    """Smallest number of points per curve ``m`` for which the 5.2 bound is at most ``eps`` at ``n`` curves.

    The bound decreases in ``m`` towards the floor ``B4 log(6/eta) / sqrt(n)``; ``inf`` is
    returned when ``eps`` is at or below it.

    Examples
    --------
    >>> m = required_m(50.0, 10_000, 4, kappa=1.0, C_phi=1.0, L=1.0, R=1.0, M=1.0)
    >>> 1 <= m < 1e12
    True
    """
    def f(m: float) -> float:
        return excess_risk_bound(n, d, kappa=kappa, C_phi=C_phi, L=L, R=R, m=m, M=M, eta=eta,
                                 domain_length=domain_length).bound - eps

    if f(m_max) > 0:
        return float("inf")
    if f(1.0) <= 0:
        return 1.0
    m = math.ceil(brentq(f, 1.0, m_max))
    while m > 1 and f(m - 1) <= 0:
        m -= 1
    while f(m) > 0:
        m += 1
    return float(m)


def representation_error(phi_points: np.ndarray, obs: Any, weights: np.ndarray, max_curves: int = 500,
                         random_state: int = 0) -> np.ndarray:
    """Relative error of the best approximation of each curve by the dictionary, at its observed points.

    For curve ``i``, ``min_z sum_p c_ip (y_ip - phi(theta_ip)^T z)^2 / sum_p c_ip y_ip^2``
    (weighted least squares, minimum-norm solution for redundant families):
    0 when the dictionary reproduces the observed values exactly. At most
    ``max_curves`` curves (a seeded random subset) are evaluated.

    Parameters
    ----------
    phi_points : (N, d) atoms at the observed points
    obs : Observations (values as fitted, e.g. centred)
    weights : (N,) integration weights ``c_ip``

    Examples
    --------
    >>> from fdakpl.data.functional import Observations
    >>> obs = Observations.from_dense(np.array([[1.0, 2.0, 3.0]]), np.array([0.0, 0.5, 1.0]))
    >>> phi = np.ones((3, 1))  # constants only: best fit 2, residual 1 + 0 + 1 out of 14
    >>> representation_error(phi, obs, np.ones(3)).round(4)
    array([0.1429])
    """
    n = obs.n_samples
    rows = np.arange(n)
    if n > max_curves:
        rows = np.sort(np.random.default_rng(random_state).choice(n, max_curves, replace=False))
    starts = np.searchsorted(obs.index, np.arange(n + 1))
    out = np.empty(rows.size)
    d = phi_points.shape[1]
    for lo in range(0, rows.size, 64):  # curves in chunks: the normal equations of each, solved together
        chunk = rows[lo:lo + 64]
        M = np.zeros((chunk.size, d, d))
        b = np.zeros((chunk.size, d))
        yy = np.zeros(chunk.size)
        for k, i in enumerate(chunk):
            sl = slice(starts[i], starts[i + 1])
            A = phi_points[sl] * weights[sl, None]
            M[k] = A.T @ phi_points[sl]
            b[k] = A.T @ obs.value[sl]
            yy[k] = float(np.sum(weights[sl] * obs.value[sl] ** 2))
        # minimum-norm least squares through the pseudo-inverse of each (symmetric) normal matrix, once per
        # distinct matrix (curves seen at the same points with the same weights share it); the error at the
        # optimum is yy - b^T z
        unique, which = distinct_rows(M)
        pinv = np.linalg.pinv(unique, rcond=1e-14, hermitian=True)
        z = np.einsum("kde,ke->kd", pinv[which], b)
        err = yy - np.einsum("kd,kd->k", b, z)
        out[lo:lo + chunk.size] = np.where(yy > 0, err / np.where(yy > 0, yy, 1.0), 0.0)
    return np.clip(out, 0.0, None)


def plot_bound(*, d: int, kappa: float, C_phi: float, L: float, R: float, M: float | None = None,
               n_values: Any = None, m_values: Any = None, eta: float = 0.05, domain_length: float = 1.0,
               ax: Any = None):
    """Plot the bound against ``n`` (one line per ``m``; ``m=None`` is Proposition 5.1).

    Examples
    --------
    >>> import matplotlib; matplotlib.use("Agg")
    >>> fig = plot_bound(d=8, kappa=1, C_phi=1, L=1, R=1, M=2, m_values=[None, 20, 100])
    >>> len(fig.axes[0].lines)
    3
    """
    import matplotlib.pyplot as plt

    n_values = np.unique(np.geomspace(10, 1e6, 60).astype(int)) if n_values is None else np.asarray(n_values)
    m_values = [None] if m_values is None else list(m_values)
    if ax is None:
        fig, ax = plt.subplots(figsize=(5.5, 3.8), constrained_layout=True)
    else:
        fig = ax.figure
    for m in m_values:
        b = [excess_risk_bound(int(n), d, kappa=kappa, C_phi=C_phi, L=L, R=R, m=m, M=M, eta=eta,
                               domain_length=domain_length).bound for n in n_values]
        ax.loglog(n_values, b, label="fully observed (Prop. 5.1)" if m is None else f"m = {m} (Prop. 5.2)")
    ax.set_xlabel("number of curves n")
    ax.set_ylabel(f"excess-risk bound (prob. {1 - eta:.2f})")
    ax.grid(alpha=0.3, which="both", lw=0.5)
    ax.legend(fontsize=8, frameon=False)
    return fig
