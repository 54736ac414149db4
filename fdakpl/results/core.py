"""``FunctionalRegressionResults``: predictions, summaries, diagnostics, bands and tests of a fitted model."""

from __future__ import annotations

import functools
import html
from typing import Any

import numpy as np
import xarray as xr

from ..data.functional import SAMPLE, Observations, check_locations
from ..data.integration import integration_weights
from ..data.labels import labelled_array
from ..data.scaling import power_of_two_scale
from ..diagnostics.applicability import bound_applicability, loss_name
from ..diagnostics.bounds import (
    dictionary_constants,
    excess_risk_bound,
    kernel_kappa,
    lambda_star,
    representation_error,
)
from ..utils.docstrings import FIGURE_RETURNS, dti_fit_example, fill_doc
from ..utils.notices import InterpolationWarning, said_once
from ..utils.saved import saved
from .inference import InferenceMixin
from .interpretation import InterpretationMixin

__all__ = ["FunctionalRegressionResults"]


@saved("model", "estimator", "kernels", "solver", "solver_reason", "lam", "criterion", "lam_grid", "criteria",
       "cv_result", "lam_on_edge", "notes", "fit_seconds", "tuning", "edf", "condition_numbers", "rkhs_norm",
       "held_out", defaults={"problem": None, "path": None, "_cache": {}})
