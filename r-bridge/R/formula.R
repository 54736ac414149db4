# R's formula language on the R side. Each term of the formula is an R
# expression evaluated in R on the data (so `factor(x)`, `I(pasat^2)`,
# `log(y)`, `visit.time`, `.` and non-syntactic names all work as in lm());
# Python receives one column per term, under a Python-safe name, and a formula
# made of those names: a matrix term is a curve input, a factor (or character)
# term goes in as C(name), a numeric term as a scalar covariate.

python_keywords <- c("False", "None", "True", "and", "as", "assert", "async", "await", "break", "class",
                     "continue", "def", "del", "elif", "else", "except", "finally", "for", "from", "global",
                     "if", "import", "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return",
                     "try", "while", "with", "yield", "C", "I", "Q", "np", "sample")

# A Python identifier for an R term label, unique among `used`. It must not
# end in "_loc" (the location dims of curves are named so).
python_name <- function(label, used = character()) {
  name <- label
  ok <- grepl("^[A-Za-z][A-Za-z0-9_]*$", name) && !(name %in% python_keywords) && !grepl("_loc$", name)
  if (!ok) {
    name <- iconv(name, to = "ASCII//TRANSLIT", sub = "_")
    if (is.na(name)) name <- "term"
    name <- gsub("[^A-Za-z0-9]+", "_", name)
    name <- gsub("^_+|_+$", "", name)
    if (!nzchar(name) || !grepl("^[A-Za-z]", name)) name <- paste0("v_", name)
    if (name %in% python_keywords || grepl("_loc$", name)) name <- paste0(name, "_")
  }
  base <- name
  k <- 1L
  while (name %in% used) {
    k <- k + 1L
    name <- paste0(base, "_", k)
  }
  name
}

# The structure of a formula: the response and the terms (R expressions,
# their labels and their Python names). `.` is expanded with the names of
# `data`; what KPL cannot mean is refused in R's words.
formula_spec <- function(formula, data) {
  if (!inherits(formula, "formula") || length(formula) != 3L) {
    input_error("`formula` must be a two-sided formula such as rcst ~ cca + sex, not %s",
                paste(deparse(formula), collapse = " "))
  }
  tt <- tryCatch(stats::terms(formula, data = data), error = function(e) {
    input_error("the formula %s cannot be read: %s", formula_string(formula), conditionMessage(e))
  })
  if (!is.null(attr(tt, "offset"))) {
    input_error("offset() terms are not supported: KPL predicts whole curves; subtract the offset from the response first")
  }
  if (attr(tt, "intercept") == 0L) {
    input_error(paste0("KPL has no intercept to remove with '- 1' or '+ 0': the response curves are centred on ",
                       "their mean curve unless center = FALSE; drop '- 1' (use center = FALSE to fit without centring)"))
  }
  labels <- attr(tt, "term.labels")
  order <- attr(tt, "order")
  if (any(order > 1L)) {
    input_error(paste0("interaction terms (%s) are not supported: terms already interact through the product of their ",
                       "kernels (combine = \"product\"); for a product of scalars, add a column I(a * b)"),
                paste(labels[order > 1L], collapse = ", "))
  }
  if (!length(labels)) input_error("the formula %s has no input term", formula_string(formula))
  response <- formula[[2L]]
  used <- character()
  response_name <- python_name(deparse1(response), used)
  used <- c(used, response_name)
  terms <- lapply(labels, function(label) {
    expr <- str2lang(label)
    if (is.call(expr) && identical(expr[[1L]], as.name("C"))) {
      expr <- call("factor", expr[[2L]])  # C(x): Python's (patsy's) spelling of factor(x)
    }
    inner <- subject_term(expr, label)
    if (!is.null(inner)) {  # re(ID) or pffr's s(ID, bs = "re"): a subject effect on the labels ID
      name <- python_name(deparse1(inner), used)
      used <<- c(used, name)
      return(list(expr = inner, label = label, name = name, subject = TRUE))
    }
    name <- python_name(label, used)
    used <<- c(used, name)
    list(expr = expr, label = label, name = name)
  })
  names(terms) <- labels
  list(response = list(expr = response, label = deparse1(response), name = response_name),
       terms = terms, terms_object = tt, env = environment(formula))
}

