# From an R data.frame with matrix columns (or a list) to the plain matrices
# and vectors that fdakpl.io.r.dataset_from_columns() takes on the Python side.
# Neither reticulate nor rpy2 converts a data.frame with matrix columns, so
# each column goes separately: matrices as numeric matrices (NA -> NaN),
# numbers as numeric vectors, factors (and characters) as 1-based codes plus
# their levels, logicals as 0/1.

row_count <- function(x) if (is.matrix(x)) nrow(x) else length(x)

automatic_row_names <- function(data) {
  is.data.frame(data) && .row_names_info(data) < 0L
}

# Sample labels: the row names of the first matrix column that has them (refund
# labels DTI's curves "1001_1" so, and they survive subsetting), else the
# data.frame's row names unless automatic, else none ("1".."n" in Python).
sample_labels_of <- function(data, vars) {
  for (v in vars) {
    x <- data[[v]]
    if (is.matrix(x) && !is.null(rownames(x))) return(as.character(rownames(x)))
  }
  if (is.data.frame(data) && !automatic_row_names(data)) {
    return(as.character(rownames(data)))
  }
  NULL
}

# columns(): data -> list(columns, levels, labels, n, kinds, ncols)
#   vars   names to take from data
#   levels named list of known factor levels (from the training data) or NULL
#   ncols  named integer vector of known matrix widths (from the training data)
columns_for_python <- function(data, vars, levels = NULL, ncols = NULL, what = "data") {
  if (!(is.data.frame(data) || (is.list(data) && !is.object(data)))) {
    input_error("`%s` must be a data.frame (matrix columns hold curves, one per row) or a named list, not %s",
                what, paste(class(data), collapse = "/"))
  }
  nms <- names(data)
  if (is.null(nms) || any(!nzchar(nms))) input_error("`%s` must have names for all its columns", what)
  missing <- setdiff(vars, nms)
  if (length(missing)) {
    input_error("the formula names %s, not found in `%s` (its columns: %s)",
                paste0("'", missing, "'", collapse = ", "), what,
                paste(utils::head(nms, 20L), collapse = ", "))
  }
  cols <- list()
  levs <- list()
  kinds <- character()
  widths <- integer()
  for (v in vars) {
    x <- data[[v]]
    if (is.matrix(x) || (is.array(x) && length(dim(x)) == 2L)) {
      raw <- unclass(x)
      if (!(is.numeric(raw) || is.logical(raw))) {
        input_error("column '%s' of `%s` is a %s matrix; curves must be numeric matrices (one curve per row, NA where unobserved)",
                    v, what, typeof(raw))
      }
      m <- matrix(as.double(raw), nrow = nrow(raw), ncol = ncol(raw))
      if (!is.null(ncols) && !is.na(ncols[v]) && ncol(m) != ncols[v]) {
        input_error("column '%s' of `%s` has %d columns but the model was fitted with %d (one per grid location)",
                    v, what, ncol(m), ncols[v])
      }
      cols[[v]] <- m
      kinds[v] <- "matrix"
      widths[v] <- ncol(m)
    } else if (is.factor(x) || is.character(x)) {
      known <- if (!is.null(levels)) levels[[v]] else NULL
      lev <- if (!is.null(known)) known else if (is.factor(x)) levels(x) else sort(unique(x[!is.na(x)]))
      f <- factor(as.character(x), levels = lev)
      new <- unique(as.character(x)[!is.na(x) & is.na(f)])
      if (length(new)) {
        input_error("column '%s' of `%s` has levels %s that the model was not fitted with (levels: %s)",
                    v, what, paste0("'", new, "'", collapse = ", "), paste(lev, collapse = ", "))
      }
      cols[[v]] <- reticulate::np_array(as.double(as.integer(f)))
      levs[[v]] <- lev
      kinds[v] <- "factor"
    } else if (is.numeric(x) || is.logical(x)) {
      if (!is.null(dim(x)) && length(dim(x)) > 2L) input_error("column '%s' of `%s` has %d dims", v, what, length(dim(x)))
      cols[[v]] <- reticulate::np_array(as.double(unclass(x)))
      kinds[v] <- "numeric"
    } else {
      input_error("column '%s' of `%s` is of class %s; use numeric matrices (curves), numbers, factors, characters or logicals",
                  v, what, paste(class(x), collapse = "/"))
    }
  }
  rows <- vapply(vars, function(v) row_count(data[[v]]), integer(1))
  if (length(unique(rows)) > 1L) {
    input_error("mismatched row counts in `%s`: %s; every column needs one row per sample",
                what, paste(sprintf("'%s' has %d", vars, rows), collapse = ", "))
  }
  if (is.data.frame(data) && length(rows) && rows[[1]] != nrow(data)) {
    input_error("mismatched row counts in `%s`: the data.frame has %d rows but its columns %d",
                what, nrow(data), rows[[1]])
  }
  labels <- sample_labels_of(data, vars)
  if (!is.null(labels) && anyDuplicated(labels)) labels <- NULL
  list(columns = cols, levels = levs, labels = labels, n = if (length(rows)) rows[[1]] else 0L,
       kinds = kinds, ncols = widths)
}

# A labelled list of grids for the Python side (NULL entries dropped: Python
# then uses seq(0, 1, length.out = ncol)).
grids_for_python <- function(grid, kinds, ncols) {
  if (is.null(grid)) return(NULL)
  if (!is.list(grid) || is.null(names(grid))) {
    input_error("`grid` must be a named list: the locations of each curve column, e.g. list(cca = seq(0, 1, length.out = 93))")
  }
  out <- list()
  for (v in names(grid)) {
    if (is.na(kinds[v]) || kinds[v] != "matrix") {
      input_error("`grid` names '%s', which is not a matrix (curve) column of the formula", v)
    }
    g <- as.double(grid[[v]])
    if (length(g) != ncols[v]) {
      input_error("`grid$%s` has %d locations but column '%s' has %d columns", v, length(g), v, ncols[v])
    }
    if (anyNA(g) || (length(g) > 1L && any(diff(g) <= 0))) {
      input_error("`grid$%s` must be strictly increasing numbers", v)
    }
    out[[v]] <- reticulate::np_array(g)
  }
  out
}
