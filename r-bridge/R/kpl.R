# kpl(): fit, and the S3 methods of class "kpl" (predict() is in predict.R).

formula_string <- function(formula) {
  paste(trimws(deparse(formula, width.cutoff = 500L)), collapse = " ")
}

# Arguments for Python, NULL entries dropped (Python's defaults apply).
python_kwargs <- function(...) {
  args <- list(...)
  args[!vapply(args, is.null, logical(1))]
}

nan_to_na <- function(m) {
  m[is.nan(m)] <- NA
  m
}

# Python name -> R label of the response and every term, for messages.
names_context <- function(spec) {
  parts <- c(list(spec$response), spec$terms)
  stats::setNames(lapply(parts, `[[`, "label"), vapply(parts, `[[`, character(1), "name"))
}

kpl <- function(formula, data, dictionary = NULL, level = NULL, kernel = NULL, lambda = "loo",
                loss = "square", output_matrix = NULL, combine = c("product", "sum"), center = TRUE,
                solver = "auto", interpolate_inputs = FALSE, grid = NULL, subset = NULL, na.action = NULL, ...) {
  cl <- match.call()
  if (missing(data)) input_error("`data` is missing: give a data.frame with matrix columns (or a named list)")
  if (!(is.data.frame(data) || (is.list(data) && !is.object(data)))) {
    input_error("`data` must be a data.frame (matrix columns hold curves, one per row) or a named list, not %s",
                paste(class(data), collapse = "/"))
  }
  if (!is.null(dictionary) && !is_python(dictionary)) dictionary <- check_string(dictionary, "dictionary")
  level <- check_count(level, "level", min = 1, null_ok = TRUE)
  lambda <- check_lambda(lambda)
  if (!is_python(loss)) loss <- check_string(loss, "loss")
  combine <- check_string(combine[1L], "combine", c("product", "sum"))
  center <- check_flag(center, "center")
  interpolate_inputs <- check_flag(interpolate_inputs, "interpolate_inputs")
  solver <- check_string(solver, "solver")
  if (!is.null(output_matrix) && !is_python(output_matrix)) {
    if (is.character(output_matrix)) {
      output_matrix <- check_string(output_matrix, "output_matrix")
    } else if (is.numeric(output_matrix) && length(output_matrix) == 1L && is.null(dim(output_matrix))) {
      output_matrix <- check_numbers(output_matrix, "output_matrix", positive = TRUE, len = 1L)
    } else if (!is.matrix(output_matrix) || !is.numeric(output_matrix) || anyNA(output_matrix)) {
      input_error("`output_matrix` must be a positive number b (B = diag(b^-scale)), a numeric matrix without NA, or NULL")
    }
  }
  na_action <- na_action_name(na.action)
  dots <- check_dots(list(...))
  kern <- check_kernel(kernel)
  subset_rows <- if (is.null(substitute(subset))) NULL else eval(substitute(subset), data, parent.frame())
  spec <- formula_spec(formula, data)
  check_python()
  prepared <- prepare_data(spec, data, "data", subset = subset_rows, na_action = na_action,
                           interpolate = interpolate_inputs)
  response <- spec$response$label
  if (prepared$kinds[[response]] != "matrix") {
    input_error("the response '%s' must be a numeric matrix column (one curve per row), not a %s",
                response, prepared$kinds[[response]])
  }
  # the Python term of an R term: a factor is C(name) (its own kernel on the factor), a matrix column a curve
  py_term <- function(t) if (prepared$kinds[[t$label]] == "factor") paste0("C(", t$name, ")") else t$name
  if (!is.null(kern$kernels)) {
    bad <- setdiff(names(kern$kernels), c(names(spec$terms), "scalars"))
    if (length(bad)) {
      input_error("`kernel` names %s, which %s not a term of the formula (terms: %s; \"scalars\" for the numeric scalar terms together)",
                  paste0("'", bad, "'", collapse = ", "), if (length(bad) > 1L) "are" else "is",
                  paste(names(spec$terms), collapse = ", "))
    }
    numeric <- Filter(function(k) k != "scalars" && !prepared$kinds[[spec$terms[[k]]$label]] %in% c("matrix", "factor"),
                      names(kern$kernels))
    if (length(numeric)) {
      input_error("`kernel` names the numeric scalar term%s %s; numeric scalar terms share one kernel, named \"scalars\" (factors and curves have their own)",
                  if (length(numeric) > 1L) "s" else "", paste0("'", numeric, "'", collapse = ", "))
    }
    py_names <- vapply(names(kern$kernels), function(k) if (k == "scalars") k else py_term(spec$terms[[k]]), character(1))
    names(kern$kernels) <- py_names
  }
  grids <- grids_for_python(grid, spec, prepared)
  terms_py <- vapply(spec$terms, py_term, character(1))
  formula_py <- paste(spec$response$name, "~", paste(terms_py, collapse = " + "))
  kwargs <- c(python_kwargs(dictionary = dictionary, level = level, kernel = kern$kernel, kernels = kern$kernels,
                            lam = lambda, loss = loss, output_matrix = output_matrix, combine = combine,
                            center = center, solver = solver, interpolate_inputs = interpolate_inputs), dots)
  context <- list(names = names_context(spec), labels = prepared$labels, all_labels = prepared$all_labels)
  res <- py_call(do.call(bridge()$fit_from_r, c(list(formula_py, prepared$columns, sample_labels = prepared$labels,
                                                     grids = grids, factor_levels = prepared$levels), kwargs)),
                 context = context)
  out <- py_call(bridge()$results_for_r(res), context = context)
  samples <- unlist(out$samples)
  grid_y <- as.double(out$grid)
  colnames_y <- prepared$colnames[[response]]
  if (is.null(colnames_y)) colnames_y <- location_names(grid_y)
  label <- function(m) {
    m <- nan_to_na(as.matrix(m))
    dimnames(m) <- list(samples, colnames_y)
    m
  }
  y <- prepared$columns[[spec$response$name]]
  dimnames(y) <- list(samples, colnames_y)
  # exact fits: representer coefficients, sample x atom; approximate fits (approx =): primal weights,
  # feature x atom (one row per feature of the map, not per curve)
  coefs <- as.matrix(out$coef)
  coef_labels <- lapply(out$coef_labels, function(x) as.character(unlist(x)))
  if (identical(out$coef_kind, "alpha")) coef_labels[[1L]] <- samples
  dimnames(coefs) <- stats::setNames(coef_labels, unlist(out$coef_dims))
  frame <- prepared$frame
  model <- structure(frame, names = names(frame), row.names = samples, class = "data.frame")
  attr(model, "terms") <- spec$terms_object
  attr(model, "na.action") <- prepared$na_action
  structure(list(
    call = cl,
    formula = formula,
    terms = names(spec$terms),  # the term labels (terms() gives the terms object)
    terms_object = spec$terms_object,
    spec = spec,
    response = response,
    term_labels = names(spec$terms),
    observed = y,
    fitted = label(out$fitted),
    residuals = label(out$residuals),
    coefficients = coefs,
    grid = grid_y,
    colnames = colnames_y,
    lambda = out[["lambda"]],
    edf = out$edf,
    train_mse = out$train_mse,
    mean_function = if (is.null(out$mean_function)) NULL else as.double(out$mean_function),
    n = length(samples),
    samples = samples,
    levels = prepared$level_labels,
    ncols = prepared$ncols,
    kinds = prepared$kinds,
    input_grids = grid,
    interpolate_inputs = interpolate_inputs,
    input_py_grids = grids[setdiff(names(grids), spec$response$name)],
    na.action = prepared$na_action,
    model = model,
    notes = unlist(out$notes),
    python_summary = out$summary,
    py = res
  ), class = "kpl")
}

