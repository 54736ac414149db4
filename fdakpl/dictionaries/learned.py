"""Dictionaries learnt from the training responses (the paper's dictionary-learning problem)."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ..data.functional import Observations, interpolate_missing, quadrature_weights
from ..utils.progress import progress
from ..utils.saved import saved
from .base import GridDictionary, dense_on_grid

__all__ = ["Learned"]


@saved("n_atoms", "tau", "max_iter", "tol", "random_state", "progress", "objective_")
class Learned(GridDictionary):
    """Dictionary learnt from the training responses (sparse coding).

    Solves the paper's dictionary-learning problem on the response grid::

        min_{phi, beta} 1/n sum_i ||y_i - Phi beta_i||^2_{L2} + tau ||beta_i||_1,
        subject to ||phi_l||_{L2} <= 1,

    by alternating optimisation: the codes by the lasso (scikit-learn's
    ``sparse_encode``, coordinate descent) and the atoms by block coordinate
    descent with projection onto the unit L2 ball (Mairal et al., 2009). L2
    norms use the grid's trapezoidal weights. Partially observed curves are
    completed by linear interpolation along the grid before learning (stated
    in the summary). All atoms have scale 0.

    Parameters
    ----------
    n_atoms : int
    tau : float
        Weight of the l1 penalty on the codes.
    max_iter : int
        Maximum number of alternations.
    tol : float
        Stop when the relative decrease of the objective falls below ``tol``.
    random_state : int, numpy.random.Generator or None, default 0
        Seed of the initial atoms (random training curves); the default 0 learns the same
        dictionary on every run, ``None`` draws fresh randomness.
    progress : bool or None, default None
        Show a progress bar; ``None`` follows the package default (``FDAKPL_PROGRESS``, see
        :mod:`fdakpl.utils.progress`).
    domain : (float, float), optional

    Attributes
    ----------
    objective_ : list of float
        Objective after each alternation.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> grid = np.linspace(0, 1, 40)
    >>> Y = rng.normal(size=(30, 3)) @ np.vstack([np.sin(k * np.pi * grid) for k in (1, 2, 3)])
    >>> d = Learned(3, tau=0.01, random_state=0, progress=False).fit(Observations.from_dense(Y, grid))
    >>> bool(np.all(np.diag(d.gram()) <= 1 + 1e-9))
    True
    """

    data_dependent = True

    def __init__(self, n_atoms: int = 20, tau: float = 0.1, max_iter: int = 100, tol: float = 1e-6,
                 random_state: Any = 0, progress: bool | None = None,
                 domain: tuple[float, float] | None = None) -> None:
        self.n_atoms = n_atoms
        self.tau = tau
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state
        self.progress = progress
        self.domain = domain

    def _setup(self, obs: Observations | None) -> None:
        from sklearn.decomposition import sparse_encode
        from sklearn.exceptions import ConvergenceWarning

        assert obs is not None
        grid, Y = dense_on_grid(obs, self.domain_)
        rows = ~np.all(np.isnan(Y), axis=1)
        Y = interpolate_missing(Y[rows], grid, "response")
        k = int(self.n_atoms)
        if k < 1:
            raise ValueError(f"n_atoms must be >= 1, got {self.n_atoms}")
        if self.tau <= 0:
            raise ValueError(f"tau must be > 0, got {self.tau}")
        sw = np.sqrt(quadrature_weights(grid, self.domain_))
        X = Y * sw  # discrete l2 norm of a row == L2 norm of the curve
        n = X.shape[0]
        rng = np.random.default_rng(self.random_state)
        D = X[rng.choice(n, size=k, replace=n < k)] + 1e-3 * rng.normal(size=(k, X.shape[1]))
        D /= np.maximum(np.linalg.norm(D, axis=1, keepdims=True), 1e-12)
        self.objective_: list[float] = []
        # sklearn's lasso minimises 1/2 ||x - u D||^2 + alpha ||u||_1 per row; ours is
        # ||x - u D||^2 + tau ||u||_1, hence alpha = tau / 2.
        alpha = self.tau / 2.0
        bar = progress(range(int(self.max_iter)), desc="dictionary learning", enabled=self.progress)
        prev = np.inf
        U = None
        for _ in bar:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)  # warm-started; the outer loop iterates
                U = sparse_encode(X, D, algorithm="lasso_cd", alpha=alpha, max_iter=5000, init=U)
            A = U.T @ U
            Bm = U.T @ X
            for j in range(k):
                if A[j, j] < 1e-12:  # unused atom: re-seed on the worst-fitted curve
                    resid = np.linalg.norm(X - U @ D, axis=1)
                    D[j] = X[np.argmax(resid)] / max(resid.max(), 1e-12)
                    continue
                D[j] += (Bm[j] - A[j] @ D) / A[j, j]
                D[j] /= max(1.0, np.linalg.norm(D[j]))
            obj = float((np.sum((X - U @ D) ** 2) + self.tau * np.abs(U).sum()) / n)
            self.objective_.append(obj)
            if prev - obj <= self.tol * max(abs(obj), 1e-300):
                break
            prev = obj
        self.grid_ = grid
        self.values_ = (D / sw).T
        self.scales_ = np.zeros(k, dtype=int)
