# kpl_kernel() and kpl_approx(): R descriptions of kernels and kernel approximations, made into
# Python objects by kpl() (a Gaussian or Laplace kernel without sigma takes its width from the data).

kernel_types <- c("gaussian", "laplace", "linear", "integral_gaussian", "categorical", "penalized_linear")

# sigma: one positive finite number, or NULL (from the data).
check_sigma <- function(sigma, type) {
  if (is.null(sigma)) return(NULL)
  if (!is.numeric(sigma) || length(sigma) != 1L || is.na(sigma) || !is.finite(sigma) || sigma <= 0 ||
      !is.null(dim(sigma))) {
    input_error("`sigma` of kpl_kernel(\"%s\") must be one positive number (the width), or NULL to take it from the data; not %s",
                type, deparse1(sigma), call = NULL)
  }
  as.double(sigma)
}

kpl_kernel <- function(type = c("gaussian", "laplace", "linear", "integral_gaussian", "categorical",
                                "penalized_linear"), sigma = NULL, ...) {
  type <- check_string(type[1L], "type", kernel_types)
  extra <- list(...)
  if (type == "penalized_linear") return(penalized_linear(sigma, extra))
  if (length(extra)) {
    input_error("kpl_kernel(\"%s\") %s, not %s", type,
                if (type == "linear") "takes no parameter" else "takes `sigma` (the width)",
                paste0("`", names(extra), "`", collapse = ", "), call = NULL)
  }
  if (type == "linear" && !is.null(sigma)) input_error("kpl_kernel(\"linear\") takes no parameter, not `sigma`", call = NULL)
  sigma <- check_sigma(sigma, type)
  if (type == "integral_gaussian" && is.null(sigma)) {
    input_error("kpl_kernel(\"integral_gaussian\") needs `sigma` (the scale of the pointwise distances), e.g. sigma = 1",
                call = NULL)
  }
  structure(list(type = type, sigma = sigma), class = "kpl_kernel")
}

# kpl_kernel("penalized_linear", order =, null_weight =): the linear kernel whose coefficient function is
# penalised by its roughness (Python's fdakpl.PenalizedLinear); its parameters are checked here, in R.
penalized_linear <- function(sigma, extra) {
  allowed <- c("order", "null_weight")
  given <- names(extra)
  if (!is.null(sigma) || (length(extra) && (is.null(given) || any(!nzchar(given)) || any(!given %in% allowed)))) {
    names_given <- if (is.null(given)) rep("", length(extra)) else given
    bad <- names_given[!names_given %in% allowed]
    other <- c(if (!is.null(sigma)) "`sigma`", ifelse(nzchar(bad), paste0("`", bad, "`"), "an unnamed argument"))
    input_error("kpl_kernel(\"penalized_linear\") takes `order` (1, 2 or 3) and `null_weight` (a number >= 1), not %s",
                paste(other, collapse = ", "), call = NULL)
  }
  order <- if (is.null(extra$order)) 2L else check_count(extra$order, "order", min = 1)
  if (order > 3L) input_error("`order` of kpl_kernel(\"penalized_linear\") must be 1, 2 or 3, not %d", order, call = NULL)
  null_weight <- if (is.null(extra$null_weight)) 1e4 else check_numbers(extra$null_weight, "null_weight", len = 1L)
  if (null_weight < 1) {
    input_error("`null_weight` of kpl_kernel(\"penalized_linear\") must be a number >= 1 (how much less the polynomials of degree < order are penalised), not %s",
                deparse1(null_weight), call = NULL)
  }
  structure(list(type = "penalized_linear", sigma = NULL, order = order, null_weight = null_weight),
            class = "kpl_kernel")
}

print.kpl_kernel <- function(x, ...) {
  if (x$type == "penalized_linear") {
    cat(sprintf("Penalized linear kernel: roughness of order %d penalised, polynomials of degree < %d %g times less\n",
                x$order, x$order, x$null_weight))
    return(invisible(x))
  }
  name <- c(gaussian = "Gaussian", laplace = "Laplace", linear = "Linear", integral_gaussian = "Integral Gaussian")
  width <- if (x$type == "linear") "" else if (!is.null(x$sigma)) sprintf(", sigma = %g", x$sigma) else
    if (x$type == "gaussian") ", width from the data (median heuristic, tuned with lambda)" else
      ", width from the data (median heuristic)"
  cat(sprintf("%s kernel%s\n", name[[x$type]], width))
  invisible(x)
}

# The Python kernel of a "kpl_kernel": NULL for a Gaussian kernel without sigma (Python's default),
# "laplace" for a Laplace kernel without sigma (the bridge gives it the term's median-heuristic width).
python_kernel <- function(k) {
  if (is_python(k)) return(k)
  if (k$type == "linear") return(fdakpl_python("kernels")$Linear())
  if (k$type == "penalized_linear") {
    return(py_call(fdakpl_python("roughness_kernels")$PenalizedLinear(order = k$order, null_weight = k$null_weight)))
  }
  if (is.null(k$sigma)) return(if (k$type %in% c("gaussian", "categorical")) NULL else k$type)
  if (k$type == "categorical") return(py_call(fdakpl_python("factor_kernels")$Categorical(k$sigma)))
  cls <- c(gaussian = "Gaussian", laplace = "Laplace", integral_gaussian = "IntegralGaussian")[[k$type]]
  py_call(fdakpl_python("kernels")[[cls]](k$sigma))
}

kpl_approx <- function(type = c("nystroem", "random_features"), n_components = NULL,
                       landmarks = c("uniform", "kmeans"), random_state = 0L) {
  type <- check_string(type[1L], "type", c("nystroem", "random_features"))
  if (type == "random_features" && !missing(landmarks)) {
    input_error("`landmarks` is for type = \"nystroem\"; random features draw frequencies, not landmarks", call = NULL)
  }
  n_components <- check_count(n_components, "n_components", min = 1, null_ok = TRUE)
  landmarks <- check_string(landmarks[1L], "landmarks", c("uniform", "kmeans"))
  random_state <- check_count(random_state, "random_state", null_ok = TRUE)
  structure(list(type = type, n_components = n_components, landmarks = landmarks, random_state = random_state),
            class = "kpl_approx")
}

print.kpl_approx <- function(x, ...) {
  n <- if (is.null(x$n_components)) "min(300, number of curves)" else x$n_components
  if (x$type == "nystroem") {
    cat(sprintf("Nystroem approximation of the input kernel: %s landmarks (%s)\n", n, x$landmarks))
  } else {
    cat(sprintf("Random Fourier features of the (Gaussian) input kernel: %s features\n", n))
  }
  invisible(x)
}

# The Python feature map of a "kpl_approx" for a fit on `n` curves (Nystroem: at most n landmarks).
python_approx <- function(a, n) {
  features <- fdakpl_python("solvers.features")
  k <- if (is.null(a$n_components)) as.integer(if (a$type == "nystroem") min(300L, n) else 300L) else a$n_components
  if (a$type == "nystroem") {
    if (k > n) {
      input_error("kpl_approx(\"nystroem\", n_components = %d): at most one landmark per curve, and the fit has %d curves; use n_components <= %d",
                  k, n, n, call = NULL)
    }
    return(py_call(features$Nystroem(n_components = k, landmarks = a$landmarks, random_state = a$random_state)))
  }
  py_call(features$RandomFourierFeatures(n_components = k, random_state = a$random_state))
}
