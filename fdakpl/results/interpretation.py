"""Interpretation of a fitted KPL model: coefficient and effect surfaces, partial dependence.

A fitted model predicts ``y(x)(t) = mu(t) + sum_j k(x, x_j) c_j(t)`` with
``c_j(t) = sum_l (alpha B)_jl phi_l(t)`` (the representer coefficients times
the dictionary). Curves enter kernels through their L2 geometry with the
quadrature weights ``w`` of their grid, so every linear functional of a curve
is ``sum_p w_p v(s_p) beta(s_p)``: surfaces below are reported in that form.

* :func:`linear_surface` -- for a :class:`~fdakpl.kernels.Linear` (or
  :class:`~fdakpl.kernels.SmoothedLinear`) kernel on a functional term,
  ``beta(s, t)`` such that the term contributes exactly ``sum_p w_p x(s_p) beta(s_p, t)``.
* :func:`effect_surface` -- for any kernel, the average over curves of the
  Fréchet derivative of the prediction with respect to the term's curve.
* :func:`partial_dependence` -- mean predicted curve over the training data
  with one scalar covariate or factor set to each of several values.

Everything here is a pure function of a fitted :class:`~fdakpl.estimators.kpl.KPLRegressor`
(arrays) plus a thin labelled layer used by
:class:`~fdakpl.results.FunctionalRegressionResults`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import xarray as xr

from ..data.functional import SAMPLE
from ..factor_kernels import Categorical
from ..formula.terms import SCALARS
from ..kernels import Gaussian, IntegralGaussian, Kernel, Laplace, Linear, Product, SmoothedLinear, Sum
from ..roughness_kernels import PenalizedLinear
from ..utils.docstrings import dti_fit_example, fill_doc
from ..utils.notices import InterpolationWarning, said_once

__all__ = [
    "InterpretationMixin",
    "coefficient_surface_of",
    "effect_surface",
    "effect_surface_of",
    "kernel_gradient",
    "linear_surface",
    "partial_dependence",
    "partial_dependence_of",
    "reference_arrays",
    "response_coefficients",
    "surface_dataarray",
    "term_reference",
]

#: kernels whose term contributes linearly to predictions
LINEAR_KERNELS = (Linear, SmoothedLinear, PenalizedLinear)


def _check_exact(est: Any) -> None:
    if getattr(est, "approx_", None) is not None or getattr(est, "X_fit_", None) is None:
        raise ValueError("surfaces need the exact (kernel) form of the fit; refit without approx=")


def response_coefficients(est: Any, theta: np.ndarray) -> np.ndarray:
    """``c_j(theta) = sum_l (alpha B)_jl phi_l(theta)``, shape ``(n_train, len(theta))``.

    Examples
    --------
    >>> from fdakpl import KPLRegressor, Fourier
    >>> X = np.linspace(0, 1, 8)[:, None]; Y = np.hstack([X, 2 * X, X ** 2])
    >>> response_coefficients(KPLRegressor(dictionary=Fourier(1)).fit(X, Y), np.array([0.0, 1.0])).shape
    (8, 2)
    """
    return est.dual_coef_B_ @ est.dictionary_.evaluate(np.asarray(theta, dtype=float)).T


def _term_parts(est: Any, term: str) -> tuple[Kernel, dict[str, Kernel], str]:
    """The term's kernel, the other terms' kernels and how they combine (``"*"`` or ``"+"``)."""
    kernel = est.kernel_
    if isinstance(kernel, (Product, Sum)):
        if term not in kernel.kernels:
            raise ValueError(f"{term!r} is not a term of the fitted kernel; terms: {list(kernel.kernels)}")
        others = {t: k for t, k in kernel.kernels.items() if t != term}
        return kernel.kernels[term], others, kernel.op
    return kernel, {}, "*"


def term_reference(est: Any, others: Mapping[str, Kernel], reference: Mapping[str, np.ndarray] | None
                   ) -> tuple[np.ndarray, dict[str, str]]:
    """Product of the other terms' kernels ``prod_t k_t(r_t, x_tj)`` at reference values ``r_t``.

    Default references: the standardised scalar design at its training mean (zero: the average covariate
    profile), for a factor term the average of its kernel over the training samples (``k`` weighted by the
    level proportions) and, for other functional terms, their training mean curve.

    Examples
    --------
    >>> from fdakpl import KPLRegressor, Fourier, Gaussian, Product
    >>> X = {"a": np.linspace(0, 1, 6)[:, None], "b": np.ones((6, 1))}
    >>> k = Product({"a": Linear(), "b": Gaussian()})
    >>> m = KPLRegressor(dictionary=Fourier(1), kernel=k).fit(X, np.ones((6, 2)), locations=[0.2, 0.7])
    >>> term_reference(m, {"b": Gaussian()}, None)[0].round(3)
    array([1., 1., 1., 1., 1., 1.])
    """
    n = est.n_samples_fit_
    out = np.ones(n)
    described: dict[str, str] = {}
    for t, k in others.items():
        Xt = est.X_fit_[t]
        if reference is not None and t in reference:
            r = np.atleast_2d(np.asarray(reference[t], dtype=float))
            described[t] = "given"
        elif isinstance(k, Categorical):  # a factor has no mean level: its kernel averaged over the training levels
            out = out * k(Xt).mean(axis=0)
            described[t] = "average over the training samples' levels (level proportions)"
            continue
        elif t == SCALARS:
            r = np.zeros((1, Xt.shape[1]))
            described[t] = "training mean of the standardised scalar design (average covariate profile)"
        else:
            r = Xt.mean(axis=0, keepdims=True)
            described[t] = "training mean curve"
        if r.shape != (1, Xt.shape[1]):
            raise ValueError(f"reference for {t!r} must have {Xt.shape[1]} values, got shape {r.shape}")
        out = out * k(r, Xt, est.X_weights_.get(t))[0]
    return out, described


def linear_surface(est: Any, term: str, theta: np.ndarray,
                   reference: Mapping[str, np.ndarray] | None = None) -> tuple[np.ndarray, dict[str, str]]:
    """Coefficient surface ``beta(s_p, theta)`` of a linear-kernel functional term.

    For a :class:`~fdakpl.kernels.Linear` kernel ``k(x, x') = sum_p w_p x_p x'_p``
    the term contributes ``sum_p w_p x(s_p) beta(s_p, t)`` with
    ``beta = X^T diag(r) C`` (``X`` the training curves, ``C`` from
    :func:`response_coefficients`, ``r`` the other terms' kernels at their
    reference values, ones for a sum); for :class:`~fdakpl.kernels.SmoothedLinear`,
    ``beta = W^{-1} S^T W S X^T diag(r) C``; for :class:`~fdakpl.roughness_kernels.PenalizedLinear`,
    ``beta = M X^T diag(r) C`` with ``M`` its :meth:`~fdakpl.roughness_kernels.PenalizedLinear.surface_matrix`.

    Returns
    -------
    beta : numpy.ndarray, shape (m_term, len(theta))
    references : dict
        How the other terms were fixed (empty for a sum, where they only add an offset).

    Examples
    --------
    >>> from fdakpl import KPLRegressor, Fourier
    >>> X = np.random.default_rng(0).normal(size=(10, 4)); Y = X[:, :3]
    >>> m = KPLRegressor(dictionary=Fourier(1), kernel=Linear(), center=False).fit(X, Y, locations=[0.0, 0.5, 1.0])
    >>> beta, _ = linear_surface(m, None, np.array([0.0, 1.0]))
    >>> bool(np.allclose(X @ beta, m.predict(X, at=[0.0, 1.0])))
    True
    """
    _check_exact(est)
    ker, others, op = _term_parts(est, term) if term is not None else (est.kernel_, {}, "*")
    if not isinstance(ker, LINEAR_KERNELS):
        raise ValueError(f"the coefficient surface needs a Linear, SmoothedLinear or PenalizedLinear kernel on "
                         f"{term!r}, not "
                         f"{ker!r}; refit with kernels={{{term!r}: Linear()}} or use effect_surface (any kernel)")
    X = est.X_fit_[term] if isinstance(est.X_fit_, Mapping) else est.X_fit_
    w = est.X_weights_[term] if isinstance(est.X_weights_, Mapping) else est.X_weights_
    if op == "*":
        r, described = term_reference(est, others, reference)
    else:
        r, described = np.ones(X.shape[0]), {}
    beta = X.T @ (r[:, None] * response_coefficients(est, theta))
    if isinstance(ker, SmoothedLinear) and ker.bandwidth > 0:
        wv = np.ones(X.shape[1]) if w is None else np.asarray(w, dtype=float)
        S = ker.smoother(X.shape[1] if w is None else wv)
        beta = (S.T @ (wv[:, None] * (S @ beta))) / wv[:, None]
    elif isinstance(ker, PenalizedLinear):
        beta = ker.surface_matrix(X.shape[1] if w is None else w) @ beta
    return beta, described


def kernel_gradient(kernel: Kernel, Xn: np.ndarray, Xf: np.ndarray, w: np.ndarray | None) -> np.ndarray:
    """Gradients ``g`` with ``d/de k(x_i + e v, x_j) = sum_p w_p v_p g[i, j, p]`` (L2 geometry of curves).

    Gaussian: ``-k (x_i - x_j) / sigma^2``; Laplace: ``-k (x_i - x_j) / (sigma ||x_i - x_j||)``
    (0 where ``x_i = x_j``: the symmetric derivative of the kink); Linear: ``x_j``;
    SmoothedLinear: ``W^{-1} S^T W S x_j``; IntegralGaussian (scalar curves):
    ``-2 (x_i - x_j) exp(-(x_i - x_j)^2 / sigma^2) / sigma^2`` pointwise.

    Examples
    --------
    >>> g = kernel_gradient(Gaussian(1.0), np.zeros((1, 2)), np.ones((1, 2)), None)
    >>> g.shape, float(g[0, 0, 0]) == float(np.exp(-1.0))
    ((1, 1, 2), True)
    """
    Xn = np.asarray(Xn, dtype=float)
    Xf = np.asarray(Xf, dtype=float)
    wv = np.ones(Xn.shape[1]) if w is None else np.asarray(w, dtype=float)
    diff = Xn[:, None, :] - Xf[None, :, :]
    if isinstance(kernel, Gaussian):
        return -(kernel(Xn, Xf, w) / kernel.sigma**2)[:, :, None] * diff
    if isinstance(kernel, Laplace):
        dist = np.sqrt(np.einsum("ijp,ijp,p->ij", diff, diff, wv))
        with np.errstate(divide="ignore", invalid="ignore"):
            f = np.where(dist > 0, -kernel(Xn, Xf, w) / (kernel.sigma * dist), 0.0)
        return f[:, :, None] * diff
    if isinstance(kernel, IntegralGaussian):
        if Xn.ndim != 2:
            raise ValueError("the effect surface of IntegralGaussian is defined for scalar curves (n, T)")
        return -2.0 / kernel.sigma**2 * diff * np.exp(-diff**2 / kernel.sigma**2)
    if isinstance(kernel, LINEAR_KERNELS):
        G = Xf
        if isinstance(kernel, SmoothedLinear) and kernel.bandwidth > 0:
            S = kernel.smoother(Xn.shape[1] if w is None else wv)
            G = ((Xf @ S.T) * wv) @ S / wv
        elif isinstance(kernel, PenalizedLinear):
            G = Xf @ kernel.surface_matrix(Xn.shape[1] if w is None else wv).T
        return np.broadcast_to(G[None], diff.shape)
    raise ValueError(f"no closed-form derivative for {kernel!r}; effect surfaces support Gaussian, Laplace, Linear, "
                     "SmoothedLinear, PenalizedLinear and IntegralGaussian kernels on curves")


def effect_surface(est: Any, term: str, X_new: Mapping[str, np.ndarray], theta: np.ndarray, *,
                   average: bool = True, chunk: int = 64) -> np.ndarray:
    """Average (or per-curve) Fréchet derivative of the prediction with respect to ``term``'s curve.

    At a curve ``x``, ``d/de y(x + e v)(t) = sum_p w_p v(s_p) beta_x(s_p, t)`` with
    ``beta_x(s, t) = sum_j g(x, x_j)(s) o_j(x) c_j(t)``: ``g`` from
    :func:`kernel_gradient`, ``o_j`` the product of the other terms' kernels
    (ones for a sum) and ``c`` from :func:`response_coefficients`.

    Parameters
    ----------
    est : KPLRegressor
        Fitted, exact solver, inputs as a mapping of terms.
    term : str
    X_new : mapping
        Prepared inputs (arrays) of the curves at which to differentiate.
    theta : numpy.ndarray
        Response locations.
    average : bool
        Average over the curves of ``X_new`` (shape ``(m, T)``), else one surface per curve
        (``(n_new, m, T)``).
    chunk : int
        Curves processed at once (memory ``chunk x n_train x m``).

    Examples
    --------
    >>> from fdakpl import KPLRegressor, Fourier, Sum
    >>> X = {"x": np.random.default_rng(0).normal(size=(12, 5))}
    >>> m = KPLRegressor(dictionary=Fourier(1), kernel=Sum({"x": Linear()}), center=False).fit(X, X["x"][:, :3])
    >>> eff = effect_surface(m, "x", X, np.array([0.0, 1.0]))
    >>> bool(np.allclose(eff, linear_surface(m, "x", np.array([0.0, 1.0]))[0]))
    True
    """
    _check_exact(est)
    ker, others, op = _term_parts(est, term)
    Xf = est.X_fit_[term]
    w = est.X_weights_.get(term)
    C = response_coefficients(est, theta)
    n_new = np.asarray(X_new[term]).shape[0]
    acc = np.zeros((Xf.shape[0], Xf.shape[1])) if average else None
    per = [] if not average else None
    for start in range(0, n_new, chunk):
        sl = slice(start, start + chunk)
        g = kernel_gradient(ker, np.asarray(X_new[term], dtype=float)[sl], Xf, w)
        if op == "*" and others:
            o = np.ones(g.shape[:2])
            for t, k in others.items():
                o = o * k(np.asarray(X_new[t], dtype=float)[sl], est.X_fit_[t], est.X_weights_.get(t))
            g = g * o[:, :, None]
        if average:
            acc += g.sum(axis=0)
        else:
            per.append(np.einsum("ijp,jt->ipt", g, C))
    if average:
        return (acc.T @ C) / n_new
    return np.concatenate(per, axis=0)


def surface_dataarray(beta: np.ndarray, term: str, term_dim: str, term_grid: np.ndarray, response: str,
                      response_dim: str, theta: np.ndarray, name: str, attrs: dict[str, Any]) -> xr.DataArray:
    """Label a surface ``(term location, response location)``.

    Examples
    --------
    >>> surface_dataarray(np.zeros((2, 3)), "x", "s", np.arange(2.0), "y", "t", np.arange(3.0), "beta", {}).dims
    ('s', 't')
    """
    if term_dim == response_dim:
        term_dim = f"{term_dim}_{term}"
    return xr.DataArray(beta, dims=(term_dim, response_dim), coords={term_dim: term_grid, response_dim: theta},
                        name=name, attrs={"term": term, "response": response, **attrs})


def partial_dependence(predict: Any, data: xr.Dataset, variable: str, values: Any) -> np.ndarray:
    """Mean predicted curve with ``variable`` set to each of ``values`` for every sample.

    Parameters
    ----------
    predict : callable
        ``predict(dataset) -> (n, T) array``.
    data : xarray.Dataset
        The samples to average over.
    variable : str
        A scalar covariate (numeric or factor) of ``data``.
    values : sequence

    Returns
    -------
    numpy.ndarray, shape (len(values), T)

    Examples
    --------
    >>> ds = xr.Dataset({"a": ("sample", [1.0, 2.0, 3.0])})
    >>> partial_dependence(lambda d: np.c_[d["a"].values, d["a"].values ** 2], ds, "a", [0.0, 2.0])
    array([[0., 0.],
           [2., 4.]])
    """
    n = data.sizes[SAMPLE]
    out = []
    for v in values:
        filled = np.full(n, v, dtype=object if isinstance(v, (str, bytes)) else None)
        ds = data.assign({variable: (SAMPLE, filled)})
        out.append(np.asarray(predict(ds), dtype=float).mean(axis=0))
    return np.asarray(out)


# ----------------------------------------------------------------------------- labelled layer (results)
def as_dataset(data: Any) -> xr.Dataset:
    """``data`` as an :class:`xarray.Dataset` (a Dataset, or a mapping of DataArrays).

    Examples
    --------
    >>> as_dataset({"a": xr.DataArray([1.0], dims="sample")}).sizes["sample"]
    1
    """
    if isinstance(data, xr.Dataset):
        return data
    if isinstance(data, Mapping):
        return xr.Dataset(dict(data))
    raise TypeError(f"expected an xarray.Dataset (or a mapping of DataArrays), got {type(data).__name__}")


def _term_labels(res: Any, term: str) -> tuple[str, np.ndarray]:
    parsed = res.model.parsed
    if term not in parsed.functional_terms:
        raise ValueError(f"{term!r} is not a functional term of {res.model.formula!r}; functional terms: "
                         f"{parsed.functional_terms}")
    da = res.model.data[term]
    return next(d for d in da.dims if d != SAMPLE), parsed.input_grids[term]


def _theta(res: Any, at: Any) -> np.ndarray:
    return res.estimator.grid_ if at is None else np.atleast_1d(np.asarray(at, dtype=float))


def reference_arrays(res: Any, term: str, reference: Any) -> dict[str, np.ndarray] | None:
    """Kernel inputs of the other terms for a one-sample ``reference`` Dataset (None: the defaults).

    Examples
    --------
    >>> reference_arrays(None, "x", None) is None
    True
    """
    if reference is None:
        return None
    ref_ds = as_dataset(reference)
    if SAMPLE not in ref_ds.dims:
        ref_ds = ref_ds.expand_dims(SAMPLE)
    if ref_ds.sizes[SAMPLE] != 1:
        raise ValueError(f"reference must hold one sample, got {ref_ds.sizes[SAMPLE]}; select one with "
                         "ds.isel(sample=[i])")
    parsed = res.model.parsed
    ref = {}
    if parsed.scalar is not None:
        ref.update(parsed.scalar.inputs(ref_ds, SCALARS))
    for t in parsed.functional_terms:
        if t != term and t in ref_ds:
            ref[t] = ref_ds[t].values
    return ref


def coefficient_surface_of(res: Any, term: str, reference: Any = None, at: Any = None) -> xr.DataArray:
    """Labelled :func:`linear_surface` of a fitted :class:`~fdakpl.results.FunctionalRegressionResults`.

    ``reference``: a Dataset (or mapping) with one sample holding the scalar covariates (and other
    functional terms) at which a product kernel is evaluated; default: see :func:`term_reference`.

    Examples
    --------
    >>> from fdakpl import FunctionalRegression, Linear, datasets
    >>> res = FunctionalRegression("rcst ~ cca", datasets.dti_first_visits(), kernels={"cca": Linear()},
    ...                            lam=np.geomspace(1e-10, 1, 41), interpolate_inputs=True, progress=False).fit()
    >>> coefficient_surface_of(res, "cca").dims
    ('cca_loc', 'rcst_loc')
    """
    dim, grid = _term_labels(res, term)
    ref = reference_arrays(res, term, reference)
    theta = _theta(res, at)
    beta, described = linear_surface(res.estimator, term, theta, ref)
    kern = res.estimator.kernel_
    combine = kern.op if isinstance(kern, (Product, Sum)) else "*"
    note = ("exact: predictions = mu(t) + sum over functional terms of sum_p w_p x(s_p) beta(s_p, t)"
            + (" + the other terms' kernel part (an offset)" if combine == "+" and len(kern.kernels) > 1 else ""))
    attrs = {"kind": "coefficient surface", "quadrature": "trapezoidal weights of the term's grid (the fit's own)",
             "reference": "; ".join(f"{k}: {v}" for k, v in described.items()) or "none needed",
             "description": note}
    return surface_dataarray(beta, term, dim, grid, res.model.parsed.response, res.response_dim, theta,
                             f"beta_{term}", attrs)


@fill_doc(fit=dti_fit_example())
def effect_surface_of(res: Any, term: str, newdata: Any = None, at: Any = None, average: bool = True
                      ) -> xr.DataArray:
    """Labelled :func:`effect_surface` (average over ``newdata``'s curves, default the training curves).

    Examples
    --------
    %(fit)s
    >>> effect_surface_of(res, "cca").dims
    ('cca_loc', 'rcst_loc')
    """

    from ..data.preprocessing import prepare_inputs

    dim, grid = _term_labels(res, term)
    est = res.estimator
    ds = res.model.data if newdata is None else as_dataset(newdata)
    with said_once(quiet=(InterpolationWarning,)):  # the user asked for interpolation: noted when fitting
        Xv, _, _, labels = prepare_inputs(res.model.parsed.inputs(ds), interpolate=est.interpolate_inputs,
                                          spec=est.input_spec_)
    theta = _theta(res, at)
    beta = effect_surface(est, term, Xv, theta, average=average)
    attrs = {"kind": "effect surface (average Frechet derivative)" if average else "effect surface per curve",
             "kernel": repr(_term_parts(est, term)[0]),
             "description": "d/de prediction(x + e v)(t) = sum_p w_p v(s_p) beta(s_p, t), w the term's "
                            "trapezoidal quadrature weights" + ("; averaged over the curves" if average else "")}
    if average:
        return surface_dataarray(beta, term, dim, grid, res.model.parsed.response, res.response_dim, theta,
                                 f"effect_{term}", attrs)
    tdim = dim if dim != res.response_dim else f"{dim}_{term}"
    coords = {tdim: grid, res.response_dim: theta}
    if labels is not None:
        coords[SAMPLE] = labels
    return xr.DataArray(beta, dims=(SAMPLE, tdim, res.response_dim), coords=coords, name=f"effect_{term}",
                        attrs={"term": term, **attrs})


@fill_doc(fit=dti_fit_example("rcst ~ cca + C(sex)"))
def partial_dependence_of(res: Any, variable: str, values: Any = None, at: Any = None) -> xr.DataArray:
    """Labelled :func:`partial_dependence` for a scalar covariate or factor of the formula.

    Default ``values``: the levels of a factor; 11 quantiles (5% to 95%) of a numeric covariate.

    Examples
    --------
    %(fit)s
    >>> partial_dependence_of(res, "sex").dims
    ('value', 'rcst_loc')
    """
    scalar = res.model.parsed.scalar
    variables = [] if scalar is None else scalar.variables
    if variable not in variables:
        raise ValueError(f"{variable!r} is not a scalar covariate of {res.model.formula!r}; scalar covariates: "
                         f"{variables} (functional terms have effect surfaces instead)")
    from ..formula.grammar import factor_variables

    reads = [f for f in scalar.factors if variable in factor_variables(f.tree)]
    subjects = [t for t in scalar.factor_terms if t.subject and scalar.factors[t.factors[0]] in reads]
    if subjects and all(f.kind == "subject" for f in reads):
        raise ValueError(f"{variable!r} holds the subject labels of {subjects[0].name!r}: its effect is one curve per "
                         f"subject, res.subject_effects() (and res.plot_subject_effects()), not a partial dependence")
    data = res.model.data
    if values is None:
        if variable in scalar.levels:
            values = list(scalar.levels[variable])
        else:
            values = np.unique(np.quantile(data[variable].values.astype(float), np.linspace(0.05, 0.95, 11)))
    values = list(np.atleast_1d(values))
    theta = _theta(res, at)

    def predict(ds: xr.Dataset) -> np.ndarray:
        return res.predict(ds, at=theta).values

    with said_once(quiet=(InterpolationWarning,)):  # the user asked for interpolation: noted when fitting
        pd_values = partial_dependence(predict, data, variable, values)
    return xr.DataArray(pd_values, dims=("value", res.response_dim),
                        coords={"value": np.asarray(values), res.response_dim: theta}, name=f"pd_{variable}",
                        attrs={"variable": variable, "kind": "partial dependence",
                               "description": f"mean predicted curve over the {data.sizes[SAMPLE]} training samples "
                                              f"with {variable} set to each value"})


class InterpretationMixin:
    """Interpretation methods of :class:`~fdakpl.results.FunctionalRegressionResults` (thin wrappers)."""

    def coefficient_surface(self, term: str, reference: Any = None, at: Any = None) -> xr.DataArray:
        """Coefficient surface of a linear-kernel term (:func:`~fdakpl.results.interpretation.coefficient_surface_of`).

        Examples
        --------
        >>> from fdakpl import FunctionalRegression, Linear, datasets
        >>> res = FunctionalRegression("rcst ~ cca", datasets.dti_first_visits(), kernels={"cca": Linear()},
        ...                            lam=[1e-10, 1e-8, 1e-6], interpolate_inputs=True, progress=False).fit()
        >>> res.coefficient_surface("cca").shape
        (93, 55)
        """

        return coefficient_surface_of(self, term, reference, at)

    def effect_surface(self, term: str, newdata: Any = None, at: Any = None, average: bool = True) -> xr.DataArray:
        """Average Fréchet derivative surface (any kernel); see :func:`fdakpl.results.interpretation.effect_surface_of`.

        Examples
        --------
        >>> from fdakpl import FunctionalRegression, datasets
        >>> res = FunctionalRegression("rcst ~ cca", datasets.dti_first_visits(), interpolate_inputs=True,
        ...                            progress=False).fit()
        >>> res.effect_surface("cca").shape
        (93, 55)
        """

        return effect_surface_of(self, term, newdata, at, average)

    @fill_doc(fit=dti_fit_example(plot=True))
    def plot_surface(self, term: str, kind: str = "auto", bands: Any = None):
        """Heat map with contours of a term's surface (:func:`fdakpl.results.interpretation_plots.plot_surface`).

        ``kind``: ``"coefficient"`` (linear kernels), ``"effect"`` (any kernel) or ``"auto"``
        (coefficient when the term's kernel is linear). ``bands``: from
        :func:`fdakpl.results.surface_inference.surface_bands`.

        Examples
        --------
        %(fit)s
        >>> len(res.plot_surface("cca").axes)
        2
        """
        from .interpretation_plots import plot_surface

        if kind not in {"auto", "coefficient", "effect"}:
            raise ValueError(f"kind must be 'auto', 'coefficient' or 'effect', got {kind!r}")
        if kind == "auto":
            kind = "coefficient" if isinstance(self.kernels.get(term), LINEAR_KERNELS) else "effect"
        surface = self.coefficient_surface(term) if kind == "coefficient" else self.effect_surface(term)
        return plot_surface(surface, bands)

    def plot_partial_dependence(self, variable: str, values: Any = None):
        """Partial-dependence curves of a scalar covariate or factor.

        Examples
        --------
        >>> import matplotlib; matplotlib.use("Agg")
        >>> from fdakpl import FunctionalRegression, datasets
        >>> res = FunctionalRegression("rcst ~ cca + C(sex)", datasets.dti_first_visits(), interpolate_inputs=True,
        ...                            progress=False).fit()
        >>> len(res.plot_partial_dependence("sex").axes)
        1
        """
        from .interpretation_plots import plot_partial_dependence

        return plot_partial_dependence(self.partial_dependence(variable, values))

    def term_importance(self, n_permutations: int = 199, random_state: Any = 0, progress: bool | None = None):
        """Drop and permutation importance of every term; see :func:`fdakpl.results.importance.term_importance`.

        Computed once per ``(n_permutations, random_state)`` and kept: the summary shows it.

        Examples
        --------
        >>> from fdakpl import FunctionalRegression, datasets
        >>> res = FunctionalRegression("rcst ~ cca", datasets.dti_first_visits(), interpolate_inputs=True,
        ...                            progress=False).fit()
        >>> res.term_importance(n_permutations=9).terms, res.computed_importance().n_permutations
        (['cca'], 9)
        """
        from .importance import term_importance

        store = self._cache.setdefault("importance", {})  # type: ignore[attr-defined]
        key = (int(n_permutations), random_state if isinstance(random_state, (int, np.integer)) else None)
        if key[1] is None or key not in store:
            imp = term_importance(self, n_permutations=n_permutations, random_state=random_state, progress=progress)
            if key[1] is None:
                return imp
            store[key] = imp
        store["last"] = store[key]
        return store[key]

    def computed_importance(self) -> Any:
        """The term importance computed last (:meth:`term_importance`), or None.

        Examples
        --------
        >>> from fdakpl import FunctionalRegression, datasets
        >>> res = FunctionalRegression("rcst ~ cca", datasets.dti_first_visits(), interpolate_inputs=True,
        ...                            progress=False).fit()
        >>> res.computed_importance() is None
        True
        """
        return self._cache.get("importance", {}).get("last")  # type: ignore[attr-defined]

    def partial_dependence(self, variable: str, values: Any = None, at: Any = None) -> xr.DataArray:
        """Partial dependence on a covariate or factor (:func:`~fdakpl.results.interpretation.partial_dependence_of`).

        Examples
        --------
        >>> from fdakpl import FunctionalRegression, datasets
        >>> res = FunctionalRegression("rcst ~ cca + pasat", datasets.dti_first_visits(), interpolate_inputs=True,
        ...                            progress=False).fit()
        >>> res.partial_dependence("pasat", [30.0, 50.0]).shape
        (2, 55)
        """

        return partial_dependence_of(self, variable, values, at)