class FunctionalRegressionResults(InterpretationMixin, InferenceMixin):
    """Results of :meth:`fdakpl.FunctionalRegression.fit`.

    Interpretation (surfaces, partial dependence, term importance, their plots) comes from
    :class:`fdakpl.results.interpretation.InterpretationMixin`.

    Attributes
    ----------
    model : FunctionalRegression
        The model (formula, data, options).
    estimator : KPLRegressor
        The fitted array-level estimator.
    lam : float
        The regularisation used, chosen as ``lam_how`` says.
    solver, solver_reason : str
        Which solver ran and why.
    criteria : PathCriteria or None
        GCV / LOO / edf along the lambda grid (closed-form solvers; computed when first read).
    tuning : TuningResult or None
        The joint choice of kernel widths, ``b`` and lambda (:func:`fdakpl.tuning.search.search`),
        with every score; None when only lambda was chosen.
    cv_result : dict or None
        K-fold CV scores when ``lam="cv"``.
    notes : list of str
        Warnings and remarks gathered while fitting (shown in the summary).

    Examples
    --------
    >>> from fdakpl import FunctionalRegression, datasets
    >>> res = FunctionalRegression("rcst ~ cca", datasets.dti_first_visits(), dictionary="db3", level=4,
    ...                            interpolate_inputs=True, progress=False).fit()
    >>> res.resid.dims
    ('sample', 'rcst_loc')
    """

    def __init__(self, *, model: Any, estimator: Any, kernels: dict, solver: str, solver_reason: str, lam: float,
                 criterion: Any, lam_grid: np.ndarray | None, criteria: Any, cv_result: dict | None,
                 lam_on_edge: bool, notes: list[str], fit_seconds: float, tuning: Any = None, problem: Any = None,
                 path: Any = None) -> None:
        self.model = model
        self.estimator = estimator
        self.kernels = kernels
        self.solver = solver
        self.solver_reason = solver_reason
        self.lam = float(lam)
        self.criterion = criterion
        self.lam_grid = lam_grid
        if criteria is not None:  # computed by the fit (the exact partial route); else on first use
            self.__dict__["criteria"] = criteria
        self.tuning = tuning
        self.cv_result = cv_result
        self.lam_on_edge = lam_on_edge
        self.notes = notes
        self.fit_seconds = fit_seconds
        self.problem = problem
        self.path = path
        self._cache: dict[str, Any] = {}
        # what the summary shows, from the fit without a decomposition: the condition numbers and ||h|| here (the
        # path's eigenvalues); edf and the held-out line (one evaluation of the path) when first read, so that a fit
        # used only to predict does not pay for them (save() stores them)
        self.condition_numbers = _condition_numbers(estimator, path, self.lam)
        self.rkhs_norm = _rkhs_norm(estimator)

    @functools.cached_property
    def _path_summaries(self) -> tuple[float, dict[str, float] | None]:
        return _edf_and_held_out(self.path, self.estimator, self.criterion, self.lam)

    @functools.cached_property
    def edf(self) -> float:
        """Effective degrees of freedom of the fit at ``lam`` (the trace of its smoother at the observed points; from
        the fit's ridge path on first use, and saved with the model).

        Examples
        --------
        >>> from fdakpl import FunctionalRegression, datasets
        >>> res = FunctionalRegression("rcst ~ cca", datasets.dti_first_visits(), interpolate_inputs=True,
        ...                            progress=False).fit()
        >>> 0 < res.edf < res.estimator.n_samples_fit_ * res.estimator.dual_coef_.shape[1]
        True
        """
        return self._path_summaries[0]

    @functools.cached_property
    def held_out(self) -> dict[str, float] | None:
        """The summary's held-out line: leave-one-curve-out error (leave-one-group-out with groups) of the fit at
        ``lam`` (``"model"``) and of the mean curve (``"mean"``, lambda without bound), from the fit's ridge path on
        first use and saved with the model; None without a closed-form fit.

        Examples
        --------
        >>> from fdakpl import FunctionalRegression, datasets
        >>> res = FunctionalRegression("rcst ~ cca", datasets.dti_first_visits(), interpolate_inputs=True,
        ...                            progress=False).fit()
        >>> res.held_out["model"] < res.held_out["mean"]
        True
        """
        return self._path_summaries[1]

    @functools.cached_property
    def criteria(self) -> Any:
        """Training error, edf, GCV and leave-one-curve-out (and leave-one-group-out) along the lambda grid at the
        chosen kernel and ``B`` (a :class:`~fdakpl.ridge.path.PathCriteria`; computed from the fit's path on first
        use, and saved with the model); None for a fixed lambda, K-fold CV and the approximate solver.

        Examples
        --------
        >>> from fdakpl import FunctionalRegression, datasets
        >>> res = FunctionalRegression("rcst ~ cca", datasets.dti_first_visits(), interpolate_inputs=True,
        ...                            progress=False).fit()
        >>> res.criteria.loo.shape == res.lam_grid.shape
        True
        """
        if self.path is None or self.lam_grid is None or not getattr(self.criterion, "closed_form", False):
            return None
        return self.path.criteria(self.lam_grid, groups=getattr(self.criterion, "labels", None))

    def training_path(self) -> Any:
        """The closed-form ridge path of the fit (its decompositions answer every lambda), or None.

        A loaded model has none stored (files never hold ``n x n`` matrices): it is rebuilt here from the
        saved training data on first use, once, after checking that its memory fits
        (:func:`fdakpl.solvers.memory.check_exact_memory`). Fits by other solvers have none.

        Examples
        --------
        >>> from fdakpl import FunctionalRegression, datasets
        >>> res = FunctionalRegression("rcst ~ cca", datasets.dti_first_visits(), interpolate_inputs=True,
        ...                            progress=False).fit()
        >>> res.training_path() is res.path
        True
        """
        est = self.estimator
        if self.path is not None or getattr(est, "route_", None) != "eigendecomposition":
            return self.path
        from ..ridge.path import RidgePath
        from ..ridge.problem import prepare_problem
        from ..solvers.memory import check_exact_memory

        n = est.n_samples_fit_
        check_exact_memory(n, int(np.count_nonzero(~np.isnan(self.response.values))), est.memory_limit)
        with said_once(quiet=(InterpolationWarning,)):
            problem = prepare_problem(self.model.parsed.inputs(self.model.data), self.response,
                                      dictionary=est.dictionary, center=est.center, loss=est.loss,
                                      integration=est.integration, domain=est.domain,
                                      interpolate_inputs=est.interpolate_inputs, who="the formula")
        identity = bool(np.array_equal(est.B_, np.eye(est.B_.shape[0])))
        self.problem, self.path = problem, RidgePath.fit(problem, est.kernel_, est.B_, identity)
        return self.path

    @property
    def lam_how(self) -> str:
        """How lambda was chosen, in words (the criterion's name: ``"leave-one-curve-out"``, ``"GCV"``, ...)."""
        return self.criterion.name

    # ------------------------------------------------------------------ data views
    @property
    def response(self) -> xr.DataArray:
        """The training response (sample × location, NaN = unobserved)."""
        return self.model.data[self.model.parsed.response]

    @property
    def response_dim(self) -> str:
        return self.model.parsed.response_dim

    def observations(self) -> Observations:
        """The training responses as observed points (one entry per observed value).

        Examples
        --------
        >>> from fdakpl import FunctionalRegression, datasets
        >>> res = FunctionalRegression("rcst ~ cca", datasets.dti_first_visits(), interpolate_inputs=True,
        ...                            progress=False).fit()
        >>> res.observations().n_samples
        100
        """
        if self.problem is not None:
            return self.problem.obs
        if "obs" not in self._cache:
            Y = self.response
            self._cache["obs"] = Observations.from_dense(Y.values, Y[self.response_dim].values)
        return self._cache["obs"]

    # ------------------------------------------------------------------ predictions
    def predict(self, newdata: Any = None, at: Any = None) -> xr.DataArray:
        """Predicted curves for ``newdata`` (default: the training data) at ``at`` (default: response grid).

        Parameters
        ----------
        newdata : xarray.Dataset, optional
            Must hold the formula's inputs; the response is not needed.
        at : array-like, optional
            Locations at which to evaluate the predicted curves.

        Returns
        -------
        xarray.DataArray
            ``(sample, <response location dim>)``.

        Examples
        --------
        >>> from fdakpl import FunctionalRegression, datasets
        >>> ds = datasets.dti_first_visits()
        >>> res = FunctionalRegression("rcst ~ cca", ds, interpolate_inputs=True, progress=False).fit()
        >>> res.predict(ds.isel(sample=[0, 1]), at=[0.0, 0.5, 1.0]).shape
        (2, 3)
        """
        from ..data.functional import as_dataset

        ds = self.model.data if newdata is None else as_dataset(newdata)
        est, parsed = self.estimator, self.model.parsed
        X = parsed.inputs(ds)
        if parsed.subject_terms and newdata is not None:
            self._new_subjects_notice(ds)
        with said_once(quiet=(InterpolationWarning,)):  # the user asked for interpolation: noted when fitting
            values = est.predict_array(X, at=at)  # the inputs validated once (prepare_inputs), plain arrays back
        train, rdim = self.model.data, self.response_dim
        coords: dict[str, Any] = {}
        if SAMPLE in ds.coords:
            coords[SAMPLE] = ds if SAMPLE in ds.xindexes else ds.coords.variables[SAMPLE].values
        if at is None and rdim in train.xindexes and train.coords.variables[rdim].dtype == np.float64:
            coords[rdim] = train  # the training grid: its coordinate and index are reused
        else:
            coords[rdim] = est.grid_ if at is None else check_locations(at, "at")
        return labelled_array(values, (SAMPLE, rdim), coords, parsed.response)

    def _new_subjects_notice(self, ds: xr.Dataset) -> None:
        """Say once (per results object) that curves of subjects not seen when fitting get the population
        prediction."""
        from ..utils.notices import warn

        new = self.model.parsed.scalar.new_subjects(ds)
        if new and not self._cache.get("new_subjects_said"):
            self._cache["new_subjects_said"] = True
            shown = "; ".join(f"{t}: {v[:5]}{' ...' if len(v) > 5 else ''} ({len(v)})" for t, v in new.items())
            warn(f"predict(): subjects not seen when fitting ({shown}) get the population prediction (their subject "
                 "effect is 0); said once for these results")

    # ------------------------------------------------------------------ subject terms
    def subject_effects(self, term: str | None = None, at: Any = None) -> xr.DataArray:
        """The estimated effect curve of every subject of a subject term ``re(ID)`` (see
        :func:`fdakpl.results.subjects.subject_effects`).

        Examples
        --------
        >>> from fdakpl import FunctionalRegression, datasets
        >>> ds = datasets.load_dti().isel(sample=slice(300, 382))
        >>> res = FunctionalRegression("rcst ~ cca + re(ID)", ds, interpolate_inputs=True).fit()
        >>> res.subject_effects().dims
        ('subject', 'rcst_loc')
        """
        from .subjects import subject_effects

        return subject_effects(self, term, at)

    def subject_facts(self, term: str | None = None) -> dict[str, Any]:
        """Weight, number of subjects and share of the variation of a subject term (see
        :func:`fdakpl.results.subjects.subject_facts`).

        Examples
        --------
        >>> from fdakpl import FunctionalRegression, datasets
        >>> ds = datasets.load_dti().isel(sample=slice(300, 382))
        >>> res = FunctionalRegression("rcst ~ cca + re(ID)", ds, interpolate_inputs=True).fit()
        >>> res.subject_facts()["term"]
        're(ID)'
        """
        from .subjects import subject_facts

        return subject_facts(self, term)

    def plot_subject_effects(self, term: str | None = None, subjects: Any = None, ax: Any = None) -> Any:
        """Plot the estimated subject effect curves (matplotlib axes; see
        :func:`fdakpl.results.subjects.plot_subject_effects`).

        Examples
        --------
        >>> from fdakpl import FunctionalRegression, datasets
        >>> ds = datasets.load_dti().isel(sample=slice(300, 382))
        >>> res = FunctionalRegression("rcst ~ cca + re(ID)", ds, interpolate_inputs=True).fit()
        >>> res.plot_subject_effects().get_xlabel()
        'rcst_loc'
        """
        from .subjects import plot_subject_effects

        return plot_subject_effects(self, term, subjects, ax)

    @property
    def fitted(self) -> xr.DataArray:
        """Fitted curves of the training samples on the response grid."""
        if "fitted" not in self._cache:
            self._cache["fitted"] = self.predict()
        return self._cache["fitted"].copy(deep=True)  # the cache stays private: editing the copy changes nothing

    @property
    def resid(self) -> xr.DataArray:
        """Residuals ``y - fitted`` (NaN where the response is unobserved)."""
        Y = self.response
        return Y.copy(data=self._resid_values()).rename(f"{self.model.parsed.response}_resid")

    def _resid_values(self) -> np.ndarray:
        """The residual values (sample x location, computed once: the summary's statistics read them)."""
        if "resid" not in self._cache:
            fitted = self._cache.get("fitted")
            if fitted is None:
                fitted = self._cache["fitted"] = self.predict()
            values = np.asarray(self.response.values, dtype=float) - fitted.values
            values.flags.writeable = False
            self._cache["resid"] = values
        return self._cache["resid"]

    @property
    def coef(self) -> xr.DataArray:
        """The fitted model's internal coefficients, with each atom's scale (not statsmodels' ``params``).

        Exact fits: the representer coefficients ``alpha`` (``estimator.dual_coef_``, sample × atom,
        named ``"alpha"``) of ``h(x) = B sum_i k(x, x_i) alpha_i``: one row per *training curve*, one
        column per atom. Approximate fits (``approx=``): the primal weights ``M`` (``estimator.coef_``,
        feature × atom, named ``"primal_weights"``) of ``h(x) = M^T z(x)``, one row per feature of the
        map, not per training curve.

        A statsmodels user expects one coefficient per regressor with a standard error; a kernel
        model has none. These numbers have no standard errors and no meaning one by one: ``predict``
        combines them with the kernel and the dictionary. For the effect of a variable use
        :meth:`effect_surface` (the surface ``beta(s, t)`` with a ``Linear()`` kernel),
        :meth:`partial_dependence` and :meth:`term_importance`.

        Examples
        --------
        >>> from fdakpl import FunctionalRegression, datasets
        >>> res = FunctionalRegression("rcst ~ cca", datasets.dti_first_visits(), interpolate_inputs=True,
        ...                            lam=1e-3, progress=False).fit()
        >>> res.coef.dims, res.coef.name
        (('sample', 'atom'), 'alpha')
        """
        est = self.estimator
        scale = ("atom", est.dictionary_.scales_)
        if getattr(est, "approx_", None) is not None:
            M = est.coef_
            return xr.DataArray(M, dims=("feature", "atom"),
                                coords={"feature": np.arange(M.shape[0]), "atom": np.arange(M.shape[1]),
                                        "scale": scale}, name="primal_weights")
        A = est.dual_coef_
        return xr.DataArray(A, dims=(SAMPLE, "atom"),
                            coords={SAMPLE: self.response[SAMPLE].values, "atom": np.arange(A.shape[1]),
                                    "scale": scale}, name="alpha")

    @property
    def mean_function(self) -> xr.DataArray:
        """The training mean function on the response grid (zero when ``center=False``)."""
        grid = self.response[self.response_dim].values
        vals = self.estimator.mean_(grid) if self.estimator.mean_ is not None else np.zeros(grid.size)
        return xr.DataArray(vals, dims=(self.response_dim,), coords={self.response_dim: grid}, name="mean")

    @property
    def train_mse(self) -> float:
        """Training MSE: mean over curves of the mean squared residual over observed points."""
        r = self._resid_values()
        return float(np.mean(np.nanmean(r**2, axis=1)))

    @property
    def r2(self) -> float:
        """Integrated R^2 over all observed points, against the training mean curve.

        The mean curve follows the centring rule (:func:`fdakpl.data.preprocessing.location_cells`):
        pointwise on a common grid, binned and smoothed for irregular (sparse) sampling, where a
        pointwise mean would copy each location's single value and leave nothing to explain. Sums of
        squares are taken on responses divided by a power of two near the largest one (no overflow or
        underflow at extreme scales); a constant response follows scikit-learn (1 if fitted exactly, else 0).
        """
        from ..data.preprocessing import MeanFunction

        obs = self.observations()
        mean = MeanFunction(obs, self.estimator.response_info_.domain)(obs.location)
        dev, r = _unit_scale(obs.value - mean, self._resid_values(), reference=obs.value)
        tot = float(np.sum(dev ** 2))
        res = float(np.nansum(r ** 2))
        tiny = dev.size * _ROUND_OFF ** 2  # responses scaled near 1: deviations below 1e-12 are round-off
        if not tot > tiny:  # every curve the same (to round-off): scikit-learn's rule, not a ratio of round-offs
            return 1.0 if res <= tiny else 0.0
        return float(1.0 - res / tot)

    @property
    def r2_pointwise(self) -> xr.DataArray:
        """Pointwise R^2(theta) over the curves observed at each location."""
        Y, r = _unit_scale(self.response.values, self._resid_values())
        counts = np.sum(~np.isnan(Y), axis=0)  # a location seen by no curve has no mean (and no NumPy warning)
        with np.errstate(invalid="ignore", divide="ignore"):
            tot = np.nansum((Y - np.nansum(Y, axis=0) / counts) ** 2, axis=0)
            res = np.nansum(r**2, axis=0)
            vals = 1.0 - res / tot
        tiny = counts * _ROUND_OFF ** 2
        constant = (counts > 0) & ~(tot > tiny)  # every curve takes the same value there (to round-off)
        vals = np.where(constant, np.where(res <= tiny, 1.0, 0.0), np.where(counts > 0, vals, np.nan))
        grid = self.response[self.response_dim].values
        attrs = {}
        if constant.any():
            attrs["note"] = (f"at {int(constant.sum())} of {grid.size} locations every curve takes the same value, "
                             "where R^2 is undefined; there it is 1 if fitted exactly, else 0 (scikit-learn's rule, "
                             "as for r2)")
        return xr.DataArray(vals, dims=(self.response_dim,), coords={self.response_dim: grid}, name="R2",
                            attrs=attrs)

    # ------------------------------------------------------------------ diagnostics
    def diagnostics(self, eta: float = 0.05) -> dict[str, Any]:
        """Constants of section 5, which bound applies, lambda*, the bound and its terms, representation error.

        ``applicability`` (:class:`~fdakpl.diagnostics.applicability.Applicability`) says which proposition
        covers the fit and whether its assumptions hold; ``bound`` is ``None`` when none applies.
        ``bound`` is evaluated at ``lambda*`` with the plug-in constants ``L`` and ``R`` (``R`` at
        the fitted lambda); ``bound_at_lambda`` is the same inequality at the fitted lambda, only
        when it is at least ``lambda*`` (the proof's condition). For a domain of length other than
        1 both bound the excess risk per unit length (see :mod:`fdakpl.diagnostics.bounds`).

        Examples
        --------
        >>> from fdakpl import FunctionalRegression, datasets
        >>> res = FunctionalRegression("rcst ~ cca", datasets.dti_first_visits(), interpolate_inputs=True,
        ...                            progress=False).fit()
        >>> d = res.diagnostics()
        >>> d["applicability"].label, d["applicability"].reasons[0][:44]
        ('5.2 (indicative)', "integration='interpolate': the inner product")
        """
        key = f"diag{eta}"
        if key in self._cache:
            return self._cache[key]
        est = self.estimator
        obs = self.observations()
        lo, hi = est.dictionary_.domain_
        fine = np.linspace(lo, hi, 2001)
        M = float(np.abs(est.dictionary_.evaluate(np.union1d(fine, obs.grid))).max())
        dc = dictionary_constants(est.gram_, M)
        kappa, kappa_how = kernel_kappa(est.kernel_, est.B_, K=getattr(est, "K_", None),
                                        X=getattr(est, "X_fit_", None), weights=getattr(est, "X_weights_", None))
        yc = obs.value - (est.mean_(obs.location) if est.mean_ is not None else 0.0)
        L = float(np.abs(yc).max())
        R = self.rkhs_norm
        n = obs.n_samples
        d = int(est.dictionary_.n_atoms_)
        counts = obs.counts
        fully = obs.fully_observed
        approx = getattr(est, "approx_", None)
        app = bound_applicability(
            loss=loss_name(est.loss), solver=self.solver, fully_observed=fully, integration=est.integration_,
            approx=None if approx is None else str(getattr(est, "approx_description_", "approximate kernel")),
            counts=counts, location=obs.location, domain=(lo, hi), grid=obs.grid, grid_index=obs.grid_index,
            kappa=kappa, kappa_how=kappa_how, riesz=dc["riesz"], normed=dc["normed"],
            n_groups=_n_groups(self.model), unbounded_kernel=not np.isfinite(_diagonal_bound(est.kernel_)))
        m_used = None if fully else float(counts.min())
        consts = dict(kappa=kappa, C_phi=dc["C_phi"], L=L, R=R, m=m_used, M=M, eta=eta, domain_length=hi - lo)
        bound = at_lam = None
        # the paper's lambda is the penalty of the fit, lam * unit (lam is in the unit of the atoms' norms)
        unit = est.dictionary_.lambda_unit()
        if app.status != "not applicable" and np.isfinite(R):
            bound = excess_risk_bound(n, d, **consts)
            if self.lam * unit >= bound.lam_star:
                at_lam = excess_risk_bound(n, d, lam=self.lam * unit, **consts)
        lam_star = lambda_star(n, d, kappa, dc["C_phi"], eta, partial=not fully) / unit if np.isfinite(kappa) \
            else np.nan
        w, _ = integration_weights(obs.with_values(yc), est.response_info_.domain, est.integration_)
        rep = representation_error(est.dictionary_.evaluate(obs.grid)[obs.grid_index], obs.with_values(yc), w)
        out = {
            "c_phi": dc["c_phi"], "C_phi": dc["C_phi"], "normed": dc["normed"], "riesz": dc["riesz"],
            "gram_condition": dc["condition"], "kappa": kappa, "kappa_how": kappa_how, "M": M, "L": L, "R": R,
            "n": n, "d": d, "m_min": int(counts.min()), "m_mean": float(counts.mean()), "fully_observed": fully,
            "eta": eta, "lambda_star": lam_star, "lambda_over_lambda_star": self.lam / lam_star if lam_star else np.nan,
            "applicability": app, "bound": bound, "bound_at_lambda": at_lam, "domain_length": hi - lo,
            "representation_error_median": float(np.median(rep)), "representation_error_max": float(rep.max()),
            "sqrt_n_rate": None if fully else bool(counts.min() >= np.sqrt(n)),
        }
        self._cache[key] = out
        return out

    # ------------------------------------------------------------------ summary
    def summary(self, eta: float = 0.05, importance: Any = "auto", diagnostics: str = "compact"):
        """Statistician-first summary (statsmodels ``Summary``: ``print()`` it, or ``.as_html()``).

        The model and its tuning route, the fit with the held-out error against the mean curve's, one row
        per term (kind, fitted kernel and width, importance and p-value when computed), the excess-risk bound
        in one or two lines, and the notes of the fit.

        Parameters
        ----------
        eta : float
            Confidence parameter of the excess-risk bound.
        importance : "auto", bool or int
            The importance columns of the term table (:mod:`fdakpl.results.importance`): ``"auto"`` shows what
            was computed (``res.term_importance()``), ``True`` computes it (199 permutations per term), a number
            with that many permutations, ``False`` none.
        diagnostics : {"compact", "full"}
            ``"full"`` adds the table of section 5's constants and the notes on the bound.

        Examples
        --------
        >>> from fdakpl import FunctionalRegression, datasets
        >>> res = FunctionalRegression("rcst ~ cca", datasets.dti_first_visits(), interpolate_inputs=True,
        ...                            progress=False).fit()
        >>> len(str(res.summary()).splitlines()) <= 35
        True
        >>> "Excess-risk diagnostics" in str(res.summary(diagnostics="full"))
        True
        """
        from .summary import build_summary

        return build_summary(self, eta, importance, diagnostics)

    def save(self, path: Any, *, engine: str | None = None, overwrite: bool = False) -> Any:
        """Save these results to a netCDF file, without pickle (see :func:`fdakpl.io.netcdf.save`).

        Read them back with :func:`fdakpl.load`; the loaded results predict identically.

        Examples
        --------
        >>> import tempfile, pathlib, fdakpl
        >>> from fdakpl import FunctionalRegression, datasets
        >>> res = FunctionalRegression("rcst ~ cca", datasets.dti_first_visits(), interpolate_inputs=True,
        ...                            progress=False).fit()
        >>> again = fdakpl.load(res.save(pathlib.Path(tempfile.mkdtemp()) / "dti.nc"))
        >>> again.lam == res.lam
        True
        """
        from ..io.netcdf import save

        return save(self, path, engine=engine, overwrite=overwrite)

    def _repr_html_(self) -> str:
        try:
            return self.summary().as_html()
        except Exception as err:  # never break a notebook display
            return f"<pre>{html.escape(repr(self))}\n(summary failed: {html.escape(str(err))})</pre>"

    def __repr__(self) -> str:
        est = self.estimator
        return (f"<FunctionalRegressionResults {self.model.formula!r}: n={self.observations().n_samples}, "
                f"d={est.dictionary_.n_atoms_}, lambda={self.lam:.3g} ({self.lam_how}), solver={self.solver}>")

    # ------------------------------------------------------------------ plots
    @fill_doc(figure_returns=FIGURE_RETURNS, fit=dti_fit_example(plot=True))
    def plot(self, samples: Any = None, bands: Any = None):
        """Overview figure: observed vs fitted curves, pointwise R^2, the lambda path, leading atoms.

        Parameters
        ----------
        samples : sequence, optional
            Sample labels to draw (default: four spread over the data).
        bands : (lower, upper), optional
            Prediction bands (from :meth:`prediction_bands`) drawn around the curves.

        %(figure_returns)s

        Examples
        --------
        %(fit)s
        >>> len(res.plot().axes)
        4
        """
        from .plotting import plot_overview

        return plot_overview(self, samples=samples, bands=bands)


