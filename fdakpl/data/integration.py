"""Per-point integration weights: quadrature on a common grid, or the paper's plug-in ``|Theta| / m_i``."""

from __future__ import annotations

import numpy as np

from .functional import Observations, quadrature_weights

__all__ = ["integration_weights"]


def integration_weights(obs: Observations, domain: tuple[float, float], mode: str = "auto") -> tuple[np.ndarray, str]:
    """Per-point weights ``c_ip`` that turn sums over observed points into L2 inner products.

    ``"quadrature"``: trapezoidal weights of the common grid over the domain
    (fully observed curves); ``"plugin"``: ``|Theta| / m_i``, the paper's
    plug-in estimator (Definition 4.1) for partially observed curves;
    ``"auto"``: quadrature when every curve is observed on the whole grid,
    plug-in otherwise.

    Returns
    -------
    weights : numpy.ndarray, shape (N,)
    mode : str
        The mode actually used.

    Examples
    --------
    >>> obs = Observations.from_dense(np.array([[1.0, np.nan, 2.0]]), np.array([0.0, 0.5, 1.0]))
    >>> integration_weights(obs, (0.0, 1.0))
    (array([0.5, 0.5]), 'plugin')
    """
    if mode not in {"auto", "quadrature", "plugin"}:
        raise ValueError(f"integration must be 'auto', 'quadrature' or 'plugin', got {mode!r}")
    if mode == "auto":
        mode = "quadrature" if obs.fully_observed else "plugin"
    if mode == "quadrature":
        if not obs.fully_observed:
            raise ValueError("integration='quadrature' needs every curve observed on the whole grid; use 'plugin'")
        assert obs.grid is not None and obs.grid_index is not None
        return quadrature_weights(obs.grid, domain)[obs.grid_index], mode
    length = domain[1] - domain[0]
    return (length / obs.counts)[obs.index], mode