deleted_note <- function(x) {
  k <- length(x$na.action)
  if (k) sprintf("  (%d observation%s deleted due to missingness)\n", k, if (k > 1L) "s" else "") else ""
}

print.kpl <- function(x, ...) {
  cat("Kernel-based projection learning (fdakpl)\n")
  cat("Call: ", paste(deparse(x$call), collapse = "\n"), "\n", sep = "")
  cat(sprintf("Response '%s': %d curves on %d locations in [%g, %g], %d observed values\n",
              x$response, x$n, length(x$grid), min(x$grid), max(x$grid), sum(!is.na(x$observed))))
  cat(deleted_note(x))
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
    terms = object$term_labels,
    n = object$n,
    na.action = object$na.action,
    locations = length(object$grid),
    observed = sum(obs),
    lambda = object$lambda,
    edf = object$edf,
    # the Python summary's "Training MSE": mean over curves of the mean squared residual over observed points
    mse = mean(rowSums(object$residuals^2, na.rm = TRUE) / rowSums(obs)),
    r_squared = 1 - sum(res^2) / sum(centred[obs]^2),
    python_summary = object$python_summary
  ), class = "summary.kpl")
}

print.summary.kpl <- function(x, ...) {
  cat("Kernel-based projection learning (fdakpl)\n")
  cat("Call: ", paste(deparse(x$call), collapse = "\n"), "\n\n", sep = "")
  cat(sprintf("Response: %s (%d curves, %d locations, %d observed values)\n",
              x$response, x$n, x$locations, x$observed))
  cat(deleted_note(x))
  cat(sprintf("Inputs: %s\n", paste(x$terms, collapse = ", ")))
  cat(sprintf("lambda = %.4g, edf = %.4g\n", x$lambda, x$edf))
  cat(sprintf("Training MSE (mean over curves of the mean squared residual at observed points) = %.4g, R^2 (vs. the mean curve) = %.4f\n\n",
              x$mse, x$r_squared))
  cat("Python summary:\n", x$python_summary, "\n", sep = "")
  invisible(x)
}

# With na.action = na.exclude, fitted values and residuals have NA rows for
# the excluded rows, as lm()'s do.
fitted.kpl <- function(object, ...) stats::naresid(object$na.action, object$fitted)

residuals.kpl <- function(object, ...) stats::naresid(object$na.action, object$residuals)

coef.kpl <- function(object, ...) object$coefficients

nobs.kpl <- function(object, ...) object$n

terms.kpl <- function(x, ...) x$terms_object

formula.kpl <- function(x, ...) x$formula

model.frame.kpl <- function(formula, ...) formula$model
