# kpl(): fit, and the S3 methods of class "kpl".

formula_string <- function(formula) {
  paste(trimws(deparse(formula, width.cutoff = 500L)), collapse = " ")
}

# Arguments for Python, NULL entries dropped (Python's defaults apply).
python_kwargs <- function(...) {
  args <- list(...)
  args[!vapply(args, is.null, logical(1))]
}

kpl <- function(formula, data, dictionary = NULL, levels = NULL, kernel = NULL, lambda = "gcv",
                loss = "square", output_matrix = NULL, combine = c("product", "sum"), center = TRUE,
                solver = "auto", interpolate_inputs = FALSE, grid = NULL, ...) {
  cl <- match.call()
  if (!inherits(formula, "formula") || length(formula) != 3L) {
    input_error("`formula` must be a two-sided formula such as rcst ~ cca + sex, not %s",
                paste(deparse(formula), collapse = " "))
  }
  if (missing(data)) input_error("`data` is missing: give a data.frame with matrix columns (or a named list)")
  combine <- match.arg(combine)
  reserved <- intersect(names(list(...)), c("lam", "kernels", "data", "formula", "columns", "sample_labels",
                                             "grids", "factor_levels"))
  if (length(reserved)) {
    input_error("argument%s %s cannot go through `...`; use lambda = for the ridge parameter, kernel = for kernels, grid = for grids",
                if (length(reserved) > 1L) "s" else "", paste0("'", reserved, "'", collapse = ", "))
  }
  vars <- all.vars(formula)
  response <- all.vars(formula[[2L]])
  if (length(response) != 1L) {
    input_error("the left-hand side of the formula must be one curve column, got %s", deparse(formula[[2L]]))
  }
  check_python()
  prepared <- columns_for_python(data, vars)
  if (prepared$kinds[response] != "matrix") {
    input_error("the response '%s' must be a numeric matrix column (one curve per row), not a %s",
                response, prepared$kinds[response])
  }
  grids <- grids_for_python(grid, prepared$kinds, prepared$ncols)
  if (is.numeric(lambda) && length(lambda) > 1L) lambda <- reticulate::np_array(as.double(lambda))
  if (!is.null(levels)) levels <- as.integer(levels)
  kernels <- NULL
  if (is.list(kernel) && !inherits(kernel, "python.builtin.object")) {
    kernels <- kernel  # one kernel per term: list(cca = kpl_kernel(...), scalars = ...)
    kernel <- NULL
  }
  kwargs <- python_kwargs(dictionary = dictionary, levels = levels, kernel = kernel, kernels = kernels,
                          lam = lambda, loss = loss,
                          output_matrix = output_matrix, combine = combine, center = center, solver = solver,
                          interpolate_inputs = interpolate_inputs, ...)
  bridge <- fdakpl_python("io.r")
  res <- py_call(do.call(bridge$fit_from_r, c(list(formula_string(formula), prepared$columns,
                                                   sample_labels = prepared$labels, grids = grids,
                                                   factor_levels = prepared$levels), kwargs)))
  out <- py_call(bridge$results_for_r(res))
  samples <- unlist(out$samples)
  grid_y <- as.double(out$grid)
  label <- function(m) {
    m <- as.matrix(m)
    dimnames(m) <- list(samples, as.character(grid_y))
    m
  }
  y <- prepared$columns[[response]]
  dimnames(y) <- list(samples, as.character(grid_y))
  coefs <- as.matrix(out$coef)
  rownames(coefs) <- samples
  structure(list(
    call = cl,
    formula = formula,
    response = response,
    terms = setdiff(vars, response),
    observed = y,
    fitted = label(out$fitted),
    residuals = label(out$residuals),
    coefficients = coefs,
    grid = grid_y,
    lambda = out[["lambda"]],
    edf = out$edf,
    mean_function = if (is.null(out$mean_function)) NULL else as.double(out$mean_function),
    n = length(samples),
    samples = samples,
    levels = prepared$levels,
    ncols = prepared$ncols,
    kinds = prepared$kinds,
    input_grids = grid,
    python_summary = out$summary,
    py = res
  ), class = "kpl")
}

print.kpl <- function(x, ...) {
  cat("Kernel-based projection learning (fdakpl)\n")
  cat("Call: ", paste(deparse(x$call), collapse = "\n"), "\n", sep = "")
  cat(sprintf("Response '%s': %d curves on %d locations in [%g, %g], %d observed values\n",
              x$response, x$n, length(x$grid), min(x$grid), max(x$grid), sum(!is.na(x$observed))))
  cat(sprintf("lambda = %.4g, effective degrees of freedom = %.4g\n", x$lambda, x$edf))
  invisible(x)
}

summary.kpl <- function(object, ...) {
  obs <- !is.na(object$observed)
  res <- object$residuals[obs]
  centred <- object$observed - matrix(colMeans(object$observed, na.rm = TRUE), nrow(object$observed),
                                      ncol(object$observed), byrow = TRUE)
  structure(list(
    call = object$call,
    response = object$response,
    terms = object$terms,
    n = object$n,
    locations = length(object$grid),
    observed = sum(obs),
    lambda = object$lambda,
    edf = object$edf,
    rmse = sqrt(mean(res^2)),
    r_squared = 1 - sum(res^2) / sum(centred[obs]^2),
    python_summary = object$python_summary
  ), class = "summary.kpl")
}

