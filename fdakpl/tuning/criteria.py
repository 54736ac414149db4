"""How lambda (and the kernel widths and ``b``) are chosen: one object per criterion.

* :class:`LOO` -- exact leave-one-curve-out error of the closed-form ridge (the default);
* :class:`GroupLOO` -- exact leave-one-group-out error: curves with the same label (several curves of
  one subject) are left out together, because dependent curves predict each other;
* :class:`GCV` -- pointwise generalised cross-validation (it leaves out single points, and
  undersmooths when points within a curve are dependent);
* :class:`KFold` -- K-fold cross-validation over curves (groups kept in one fold), by refitting;
* :class:`Fixed` -- no choice: a lambda given by the user.

The closed-form criteria score a :class:`~fdakpl.ridge.path.RidgePath` along a lambda grid
(:meth:`Criterion.path_scores`); the summary and the saved model read a criterion's :attr:`~Criterion.name`,
never a display string. :func:`check_grid` is the one check of a tuning grid and :func:`edge_notice` the one
message for a choice on the edge of its grid.

Examples
--------
>>> LOO().name, GroupLOO(np.array(["a", "a", "b"]), "subject").name, GCV().name
('leave-one-curve-out', 'leave-one-group-out (subject)', 'GCV')
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from ..data.validation import check_grid
from ..ridge.path import RidgePath
from ..utils.saved import saved

__all__ = ["DEFAULT_LAMBDAS", "GCV", "LOO", "Criterion", "Fixed", "GroupLOO", "KFold", "check_grid", "edge_notice"]

#: default lambda grid: 21 values, 0.4 decades apart (finer grids gave the same held-out error on DTI;
#: benchmarks/results/tuning_grids.json)
DEFAULT_LAMBDAS = np.geomspace(1e-8, 1.0, 21)


class Criterion:
    """A way of choosing hyper-parameters (see the module docstring).

    Attributes
    ----------
    key : str
        ``"loo"``, ``"group_loo"``, ``"gcv"``, ``"cv"`` or ``"fixed"``.
    closed_form : bool
        Whether it scores a ridge path in closed form (else it refits).
    """

    key: ClassVar[str] = ""
    closed_form: ClassVar[bool] = True

    @property
    def name(self) -> str:
        """How the summary names it."""
        raise NotImplementedError

    @property
    def short(self) -> str:
        """The name as an adjective in messages (``"leave-one-curve-out"``-chosen, ``"5-fold-CV"``-chosen)."""
        return self.name

    def path_scores(self, path: RidgePath, lams: np.ndarray) -> np.ndarray:
        """The criterion at every lambda of ``lams`` on ``path`` (closed-form criteria only), in the units of the
        path's quadratic forms (comparable between paths of one problem at any response size;
        :meth:`~fdakpl.ridge.path.RidgePath.in_units` gives the responses' units)."""
        raise TypeError(f"{self.name} does not score a ridge path in closed form")


@saved()
@dataclass(frozen=True)
class LOO(Criterion):
    """Exact leave-one-curve-out error (penalty ``n lambda`` and mean function held at their full-data values).

    Examples
    --------
    >>> LOO().key, LOO().short
    ('loo', 'leave-one-curve-out')
    """

    key: ClassVar[str] = "loo"

    @property
    def name(self) -> str:
        return "leave-one-curve-out"

    def path_scores(self, path: RidgePath, lams: np.ndarray) -> np.ndarray:
        return path.loo(lams, in_units=False)


@saved("labels", "label")
@dataclass(frozen=True, eq=False)
class GroupLOO(Criterion):
    """Exact leave-one-group-out error: the curves of a group are left out together.

    Parameters
    ----------
    labels : numpy.ndarray
        One group label per curve.
    label : str
        What the groups are (the variable's name), for the summary.

    Examples
    --------
    >>> GroupLOO(np.array([1, 1, 2]), "subject").n_groups
    2
    """

    labels: np.ndarray
    label: str = "groups"
    key: ClassVar[str] = "group_loo"

    @property
    def name(self) -> str:
        return f"leave-one-group-out ({self.label})"

    @property
    def short(self) -> str:
        return "leave-one-group-out"

    @property
    def n_groups(self) -> int:
        """Number of distinct groups."""
        return int(np.unique(self.labels).size)

    def path_scores(self, path: RidgePath, lams: np.ndarray) -> np.ndarray:
        return path.loo(lams, groups=self.labels, in_units=False)


