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

# The rows that `subset` keeps, as lm() (through `[.data.frame`) reads it: a logical vector (NA as
# FALSE), positive row numbers, negative row numbers (rows left out) or row names.
subset_rows <- function(subset, n, labels, what) {
  if (is.null(subset)) return(seq_len(n))
  if (is.logical(subset)) {
    if (length(subset) != n) input_error("`subset` has %d values but `%s` has %d rows", length(subset), what, n)
    return(which(subset & !is.na(subset)))
  }
  if (is.factor(subset)) subset <- as.character(subset)
  if (is.character(subset)) {
    rows <- match(subset, labels)
    if (anyNA(rows)) {
      bad <- unique(subset[is.na(rows)])
      input_error("`subset` names rows that `%s` does not have: %s", what,
                  paste0("'", utils::head(bad, 8L), "'", collapse = ", "))
    }
    return(rows)
  }
  if (is.numeric(subset)) {
    if (anyNA(subset) || any(subset != round(subset)) || any(abs(subset) > n)) {
      input_error("`subset` must be row numbers between 1 and %d (negative to leave rows out), row names or a logical vector",
                  n)
    }
    if (any(subset < 0) && any(subset > 0)) {
      input_error("`subset` mixes positive and negative row numbers; give the rows to keep, or (negative) the rows to leave out")
    }
    return(seq_len(n)[as.integer(subset)])
  }
  input_error("`subset` must be a logical vector, row numbers or row names, not %s", class(subset)[1L])
}

# Rows of `x` (a numeric vector or matrix) with an infinite value, for messages.
infinite_rows <- function(x) {
  if (is.matrix(x)) which(rowSums(is.infinite(x)) > 0) else which(is.infinite(x))
}

# The label R shows for a factor's NA level (addNA()) on the Python side: "NA" unless a real level is
# called so (e.g. North America), then "<NA>" (as print() shows it), made unique.
python_levels <- function(lev) {
  if (!anyNA(lev)) return(lev)
  label <- "NA"
  while (label %in% lev) label <- if (label == "NA") "<NA>" else paste0(label, "'")
  lev[is.na(lev)] <- label
  lev
}

