# predict(), as.data.frame() and plot().

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

# The fraction of the training curves that calibrates prediction bands at `level`: `calibration`, or
# by default 30% of them, raised when that is too few for a finite band: the conformal quantile at
# a location needs `need` calibration curves observed there, so the default takes enough curves for
# `need` of them at the least observed location (on average over the random split), leaving at
# least 2 to refit. Errors in R's words when no split of the n curves gives a finite band.
band_calibration <- function(calibration, level, observed) {
  n <- nrow(observed)
  need <- ceiling(level / (1 - level) - 1e-12)  # a finite conformal quantile needs n_cal >= need
  max_level <- function(k) floor(1e4 * k / (k + 1)) / 1e4
  if (need > n - 2L) {
    input_error("prediction bands at level = %g need at least %d calibration curves plus 2 to refit on, but the model has %d curves; lower `level` to at most %s, or fit more curves",
                level, need, n, format(max_level(n - 2L)), call = NULL)
  }
  if (is.null(calibration)) {
    seen <- colMeans(!is.na(observed))
    k <- min(n - 2L, max(need, 2L, ceiling(need / min(seen[seen > 0]))))
    if (round(0.3 * n) >= k) return(0.3)
    return(k / n)
  }
  calibration <- check_numbers(calibration, "calibration", positive = TRUE, len = 1L)
  k <- round(calibration * n)
  if (calibration >= 1 || k < 2L || n - k < 2L) {
    input_error("`calibration` = %g of the %d curves leaves too few curves to calibrate or to refit (at least 2 each); use a fraction between %.3g and %.3g",
                calibration, n, 2 / n, (n - 2) / n, call = NULL)
  }
  if (k < need) {
    input_error("prediction bands at level = %g need at least %d calibration curves, but calibration = %g of the %d curves gives %d; raise `calibration` to at least %s, lower `level` to at most %s, or leave `calibration` to its default",
                level, need, calibration, n, k, format(ceiling(1e3 * need / n) / 1e3), format(max_level(k)), call = NULL)
  }
  calibration
}

# With na.action = na.exclude, NA rows for the excluded rows (as napredict() pads lm's predictions),
# also for the fit/lwr/upr array of prediction bands.
pad_excluded <- function(values, omit) {
  if (!inherits(omit, "exclude")) return(values)
  if (length(dim(values)) != 3L) return(stats::napredict(omit, values))
  slices <- lapply(seq_len(dim(values)[3L]), function(k) {
    stats::napredict(omit, matrix(values[, , k], dim(values)[1L], dim(values)[2L], dimnames = dimnames(values)[1:2]))
  })
  array(unlist(slices), dim = c(dim(slices[[1L]]), length(slices)),
        dimnames = c(dimnames(slices[[1L]]), dimnames(values)[3L]))
}

