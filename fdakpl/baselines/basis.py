"""3BE, the triple basis estimator (Oliva, Neiswanger, Póczos et al., 2015), and its kernel extension 1BE."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..data.functional import Observations
from ..data.integration import projection_points
from ..data.validation import check_int, check_number
from ..dictionaries import Dictionary, Fourier, make_dictionary, output_dictionary
from ..estimators.base import DATA_PARAMETERS_DOC
from ..kernels import Kernel
from ..solvers.closed_form import project_observations
from ..utils.docstrings import fill_doc
from ._base import FunctionalBaseline, curve_inputs

__all__ = ["OneBasisEstimator", "TripleBasisEstimator", "basis_coefficients", "random_fourier_features"]


def _solve_gram(N: np.ndarray, G: np.ndarray) -> np.ndarray:
    """Coefficients ``N G^+`` of the L2 projection (``N`` itself for an orthonormal family)."""
    if np.allclose(G, np.eye(G.shape[0]), rtol=0, atol=1e-12):
        return N
    return N @ np.linalg.pinv(G, rcond=1e-10, hermitian=True)


def basis_coefficients(values: np.ndarray, grid: np.ndarray, weights: np.ndarray, dictionary: Dictionary) -> np.ndarray:
    """Coefficients of curves on a fitted dictionary by quadrature, ``(n, d)``.

    Inner products ``<x_i, phi_l>`` by the quadrature ``weights`` on
    ``grid``, solved against the Gram matrix (minimum-norm least squares), so
    that ``sum_l c_il phi_l`` is the L2 projection of ``x_i`` on the span;
    for an orthonormal dictionary the coefficients are the inner products.

    Examples
    --------
    >>> grid = np.linspace(0, 1, 401); f = Fourier(2, domain=(0, 1)).fit()
    >>> from fdakpl.data.functional import quadrature_weights
    >>> c = basis_coefficients(np.sqrt(2) * np.cos(2 * np.pi * grid)[None], grid, quadrature_weights(grid), f)
    >>> np.round(c, 4)
    array([[0., 1., 0., 0., 0.]])
    """
    N = (values * weights) @ dictionary.evaluate(grid)
    return _solve_gram(N, dictionary.gram())


def random_fourier_features(Z: np.ndarray, omega: np.ndarray, offset: np.ndarray) -> np.ndarray:
    """Random Fourier features ``sqrt(2 / J) cos(Z omega + offset)`` (Rahimi and Recht, 2008).

    With ``omega ~ N(0, I / sigma^2)`` and ``offset ~ U(0, 2 pi)``, the inner
    products of the features approximate the Gaussian kernel
    ``exp(-||z - z'||^2 / (2 sigma^2))``.

    Examples
    --------
    >>> random_fourier_features(np.zeros((1, 2)), np.ones((2, 2)), np.zeros(2))
    array([[1., 1.]])
    """
    J = omega.shape[1]
    return np.sqrt(2.0 / J) * np.cos(Z @ omega + offset)


#: the References section of 1BE and 3BE
OLIVA_REFERENCES = """\
References
----------
J. Oliva, W. Neiswanger, B. Póczos, E. Xing, H. Trac, S. Ho and
J. Schneider (2015). Fast function to function regression. *AISTATS*."""


class _ProjectionBase(FunctionalBaseline):
    """Output side of 1BE/3BE: coefficients of the (centred) responses on an output dictionary."""

    def __init__(self, dictionary: str | Dictionary = "auto", lam: float = 1e-3, center: bool = True,
                 integration: str = "auto", domain: tuple[float, float] | None = None,
                 interpolate_inputs: bool = False) -> None:
        """The parameters of the output side and the data handling, shared by 1BE and 3BE."""
        super().__init__(center, domain, interpolate_inputs)
        self.dictionary = dictionary
        self.lam = lam
        self.integration = integration

    def _check_params(self) -> None:
        check_number(self.lam, "lam")

    def _output_coefficients(self, obs: Observations, domain: tuple[float, float]) -> np.ndarray:
        dic = output_dictionary(self.dictionary, obs.location).fit(obs, domain=domain)
        points, weights, self.integration_ = projection_points(obs, domain, self.integration)
        phi = dic.evaluate(obs.grid if obs.grid is not None else obs.location)
        self.dictionary_ = dic
        self.gram_ = dic.gram()
        self.nu_ = project_observations(points, phi if points is obs else dic.evaluate(points.grid), weights)
        return _solve_gram(self.nu_, self.gram_)


@fill_doc(data_parameters=DATA_PARAMETERS_DOC, references=OLIVA_REFERENCES)
class OneBasisEstimator(_ProjectionBase):
    """1BE: kernel ridge regressions of the output basis coefficients on the inputs.

    The (centred) response curves are represented by their coefficients on an
    orthonormal output family (estimated by quadrature for fully observed
    curves, by the plug-in ``|Theta| / m_i sum_p y_ip phi(theta_ip)`` for
    partially observed ones, as KPL); each coefficient is regressed on the
    inputs by a kernel ridge regression, all sharing the kernel matrix and
    ``lambda``: ``A = (K + n lambda I)^{-1} C``. This is the paper's
    extension of 3BE to non-functional inputs, and equals plug-in KPL with an
    orthonormal dictionary and ``B = I``. For a non-orthonormal dictionary the
    coefficients are those of the L2 projection (inner products solved
    against the Gram matrix). Cost ``O(n^3 + n^2 d)``.

    Parameters
    ----------
    dictionary : str or Dictionary, default "auto"
        Output family (``"auto"``: as :class:`~fdakpl.KPLRegressor`, hat
        functions on at most 21 response locations, else Fourier with 10
        frequencies).
    kernel : Kernel, default Gaussian(1.0)
        Input kernel.
    lam : float, default 1e-3
        Regularisation (the objective averages the squared losses over samples).
    center : bool, default True
    integration : {"auto", "interpolate", "quadrature", "plugin"}
        See :mod:`fdakpl.data.integration`.
    %(data_parameters)s

    %(references)s

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, size=(30, 2)); grid = np.linspace(0, 1, 20)
    >>> Y = np.sin(np.pi * X[:, :1] * grid)
    >>> m = OneBasisEstimator(Fourier(3), lam=1e-3).fit(X, Y, locations=grid)
    >>> m.dual_coef_.shape
    (30, 7)
    """

    _method = "1BE"

    def __init__(self, dictionary: str | Dictionary = "auto", kernel: Kernel | None = None, lam: float = 1e-3,
                 center: bool = True, integration: str = "auto", domain: tuple[float, float] | None = None,
                 interpolate_inputs: bool = False) -> None:
        super().__init__(dictionary, lam, center, integration, domain, interpolate_inputs)
        self.kernel = kernel

    def _check_params(self) -> None:
        super()._check_params()
        self._kernel()

    def _fit(self, Xv: Any, Xw: Any, obs: Observations, domain: tuple[float, float]) -> None:
        C = self._output_coefficients(obs, domain)
        K = self._kernel()(Xv, None, Xw)
        n = K.shape[0]
        self.dual_coef_ = np.linalg.solve(K + n * float(self.lam) * np.eye(n), C)
        self.X_fit_, self.X_weights_, self.K_, self.output_coef_ = Xv, Xw, K, C

    def _predict_centered(self, Xv: Any, Xw: Any, theta: np.ndarray) -> np.ndarray:
        Kn = self._kernel()(Xv, self.X_fit_, Xw)
        return (Kn @ self.dual_coef_) @ self.dictionary_.evaluate(theta).T

    def _centered_path(self, Xv: Any, Xw: Any, theta: np.ndarray, lams: np.ndarray) -> np.ndarray:
        s, U = np.linalg.eigh(self.K_)
        s = np.clip(s, 0.0, None)
        UtC = U.T @ self.output_coef_
        Kn = self._kernel()(Xv, self.X_fit_, Xw)
        KnU, phi = Kn @ U, self.dictionary_.evaluate(theta).T
        n = self.K_.shape[0]
        return np.stack([KnU @ (UtC / (s + n * lam)[:, None]) @ phi for lam in lams])


@fill_doc(data_parameters=DATA_PARAMETERS_DOC, references=OLIVA_REFERENCES)
class TripleBasisEstimator(_ProjectionBase):
    """3BE: basis coefficients in and out, random-feature ridge regression in between.

    Input curves are projected on an input family (coefficients
    ``beta_in``, by quadrature on the input grid), response curves on an
    output family (coefficients ``C``, quadrature or plug-in as KPL); each
    output coefficient is regressed on ``beta_in`` by ridge regression on
    ``J`` random Fourier features ``R(beta_in)`` of the Gaussian kernel
    ``exp(-||b - b'||^2 / (2 sigma^2))``: ``W = (R^T R + n lambda I)^{-1} R^T C``
    (one factorisation for all coefficients). The prediction at ``x`` is
    ``R(beta_in(x)) W phi(theta)``. Oliva et al. use orthonormal families;
    for a non-orthonormal one the coefficients are those of the L2
    projection. Cost ``O(n t c + n J c + n J^2 + J^3 + J^2 d)`` (``t`` input
    locations, ``c`` input and ``d`` output atoms).

    Parameters
    ----------
    input_dictionary : str or Dictionary, default "auto"
        Input family (``"auto"``: Fourier with 10 frequencies).
    dictionary : str or Dictionary, default "auto"
        Output family (``"auto"``: as for :class:`OneBasisEstimator`).
    n_components : int, default 200
        Number ``J`` of random Fourier features on the input side (scikit-learn's name, as for
        :class:`~fdakpl.RandomFourierFeatures`).
    sigma : float, default 1.0
        Scale of the approximated Gaussian kernel on input coefficients.
    lam : float, default 1e-3
    random_state : int, numpy.random.Generator or None, default 0
        Seed of the random features; the default 0 gives the same fit on every run, ``None``
        draws fresh randomness.
    center : bool, default True
    integration : {"auto", "interpolate", "quadrature", "plugin"}
    %(data_parameters)s

    Attributes
    ----------
    input_coef_ : numpy.ndarray, shape (n, c)
    omega_, offset_ : random feature frequencies ``(c, J)`` and phases ``(J,)``
    weights_ : numpy.ndarray, shape (J, d)

    %(references)s

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> a = rng.uniform(-1, 1, size=(30, 1)); s = np.linspace(0, 1, 50)
    >>> X = a * np.sin(2 * np.pi * s); Y = a**2 * np.cos(np.pi * s)
    >>> m = TripleBasisEstimator(Fourier(3), Fourier(3), n_components=50, sigma=1.0)
    >>> m.fit(X, Y).predict(X[:2]).shape
    (2, 50)
    """

    _method = "3BE"

    def __init__(self, input_dictionary: str | Dictionary = "auto", dictionary: str | Dictionary = "auto",
                 n_components: int = 200, sigma: float = 1.0, lam: float = 1e-3, random_state: Any = 0,
                 center: bool = True, integration: str = "auto", domain: tuple[float, float] | None = None,
                 interpolate_inputs: bool = False) -> None:
        super().__init__(dictionary, lam, center, integration, domain, interpolate_inputs)
        self.input_dictionary = input_dictionary
        self.n_components = n_components
        self.sigma = sigma
        self.random_state = random_state

    def _check_params(self) -> None:
        super()._check_params()
        check_number(self.sigma, "sigma")
        check_int(self.n_components, "n_components")

    def _input_coefficients(self, Xv: Any, Xw: Any) -> np.ndarray:
        vals, grid, w, _ = curve_inputs(Xv, Xw, self.input_spec_, self._method)
        return basis_coefficients(vals, grid, w, self.input_dictionary_)

    def _fit(self, Xv: Any, Xw: Any, obs: Observations, domain: tuple[float, float]) -> None:
        vals, grid, _, dom = curve_inputs(Xv, Xw, self.input_spec_, self._method)
        spec = Fourier(10) if isinstance(self.input_dictionary, str) and self.input_dictionary == "auto" \
            else self.input_dictionary
        self.input_dictionary_ = make_dictionary(spec).fit(Observations.from_dense(vals, grid), domain=dom)
        beta = self._input_coefficients(Xv, Xw)
        C = self._output_coefficients(obs, domain)
        rng = np.random.default_rng(self.random_state)
        J = int(self.n_components)
        self.omega_ = rng.normal(0.0, 1.0 / float(self.sigma), size=(beta.shape[1], J))
        self.offset_ = rng.uniform(0.0, 2.0 * np.pi, size=J)
        R = random_fourier_features(beta, self.omega_, self.offset_)
        n = R.shape[0]
        nlam = n * float(self.lam)
        if J <= n:
            self.weights_ = np.linalg.solve(R.T @ R + nlam * np.eye(J), R.T @ C)
        else:  # dual form, same solution
            self.weights_ = R.T @ np.linalg.solve(R @ R.T + nlam * np.eye(n), C)
        self.input_coef_, self.features_, self.output_coef_ = beta, R, C

    def _predict_centered(self, Xv: Any, Xw: Any, theta: np.ndarray) -> np.ndarray:
        R = random_fourier_features(self._input_coefficients(Xv, Xw), self.omega_, self.offset_)
        return (R @ self.weights_) @ self.dictionary_.evaluate(theta).T

    def _centered_path(self, Xv: Any, Xw: Any, theta: np.ndarray, lams: np.ndarray) -> np.ndarray:
        U, s, Vt = np.linalg.svd(self.features_, full_matrices=False)
        UtC = U.T @ self.output_coef_
        Rn = random_fourier_features(self._input_coefficients(Xv, Xw), self.omega_, self.offset_)
        RnV, phi = Rn @ Vt.T, self.dictionary_.evaluate(theta).T
        n = self.features_.shape[0]
        return np.stack([RnV @ ((s / (s**2 + n * lam))[:, None] * UtC) @ phi for lam in lams])
