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

# Python name -> R label of the response and every term, for messages (a term of several scalar
# columns, poly(x, 2), sends x_1, x_2...: they read as its columns).
names_context <- function(spec, kinds = NULL, ncols = NULL) {
  parts <- c(list(spec$response), spec$terms)
  out <- stats::setNames(lapply(parts, `[[`, "label"), vapply(parts, `[[`, character(1), "name"))
  for (p in spec$terms) {
    if (!is.null(kinds) && identical(kinds[[p$label]], "scalars")) {
      k <- ncols[[p$label]]
      out[paste0(p$name, "_", seq_len(k))] <- as.list(sprintf("%s[, %d]", p$label, seq_len(k)))
    }
  }
  out
}

# The Python formula's terms: a curve or a number by its name, a factor as C(name), a term of several
# scalar columns by each column.
python_terms <- function(spec, kinds, ncols) {
  unlist(lapply(spec$terms, function(t) {
    switch(kinds[[t$label]],
      factor = paste0("C(", t$name, ")"),
      subject = paste0("re(", t$name, ")"),
      scalars = paste0(t$name, "_", seq_len(ncols[[t$label]])),
      t$name)
  }), use.names = FALSE)
}

# The calls that evaluate each term on new data (lm()'s predvars), into the spec kept by the fit.
with_predvars <- function(spec, predvars) {
  spec$response$predict_expr <- predvars[[1L]]
  for (i in seq_along(spec$terms)) spec$terms[[i]]$predict_expr <- predvars[[i + 1L]]
  spec
}

