"""The linear function-on-function reference of the accuracy benchmark, fitted by R's mgcv through rpy2.

The model is the one refund's ``pffr`` builds (refund itself is not installable here):

    y_i(t) = mu(t) + sum_k  int x_ik(s) beta_k(s, t) ds  +  sum_l z_il f_l(t) + eps_i(t),

* ``mu(t) = b0 + s(t)``: a P-spline in t (``bs="ps", k=20, m=c(2, 1)``, pffr's ``bs.int``);
* each functional input enters as a *linear functional term*: a tensor-product smooth
  ``te(S, T, by=L, bs="ps", k=c(5, 5), m=list(c(2, 1), c(2, 1)))`` (pffr's ``ff()`` defaults)
  with matrix arguments: row (i, t) of ``S`` holds the input grid, of ``T`` the response location t,
  and of ``L`` the values ``x_i(s_q) w_q`` with trapezoidal quadrature weights ``w_q``; mgcv's
  summation convention then gives ``sum_q w_q x_i(s_q) beta(s_q, t)``;
* scalar factors enter by treatment-coded dummies ``z_il`` with varying-coefficient smooths
  ``s(t, by=z_l, bs="ps", k=5, m=c(2, 1))`` (pffr's ``bs.yindex``): the factor-by smooths of t;

fitted by REML (``gam(method="REML")``) on the long form (one row per observed response point),
with independent Gaussian errors, as pffr does by default.
"""

from __future__ import annotations

from typing import Any

import numpy as np

R_CODE = r"""
# pffr's terms on the long form: the data of the fit (dat) and of the prediction (nd) gain the columns of each
# functional input (S, T, L) and of each factor dummy (z); returns them with the terms of the formula
fdakpl_pffr_design <- function(dat, nd, inputs, Z, newinputs, newZ, k_int, k_ff, k_by) {
  y <- dat$y; tt <- dat$t; tnew <- nd$t
  terms <- sprintf("s(t, bs = \"ps\", k = %d, m = c(2, 1))", k_int)
  for (k in seq_along(inputs)) {
    inp <- inputs[[k]]; new <- newinputs[[k]]
    q <- length(inp$s)
    dat[[paste0("S", k)]] <- matrix(inp$s, nrow = length(y), ncol = q, byrow = TRUE)
    dat[[paste0("T", k)]] <- matrix(tt, nrow = length(y), ncol = q)
    dat[[paste0("L", k)]] <- inp$L
    nd[[paste0("S", k)]] <- matrix(inp$s, nrow = length(tnew), ncol = q, byrow = TRUE)
    nd[[paste0("T", k)]] <- matrix(tnew, nrow = length(tnew), ncol = q)
    nd[[paste0("L", k)]] <- new
    terms <- c(terms, sprintf(
      "te(S%d, T%d, by = L%d, bs = \"ps\", k = c(%d, %d), m = list(c(2, 1), c(2, 1)))", k, k, k, k_ff, k_ff))
  }
  if (!is.null(Z)) for (l in seq_len(ncol(Z))) {
    dat[[paste0("z", l)]] <- Z[, l]
    nd[[paste0("z", l)]] <- newZ[, l]
    terms <- c(terms, sprintf("s(t, by = z%d, bs = \"ps\", k = %d, m = c(2, 1))", l, k_by))
  }
  list(dat = dat, nd = nd, terms = terms)
}

fdakpl_pffr <- function(y, tt, inputs, Z, newinputs, newZ, tnew, k_int, k_ff, k_by) {
  suppressPackageStartupMessages(library(mgcv))
  design <- fdakpl_pffr_design(list(y = y, t = tt), list(t = tnew), inputs, Z, newinputs, newZ, k_int, k_ff, k_by)
  dat <- design$dat
  fml <- as.formula(paste("y ~", paste(design$terms, collapse = " + ")))
  fit <- gam(fml, data = dat, method = "REML")
  list(pred = as.numeric(predict(fit, newdata = design$nd)), edf = sum(fit$edf))
}
"""

_READY = False


def r_with_pffr() -> Any:
    """rpy2's robjects, with this module's R functions (fdakpl_pffr, fdakpl_pffr_design) defined once."""
    global _READY
    import rpy2.robjects as ro

    if not _READY:
        ro.r(R_CODE)
        _READY = True
    return ro


def mgcv_version() -> str:
    """Version of R's mgcv (raises if rpy2 or mgcv is missing)."""
    ro = r_with_pffr()
    return str(ro.r('as.character(utils::packageVersion("mgcv"))')[0])


