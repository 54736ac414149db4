# Interpretation of a "kpl" fit: coefficient and effect surfaces, partial dependence, surface plots
# (Python: fdakpl.interpretation).

check_kpl_term <- function(fit, term, what = "term") {
  if (!inherits(fit, "kpl")) input_error("`fit` must be a model fitted by kpl(), not a %s", class(fit)[1L])
  if (!is.character(term) || length(term) != 1L || !(term %in% fit$terms)) {
    input_error("`%s` must be one of the model's inputs: %s", what, paste(fit$terms, collapse = ", "))
  }
  invisible(TRUE)
}

# A labelled 2-d xarray DataArray -> matrix with named dimnames (the coordinates as text) and the
# numeric coordinates as attributes.
as_r <- function(x) if (inherits(x, "python.builtin.object")) reticulate::py_to_r(x) else x

labelled_matrix <- function(da) {
  dims <- unlist(as_r(reticulate::py_eval("lambda a: [str(d) for d in a.dims]")(da)))
  values <- as_r(reticulate::py_eval("lambda a: a.values.astype(float)")(da))
  coord <- function(d) {
    as.vector(as_r(reticulate::py_eval("lambda a, d: a[d].values")(da, d)))
  }
  rows <- coord(dims[1L])
  cols <- coord(dims[2L])
  m <- matrix(as.double(values), length(rows), length(cols))
  dimnames(m) <- stats::setNames(list(as.character(rows), as.character(cols)), dims)
  attr(m, "coordinates") <- stats::setNames(list(rows, cols), dims)
  m
}

coef_surface <- function(fit, term) {
  check_kpl_term(fit, term)
  m <- labelled_matrix(py_call(fit$py$coefficient_surface(term)))
  attr(m, "kind") <- "coefficient"
  m
}

effect_surface <- function(fit, term) {
  check_kpl_term(fit, term)
  m <- labelled_matrix(py_call(fit$py$effect_surface(term)))
  attr(m, "kind") <- "effect"
  m
}

partial_dependence <- function(fit, variable, values = NULL) {
  if (!inherits(fit, "kpl")) input_error("`fit` must be a model fitted by kpl(), not a %s", class(fit)[1L])
  if (!is.character(variable) || length(variable) != 1L) input_error("`variable` must be one name")
  if (!is.null(values)) values <- if (is.factor(values)) as.character(values) else as.list(values)
  labelled_matrix(py_call(fit$py$partial_dependence(variable, values)))
}

plot_surface <- function(fit, term, kind = c("auto", "coefficient", "effect"),
                         col = grDevices::hcl.colors(64, "Blue-Red 3"), nlevels = 8, ...) {
  kind <- match.arg(kind)
  check_kpl_term(fit, term)
  if (kind == "auto") {
    linear <- py_call(reticulate::py_eval(
      "lambda r, t: type(r.kernels.get(t)).__name__ in ('Linear', 'SmoothedLinear')")(fit$py, term))
    kind <- if (isTRUE(linear)) "coefficient" else "effect"
  }
  m <- if (kind == "coefficient") coef_surface(fit, term) else effect_surface(fit, term)
  xy <- attr(m, "coordinates")
  zmax <- max(abs(m))
  if (!is.finite(zmax) || zmax == 0) zmax <- 1
  graphics::image(xy[[1L]], xy[[2L]], unclass(m), col = col, zlim = c(-zmax, zmax),
                  xlab = names(xy)[1L], ylab = names(xy)[2L],
                  main = sprintf("%s surface of %s on %s", kind, term, fit$response), ...)
  graphics::contour(xy[[1L]], xy[[2L]], unclass(m), nlevels = nlevels, add = TRUE, labcex = 0.7)
  invisible(m)
}
