# From R data to the plain matrices and vectors that
# fdakpl.r.bridge.dataset_from_columns() takes on the Python side. Each term of
# the formula is evaluated in R (formula.R) and goes as one column: curves as
# numeric matrices (NA -> NaN), numbers as numeric vectors, factors (and
# characters) as 1-based codes plus their levels, logicals as 0/1. Rows are
# labelled by the data's own row names, so that fitted values, predictions and
# residuals can be merged with the data by row name.

row_count <- function(x) if (!is.null(dim(x))) dim(x)[1L] else length(x)

# Row labels: a data.frame's row names (always unique, as R makes them);
# for a list, the row names of its first matrix with complete row names
# (made unique), else "1".."n".
row_labels <- function(data, values, n) {
  if (is.data.frame(data)) return(as.character(row.names(data)))
  for (v in values) {
    rn <- if (is.matrix(v)) rownames(v) else NULL
    if (!is.null(rn) && !anyNA(rn) && length(rn) == n) return(make.unique(as.character(rn)))
  }
  as.character(seq_len(n))
}

# "17, 21" or, where the labels are not the row numbers, "17 (2017_1), 21 (2021_1)"; the first 8.
describe_rows <- function(idx, labels) {
  shown <- utils::head(idx, 8L)
  txt <- ifelse(labels[shown] == as.character(shown), as.character(shown),
                sprintf("%d (%s)", shown, labels[shown]))
  more <- if (length(idx) > 8L) sprintf(" and %d more", length(idx) - 8L) else ""
  paste0(paste(txt, collapse = ", "), more)
}

na_action_name <- function(na.action) {
  if (is.null(na.action)) na.action <- getOption("na.action", "na.omit")
  if (is.character(na.action) && length(na.action) == 1L && !is.na(na.action)) {
    name <- na.action
  } else if (is.function(na.action)) {
    known <- list(na.omit = stats::na.omit, na.exclude = stats::na.exclude, na.fail = stats::na.fail,
                  na.pass = stats::na.pass)
    hit <- vapply(known, identical, logical(1), na.action)
    name <- if (any(hit)) names(known)[hit][1L] else "other"
  } else {
    name <- "other"
  }
  if (!name %in% c("na.omit", "na.exclude", "na.fail", "na.pass")) {
    input_error("`na.action` must be na.omit, na.exclude, na.fail or na.pass")
  }
  name
}

