"""Excess-risk diagnostics of the paper's section 5 (Propositions 5.1 and 5.2).

Constants (the paper assumes a domain of length ``|Theta| = 1``):

* Riesz constants ``c_phi, C_phi``: square roots of the smallest and largest
  eigenvalues of the Gram matrix ``Phi^# Phi``; the family is *normed* when
  every atom has unit L2 norm.
* ``kappa = sup_x ||K(x, x)||_op = sup_x k(x, x) * ||B||_op``.
* ``M(d) = max_l sup_theta |phi_l(theta)|``.
* ``L = max |y|`` over the observed (centred) responses.
* ``R = ||h||_H``, estimated by the plug-in ``sqrt(tr(A^T K A B))`` of the fit.

Proposition 5.1 (fully observed), with ``lambda*_n(eta/2) = 6 kappa C^2 log(4/eta) sqrt(d) / sqrt(n)``::

    excess risk <= 27 (B0 / sqrt(d) + B1 sqrt(d)) log(4/eta) / sqrt(n),
    B0 = (L + sqrt(kappa) C R)^2,  B1 = kappa C^2 R^2.

Proposition 5.2 (partially observed, ``m`` points per curve), with
``lambda*_n(eta/3) = 6 kappa C^2 log(6/eta) sqrt(d) / sqrt(n)``::

    excess risk <= (B2 sqrt(n) / m^2 + B3 / m^{3/2} + 9 C(d)^2 / (2 sqrt(n) m) + B4 / sqrt(n)) log(6/eta),
    C(d) = L M(d) / C,  B2 = 18 sqrt(d) (C(d) + R / sqrt(d))^2,  B3 = B2 - 18 R^2 / sqrt(d),
    B4 = 81/2 (B0 / sqrt(d) + B1 sqrt(d)).

The bound of 5.2 is consistent when ``m`` grows at least like ``sqrt(n)``.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from scipy.optimize import brentq

__all__ = [
    "BoundConstants",
    "ExcessRiskBound",
    "dictionary_constants",
    "excess_risk_bound",
    "lambda_star",
    "plot_bound",
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
    """A bound and its terms at one ``(n, m, eta)``."""

    n: int
    m: float | None
    eta: float
    lam_star: float
    bound: float
    terms: dict[str, float]
    proposition: str
    consistent_regime: bool | None

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


def lambda_star(n: int, d: int, kappa: float, C_phi: float, eta: float = 0.05, partial: bool = False) -> float:
    """The regularisation of Proposition 5.1 (``partial=False``) or 5.2.

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


def excess_risk_bound(n: int, d: int, *, kappa: float, C_phi: float, L: float, R: float, m: float | None = None,
                      M: float | None = None, eta: float = 0.05) -> ExcessRiskBound:
    """Excess-risk bound of Proposition 5.1 (``m=None``) or 5.2 (``m`` points per curve).

    Parameters
    ----------
    n : int
        Number of curves.
    d : int
        Number of atoms.
    kappa, C_phi, L, R : float
        Constants (see the module docstring).
    m : float, optional
        Points per curve (partially observed setting).
    M : float, optional
        ``M(d)``, required with ``m``.
    eta : float
        The bound holds with probability ``1 - eta``.

    Returns
    -------
    ExcessRiskBound

    Examples
    --------
    >>> b = excess_risk_bound(100, 4, kappa=1.0, C_phi=1.0, L=1.0, R=1.0)
    >>> round(b.bound, 4)  # 27 * (4/2 + 1*2) * log(80) / 10
    47.3259
    """
    _check_eta(eta)
    if n < 1 or d < 1:
        raise ValueError("n and d must be >= 1")
    sd, sn = math.sqrt(d), math.sqrt(n)
    B0 = (L + math.sqrt(kappa) * C_phi * R) ** 2
    B1 = kappa * C_phi**2 * R**2
    if m is None:
        log = math.log(4.0 / eta)
        term = 27.0 * (B0 / sd + B1 * sd) * log / sn
        return ExcessRiskBound(n, None, eta, lambda_star(n, d, kappa, C_phi, eta), term,
                               {"B0": B0, "B1": B1, "27(B0/sqrt(d)+B1 sqrt(d))log(4/eta)/sqrt(n)": term},
                               "5.1", None)
    if M is None:
        raise ValueError("the partially observed bound needs M = max sup |phi_l| (pass M=...)")
    if m <= 0:
        raise ValueError(f"m must be > 0, got {m}")
    log = math.log(6.0 / eta)
    Cd = L * M / C_phi
    B2 = 18.0 * sd * (Cd + R / sd) ** 2
    B3 = B2 - 18.0 * R**2 / sd
    B4 = 40.5 * (B0 / sd + B1 * sd)
    terms = {
        "B2 sqrt(n)/m^2": B2 * sn / m**2 * log,
        "B3/m^(3/2)": B3 / m**1.5 * log,
        "9C(d)^2/(2 sqrt(n) m)": 9.0 * Cd**2 / (2.0 * sn * m) * log,
        "B4/sqrt(n)": B4 / sn * log,
    }
    return ExcessRiskBound(n, float(m), eta, lambda_star(n, d, kappa, C_phi, eta, partial=True),
                           float(sum(terms.values())), {"B0": B0, "B1": B1, "B2": B2, "B3": B3, "B4": B4,
                                                        "C(d)": Cd, **terms}, "5.2", bool(m >= math.sqrt(n)))