# The subject labels of a subject-effect term (a functional random intercept): re(ID), or pffr's
# s(ID, bs = "re"); NULL for any other term. Other s() smooths are refused: KPL has no smooth terms.
subject_term <- function(expr, label) {
  if (!is.call(expr)) return(NULL)
  head <- expr[[1L]]
  if (identical(head, as.name("re"))) {
    if (length(expr) != 2L || !is.null(names(expr)) && any(nzchar(names(expr)[-1L]))) {
      input_error("the term %s: re() takes one argument, the subject labels, e.g. re(ID)", label)
    }
    return(expr[[2L]])
  }
  if (identical(head, as.name("s"))) {
    args <- as.list(expr)[-1L]
    nms <- if (is.null(names(args))) rep("", length(args)) else names(args)
    bs <- if ("bs" %in% nms) args[[which(nms == "bs")]] else NULL
    if (identical(bs, "re") && sum(!nzchar(nms)) == 1L && all(nms[nzchar(nms)] == "bs")) {
      return(args[[which(!nzchar(nms))]])
    }
    input_error(paste0("the term %s: KPL has no smooth terms s(); a functional random intercept (subject effect) ",
                       "is s(ID, bs = \"re\") or re(ID), and other inputs enter by their names (curves, numbers, ",
                       "factors)"), label)
  }
  NULL
}

# Evaluate one term (or the response) on `data`, in the formula's environment.
eval_term <- function(term, data, env, what) {
  value <- tryCatch(eval(term$expr, data, env), error = function(e) {
    input_error("cannot evaluate the term %s on `%s`: %s", term$label, what, conditionMessage(e))
  })
  value
}

# The kind of a term's value: "matrix" (a curve), "scalars" (several scalar
# columns: poly(x, 2), splines::ns(x, 3)), "factor" or "numeric". A matrix
# with one column (scale(x), poly(x, 1)) is a number per row, as in lm().
term_kind <- function(value, label, what, response = FALSE) {
  if (is.matrix(value) || (is.array(value) && length(dim(value)) == 2L)) {
    raw <- unclass(value)
    if (!(is.numeric(raw) || is.logical(raw))) {
      input_error("column '%s' of `%s` is a %s matrix; curves must be numeric matrices (one curve per row, NA where unobserved)",
                  label, what, typeof(raw))
    }
    if (response) return("matrix")
    if (ncol(value) == 1L) return("numeric")
    if (inherits(value, c("poly", "basis"))) return("scalars")
    return("matrix")
  }
  if (is.array(value) && length(dim(value)) > 2L) {
    input_error("column '%s' of `%s` is an array with %d dims; curves are matrices (one curve per row)",
                label, what, length(dim(value)))
  }
  if (is.factor(value) || is.character(value)) return("factor")
  if (is.numeric(value) || is.logical(value)) {
    if (inherits(value, c("POSIXt", "Date", "difftime"))) {
      input_error("column '%s' of `%s` is of class %s; convert it to numbers first, e.g. as.numeric(%s)",
                  label, what, class(value)[1L], label)
    }
    return("numeric")
  }
  input_error("column '%s' of `%s` is of class %s; use numeric matrices (curves), numbers, factors, characters or logicals",
              label, what, paste(class(value), collapse = "/"))
}

kind_words <- function(kind) {
  c(matrix = "curve (a matrix column)", scalars = "set of scalar columns", factor = "factor",
    numeric = "number", subject = "subject labels")[[kind]]
}

# Levels of a factor term, as R has them: addNA()'s level stays NA here (python_levels() labels it for
# Python).
factor_levels <- function(value) {
  if (is.factor(value)) levels(value) else sort(unique(value[!is.na(value)]))
}

# 1-based codes of `value` among `lev`; NA for a missing value (an NA level matches R's NA).
factor_codes <- function(value, lev) {
  x <- if (is.factor(value)) levels(value)[as.integer(value)] else as.character(value)
  match(x, lev)
}