def _trapezoid(grid: np.ndarray) -> np.ndarray:
    d = np.diff(grid)
    w = np.zeros_like(grid)
    w[:-1] += d / 2
    w[1:] += d / 2
    return w


def fit_predict(Y: np.ndarray, t: np.ndarray, X: dict[str, tuple[np.ndarray, np.ndarray]], X_new: dict[str, np.ndarray],
                Z: np.ndarray | None = None, Z_new: np.ndarray | None = None, *, k_int: int = 20, k_ff: int = 5,
                k_by: int = 5) -> tuple[np.ndarray, float]:
    """Fit the pffr-type linear model on training curves and predict new curves on the grid ``t``.

    Parameters
    ----------
    Y : (n, m) array
        Training responses on the grid ``t``, NaN = not observed (those rows are left out of the long form).
    t : (m,) array
        Response grid.
    X : dict name -> (values (n, q), grid (q,))
        Functional inputs (no NaN: interpolate first) and their grids.
    X_new : dict name -> (n_new, q) array
        The same inputs for the curves to predict.
    Z, Z_new : (n, p), (n_new, p) arrays, optional
        Treatment-coded dummies of the scalar factors.
    k_int, k_ff, k_by : int
        Basis sizes of the intercept, of each margin of the ``te`` surface, and of the factor-by smooths.

    Returns
    -------
    predictions : (n_new, m) array
    edf : float
        Effective degrees of freedom of the fit (REML).
    """
    ro = r_with_pffr()
    from rpy2.robjects import numpy2ri
    from rpy2.robjects.conversion import localconverter

    t = np.asarray(t, dtype=float)
    n_new = next(iter(X_new.values())).shape[0] if X_new else Z_new.shape[0]
    rows, cols, design = long_form(Y, t, X, X_new, Z, Z_new)
    with localconverter(ro.default_converter + numpy2ri.converter):
        out = ro.r["fdakpl_pffr"](np.asarray(Y, dtype=float)[rows, cols], t[cols], design["inputs"], design["Z"],
                                  design["newinputs"], design["newZ"], np.tile(t, n_new), k_int, k_ff, k_by)
        pred = np.asarray(out["pred"]).reshape(n_new, t.size)
        edf = float(np.asarray(out["edf"]).ravel()[0])
    return pred, edf


def long_form(Y: np.ndarray, t: np.ndarray, X: dict[str, tuple[np.ndarray, np.ndarray]], X_new: dict[str, np.ndarray],
              Z: np.ndarray | None, Z_new: np.ndarray | None) -> tuple[np.ndarray, np.ndarray, dict[str, Any]]:
    """The observed points ``(rows, cols)`` of ``Y`` and, as R objects, the arguments ``inputs``, ``Z``,
    ``newinputs``, ``newZ`` of ``fdakpl_pffr_design`` (inputs weighted by the trapezoid rule; the new curves'
    rows repeated for every point of ``t``)."""
    import rpy2.robjects as ro
    from rpy2.robjects import numpy2ri
    from rpy2.robjects.conversion import localconverter

    rows, cols = np.nonzero(~np.isnan(np.asarray(Y, dtype=float)))
    inputs, newinputs = [], []
    for name, (vals, grid) in X.items():
        w = _trapezoid(np.asarray(grid, dtype=float))
        vals = np.asarray(vals, dtype=float)
        if np.isnan(vals).any() or np.isnan(X_new[name]).any():
            raise ValueError(f"input {name!r} has NaN; interpolate it before the mgcv reference")
        inputs.append({"s": np.asarray(grid, dtype=float), "L": vals[rows] * w})
        newinputs.append(np.repeat(np.asarray(X_new[name], dtype=float), t.size, axis=0) * w)
    with localconverter(ro.default_converter + numpy2ri.converter):
        design = {
            "inputs": ro.ListVector({str(i): ro.ListVector(v) for i, v in enumerate(inputs)}) if inputs else ro.NULL,
            "newinputs": ro.ListVector({str(i): v for i, v in enumerate(newinputs)}) if newinputs else ro.NULL,
            "Z": ro.NULL if Z is None else np.asarray(Z, dtype=float)[rows],
            "newZ": ro.NULL if Z_new is None else np.repeat(np.asarray(Z_new, dtype=float), t.size, axis=0)}
    return rows, cols, design
