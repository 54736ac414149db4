"""Bayesian (Wahba--Nychka) pointwise bands of the coefficient surface of a linear-kernel KPL fit.

A KPL fit with a linear-type kernel ``k(x, x') = <L x, L x'>`` on one functional term is the functional
linear model ``h(x) = Gamma^T L x`` (``Gamma``: ``p x d``, one column per atom) fitted by

.. math::

    \\min_\\Gamma \\frac{1}{n}\\sum_i \\sum_p c_{ip}\\,(y_{ip} - \\phi(\\theta_{ip})^T \\Gamma^T L x_i)^2
        + \\lambda\\,\\mathrm{tr}(\\Gamma B^{-1} \\Gamma^T),

the posterior mean of the Gaussian model ``y_ip = signal + e_ip`` (``Var e_ip = sigma2 / c_ip``) with the
prior ``vec(Gamma) ~ N(0, sigma2 / (n lambda) B kron I)``. The posterior covariance is
``sigma2 (G kron Z^T Z + n lambda B^{-1} kron I)^{-1}`` (``Z = X L^T``, ``G`` the dictionary's Gram
matrix); with ``Z^T Z = U diag(s) U^T`` and ``B^{1/2} G B^{1/2} = V diag(e) V^T`` it is diagonal in the
basis ``B^{1/2} V kron U``, so the variance of ``beta(s_p, t) = (R Gamma phi(t))_p`` (``R = W^{-1} L^T``)
is

.. math::

    \\sigma^2 \\sum_{k,l} \\frac{(R U)_{pk}^2\\,(\\phi(t)^T B^{1/2} V)_l^2}{s_k e_l + n\\lambda},

with ``sigma2`` estimated by the weighted residual sum of squares over ``N - edf`` (``N`` observed
points, ``edf`` the trace of the smoother on them, as in the criteria of lambda; exact when every
curve is observed at the same points). As for smoothing splines (Wahba 1983, Nychka
1988), the posterior variance includes the penalty's bias on average over the surface, so the bands
``estimate +- z sd`` cover about ``1 - alpha`` of the surface's points; measured in
``benchmarks/results/surface_recovery.json`` with :class:`~fdakpl.roughness_kernels.PenalizedLinear`,
whose prior is a smoothness prior (with :class:`~fdakpl.kernels.Linear` the prior is white noise in ``s``
and the bands have no such property).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ..kernels import Linear, Product, SmoothedLinear, Sum
from ..roughness_kernels import PenalizedLinear

__all__ = ["feature_map", "posterior_sd"]


def feature_map(kernel: Any, weights: np.ndarray | None, m: int) -> tuple[np.ndarray, np.ndarray]:
    """``(L, R)`` of a linear-type kernel: ``k(x, x') = <L x, L x'>`` and ``beta = R Gamma`` on the grid.

    ``R = W^{-1} L^T``: ``int x beta = <L x, Gamma>`` for every curve ``x``.

    Examples
    --------
    >>> w = np.full(5, 0.25); w[[0, -1]] = 0.125
    >>> L, R = feature_map(Linear(), w, 5)
    >>> x = np.arange(5.0)
    >>> bool(np.isclose((L @ x) @ (L @ x), Linear()(x[None], weights=w)[0, 0]))
    True
    """
    w = np.ones(m) if weights is None else np.asarray(weights, dtype=float)
    if isinstance(kernel, PenalizedLinear):
        V, d = kernel.basis(m if weights is None else w)
        L = (V.T * w) / np.sqrt(d)[:, None]
    elif isinstance(kernel, SmoothedLinear) and kernel.bandwidth > 0:
        L = np.sqrt(w)[:, None] * kernel.smoother(m if weights is None else w)
    elif isinstance(kernel, (Linear, SmoothedLinear)):
        L = np.diag(np.sqrt(w))
    else:
        raise ValueError(f"Bayesian bands need a Linear, SmoothedLinear or PenalizedLinear kernel, not {kernel!r}")
    return L, L.T / w[:, None]


def _single_term_kernel(est: Any, term: str) -> tuple[Any, np.ndarray, np.ndarray | None]:
    kernel = est.kernel_
    X, w = est.X_fit_, est.X_weights_
    if isinstance(kernel, (Product, Sum)):
        if list(kernel.kernels) != [term]:
            raise ValueError(f"Bayesian bands need a model with the one functional term {term!r} (here: "
                             f"{list(kernel.kernels)}); use method='basic' (bootstrap over curves)")
        kernel = kernel.kernels[term]
    if isinstance(X, Mapping):
        if list(X) != [term]:
            raise ValueError(f"Bayesian bands need a model with the one functional term {term!r} (inputs: "
                             f"{list(X)}); use method='basic' (bootstrap over curves)")
        X, w = X[term], (w or {}).get(term)
    return kernel, np.asarray(X, dtype=float), w


def posterior_sd(est: Any, term: str, theta: np.ndarray) -> tuple[np.ndarray, dict[str, float]]:
    """Posterior standard deviation of ``beta(s_p, theta)`` (module docstring) and the quantities used.

    Parameters
    ----------
    est : KPLRegressor
        A closed-form (square-loss) fit with a linear-type kernel on the single functional term ``term``.
    term : str
    theta : numpy.ndarray
        Response locations.

    Returns
    -------
    sd : numpy.ndarray, shape (m_term, len(theta))
    info : dict
        ``sigma2`` (noise variance per unit weight), ``edf``, ``n_points``.

    Examples
    --------
    >>> from fdakpl import BSpline, FunctionalRegression, datasets
    >>> ds, _ = datasets.make_linear_surface(40, m_in=15, m_out=12, random_state=0)
    >>> res = FunctionalRegression("y ~ x", ds, kernels={"x": PenalizedLinear()}, dictionary=BSpline(6),
    ...                            progress=False).fit()
    >>> sd, info = posterior_sd(res.estimator, "x", ds["t"].values)
    >>> sd.shape, bool((sd > 0).all())
    ((15, 12), True)
    """
    if getattr(est, "solver_", None) not in {"eig", "sylvester"}:  # the closed forms: square loss, every point
        raise ValueError("Bayesian bands need a closed-form square-loss fit (solver 'eig' or 'sylvester'); "
                         "use method='basic' (bootstrap over curves)")
    kernel, X, w = _single_term_kernel(est, term)
    L, R = feature_map(kernel, w, X.shape[1])
    problem = est.problem_
    n = X.shape[0]
    Z = X @ L.T
    s, U = np.linalg.eigh(Z.T @ Z)
    s = np.clip(s, 0.0, None)
    B = est.B_
    ev, Q = np.linalg.eigh(B)
    B_half = (Q * np.sqrt(np.clip(ev, 0.0, None))) @ Q.T
    e, Vo = np.linalg.eigh(B_half @ est.gram_ @ B_half)
    e = np.clip(e, 0.0, None)
    nlam = n * float(est.lam) * float(problem.lam_unit)
    denom = np.outer(s, e) + nlam  # (p, d)
    obs, phi = problem.centred, problem.phi
    rows = obs.grid_index if phi.shape[0] != obs.index.size else np.arange(obs.index.size)
    # edf = trace of the smoother y -> y_hat on the observed points: the atoms' Gram by the points' weights
    # (averaged over curves: exact when all curves are observed at the same points)
    phi_obs = phi[rows]
    Gq = Vo.T @ B_half @ (phi_obs.T @ (problem.weights[:, None] * phi_obs) / n) @ B_half @ Vo
    edf = float(np.sum(np.outer(s, np.diag(Gq)) / denom))
    H = est.K_ @ est.dual_coef_B_  # fitted dictionary coefficients of the training curves
    resid = obs.value - np.einsum("nd,nd->n", H[obs.index], phi[rows])
    N = obs.index.size
    if N - edf <= 1:
        raise ValueError(f"the fit uses {edf:.1f} degrees of freedom of {N} observed points: no residual "
                         "left to estimate the noise; use a larger lambda")
    sigma2 = float(np.sum(problem.weights * resid**2) / (N - edf))
    RU2 = (R @ U) ** 2  # (m, p)
    Pt2 = (est.dictionary_.evaluate(np.asarray(theta, dtype=float)) @ B_half @ Vo) ** 2  # (len(theta), d)
    var = sigma2 * (RU2 @ (1.0 / denom) @ Pt2.T)
    return np.sqrt(var), {"sigma2": sigma2, "edf": edf, "n_points": float(N)}