def _edf_and_held_out(path: Any, est: Any, criterion: Any, lam: float) -> tuple[float, dict[str, float] | None]:
    """The fit's effective degrees of freedom and its held-out error with the mean curve's (the summary's line):
    leave-one-curve-out (or leave-one-group-out with groups) at ``lam`` and as lambda grows without bound, where the
    ridge fit is the mean curve (the mean function held at its full-data value in both); the held-out error is None
    without a closed-form fit. One evaluation of the path for both when there are no groups."""
    if path is None:
        return float(getattr(est, "edf_", np.nan)), None
    lams = np.array([lam, 1e12 * max(1.0, lam)])
    closed = getattr(est, "route_", None) == "eigendecomposition"
    groups = getattr(criterion, "labels", None)
    err = path.errors(lams, loo=closed and groups is None)
    if not closed:
        return float(err.edf[0]), None
    loo = err.loo if groups is None else path.loo(lams, groups=groups)
    assert loo is not None
    return float(err.edf[0]), {"model": float(loo[0]), "mean": float(loo[1]), "groups": float(groups is not None)}


def _n_groups(model: Any) -> int | None:
    """The number of groups of a fit with ``groups=`` (None without)."""
    codes = model.group_codes() if getattr(model, "groups", None) is not None else None
    return None if codes is None else int(np.unique(codes).size)