# The `...` arguments that need the prepared data: cv against the number of curves, approx.
check_dots_on_data <- function(dots, n, lambda) {
  if (!is.null(dots$cv) && dots$cv > n) {
    input_error("`cv` = %d folds, but the fit has %d curves; use cv <= %d (leave-one-curve-out is lambda = \"loo\", exact and fast)",
                dots$cv, n, n, call = NULL)
  }
  if (inherits(dots$approx, "kpl_approx")) {
    if (identical(lambda, "cv")) {
      input_error("`approx` chooses lambda by leave-one-curve-out or GCV from its statistics: use lambda = \"loo\" (default), \"gcv\", a number or a grid, not \"cv\"",
                  call = NULL)
    }
    dots$approx <- python_approx(dots$approx, n)
  }
  dots
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
  check_level(level, dictionary)
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
  spec <- with_predvars(spec, prepared$predvars)
  dots <- check_dots_on_data(dots, prepared$n, lambda)
  kernels <- kernels_for_python(kern, spec, prepared$kinds)
  g <- grids_for_python(grid, spec, prepared)
  columns <- reverse_columns(prepared$columns, g$reversed, spec)
  formula_py <- paste(spec$response$name, "~", paste(python_terms(spec, prepared$kinds, prepared$ncols), collapse = " + "))
  kwargs <- c(python_kwargs(dictionary = dictionary, level = level, kernels = kernels, lam = lambda, loss = loss,
                            output_matrix = output_matrix, combine = combine, center = center, solver = solver,
                            interpolate_inputs = interpolate_inputs), dots)
  context <- list(names = names_context(spec, prepared$kinds, prepared$ncols), labels = prepared$labels,
                  all_labels = prepared$all_labels, lambda_grid = if (is.character(lambda)) "lam_grid" else "lambda")
  res <- py_call(do.call(bridge()$fit_from_r, c(list(formula_py, columns, sample_labels = prepared$labels,
                                                     grids = g$grids, factor_levels = prepared$levels), kwargs)),
                 context = context)
  out <- py_call(bridge()$results_for_r(res), context = context)
  samples <- unlist(out$samples)
  flip <- response %in% g$reversed
  grid_y <- as.double(out$grid)
  if (flip) grid_y <- rev(grid_y)
  colnames_y <- prepared$colnames[[response]]
  if (is.null(colnames_y)) colnames_y <- location_names(grid_y)
  label <- function(m) {
    m <- nan_to_na(as.matrix(m))
    if (flip) m <- m[, rev(seq_len(ncol(m))), drop = FALSE]
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
  model <- model_frame(prepared, spec)
  mean_function <- if (is.null(out$mean_function)) NULL else as.double(out$mean_function)
  if (flip && !is.null(mean_function)) mean_function <- rev(mean_function)
  structure(list(
    call = cl,
    formula = stats::formula(spec$terms_object),
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
    loss = if (is_python(loss)) "python" else loss,
    mean_function = mean_function,
    n = length(samples),
    samples = samples,
    levels = prepared$level_labels,
    ncols = prepared$ncols,
    kinds = prepared$kinds,
    input_grids = grid,
    interpolate_inputs = interpolate_inputs,
    input_py_grids = g$grids[setdiff(names(g$grids), spec$response$name)],
    reversed = g$reversed,
    na.action = prepared$na_action,
    model = model,
    notes = r_words(unlist(out$notes), context),
    python_summary = r_words(out$summary, context),
    python_summary_full = r_words(out$summary_full, context),
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

summary.kpl <- function(object, diagnostics = c("compact", "full"), ...) {
  diagnostics <- match.arg(diagnostics)
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
    python_summary = if (diagnostics == "full" && !is.null(object$python_summary_full)) object$python_summary_full
                     else object$python_summary
  ), class = "summary.kpl")
}

# The statistician-first summary of the fit (the Python summary's text, in R's words): the model and its tuning,
# the fit with the leave-one-curve-out error against the mean curve's, one row per term, the excess-risk bound in
# two lines (summary(fit, diagnostics = "full") for its constants) and the notes.
print.summary.kpl <- function(x, ...) {
  cat("Call: ", paste(deparse(x$call), collapse = "\n"), "\n", sep = "")
  cat(deleted_note(x))
  cat(x$python_summary, "\n", sep = "")
  invisible(x)
}

# With na.action = na.exclude, fitted values and residuals have NA rows for
# the excluded rows, as lm()'s do.
fitted.kpl <- function(object, ...) stats::naresid(object$na.action, object$fitted)

# Residual types as residuals.lm() names them: for the square loss (unweighted least squares),
# "response", "working", "pearson" and "deviance" residuals are the same curves, as for lm().
residuals.kpl <- function(object, type = c("response", "working", "pearson", "deviance", "partial"), ...) {
  type <- match.arg(type)
  if (type == "partial") {
    input_error(paste0("partial residuals need an additive model; the terms of a KPL fit interact through their ",
                       "kernels: see partial_dependence() and effect_surface() for the part of one term"), call = NULL)
  }
  if (type %in% c("pearson", "deviance") && !identical(object$loss, "square")) {
    input_error("%s residuals are defined here for the square loss; this fit uses loss = \"%s\": use type = \"response\"",
                type, object$loss, call = NULL)
  }
  stats::naresid(object$na.action, object$residuals)
}

coef.kpl <- function(object, ...) object$coefficients

nobs.kpl <- function(object, ...) object$n

# The residual sum of squares over the observed points (square loss), as deviance() of lm().
deviance.kpl <- function(object, ...) {
  if (!identical(object$loss, "square")) {
    input_error("deviance() is the residual sum of squares of a square-loss fit; this fit uses loss = \"%s\"",
                object$loss, call = NULL)
  }
  sum(object$residuals^2, na.rm = TRUE)
}

# The residual standard deviation at observed points, sqrt(RSS / (N - edf)) with N the observed points
# and edf the trace of the smoother, as sigma() of lm() (sqrt(RSS / (n - p))).
sigma.kpl <- function(object, ...) {
  rss <- deviance.kpl(object)
  n_obs <- sum(!is.na(object$observed))
  if (!is.finite(object$edf) || object$edf >= n_obs) {
    input_error("sigma() needs the effective degrees of freedom of the fit, which %s",
                if (is.finite(object$edf)) "leave no residual degree of freedom" else "this solver does not give",
                call = NULL)
  }
  sqrt(rss / (n_obs - object$edf))
}

terms.kpl <- function(x, ...) x$terms_object

formula.kpl <- function(x, ...) x$formula

# The model frame: the evaluated terms of the rows used, with the na.action attribute. With `data`
# (and optionally `subset`, `na.action`), rebuilt from that data, as model.frame() of an lm fit
# rebuilds it: the terms are evaluated as for predict() (poly() and scale() keep the fit's
# coefficients), and the response must be in `data`.
model.frame.kpl <- function(formula, ...) {
  args <- match.call(expand.dots = FALSE)$...
  if (!length(args)) return(formula$model)
  unknown <- setdiff(names(args), c("data", "subset", "na.action"))
  if (is.null(names(args)) || length(unknown)) {
    input_error("model.frame() of a kpl fit takes data =, subset = and na.action =, not %s",
                paste(if (is.null(names(args))) "unnamed arguments" else paste0("`", unknown, "`"), collapse = ", "),
                call = NULL)
  }
  env <- parent.frame()
  data <- if (is.null(args$data)) input_error("give `data` to rebuild the model frame", call = NULL) else eval(args$data, env)
  subset <- if (is.null(args$subset)) NULL else eval(args$subset, data, env)
  na_action <- na_action_name(if (is.null(args$na.action)) NULL else eval(args$na.action, env))
  fit <- formula
  prepared <- prepare_data(fit$spec, data, "data", fitted = list(kinds = fit$kinds, levels = fit$levels, ncols = fit$ncols),
                           subset = subset, na_action = na_action, interpolate = isTRUE(fit$interpolate_inputs),
                           with_response = TRUE)
  model_frame(prepared, fit$spec)
}

# The model frame of prepared data (prepare_data()).
model_frame <- function(prepared, spec) {
  frame <- prepared$frame
  model <- structure(frame, names = names(frame), row.names = prepared$labels, class = "data.frame")
  attr(model, "terms") <- spec$terms_object
  attr(model, "na.action") <- prepared$na_action
  model
}
