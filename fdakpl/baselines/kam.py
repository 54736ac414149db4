"""KAM: the kernel additive model for function-to-function regression (the paper's "Barath et al., 2017")."""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from typing import Any

import numpy as np

from ..data.functional import Observations, quadrature_weights
from ..data.validation import check_int
from ..dictionaries import FPCA
from ..estimators.base import DATA_PARAMETERS_DOC
from ..kernels import Gaussian, Kernel, kernel_or_default
from ..solvers.closed_form import decompose, ridge_coef, ridge_sylvester
from ..utils.docstrings import fill_doc
from ..utils.progress import progress as progress_bar
from ._base import GridRidgeBaseline, curve_inputs, responses_on_grid

__all__ = ["KernelAdditiveModel", "kam_input_gram", "kam_output_gram"]


_GRAM_CACHE: OrderedDict[str, np.ndarray] = OrderedDict()
_GRAM_CACHE_SIZE = 32


def _gram_key(*parts: Any) -> str:
    h = hashlib.sha1()
    for p in parts:
        if isinstance(p, np.ndarray):
            a = np.ascontiguousarray(p, dtype=float)
            h.update(str(a.shape).encode())
            h.update(a.tobytes())
        else:
            h.update(repr(p).encode())
    return h.hexdigest()


def kam_input_gram(Xa: np.ndarray, Xb: np.ndarray, grid: np.ndarray, weights: np.ndarray, location_kernel: Kernel,
                   value_kernel: Kernel, progress: bool | None = None, cache: bool = True) -> np.ndarray:
    """Input part of KAM's Gram matrix: ``int int k1(z, z') k3(x_i(z), x'_j(z')) dz dz'``.

    Discretised with the quadrature ``weights`` of the input ``grid``:
    ``A[i, j] = sum_{p,q} w_p w_q k1(z_p, z_q) k3(x_i(z_p), x'_j(z_q))``.
    Cost ``O(n_a n_b t^2)`` kernel evaluations. The matrix depends on the
    inputs only, so the last 32 results are kept (keyed by a hash of the
    arrays and kernels): refitting on the same curves, as cross-validation
    over outputs, corruptions of the outputs or other parameters does, reuses them.

    Parameters
    ----------
    Xa, Xb : numpy.ndarray, shapes (n_a, t), (n_b, t)
        Input curves on ``grid``.
    grid, weights : numpy.ndarray, shape (t,)
    location_kernel : Kernel
        ``k1`` on input locations.
    value_kernel : Kernel
        ``k3`` on input values.
    progress : bool or None, default None
        Show a progress bar over the rows; ``None`` follows the package default
        (``FDAKPL_PROGRESS``, see :mod:`fdakpl.utils.progress`).
    cache : bool, default True
        Look up and store the result in the in-memory cache.

    Returns
    -------
    numpy.ndarray, shape (n_a, n_b)

    Examples
    --------
    >>> grid = np.linspace(0, 1, 5); w = np.full(5, 0.2)
    >>> A = kam_input_gram(np.zeros((2, 5)), np.zeros((1, 5)), grid, w, Gaussian(1e-6), Gaussian(1.0))
    >>> np.round(A, 6)
    array([[0.2],
           [0.2]])
    """
    key = _gram_key(Xa, Xb, grid, weights, location_kernel, value_kernel) if cache else ""
    if cache and key in _GRAM_CACHE:
        _GRAM_CACHE.move_to_end(key)
        return _GRAM_CACHE[key].copy()
    W1 = weights[:, None] * location_kernel(grid[:, None]) * weights[None, :]
    nb, t = Xb.shape
    flat_b = Xb.reshape(-1, 1)
    out = np.empty((Xa.shape[0], nb))
    for i in progress_bar(range(Xa.shape[0]), desc="KAM input Gram", enabled=progress):
        Kv = value_kernel(Xa[i][:, None], flat_b).reshape(t, nb, t)
        out[i] = np.einsum("pjq,pq->j", Kv, W1, optimize=True)
    if cache:
        _GRAM_CACHE[key] = out.copy()
        while len(_GRAM_CACHE) > _GRAM_CACHE_SIZE:
            _GRAM_CACHE.popitem(last=False)
    return out


