"""``FunctionalRegression``: the formula front end (model object; results in :mod:`fdakpl.results`)."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from itertools import product
from typing import Any

import numpy as np

from ..data.functional import as_dataset, validate_functional
from ..data.prepared import PreparedInputs, PreparedResponse
from ..data.preprocessing import prepare_inputs, prepare_response
from ..data.scaling import median, power_of_two_scale
from ..data.seen import carry_valid
from ..dictionaries import BSpline, Dictionary, make_dictionary
from ..estimators.kpl import KPLRegressor
from ..factor_kernels import Categorical
from ..formula.terms import TERM_NAMES, combine_kernels, default_kernels, parse_formula
from ..kernels import Gaussian, Kernel, ScaleDecay
from ..losses import LogCosh, is_square, make_loss
from ..tuning.joint import (
    DEFAULT_B_GRID,
    DEFAULT_FACTOR_MULTIPLES,
    DEFAULT_WIDTH_MULTIPLES,
    TuningResult,
    curve_quadratics,
    tune_closed_form,
    warn_on_edge,
)
from ..tuning.partial import MAX_POINTS
from ..tuning.selection import DEFAULT_LAMBDAS, centred_observations, check_edge, kfold_path, ridge_path
from ..utils.notices import InterpolationWarning, distinct, said_once
from .steps import check_lam_grid, curvature_ratio, exact_partial_choice, move_to, set_lambda, sq_distances

__all__ = ["SPARSE_ATOMS", "SPARSE_POINTS", "FunctionalRegression", "is_sparse"]

#: responses observed at fewer points per curve (median) than this are "sparse" (the default dictionary's size)
SPARSE_POINTS = 21
#: atoms of the default dictionary for sparse responses (a cubic B-spline basis; benchmarks/sparse_responses.py)
SPARSE_ATOMS = 8


def is_sparse(counts: np.ndarray, n_locations: int) -> bool:
    """Whether responses observed at ``counts`` points per curve, among ``n_locations`` distinct locations, are sparse.

    Sparse: on median, a curve is observed at fewer than ``SPARSE_POINTS``
    points (the size of the default dictionary) and at fewer than half of the
    distinct locations. The plug-in inner products of such a curve with the
    atoms are too noisy; the front end then fits the exact partial ridge on a
    small B-spline dictionary (``benchmarks/sparse_responses.py``).

    Examples
    --------
    >>> is_sparse(np.array([3, 5, 8]), 16), is_sparse(np.array([55, 50, 55]), 55), is_sparse(np.array([13, 14]), 15)
    (True, False, False)
    """
    counts = np.asarray(counts)
    if counts.size == 0 or counts.min() >= SPARSE_POINTS:  # the median is at least the minimum: no median needed
        return False
    mid = median(counts)
    return bool(mid < SPARSE_POINTS and mid < 0.5 * n_locations)


class FunctionalRegression:
    """Nonlinear function-on-function regression by KPL, specified by a formula.

    A formula is code. In statsmodels and R a formula is evaluated as a program in the caller's
    environment; fdakpl never evaluates its text, but splits it into terms and checks every scalar
    term against a small grammar (variables, numbers, arithmetic inside ``I()``, ``np.log``,
    ``np.exp``, ``np.sqrt``, ... and ``C()``; see :mod:`fdakpl.formula.grammar`), refusing anything else.
    A formula still decides which data enter the model and how they are transformed: review a
    formula that comes from someone else as you would review code. Saved models store the
    checked design as data, and :func:`fdakpl.load` checks it against the same grammar.

    Parameters
    ----------
    formula : str
        ``"response ~ curve + scalar + C(factor) + ..."`` (see :mod:`fdakpl.formula.terms`). Names that
        are not Python identifiers go between backquotes or in ``Q("visit time")``;
        R-style names (``visit.time``) and non-ASCII names work as they are; ``y ~ .`` uses every
        other variable; ``- z`` removes a term.
    data : xarray.Dataset
        Variables sharing the ``sample`` dim; NaN in the response = not observed. The model keeps a
        private copy of the variables it uses (``model.data``): later edits of ``data`` change nothing.
    dictionary : str or Dictionary, default "auto"
        A :class:`~fdakpl.dictionaries.Dictionary` or a name (``"db3"``, ``"fourier"``, ``"fpca"``, ...).
    level : int, optional
        Number of decomposition levels of a wavelet dictionary given by name (the ``level`` of
        :class:`~fdakpl.dictionaries.Wavelet`).
    kernel : Kernel, optional
        One kernel used for every term (default: Gaussian, median-heuristic width per term).
    kernels : mapping, optional
        Per-term kernels, e.g. ``{"cca": Gaussian(0.1), "scalars": Gaussian(2.0), "C(sex)": Categorical(1.0)}``
        (``"scalars"``: the numeric scalar covariates; a term made only of factors is named as written).
    combine : {"product", "sum"}
        How per-term kernels combine.
    output_matrix : None, float, array or OutputMatrix
        ``B``; a number ``b`` is the scale-decaying ``diag(b**-scale)``.
    lam : "loo", "gcv", "cv", float or sequence
        Regularisation, or how to choose it: exact leave-one-curve-out over ``lam_grid``
        (default, closed form on every route), pointwise GCV (leaves out single points; it
        undersmooths when points within a curve are dependent, see the guide's tuning page),
        K-fold CV (``cv`` folds, over ``lam_grid`` and ``param_grid``), a number, or a grid
        (chosen by leave-one-curve-out). ``lambda`` weighs the RKHS norm in
        ``(1/n) sum_i ||y_i - f(x_i)||^2 + lambda ||f||^2``: the loss is averaged over the ``n``
        curves, so ``lambda`` is scikit-learn's ``KernelRidge(alpha=n * lambda)`` (exactly so with
        an orthonormal dictionary and ``B = I``; see the guide's tuning page).
    lam_grid : sequence, optional
        Grid for the criteria (default ``geomspace(1e-8, 1, 21)``).
    width_grid : "auto", sequence of float or None
        Multiples of the median-heuristic width tried for every Gaussian term whose kernel is not
        given, chosen jointly with ``b`` and lambda by the criterion of ``lam`` ("loo", "gcv", or
        at a fixed lambda by leave-one-curve-out); ``"auto"``:
        :data:`fdakpl.tuning.joint.DEFAULT_WIDTH_MULTIPLES` (for factor terms, whose
        :class:`~fdakpl.factor_kernels.Categorical` kernels are Gaussians on indicator rows,
        :data:`fdakpl.tuning.joint.DEFAULT_FACTOR_MULTIPLES`); ``None``: the median heuristic itself.
        Not used by ``lam="cv"`` (give ``param_grid={"sigma": [...]}``) nor by ``approx=``.
    b_grid : "auto", sequence of float or None
        Scale decays ``b`` of ``B = diag(b^-scale)`` tried jointly (only when ``output_matrix``
        is not given and the dictionary has atoms at several scales); ``"auto"``:
        :data:`fdakpl.tuning.joint.DEFAULT_B_GRID`; ``None``: ``B = I``.
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
        ``"level"`` (wavelet levels), ``"b"`` (scale decay), ``"sigma"`` (width of every Gaussian term kernel,
        as a multiple of its default width when ``sigma_relative=True``), ``"gamma"`` (logcosh).
    random_state : int, numpy.random.Generator or None, default 0
        Seed of the CV folds; the default 0 gives the same folds, hence the same fit, on every
        run, ``None`` draws fresh randomness.
    n_jobs : int
        Worker processes of ``lam="cv"`` when it refits each fold, from 500 curves (see
        :func:`fdakpl.tuning.selection.kfold_path`; the closed form and smaller problems run in this process).
    progress : bool or None, default None
        Show progress bars for long work; ``None`` follows the package default
        (``FDAKPL_PROGRESS``, see :mod:`fdakpl.utils.progress`).
    domain : (float, float), optional
        Domain of the response curves (default: the range of its coordinate).
    groups : str or array-like, optional
        Curves that are not independent, e.g. several curves of one subject: the name of a
        variable of ``data`` (dim ``sample``) or one label per curve. Leave-one-curve-out then
        leaves out whole groups (exact, closed form) and ``lam="cv"`` keeps each group in one
        fold; otherwise dependent curves predict each other and the criteria undersmooth.
    approx : object, optional
        An approximation of the input kernel (Nyström / random features), passed to
        :class:`~fdakpl.estimators.kpl.KPLRegressor` when it supports it.

    Examples
    --------
    >>> from fdakpl import FunctionalRegression, datasets
    >>> ds = datasets.dti_first_visits()
    >>> res = FunctionalRegression("rcst ~ cca", data=ds, interpolate_inputs=True, progress=False).fit()
    >>> res.predict(ds.isel(sample=slice(0, 2))).dims
    ('sample', 'rcst_loc')
    """

    def __init__(self, formula: str, data: Any, *, dictionary: str | Dictionary = "auto", level: int | None = None,
                 kernel: Kernel | None = None, kernels: Mapping[str, Kernel] | None = None, combine: str = "product",
                 output_matrix: Any = None, lam: Any = "loo", lam_grid: Sequence[float] | None = None,
                 width_grid: Any = "auto", b_grid: Any = "auto",
                 loss: Any = "square", solver: str = "auto", center: bool = True, interpolate_inputs: bool = False,
                 cv: int = 5, param_grid: Mapping[str, Sequence[Any]] | None = None, sigma_relative: bool = True,
                 random_state: Any = 0, n_jobs: int = 2, progress: bool | None = None,
                 domain: tuple[float, float] | None = None, approx: Any = None, groups: Any = None) -> None:
        self.formula = formula
        # a private deep copy of the variables the model uses (the formula's, and groups= named by its variable):
        # later edits of the user's Dataset (ds["y"] = ..., ds["y"][0] = ...) change neither the fit, nor the
        # results, nor what save() writes; the other variables are not copied (half the cost of a full copy)
        source = as_dataset(data)
        parsed = parse_formula(formula, source)  # checks the user's variables (remembered: fdakpl.data.seen) ...
        used = [parsed.response, *parsed.functional_terms, *([] if parsed.scalar is None else parsed.scalar.variables)]
        if isinstance(groups, str) and groups in source.data_vars:
            used.append(groups)
        self.data = source[list(dict.fromkeys(used))].copy(deep=True)
        carry_valid(source, self.data, {parsed.response: parsed.response_dim,  # ... valid in their copy as well
                                        **{t: next(d for d in source.variables[t].dims if d != "sample")
                                           for t in parsed.functional_terms}})
        parsed.input_grids = {t: np.array(g, dtype=g.dtype) for t, g in parsed.input_grids.items()}  # own memory
        self.dictionary = dictionary
        self.level = level
        self.kernel = kernel
        self.kernels = kernels
        self.combine = combine
        self.output_matrix = output_matrix
        self.lam = lam
        self.lam_grid = lam_grid
        self.width_grid = width_grid
        self.b_grid = b_grid
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
        self.groups = groups
        self.parsed = parsed

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
    def _dictionary(self, spec: Any = None, level: int | None = None) -> Dictionary | str:
        spec = self.dictionary if spec is None else spec
        level = self.level if level is None else level
        if isinstance(spec, Dictionary):
            return spec
        if isinstance(spec, str) and spec == "auto":
            return "auto"
        kw = {"level": level} if level is not None else {}
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
                                 f"({TERM_NAMES})")
            base.update(self.kernels)
        return base

    def _routing(self, fully_observed: bool, sparse: bool = False) -> tuple[str, str]:
        loss = make_loss(self.loss)
        loss_name = loss.name if isinstance(self.loss, str) else type(self.loss).__name__.lower()
        square = is_square(loss)
        solver = self.solver
        if solver == "auto":
            if square and fully_observed:
                return "eig", "square loss, fully observed responses: closed-form ridge (Prop. 4.2)"
            if square and sparse and self.approx is None:  # approx= has no exact partial route: plug-in
                return "exact_partial", ("square loss, sparse responses (on median a curve has under "
                                         f"{SPARSE_POINTS} points and under half the locations): exact partial "
                                         "ridge (ridge-iter-KPL, section 4.3)")
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
            raise ValueError(f"solver={solver!r} solves the square loss only; with loss={self.loss!r} use "
                             "solver='iterative' (or 'auto')")
        return solver, reasons[solver]

    def _estimator(self, kernel: Kernel, solver: str, lam: Any, *, loss: Any = None, dictionary: Any = None,
                   output_matrix: Any = None) -> KPLRegressor:
        return KPLRegressor(dictionary=self._dictionary() if dictionary is None else dictionary, kernel=kernel,
                            output_matrix=self.output_matrix if output_matrix is None else output_matrix, lam=lam,
                            center=self.center, solver=solver, interpolate_inputs=self.interpolate_inputs,
                            domain=self.domain, loss=self.loss if loss is None else loss, approx=self.approx)

    def _loo_name(self) -> str:
        return "leave-one-curve-out" if self.groups is None else \
            f"leave-one-group-out ({self.groups if isinstance(self.groups, str) else 'groups'})"

    def _group_labels(self) -> np.ndarray | None:
        """One label per curve from ``groups`` (a variable name or labels), checked."""
        g = self.groups
        if g is None:
            return None
        n = self.data.sizes["sample"]
        if isinstance(g, str):
            if g not in self.data or self.data[g].dims != ("sample",):
                raise ValueError(f"groups={g!r} must name a variable of data with the single dim 'sample'")
            g = self.data[g].values
        labels = np.asarray(g)
        if labels.shape != (n,):
            raise ValueError(f"groups must give one label per curve ({n}), got shape {labels.shape}")
        if (labels.dtype.kind in "fc" and np.isnan(labels.astype(float)).any()) or \
                (labels.dtype == object and any(v is None for v in labels)):
            raise ValueError("groups has missing labels; give every curve a group")
        return labels

    def _grid_of(self, value: Any, default: np.ndarray, name: str) -> np.ndarray | None:
        if value is None:
            return None
        if isinstance(value, str) and value == "auto":
            return default.copy()  # the module's default grids are increasing
        msg = f"{name} must be 'auto', None or a sequence of numbers > 0, got {value!r}"
        if isinstance(value, str):
            raise ValueError(msg)
        try:
            g = np.asarray(value, dtype=float).ravel()
        except (TypeError, ValueError):
            raise ValueError(msg) from None
        if g.size == 0 or not np.all(np.isfinite(g)) or np.any(g <= 0):
            raise ValueError(msg)
        return np.unique(g)

    def _tune(self, proxy: KPLRegressor, kernels: dict[str, Kernel], Y: Any, lams: np.ndarray,
              how: str, notes: list[str]) -> tuple[TuningResult | None, dict[str, Kernel], Any]:
        """Joint choice of Gaussian widths (multiples of the median heuristic), ``b`` and lambda.

        ``proxy`` is the closed-form square-loss fit with the default kernels; returns the
        tuning result (None at a fixed lambda with nothing else to tune), the chosen kernels and ``B``; a
        choice at the upper end of the default ``b`` grid goes to ``notes``.
        """
        widths = self._grid_of(self.width_grid, DEFAULT_WIDTH_MULTIPLES, "width_grid")
        factor_widths = self._grid_of(self.width_grid, DEFAULT_FACTOR_MULTIPLES, "width_grid")
        bs = self._grid_of(self.b_grid, DEFAULT_B_GRID, "b_grid")
        given = set(self.kernels or {}) if self.kernel is None else set(kernels)
        terms = [t for t, k in kernels.items() if isinstance(k, Gaussian) and t not in given] if widths is not None \
            else []
        tune_b = self.output_matrix is None and bs is not None and np.ptp(proxy.dictionary_.scales_) > 0
        if not terms and not tune_b and how == "fixed":
            return None, kernels, self.output_matrix
        scales = np.asarray(proxy.dictionary_.scales_, dtype=float)
        obs, w, phi = centred_observations(proxy, Y)
        # the criteria on responses divided by a power of two near their size: no overflow of the squares at
        # responses near 1e200 (the scores scale by unit^2, the choice does not change, rounding is exact)
        unit = power_of_two_scale(obs.value)
        obs = obs.with_values(obs.value / unit)
        quad = curve_quadratics(obs, phi, w)
        Xv, Xw = proxy.X_fit_, proxy.X_weights_ or {}
        dist = {t: sq_distances(Xv[t], Xw.get(t), kernels[t].sigma) for t in terms}  # in units of sigma^2
        fixed = {t: k(Xv[t], None, Xw.get(t)) for t, k in kernels.items() if t not in dist}
        product_ = self.combine == "product"

        def kernel_matrix(mult: tuple[float, ...]) -> np.ndarray:
            mats = list(fixed.values()) + [np.exp(-dist[t] / (2.0 * m ** 2))
                                           for t, m in zip(terms, mult, strict=True)]
            out = mats[0]
            for M in mats[1:]:
                out = out * M if product_ else out + M
            return out

        B0 = proxy.B_

        def output_matrix(b: float) -> np.ndarray:
            return ScaleDecay(b).matrix(scales) if tune_b else B0

        score_path = None
        if how == "gcv":
            def score_path(dec: Any, lams_: np.ndarray, B: np.ndarray) -> np.ndarray:
                return ridge_path(dec, phi, obs, w, lams_, loo=False).gcv
        grids = [factor_widths if isinstance(kernels[t], Categorical) else widths for t in terms]
        res = tune_closed_form(kernel_matrix, grids if terms else [1.0], len(terms), output_matrix,
                               bs if tune_b else [np.nan], proxy.gram_, proxy.nu_ / unit, lams,
                               score_path=score_path, quad=quad, criterion=how,
                               groups=None if how == "gcv" else self._group_labels())
        with np.errstate(over="ignore", under="ignore"):  # back to the responses' units (inf/0 only at extremes)
            res.scores = res.scores * np.float64(unit) ** 2
        res.terms = terms
        crit = "GCV" if how == "gcv" else self._loo_name()
        for t, m, g in zip(terms, res.multiples, grids, strict=True):
            if isinstance(kernels[t], Categorical) and isinstance(self.width_grid, str):
                if m in (g.min(), g.max()):  # both ends are natural: levels unrelated, or the factor hardly enters
                    rho = Categorical(m * kernels[t].sigma).correlation
                    end = "levels unrelated" if m == g.min() else "the factor hardly changes the predictions"
                    notes.append(f"the factor term {t!r}: correlation {rho:.4f} between its levels by {crit}, an "
                                 f"end of the default grid ({end})")
                continue
            warn_on_edge(f"width multiple (of the median heuristic) of {t!r}", g,
                         int(np.argmin(np.abs(g - m))), crit,
                         "width_grid=[...], multiples of the median heuristic", stacklevel=5,
                         lower_is_natural=isinstance(self.width_grid, str))  # see DEFAULT_WIDTH_MULTIPLES
        if tune_b and isinstance(self.b_grid, str) and res.index[1] == len(bs) - 1:
            # the default grid's upper end: extending it to b = 4 raised the held-out error on DTI (20/20 splits)
            # and changed nothing on aemet, emotion and poblenou (benchmarks/grid_edges.py), so no warning
            notes.append(f"scale decay b = {res.b:g} chosen by {crit}, the largest of the default grid "
                         f"{list(map(float, bs))}; larger b (smoother fitted curves) did not lower the held-out error "
                         "on the benchmark data sets (benchmarks/README.md, 'Grid edges'); b_grid=[...] tries others")
        elif tune_b:
            warn_on_edge("scale decay b", bs, res.index[1], crit, "b_grid=[...]", lower_is_natural=True, stacklevel=5)
        chosen = dict(kernels)
        for t, m in zip(terms, res.multiples, strict=True):
            chosen[t] = type(kernels[t])(m * kernels[t].sigma)  # a Gaussian or a Categorical (factor) kernel
        return res, chosen, (ScaleDecay(res.b) if tune_b else self.output_matrix)

    def _cv_param_grid(self, kernels: dict[str, Kernel]) -> dict[str, list[Any]]:
        grid = dict(self.param_grid or {})
        out: dict[str, list[Any]] = {}
        if "levels" in grid:
            raise ValueError("param_grid key 'levels' was renamed 'level' (the name of Wavelet's parameter)")
        dics = grid.pop("dictionary", None)
        levels = grid.pop("level", None)
        if dics is not None or levels is not None:
            dics = dics if dics is not None else [self.dictionary]
            levels = levels if levels is not None else [self.level]
            out["dictionary"] = [self._dictionary(d, lv) if not isinstance(d, Dictionary) else d
                                 for d, lv in product(dics, levels)]
        if "b" in grid:
            out["output_matrix"] = [ScaleDecay(float(b)) for b in grid.pop("b")]
        if "sigma" in grid:
            sig = grid.pop("sigma")
            opts = []
            for s in sig:
                ks = {t: type(k)(float(s) * k.sigma if self.sigma_relative else float(s))
                      if isinstance(k, Gaussian) else k for t, k in kernels.items()}
                opts.append(combine_kernels(ks, self.parsed.terms, self.combine))
            out["kernel"] = opts
        if "gamma" in grid:  # logcosh's gamma (relative to the responses' scale, as the default loss's)
            out["loss"] = [LogCosh(float(g)) for g in grid.pop("gamma")]
        if grid:
            out.update({k: list(v) for k, v in grid.items()})  # raw KPLRegressor parameters
        return out

    def _warn_cv_edges(self, pg: dict[str, list[Any]], best: dict[str, Any]) -> None:
        """Edge warnings for the numeric hyper-parameters K-fold CV chose (level, b, sigma, gamma)."""
        grid = dict(self.param_grid or {})
        crit = f"{self.cv}-fold-CV"
        keys = {"b": "output_matrix", "sigma": "kernel", "gamma": "loss", "level": "dictionary"}
        for key, param in keys.items():
            if key not in grid or param not in best or len(grid[key]) < 2:
                continue
            vals = [float(v) for v in grid[key]]
            pos = next(i for i, v in enumerate(pg[param]) if v is best[param])  # same objects as the grid's
            if key == "level":  # dictionaries are the product (dictionary names) x (levels)
                pos %= len(vals)
            warn_on_edge(key if key != "b" else "scale decay b", vals, pos, crit, f"param_grid={{{key!r}: [...]}}",
                         lower_is_natural=key == "b" and min(vals) <= 1.0, stacklevel=6)

    # ------------------------------------------------------------------ fit
    def fit(self) -> Any:
        """Fit the model and return a :class:`~fdakpl.results.FunctionalRegressionResults`.

        Examples
        --------
        >>> from fdakpl import datasets
        >>> res = FunctionalRegression("rcst ~ cca", datasets.dti_first_visits(),
        ...                            interpolate_inputs=True, progress=False).fit()
        >>> res.lam_how
        'leave-one-curve-out'
        """
        from ..results.core import FunctionalRegressionResults

        t0 = time.perf_counter()
        notes: list[str] = []
        ds = self.data
        Y = validate_functional(ds[self.parsed.response], self.parsed.response)
        X = self.parsed.inputs(ds)
        observed = ~np.isnan(Y.values)
        counts = observed.sum(axis=1)
        fully = bool(observed.all())
        sparse = is_sparse(counts, int(np.count_nonzero(observed.any(axis=0))))
        solver, reason = self._routing(fully, sparse)
        dictionary = self._dictionary()
        if sparse and isinstance(dictionary, str) and dictionary == "auto":
            dictionary = BSpline(SPARSE_ATOMS)
            reason = f"{reason}; sparse responses: default dictionary BSpline({SPARSE_ATOMS})"
        kernels = self._term_kernels()
        kernel = combine_kernels(kernels, self.parsed.terms, self.combine)
        how, grid, lam_value = self._lam_spec()
        criteria = None
        cv_result = None
        tuning = None
        output_matrix = self.output_matrix
        # warnings are said once, at the user's line; filled input values (the user asked for it) only
        # go into the notes, which the summary shows
        with said_once(quiet=(InterpolationWarning,)) as caught:
            if self.approx is None:  # validated once here, handed to the estimator as arrays (not checked again)
                Xp = PreparedInputs(*prepare_inputs(X, interpolate=self.interpolate_inputs, validated=True))
                Yp = PreparedResponse(*prepare_response(Y, None, self.domain, validated=True))
            if self.approx is not None:
                from ..estimators.approx import fit_approx

                if self.groups is not None:
                    raise ValueError("groups= is not available with approx= (the primal leave-one-out leaves out "
                                     "single curves); drop approx= or groups=")
                if how == "cv":
                    raise ValueError(f"lam={self.lam!r} is not available with approx=: the approximate (primal) "
                                     "solver chooses lambda by leave-one-curve-out (default) or GCV from its "
                                     "statistics; use lam='loo', 'gcv', a number or a grid")
                est = self._estimator(kernel, solver, grid if how != "fixed" else lam_value, dictionary=dictionary)
                fit_approx(est, X, Y, criterion=how if how != "fixed" else "loo")
                fitted_approx = est.approx_
                lam_value = float(fitted_approx.lam_)
                edge = how != "fixed" and check_edge(grid, int(np.argmin(fitted_approx.scores_)), how,
                                                     stacklevel=4)
                reason = f"{reason}; input kernel approximated: {fitted_approx.approx_description_}"
            elif how == "cv":
                est0 = self._estimator(kernel, solver, float(grid[0]), dictionary=dictionary)
                pg = self._cv_param_grid(kernels)
                cv_result = kfold_path(est0, X, Y, lams=grid, param_grid=pg, n_splits=self.cv,
                                       random_state=self.random_state, n_jobs=self.n_jobs,
                                       progress=self.progress, groups=self._group_labels())
                best = cv_result["best_params"]
                lam_value = cv_result["best_lam"]
                est = est0.set_params(**best, lam=lam_value)
                edge = check_edge(grid, cv_result["best_index"][1], "cv", stacklevel=4)
                self._warn_cv_edges(pg, best)
                est.fit(Xp, Yp)
            elif how in {"gcv", "loo"} and (solver == "exact_partial" or (solver == "iterative" and sparse)) \
                    and int(np.sum(observed)) <= MAX_POINTS:
                # the exact partial ridge's own criteria (one N x N eigendecomposition, exact path); for a robust
                # loss on sparse responses it is the square-loss stand-in (per-point losses, like the iterative fit);
                # kernel widths and b are not tuned on this route
                est = self._estimator(kernel, solver, float(grid[0]), dictionary=dictionary)
                proxy = self._estimator(kernel, "eig", float(grid[0]), loss="square", dictionary=dictionary)
                proxy.fit(Xp, Yp)
                criteria, lam_value, how, edge = exact_partial_choice(proxy, Y, grid, how, sparse, notes)
                if solver == "iterative":
                    lam_value *= curvature_ratio(self.loss)
                    notes.append(f"lambda chosen by {how.upper()} of the exact partial square-loss ridge, a "
                                 f"stand-in for solver={solver!r}; use lam='cv' for a direct choice")
                est.set_params(lam=lam_value).fit(Xp, Yp)
            else:
                # the closed-form square-loss ridge scores every candidate (a stand-in for other losses/solvers)
                lams = grid if how != "fixed" else np.array([lam_value])
                proxy = self._estimator(kernel, "eig", float(lams[0]), loss="square", dictionary=dictionary).fit(Xp, Yp)
                tuning, kernels, output_matrix = self._tune(proxy, kernels, Y, lams, how, notes)
                edge = False
                if tuning is not None:
                    lam_value, idx = tuning.lam, tuning.index[2]
                    if tuning.terms or not np.isnan(tuning.b):  # something else than lambda was tuned
                        kernel = combine_kernels(kernels, self.parsed.terms, self.combine)
                        move_to(proxy, kernel, output_matrix, lam_value)
                if how != "fixed":
                    edge = check_edge(grid, idx, how, stacklevel=4)
                if solver == "eig":  # square loss (routing): the stand-in is the fit
                    est = proxy
                    if lam_value != est.lam:  # same as refitting: the decomposition serves every lambda
                        set_lambda(est, lam_value)
                else:
                    if how != "fixed" or tuning is not None:
                        crit = "LOO" if how in {"loo", "fixed"} else how.upper()
                        notes.append(f"hyper-parameters chosen by {crit} of the closed-form square-loss ridge, a "
                                     f"proxy (stand-in) for solver={solver!r}; use lam='cv' for a direct choice")
                    if how != "fixed":  # a loss curving like c a^2 near 0 matches the square loss's fit at lambda * c
                        lam_value *= curvature_ratio(self.loss)
                    est = self._estimator(kernel, solver, lam_value, output_matrix=output_matrix,
                                          dictionary=dictionary).fit(Xp, Yp)
        notes += [str(w.message) for w in distinct(caught)]
        lam_how = {"gcv": "GCV", "loo": self._loo_name(), "cv": f"{self.cv}-fold CV", "fixed": "fixed"}[how]
        return FunctionalRegressionResults(
            model=self, estimator=est, kernels=kernels, solver=solver, solver_reason=reason, lam=lam_value,
            lam_how=lam_how, lam_grid=grid if how != "fixed" else None, criteria=criteria, cv_result=cv_result,
            lam_on_edge=bool(edge), notes=notes, fit_seconds=time.perf_counter() - t0, tuning=tuning,
        )

    def _lam_spec(self) -> tuple[str, np.ndarray, float]:
        """How lambda is chosen ("loo", "gcv", "cv", "fixed"), its grid and the fixed value (NaN if none)."""
        lam_spec = self.lam
        grid = self.lam_grid if self.lam_grid is not None else DEFAULT_LAMBDAS
        lam_value = float("nan")
        if isinstance(lam_spec, str):
            how = lam_spec.lower()
            if how not in {"gcv", "loo", "cv"}:
                raise ValueError(f"lam must be 'loo', 'gcv', 'cv', a number > 0 or a grid, got {lam_spec!r}")
            grid = check_lam_grid(grid, "lam_grid")
        elif np.ndim(lam_spec) == 0:
            how = "fixed"
            lam_value = float(lam_spec)
            if not np.isfinite(lam_value) or lam_value <= 0:
                raise ValueError(f"lam must be a number > 0, got {lam_spec}")
            if self.lam_grid is not None:  # the user's grid is checked even if unused; the default is valid
                grid = check_lam_grid(grid, "lam_grid")
        else:
            how = "loo"
            grid = check_lam_grid(lam_spec, "lam")
        if self.param_grid and how != "cv":
            raise ValueError(f"param_grid is searched only with lam='cv' (got lam={lam_spec!r}), so it would be "
                             "ignored; pass lam='cv' to search it, or drop param_grid")
        return how, grid, lam_value
