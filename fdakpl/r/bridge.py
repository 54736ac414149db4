"""Entry points of the R package (``r-bridge/``, reticulate): plain arrays in, plain arrays out.

The R side validates its arguments, evaluates the formula's terms in R and
sends each term as one column under a Python-safe name; these functions build
the Dataset, fit, predict and hand back plain arrays, lists and strings, so
that R never handles an xarray object. They also record the Python warnings
raised during a call (:class:`WarningRecorder`), which R re-signals as R
warnings, and shut down the worker processes of a cross-validated fit
(:func:`shutdown_workers`), which would otherwise outlive the R script.

Examples
--------
>>> ds = dataset_from_columns({"y": np.arange(6.0).reshape(2, 3), "g": np.array([2.0, 1.0])},
...                           sample_labels=["a", "b"], factor_levels={"g": ["lo", "hi"]})
>>> ds["y"].dims, ds["g"].values.tolist(), ds["g"].attrs["levels"]
(('sample', 'y_loc'), ['hi', 'lo'], ['lo', 'hi'])
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np
import xarray as xr

from ..data.functional import SAMPLE
from .columns import check_option_keys, location_grid

__all__ = [
    "WarningRecorder",
    "at_r_exit",
    "dataset_from_columns",
    "fit_from_r",
    "kernels_by_name",
    "predict_from_r",
    "results_for_r",
    "shutdown_workers",
]


class WarningRecorder:
    """Record the Python warnings raised between :meth:`start` and :meth:`stop`.

    R cannot catch Python warnings (reticulate prints them to the console), so
    the R package records them around each call and re-signals each distinct
    one as an R warning of class ``fdakpl_warning``.

    Examples
    --------
    >>> rec = WarningRecorder()
    >>> rec.start()
    >>> warnings.warn("twice", UserWarning); warnings.warn("twice", UserWarning)
    >>> rec.stop()
    [['UserWarning', 'twice']]
    """

    def __init__(self) -> None:
        self._context: Any = None
        self._log: list[warnings.WarningMessage] = []

    def start(self) -> None:
        """Begin recording (every warning, once per distinct category and message)."""
        self._context = warnings.catch_warnings(record=True)
        self._log = self._context.__enter__()
        warnings.simplefilter("always")

    def stop(self) -> list[list[str]]:
        """Stop recording; return ``[category name, message]`` pairs, each distinct pair once."""
        if self._context is not None:
            self._context.__exit__(None, None, None)
            self._context = None
        out: list[list[str]] = []
        for w in self._log:
            item = [w.category.__name__, str(w.message)]
            if item not in out:
                out.append(item)
        self._log = []
        return out


def shutdown_workers(kill: bool = False) -> bool:
    """Shut down joblib's reusable pool of worker processes, if one was started.

    A cross-validated fit (``lam="cv"``, ``n_jobs > 1``) starts loky workers
    that joblib keeps for reuse. Under R they outlive the script: a pipe
    (``Rscript fit.R | cat``) stays open until they time out. The R package
    calls this at the end of every fit and prediction. The resource trackers
    (one small process each for loky and multiprocessing) stay: they exit
    with the process, and stopping them early reports false leaks.

    Parameters
    ----------
    kill : bool
        Kill busy workers (after an interrupt) rather than let them finish their task.

    Returns
    -------
    bool
        Whether a pool was shut down.

    Examples
    --------
    >>> isinstance(shutdown_workers(), bool)
    True
    """
    import sys

    module = sys.modules.get("joblib.externals.loky.reusable_executor")
    if module is None:  # joblib's pool was never used in this process
        return False
    executor = getattr(module, "_executor", None)  # loky keeps its one reusable pool here
    if executor is None:
        return False
    terminate = getattr(executor, "terminate", None)  # joblib's executor also removes its memmapping folder
    if terminate is not None:
        terminate(kill_workers=kill)
    else:
        executor.shutdown(wait=True, kill_workers=kill)
    module._executor = None
    return True


def at_r_exit() -> bool:
    """Run what Python itself runs at exit for its worker pools; the R package calls it when R exits.

    Python embedded in R is never finalized, so the exit handlers of :mod:`multiprocessing` never
    run. After an interrupted cross-validated fit, the queues of the pool that joblib stopped are
    still held by their feeder thread (Python threads run only while R runs Python), and their
    semaphores would be reported as leaked when R exits. The handlers unlink them.

    Returns
    -------
    bool
        Whether :mod:`multiprocessing` was in use (and its exit handlers ran).

    Examples
    --------
    >>> import subprocess, sys
    >>> code = "from fdakpl.r.bridge import at_r_exit; print(at_r_exit())"
    >>> subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.strip()
    'True'
    """
    import sys

    util = sys.modules.get("multiprocessing.util")
    if util is None:
        return False
    shutdown_workers(kill=True)
    util._exit_function()  # what atexit runs in a Python that exits: finalizers (semaphores unlinked), children
    return True


def dataset_from_columns(
    columns: Mapping[str, Any],
    sample_labels: Any = None,
    grids: Mapping[str, Any] | None = None,
    factor_levels: Mapping[str, Any] | None = None,
) -> xr.Dataset:
    """Build a Dataset from plain arrays, as the R package sends them.

    Parameters
    ----------
    columns : mapping
        ``name ->`` a 2-d array (a curve per row: a functional variable with
        location dim ``name_loc``) or a 1-d array (a scalar per sample). NaN
        marks unobserved points and missing values; R's ``NA`` (a NaN with a
        payload, on which NumPy warns at each operation) becomes a plain NaN.
    sample_labels : sequence of str, optional
        Defaults to ``"1".."n"``; must be unique.
    grids : mapping, optional
        ``name ->`` locations of a functional variable; default
        ``linspace(0, 1, m)`` (refund's ``pffr`` default, and
        :func:`fdakpl.datasets.load_dti`'s).
    factor_levels : mapping, optional
        ``name ->`` the levels of a factor; its 1-d column then holds the
        1-based codes (NaN for NA), as R's ``as.integer(f)``.

    Returns
    -------
    xarray.Dataset

    Examples
    --------
    >>> ds = dataset_from_columns({"x": np.ones((3, 4)), "z": [1.0, 2.0, np.nan]})
    >>> ds["x"].coords["x_loc"].values
    array([0.        , 0.33333333, 0.66666667, 1.        ])
    >>> ds["sample"].values.tolist()
    ['1', '2', '3']
    """
    grids = dict(grids or {})
    levels = dict(factor_levels or {})
    if not columns:
        raise ValueError("no columns were given")
    arrays: dict[str, np.ndarray] = {}
    for name, values in columns.items():
        arr = np.asarray(values)
        if arr.ndim == 0:
            arr = arr.reshape(1)
        if arr.dtype.kind not in "fiub":
            raise TypeError(f"column {name!r} has dtype {arr.dtype}; send numbers (factor codes with levels)")
        if arr.ndim not in (1, 2):
            raise ValueError(f"column {name!r} has {arr.ndim} dims; send vectors or matrices")
        if str(name) == SAMPLE:
            raise ValueError(f"a column cannot be named {SAMPLE!r} (the sample dim)")
        if arr.ndim == 2 and 0 < arr.shape[1] < 2:
            raise ValueError(f"column {name!r} is a matrix with {arr.shape[1]} column; a curve needs at least 2 "
                             "locations (send a single value per row as a vector, a scalar covariate)")
        arr = arr.astype(np.float64)  # a copy
        # R's NA is a signalling NaN: NumPy warns "invalid value encountered" at every arithmetic step on it
        arr[np.isnan(arr)] = np.nan
        arrays[str(name)] = arr
    kinds = {name: "matrix" if arr.ndim == 2 else "vector" for name, arr in arrays.items()}
    check_option_keys("grids=", grids, kinds, "matrix")
    check_option_keys("factor_levels=", levels, kinds, "vector")
    sizes = {name: arr.shape[0] for name, arr in arrays.items()}
    n = next(iter(sizes.values()))
    if len(set(sizes.values())) > 1:
        raise ValueError(f"columns have different numbers of rows: {sizes}; every column needs one row per sample")
    labels = np.array([str(i + 1) for i in range(n)]) if sample_labels is None else \
        np.asarray(sample_labels, dtype=str).ravel()
    if labels.size != n:
        raise ValueError(f"{labels.size} sample labels for {n} rows")
    if np.unique(labels).size != n:
        raise ValueError("sample labels must be unique")
    data_vars: dict[str, xr.DataArray] = {}
    for name, arr in arrays.items():
        if arr.ndim == 2:
            loc = f"{name}_loc"
            grid = location_grid(name, arr.shape[1], grids.get(name, "unit"))
            data_vars[name] = xr.DataArray(arr, dims=(SAMPLE, loc), coords={loc: grid})
        elif name in levels:
            levs = [str(v) for v in np.atleast_1d(levels[name])]
            na = np.isnan(arr)
            codes = np.where(na, 1, arr)
            if np.any(codes != np.round(codes)) or np.any((codes < 1) | (codes > len(levs))):
                raise ValueError(f"factor {name!r} has codes outside 1..{len(levs)}")
            vals = np.array(levs, dtype=object)[codes.astype(int) - 1]
            if na.any():
                vals[na] = np.nan
            else:
                vals = vals.astype(str)
            data_vars[name] = xr.DataArray(vals, dims=(SAMPLE,), attrs={"levels": levs, "r_class": "factor"})
        else:
            data_vars[name] = xr.DataArray(arr, dims=(SAMPLE,))
    return xr.Dataset(data_vars, coords={SAMPLE: labels})


def fit_from_r(
    formula: str,
    columns: Mapping[str, Any],
    sample_labels: Any = None,
    grids: Mapping[str, Any] | None = None,
    factor_levels: Mapping[str, Any] | None = None,
    **kwargs: Any,
) -> Any:
    """Fit :class:`fdakpl.FunctionalRegression` on columns sent by R.

    The pool of worker processes of a cross-validated fit is shut down when
    the fit ends (:func:`shutdown_workers`).

    Parameters
    ----------
    formula : str
        E.g. ``"rcst ~ cca + C(sex)"``.
    columns, sample_labels, grids, factor_levels
        As :func:`dataset_from_columns`.
    **kwargs
        Passed to ``FunctionalRegression`` (``dictionary``, ``level``… R's
        ``lambda`` arrives as ``lam``); ``kernels`` may name a kernel ``"laplace"``
        (see :func:`kernels_by_name`).

    Returns
    -------
    FunctionalRegressionResults

    Examples
    --------
    >>> from fdakpl import datasets
    >>> ds = datasets.dti_first_visits()
    >>> res = fit_from_r("rcst ~ cca", {"cca": ds.cca.values, "rcst": ds.rcst.values}, ds.sample.values,
    ...                  lam=1e-3, interpolate_inputs=True, progress=False)
    >>> res.fitted.sizes["sample"], float(res.lam)
    (100, 0.001)
    """
    from ..regression.model import FunctionalRegression

    ds = dataset_from_columns(columns, sample_labels, grids, factor_levels)
    if isinstance(kwargs.get("kernels"), Mapping):
        kwargs["kernels"] = kernels_by_name(str(formula), ds, kwargs["kernels"],
                                            bool(kwargs.get("interpolate_inputs", False)))
    return _with_worker_cleanup(FunctionalRegression(str(formula), data=ds, **kwargs).fit)


def kernels_by_name(formula: str, ds: xr.Dataset, kernels: Mapping[str, Any], interpolate: bool = False
                    ) -> dict[str, Any]:
    """Per-term kernels with ``"laplace"`` (R's ``kpl_kernel("laplace")`` without ``sigma``) made a
    :class:`~fdakpl.kernels.Laplace` kernel whose width is the term's median heuristic (the default
    Gaussian kernel's width).

    Examples
    --------
    >>> from fdakpl import datasets
    >>> ds = datasets.dti_first_visits()
    >>> k = kernels_by_name("rcst ~ cca", ds, {"cca": "laplace"}, interpolate=True)
    >>> type(k["cca"]).__name__, round(k["cca"].sigma, 3)
    ('Laplace', 0.08)
    """
    if not any(isinstance(k, str) for k in kernels.values()):
        return dict(kernels)
    from ..kernels import Laplace
    from ..regression.model import FunctionalRegression

    bad = sorted(str(t) for t, k in kernels.items() if isinstance(k, str) and k != "laplace")
    if bad:
        raise ValueError(f"kernels for {bad} are given by a name other than 'laplace'; give kernel objects")
    widths = FunctionalRegression(formula, ds, interpolate_inputs=interpolate).default_kernels()
    return {t: Laplace(widths[t].sigma) if isinstance(k, str) else k for t, k in kernels.items()}


def _with_worker_cleanup(run: Any) -> Any:
    """``run()``, then shut down joblib's worker pool, also when R interrupts the call.

    An interrupt (``KeyboardInterrupt``) kills the busy workers, and is re-raised only after the
    frames of the interrupted call are collected: they hold the pool's queues, whose semaphores
    would otherwise be reported as leaked when R exits.
    """
    interrupted = False
    try:
        return run()
    except KeyboardInterrupt:
        interrupted = True
    finally:
        shutdown_workers(kill=interrupted)
    import gc

    gc.collect()
    raise KeyboardInterrupt


def _plain(x: Any) -> Any:
    if isinstance(x, xr.DataArray):
        return np.asarray(x.values)
    if isinstance(x, np.generic):
        return x.item()
    return x


def results_for_r(res: Any) -> dict[str, Any]:
    """Plain arrays of a fitted model for the R object of class ``kpl``.

    Returns
    -------
    dict
        ``fitted``, ``residuals`` (``(n, m)``, NaN where unobserved),
        ``coef`` (:attr:`~fdakpl.results.FunctionalRegressionResults.coef`: the representer
        coefficients, sample x atom, of an exact fit; the primal weights, feature x atom, of an
        approximate one), ``coef_kind`` (``"alpha"`` or ``"primal_weights"``), ``coef_dims`` and
        ``coef_labels`` (its dims and their labels, as strings), ``grid`` (response locations), ``samples``,
        ``lambda``, ``edf``, ``train_mse`` (the summary's "Training MSE"),
        ``mean_function``, ``notes``, ``summary`` and ``summary_full`` (texts: the default summary and the one
        with the full excess-risk diagnostics).

    Examples
    --------
    >>> from fdakpl import datasets
    >>> ds = datasets.dti_first_visits()
    >>> res = fit_from_r("rcst ~ cca", {"cca": ds.cca.values, "rcst": ds.rcst.values},
    ...                  lam=1e-3, interpolate_inputs=True, progress=False)
    >>> out = results_for_r(res)
    >>> out["fitted"].shape, out["samples"][:2], out["lambda"]
    ((100, 55), ['1', '2'], 0.001)
    >>> out["coef_kind"], out["coef_dims"], out["coef"].shape, out["coef_labels"][1][:3]
    ('alpha', ['sample', 'atom'], (100, 21), ['0', '1', '2'])
    """
    fitted = res.fitted
    coef = res.coef
    loc = next(d for d in fitted.dims if d != SAMPLE)
    return {
        "fitted": np.asarray(fitted.transpose(SAMPLE, loc).values, dtype=float),
        "residuals": np.asarray(res.resid.transpose(SAMPLE, loc).values, dtype=float),
        "coef": np.asarray(_plain(coef), dtype=float),
        "coef_kind": str(coef.name),
        "coef_dims": [str(d) for d in coef.dims],
        "coef_labels": [[str(v) for v in np.asarray(coef[d].values)] for d in coef.dims],
        "grid": np.asarray(fitted[loc].values, dtype=float),
        "location_dim": str(loc),
        "samples": [str(s) for s in np.asarray(fitted[SAMPLE].values)],
        "lambda": float(_plain(res.lam)),
        "edf": float(_plain(res.edf)) if getattr(res, "edf", None) is not None else float("nan"),
        "train_mse": float(res.train_mse),
        "mean_function": np.asarray(_plain(res.mean_function), dtype=float).ravel()
        if getattr(res, "mean_function", None) is not None else None,
        "notes": [str(v) for v in getattr(res, "notes", [])],
        "summary": str(res.summary(importance=False)),  # R has no term_importance(): no hint to call it
        "summary_full": str(res.summary(importance=False, diagnostics="full")),
    }


def predict_from_r(
    res: Any,
    columns: Mapping[str, Any] | None = None,
    sample_labels: Any = None,
    grids: Mapping[str, Any] | None = None,
    factor_levels: Mapping[str, Any] | None = None,
    at: Any = None,
    level: float | None = None,
    kind: str = "pointwise",
    calibration: float = 0.3,
    random_state: Any = 0,
) -> dict[str, Any]:
    """Predict from R's new data (plain arrays); ``columns=None`` predicts the training samples.

    Parameters
    ----------
    res : FunctionalRegressionResults
    columns, sample_labels, grids, factor_levels
        As :func:`dataset_from_columns`.
    at : array-like, optional
        Locations of the predicted curves (default: the response grid).
    level : float, optional
        When given, split-conformal prediction bands of this coverage
        (``res.prediction_bands(alpha=1 - level, kind=kind, ...)``), on the
        response grid.
    kind, calibration, random_state
        Passed to ``prediction_bands``.

    Returns
    -------
    dict
        ``values`` ``(n, m)``, ``samples`` and ``locations``; with ``level``,
        also ``lower`` and ``upper``.

    Examples
    --------
    >>> from fdakpl import datasets
    >>> ds = datasets.dti_first_visits()
    >>> res = fit_from_r("rcst ~ cca", {"cca": ds.cca.values[:70], "rcst": ds.rcst.values[:70]},
    ...                  lam=1e-3, interpolate_inputs=True, progress=False)
    >>> out = predict_from_r(res, {"cca": ds.cca.values[70:]}, at=[0.0, 0.5, 1.0])
    >>> out["values"].shape, out["locations"].tolist()
    ((30, 3), [0.0, 0.5, 1.0])
    >>> band = predict_from_r(res, {"cca": ds.cca.values[70:]}, level=0.9)
    >>> bool(np.all(band["lower"] <= band["values"]) and np.all(band["values"] <= band["upper"]))
    True
    """
    newdata = None if columns is None else dataset_from_columns(columns, sample_labels, grids, factor_levels)
    try:
        if level is not None:
            if at is not None:
                raise ValueError("prediction bands are computed on the response grid; drop `at`")
            lower, upper, pred = res.prediction_bands(newdata, alpha=1.0 - float(level), kind=str(kind),
                                                      calibration=float(calibration), random_state=random_state)
        else:
            at_arr = None if at is None else np.atleast_1d(np.asarray(at, dtype=float))
            pred = res.predict(newdata=newdata, at=at_arr)
    finally:
        shutdown_workers()
    loc = next(d for d in pred.dims if d != SAMPLE)
    out = {
        "values": np.asarray(pred.transpose(SAMPLE, loc).values, dtype=float),
        "samples": [str(s) for s in np.asarray(pred[SAMPLE].values)],
        "locations": np.asarray(pred[loc].values, dtype=float),
    }
    if level is not None:
        out["lower"] = np.asarray(lower.transpose(SAMPLE, loc).values, dtype=float)
        out["upper"] = np.asarray(upper.transpose(SAMPLE, loc).values, dtype=float)
    return out