def kam_output_gram(psi: np.ndarray, weights: np.ndarray, K_theta: np.ndarray) -> np.ndarray:
    """Output part of KAM's Gram matrix: ``int int psi_j(t) k2(t, t') psi_l(t') dt dt'``.

    ``psi`` holds the components on a grid with quadrature ``weights``,
    ``K_theta`` is ``k2`` on that grid; the result is ``Psi^T W K2 W Psi``.

    Examples
    --------
    >>> kam_output_gram(np.ones((3, 1)), np.full(3, 1 / 3), np.ones((3, 3)))
    array([[1.]])
    """
    P = weights[:, None] * psi
    return P.T @ K_theta @ P


@fill_doc(data_parameters=DATA_PARAMETERS_DOC)
class KernelAdditiveModel(GridRidgeBaseline):
    """KAM: nonlinear additive function-to-function model in an RKHS on (input location, output location, value).

    The model of Reimherr, Sriperumbudur and Taoufik (2017), cited by the
    paper as "Barath et al., 2017"::

        y_i(theta) = int h(zeta, theta, x_i(zeta)) dzeta,   h in H_K,

    fitted by ``min_h 1/n sum_i ||y_i - int h(zeta, ., x_i(zeta)) dzeta||^2 + lambda ||h||_K^2``
    with the product kernel ``K = k1(zeta, zeta') k2(theta, theta') k3(s, s')``
    (the paper's equation ``eq :: kernel kam``: three Gaussian kernels).
    Responses are represented on the ``J`` leading functional principal
    components ``psi`` of the (centred, linearly interpolated) training
    responses, with coefficients ``C``. By the representer theorem
    ``h = sum_{ij} alpha_ij eta_ij`` and the system factorises:
    ``A_in alpha A_out + n lambda alpha = C`` with
    ``A_in[i, i'] = int int k1(z, z') k3(x_i(z), x_i'(z')) dz dz'``
    (:func:`kam_input_gram`) and
    ``A_out[j, j'] = int int psi_j(t) k2(t, t') psi_j'(t') dt dt'``
    (:func:`kam_output_gram`), the Kronecker structure the authors did not
    exploit. It is solved by eigendecompositions (``solver="eig"``, whole
    lambda path) or by Bartels--Stewart (``"sylvester"``, needs ``A_out``
    invertible), in ``O(n^3 + J^3 + n^2 J + n J^2)`` time; forming ``A_in``
    costs ``O(n^2 t^2)`` and dominates (``t`` input locations). The
    prediction is ``yhat(theta) = sum_{ij} alpha_ij A_in(x, x_i) int k2(theta, t) psi_j(t) dt``.
    The paper's Lebesgue measures become trapezoidal weights of the grids.

    Parameters
    ----------
    location_kernel : Kernel, default Gaussian(0.1)
        ``k1`` on input locations ``zeta``.
    output_location_kernel : Kernel, default Gaussian(0.1)
        ``k2`` on output locations ``theta``.
    value_kernel : Kernel, default Gaussian(0.1)
        ``k3`` on input values ``x(zeta)``.
    n_atoms : int, default 20
        Number ``J`` of principal components of the responses: the atoms of the output
        dictionary (:class:`~fdakpl.dictionaries.FPCA`), hence fdakpl's name for a number of
        atoms (``n_components`` counts input-side features, as in :class:`~fdakpl.Nystroem`).
    lam : float, default 1e-3
    center : bool, default True
    solver : {"eig", "sylvester"}
    input_points : int, optional
        Resample the input curves linearly on this many equally spaced
        locations before forming ``A_in`` (cost ``O(n^2 t^2)``); default: the
        input grid itself.
    n_grid : int, default 100
        Grid size for irregularly sampled (long) responses.
    %(data_parameters)s

    References
    ----------
    M. Reimherr, B. Sriperumbudur and B. Taoufik (2017). Optimal prediction
    for additive function-on-function regression. arXiv:1708.03372
    (*Electronic Journal of Statistics*, 2018).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> a = rng.uniform(-1, 1, size=(25, 1)); s = np.linspace(0, 1, 15)
    >>> X = a * np.sin(2 * np.pi * s); Y = a**2 * np.cos(np.pi * s) + 0.01 * rng.normal(size=(25, 15))
    >>> m = KernelAdditiveModel(n_atoms=3, value_kernel=Gaussian(0.5), lam=1e-4).fit(X, Y)
    >>> m.dual_coef_.shape
    (25, 3)
    """

    _method = "KAM"

    def __init__(self, location_kernel: Kernel | None = None, output_location_kernel: Kernel | None = None,
                 value_kernel: Kernel | None = None, n_atoms: int = 20, lam: float = 1e-3, center: bool = True,
                 solver: str = "eig", input_points: int | None = None, n_grid: int = 100,
                 domain: tuple[float, float] | None = None, interpolate_inputs: bool = False) -> None:
        super().__init__(lam, solver, n_grid, center, domain, interpolate_inputs)
        self.location_kernel = location_kernel
        self.output_location_kernel = output_location_kernel
        self.value_kernel = value_kernel
        self.n_atoms = n_atoms
        self.input_points = input_points

    def _kernels(self) -> tuple[Kernel, Kernel, Kernel]:
        names = ("location_kernel", "output_location_kernel", "value_kernel")
        ks = tuple(kernel_or_default(getattr(self, name), name, Gaussian(0.1)) for name in names)
        return ks  # type: ignore[return-value]

    def _check_params(self) -> None:
        super()._check_params()
        check_int(self.n_atoms, "n_atoms")
        if self.input_points is not None:
            check_int(self.input_points, "input_points", 2)
        self._kernels()

    def _curves(self, Xv: Any, Xw: Any) -> np.ndarray:
        vals, grid, _, dom = curve_inputs(Xv, Xw, self.input_spec_, self._method)
        if self.input_points is None:
            self.input_grid_ = grid
            self.input_weights_ = quadrature_weights(grid, dom)
            return vals
        new = np.linspace(dom[0], dom[1], int(self.input_points))
        self.input_grid_, self.input_weights_ = new, quadrature_weights(new, dom)
        return np.stack([np.interp(new, grid, v) for v in vals])

    def _fit(self, Xv: Any, Xw: Any, obs: Observations, domain: tuple[float, float]) -> None:
        k1, k2, k3 = self._kernels()
        X = self._curves(Xv, Xw)
        grid, Y = responses_on_grid(obs, domain, self.n_grid)
        w = quadrature_weights(grid, domain)
        fpca = FPCA(int(self.n_atoms)).fit(Observations.from_dense(Y, grid), domain=domain)
        psi = fpca.evaluate(grid)
        C = (Y * w) @ psi
        A_in = kam_input_gram(X, X, self.input_grid_, self.input_weights_, k1, k3)
        A_in = 0.5 * (A_in + A_in.T)
        A_out = kam_output_gram(psi, w, k2(grid[:, None]))
        I = np.eye(psi.shape[1])
        if self.solver == "eig":
            self.decomposition_ = decompose(A_in, A_out, I, C)
            self.dual_coef_ = ridge_coef(self.decomposition_, float(self.lam))
        else:
            self.decomposition_ = None
            self.dual_coef_ = ridge_sylvester(A_in, A_out, I, C, float(self.lam))
        self.components_, self.response_grid_, self.response_weights_ = psi, grid, w
        self.A_in_, self.A_out_, self.scores_ = A_in, A_out, C
        self.X_fit_ = X

    def _new_parts(self, Xv: Any, Xw: Any, theta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        k1, k2, k3 = self._kernels()
        vals, grid, _, _ = curve_inputs(Xv, Xw, self.input_spec_, self._method)
        if self.input_points is not None:
            vals = np.stack([np.interp(self.input_grid_, grid, v) for v in vals])
        A_new = kam_input_gram(vals, self.X_fit_, self.input_grid_, self.input_weights_, k1, k3)
        P = self.response_weights_[:, None] * self.components_
        out_basis = k2(theta[:, None], self.response_grid_[:, None]) @ P  # (len(theta), J)
        return A_new, out_basis

    def _predict_centered(self, Xv: Any, Xw: Any, theta: np.ndarray) -> np.ndarray:
        A_new, out_basis = self._new_parts(Xv, Xw, theta)
        return (A_new @ self.dual_coef_) @ out_basis.T

    def _centered_path(self, Xv: Any, Xw: Any, theta: np.ndarray, lams: np.ndarray) -> np.ndarray:
        if getattr(self, "decomposition_", None) is None:
            self.decomposition_ = decompose(self.A_in_, self.A_out_, np.eye(self.A_out_.shape[0]), self.scores_)
        A_new, out_basis = self._new_parts(Xv, Xw, theta)
        return np.stack([A_new @ ridge_coef(self.decomposition_, lam) @ out_basis.T for lam in lams])
