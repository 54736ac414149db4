"""The one base class of fdakpl's array-level estimators: what KPL, approximate KPL and the baselines share.

Subclasses implement ``fit(X, Y, locations=None)`` (setting ``response_info_``) and
``predict(X, at=None)``; the base class gives them the scikit-learn plumbing: ``get_params`` /
``set_params`` (``BaseEstimator``), the integrated R² ``score`` and the estimator tags.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import xarray as xr
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils.validation import check_is_fitted

from ..data.functional import SAMPLE, Observations
from ..data.pairing import pair_long
from ..data.preprocessing import (
    InputSpec,
    MeanFunction,
    check_same_samples,
    n_samples_of,
    prepare_inputs,
    prepare_response,
)
from ..kernels import Kernel, kernel_or_default

__all__ = ["DATA_PARAMETERS_DOC", "FIT_PARAMETERS_DOC", "PREDICT_RETURNS_DOC", "FunctionalEstimator", "integrated_r2"]

#: the Parameters and Returns sections of ``fit(X, Y, locations=None)`` for in-memory data
FIT_PARAMETERS_DOC = """\
Parameters
----------
X : array-like, DataArray or mapping of terms
    Inputs (see :func:`~fdakpl.data.preprocessing.prepare_inputs`).
Y : DataArray, array or long DataFrame
    Responses (see :func:`~fdakpl.data.preprocessing.prepare_response`);
    NaN marks unobserved points.
locations : array-like, optional
    Locations of the columns of an array ``Y``.

Returns
-------
self"""

#: the parameters the base class's data handling reads, as every estimator documents them
DATA_PARAMETERS_DOC = """\
domain : (float, float), optional
    Domain of the response curves; defaults to the range of the
    response locations (``[0, 1]`` for plain arrays).