def _diagonal_bound(kernel: Any) -> float:
    """``sup_x k(x, x)`` of the fitted kernel (1 when the kernel does not say)."""
    bound = getattr(kernel, "diagonal_bound", None)
    return float(bound()) if callable(bound) else 1.0


def _unit_scale(Y: np.ndarray, r: np.ndarray, reference: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``Y`` and ``r`` divided by a power of two near the largest value of ``reference`` (default ``Y``), exactly,
    so that sums of squares neither overflow nor underflow at extreme scales (R^2 is scale-free)."""
    scale = power_of_two_scale(Y if reference is None else reference)
    return Y / scale, r / scale


#: relative size below which deviations of responses scaled near 1 are round-off (R^2 of identical curves)
_ROUND_OFF = 1e-12


def _condition_numbers(est: Any, path: Any, lam: float) -> dict[str, float]:
    """Condition numbers of the fit's linear algebra (2-norm; ``inf`` when singular, NaN when unknown).

    ``kernel``: ``cond(K + n lam I)``; ``gram``: ``cond(G)``; ``system``: ``cond(K kron C + n lam u I)`` with
    ``C = B^{1/2} G B^{1/2}`` and ``u`` the dictionary's unit of lambda (``lam u`` is the penalty the fit solves
    with, :meth:`fdakpl.dictionaries.Dictionary.lambda_unit`). From the path's eigenvalues when there is one; the
    other exact solvers decompose ``K`` once here; approximate fits hold no ``n x n`` kernel matrix (NaN).
    """
    from ..solvers.closed_form import sym_sqrt

    n = est.n_samples_fit_
    nl = n * lam
    dec = None if path is None else path.decomposition
    if dec is not None:
        s, e = dec.s, dec.e
    elif getattr(est, "K_", None) is not None:
        Bh = sym_sqrt(est.B_)[0]
        s = np.clip(np.linalg.eigvalsh(est.K_), 0.0, None)
        e = np.clip(np.linalg.eigvalsh(Bh @ est.gram_ @ Bh), 0.0, None)
    else:
        s = e = None
    g = np.abs(est.dictionary_.scaled_gram_eigh()[0])  # cached on the dictionary
    gram = float(g.max() / g.min()) if g.min() > 0 else float("inf")
    if s is None:
        return {"kernel": float("nan"), "gram": gram, "system": float("nan")}
    nu = nl * est.dictionary_.lambda_unit()
    return {"kernel": float((s.max() + nl) / (s.min() + nl)), "gram": gram,
            "system": float((s.max() * e.max() + nu) / (s.min() * e.min() + nu))}


def _rkhs_norm(est: Any) -> float:
    """``||h||_H`` of the fitted function: ``tr(alpha^T K alpha B)^{1/2}`` (exact fits) or ``tr(M B^-1 M^T)^{1/2}``
    (primal weights of approximate fits); NaN when unknown."""
    if getattr(est, "approx_", None) is not None:
        M = est.coef_
        return float(np.sqrt(max(np.trace(M @ np.linalg.solve(est.B_, M.T)), 0.0)))
    K = getattr(est, "K_", None)
    if K is None:
        return float("nan")
    A = est.dual_coef_
    return float(np.sqrt(max(np.sum(A * (K @ A @ est.B_)), 0.0)))
