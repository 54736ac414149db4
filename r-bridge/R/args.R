# Arguments are checked in R before they cross to Python: R's NA would reach
# Python as True, R's numbers are doubles where Python wants integers, and a
# length-1 vector is a scalar where Python wants a list.

is_python <- function(x) inherits(x, "python.builtin.object")

check_flag <- function(x, name) {
  if (!is.logical(x) || length(x) != 1L || is.na(x)) {
    input_error("`%s` must be TRUE or FALSE, not %s", name, deparse1(x), call = NULL)
  }
  x
}

check_string <- function(x, name, choices = NULL, null_ok = FALSE) {
  if (is.null(x) && null_ok) return(NULL)
  if (!is.character(x) || length(x) != 1L || is.na(x) || !nzchar(x)) {
    input_error("`%s` must be one string%s, not %s", name,
                if (is.null(choices)) "" else paste0(": ", paste0("\"", choices, "\"", collapse = ", ")),
                deparse1(x), call = NULL)
  }
  if (!is.null(choices) && !x %in% choices) {
    input_error("`%s` must be one of %s, not \"%s\"", name, paste0("\"", choices, "\"", collapse = ", "), x, call = NULL)
  }
  x
}

# A whole number (R double or integer) as an R integer, which reticulate
# sends as a Python int.
check_count <- function(x, name, min = -Inf, null_ok = FALSE) {
  if (is.null(x) && null_ok) return(NULL)
  if (!is.numeric(x) || length(x) != 1L || is.na(x) || !is.finite(x) || x != round(x) || x < min ||
      abs(x) > .Machine$integer.max) {
    input_error("`%s` must be a whole number%s, not %s", name,
                if (is.finite(min)) sprintf(" >= %d", as.integer(min)) else "", deparse1(x), call = NULL)
  }
  as.integer(x)
}

check_numbers <- function(x, name, positive = FALSE, len = NULL) {
  if (!is.numeric(x) || !length(x) || anyNA(x) || any(!is.finite(x)) || (positive && any(x <= 0)) ||
      (!is.null(len) && length(x) != len)) {
    what <- paste(c(if (!is.null(len)) (if (len == 1L) "one" else as.character(len)), if (positive) "positive",
                    if (is.null(len) || len > 1L) "finite numbers" else "finite number"), collapse = " ")
    input_error("`%s` must be %s, not %s", name, what, deparse1(x), call = NULL)
  }
  as.double(x)
}

# lambda: "gcv", "loo", "cv", one positive number, or a grid of positive numbers.
check_lambda <- function(lambda) {
  if (is.character(lambda)) {
    if (length(lambda) != 1L || is.na(lambda) || !lambda %in% c("gcv", "loo", "cv")) {
      input_error("`lambda` must be \"gcv\", \"loo\" or \"cv\" (chosen from the data), or positive numbers; not %s",
                  deparse1(lambda), call = NULL)
    }
    return(lambda)
  }
  if (is_python(lambda)) return(lambda)
  if (!is.numeric(lambda) || !length(lambda) || anyNA(lambda) || any(!is.finite(lambda)) || any(lambda <= 0)) {
    input_error("`lambda` must be \"gcv\", \"loo\" or \"cv\" (chosen from the data), or positive numbers; not %s",
                deparse1(lambda), call = NULL)
  }
  values <- as.double(lambda)
  if (length(values) > 1L) reticulate::np_array(values) else values
}

# kernel: NULL, a name ("gaussian"...), a kernel made by kpl_kernel() (or a Python kernel), or a
# named list of those, one per term. Returns list(kernel =, kernels =) of "kpl_kernel" objects.
check_kernel <- function(kernel) {
  one <- function(k, name) {
    if (is_python(k) || inherits(k, "kpl_kernel")) return(k)
    if (is.character(k) && length(k) == 1L && !is.na(k) && k %in% kernel_types) return(kpl_kernel(k))
    input_error("`%s` must be a kernel name (%s) or kpl_kernel(...), not %s",
                name, paste0("\"", kernel_types, "\"", collapse = ", "), deparse1(k), call = NULL)
  }
  if (is.null(kernel)) return(list(kernel = NULL, kernels = NULL))
  if (is.list(kernel) && !is_python(kernel) && !inherits(kernel, "kpl_kernel")) {
    if (is.null(names(kernel)) || any(!nzchar(names(kernel)))) {
      input_error("`kernel` as a list needs names: one kernel per term, e.g. list(cca = kpl_kernel(\"gaussian\"))", call = NULL)
    }
    return(list(kernel = NULL, kernels = Map(one, kernel, paste0("kernel$", names(kernel)))))
  }
  list(kernel = one(kernel, "kernel"), kernels = NULL)
}

