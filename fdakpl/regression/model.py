"""``FunctionalRegression``: the formula front end (model object; results in :mod:`fdakpl.results`).

A fit validates the data once (:func:`fdakpl.ridge.problem.prepare_problem`), chooses the solver
(:func:`fdakpl.regression.steps.routing`) and a criterion for lambda (:mod:`fdakpl.tuning.criteria`),
tunes the kernel widths, ``b`` and lambda on ridge paths of that one problem
(:func:`fdakpl.regression.steps.tune`), and fits the estimator from the path tuning chose, without
refitting.
"""

from __future__ import annotations

import copy
import functools
import time
from collections.abc import Mapping, Sequence
from itertools import product
from typing import Any

import numpy as np

from ..data.functional import as_dataset
from ..data.integration import MODES
from ..data.preprocessing import prepare_inputs
from ..data.validation import check_bool
from ..dictionaries import BSpline, Dictionary, make_dictionary
from ..estimators.kpl import KPLRegressor
from ..formula.terms import TERM_NAMES, ParsedFormula, parse_formula
from ..kernels import Gaussian, Kernel, ScaleDecay
from ..losses import LogCosh, is_square, make_loss
from ..ridge.problem import prepare_problem, refit_problem
from ..solvers.memory import check_exact_memory
from ..tuning.criteria import LOO, Criterion, Fixed, GroupLOO, edge_notice
from ..tuning.kfold import kfold_path
from ..tuning.partial import MAX_POINTS
from ..tuning.search import DEFAULT_B_GRID, DEFAULT_WIDTH_MULTIPLES
from ..utils.notices import InterpolationWarning, distinct, said_once, warn
from ..utils.saved import saved
from .steps import (
    SPARSE_ATOMS,
    SPARSE_POINTS,
    atom_candidates,
    combine,
    criterion_of,
    curvature_ratio,
    default_widths,
    exact_partial_choice,
    group_labels,
    is_sparse,
    kfold_scorer,
    routing,
    term_grids,
    tune,
    tuning_grid,
    tuning_notices,
)

#: ``_dictionary(spec, _NO_LEVEL)``: the dictionary without a level, whatever the model's ``level``
_NO_LEVEL = object()


def _takes_level(spec: Any) -> bool:
    """Whether a dictionary (or its name) has a ``level`` (wavelets)."""
    if isinstance(spec, str):
        if spec == "auto":
            return False
        try:
            spec = make_dictionary(spec)
        except (TypeError, ValueError):
            return False
    return _class_takes_level(type(spec))


@functools.cache
def _class_takes_level(cls: type) -> bool:
    import inspect

    return "level" in inspect.signature(cls).parameters


__all__ = ["SPARSE_ATOMS", "SPARSE_POINTS", "FunctionalRegression", "is_sparse"]