@saved()
@dataclass(frozen=True)
class GCV(Criterion):
    """Pointwise generalised cross-validation ``train / (1 - edf / N)^2``.

    Examples
    --------
    >>> GCV().name
    'GCV'
    """

    key: ClassVar[str] = "gcv"

    @property
    def name(self) -> str:
        return "GCV"

    def path_scores(self, path: RidgePath, lams: np.ndarray) -> np.ndarray:
        err = path.errors(lams, loo=False, in_units=False)
        N = path.problem.n_points
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(err.edf < N, err.train / (1.0 - err.edf / N) ** 2, np.inf)


@saved("n_splits", "random_state", "groups")
@dataclass(frozen=True, eq=False)
class KFold(Criterion):
    """K-fold cross-validation over curves (by refitting; groups, when given, stay in one fold).

    Examples
    --------
    >>> KFold(5).name, KFold(5).short
    ('5-fold CV', '5-fold-CV')
    """

    n_splits: int = 5
    random_state: Any = 0
    groups: np.ndarray | None = field(default=None)
    key: ClassVar[str] = "cv"
    closed_form: ClassVar[bool] = False

    @property
    def name(self) -> str:
        return f"{self.n_splits}-fold CV"

    @property
    def short(self) -> str:
        return f"{self.n_splits}-fold-CV"


@saved("lam")
@dataclass(frozen=True)
class Fixed(Criterion):
    """No choice: the user's lambda.

    Examples
    --------
    >>> Fixed(1e-3).name
    'fixed'
    """

    lam: float = 1e-3
    key: ClassVar[str] = "fixed"
    closed_form: ClassVar[bool] = False

    @property
    def name(self) -> str:
        return "fixed"


def edge_notice(name: str, grid: np.ndarray, value: float, criterion: Criterion, fix: str,
                natural_low: bool = False, natural_high: str | None = None) -> str | None:
    """The message for a tuned value on the edge of its grid (by value, whatever the grid's order), or None.

    Parameters
    ----------
    name : str
        What was tuned (``"lambda"``, ``"width multiple (of the median heuristic) of 'cca'"``, ...).
    grid : numpy.ndarray
        The values tried.
    value : float
        The chosen value.
    criterion : Criterion
        What chose it.
    fix : str
        How to try other values (named in the message).
    natural_low : bool
        The smallest value is a natural bound (``b = 1``: no decay): no message there.
    natural_high : str, optional
        What the largest value means when it is a natural end (no message then either; e.g. the widest
        kernels: the term adds little).

    Examples
    --------
    >>> edge_notice("lambda", np.array([1e-3, 1e-2, 1e-1]), 1e-1, LOO(), "lam_grid=[...]")[:80]
    'the leave-one-curve-out-chosen lambda 0.1 is the largest value of its grid [0.001'
    >>> edge_notice("lambda", np.array([1e-3, 1e-2, 1e-1]), 1e-2, LOO(), "lam_grid=[...]") is None
    True
    """
    g = np.unique(np.asarray(grid, dtype=float))
    if g.size < 2:
        return None
    at_low, at_high = value <= g[0], value >= g[-1]
    if (at_low and natural_low) or (at_high and natural_high is not None) or not (at_low or at_high):
        return None
    side = "smallest" if at_low else "largest"
    shown = ", ".join(f"{v:.3g}" for v in g) if g.size <= 8 else f"{g[0]:.3g}, ..., {g[-1]:.3g} ({g.size} values)"
    return (f"the {criterion.short}-chosen {name} {value:.3g} is the {side} value of its grid [{shown}]; "
            f"extend the grid ({fix})")