# The kernels for Python's kernels= (by Python name: curves by their name, a factor term as C(name) with its
# own kernel, the numeric scalar terms together under "scalars"): a Gaussian (or categorical) kernel without sigma
# is left out (the default: median-heuristic width, tuned with lambda), a Laplace kernel without sigma goes as
# "laplace" (its width: the median heuristic of the term). NULL when nothing is given.
kernels_for_python <- function(kern, spec, kinds) {
  if (is.null(kern$kernel) && is.null(kern$kernels)) return(NULL)
  labels <- names(spec$terms)
  curves <- labels[kinds[labels] == "matrix"]
  factors <- labels[kinds[labels] == "factor"]
  numeric <- labels[!kinds[labels] %in% c("matrix", "factor", "subject")]
  has_scalars <- length(numeric) > 0L
  keys <- c(curves, factors, if (has_scalars) "scalars")
  given <- if (!is.null(kern$kernel)) stats::setNames(rep(list(kern$kernel), length(keys)), keys) else {
    found <- vapply(names(kern$kernels), function(k) {
      if (k == "scalars") return(if (has_scalars) "scalars" else NA_character_)
      term_label(k, labels)
    }, character(1))
    scalar_named <- !is.na(found) & found %in% numeric
    if (any(scalar_named)) {
      input_error("`kernel` names the numeric scalar term%s %s: numeric scalar terms share one kernel, named \"scalars\" (factors and curves have their own), e.g. kernel = list(scalars = kpl_kernel(\"gaussian\", sigma = 2))",
                  if (sum(scalar_named) > 1L) "s" else "", paste0("'", found[scalar_named], "'", collapse = ", "),
                  call = NULL)
    }
    if (anyNA(found)) {
      bad <- names(kern$kernels)[is.na(found)]
      input_error("`kernel` names %s, which %s not a term of the formula (curves and factors: %s%s)",
                  paste0("'", bad, "'", collapse = ", "), if (length(bad) > 1L) "are" else "is",
                  paste(c(curves, factors), collapse = ", "),
                  if (has_scalars) "; \"scalars\" for the numeric scalar terms" else "; the formula has no numeric scalar term",
                  call = NULL)
    }
    stats::setNames(kern$kernels, found)
  }
  out <- list()
  for (k in names(given)) {
    value <- python_kernel(given[[k]])
    if (is.null(value)) next
    name <- if (k == "scalars") "scalars" else if (k %in% factors) paste0("C(", spec$terms[[k]]$name, ")") else
      spec$terms[[k]]$name
    out[[name]] <- value
  }
  if (length(out)) out else NULL
}


# Python's integer arguments (sent as int; R numbers are doubles).
integer_args <- c("cv", "random_state", "n_jobs", "level", "max_iter", "n_atoms", "n_components", "rank", "n_freqs")

