# Interpretation of a "kpl" fit: coefficient and effect surfaces, partial dependence, surface plots
# (Python: fdakpl.results.interpretation). Terms are named as in the formula (`visit.time`,
# `factor(sex)`, `I(pasat/10)`, `my cca` with or without backquotes); Python's names stay inside.

# The term of `fit` that `term` names, of one of `kinds`: its spec entry (label, Python name).
kpl_term <- function(fit, term, what = "term", kinds = "matrix") {
  if (!inherits(fit, "kpl")) input_error("`fit` must be a model fitted by kpl(), not a %s", class(fit)[1L], call = NULL)
  labels <- fit$term_labels
  ok <- labels[fit$kinds[labels] %in% kinds]
  kind_text <- if (identical(kinds, "matrix")) "curves (matrix columns)" else "scalar covariates and factors"
  label <- if (is.character(term) && length(term) == 1L && !is.na(term)) term_label(term, labels) else NA_character_
  if (is.na(label) || !label %in% ok) {
    other <- !is.na(label) && label %in% labels
    input_error("`%s` must be one of the model's inputs that are %s: %s%s", what, kind_text,
                if (length(ok)) paste(ok, collapse = ", ") else "(none)",
                if (!other) "" else if (identical(kinds, "matrix")) {
                  sprintf("; '%s' is a scalar term: see partial_dependence()", label)
                } else {
                  sprintf("; '%s' is %s", label, if (fit$kinds[[label]] == "matrix") "a curve: see coef_surface() and effect_surface()" else "a set of scalar columns (e.g. poly()), which has no single value to set")
                }, call = NULL)
  }
  fit$spec$terms[[label]]
}

as_r <- function(x) if (inherits(x, "python.builtin.object")) reticulate::py_to_r(x) else x

# A labelled 2-d xarray DataArray -> matrix with named dimnames (the coordinates as text) and the
# numeric coordinates as attributes; `dims` renames its two dims (R's names).
labelled_matrix <- function(da, dims = NULL) {
  py_dims <- unlist(as_r(reticulate::py_eval("lambda a: [str(d) for d in a.dims]")(da)))
  values <- as_r(reticulate::py_eval("lambda a: a.values.astype(float)")(da))
  coord <- function(d) as.vector(as_r(reticulate::py_eval("lambda a, d: a[d].values")(da, d)))
  rows <- coord(py_dims[1L])
  cols <- coord(py_dims[2L])
  m <- matrix(as.double(values), length(rows), length(cols))
  if (is.null(dims)) dims <- py_dims
  dimnames(m) <- stats::setNames(list(as.character(rows), as.character(cols)), dims)
  attr(m, "coordinates") <- stats::setNames(list(rows, cols), dims)
  m
}

location_dim <- function(label) paste0(gsub("`", "", label, fixed = TRUE), "_loc")

surface <- function(fit, term, kind) {
  t <- kpl_term(fit, term)
  py <- python_model(fit, sprintf("%s_surface()", if (kind == "coefficient") "coef" else "effect"))
  context <- list(names = names_context(fit$spec, fit$kinds, fit$ncols))
  da <- if (kind == "coefficient") py_call(py$coefficient_surface(t$name), context = context) else
    py_call(py$effect_surface(t$name), context = context)
  m <- labelled_matrix(da, c(location_dim(t$label), location_dim(fit$response)))
  attr(m, "kind") <- kind
  attr(m, "term") <- t$label
  m
}

coef_surface <- function(fit, term) surface(fit, term, "coefficient")

effect_surface <- function(fit, term) surface(fit, term, "effect")

partial_dependence <- function(fit, variable, values = NULL) {
  t <- kpl_term(fit, variable, "variable", kinds = c("numeric", "factor"))
  py <- python_model(fit, "partial_dependence()")
  factor_term <- fit$kinds[[t$label]] == "factor"
  if (!is.null(values)) {
    if (factor_term) {
      lev <- fit$levels[[t$label]]
      v <- if (is.factor(values)) levels(values)[as.integer(values)] else as.character(values)
      bad <- unique(v[is.na(match(v, lev))])
      if (length(bad)) {
        input_error("`values` has levels %s that '%s' was not fitted with (levels: %s)",
                    paste0("'", bad, "'", collapse = ", "), t$label, paste(lev, collapse = ", "), call = NULL)
      }
      values <- as.list(python_levels(lev)[match(v, lev)])
    } else {
      values <- as.list(check_numbers(values, "values"))
    }
  }
  context <- list(names = names_context(fit$spec, fit$kinds, fit$ncols))
  labelled_matrix(py_call(py$partial_dependence(t$name, values), context = context),
                  c(gsub("`", "", t$label, fixed = TRUE), location_dim(fit$response)))
}

plot_surface <- function(fit, term, kind = c("auto", "coefficient", "effect"),
                         col = grDevices::hcl.colors(64, "Blue-Red 3"), nlevels = 8, ...) {
  kind <- match.arg(kind)
  t <- kpl_term(fit, term)
  if (kind == "auto") {
    py <- python_model(fit, "plot_surface()")
    linear <- py_call(reticulate::py_eval(
      "lambda r, t: type(r.kernels.get(t)).__name__ in ('Linear', 'SmoothedLinear')")(py, t$name))
    kind <- if (isTRUE(linear)) "coefficient" else "effect"
  }
  m <- surface(fit, t$label, kind)
  xy <- attr(m, "coordinates")
  zmax <- max(abs(m))
  if (!is.finite(zmax) || zmax == 0) zmax <- 1
  defaults <- list(x = xy[[1L]], y = xy[[2L]], z = unclass(m), col = col, zlim = c(-zmax, zmax),
                   xlab = names(xy)[1L], ylab = names(xy)[2L],
                   main = sprintf("%s surface of %s on %s", kind, t$label, fit$response))
  do.call(graphics::image, utils::modifyList(defaults, list(...)))
  graphics::contour(xy[[1L]], xy[[2L]], unclass(m), nlevels = nlevels, add = TRUE, labcex = 0.7)
  invisible(m)
}