print.summary.kpl <- function(x, ...) {
  cat("Kernel-based projection learning (fdakpl)\n")
  cat("Call: ", paste(deparse(x$call), collapse = "\n"), "\n\n", sep = "")
  cat(sprintf("Response: %s (%d curves, %d locations, %d observed values)\n",
              x$response, x$n, x$locations, x$observed))
  cat(sprintf("Inputs: %s\n", paste(x$terms, collapse = ", ")))
  cat(sprintf("lambda = %.4g, edf = %.4g\n", x$lambda, x$edf))
  cat(sprintf("Training RMSE over observed points = %.4g, R^2 (vs. the mean curve) = %.4f\n\n",
              x$rmse, x$r_squared))
  cat("Python summary:\n", x$python_summary, "\n", sep = "")
  invisible(x)
}

fitted.kpl <- function(object, ...) object$fitted

residuals.kpl <- function(object, ...) object$residuals

coef.kpl <- function(object, ...) object$coefficients

long_format <- function(values, samples, locations, name = "value") {
  out <- data.frame(
    sample = rep(samples, times = length(locations)),
    location = rep(locations, each = length(samples)),
    value = as.vector(values),
    stringsAsFactors = FALSE
  )
  names(out)[3L] <- name
  out
}

predict.kpl <- function(object, newdata = NULL, at = NULL, format = c("matrix", "long"), ...) {
  format <- match.arg(format)
  check_python()
  if (reticulate::py_is_null_xptr(object$py)) {
    stop(structure(class = c("fdakpl_error", "error", "condition"), list(
      message = "the Python side of this model is gone (Python objects do not survive saveRDS() or a new R session); refit it with kpl()",
      call = sys.call())))
  }
  bridge <- fdakpl_python("io.r")
  at_py <- if (is.null(at)) NULL else reticulate::np_array(as.double(at))
  if (is.null(newdata)) {
    out <- py_call(bridge$predict_from_r(object$py, at = at_py))
  } else {
    prepared <- columns_for_python(newdata, object$terms, levels = object$levels, ncols = object$ncols,
                                   what = "newdata")
    grids <- grids_for_python(object$input_grids[intersect(names(object$input_grids), object$terms)],
                              prepared$kinds, prepared$ncols)
    out <- py_call(bridge$predict_from_r(object$py, prepared$columns, sample_labels = prepared$labels,
                                         grids = grids, factor_levels = prepared$levels, at = at_py))
  }
  values <- as.matrix(out$values)
  samples <- unlist(out$samples)
  locations <- as.double(out$locations)
  if (format == "long") return(long_format(values, samples, locations, "fit"))
  dimnames(values) <- list(samples, as.character(locations))
  values
}

as.data.frame.kpl <- function(x, row.names = NULL, optional = FALSE, ...) {
  out <- long_format(x$observed, x$samples, x$grid, "observed")
  out$fitted <- as.vector(x$fitted)
  out$residual <- as.vector(x$residuals)
  if (!is.null(row.names)) rownames(out) <- row.names
  out
}

plot.kpl <- function(x, which = c("fit", "residuals"), samples = NULL, col = NULL, ...) {
  which <- match.arg(which)
  if (is.null(samples)) samples <- seq_len(min(4L, x$n))
  if (is.character(samples)) {
    bad <- setdiff(samples, x$samples)
    if (length(bad)) stop(sprintf("samples %s are not in the model", paste(bad, collapse = ", ")), call. = FALSE)
    samples <- match(samples, x$samples)
  }
  if (is.null(col)) col <- grDevices::hcl.colors(length(samples), "Dark 3")
  if (which == "fit") {
    obs <- t(x$observed[samples, , drop = FALSE])
    fit <- t(x$fitted[samples, , drop = FALSE])
    graphics::matplot(x$grid, obs, type = "p", pch = 16, cex = 0.6, col = col,
                      ylim = range(obs, fit, na.rm = TRUE), xlab = "location", ylab = x$response,
                      main = sprintf("%s: observed (points) and fitted (lines)", x$response), ...)
    graphics::matlines(x$grid, fit, lty = 1, lwd = 2, col = col)
  } else {
    res <- t(x$residuals[samples, , drop = FALSE])
    graphics::matplot(x$grid, res, type = "b", pch = 16, cex = 0.6, lty = 1, col = col,
                      xlab = "location", ylab = "residual", main = sprintf("%s: residuals", x$response), ...)
    graphics::abline(h = 0, col = "grey50", lty = 2)
  }
  graphics::legend("topright", legend = x$samples[samples], col = col, lty = 1, pch = 16, bty = "n", cex = 0.8)
  invisible(x)
}

kpl_kernel <- function(type = c("gaussian", "laplace", "linear", "integral_gaussian"), ...) {
  type <- match.arg(type)
  check_python()
  cls <- c(gaussian = "Gaussian", laplace = "Laplace", linear = "Linear", integral_gaussian = "IntegralGaussian")[[type]]
  kernels <- fdakpl_python("kernels")
  py_call(do.call(kernels[[cls]], list(...)))
}
