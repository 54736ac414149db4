"""FKRR: functional kernel ridge regression with a separable function-valued kernel (Kadri et al., 2010, 2016)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..data.functional import Observations, quadrature_weights
from ..estimators.base import DATA_PARAMETERS_DOC
from ..kernels import Kernel, Laplace, kernel_or_default
from ..solvers.closed_form import decompose, ridge_coef, ridge_sylvester
from ..utils.docstrings import fill_doc
from ._base import GridRidgeBaseline, responses_on_grid

__all__ = ["FunctionalKRR", "fkrr_system"]


def fkrr_system(grid: np.ndarray, domain: tuple[float, float], output_kernel: Kernel) -> tuple[np.ndarray, np.ndarray]:
    """Discretised output operator of FKRR on a grid: ``(S, w)``.

    The integral operator ``(L y)(theta) = int k_out(theta, t) y(t) dt`` is
    discretised with the trapezoidal weights ``w`` of ``grid`` over
    ``domain`` (Lebesgue measure): ``L = K_out W``. Returned is its
    symmetrised form ``S = W^{1/2} K_out W^{1/2}`` and ``w``.

    Examples
    --------
    >>> S, w = fkrr_system(np.linspace(0, 1, 3), (0.0, 1.0), Laplace(1.0))
    >>> S.shape, float(w.sum())
    ((3, 3), 1.0)
    """
    w = quadrature_weights(grid, domain)
    Kout = output_kernel(grid[:, None])
    sw = np.sqrt(w)
    return sw[:, None] * Kout * sw[None, :], w


@fill_doc(data_parameters=DATA_PARAMETERS_DOC)
class FunctionalKRR(GridRidgeBaseline):
    """FKRR: kernel ridge regression in the function-valued RKHS of ``k_in(x, x') L``.

    Solves ``min_f 1/n sum_i ||y_i - f(x_i)||^2_{L2} + lambda ||f||^2`` for
    the separable operator-valued kernel ``k_in(x, x') L``, with ``L`` the
    integral operator of a kernel ``k_out`` on the response domain with the
    Lebesgue measure (the paper uses the Laplace kernel
    ``exp(-|theta - theta'| / sigma_out)`` on ``[0, 1]``). By the
    representer theorem ``f(x) = sum_i k_in(x, x_i) L alpha_i`` with
    functions ``alpha_i`` solving ``(K kron L + n lambda I) alpha = y``;
    discretised on the response grid (``L = K_out W``, trapezoidal weights
    ``W``) this is the Sylvester equation ``K alpha W K_out + n lambda alpha = Y``.
    ``solver="sylvester"`` solves it by Bartels--Stewart
    (:func:`scipy.linalg.solve_sylvester`, as in the paper), ``"eig"`` by the
    eigendecompositions of ``K`` and ``W^{1/2} K_out W^{1/2}`` (same
    solution, whole lambda path). Both cost
    ``O(n^3 + m^3 + n^2 m + n m^2)`` for ``m`` grid points. Partially
    observed responses are first completed by linear interpolation along the
    grid ("linear smoothing"); irregular ones are interpolated on a uniform
    grid of ``n_grid`` points. Predictions are available at any location:
    ``f(x)(theta) = sum_i k_in(x, x_i) sum_q k_out(theta, theta_q) w_q alpha_iq``.

    Parameters
    ----------
    kernel : Kernel, default Gaussian(1.0)
        Input kernel ``k_in``.
    output_kernel : Kernel, default Laplace(1.0)
        Kernel ``k_out`` of the output operator, on locations.
    lam : float, default 1e-3
    center : bool, default True
    solver : {"eig", "sylvester"}
    n_grid : int, default 100
        Grid size for irregularly sampled (long) responses.
    %(data_parameters)s

    Attributes
    ----------
    dual_coef_ : numpy.ndarray, shape (n, m)
        The functions ``alpha_i`` on ``response_grid_``.

    References
    ----------
    H. Kadri, E. Duflos, P. Preux, S. Canu and M. Davy (2010). Nonlinear
    functional regression: a functional RKHS approach. *AISTATS*.
    H. Kadri, E. Duflos, P. Preux, S. Canu, A. Rakotomamonjy and J. Audiffren
    (2016). Operator-valued kernels for learning from functional response
    data. *JMLR* 17(20), 1--54.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, size=(30, 2)); grid = np.linspace(0, 1, 20)
    >>> Y = np.sin(np.pi * X[:, :1] * grid)
    >>> m = FunctionalKRR(output_kernel=Laplace(0.5), lam=1e-4).fit(X, Y, locations=grid)
    >>> m.predict(X[:2], at=[0.0, 0.33]).shape
    (2, 2)
    """

    _method = "FKRR"

    def __init__(self, kernel: Kernel | None = None, output_kernel: Kernel | None = None, lam: float = 1e-3,
                 center: bool = True, solver: str = "eig", n_grid: int = 100,
                 domain: tuple[float, float] | None = None, interpolate_inputs: bool = False) -> None:
        super().__init__(lam, solver, n_grid, center, domain, interpolate_inputs)
        self.kernel = kernel
        self.output_kernel = output_kernel

    def _output_kernel(self) -> Kernel:
        return kernel_or_default(self.output_kernel, "output_kernel", Laplace(1.0))

    def _check_params(self) -> None:
        super()._check_params()
        self._kernel()
        self._output_kernel()

    def _fit(self, Xv: Any, Xw: Any, obs: Observations, domain: tuple[float, float]) -> None:
        grid, Y = responses_on_grid(obs, domain, self.n_grid)
        S, w = fkrr_system(grid, domain, self._output_kernel())
        K = self._kernel()(Xv, None, Xw)
        sw = np.sqrt(w)
        R = Y * sw  # gamma = alpha W^{1/2} solves K gamma S + n lam gamma = Y W^{1/2}
        I = np.eye(S.shape[0])
        if self.solver == "eig":
            self.decomposition_ = decompose(K, S, I, R)
            gamma = ridge_coef(self.decomposition_, float(self.lam))
        else:
            self.decomposition_ = None
            gamma = ridge_sylvester(K, S, I, R, float(self.lam))
        self.S_, self.R_ = S, R
        self.dual_coef_ = gamma / sw
        self.response_grid_, self.response_weights_ = grid, w
        self.X_fit_, self.X_weights_, self.K_ = Xv, Xw, K

    def _predict_centered(self, Xv: Any, Xw: Any, theta: np.ndarray) -> np.ndarray:
        Kn = self._kernel()(Xv, self.X_fit_, Xw)
        Kout = self._output_kernel()(self.response_grid_[:, None], theta[:, None])
        return (Kn @ self.dual_coef_) @ (self.response_weights_[:, None] * Kout)

    def _centered_path(self, Xv: Any, Xw: Any, theta: np.ndarray, lams: np.ndarray) -> np.ndarray:
        if getattr(self, "decomposition_", None) is None:
            self.decomposition_ = decompose(self.K_, self.S_, np.eye(self.S_.shape[0]), self.R_)
        Kn = self._kernel()(Xv, self.X_fit_, Xw)
        Kout = self._output_kernel()(self.response_grid_[:, None], theta[:, None])
        right = np.sqrt(self.response_weights_)[:, None] * Kout  # W K_out applied to gamma W^{-1/2}
        return np.stack([Kn @ ridge_coef(self.decomposition_, lam) @ right for lam in lams])
