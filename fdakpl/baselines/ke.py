"""KE: the functional Nadaraya--Watson kernel estimator (Ferraty, Laksaci, Tadj and Vieu, 2011)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..data.functional import Observations
from ..data.validation import check_number
from ..estimators.base import DATA_PARAMETERS_DOC
from ..kernels import squared_distances
from ..utils.docstrings import fill_doc
from ._base import FunctionalBaseline

__all__ = ["KernelEstimator", "nadaraya_watson"]


def nadaraya_watson(sqdist: np.ndarray, Y: np.ndarray, bandwidth: float) -> np.ndarray:
    """Nadaraya--Watson averages of curves with missing values, pointwise over observed values.

    ``Yhat[i, p] = sum_j w_ij y_jp / sum_j w_ij`` over the training curves
    ``j`` observed at location ``p``, with Gaussian weights
    ``w_ij = exp(-d_ij^2 / (2 h^2))``. Weights are shifted by each row's
    smallest distance before exponentiation, so the nearest curve always
    weighs 1 and no row underflows. A location that no training curve
    observes is filled by linear interpolation of the row along the
    locations (constant beyond the ends).

    Parameters
    ----------
    sqdist : numpy.ndarray, shape (n_new, n)
        Squared distances between new and training inputs.
    Y : numpy.ndarray, shape (n, m)
        Training curves on a common grid, NaN where unobserved.
    bandwidth : float
        ``h > 0``.

    Returns
    -------
    numpy.ndarray, shape (n_new, m)

    Examples
    --------
    >>> Y = np.array([[0.0, np.nan], [2.0, 4.0]])
    >>> nadaraya_watson(np.array([[0.0, 0.0]]), Y, 1.0)
    array([[1., 4.]])
    """
    logw = -(sqdist - sqdist.min(axis=1, keepdims=True)) / (2.0 * bandwidth**2)
    w = np.exp(logw)
    mask = ~np.isnan(Y)
    num = w @ np.where(mask, Y, 0.0)
    den = w @ mask.astype(float)
    ok = den > 0
    out = np.full(num.shape, np.nan)
    out[ok] = num[ok] / den[ok]
    if not ok.all():
        pos = np.arange(Y.shape[1], dtype=float)
        for i in np.nonzero(~ok.all(axis=1))[0]:
            good = ok[i]
            if not good.any():  # pragma: no cover - impossible: the nearest curve has weight 1
                raise ValueError("no training curve is observed anywhere; cannot form Nadaraya-Watson averages")
            out[i, ~good] = np.interp(pos[~good], pos[good], out[i, good])
    return out


@fill_doc(data_parameters=DATA_PARAMETERS_DOC)
class KernelEstimator(FunctionalBaseline):
    """KE: functional Nadaraya--Watson estimator with a Gaussian kernel on L2 distances.

    The prediction at ``x`` is the weighted average of the training curves
    ``sum_i K(d(x, x_i) / h) y_i / sum_i K(d(x, x_i) / h)`` with
    ``K(u) = exp(-u^2 / 2)`` and ``d`` the L2 distance between input curves
    (Euclidean distance for vectors; the sum of the squared distances of the
    terms for a mapping of terms), the estimator studied by Ferraty, Laksaci,
    Tadj and Vieu (2011) for responses in Banach spaces with the semi-metric
    ``d``. The paper uses it without centring. With partially observed
    responses, each location averages only the training curves observed
    there (weights renormalised per location).

    Fitting only stores the data; predicting ``n_new`` curves costs
    ``O(n_new n (t + m))`` for ``n`` training curves, ``t`` input and ``m``
    response locations.

    Parameters
    ----------
    bandwidth : float, default 1.0
        ``h > 0``, in the units of the input distance.
    center : bool, default False
        Subtract the training mean function (it cancels in the averages
        except where responses are missing).
    %(data_parameters)s

    Attributes
    ----------
    Y_train_ : numpy.ndarray, shape (n, m)
        Training curves on ``grid_`` (NaN where unobserved).

    References
    ----------
    F. Ferraty, A. Laksaci, A. Tadj and P. Vieu (2011). Kernel regression
    with functional response. *Electronic Journal of Statistics* 5, 159--171.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, size=(30, 2)); grid = np.linspace(0, 1, 20)
    >>> Y = np.sin(np.pi * X[:, :1] * grid)
    >>> KernelEstimator(bandwidth=0.3).fit(X, Y, locations=grid).predict(X[:2]).shape
    (2, 20)
    """

    _method = "KE"

    def __init__(self, bandwidth: float = 1.0, center: bool = False, domain: tuple[float, float] | None = None,
                 interpolate_inputs: bool = False) -> None:
        super().__init__(center, domain, interpolate_inputs)
        self.bandwidth = bandwidth

    def _check_params(self) -> None:
        check_number(self.bandwidth, "bandwidth")

    def _fit(self, Xv: Any, Xw: Any, obs: Observations, domain: tuple[float, float]) -> None:
        if obs.grid is not None and obs.grid_index is not None:
            grid, Y = obs.grid, obs.to_dense()
        else:
            uniq = np.unique(obs.location)
            grid = uniq if uniq.size <= 1000 else np.linspace(domain[0], domain[1], 200)
            Y = np.full((obs.n_samples, grid.size), np.nan)
            starts = np.searchsorted(obs.index, np.arange(obs.n_samples + 1))
            for i in range(obs.n_samples):
                loc, val = obs.location[starts[i]:starts[i + 1]], obs.value[starts[i]:starts[i + 1]]
                inside = (grid >= loc.min()) & (grid <= loc.max())
                Y[i, inside] = np.interp(grid[inside], loc, val)
        self.X_fit_, self.X_weights_ = Xv, Xw
        self.Y_train_, self.response_grid_ = Y, grid

    def _predict_centered(self, Xv: Any, Xw: Any, theta: np.ndarray) -> np.ndarray:
        D2 = squared_distances(Xv, self.X_fit_, Xw)
        on_grid = nadaraya_watson(D2, self.Y_train_, float(self.bandwidth))
        grid = self.response_grid_
        if theta.shape == grid.shape and np.array_equal(theta, grid):
            return on_grid
        if grid.size == 1:
            return np.repeat(on_grid, theta.size, axis=1)
        return np.stack([np.interp(theta, grid, row) for row in on_grid])
