"""Which solver runs: the loss and the solver name decide (one place for that decision)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..losses import GroundLoss, is_square, make_loss
from .iterative import IterativeResult, kpl_iterative
from .partial import exact_partial_ridge
from .points import PointDesign

__all__ = ["SOLVERS", "resolve_solver", "solve_kpl"]


# ----------------------------------------------------------------------------------------------
SOLVERS = ("auto", "eig", "sylvester", "exact_partial", "iterative")
_OPTIONS = {"iterative": {"max_iter", "tol", "memory", "warn", "init"},
            "exact_partial": {"max_iter", "tol", "warn"}}


def resolve_solver(solver: Any, loss: Any) -> tuple[str, GroundLoss]:
    """Check a ``(solver, loss)`` pair and resolve ``solver="auto"``.

    ``"auto"`` is the plug-in closed form (``"eig"``) for the square loss and
    ``"iterative"`` otherwise. The closed forms (``"eig"``, ``"sylvester"``)
    and ``"exact_partial"`` solve square-loss problems only.

    Returns
    -------
    solver : str
    loss : GroundLoss

    Examples
    --------
    >>> resolve_solver("auto", "logcosh(5)")
    ('iterative', LogCosh(gamma=5.0))
    >>> resolve_solver("eig", "logcosh")
    Traceback (most recent call last):
    ...
    ValueError: solver='eig' solves the square loss only; with loss=LogCosh(gamma=1.0) use solver='iterative' ...
    """
    loss = make_loss(loss)
    if not isinstance(solver, str) or solver not in SOLVERS:
        raise ValueError(f"solver must be one of {', '.join(map(repr, SOLVERS))}, got {solver!r}")
    square = is_square(loss)
    if solver == "auto":
        solver = "eig" if square else "iterative"
    if solver in {"eig", "sylvester", "exact_partial"} and not square:
        raise ValueError(f"solver={solver!r} solves the square loss only; with loss={loss!r} use "
                         "solver='iterative' (or 'auto')")
    return solver, loss


def solve_kpl(K: np.ndarray, B: np.ndarray, design: PointDesign, lam: float, solver: str, loss: GroundLoss,
              options: dict[str, Any] | None = None) -> IterativeResult:
    """Run ``"exact_partial"`` or ``"iterative"`` with user options (``solver_options`` of the estimator).

    Examples
    --------
    >>> from fdakpl.data.functional import Observations
    >>> from fdakpl.solvers.points import point_design
    >>> obs = Observations.from_dense(np.array([[1.0], [3.0]]), np.array([0.5]))
    >>> design = point_design(obs, np.ones((1, 1)), np.ones(2))
    >>> from fdakpl.losses import Square
    >>> solve_kpl(np.eye(2), np.eye(1), design, 0.5, "iterative", Square(), {"tol": 1e-9}).coef.ravel()
    array([0.5, 1.5])
    >>> solve_kpl(np.eye(2), np.eye(1), design, 0.5, "iterative", Square(), {"maxiter": 5})
    Traceback (most recent call last):
    ...
    TypeError: unknown solver_options ['maxiter'] for solver='iterative'; allowed: ['init', 'max_iter', ...]
    """
    if solver not in _OPTIONS:
        raise ValueError(f"solve_kpl runs 'exact_partial' or 'iterative', got {solver!r}")
    options = {} if options is None else dict(options)
    unknown = sorted(set(options) - _OPTIONS[solver])
    if unknown:
        raise TypeError(f"unknown solver_options {unknown} for solver={solver!r}; allowed: {sorted(_OPTIONS[solver])}")
    if solver == "exact_partial":
        return exact_partial_ridge(K, B, design, lam, **options)
    return kpl_iterative(K, B, design, lam, loss, **options)