# The arguments that go through `...` of kpl() to Python, checked.
check_dots <- function(dots) {
  allowed <- c("cv", "param_grid", "sigma_relative", "random_state", "n_jobs", "progress", "domain", "approx",
               "lam_grid", "width_grid", "b_grid", "new_subjects", "integration")
  nms <- names(dots)
  if (length(dots) && (is.null(nms) || any(!nzchar(nms)))) {
    input_error("arguments in `...` of kpl() must be named", call = NULL)
  }
  if ("weights" %in% nms) {
    input_error("`weights` is not supported yet: every curve counts once (observed points of a curve are weighted by quadrature)",
                call = NULL)
  }
  reserved <- intersect(nms, c("lam", "kernels", "data", "formula", "columns", "sample_labels", "grids",
                               "factor_levels", "kernel_names"))
  if (length(reserved)) {
    input_error("argument%s %s cannot go through `...`; use lambda = for the ridge parameter, kernel = for kernels, grid = for grids",
                if (length(reserved) > 1L) "s" else "", paste0("'", reserved, "'", collapse = ", "), call = NULL)
  }
  unknown <- setdiff(nms, allowed)
  if (length(unknown)) {
    input_error("unknown argument%s %s to kpl(); it also takes %s", if (length(unknown) > 1L) "s" else "",
                paste0("'", unknown, "'", collapse = ", "), paste(allowed, collapse = ", "), call = NULL)
  }
  out <- list()
  for (nm in nms) {
    x <- dots[[nm]]
    out[nm] <- list(switch(nm,
      cv = check_count(x, "cv", min = 2),
      random_state = check_count(x, "random_state", null_ok = TRUE),
      n_jobs = check_count(x, "n_jobs"),
      progress = check_flag(x, "progress"),
      sigma_relative = check_flag(x, "sigma_relative"),
      new_subjects = check_flag(x, "new_subjects"),
      integration = check_string(x, "integration", c("auto", "interpolate", "quadrature", "plugin")),
      domain = as.list(check_numbers(x, "domain", len = 2L)),
      lam_grid = reticulate::np_array(check_numbers(x, "lam_grid", positive = TRUE)),
      width_grid = check_grid_arg(x, "width_grid"),
      b_grid = check_grid_arg(x, "b_grid"),
      param_grid = check_param_grid(x),
      approx = if (is.null(x) || is_python(x) || inherits(x, "kpl_approx")) x else
        kpl_approx(check_string(x, "approx", c("nystroem", "random_features")))
    ))
  }
  out
}

# param_grid: a named list of candidate values per parameter; each becomes a
# Python list (a length-1 vector too), whole numbers as integers where Python
# wants them.
check_param_grid <- function(grid) {
  if (is.null(grid)) return(NULL)
  if (!is.list(grid) || is.null(names(grid)) || any(!nzchar(names(grid)))) {
    input_error("`param_grid` must be a named list of candidate values, e.g. list(dictionary = c(\"fourier\", \"bspline\"))",
                call = NULL)
  }
  for (nm in intersect(names(grid), c("lambda", "lam", "lam_grid"))) {
    input_error("`param_grid$%s`: lambda is not a parameter of the grid; choose it with lambda = \"cv\" and give its candidates as lam_grid = c(...) (the other parameters of param_grid are crossed with them)",
                nm, call = NULL)
  }
  out <- list()
  for (nm in names(grid)) {
    v <- grid[[nm]]
    if (!length(v) || (is.atomic(v) && anyNA(v))) {
      input_error("`param_grid$%s` must be candidate values without NA, not %s", nm, deparse1(v), call = NULL)
    }
    if (is.atomic(v)) {
      base <- sub("^.*__", "", nm)
      if (base %in% integer_args && is.numeric(v)) v <- vapply(v, check_count, integer(1), paste0("param_grid$", nm))
      v <- as.list(v)
    }
    out[[nm]] <- v
  }
  out
}

# width_grid / b_grid: "auto" (the default grid) or positive numbers (sent as a Python list).
check_grid_arg <- function(x, name) {
  if (is.character(x)) return(check_string(x, name, "auto"))
  as.list(check_numbers(x, name, positive = TRUE))
}

# level is the number of levels of a wavelet dictionary ("db3", "sym4", ...): refused with another family.
check_level <- function(level, dictionary) {
  families <- c("fourier", "bspline", "rff", "fpca", "learned")
  if (!is.null(level) && is.character(dictionary) && tolower(dictionary) %in% families) {
    input_error("`level` is the number of decomposition levels of a wavelet dictionary (\"db3\", \"sym4\", ...); the \"%s\" dictionary has none: drop `level`",
                dictionary, call = NULL)
  }
  invisible(TRUE)
}