def required_n(eps: float, d: int, *, kappa: float, C_phi: float, L: float, R: float, m: float | None = None,
               M: float | None = None, eta: float = 0.05, n_max: float = 1e15) -> float:
    """Smallest number of curves ``n`` for which the bound is at most ``eps``.

    For the partially observed bound, ``m`` is held fixed; since its first term
    grows with ``n``, no ``n`` may reach ``eps`` (then ``inf`` is returned).

    Examples
    --------
    >>> n = required_n(1.0, 4, kappa=1.0, C_phi=1.0, L=1.0, R=1.0)
    >>> excess_risk_bound(int(np.ceil(n)), 4, kappa=1.0, C_phi=1.0, L=1.0, R=1.0).bound <= 1.0
    True
    """
    def f(logn: float) -> float:
        return excess_risk_bound(max(1, round(math.exp(logn))), d, kappa=kappa, C_phi=C_phi, L=L, R=R, m=m,
                                 M=M, eta=eta).bound - eps

    grid = np.linspace(0, math.log(n_max), 400)
    vals = np.array([f(g) for g in grid])
    ok = np.nonzero(vals <= 0)[0]
    if ok.size == 0:
        return float("inf")
    i = ok[0]
    if i == 0:
        return 1.0
    root = brentq(f, grid[i - 1], grid[i])
    return float(math.ceil(math.exp(root)))


def required_m(eps: float, n: int, d: int, *, kappa: float, C_phi: float, L: float, R: float, M: float,
               eta: float = 0.05, m_max: float = 1e12) -> float:
    """Smallest number of points per curve ``m`` for which the 5.2 bound is at most ``eps`` at ``n`` curves.

    Returns ``inf`` when even ``m -> infinity`` cannot reach ``eps`` (the ``B4/sqrt(n)`` term alone exceeds it).

    Examples
    --------
    >>> m = required_m(50.0, 10_000, 4, kappa=1.0, C_phi=1.0, L=1.0, R=1.0, M=1.0)
    >>> 1 <= m < 1e12
    True
    """
    def f(m: float) -> float:
        return excess_risk_bound(n, d, kappa=kappa, C_phi=C_phi, L=L, R=R, m=m, M=M, eta=eta).bound - eps

    if f(m_max) > 0:
        return float("inf")
    if f(1.0) <= 0:
        return 1.0
    return float(math.ceil(brentq(f, 1.0, m_max)))


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
    for k, i in enumerate(rows):
        sl = slice(starts[i], starts[i + 1])
        sw = np.sqrt(weights[sl])
        y = obs.value[sl] * sw
        A = phi_points[sl] * sw[:, None]
        z = np.linalg.lstsq(A, y, rcond=1e-10)[0]
        tot = float(y @ y)
        out[k] = float(np.sum((y - A @ z) ** 2)) / tot if tot > 0 else 0.0
    return np.clip(out, 0.0, None)


def plot_bound(*, d: int, kappa: float, C_phi: float, L: float, R: float, M: float | None = None,
               n_values: Any = None, m_values: Any = None, eta: float = 0.05, ax: Any = None):
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
        b = [excess_risk_bound(int(n), d, kappa=kappa, C_phi=C_phi, L=L, R=R, m=m, M=M, eta=eta).bound
             for n in n_values]
        ax.loglog(n_values, b, label="fully observed (Prop. 5.1)" if m is None else f"m = {m} (Prop. 5.2)")
    ax.set_xlabel("number of curves n")
    ax.set_ylabel(f"excess-risk bound (prob. {1 - eta:.2f})")
    ax.grid(alpha=0.3, which="both", lw=0.5)
    ax.legend(fontsize=8, frameon=False)
    return fig