# Evaluate the response and terms of `spec` on `data`, keep the rows of
# `subset`, handle missing values by `na_action`, and convert for Python.
#   fitted: NULL when fitting; when predicting, the fit's term information
#           (kinds, levels, ncols) that new data must match (the terms are
#           then evaluated by their prediction calls: poly(x, 2) and
#           scale(x) with the fit's coefficients, as predict.lm() does).
#   with_response: evaluate the response too (always when fitting).
# Row positions in `na_action` count within the subset, as lm()'s do.
prepare_data <- function(spec, data, what = "data", fitted = NULL, subset = NULL, na_action = "na.omit",
                         interpolate = FALSE, with_response = is.null(fitted)) {
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
  predicting <- !is.null(fitted)
  parts <- c(if (with_response) list(spec$response), spec$terms)
  exprs <- lapply(parts, function(p) if (predicting && !is.null(p$predict_expr)) p$predict_expr else p$expr)
  missing_vars <- setdiff(unlist(lapply(exprs, all.vars)), nms)
  missing_vars <- missing_vars[!vapply(missing_vars, exists, logical(1), envir = spec$env)]
  if (length(missing_vars)) {
    input_error("the formula names %s, not found in `%s` (its columns: %s)",
                paste0("'", missing_vars, "'", collapse = ", "), what, paste(utils::head(nms, 20L), collapse = ", "))
  }
  values <- Map(function(p, e) eval_term(utils::modifyList(p, list(expr = e)), data, spec$env, what), parts, exprs)
  labels_of <- vapply(parts, `[[`, character(1), "label")
  names(values) <- labels_of
  rows <- vapply(values, row_count, integer(1))
  n <- if (is.data.frame(data)) nrow(data) else if (length(rows)) rows[[1L]] else 0L
  if (any(rows != n)) {
    input_error("mismatched row counts in `%s`: %s; every column needs one row per sample%s",
                what, paste(sprintf("'%s' has %d", labels_of, rows), collapse = ", "),
                if (is.data.frame(data)) sprintf(" (the data.frame has %d rows)", n) else "")
  }
  labels <- row_labels(data, values, n)
  raw <- values
  # the calls that evaluate each term on new data (lm()'s "predvars"): poly() and scale() keep their coefficients
  predvars <- if (predicting) NULL else Map(stats::makepredictcall, values, lapply(parts, `[[`, "expr"))
  is_response <- with_response & seq_along(parts) == 1L
  kinds <- vapply(seq_along(parts), function(i) term_kind(values[[i]], labels_of[i], what, is_response[i]),
                  character(1))
  names(kinds) <- labels_of
  for (i in which(vapply(parts, function(p) isTRUE(p$subject), logical(1)))) {
    if (kinds[[i]] %in% c("matrix", "scalars")) {
      input_error("the subject term %s of `%s` needs one label per curve (a factor, characters or numbers), not a %s",
                  labels_of[i], what, kind_words(kinds[[i]]))
    }
    kinds[[i]] <- "subject"  # sent as text: a subject not seen when fitting is allowed (population prediction)
  }
  if (predicting) {
    for (lab in setdiff(labels_of, spec$response$label)) {
      if (kinds[[lab]] != fitted$kinds[[lab]] &&
          !(fitted$kinds[[lab]] == "factor" && kinds[[lab]] %in% c("factor", "numeric") && !is.matrix(values[[lab]]))) {
        input_error("the term %s is a %s in `%s` but was a %s when the model was fitted",
                    lab, kind_words(kinds[[lab]]), what, kind_words(fitted$kinds[[lab]]))
      }
    }
  }
  keep <- subset_rows(subset, n, labels, what)
  if (anyDuplicated(keep)) input_error("`subset` repeats rows; resample the data.frame itself (its row names stay unique)")
  # missing and infinite values, row by row
  levs <- list()
  ncols <- integer()
  colnames_of <- list()
  problems <- list()
  missing_row <- logical(n)
  for (i in seq_along(parts)) {
    lab <- labels_of[i]
    x <- values[[i]]
    kind <- kinds[[lab]]
    if (kind %in% c("matrix", "scalars")) {
      m <- matrix(as.double(unclass(x)), nrow = nrow(x), ncol = ncol(x))
      if (kind == "matrix" && ncol(m) < 2L) {
        input_error("column '%s' of `%s` has %d column%s; a curve needs at least 2 locations (matrix columns)",
                    lab, what, ncol(m), if (ncol(m) == 1L) "" else "s")
      }
      if (predicting && !is_response[i] && ncol(m) != fitted$ncols[[lab]]) {
        input_error("column '%s' of `%s` has %d columns but the model was fitted with %d (one per grid location)",
                    lab, what, ncol(m), fitted$ncols[[lab]])
      }
      ncols[[lab]] <- ncol(m)
      if (!is.null(colnames(x))) colnames_of[[lab]] <- as.character(colnames(x))
      all_na <- rowSums(!is.na(m)) == 0L
      bad <- if (is_response[i] || (interpolate && kind == "matrix")) all_na else rowSums(is.na(m)) > 0L
      if (any(bad[keep])) {
        problems[[lab]] <- list(rows = keep[bad[keep]], response = is_response[i],
                                gaps = kind == "matrix" && !is_response[i] && !interpolate && !all(all_na[keep][bad[keep]]))
      }
      missing_row <- missing_row | bad
      values[[i]] <- m
    } else if (kind == "subject") {
      # the labels of these rows as codes among their own levels (as text): Python matches them to the subjects
      # seen when fitting by their text, and a new subject gets the population prediction
      x_chr <- if (is.factor(x)) levels(x)[as.integer(x)] else as.character(x)
      lev <- sort(unique(x_chr[keep][!is.na(x_chr[keep])]))
      codes <- match(x_chr, lev)
      bad <- is.na(x_chr)
      if (any(bad[keep])) problems[[lab]] <- list(rows = keep[bad[keep]], gaps = FALSE, response = FALSE)
      missing_row <- missing_row | bad
      levs[[lab]] <- lev
      values[[i]] <- as.double(codes)
    } else if (kind == "factor") {
      lev <- if (predicting) fitted$levels[[lab]] else factor_levels(x[keep])
      codes <- factor_codes(x, lev)
      x_chr <- if (is.factor(x)) levels(x)[as.integer(x)] else as.character(x)
      new <- unique(x_chr[keep][!is.na(x_chr[keep]) & is.na(codes[keep])])
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
    inf <- intersect(keep, infinite_rows(values[[i]]))
    if (length(inf)) {
      input_error("%s '%s' of `%s` is infinite in rows %s; %s", if (kind == "matrix") "the curve" else "the term",
                  lab, what, describe_rows(inf, labels),
                  if (predicting) "leave these rows out of `newdata`, or transform so that the values are finite"
                  else "leave these rows out (subset = ), or transform so that the values are finite")
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
    # positions within the subset, as lm()'s na.action (naresid() pads within the rows of the subset); new
    # data drop these rows under both, as predict.lm() does
    omitted <- structure(match(dropped, keep), names = labels[dropped],
                         class = if (na_action == "na.omit") "omit" else "exclude")
    keep <- setdiff(keep, dropped)
    out_rows <- keep
  } else if (length(dropped) && predicting) {
    keep <- setdiff(keep, dropped)  # na.pass when predicting: NA predictions, nothing sent to Python
  }
  if (!length(keep) && with_response && !predicting) {
    input_error("no rows of `%s` are left after `subset` and the missing values", what)
  }
  columns <- list()
  for (i in seq_along(parts)) {
    x <- values[[i]]
    nm <- parts[[i]]$name
    if (kinds[[i]] == "scalars") {
      for (j in seq_len(ncol(x))) columns[[paste0(nm, "_", j)]] <- reticulate::np_array(x[keep, j])
    } else {
      columns[[nm]] <- if (is.matrix(x)) x[keep, , drop = FALSE] else reticulate::np_array(x[keep])
    }
  }
  py_names <- vapply(parts, `[[`, character(1), "name")
  names(py_names) <- labels_of
  factor_names <- py_names[names(levs)]
  list(columns = columns, levels = stats::setNames(lapply(levs, python_levels), factor_names[names(levs)]),
       level_labels = levs, labels = labels[keep], all_labels = labels, rows = keep, out_rows = out_rows,
       n = length(keep), kinds = kinds, ncols = ncols, colnames = colnames_of, values = values,
       na_action = omitted, predvars = predvars,
       frame = lapply(raw, function(v) if (is.matrix(v)) I(v[keep, , drop = FALSE]) else v[keep]))
}

# The term of `spec` that `name` means: its label (`my cca` with backquotes), or the label without its
# backquotes (how list(`my cca` = ...) names it). NA when none.
term_label <- function(name, labels) {
  hit <- match(name, labels)
  if (is.na(hit)) hit <- match(gsub("`", "", name, fixed = TRUE), gsub("`", "", labels, fixed = TRUE))
  if (is.na(hit)) NA_character_ else labels[[hit]]
}

# A labelled list of grids for the Python side, by Python name. A curve's grid
# is `grid[[label]]` when given, else its column names when they are all
# numbers (irregular times such as "0.5", "2.25"), else seq(0, 1) in Python.
# A decreasing grid (spectra by wavenumber) is sent increasing, with the
# columns reversed: `reversed` names those curves (labels).
grids_for_python <- function(grid, spec, prepared) {
  labels <- names(prepared$kinds)[prepared$kinds == "matrix"]
  if (!is.null(grid)) {
    if (!is.list(grid) || is.null(names(grid)) || any(!nzchar(names(grid)))) {
      input_error("`grid` must be a named list: the locations of each curve column, e.g. list(cca = seq(0, 1, length.out = 93))")
    }
    found <- vapply(names(grid), term_label, character(1), labels = labels)
    if (anyNA(found)) {
      input_error("`grid` names '%s', which is not a matrix (curve) column of the formula (curves: %s)",
                  names(grid)[is.na(found)][1L], paste(labels, collapse = ", "))
    }
    names(grid) <- found
  }
  parts <- c(list(spec$response), spec$terms)
  names(parts) <- vapply(parts, `[[`, character(1), "label")
  out <- list()
  reversed <- character()
  for (v in labels) {
    g <- NULL
    if (!is.null(grid[[v]])) {
      g <- grid[[v]]
      if (!is.numeric(g)) input_error("`grid$%s` must be numbers", v)
      g <- as.double(g)
      if (length(g) != prepared$ncols[[v]]) {
        input_error("`grid$%s` has %d locations but column '%s' has %d columns", v, length(g), v, prepared$ncols[[v]])
      }
      if (anyNA(g) || any(!is.finite(g)) || !strictly_monotone(g)) {
        input_error("`grid$%s` must be strictly increasing (or strictly decreasing) finite numbers", v)
      }
    } else {
      g <- numeric_colnames(prepared$colnames[[v]], v)
    }
    if (!is.null(g)) {
      if (length(g) > 1L && g[2L] < g[1L]) {
        reversed <- c(reversed, v)
        g <- rev(g)
      }
      out[[parts[[v]]$name]] <- reticulate::np_array(g)
    }
  }
  list(grids = out, reversed = reversed)
}

strictly_monotone <- function(g) length(g) < 2L || all(diff(g) > 0) || all(diff(g) < 0)

# Reverse the columns of the curves named in `reversed` (labels) in a list of Python columns.
reverse_columns <- function(columns, reversed, spec) {
  parts <- c(list(spec$response), spec$terms)
  names(parts) <- vapply(parts, `[[`, character(1), "label")
  for (v in reversed) {
    nm <- parts[[v]]$name
    if (!is.null(columns[[nm]])) columns[[nm]] <- columns[[nm]][, rev(seq_len(ncol(columns[[nm]]))), drop = FALSE]
  }
  columns
}

# Column names that are all numbers give the grid (strictly increasing, or
# strictly decreasing: then sent reversed); otherwise NULL.
numeric_colnames <- function(cn, label) {
  if (is.null(cn) || anyNA(cn)) return(NULL)
  g <- suppressWarnings(as.numeric(cn))
  if (anyNA(g) || any(!is.finite(g))) return(NULL)
  if (!strictly_monotone(g)) {
    input_error("the column names of '%s' are numbers but neither increasing nor decreasing (%s); give the locations with grid = list(%s = ...), or reorder the columns",
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
