"""``KPLRegressor``: kernel-based projection learning with scikit-learn conventions."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from ..data.functional import check_domain, check_locations
from ..data.preprocessing import prepare_inputs
from ..data.validation import check_bool, check_lam
from ..dictionaries import (
    Dictionary,
    Fourier,  # noqa: F401  (the examples in the docstrings use it)
)
from ..kernels import Gaussian, Kernel  # noqa: F401  (Gaussian: the examples in the docstrings use it)
from ..ridge.path import RidgePath
from ..ridge.problem import KPLProblem, integration_notice, prepare_problem
from ..solvers.closed_form import ridge_single, ridge_sylvester, sym_sqrt
from ..solvers.dispatch import resolve_solver, solve_kpl
from ..solvers.memory import MEMORY_FRACTION, SMALL_PROBLEM_BYTES, check_exact_memory  # noqa: F401 (re-exported)
from ..solvers.points import point_design
from ..utils.docstrings import fill_doc
from ..utils.notices import warn
from ..utils.saved import saved
from .base import (
    DATA_PARAMETERS_DOC,
    FIT_PARAMETERS_DOC,
    PREDICT_RETURNS_DOC,
    FunctionalEstimator,
)

__all__ = ["KPLRegressor", "check_exact_memory"]

#: from this many training curves, ``solver="auto"`` with the square loss solves for its one lambda by
#: :func:`fdakpl.solvers.closed_form.ridge_single` (Cholesky factorisations, preconditioned conjugate gradients or a
#: tridiagonal reduction) instead of the full
#: eigendecomposition of ``K``; measured (benchmarks/bench_single_lambda.py, one BLAS thread): the single route
#: is 2x (B = 1.5^-scale) to 5x (B = I) faster from n = 250 on; below 500 curves the eigendecomposition costs
#: under 25 ms and is kept, as it gives the whole lambda path (``decomposition_``) for free
SINGLE_LAMBDA_MIN_N = 500


@functools.cache
def _param_names(cls: type) -> list[str]:
    return BaseEstimator._get_param_names.__func__(cls)  # type: ignore[attr-defined]


@saved("dictionary", "kernel", "output_matrix", "lam", "center", "solver", "integration", "domain",
       "interpolate_inputs",
       "loss", "solver_options", "memory_limit",
       # fitted: what prediction, the summary and the diagnostics read (not the training problem or its path)
       "dual_coef_", "dual_coef_B_", "kernel_", "dictionary_", "B_", "gram_", "mean_", "integration_", "solver_",
       "route_", "loss_", "response_scale_", "n_iter_", "converged_", "grad_norm_", "grid_", "response_info_",
       "input_spec_", "n_features_in_", "feature_names_in_", "X_fit_", "X_weights_", "nu_", "n_samples_fit_",
       defaults={"problem_": None, "path_": None, "K_": None, "decomposition_": None})
@fill_doc(data_parameters=DATA_PARAMETERS_DOC)
class KPLRegressor(FunctionalEstimator):
    """Kernel-based projection learning for functional (curve) responses.

    Predicts ``y(theta) = mean(theta) + sum_l h_l(x) phi_l(theta)`` with ``h``
    in the vector-valued RKHS of the separable kernel ``k(x, x') B``, fitted
    by the paper's ridge closed form (Proposition 4.2) for fully observed
    responses and its plug-in estimator (Definition 4.1, Algorithm 1) for
    partially observed ones.

    Parameters
    ----------
    dictionary : str or Dictionary, default "auto"
        A :class:`~fdakpl.dictionaries.Dictionary` or a name for
        :func:`~fdakpl.dictionaries.make_dictionary`. ``"auto"`` is the
        piecewise-linear basis on the observed locations when there are at
        most 21 of them, else a Fourier basis with 10 frequencies (21 atoms).
    kernel : Kernel, default Gaussian(1.0)
        Scalar input kernel ``k``.
    output_matrix : None, float, array or OutputMatrix
        ``B``: identity (``None``), scale decay ``1 / b**scale`` (a number
        ``b``), or a symmetric positive definite matrix.
    lam : float, default 1e-3
        Regularisation ``lambda > 0`` of the objective
        ``(1/n) sum_i ||y_i - f(x_i)||^2 + lambda ||f||^2`` (the loss averaged over curves,
        ``||.||`` the L2 norm of curves and ``||f||`` the RKHS norm). The data term is an
        average, so ``lambda`` corresponds to scikit-learn's ``KernelRidge(alpha=n * lambda)``: with
        an orthonormal dictionary and ``B = I``, ``dual_coef_`` equals
        ``KernelRidge(alpha=n * lam, kernel="precomputed").fit(K, nu_).dual_coef_`` (``nu_`` the
        atom coefficients of the responses). ``lambda`` is measured in the unit of the atoms'
        norms: the fit's penalty is ``lam * u`` with ``u = trace(G) / d`` the mean squared L2
        norm of the atoms (:meth:`~fdakpl.dictionaries.Dictionary.lambda_unit`; 1 for orthonormal
        dictionaries), so a ``lam`` gives the same fit whatever the unit of the response's
        locations; for other dictionaries ``alpha = n * lam * u`` (see the guide's tuning page).
    center : bool, default True
        Centre the responses with the training mean function (as in the
        paper) and add it back to predictions. With a loss other than the
        square loss the centre is the pointwise location that minimises the
        loss (median-like for logcosh), so that outliers do not leak into it.
        Both go through :func:`fdakpl.data.preprocessing.center_responses`: per
        grid point on a common grid; in bins smoothed by a spline for
        irregular sampling (locations seen once, e.g. sparse long data).
    solver : {"auto", "eig", "sylvester", "exact_partial", "iterative"}
        ``"eig"``: the plug-in closed form by eigendecompositions (whole
        lambda path; stable for singular Gram matrices), the fastest;
        ``"auto"`` with the square loss is ``"eig"``, except that from
        ``SINGLE_LAMBDA_MIN_N`` (500) training curves it solves for its one
        lambda without the eigendecomposition of ``K``
        (:func:`fdakpl.solvers.closed_form.ridge_single`; ``decomposition_``
        is then None: pass ``solver="eig"`` to keep the lambda path);
        ``"sylvester"``: the same closed form by a Sylvester solver for one
        lambda; ``"exact_partial"``: the exact square-loss minimiser for
        partially observed curves, with per-curve estimated Gram matrices
        (the paper's ridge-iter-KPL, :func:`fdakpl.solvers.partial.exact_partial_ridge`;
        slower but more robust when curves are observed at few or uneven
        locations -- paper section 4.3, "Link with ridge estimator");
        ``"iterative"``: L-BFGS-B on the integral loss ``loss`` with estimated
        gradients (:func:`fdakpl.solvers.iterative.kpl_iterative`), required for
        losses other than the square loss. ``"auto"``: ``"eig"`` for the square
        loss, ``"iterative"`` otherwise. On fully observed curves,
        ``"exact_partial"`` and ``"iterative"`` use the quadrature Gram matrix
        ``sum_p w_p phi(theta_p) phi(theta_p)^T`` where ``"eig"`` uses the
        dictionary's exact Gram matrix.
    loss : str or GroundLoss, default "square"
        Ground loss of the integral functional loss (:mod:`fdakpl.losses`):
        ``"square"`` (``None``, ``"l2"`` and ``Square()`` are the same loss:
        :func:`fdakpl.losses.is_square`), ``"logcosh"`` / ``"logcosh(gamma)"`` (robust to
        outliers: the paper's logcosh-KPL), ``"huber(delta)"``,
        ``"pseudo_huber(delta)"``, or a :class:`~fdakpl.losses.GroundLoss`.
        The robust losses' parameters are relative to the robust scale of the
        responses by default (``response_scale_``; see :mod:`fdakpl.losses`),
        so the fitted model does not depend on the unit of the response.
    solver_options : dict, optional
        Options of the iterative solvers: ``max_iter``, ``tol``, ``warn``
        (both), ``memory``, ``init`` (``"iterative"``).
    integration : {"auto", "interpolate", "quadrature", "plugin"}
        How inner products ``<y_i, phi_l>`` are estimated (:mod:`fdakpl.data.integration`):
        ``"auto"`` (default) is quadrature on the grid for fully observed curves, of each curve's linear
        interpolant for dense curves with gaps, the plug-in for sparse curves.
    %(data_parameters)s
    memory_limit : None, float or "inf"
        Bytes the exact solvers may use; a larger problem is refused before
        any ``n x n`` allocation, pointing to :class:`~fdakpl.estimators.approx.ApproxKPLRegressor`. Default: the
        environment variable ``FDAKPL_MEMORY_LIMIT``, else half the available
        memory (:func:`check_exact_memory`).

    Attributes
    ----------
    dual_coef_ : numpy.ndarray, shape (n_samples, n_atoms)
        Representer coefficients ``alpha`` (row ``i`` is ``alpha_i``; scikit-learn's ``KernelRidge``
        name): ``h(x) = B sum_i k(x, x_i) alpha_i``. (Approximate fits, by
        :class:`~fdakpl.estimators.approx.ApproxKPLRegressor`, have primal weights ``coef_`` instead.)
    dual_coef_B_ : numpy.ndarray, shape (n_samples, n_atoms)
        ``alpha B``, what prediction multiplies the kernel by (exact fits).
    problem_ : KPLProblem
        The prepared training data (:mod:`fdakpl.ridge.problem`).
    path_ : RidgePath or None
        The closed-form ridge path the coefficients come from (any lambda on it without refitting); None for
        the other solvers and the single-lambda route.
    kernel_ : Kernel
        The input kernel used.
    dictionary_ : Dictionary
        The fitted dictionary.
    B_ : numpy.ndarray
        The output matrix.
    gram_ : numpy.ndarray
        The dictionary's Gram matrix.
    mean_ : MeanFunction or None
    integration_ : str
        The integration mode used.
    solver_ : str
        The solver used (``"auto"`` resolved).
    route_ : str or None
        How the closed form was solved: ``"eigendecomposition"`` (``decomposition_`` holds the lambda
        path), ``"cholesky"``, ``"cholesky_cg"`` or ``"tridiagonal"`` (single-lambda route:
        :func:`fdakpl.solvers.shifted.solve_shifted`), None for the other solvers.
    loss_ : GroundLoss
        The loss fitted, at the responses' scale when its parameter is relative.
    response_scale_ : float or None
        Robust scale of the responses (:func:`fdakpl.data.preprocessing.response_scale`)
        for a loss with a relative parameter, else None.
    n_iter_ : int
        Iterations of the iterative solvers (0 for the closed forms).
    converged_ : bool
        Whether the iterative solver reached its tolerance (True for the
        closed forms); a ``ConvergenceWarning`` is emitted otherwise.
    grad_norm_ : float or None
        Norm of the objective's gradient at the solution (in the RKHS
        geometry; see :class:`fdakpl.solvers.iterative.IterativeResult`); None for the
        closed forms.
    grid_ : numpy.ndarray
        Default prediction locations.
    n_features_in_ : int
    feature_names_in_ : numpy.ndarray
        Column names of a DataFrame ``X`` at fit (only then); ``predict``
        refuses a DataFrame whose columns differ or are reordered.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, size=(40, 2))
    >>> grid = np.linspace(0, 1, 30)
    >>> Y = np.sin(np.pi * X[:, :1] * grid) + 0.05 * rng.normal(size=(40, 30))
    >>> model = KPLRegressor(dictionary=Fourier(4), lam=1e-4).fit(X, Y, locations=grid)
    >>> model.predict(X[:2]).shape
    (2, 30)
    """

    def __init__(self, dictionary: str | Dictionary = "auto", kernel: Kernel | None = None,
                 output_matrix: Any = None, lam: float = 1e-3, center: bool = True, solver: str = "auto",
                 integration: str = "auto", domain: tuple[float, float] | None = None,
                 interpolate_inputs: bool = False, loss: Any = "square",
                 solver_options: dict[str, Any] | None = None, memory_limit: Any = None) -> None:
        self.dictionary = dictionary
        self.kernel = kernel
        self.output_matrix = output_matrix
        self.lam = lam
        self.center = center
        self.solver = solver
        self.integration = integration
        self.domain = domain
        self.interpolate_inputs = interpolate_inputs
        self.loss = loss
        self.solver_options = solver_options
        self.memory_limit = memory_limit

    @classmethod
    def _get_param_names(cls) -> list[str]:
        return _param_names(cls)  # inspect.signature once per class (clone, get_params in cross-validation)

    # ------------------------------------------------------------------
    def _check_params(self) -> None:
        resolve_solver(self.solver, self.loss)
        if self.solver_options is not None and not isinstance(self.solver_options, dict):
            raise TypeError(f"solver_options must be a dict or None, got {type(self.solver_options).__name__}")
        check_lam(self.lam, "; choose it with fdakpl.FunctionalRegression")
        check_bool(self.center, "center")
        check_bool(self.interpolate_inputs, "interpolate_inputs")
        check_domain(self.domain)
        self._kernel()

    @fill_doc(fit_parameters=FIT_PARAMETERS_DOC)
    def fit(self, X: Any, Y: Any, locations: Any = None) -> KPLRegressor:
        """Fit the model: prepare the data once (:func:`fdakpl.ridge.problem.prepare_problem`), then solve.

        %(fit_parameters)s
        """
        self._check_fit_arguments(Y)
        problem = prepare_problem(X, Y, locations, dictionary=self.dictionary, center=self.center, loss=self.loss,
                                  integration=self.integration, domain=self.domain,
                                  interpolate_inputs=self.interpolate_inputs)
        return self.fit_problem(problem)

    def fit_problem(self, problem: KPLProblem, path: RidgePath | None = None) -> KPLRegressor:
        """Fit on a prepared problem (the data are not checked or converted again).

        Parameters
        ----------
        problem : KPLProblem
            From :func:`fdakpl.ridge.problem.prepare_problem` with this estimator's ``dictionary``,
            ``center``, ``loss``, ``integration``, ``domain`` and ``interpolate_inputs``.
        path : RidgePath, optional
            The closed-form ridge path of this estimator's kernel and ``B`` on ``problem`` (e.g. the one tuning
            chose): the closed-form solver takes its coefficients at ``lam`` from it, without decomposing again.

        Returns
        -------
        self

        Examples
        --------
        >>> from fdakpl.ridge.problem import prepare_problem
        >>> from fdakpl.ridge.path import RidgePath
        >>> X = np.linspace(0, 1, 10)[:, None]; Y = np.hstack([X, 2 * X])
        >>> problem = prepare_problem(X, Y, dictionary=Fourier(1))
        >>> path = RidgePath.fit(problem, Gaussian(0.5), *problem.output_matrix(None))
        >>> m = KPLRegressor(dictionary=Fourier(1), kernel=Gaussian(0.5), lam=1e-3).fit_problem(problem, path)
        >>> bool(np.allclose(m.predict(X), KPLRegressor(dictionary=Fourier(1), kernel=Gaussian(0.5), lam=1e-3)
        ...                  .fit(X, Y).predict(X)))
        True
        """
        self._check_params()
        solver, _ = resolve_solver(self.solver, self.loss)
        n = problem.n
        terms = len(problem.inputs) if isinstance(problem.inputs, dict) else 1
        check_exact_memory(n, problem.n_points, self.memory_limit, n_terms=terms)  # before any n x n allocation
        kernel = self._kernel()
        if path is not None and (path.problem is not problem or path.kernel != kernel):
            raise ValueError("path is not the ridge path of this estimator's kernel on this problem")
        B, identity = (path.B, path.identity) if path is not None else problem.output_matrix(self.output_matrix)
        K = path.K if path is not None else problem.kernel_matrix(kernel)
        self.n_iter_, self.converged_, self.grad_norm_ = 0, True, None
        self.route_, self.path_ = None, None
        lam = self.lam * problem.lam_unit  # lambda in the unit of the atoms' norms (KPLProblem.lam_unit)
        if solver in {"eig", "sylvester"} and not problem.obs.fully_observed:  # projections of partial curves
            msg = integration_notice(problem)
            if msg:
                warn(msg)
        if solver == "eig":
            if path is None and self.solver == "auto" and n >= SINGLE_LAMBDA_MIN_N:  # one lambda: no eig of K
                Bs = (B, B) if identity else sym_sqrt(B)  # I^1/2 = I^-1/2 = I
                A, self.route_ = ridge_single(K, problem.gram, B, problem.nu, lam,
                                              output_eigh=problem.dictionary.scaled_gram_eigh(Bs[0]), B_sqrt=Bs)
            else:
                self.path_ = path if path is not None else RidgePath.fit(problem, kernel, B, identity, K=K)
                A, self.route_ = self.path_.coef(self.lam), "eigendecomposition"
        elif solver == "sylvester":
            A = ridge_sylvester(K, problem.gram, B, problem.nu, lam)
        else:  # "exact_partial" or "iterative": per-point estimated losses (fdakpl.solvers.iterative)
            res = solve_kpl(K, B, point_design(problem.centred, problem.phi, problem.weights), lam, solver,
                            problem.loss, self.solver_options)
            A = res.coef
            self.n_iter_, self.converged_, self.grad_norm_ = res.n_iter, res.converged, res.grad_norm
        self.problem_, self.kernel_, self.solver_ = problem, kernel, solver
        self._set_training_info(problem.info, problem.input_spec)
        spec = problem.input_spec
        if getattr(spec, "feature_names", None) is not None:
            self.feature_names_in_ = np.asarray(spec.feature_names, dtype=object)
        else:
            self.__dict__.pop("feature_names_in_", None)
        self.loss_, self.response_scale_, self.mean_ = problem.loss, problem.response_scale, problem.mean
        self.dictionary_, self.gram_, self.B_ = problem.dictionary, problem.gram, B
        self.integration_, self.nu_ = problem.integration, problem.nu
        self.X_fit_, self.X_weights_, self.K_ = problem.inputs, problem.input_weights, K
        self.decomposition_ = None if self.path_ is None else self.path_.decomposition
        self.dual_coef_ = A
        self.dual_coef_B_ = A.copy() if identity else A @ B  # A I = A
        info = problem.info
        if info.grid is not None:
            self.grid_ = info.grid
        else:
            uniq = np.unique(problem.obs.location)
            self.grid_ = uniq if uniq.size <= 1000 else np.linspace(info.domain[0], info.domain[1], 200)
        self.n_samples_fit_ = n
        return self

    # ------------------------------------------------------------------
    def predict_coefficients(self, X: Any) -> np.ndarray:
        """Predicted dictionary coefficients ``h(x) = B sum_j k(x, x_j) alpha_j``, shape ``(n_new, d)``.

        Examples
        --------
        >>> X = np.linspace(0, 1, 10)[:, None]; Y = np.hstack([X, 2 * X])
        >>> KPLRegressor(dictionary=Fourier(1), lam=1e-2).fit(X, Y).predict_coefficients(X[:3]).shape
        (3, 3)
        """
        check_is_fitted(self, "dual_coef_B_")
        return self._coefficients_and_labels(X)[0]

    def _coefficients_and_labels(self, X: Any) -> tuple[np.ndarray, Any]:
        """Predicted coefficients and the inputs' sample labels, from one preparation of ``X``."""
        Xv, Xw, _, labels = prepare_inputs(X, interpolate=self.interpolate_inputs, spec=self.input_spec_)
        Kn = self.kernel_.checked_matrix(Xv, self.X_fit_, Xw)  # both checked by prepare_inputs
        return Kn @ self.dual_coef_B_, labels

    @fill_doc(predict_returns=PREDICT_RETURNS_DOC)
    def predict(self, X: Any, at: Any = None) -> Any:
        """Predicted curves at ``at`` (default: the training grid).

        %(predict_returns)s

        Examples
        --------
        >>> X = np.linspace(0, 1, 10)[:, None]; Y = np.hstack([X, 2 * X])
        >>> m = KPLRegressor(lam=1e-3).fit(X, Y)
        >>> m.predict(X[:2], at=[0.1, 0.5, 0.9]).shape
        (2, 3)
        """
        at = None if at is None else check_locations(at, "at")
        Yhat, theta, labels = self._predict(X, at)
        return self._as_given(Yhat, theta, labels, at, add_mean=False)

    def predict_array(self, X: Any, at: Any = None) -> np.ndarray:
        """Predicted curves as a plain ``(n_new, n_locations)`` array, whatever form the training responses had.

        The values of :meth:`predict` without its labels (a front end labels them once, at its edge).

        Examples
        --------
        >>> X = np.linspace(0, 1, 10)[:, None]; Y = np.hstack([X, 2 * X])
        >>> m = KPLRegressor(lam=1e-3).fit(X, Y)
        >>> bool(np.array_equal(m.predict_array(X[:2]), m.predict(X[:2])))
        True
        """
        at = None if at is None else check_locations(at, "at")
        return self._predict(X, at)[0]

    def _predict(self, X: Any, at: np.ndarray | None) -> tuple[np.ndarray, np.ndarray, Any]:
        """Predicted curves (mean added) at ``at`` (checked) or the training grid, the locations, the labels."""
        if "dual_coef_" not in self.__dict__:
            check_is_fitted(self, "dual_coef_")
        H, labels = self._coefficients_and_labels(X)
        theta = self.grid_ if at is None else at
        Yhat = H @ self.dictionary_.evaluate(theta).T
        if self.mean_ is not None:
            Yhat += self.mean_(theta)[None, :]
        return Yhat, theta, labels