# Evaluate the response and terms of `spec` on `data`, keep the rows of
# `subset`, handle missing values by `na_action`, and convert for Python.
#   fitted: NULL when fitting; when predicting, the fit's term information
#           (kinds, levels, ncols) that new data must match.
prepare_data <- function(spec, data, what = "data", fitted = NULL, subset = NULL, na_action = "na.omit",
                         interpolate = FALSE) {
  if (!(is.data.frame(data) || (is.list(data) && !is.object(data)))) {
    input_error("`%s` must be a data.frame (matrix columns hold curves, one per row) or a named list, not %s",
                what, paste(class(data), collapse = "/"))
  }
  nms <- names(data)
  if (length(data) && (is.null(nms) || any(is.na(nms) | !nzchar(nms)))) {
    input_error("`%s` must have names for all its columns", what)
  }
  dup <- unique(nms[duplicated(nms)])
  if (length(dup)) {
    input_error("`%s` has several columns named %s; make the names unique, e.g. names(%s) <- make.unique(names(%s))",
                what, paste0("'", dup, "'", collapse = ", "), what, what)
  }
  with_response <- is.null(fitted)
  parts <- c(if (with_response) list(spec$response), spec$terms)
  missing_vars <- setdiff(unlist(lapply(parts, function(p) all.vars(p$expr))), nms)
  missing_vars <- missing_vars[!vapply(missing_vars, exists, logical(1), envir = spec$env)]
  if (length(missing_vars)) {
    input_error("the formula names %s, not found in `%s` (its columns: %s)",
                paste0("'", missing_vars, "'", collapse = ", "), what, paste(utils::head(nms, 20L), collapse = ", "))
  }
  values <- lapply(parts, eval_term, data = data, env = spec$env, what = what)
  labels_of <- vapply(parts, `[[`, character(1), "label")
  names(values) <- labels_of
  rows <- vapply(values, row_count, integer(1))
  n <- if (is.data.frame(data)) nrow(data) else if (length(rows)) rows[[1L]] else 0L
  if (any(rows != n)) {
    bad <- rows != n
    input_error("mismatched row counts in `%s`: %s; every column needs one row per sample%s",
                what, paste(sprintf("'%s' has %d", labels_of, rows), collapse = ", "),
                if (is.data.frame(data)) sprintf(" (the data.frame has %d rows)", n) else "")
  }
  labels <- row_labels(data, values, n)
  raw <- values
  kinds <- vapply(seq_along(parts), function(i) term_kind(values[[i]], labels_of[i], what), character(1))
  names(kinds) <- labels_of
  if (!is.null(fitted)) {
    for (lab in labels_of) {
      if (kinds[[lab]] != fitted$kinds[[lab]] &&
          !(fitted$kinds[[lab]] == "factor" && kinds[[lab]] %in% c("factor", "numeric") && !is.matrix(values[[lab]]))) {
        input_error("the term %s is a %s in `%s` but was a %s when the model was fitted",
                    lab, kinds[[lab]], what, fitted$kinds[[lab]])
      }
    }
  }
  # subset, as in lm(): logical or row numbers, evaluated in the data
  keep <- seq_len(n)
  if (!is.null(subset)) {
    if (is.logical(subset)) {
      if (length(subset) != n) input_error("`subset` has %d values but `%s` has %d rows", length(subset), what, n)
      keep <- which(subset & !is.na(subset))
    } else if (is.numeric(subset)) {
      if (anyNA(subset) || any(subset < 1 | subset > n) || any(subset != round(subset))) {
        input_error("`subset` must be row numbers between 1 and %d, or a logical vector", n)
      }
      keep <- as.integer(subset)
    } else {
      input_error("`subset` must be a logical vector or row numbers, not %s", class(subset)[1L])
    }
    if (anyDuplicated(keep)) input_error("`subset` repeats rows; resample the data.frame itself (its row names stay unique)")
  }
  # missing values, row by row
  levs <- list()
  ncols <- integer()
  colnames_of <- list()
  problems <- list()
  missing_row <- logical(n)
  for (i in seq_along(parts)) {
    lab <- labels_of[i]
    x <- values[[i]]
    if (kinds[[lab]] == "matrix") {
      m <- matrix(as.double(unclass(x)), nrow = nrow(x), ncol = ncol(x))
      if (ncol(m) < 2L) {
        input_error("column '%s' of `%s` has %d column%s; a curve needs at least 2 locations (matrix columns)",
                    lab, what, ncol(m), if (ncol(m) == 1L) "" else "s")
      }
      if (!is.null(fitted) && ncol(m) != fitted$ncols[[lab]]) {
        input_error("column '%s' of `%s` has %d columns but the model was fitted with %d (one per grid location)",
                    lab, what, ncol(m), fitted$ncols[[lab]])
      }
      ncols[[lab]] <- ncol(m)
      if (!is.null(colnames(x))) colnames_of[[lab]] <- as.character(colnames(x))
      all_na <- rowSums(!is.na(m)) == 0L
      is_response <- with_response && i == 1L
      bad <- if (is_response || interpolate) all_na else rowSums(is.na(m)) > 0L
      if (any(bad[keep])) {
        problems[[lab]] <- list(rows = keep[bad[keep]], gaps = !is_response && !interpolate && !all(all_na[keep][bad[keep]]),
                                response = is_response)
      }
      missing_row <- missing_row | bad
      values[[i]] <- m
    } else if (kinds[[lab]] == "factor") {
      lev <- if (!is.null(fitted)) fitted$levels[[lab]] else factor_levels(x[keep])
      codes <- factor_codes(x, lev)
      x_chr <- if (is.factor(x)) as.character(x) else as.character(x)
      given <- !is.na(x) | (is.factor(x) & is.na(x) & "NA" %in% lev & !is.na(codes))
      new <- unique(x_chr[keep][given[keep] & is.na(codes[keep])])
      if (length(new)) {
        input_error("column '%s' of `%s` has levels %s that the model was not fitted with (levels: %s)",
                    lab, what, paste0("'", new, "'", collapse = ", "), paste(lev, collapse = ", "))
      }
      bad <- is.na(codes)
      if (any(bad[keep])) problems[[lab]] <- list(rows = keep[bad[keep]], gaps = FALSE, response = FALSE)
      missing_row <- missing_row | bad
      levs[[lab]] <- lev
      values[[i]] <- as.double(codes)
    } else {
      v <- as.double(unclass(x))
      bad <- is.na(v)
      if (any(bad[keep])) problems[[lab]] <- list(rows = keep[bad[keep]], gaps = FALSE, response = FALSE)
      missing_row <- missing_row | bad
      values[[i]] <- v
    }
  }
  dropped <- keep[missing_row[keep]]
  omitted <- NULL
  if (length(dropped) && na_action == "na.fail") {
    detail <- vapply(names(problems), function(lab) {
      p <- problems[[lab]]
      sprintf("'%s' %s in rows %s", lab,
              if (p$response) "is unobserved everywhere" else if (p$gaps) "has NA (gaps in the curve)" else "is NA",
              describe_rows(p$rows, labels))
    }, character(1))
    gaps <- any(vapply(problems, `[[`, logical(1), "gaps"))
    input_error("missing values in `%s`: %s. Drop these rows with na.action = na.omit%s",
                what, paste(detail, collapse = "; "),
                if (gaps) ", or fill the gaps of input curves with interpolate_inputs = TRUE" else "")
  }
  out_rows <- keep  # the rows of the result (predictions: NA rows for the missing ones under na.pass)
  if (length(dropped) && na_action %in% c("na.omit", "na.exclude")) {
    omitted <- structure(dropped, names = labels[dropped], class = if (na_action == "na.omit") "omit" else "exclude")
    keep <- setdiff(keep, dropped)
    out_rows <- keep
  } else if (length(dropped) && !with_response) {
    keep <- setdiff(keep, dropped)  # na.pass when predicting: NA predictions, nothing sent to Python
  }
  if (!length(keep) && with_response) {
    input_error("no rows of `%s` are left after `subset` and the missing values", what)
  }
  columns <- list()
  for (i in seq_along(parts)) {
    lab <- labels_of[i]
    x <- values[[i]]
    columns[[parts[[i]]$name]] <- if (is.matrix(x)) x[keep, , drop = FALSE] else reticulate::np_array(x[keep])
  }
  py_names <- vapply(parts, `[[`, character(1), "name")
  names(py_names) <- labels_of
  factor_names <- py_names[names(levs)]
  list(columns = columns, levels = stats::setNames(levs, factor_names[names(levs)]), level_labels = levs,
       labels = labels[keep], all_labels = labels, rows = keep, out_rows = out_rows, n = length(keep), kinds = kinds,
       ncols = ncols, colnames = colnames_of, values = values, na_action = omitted,
       frame = lapply(raw, function(v) if (is.matrix(v)) I(v[keep, , drop = FALSE]) else v[keep]))
}