predict.kpl <- function(object, newdata = NULL, at = NULL, interval = c("none", "prediction"), level = 0.95,
                        format = c("matrix", "long"), na.action = stats::na.pass, calibration = NULL,
                        band = c("pointwise", "simultaneous"), ...) {
  refuse_predict_args(list(...))
  interval <- check_string(interval[1L], "interval", c("none", "prediction"))
  format <- check_string(format[1L], "format", c("matrix", "long"))
  band <- check_string(band[1L], "band", c("pointwise", "simultaneous"))
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
  py <- python_model(object, "predict()")
  context <- list(names = names_context(object$spec, object$kinds, object$ncols))
  bands <- if (interval == "prediction") {
    list(level = level, kind = band, calibration = band_calibration(calibration, level, object$observed))
  } else {
    list()
  }
  at_py <- if (is.null(at)) NULL else reticulate::np_array(at)
  if (is.null(newdata)) {
    out <- py_call(do.call(bridge()$predict_from_r, c(list(py, at = at_py), bands)), context = context)
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
    columns <- reverse_columns(prepared$columns, object$reversed, object$spec)
    out <- if (prepared$n == 0L) NULL else
      py_call(do.call(bridge()$predict_from_r, c(list(py, columns, sample_labels = prepared$labels,
                                                      grids = grids, factor_levels = prepared$levels, at = at_py),
                                                 bands)), context = context)
  }
  locations <- if (is.null(at)) object$grid else at
  flip <- is.null(at) && object$response %in% object$reversed  # Python's grid increases; the user's decreases
  cols <- location_names(locations, object$grid, object$colnames)
  fill <- function(m) {
    full <- matrix(NA_real_, length(all_samples), length(locations), dimnames = list(all_samples, cols))
    if (!is.null(m)) {
      m <- nan_to_na(as.matrix(m))
      full[rows, ] <- if (flip) m[, rev(seq_len(ncol(m))), drop = FALSE] else m
    }
    full
  }
  values <- fill(out$values)
  if (interval == "prediction") {
    values <- array(c(values, fill(out$lower), fill(out$upper)), dim = c(dim(values), 3L),
                    dimnames = list(all_samples, cols, c("fit", "lwr", "upr")))
  }
  if (is.null(newdata)) values <- pad_excluded(values, object$na.action)  # as fitted(): NA rows for excluded rows
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

# Which samples to draw: row numbers or row names of the fit.
plot_samples <- function(x, samples) {
  if (is.null(samples)) return(seq_len(min(4L, x$n)))
  if (is.character(samples)) {
    bad <- setdiff(samples, x$samples)
    if (length(bad)) input_error("samples %s are not in the model", paste0("'", bad, "'", collapse = ", "), call = NULL)
    return(match(samples, x$samples))
  }
  if (!is.numeric(samples) || !length(samples) || anyNA(samples) || any(samples != round(samples)) ||
      any(samples < 1 | samples > x$n)) {
    input_error("`samples` must be row numbers between 1 and %d (or row names) of the fitted curves, not %s",
                x$n, deparse1(samples), call = NULL)
  }
  as.integer(samples)
}

plot.kpl <- function(x, which = c("fit", "residuals"), samples = NULL, col = NULL, type = NULL, ...) {
  if (identical(type, "surface")) return(plot_surface(x, ...))
  if (is.numeric(which)) {
    if (length(which) != 1L || !which %in% 1:2) input_error("`which` must be 1 (\"fit\") or 2 (\"residuals\"), not %s", deparse1(which))
    which <- c("fit", "residuals")[which]
  }
  which <- match.arg(which)
  samples <- plot_samples(x, samples)
  if (is.null(col)) col <- grDevices::hcl.colors(length(samples), "Dark 3")
  col <- rep_len(col, length(samples))
  # the defaults of the drawing; graphical parameters given in `...` (main, xlab, ylim, pch, ...) replace them
  draw <- function(defaults) do.call(graphics::matplot, utils::modifyList(defaults, list(...)))
  if (which == "fit") {
    obs <- t(x$observed[samples, , drop = FALSE])
    fit <- t(x$fitted[samples, , drop = FALSE])
    draw(list(x = x$grid, y = obs, type = if (is.null(type)) "p" else type, pch = 16, cex = 0.6, col = col,
              ylim = range(obs, fit, na.rm = TRUE), xlab = "location", ylab = x$response,
              main = sprintf("%s: observed (points) and fitted (lines)", x$response)))
    graphics::matlines(x$grid, fit, lty = 1, lwd = 2, col = col)
  } else {
    res <- t(x$residuals[samples, , drop = FALSE])
    draw(list(x = x$grid, y = res, type = if (is.null(type)) "b" else type, pch = 16, cex = 0.6, lty = 1, col = col,
              xlab = "location", ylab = "residual", main = sprintf("%s: residuals", x$response)))
    graphics::abline(h = 0, col = "grey50", lty = 2)
  }
  graphics::legend("topright", legend = x$samples[samples], col = col, lty = 1, pch = 16, bty = "n", cex = 0.8)
  invisible(x)
}