@saved("formula", "dictionary", "level", "kernel", "kernels", "combine", "output_matrix", "lam", "lam_grid",
       "width_grid", "b_grid", "loss", "solver", "center", "interpolate_inputs", "cv", "param_grid", "sigma_relative",
       "random_state", "n_jobs", "progress", "domain", "approx", "groups", "new_subjects", "integration",
       defaults={"new_subjects": False, "integration": "auto"})
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
        ``"auto"``: hat functions on up to 21 response locations, B-splines for sparse responses, else a
        Fourier basis whose number of frequencies (10, 20 or 40, at most one atom per location) is chosen
        with the widths, ``b`` and lambda by the criterion of ``lam``.
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
        K-fold CV (``cv`` folds: the widths, ``b``, the atoms and lambda like the default, or exactly
        ``param_grid`` and ``lam_grid`` when ``param_grid`` is given), a number, or a grid
        (chosen by leave-one-curve-out). ``lambda`` weighs the RKHS norm in
        ``(1/n) sum_i ||y_i - f(x_i)||^2 + lambda u ||f||^2``: the loss is averaged over the ``n``
        curves, so ``lambda`` is scikit-learn's ``KernelRidge(alpha=n * lambda)`` (exactly so with
        an orthonormal dictionary and ``B = I``; see the guide's tuning page), and ``u`` is the mean
        squared norm of the atoms (1 for orthonormal dictionaries), so that ``lambda`` does not depend
        on the unit of the response's locations.
    lam_grid : sequence, optional
        Grid for the criteria (default ``geomspace(1e-8, 1, 21)``).
    width_grid : "auto", sequence of float or None
        Multiples of the median-heuristic width tried for every Gaussian term whose kernel is not
        given, chosen jointly with ``b`` and lambda by the criterion of ``lam`` ("loo", "gcv", "cv",
        or at a fixed lambda by leave-one-curve-out); ``"auto"``:
        :data:`fdakpl.tuning.search.DEFAULT_WIDTH_MULTIPLES` (for factor terms, whose
        :class:`~fdakpl.factor_kernels.Categorical` kernels are Gaussians on indicator rows,
        :data:`fdakpl.tuning.search.DEFAULT_FACTOR_MULTIPLES`; on the exact partial route of sparse
        responses: the median heuristic, unless a grid is given); ``None``: the median heuristic
        itself. Not used by ``approx=``, nor by ``lam="cv"`` with a ``param_grid``.
    b_grid : "auto", sequence of float or None
        Scale decays ``b`` of ``B = diag(b^-scale)`` tried jointly (only when ``output_matrix``
        is not given and the dictionary has atoms at several scales); ``"auto"``:
        :data:`fdakpl.tuning.search.DEFAULT_B_GRID`; ``None``: ``B = I``.
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
        :func:`fdakpl.tuning.kfold.kfold_path`; the closed form and smaller problems run in this process).
    progress : bool or None, default None
        Show progress bars for long work; ``None`` follows the package default
        (``FDAKPL_PROGRESS``, see :mod:`fdakpl.utils.progress`).
    domain : (float, float), optional
        Domain of the response curves (default: the range of its coordinate).
    groups : str or array-like, optional
        Curves that are not independent, e.g. several curves of one subject: the name of a
        variable of ``data`` (dim ``sample``) or one label per curve. Leave-one-curve-out then
        leaves out whole groups (exact, closed form, on every route but ``approx=``) and ``lam="cv"``
        keeps each group in one fold; otherwise dependent curves predict each other and the criteria
        undersmooth. Refused with a single group, with curves without a label, with ``lam="gcv"``
        and with ``approx=``.
    new_subjects : bool, default False
        With a subject term ``re(ID)``: whether the model is meant to predict curves of subjects not seen when
        fitting. ``False``: the subjects of new curves are known, and the hyper-parameters (with the subject
        term's weight) are chosen by leave-one-curve-out, where the other curves of a left-out curve's subject
        stay in. ``True``: leave-one-subject-out (``groups=`` the subject labels), where the subject term of a
        left-out subject predicts zero, as it does for a new subject. Either way :meth:`predict` gives the
        population prediction (the subject term 0) for a subject not seen when fitting, and says so once.
    approx : object, optional
        An approximation of the input kernel (Nyström / random features), passed to
        :class:`~fdakpl.estimators.kpl.KPLRegressor` when it supports it.
    integration : {"auto", "interpolate", "quadrature", "plugin"}
        How integrals over the response domain are estimated from the observed points
        (:mod:`fdakpl.data.integration`): ``"interpolate"``, the grid's trapezoid on each curve's linear
        interpolant (gaps bridged, constant beyond the curve's ends); ``"quadrature"``, the trapezoid on
        each curve's own observed points; ``"plugin"``, the paper's ``|Theta| / m_i`` per point.
        ``"auto"`` (default): quadrature for fully observed curves, ``"interpolate"`` for dense curves
        with gaps, the plug-in for sparse ones (on the exact partial route), chosen by held-out error
        in ``benchmarks/partial_observation.py``. With ``approx=`` the same choice is made from the
        streamed counts (``"quadrature"`` then needs complete curves). The summary says which ran and why.

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
                 domain: tuple[float, float] | None = None, approx: Any = None, groups: Any = None,
                 new_subjects: bool = False, integration: str = "auto") -> None:
        self.formula = formula
        # a private deep copy of the variables the model uses (the formula's, and groups= named by its variable):
        # later edits of the user's Dataset (ds["y"] = ..., ds["y"][0] = ...) change neither the fit, nor the
        # results, nor what save() writes; the other variables are not copied (half the cost of a full copy)
        source = as_dataset(data)
        parsed = parse_formula(formula, source)  # checks the variables the formula uses
        used = [parsed.response, *parsed.functional_terms, *([] if parsed.scalar is None else parsed.scalar.variables)]
        if isinstance(groups, str) and groups in source.data_vars:
            used.append(groups)
        self.data = source[list(dict.fromkeys(used))].copy(deep=True)
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
        self.new_subjects = new_subjects
        if integration not in MODES:
            raise ValueError(f"integration must be one of {', '.join(map(repr, MODES))}, got {integration!r}")
        self.integration = integration
        self.parsed = parsed
        self._parsed_for = (formula, self.data)

    def _refresh_parsed(self) -> ParsedFormula:
        """The formula parsed against the model's data, again if either was reassigned since it was last parsed
        (``model.formula = "y ~ x"`` then ``fit()`` fits ``y ~ x``, never the old terms under the new label)."""
        formula, data = getattr(self, "_parsed_for", (None, None))
        if formula == self.formula and data is self.data and isinstance(self.parsed, ParsedFormula):
            return self.parsed
        try:
            parsed = parse_formula(self.formula, self.data)
        except ValueError as err:
            raise ValueError(f"{err} (the model keeps only the variables of the formula it was created with; for "
                             "other variables create a new FunctionalRegression(formula, data))") from None
        parsed.input_grids = {t: np.array(g, dtype=g.dtype) for t, g in parsed.input_grids.items()}
        self.parsed, self._parsed_for = parsed, (self.formula, self.data)
        return parsed

    def _snapshot(self, parsed: ParsedFormula) -> FunctionalRegression:
        """The model as it was fitted, for the results: its own containers, so later edits of the model (its
        formula, data, kernels, grids) change neither the results nor what they save."""
        snap = copy.copy(self)
        snap.parsed = parsed
        snap.data = self.data.copy(deep=False)
        snap._parsed_for = (self.formula, snap.data)
        for name in ("kernels", "param_grid", "lam_grid", "width_grid", "b_grid", "domain"):
            value = getattr(self, name)
            if isinstance(value, (dict, list)):
                setattr(snap, name, copy.deepcopy(value))
        return snap

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
    def _dictionary(self, spec: Any = None, level: Any = None) -> Dictionary | str:
        spec = self.dictionary if spec is None else spec
        level = self.level if level is None else level
        if isinstance(spec, Dictionary):
            return spec
        if isinstance(spec, str) and spec == "auto":
            return "auto"
        if level is not None and level is not _NO_LEVEL and not _takes_level(spec):
            raise ValueError(f"level={level!r} applies to wavelet dictionaries (e.g. dictionary='db3'), not to "
                             f"dictionary={spec!r}; drop level or choose a wavelet")
        kw = {"level": level} if level is not None and level is not _NO_LEVEL else {}
        return make_dictionary(spec, **kw)

    def _given_kernels(self) -> dict[str, Kernel | None]:
        """The kernel of every term of the formula, None where the default (median-heuristic Gaussian, Categorical for
        a factor term) applies."""
        terms = self.parsed.terms
        if self.kernels is not None and self.kernel is not None:
            raise ValueError("pass either kernel= (one kernel for all terms) or kernels= (per term), not both")
        if self.kernel is not None:  # one kernel for the terms on data; a subject term keeps its RandomEffect
            return {t: None if t in self.parsed.subject_terms else self.kernel for t in terms}
        given = dict(self.kernels or {})
        unknown = [k for k in given if k not in terms]
        if unknown:
            raise ValueError(f"kernels given for {unknown}, which are not terms of the formula {terms} "
                             f"({TERM_NAMES})")
        for t, k in given.items():
            if not isinstance(k, Kernel):
                raise TypeError(f"kernels[{t!r}] must be a fdakpl.kernels.Kernel, got {type(k).__name__}")
        if self.combine not in {"product", "sum"}:
            raise ValueError(f"combine must be 'product' or 'sum', got {self.combine!r}")
        return {t: given.get(t) for t in terms}

    def default_kernels(self) -> dict[str, Kernel]:
        """The kernel of every term before tuning: the given ones, and kernels with median-heuristic widths
        (:func:`fdakpl.regression.steps.default_widths`: Gaussian, Categorical for factor terms) for the others.

        Examples
        --------
        >>> from fdakpl import datasets
        >>> m = FunctionalRegression("rcst ~ cca", datasets.dti_first_visits(), interpolate_inputs=True)
        >>> type(m.default_kernels()["cca"]).__name__
        'Gaussian'
        """
        Xv, Xw, _, _ = prepare_inputs(self.parsed.inputs(self.data), interpolate=self.interpolate_inputs)
        return default_widths(Xv, Xw, self._given_kernels(), self.parsed.factor_terms,
                              self.parsed.subject_terms)

    def group_codes(self) -> np.ndarray | None:
        """One group code per curve from ``groups=`` (0, 1, ... in order of first appearance), or None without.

        Examples
        --------
        >>> from fdakpl import datasets
        >>> ds = datasets.dti_first_visits()
        >>> FunctionalRegression("rcst ~ cca", ds, groups=ds["sex"].values).group_codes()[:4]
        array([0, 0, 1, 1])
        """
        return self._group_labels()[0]

    def _group_labels(self) -> tuple[np.ndarray | None, str]:
        """One group code per curve from ``groups`` (a variable name or labels), checked
        (:func:`fdakpl.regression.steps.group_labels`); and what they are."""
        g = self.groups
        if not isinstance(self.new_subjects, (bool, np.bool_)):
            raise TypeError(f"new_subjects must be True or False, got {self.new_subjects!r}")
        if self.new_subjects:
            subjects = self.parsed.subject_terms
            if len(subjects) != 1 or g is not None:
                why = ("the formula has no subject term re(ID)" if not subjects else
                       f"the formula has several subject terms {subjects}" if len(subjects) > 1 else
                       "groups= is given too")
                raise ValueError(f"new_subjects=True leaves out the curves of one subject at a time, by the labels "
                                 f"of the formula's subject term re(ID); {why}: give one re(ID) term and no groups= "
                                 "(or groups= without new_subjects)")
            Z = self.parsed.inputs(self.data)[subjects[0]]
            return group_labels(np.argmax(Z, axis=1), Z.shape[0], f"new_subjects=True ({subjects[0]})"), subjects[0]
        if g is None:
            return None, ""
        n = self.data.sizes["sample"]
        label = g if isinstance(g, str) else "groups"
        if isinstance(g, str):
            if g not in self.data or self.data[g].dims != ("sample",):
                raise ValueError(f"groups={g!r} must name a variable of data with the single dim 'sample'")
            g = self.data[g].values
        samples = self.data["sample"].values if "sample" in self.data.coords else None
        return group_labels(g, n, f"groups={label!r}" if label != "groups" else "groups", samples), label

    def _estimator(self, kernel: Kernel, solver: str, lam: float, *, loss: Any = None, dictionary: Any = None,
                   output_matrix: Any = None) -> KPLRegressor:
        return KPLRegressor(dictionary=self._dictionary() if dictionary is None else dictionary, kernel=kernel,
                            output_matrix=self.output_matrix if output_matrix is None else output_matrix, lam=lam,
                            center=self.center, solver=solver, interpolate_inputs=self.interpolate_inputs,
                            domain=self.domain, loss=self.loss if loss is None else loss,
                            integration=self.integration)

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
            # a level is crossed with the dictionaries that take one (wavelets); the others are tried once
            made = [self._dictionary(d, lv) if _takes_level(d) else d if isinstance(d, Dictionary)
                    else self._dictionary(d, _NO_LEVEL) for d, lv in product(dics, levels)]
            if levels != [None] and not any(_takes_level(d) for d in dics):
                raise ValueError(f"param_grid's 'level' applies to wavelet dictionaries (e.g. 'db3'); none of "
                                 f"{list(map(str, dics))} takes a level: drop 'level' or add a wavelet")
            out["dictionary"] = list({repr(d): d for d in made}.values())
        if "b" in grid:
            out["output_matrix"] = [ScaleDecay(float(b)) for b in grid.pop("b")]
        if "sigma" in grid:
            sig = grid.pop("sigma")
            opts = []
            for s in sig:
                ks = {t: type(k)(float(s) * k.sigma if self.sigma_relative else float(s))  # Gaussian or Categorical
                      if isinstance(k, Gaussian) else k for t, k in kernels.items()}
                opts.append(combine(ks, self.combine))
            out["kernel"] = opts
        if "gamma" in grid:  # logcosh's gamma (relative to the responses' scale, as the default loss's)
            out["loss"] = [LogCosh(float(g)) for g in grid.pop("gamma")]
        if grid:
            out.update({k: list(v) for k, v in grid.items()})  # raw KPLRegressor parameters
        return out

    def _warn_cv_edges(self, pg: dict[str, list[Any]], best: dict[str, Any], criterion: Criterion) -> None:
        """Edge notices for the numeric hyper-parameters K-fold CV chose (level, b, sigma, gamma)."""
        grid = dict(self.param_grid or {})
        keys = {"b": "output_matrix", "sigma": "kernel", "gamma": "loss", "level": "dictionary"}
        for key, param in keys.items():
            if key not in grid or param not in best or len(grid[key]) < 2:
                continue
            vals = [float(v) for v in grid[key]]
            pos = next(i for i, v in enumerate(pg[param]) if v is best[param])  # same objects as the grid's
            if key == "level":  # dictionaries are the product (dictionary names) x (levels)
                pos %= len(vals)
            msg = edge_notice(key if key != "b" else "scale decay b", np.array(vals), vals[pos], criterion,
                              f"param_grid={{{key!r}: [...]}}", natural_low=key == "b" and min(vals) <= 1.0)
            if msg:
                warn(msg)

    # ------------------------------------------------------------------ fit
    def fit(self) -> Any:
        """Fit the model and return a :class:`~fdakpl.results.FunctionalRegressionResults`.

        The data are validated once and prepared once (one :class:`~fdakpl.ridge.problem.KPLProblem`); the
        widths, ``b`` and lambda are chosen on ridge paths of that problem, and the fitted estimator takes
        the path that was chosen.

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
        for name in ("center", "interpolate_inputs", "sigma_relative"):
            check_bool(getattr(self, name), name)
        check_bool(self.progress, "progress", none=True)
        parsed = self._refresh_parsed()
        Y = self.data[parsed.response]
        observed = ~np.isnan(np.asarray(Y.values, dtype=float))
        fully = bool(observed.all())
        sparse = is_sparse(observed.sum(axis=1), int(np.count_nonzero(observed.any(axis=0))))
        solver, reason = routing(self.loss, self.solver, fully, sparse, approx=self.approx is not None)
        dictionary = self._dictionary()
        if sparse and isinstance(dictionary, str) and dictionary == "auto":
            dictionary = BSpline(SPARSE_ATOMS)
            reason = f"{reason}; sparse responses: default dictionary BSpline({SPARSE_ATOMS})"
        groups, groups_label = self._group_labels()
        criterion, grid = criterion_of(self.lam, self.lam_grid, groups, groups_label, self.cv, self.random_state)
        if self.param_grid and criterion.key != "cv":
            raise ValueError(f"param_grid is searched only with lam='cv' (got lam={self.lam!r}), so it would be "
                             "ignored; pass lam='cv' to search it, or drop param_grid")
        given = self._given_kernels()
        widths = tuning_grid(self.width_grid, DEFAULT_WIDTH_MULTIPLES, "width_grid")
        bs = tuning_grid(self.b_grid, DEFAULT_B_GRID, "b_grid")
        X = parsed.inputs(self.data)
        fit: dict[str, Any] = {"problem": None, "tuning": None, "criteria": None, "cv_result": None,
                               "chosen": float(grid[0])}
        # warnings are said once, at the user's line; filled input values (the user asked for it) only
        # go into the notes, which the summary shows
        with said_once(quiet=(InterpolationWarning,)) as caught:
            if self.approx is not None:
                est, kernels, lam = self._fit_approx(X, Y, dictionary, given, criterion, grid)
                fit["chosen"] = lam
                reason = f"{reason}; input kernel approximated: {est.approx_description_}"
            else:
                est, kernels, lam, criterion = self._fit_exact(X, Y, dictionary, solver, sparse, given, widths, bs,
                                                               criterion, grid, notes, fit)
            if not isinstance(criterion, Fixed):
                msg = edge_notice("lambda", grid, fit["chosen"], criterion, "lam_grid=np.geomspace(...)")
                if msg:
                    warn(msg)
                fit["edge"] = msg is not None
        notes += [str(w.message) for w in distinct(caught)]
        return FunctionalRegressionResults(
            model=self._snapshot(parsed), estimator=est, kernels=kernels, solver=solver, solver_reason=reason, lam=lam,
            criterion=criterion, lam_grid=None if isinstance(criterion, Fixed) else grid, criteria=fit["criteria"],
            cv_result=fit["cv_result"], lam_on_edge=bool(fit.get("edge", False)), notes=notes,
            fit_seconds=time.perf_counter() - t0, tuning=fit["tuning"], problem=fit["problem"],
            path=getattr(est, "path_", None),
        )

    def _fit_approx(self, X: Any, Y: Any, dictionary: Any, given: dict[str, Kernel | None], criterion: Criterion,
                    grid: np.ndarray) -> tuple[Any, dict[str, Kernel], float]:
        """The approximate (primal) fit: lambda by its own leave-one-curve-out or GCV from streamed statistics."""
        from ..estimators.approx import ApproxKPLRegressor

        if self.groups is not None:
            raise ValueError("groups= is not available with approx=: the approximate (primal) solver's "
                             "leave-one-out leaves out single curves, and nothing else on that route uses groups; "
                             "drop approx= or groups=")
        if criterion.key == "cv":
            raise ValueError(f"lam={self.lam!r} is not available with approx=: the approximate (primal) "
                             "solver chooses lambda by leave-one-curve-out (default) or GCV from its "
                             "statistics; use lam='loo', 'gcv', a number or a grid")
        if any(k is None for k in given.values()):
            Xv, Xw, _, _ = prepare_inputs(X, interpolate=self.interpolate_inputs)
            kernels = default_widths(Xv, Xw, given, self.parsed.factor_terms, self.parsed.subject_terms)
        else:
            kernels = dict(given)  # type: ignore[arg-type]
        fixed = isinstance(criterion, Fixed)
        est = ApproxKPLRegressor(dictionary=dictionary, kernel=combine(kernels, self.combine),
                                 output_matrix=self.output_matrix, lam=float(grid[0]) if fixed else grid,
                                 center=self.center, domain=self.domain, interpolate_inputs=self.interpolate_inputs,
                                 approx=self.approx, progress=self.progress, integration=self.integration,
                                 criterion="loo" if fixed else criterion.key, loss=self.loss).fit(X, Y)
        return est, kernels, float(est.lam_)

    def _fit_exact(self, X: Any, Y: Any, dictionary: Any, solver: str, sparse: bool,
                   given: dict[str, Kernel | None], widths: np.ndarray | None, bs: np.ndarray | None,
                   criterion: Criterion, grid: np.ndarray, notes: list[str], fit: dict[str, Any]
                   ) -> tuple[KPLRegressor, dict[str, Kernel], float, Criterion]:
        """The exact fits: one problem, tuned on its ridge paths (or by K-fold CV), then the estimator."""
        square = prepare_problem(X, Y, dictionary=dictionary, center=self.center, loss="square",
                                 integration=self.integration, domain=self.domain,
                                 interpolate_inputs=self.interpolate_inputs, who="the formula")
        problem = square if is_square(make_loss(self.loss)) else refit_problem(square, loss=self.loss)
        fit["problem"] = problem
        check_exact_memory(problem.n, problem.n_points, n_terms=len(self.parsed.terms))  # before any n x n matrix
        kernels = default_widths(square.inputs, square.input_weights, given, self.parsed.factor_terms,
                                 self.parsed.subject_terms)
        kernel = combine(kernels, self.combine)
        output_matrix = self.output_matrix
        fixed = isinstance(criterion, Fixed)
        if criterion.key == "cv" and self.param_grid:  # the user's grid, searched as given
            return self._fit_cv_grid(X, Y, square, dictionary, solver, kernels, criterion, grid, fit)
        partial = solver == "exact_partial" or (solver == "iterative" and sparse)
        if partial and criterion.key == "cv":  # K-fold CV tunes what the exact partial route's default tunes
            widths = None if isinstance(self.width_grid, str) else widths
            bs = None if isinstance(self.b_grid, str) else bs
        elif partial and problem.n_points <= MAX_POINTS:
            return self._fit_exact_partial(square, problem, dictionary, solver, sparse, kernels, given, widths, bs,
                                           criterion, grid, notes, fit)
        tuned = [t for t in kernels if given[t] is None] if widths is not None else []
        tune_b = output_matrix is None and bs is not None and np.ptp(square.dictionary.scales_) > 0
        path = None
        lam = float(grid[0])
        if not (fixed and not tuned and not tune_b):
            # the closed-form square-loss ridge scores every candidate (a stand-in for other losses/solvers), or
            # K-fold CV (lam="cv"); at a fixed lambda the widths and b are chosen by leave-one-curve-out at that
            # lambda; dictionary="auto" on many locations also chooses the number of Fourier atoms
            groups, label = self._group_labels()
            scorer = criterion if not fixed else (LOO() if groups is None else GroupLOO(groups, label))
            cands = atom_candidates(dictionary, square)
            problems = [(dictionary, square)] + [(d, refit_problem(square, dictionary=d)) for d in cands[1:]]
            tried, shared = [], {}  # the kernel matrices and their eigendecompositions serve every dictionary
            base = kernels
            for spec, cand in problems:
                kfold = None if criterion.key != "cv" else kfold_scorer(
                    self._estimator(kernel, solver, lam, dictionary=spec), X, Y, grid, criterion,  # type: ignore[arg-type]
                    self.n_jobs, self.progress)
                ws, bg, default_w = widths, bs, isinstance(self.width_grid, str)
                if tried:  # one coordinate step: more atoms at the widths and b the first dictionary chose
                    first = tried[0][2][0]
                    ws = [np.array([m]) for m in first.multiples] if tuned else widths  # one value per term
                    bg = None if np.isnan(first.b) else np.array([first.b])
                    default_w = False
                tried.append((spec, cand, tune(cand, base, tuned, ws, bg, output_matrix, self.combine, grid,
                                               scorer, width_default=default_w,
                                               b_default=isinstance(self.b_grid, str), notes=notes, scorer=kfold,
                                               say=False, shared=shared)))
            dictionary, square, (result, path, kernels, output_matrix) = min(tried, key=lambda t: t[2][0].score)
            first = tried[0][2][0]
            tuning_notices(first, term_grids(kernels, tuned if widths is not None else [], widths,
                                             isinstance(self.width_grid, str)),
                           bs if tune_b else None, scorer, isinstance(self.width_grid, str),
                           isinstance(self.b_grid, str), notes, base)
            if len(tried) > 1:
                shown = ", ".join(f"{c.d} atoms {t[0].score:.4g}" for _, c, t in tried)
                notes.append(f"dictionary='auto': {square.d} Fourier atoms chosen by {scorer.short} with the widths, b "
                             f"and lambda ({shown})")
            problem = square if is_square(make_loss(self.loss)) else refit_problem(square, loss=self.loss)
            fit["problem"] = problem
            lam = fit["chosen"] = result.lam
            fit["tuning"] = result
            kernel = combine(kernels, self.combine) if criterion.key == "cv" else path.kernel
            if criterion.key == "cv":  # the chosen candidate's CV table (b x lambda)
                fit["cv_result"] = {"scores": path["scores"], "scores_std": path["scores_std"], "lams": grid,
                                    "best_index": result.index[1:], "best_lam": lam, "n_splits": path["n_splits"]}
                est = self._estimator(kernel, solver, lam, dictionary=dictionary, output_matrix=output_matrix)
                return est.fit_problem(problem), kernels, lam, criterion
        if solver == "eig":  # square loss (routing): the path tuning chose is the fit
            est = self._estimator(kernel, "eig" if path is not None else self.solver, lam, dictionary=dictionary,
                                  output_matrix=output_matrix)
            return est.fit_problem(square, path), kernels, lam, criterion
        if not fixed or fit["tuning"] is not None:
            notes.append(f"hyper-parameters chosen by {criterion.short} of the closed-form square-loss ridge, a "
                         f"proxy (stand-in) for solver={solver!r}; use lam='cv' for a direct choice")
        if not fixed:  # a loss curving like c a^2 near 0 matches the square loss's fit at lambda * c
            lam *= curvature_ratio(self.loss)
        est = self._estimator(kernel, solver, lam, dictionary=dictionary, output_matrix=output_matrix)
        return est.fit_problem(problem), kernels, lam, criterion

    def _fit_exact_partial(self, square: Any, problem: Any, dictionary: Any, solver: str, sparse: bool,
                           kernels: dict[str, Kernel], given: dict[str, Kernel | None], widths: np.ndarray | None,
                           bs: np.ndarray | None, criterion: Criterion, grid: np.ndarray, notes: list[str],
                           fit: dict[str, Any]) -> tuple[KPLRegressor, dict[str, Kernel], float, Criterion]:
        """The exact partial ridge (sparse responses, or asked for), tuned by its own exact criteria: lambda by GCV,
        leave-one-curve-out or leave-one-group-out along its exact path (one N x N eigendecomposition per
        candidate); the widths and ``b`` only when ``width_grid`` / ``b_grid`` are given (the defaults keep the
        median heuristic and B = I on this route, benchmarks/sparse_responses.py). For a robust loss on sparse
        responses it is the square-loss stand-in (per-point losses, like the iterative fit)."""
        fixed = isinstance(criterion, Fixed)
        widths = None if isinstance(self.width_grid, str) else widths
        bs = None if isinstance(self.b_grid, str) else bs
        tuned = [t for t in kernels if given[t] is None] if widths is not None else []
        tune_b = self.output_matrix is None and bs is not None and np.ptp(square.dictionary.scales_) > 0
        output_matrix, lam = self.output_matrix, float(grid[0])
        if not (fixed and not tuned and not tune_b):
            groups, label = self._group_labels()
            scorer = criterion if not fixed else (LOO() if groups is None else GroupLOO(groups, label))
            result, criteria, kernels, output_matrix, used = exact_partial_choice(
                square, kernels, tuned, widths, bs, output_matrix, self.combine, grid, scorer, sparse, notes)
            lam = fit["chosen"] = result.lam
            fit["tuning"] = result if tuned or tune_b else None
            if not fixed:
                fit["criteria"], criterion = criteria, used
        if solver == "iterative" and not fixed:
            lam *= curvature_ratio(self.loss)
            notes.append(f"lambda chosen by {criterion.short} of the exact partial square-loss ridge, a "
                         f"stand-in for solver={solver!r}; use lam='cv' for a direct choice")
        est = self._estimator(combine(kernels, self.combine), solver, lam, dictionary=dictionary,
                              output_matrix=output_matrix).fit_problem(problem)
        return est, kernels, lam, criterion

    def _fit_cv_grid(self, X: Any, Y: Any, square: Any, dictionary: Any, solver: str, kernels: dict[str, Kernel],
                     criterion: Criterion, grid: np.ndarray, fit: dict[str, Any]
                     ) -> tuple[KPLRegressor, dict[str, Kernel], float, Criterion]:
        """``lam="cv"`` with a ``param_grid``: K-fold CV over exactly the user's grid and ``lam_grid``."""
        est0 = self._estimator(combine(kernels, self.combine), solver, float(grid[0]), dictionary=dictionary)
        pg = self._cv_param_grid(kernels)
        cv_result = kfold_path(est0, X, Y, lams=grid, param_grid=pg, n_splits=self.cv,
                               random_state=self.random_state, n_jobs=self.n_jobs, progress=self.progress,
                               groups=criterion.groups)  # type: ignore[attr-defined]
        best = cv_result["best_params"]
        lam = fit["chosen"] = cv_result["best_lam"]
        est = est0.set_params(**best, lam=lam)
        self._warn_cv_edges(pg, best, criterion)
        fit["cv_result"] = cv_result
        problem = fit["problem"]
        if "dictionary" in best or "loss" in best:  # the problem depends on them
            problem = refit_problem(square, dictionary=est.dictionary, loss=est.loss)
            fit["problem"] = problem
        if "kernel" in best:  # the sigma grid: one combined kernel per candidate
            kernels = dict(best["kernel"].kernels)
        return est.fit_problem(problem), kernels, lam, criterion
