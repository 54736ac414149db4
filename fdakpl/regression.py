"""``FunctionalRegression``: the formula front end (model object; results in :mod:`fdakpl.results`)."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from itertools import product
from typing import Any

import numpy as np

from .data.functional import as_dataset, validate_functional
from .dictionaries import Dictionary, make_dictionary
from .estimators.kpl import KPLRegressor
from .formula import SCALARS, combine_kernels, default_kernels, parse_formula
from .kernels import Gaussian, Kernel, ScaleDecay
from .notices import InterpolationWarning, distinct, said_once
from .selection import DEFAULT_LAMBDAS, check_edge, kfold_path, lambda_criteria

__all__ = ["FunctionalRegression"]



class FunctionalRegression:
    """Nonlinear function-on-function regression by KPL, specified by a formula.

    Parameters
    ----------
    formula : str
        ``"response ~ curve + scalar + C(factor) + ..."`` (see :mod:`fdakpl.formula`).
    data : xarray.Dataset
        Variables sharing the ``sample`` dim; NaN in the response = not observed.
    dictionary : str or Dictionary, default "auto"
        A :class:`~fdakpl.dictionaries.Dictionary` or a name (``"db3"``, ``"fourier"``, ``"fpca"``, ...).
    levels : int, optional
        Number of levels for a wavelet dictionary given by name.
    kernel : Kernel, optional
        One kernel used for every term (default: Gaussian, median-heuristic width per term).
    kernels : mapping, optional
        Per-term kernels, e.g. ``{"cca": Gaussian(0.1), "scalars": Gaussian(2.0)}``.
    combine : {"product", "sum"}
        How per-term kernels combine.
    output_matrix : None, float, array or OutputMatrix
        ``B``; a number ``b`` is the scale-decaying ``diag(b**-scale)``.
    lam : "gcv", "loo", "cv", float or sequence
        Regularisation, or how to choose it: GCV (default) or exact leave-one-curve-out over
        ``lam_grid`` (closed form), K-fold CV (``cv`` folds, over ``lam_grid`` and ``param_grid``),
        a number, or a grid (chosen by GCV).
    lam_grid : sequence, optional
        Grid for the criteria (default ``geomspace(1e-8, 1, 41)``).
    loss : str or loss object, default "square"
        Ground loss of the integral loss; non-square losses use the iterative solver.
    solver : {"auto", "eig", "sylvester", "exact_partial", "iterative"}
        ``"auto"``: closed-form ridge for the square loss (plug-in estimator when responses are
        partially observed), iterative otherwise.
    center : bool
        Centre responses with the training mean function.
    interpolate_inputs : bool
        Fill NaN in input curves by linear interpolation (recorded once in ``res.notes``, no warning).
    cv : int
        Folds for ``lam="cv"``.
    param_grid : mapping, optional
        Other hyper-parameters for ``lam="cv"``: ``"dictionary"`` (names or objects),
        ``"levels"``, ``"b"`` (scale decay), ``"sigma"`` (width of every Gaussian term kernel,
        as a multiple of its default width when ``sigma_relative=True``), ``"gamma"`` (logcosh).
    random_state : int, optional
        Seed of the CV folds.
    n_jobs : int
        Processes for CV.
    progress : bool
        Show progress bars for long work.
    domain : (float, float), optional
        Domain of the response curves (default: the range of its coordinate).
    approx : object, optional
        An approximation of the input kernel (Nyström / random features), passed to
        :class:`~fdakpl.estimators.kpl.KPLRegressor` when it supports it.

    Examples
    --------
    >>> from fdakpl import FunctionalRegression, datasets
    >>> ds = datasets.dti_first_visits()
    >>> res = FunctionalRegression("rcst ~ cca", data=ds, dictionary="db3", levels=4,
    ...                            interpolate_inputs=True, progress=False).fit()
    >>> res.predict(ds.isel(sample=slice(0, 2))).dims
    ('sample', 'rcst_loc')
    """

    def __init__(self, formula: str, data: Any, *, dictionary: str | Dictionary = "auto", levels: int | None = None,
                 kernel: Kernel | None = None, kernels: Mapping[str, Kernel] | None = None, combine: str = "product",
                 output_matrix: Any = None, lam: Any = "gcv", lam_grid: Sequence[float] | None = None,
                 loss: Any = "square", solver: str = "auto", center: bool = True, interpolate_inputs: bool = False,
                 cv: int = 5, param_grid: Mapping[str, Sequence[Any]] | None = None, sigma_relative: bool = True,
                 random_state: Any = None, n_jobs: int = 2, progress: bool = True,
                 domain: tuple[float, float] | None = None, approx: Any = None) -> None:
        self.formula = formula
        self.data = as_dataset(data)
        self.dictionary = dictionary
        self.levels = levels
        self.kernel = kernel
        self.kernels = kernels
        self.combine = combine
        self.output_matrix = output_matrix
        self.lam = lam
        self.lam_grid = lam_grid
        self.loss = loss
        self.solver = solver
        self.center = center
        self.interpolate_inputs = interpolate_inputs
        self.cv = cv
        self.param_grid = param_grid
        self.sigma_relative = sigma_relative
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.progress = progress
        self.domain = domain
        self.approx = approx
        self.parsed = parse_formula(formula, self.data)

    @classmethod
    def from_formula(cls, formula: str, data: Any, **kwargs: Any) -> FunctionalRegression:
        """Same as the constructor (statsmodels' spelling).

        Examples
        --------
        >>> from fdakpl import datasets
        >>> m = FunctionalRegression.from_formula("rcst ~ cca", datasets.dti_first_visits(), interpolate_inputs=True)
        >>> m.parsed.response
        'rcst'
        """
        return cls(formula, data, **kwargs)

    # ------------------------------------------------------------------ building blocks
    def _dictionary(self, spec: Any = None, levels: int | None = None) -> Dictionary | str:
        spec = self.dictionary if spec is None else spec
        levels = self.levels if levels is None else levels
        if isinstance(spec, Dictionary):
            return spec
        if isinstance(spec, str) and spec == "auto":
            return "auto"
        kw = {"level": levels} if levels is not None else {}
        return make_dictionary(spec, **kw)

    def _term_kernels(self) -> dict[str, Kernel]:
        terms = self.parsed.terms
        if self.kernels is not None and self.kernel is not None:
            raise ValueError("pass either kernel= (one kernel for all terms) or kernels= (per term), not both")
        if self.kernel is not None:
            return {t: self.kernel for t in terms}
        base = default_kernels(self.parsed, self.data, self.interpolate_inputs)
        if self.kernels is not None:
            unknown = [k for k in self.kernels if k not in terms]
            if unknown:
                raise ValueError(f"kernels given for {unknown}, which are not terms of the formula {terms} "
                                 f"(scalar covariates share the kernel named {SCALARS!r})")
            base.update(self.kernels)
        return base

    def _routing(self, fully_observed: bool) -> tuple[str, str]:
        loss_name = self.loss if isinstance(self.loss, str) else type(self.loss).__name__.lower()
        square = loss_name in {"square", "squared", "l2"}
        solver = self.solver
        if solver == "auto":
            if square and fully_observed:
                return "eig", "square loss, fully observed responses: closed-form ridge (Prop. 4.2)"
            if square:
                return "eig", "square loss, partially observed responses: plug-in ridge estimator (Def. 4.1)"
            return "iterative", f"{loss_name} loss: iterative solver (L-BFGS-B, section 4.3)"
        reasons = {
            "eig": "closed-form ridge by eigendecompositions (requested)",
            "sylvester": "closed-form ridge by a Sylvester solver (requested)",
            "exact_partial": "exact minimiser of the partially observed square loss (requested)",
            "iterative": "iterative solver (requested)",
        }
        if solver not in reasons:
            raise ValueError(f"solver must be one of {['auto', *reasons]}, got {solver!r}")
        if not square and solver in {"eig", "sylvester", "exact_partial"}:
            raise ValueError(f"solver={solver!r} solves the square loss only; use solver='iterative' for {loss_name}")
        return solver, reasons[solver]

    def _estimator(self, kernel: Kernel, solver: str, lam: Any) -> KPLRegressor:
        est = KPLRegressor(dictionary=self._dictionary(), kernel=kernel, output_matrix=self.output_matrix, lam=lam,
                           center=self.center, solver="eig", interpolate_inputs=self.interpolate_inputs,
                           domain=self.domain)
        params = est.get_params(deep=False)
        extra: dict[str, Any] = {"loss": self.loss, "solver": solver}
        if self.approx is not None:
            extra["approx"] = self.approx
        return est.set_params(**{k: v for k, v in extra.items() if k in params})

    def _cv_param_grid(self, kernels: dict[str, Kernel]) -> dict[str, list[Any]]:
        grid = dict(self.param_grid or {})
        out: dict[str, list[Any]] = {}
        dics = grid.pop("dictionary", None)
        levels = grid.pop("levels", None)
        if dics is not None or levels is not None:
            dics = dics if dics is not None else [self.dictionary]
            levels = levels if levels is not None else [self.levels]
            out["dictionary"] = [self._dictionary(d, lv) if not isinstance(d, Dictionary) else d
                                 for d, lv in product(dics, levels)]
        if "b" in grid:
            out["output_matrix"] = [ScaleDecay(float(b)) for b in grid.pop("b")]
        if "sigma" in grid:
            sig = grid.pop("sigma")
            opts = []
            for s in sig:
                ks = {t: (Gaussian(float(s) * k.sigma) if self.sigma_relative else Gaussian(float(s)))
                      if isinstance(k, Gaussian) else k for t, k in kernels.items()}
                opts.append(combine_kernels(ks, self.parsed.terms, self.combine))
            out["kernel"] = opts
        if "gamma" in grid:
            from .losses import LogCosh

            out["loss"] = [LogCosh(float(g)) for g in grid.pop("gamma")]
        if grid:
            out.update({k: list(v) for k, v in grid.items()})  # raw KPLRegressor parameters
        return out

    # ------------------------------------------------------------------ fit
    def fit(self) -> Any:
        """Fit the model and return a :class:`~fdakpl.results.FunctionalRegressionResults`.

        Examples
        --------
        >>> from fdakpl import datasets
        >>> res = FunctionalRegression("rcst ~ cca", datasets.dti_first_visits(),
        ...                            interpolate_inputs=True, progress=False).fit()
        >>> res.lam_how
        'GCV'
        """
        from .results.core import FunctionalRegressionResults

        t0 = time.perf_counter()
        notes: list[str] = []
        ds = self.data
        Y = validate_functional(ds[self.parsed.response], self.parsed.response)
        X = self.parsed.inputs(ds)
        fully = not bool(np.isnan(Y.values).any())
        solver, reason = self._routing(fully)
        kernels = self._term_kernels()
        kernel = combine_kernels(kernels, self.parsed.terms, self.combine)
        lam_spec = self.lam
        grid = np.asarray(self.lam_grid if self.lam_grid is not None else DEFAULT_LAMBDAS, dtype=float)
        criteria = None
        cv_result = None
        # warnings are said once, at the user's line; filled input values (the user asked for it) only
        # go into the notes, which the summary shows
        with said_once(quiet=(InterpolationWarning,)) as caught:
            if isinstance(lam_spec, str):
                how = lam_spec.lower()
                if how not in {"gcv", "loo", "cv"}:
                    raise ValueError(f"lam must be 'gcv', 'loo', 'cv', a number > 0 or a grid, got {lam_spec!r}")
            elif np.ndim(lam_spec) == 0:
                how = "fixed"
                lam_value = float(lam_spec)
                if not np.isfinite(lam_value) or lam_value <= 0:
                    raise ValueError(f"lam must be a number > 0, got {lam_spec}")
            else:
                how = "gcv"
                grid = np.asarray(lam_spec, dtype=float)
            if self.approx is not None:
                if how in {"loo", "cv"}:
                    raise ValueError(f"lam={lam_spec!r} is not available with approx=: the approximate (primal) "
                                     "solver chooses lambda by GCV from its sufficient statistics; use lam='gcv', "
                                     "a number or a grid")
                est = self._estimator(kernel, solver, grid if how == "gcv" else lam_value)
                est.fit(X, Y)
                fitted_approx = est.approx_
                lam_value = float(fitted_approx.lam_)
                edge = how == "gcv" and check_edge(grid, int(np.argmin(fitted_approx.gcv_)), "gcv", stacklevel=4)
                reason = f"{reason}; input kernel approximated: {fitted_approx.approx_description_}"
            elif how == "cv":
                est0 = self._estimator(kernel, solver, float(grid[0]))
                pg = self._cv_param_grid(kernels)
                cv_result = kfold_path(est0, X, Y, lams=grid, param_grid=pg, n_splits=self.cv,
                                       random_state=self.random_state, n_jobs=self.n_jobs,
                                       progress_bar=self.progress)
                best = cv_result["best_params"]
                lam_value = cv_result["best_lam"]
                est = est0.set_params(**best, lam=lam_value)
                edge = check_edge(grid, cv_result["best_index"][1], "cv", stacklevel=4)
            else:
                est = self._estimator(kernel, solver, float(grid[0]) if how != "fixed" else lam_value)
                if how in {"gcv", "loo"}:
                    proxy = est if solver == "eig" else self._estimator(kernel, "eig", float(grid[0]))
                    proxy.fit(X, Y)
                    criteria = lambda_criteria(proxy, Y, grid, loo=how == "loo")
                    idx, lam_value = criteria.best(how)
                    edge = check_edge(grid, idx, how, stacklevel=4)
                    if solver != "eig":
                        notes.append(f"lambda chosen by {how.upper()} of the closed-form ridge, a proxy for "
                                     f"solver={solver!r}; use lam='cv' for a direct choice")
                    if solver == "eig":
                        _set_lambda(proxy, lam_value)  # same as refitting: the decomposition serves every lambda
                    else:
                        est.set_params(lam=lam_value).fit(X, Y)
                else:
                    edge = False
                    est.fit(X, Y)
            if how == "cv":
                est.fit(X, Y)
        notes += [str(w.message) for w in distinct(caught)]
        lam_how = {"gcv": "GCV", "loo": "leave-one-curve-out", "cv": f"{self.cv}-fold CV", "fixed": "fixed"}[how]
        return FunctionalRegressionResults(
            model=self, estimator=est, kernels=kernels, solver=solver, solver_reason=reason, lam=lam_value,
            lam_how=lam_how, lam_grid=grid if how != "fixed" else None, criteria=criteria, cv_result=cv_result,
            lam_on_edge=bool(edge), notes=notes, fit_seconds=time.perf_counter() - t0,
        )


def _set_lambda(est: KPLRegressor, lam: float) -> None:
    """Move a fitted closed-form estimator to another lambda (exactly what a refit would give)."""
    from .solvers.closed_form import ridge_coef

    est.set_params(lam=float(lam))
    est.coef_ = ridge_coef(est.decomposition_, float(lam))
    est.coef_B_ = est.coef_ @ est.B_

