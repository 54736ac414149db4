"""Which of the paper's excess-risk bounds covers a fit, and which of its assumptions hold.

Proposition 5.1 is proved for the closed-form ridge estimator with fully observed responses;
Proposition 5.2 for the plug-in ridge estimator (Definition 4.1) when every curve is observed at
the same number ``m`` of locations drawn independently and uniformly on the domain. Both need the
square loss and the exact kernel. :func:`bound_applicability` returns one of three verdicts:

* ``"applies"``: the fit is the estimator the proposition is about, in its sampling design;
* ``"indicative"``: the estimator is the right one but the data or the kernel are not the proof's
  (locations not uniform, ``m`` varying across curves; dependent curves, ``groups=``, where the proofs
  assume i.i.d. pairs; an unbounded kernel such as ``Linear``, whose ``kappa`` is replaced by the largest
  training ``k(x_i, x_i)``): the number is shown, as an indication;
* ``"not applicable"``: an assumption on the estimator fails (another loss, another solver, an
  approximate kernel, an unknown ``kappa``): no bound is shown.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import stats

from ..losses import is_square, make_loss

__all__ = ["Applicability", "bound_applicability", "loss_name", "sampling_design"]

APPLIES, INDICATIVE, NOT_APPLICABLE = "applies", "indicative", "not applicable"


@dataclass
class Applicability:
    """The verdict on one fit (see the module docstring).

    Attributes
    ----------
    proposition : str or None
        ``"5.1"`` or ``"5.2"`` (the one whose setting the fit is in), ``None`` if neither.
    status : str
        ``"applies"``, ``"indicative"`` or ``"not applicable"``.
    reasons : list of str
        Why the status is not ``"applies"``.
    checks : list of str
        Assumptions that hold, and how the constants were obtained.
    """

    proposition: str | None
    status: str
    reasons: list[str] = field(default_factory=list)
    checks: list[str] = field(default_factory=list)

    @property
    def label(self) -> str:
        """Short text for a summary row, e.g. ``"5.2 (indicative)"``."""
        if self.status == NOT_APPLICABLE:
            return "not applicable"
        return self.proposition if self.status == APPLIES else f"{self.proposition} (indicative)"


def _fmt(x: float) -> str:
    return f"{x:.4g}"


def sampling_design(counts: np.ndarray, location: np.ndarray, domain: tuple[float, float], *,
                    grid: np.ndarray | None = None, grid_index: np.ndarray | None = None,
                    alpha: float = 0.01) -> tuple[list[str], list[str]]:
    """Compare observed locations with Proposition 5.2's design: the same ``m`` per curve, uniform locations.

    Uniformity is tested on the pooled locations: on a grid, by Cochran's Q test that every grid
    point has the same chance of being observed (each curve a block, each grid point a treatment;
    it allows ``m`` to vary across curves); otherwise by a chi-square test on 20 equal bins of the
    domain. Independence between and within curves is assumed, not tested.

    Parameters
    ----------
    counts : (n,) points per curve
    location : (N,) all observed locations
    domain : (lo, hi)
    grid, grid_index : optional
        The common grid and each point's position on it (data from a dense form).
    alpha : float
        Level of the uniformity test.

    Returns
    -------
    violations, checks : list of str

    Examples
    --------
    >>> counts = np.array([2, 2])
    >>> sampling_design(counts, np.array([0.1, 0.6, 0.3, 0.9]), (0.0, 1.0))[0]
    []
    >>> sampling_design(np.array([1, 3]), np.array([0.1, 0.2, 0.5, 0.8]), (0.0, 1.0))[0][0][:39]
    'm varies from 1 to 3 points per curve; '
    """
    bad: list[str] = []
    ok: list[str] = []
    lo_m, hi_m = int(np.min(counts)), int(np.max(counts))
    if lo_m != hi_m:
        bad.append(f"m varies from {lo_m} to {hi_m} points per curve; the proof assumes the same m for every "
                   "curve (the bound uses the smallest)")
    else:
        ok.append(f"every curve has m = {lo_m} points")
    lo, hi = map(float, domain)
    n = counts.size
    if grid is not None and grid_index is not None:
        c = np.bincount(grid_index, minlength=grid.size).astype(float)
        k, N = grid.size, float(c.sum())
        denom = k * N - float(np.sum(counts.astype(float) ** 2))
        if k > 1 and denom > 0:  # Cochran's Q: the same chance of being observed at every grid point
            q = (k - 1) * (k * float(np.sum(c**2)) - N**2) / denom
            p = float(stats.chi2.sf(q, k - 1))
        else:
            p = 1.0
        frac = c / n
        if p < alpha:
            j = int(np.argmin(frac))
            bad.append(f"the locations are not uniform over the grid (Cochran's Q test, p = {p:.2g}): the share of "
                       f"curves observed at a grid point ranges from {100 * frac[j]:.0f}% (at {grid[j]:.4g}) to "
                       f"{100 * frac.max():.0f}%")
        else:
            ok.append(f"observed grid points are consistent with uniform sampling (Cochran's Q test, p = {p:.2g})")
        ok.append(f"locations lie on a grid of {grid.size} points: uniform over the grid stands in for uniform "
                  "on the domain (the plug-in averages then estimate Riemann sums of the inner products)")
    else:
        bins = np.linspace(lo, hi, 21)
        c = np.histogram(np.clip(location, lo, hi), bins=bins)[0].astype(float)
        p = float(stats.chisquare(c).pvalue) if c.sum() > 0 else 1.0
        if p < alpha:
            bad.append(f"the pooled locations are not uniform over [{_fmt(lo)}, {_fmt(hi)}] (chi-square on 20 bins, "
                       f"p = {p:.2g})")
        else:
            ok.append(f"pooled locations are consistent with uniform sampling (chi-square on 20 bins, p = {p:.2g})")
    return bad, ok


def bound_applicability(*, loss: str, solver: str, approx: str | None, fully_observed: bool, integration: str,
                        counts: np.ndarray, location: np.ndarray, domain: tuple[float, float],
                        grid: np.ndarray | None = None, grid_index: np.ndarray | None = None,
                        kappa: float = 1.0, kappa_how: str = "exact", riesz: bool = True,
                        normed: bool = True, n_groups: int | None = None,
                        unbounded_kernel: bool = False) -> Applicability:
    """Which proposition covers a fit, and whether its assumptions hold (see the module docstring).

    Parameters
    ----------
    loss : str
        Name of the ground loss (``"square"`` for the propositions).
    solver : str
        The solver that ran (``"eig"``, ``"sylvester"``, ``"exact_partial"``, ``"iterative"``).
    approx : str or None
        Description of the kernel approximation, ``None`` for the exact kernel.
    fully_observed : bool
    integration : str
        ``"quadrature"`` or ``"plugin"``.
    counts, location, domain, grid, grid_index
        The sampling design (see :func:`sampling_design`).
    kappa, kappa_how : float, str
        The kernel's bound and how it was obtained (:func:`fdakpl.diagnostics.bounds.kernel_kappa`).
    riesz, normed : bool
        Whether the atoms are linearly independent and of unit norm.
    n_groups : int, optional
        The number of groups when the fit has ``groups=`` (curves dependent within a group).
    unbounded_kernel : bool
        Whether ``sup_x k(x, x)`` is infinite (``Linear``, ``SmoothedLinear``).

    Returns
    -------
    Applicability

    Examples
    --------
    >>> a = bound_applicability(loss="logcosh", solver="iterative", approx=None, fully_observed=True,
    ...                         integration="quadrature", counts=np.array([3]), location=np.zeros(3),
    ...                         domain=(0.0, 1.0))
    >>> a.status, a.reasons[0]
    ('not applicable', 'the loss is logcosh: Propositions 5.1 and 5.2 are proved for the square loss only')
    >>> a = bound_applicability(loss="square", solver="eig", approx=None, fully_observed=True,
    ...                         integration="quadrature", counts=np.array([3]), location=np.zeros(3),
    ...                         domain=(0.0, 1.0), n_groups=12)
    >>> a.status, a.reasons[0][:60]
    ('indicative', 'groups= given: curves of a group are dependent, but the prop')
    """
    prop = "5.1" if fully_observed else "5.2"
    stop: list[str] = []
    if loss != "square":
        stop.append(f"the loss is {loss}: Propositions 5.1 and 5.2 are proved for the square loss only")
    if solver == "iterative":
        stop.append("solver='iterative' minimises the loss by L-BFGS-B; the propositions are about the closed-form "
                    "ridge estimator (5.1) and the plug-in ridge estimator (5.2)")
    elif solver == "exact_partial":
        stop.append("solver='exact_partial' computes the exact minimiser of the partially observed square loss, "
                    "a different estimator from the plug-in ridge estimator of Proposition 5.2")
    if approx is not None:
        stop.append(f"the input kernel is approximated ({approx}); the propositions are about the estimator with "
                    "the exact kernel")
    if not np.isfinite(kappa):
        stop.append(f"kappa = sup k(x, x) lambda_max(B) is not available ({kappa_how})")
    checks = [f"kappa: {kappa_how}"]
    if not riesz:
        checks.append("redundant dictionary (c_phi = 0): no step of the proofs uses c_phi or linear independence, "
                      "only ||Phi|| <= C_phi, so the bound extends to it")
    if not normed:
        checks.append("atoms not of unit norm: no step of the proofs uses unit norms (only ||Phi|| <= C_phi and M(d))")
    if stop:
        return Applicability(None, NOT_APPLICABLE, stop, checks)
    data: list[str] = []
    if n_groups is not None:
        data.append(f"groups= given: curves of a group are dependent, but the propositions assume i.i.d. pairs "
                    f"(x_i, y_i); n counts {counts.size} curves where only {n_groups} groups are independent, so "
                    "the bound is optimistic")
    if unbounded_kernel:
        data.append("the kernel is unbounded (sup k(x, x) is infinite, e.g. Linear), but the propositions assume a "
                    "bounded kernel; kappa is replaced by the largest k(x_i, x_i) over the training inputs")
    if fully_observed:
        if integration == "plugin":
            plugin = ("fully observed curves with integration='plugin': the inner products are plug-in averages, "
                      "not quadrature")
            return Applicability(prop, INDICATIVE, [*data, plugin], checks)
        checks.append("fully observed: inner products by quadrature on the grid stand in for the exact L2 ones")
        return Applicability(prop, INDICATIVE if data else APPLIES, data, checks)
    bad, ok = sampling_design(counts, location, domain, grid=grid, grid_index=grid_index)
    if integration != "plugin":  # Proposition 5.2 is about the plug-in averages
        how = "of the curves' interpolants" if integration == "interpolate" else "on each curve's points"
        bad = [f"integration={integration!r}: the inner products are quadrature {how}, not the plug-in averages "
               "of Proposition 5.2", *bad]
    bad = data + bad
    return Applicability(prop, INDICATIVE if bad else APPLIES, bad, checks + ok)


def loss_name(loss: Any) -> str:
    """A ground loss's name as the applicability check wants it (``"square"`` for the square loss).

    Examples
    --------
    >>> loss_name("square"), loss_name(None), loss_name("logcosh(5)")
    ('square', 'square', 'LogCosh(gamma=5.0)')
    """
    return "square" if is_square(loss) else repr(make_loss(loss))