# A labelled list of grids for the Python side, by Python name. A curve's grid
# is `grid[[label]]` when given, else its column names when they are all
# numbers (irregular times such as "0.5", "2.25"), else seq(0, 1) in Python.
grids_for_python <- function(grid, spec, prepared) {
  labels <- names(prepared$kinds)[prepared$kinds == "matrix"]
  if (!is.null(grid)) {
    if (!is.list(grid) || is.null(names(grid)) || any(!nzchar(names(grid)))) {
      input_error("`grid` must be a named list: the locations of each curve column, e.g. list(cca = seq(0, 1, length.out = 93))")
    }
    bad <- setdiff(names(grid), labels)
    if (length(bad)) {
      input_error("`grid` names '%s', which is not a matrix (curve) column of the formula", bad[1L])
    }
  }
  parts <- c(list(spec$response), spec$terms)
  names(parts) <- vapply(parts, `[[`, character(1), "label")
  out <- list()
  for (v in labels) {
    g <- NULL
    if (!is.null(grid[[v]])) {
      g <- grid[[v]]
      if (!is.numeric(g)) input_error("`grid$%s` must be numbers", v)
      g <- as.double(g)
      if (length(g) != prepared$ncols[[v]]) {
        input_error("`grid$%s` has %d locations but column '%s' has %d columns", v, length(g), v, prepared$ncols[[v]])
      }
      if (anyNA(g) || any(!is.finite(g)) || (length(g) > 1L && any(diff(g) <= 0))) {
        input_error("`grid$%s` must be strictly increasing numbers", v)
      }
    } else {
      g <- numeric_colnames(prepared$colnames[[v]], v)
    }
    if (!is.null(g)) out[[parts[[v]]$name]] <- reticulate::np_array(g)
  }
  out
}

# Column names that are all numbers give the grid (they must increase);
# otherwise NULL.
numeric_colnames <- function(cn, label) {
  if (is.null(cn) || anyNA(cn)) return(NULL)
  g <- suppressWarnings(as.numeric(cn))
  if (anyNA(g)) return(NULL)
  if (length(g) > 1L && any(diff(g) <= 0)) {
    input_error("the column names of '%s' are numbers but not increasing (%s); give the locations with grid = list(%s = ...)",
                label, paste(utils::head(cn, 5L), collapse = ", "), label)
  }
  g
}

# Column names for a matrix of predicted curves at `locations`: the
# response's own column names on its grid, else the locations rounded to the
# fewest significant digits that keep them distinct.
location_names <- function(locations, grid = NULL, colnames = NULL) {
  if (!is.null(colnames) && length(locations) == length(grid) && isTRUE(all(locations == grid))) return(colnames)
  for (digits in 3:15) {
    out <- as.character(signif(locations, digits))
    if (!anyDuplicated(out)) return(out)
  }
  as.character(locations)
}