interpolate_inputs : bool, default False
    Fill NaN in input curves by linear interpolation instead of raising (silently: you asked for
    it; :class:`~fdakpl.regression.model.FunctionalRegression` lists the filled samples in ``res.notes``)."""

#: what ``predict(X, at=None)`` returns
PREDICT_RETURNS_DOC = """\
Returns a labelled DataArray ``(sample, <location>)`` when the model
was fitted on a DataArray or a long DataFrame, else a NumPy array
(1-d for a 1-d training response)."""


def integrated_r2(obs_value: np.ndarray, pred: np.ndarray, ybar: np.ndarray) -> float:
    """``1 - sum (y - yhat)^2 / sum (y - ybar)^2`` over observed points (1 for a perfect fit of a constant).

    Examples
    --------
    >>> integrated_r2(np.array([1.0, 2.0, 3.0]), np.array([1.0, 2.0, 3.0]), np.full(3, 2.0))
    1.0
    """
    ss_tot = float(np.sum((obs_value - ybar) ** 2))
    ss_res = float(np.sum((obs_value - pred) ** 2))
    return 1.0 - ss_res / ss_tot if ss_tot > 0 else (1.0 if ss_res == 0 else 0.0)


class FunctionalEstimator(RegressorMixin, BaseEstimator):
    """Base class of the array-level estimators (curve or vector responses, NaN = not observed).

    Examples
    --------
    >>> from fdakpl import KPLRegressor
    >>> issubclass(KPLRegressor, FunctionalEstimator)
    True
    """

    def __getattr__(self, name: str) -> Any:
        # called only when normal lookup fails: point from the coefficients a fit lacks to those it has
        fitted = self.__dict__
        if name == "coef_" and "dual_coef_" in fitted:
            raise AttributeError(f"this exact {type(self).__name__} fit has no coef_ (primal weights, which only "
                                 "approximate fits by ApproxKPLRegressor have); its representer coefficients alpha "
                                 "(training sample x atom) are dual_coef_")
        if name == "dual_coef_" and "coef_" in fitted and "approx_" in fitted:
            raise AttributeError(f"this approximate {type(self).__name__} fit has no dual_coef_ (it never "
                                 "forms the n x n kernel matrix); its primal weights M (feature x atom, "
                                 "h(x) = M^T z(x)) are coef_")
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def score(self, X: Any, y: Any, sample_weight: Any = None) -> float:
        """Integrated R^2 over the observed points of ``y``.

        ``1 - sum (y - yhat)^2 / sum (y - ybar(theta))^2`` over observed points, with ``ybar`` the
        pointwise mean of ``y`` (smoothed for irregular sampling, as the centring is).

        Examples
        --------
        >>> from fdakpl import KPLRegressor
        >>> X = np.linspace(0, 1, 20)[:, None]; Y = np.sin(3 * X * np.linspace(0, 1, 40))
        >>> m = KPLRegressor(lam=1e-8).fit(X, Y)
        >>> m.score(X, Y) > 0.99
        True
        """
        if sample_weight is not None:
            raise NotImplementedError("sample_weight is not supported")
        check_is_fitted(self, "response_info_")
        info0 = self.response_info_
        obs, info = prepare_response(y, info0.grid if info0.kind in {"array", "vector"} else None, info0.domain)
        if obs.grid is None or obs.grid_index is None:
            raise ValueError("score needs responses on a grid")
        Yhat = np.asarray(self.predict(X, at=obs.grid), dtype=float)  # type: ignore[attr-defined]
        Yhat = Yhat[:, None] if Yhat.ndim == 1 else Yhat
        pred = Yhat[obs.index, obs.grid_index]
        ybar = MeanFunction(obs, info.domain)(obs.location)
        return integrated_r2(obs.value, pred, ybar)

    def set_params(self, **params: Any) -> Any:
        """Set parameters, scikit-learn's way; nested kernel parameters (``kernel__sigma``) work with the default
        kernel too.

        The default ``kernel=None`` stands for ``Gaussian(1.0)`` (an immutable default: no kernel object is shared
        between estimators). Setting one of its parameters makes it explicit first, so
        ``GridSearchCV(KPLRegressor(), {"kernel__sigma": [...]})`` searches the default kernel's width, and an
        estimator whose kernel was never set still fits with ``Gaussian(1.0)``.

        Examples
        --------
        >>> from fdakpl import KPLRegressor
        >>> KPLRegressor().set_params(kernel__sigma=0.5).kernel
        Gaussian(sigma=0.5)
        """
        if getattr(self, "kernel", False) is None and any(k.startswith("kernel__") for k in params):
            self.kernel = kernel_or_default(None)  # a new object: the default made explicit
        return super().set_params(**params)

    def _kernel(self) -> Kernel:
        """The input kernel of the estimators that have a ``kernel`` parameter (``Gaussian(1.0)`` for None)."""
        return kernel_or_default(self.kernel)  # type: ignore[attr-defined]

    def _check_fit_arguments(self, Y: Any) -> None:
        """First thing in ``fit``: valid parameters (the subclass's ``_check_params``) and a target given."""
        self._check_params()  # type: ignore[attr-defined]
        if Y is None:
            raise ValueError(f"{type(self).__name__} requires y to be passed, but the target y is None")

    def _prepare_training_data(self, X: Any, Y: Any, locations: Any, who: str
                               ) -> tuple[Any, Any, InputSpec, Observations, Any]:
        """Checked arguments of ``fit`` prepared for the solvers: ``(Xv, Xw, spec, obs, info)``.

        Inputs by :func:`~fdakpl.data.preprocessing.prepare_inputs`, responses by
        :func:`~fdakpl.data.preprocessing.prepare_response`, checked to describe the same samples
        (``who`` names the method in the message). Sets no attribute: the caller records ``info`` and
        ``spec`` with :meth:`_set_training_info` once its own checks have passed.
        """
        self._check_fit_arguments(Y)
        Xv, Xw, spec, x_labels = prepare_inputs(X, interpolate=self.interpolate_inputs)  # type: ignore[attr-defined]
        Y = pair_long(Y, n_samples_of(Xv), x_labels)  # long-form curves in the order of X's samples, by label
        obs, info = prepare_response(Y, locations, self.domain)  # type: ignore[attr-defined]
        check_same_samples(n_samples_of(Xv), x_labels, obs.n_samples, info.labels, who)
        return Xv, Xw, spec, obs, info

    def _set_training_info(self, info: Any, spec: InputSpec) -> None:
        """Record the training responses' description and the input layout (``n_features_in_`` when it is an int)."""
        self.response_info_ = info
        self.input_spec_ = spec
        self.n_features_in_ = spec.n_features if isinstance(spec.n_features, int) else None

    def _as_given(self, Yhat: np.ndarray, theta: np.ndarray, labels: Any, at: Any, add_mean: bool = True) -> Any:
        """Predictions ``Yhat`` (sample x location) in the form the training responses had: the mean function
        added back (``add_mean``), a labelled DataArray for DataArray / long responses, a vector for vector
        responses on the training grid, an array otherwise."""
        if add_mean and getattr(self, "mean_", None) is not None:
            Yhat = Yhat + self.mean_(theta)[None, :]  # type: ignore[attr-defined]
        info = self.response_info_  # type: ignore[attr-defined]
        if info.kind in {"dataarray", "long"}:
            coords: dict[str, Any] = {info.location_dim: theta}
            if labels is not None:
                coords[SAMPLE] = labels
            return xr.DataArray(Yhat, dims=(SAMPLE, info.location_dim), coords=coords, name=info.name)
        if info.kind == "vector" and at is None:
            return Yhat[:, 0]
        return Yhat

    def save(self, path: Any, *, engine: str | None = None, overwrite: bool = False) -> Any:
        """Save the fitted estimator to a netCDF file, without pickle (see :func:`fdakpl.io.netcdf.save`).

        Examples
        --------
        >>> import tempfile, pathlib, fdakpl
        >>> from fdakpl import KPLRegressor
        >>> X = np.linspace(0, 1, 10)[:, None]; Y = np.hstack([X, 2 * X])
        >>> m = KPLRegressor(lam=1e-3).fit(X, Y)
        >>> again = fdakpl.load(m.save(pathlib.Path(tempfile.mkdtemp()) / "kpl.nc"))
        >>> bool(np.array_equal(again.predict(X), m.predict(X)))
        True
        """
        from ..io.netcdf import save

        return save(self, path, engine=engine, overwrite=overwrite)

    def __sklearn_tags__(self):  # type: ignore[no-untyped-def]
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        tags.target_tags.single_output = True
        tags.input_tags.allow_nan = False
        return tags
