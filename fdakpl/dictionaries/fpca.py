"""Functional principal components of the training responses."""

from __future__ import annotations

import numpy as np

from ..data.functional import Observations, quadrature_weights
from ..utils.notices import warn
from ..utils.saved import saved
from .base import GridDictionary, dense_on_grid

__all__ = ["FPCA"]


@saved("n_atoms", "explained_variance_")
class FPCA(GridDictionary):
    """Functional principal components of the (centred) training responses.

    The covariance is estimated on the response grid from pairwise-complete
    observations (partially observed curves contribute where they are
    observed); eigenfunctions are orthonormal for the grid's trapezoidal
    quadrature and interpolated linearly elsewhere. Irregularly sampled
    responses are first interpolated on a uniform grid of 64 points inside
    each curve's observed range. Scale of an atom: its rank (0 = leading).

    Parameters
    ----------
    n_atoms : int
        Number of leading principal components kept (the atoms).
    domain : (float, float), optional

    Attributes
    ----------
    explained_variance_ : numpy.ndarray
        Eigenvalues of the covariance operator.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> grid = np.linspace(0, 1, 30)
    >>> Y = rng.normal(size=(40, 1)) * np.sin(2 * np.pi * grid) + 0.01 * rng.normal(size=(40, 30))
    >>> d = FPCA(2).fit(Observations.from_dense(Y, grid))
    >>> float(abs(d.gram()[0, 0] - 1.0)) < 0.05
    True
    """

    data_dependent = True

    def __init__(self, n_atoms: int = 10, domain: tuple[float, float] | None = None) -> None:
        self.n_atoms = n_atoms
        self.domain = domain

    def _setup(self, obs: Observations | None) -> None:
        assert obs is not None
        grid, Y = dense_on_grid(obs, self.domain_)
        ok = ~np.isnan(Y)
        Yc = np.where(ok, Y - np.nanmean(Y, axis=0), 0.0)
        counts = ok.T.astype(float) @ ok.astype(float)
        cov = (Yc.T @ Yc) / np.maximum(counts - 1.0, 1.0)
        w = quadrature_weights(grid, self.domain_)
        sw = np.sqrt(w)
        evals, evecs = np.linalg.eigh(sw[:, None] * cov * sw[None, :])
        order = np.argsort(evals)[::-1]
        k = int(self.n_atoms)
        if k < 1:
            raise ValueError(f"n_atoms must be >= 1, got {self.n_atoms}")
        pos = int(np.sum(evals > 1e-12 * max(evals.max(), 1e-300)))
        if k > pos:
            warn(f"FPCA: only {pos} positive eigenvalues; keeping {pos} of {k} components",
                          stacklevel=3)
            k = pos
        order = order[:k]
        self.explained_variance_ = evals[order]
        vecs = evecs[:, order] / sw[:, None]
        signs = np.sign(vecs[np.argmax(np.abs(vecs), axis=0), np.arange(k)])
        self.grid_ = grid
        self.values_ = vecs * signs
        self.scales_ = np.arange(k)
