# predict(), as.data.frame(), plot() and kpl_kernel().

long_format <- function(values, samples, locations, name = "value") {
  out <- data.frame(
    sample = rep(samples, times = length(locations)),
    location = rep(locations, each = length(samples)),
    stringsAsFactors = FALSE
  )
  if (length(dim(values)) == 3L) {
    for (k in dimnames(values)[[3L]]) out[[k]] <- as.vector(values[, , k])
  } else {
    out[[name]] <- as.vector(values)
  }
  out
}

# Arguments of predict.lm() that predict.kpl() does not take, with the reason.
refuse_predict_args <- function(dots) {
  nms <- names(dots)
  if (length(dots) && (is.null(nms) || any(!nzchar(nms)))) {
    input_error("predict() got an unnamed argument after `newdata`; name it (at =, interval =, level =, format =)",
                call = NULL)
  }
  for (nm in nms) {
    msg <- switch(nm,
      data = "predict() takes new data as `newdata =`, not `data =`",
      se.fit = "`se.fit` is not available for kpl fits; interval = \"prediction\" gives conformal prediction bands",
      type = if (!identical(dots$type, "response")) {
        "`type` can only be \"response\": predictions are response curves"
      },
      weights = "`weights` is not supported by predict() for kpl fits",
      sprintf("unknown argument '%s' to predict(); it takes newdata, at, interval, level, na.action, format", nm)
    )
    if (!is.null(msg)) input_error("%s", msg, call = NULL)
  }
}

predict.kpl <- function(object, newdata = NULL, at = NULL, interval = c("none", "prediction"), level = 0.95,
                        format = c("matrix", "long"), na.action = stats::na.pass, ...) {
  refuse_predict_args(list(...))
  interval <- check_string(interval[1L], "interval", c("none", "prediction"))
  format <- check_string(format[1L], "format", c("matrix", "long"))
  level <- check_numbers(level, "level", positive = TRUE, len = 1L)
  if (level >= 1) input_error("`level` must be between 0 and 1, e.g. 0.95, not %s", format(level))
  if (!is.null(at)) {
    at <- check_numbers(at, "at")
    if (interval == "prediction") {
      input_error("prediction bands are computed on the response grid; drop `at` with interval = \"prediction\"")
    }
    if (any(at < min(object$grid) | at > max(object$grid))) {
      input_error("`at` must lie in the response's domain [%g, %g]", min(object$grid), max(object$grid))
    }
  }
  na_action <- na_action_name(na.action)
  check_python()
  if (reticulate::py_is_null_xptr(object$py)) {
    stop(structure(class = c("fdakpl_error", "error", "condition"), list(
      message = "the Python side of this model is gone (Python objects do not survive saveRDS() or a new R session); refit it with kpl()",
      call = sys.call())))
  }
  context <- list(names = names_context(object$spec))
  bands <- if (interval == "prediction") list(level = level) else list()
  at_py <- if (is.null(at)) NULL else reticulate::np_array(at)
  if (is.null(newdata)) {
    out <- py_call(do.call(bridge()$predict_from_r, c(list(object$py, at = at_py), bands)), context = context)
    samples <- object$samples
    rows <- seq_along(samples)
    all_samples <- samples
  } else {
    fitted_info <- list(kinds = object$kinds, levels = object$levels, ncols = object$ncols)
    prepared <- prepare_data(object$spec, newdata, "newdata", fitted = fitted_info, na_action = na_action,
                             interpolate = isTRUE(object$interpolate_inputs))
    grids <- object$input_py_grids  # the curves' grids of the fit hold for new data
    context$labels <- prepared$labels
    context$all_labels <- prepared$all_labels
    all_samples <- prepared$all_labels[prepared$out_rows]
    rows <- match(prepared$labels, all_samples)
    out <- if (prepared$n == 0L) NULL else
      py_call(do.call(bridge()$predict_from_r, c(list(object$py, prepared$columns, sample_labels = prepared$labels,
                                                      grids = grids, factor_levels = prepared$levels, at = at_py),
                                                 bands)), context = context)
  }
  locations <- if (is.null(at)) object$grid else at
  cols <- location_names(locations, object$grid, object$colnames)
  fill <- function(m) {
    full <- matrix(NA_real_, length(all_samples), length(locations), dimnames = list(all_samples, cols))
    if (!is.null(m)) full[rows, ] <- nan_to_na(as.matrix(m))
    full
  }
  values <- fill(out$values)
  if (interval == "prediction") {
    values <- array(c(values, fill(out$lower), fill(out$upper)), dim = c(dim(values), 3L),
                    dimnames = list(all_samples, cols, c("fit", "lwr", "upr")))
  }
  if (is.null(newdata) && interval == "none" && inherits(object$na.action, "exclude")) {
    values <- stats::napredict(object$na.action, values)  # as fitted(): NA rows for the excluded rows
  }
  if (format == "long") return(long_format(values, rownames(values), locations, "fit"))
  values
}

as.data.frame.kpl <- function(x, row.names = NULL, optional = FALSE, ...) {
  out <- long_format(x$observed, x$samples, x$grid, "observed")
  out$fitted <- as.vector(x$fitted)
  out$residual <- as.vector(x$residuals)
  if (!is.null(row.names)) rownames(out) <- row.names
  out
}

plot.kpl <- function(x, which = c("fit", "residuals"), samples = NULL, col = NULL, type = NULL, ...) {
  if (identical(type, "surface")) return(plot_surface(x, ...))
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

kpl_kernel <- function(type = c("gaussian", "laplace", "linear", "integral_gaussian", "categorical"), ...) {
  type <- check_string(type[1L], "type", c("gaussian", "laplace", "linear", "integral_gaussian", "categorical"))
  args <- list(...)
  for (nm in names(args)) {
    if (is.numeric(args[[nm]])) args[[nm]] <- check_numbers(args[[nm]], nm)
  }
  check_python()
  cls <- c(gaussian = "Gaussian", laplace = "Laplace", linear = "Linear", integral_gaussian = "IntegralGaussian",
           categorical = "Categorical")[[type]]
  kernels <- fdakpl_python(if (type == "categorical") "factor_kernels" else "kernels")
  py_call(do.call(kernels[[cls]], args))
}
