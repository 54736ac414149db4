# Issue 19: R users get R semantics. One test per numbered point of the issue.

fit_small <- function(formula, data, ...) {
  kpl(formula, data, lambda = 1e-2, interpolate_inputs = TRUE, progress = FALSE, ...)
}

test_that("19.1 no data is lost between R and Python: duplicated names refused, x_loc kept, NA row names not 'None'", {
  need_python()
  d <- first_visits()[1:30, ]
  dup <- data.frame(a = 1:30, a = 31:60, check.names = FALSE)
  dup$rcst <- d$rcst
  dup$cca <- d$cca
  expect_error(fit_small(rcst ~ cca + a, dup), "several columns named 'a'", class = "fdakpl_input_error")
  # a numeric column named x_loc next to a matrix column x reaches Python as itself
  e <- data.frame(x_loc = d$pasat)
  e$x <- d$cca
  e$rcst <- d$rcst
  z <- e
  names(z)[1] <- "z"
  a <- fit_small(rcst ~ x + x_loc, e)
  b <- fit_small(rcst ~ x + z, z)
  expect_identical(unname(fitted(a)), unname(fitted(b)))
  expect_false(isTRUE(all.equal(unname(fitted(a)), unname(fitted(fit_small(rcst ~ x, e))))))
  # NA row names of a matrix (data as a list) do not become a label "None" or "NA"
  cca <- d$cca
  rownames(cca)[2] <- NA
  fit <- fit_small(rcst ~ cca, list(cca = cca, rcst = unname(d$rcst)))
  expect_identical(rownames(fitted(fit)), as.character(1:30))
  # date-times and durations are refused by name rather than sent as bare numbers
  t <- data.frame(when = as.POSIXct("2020-01-01", tz = "UTC") + 1:30)
  t$rcst <- d$rcst
  expect_error(fit_small(rcst ~ when, t), "column 'when' of `data` is of class POSIXct", class = "fdakpl_input_error")
})

test_that("19.2 R's logical NA is refused in R, never sent to Python as True", {
  need_python()
  d <- first_visits()[1:20, ]
  expect_error(kpl(rcst ~ cca, d, lambda = NA), "`lambda` must be \"gcv\"", class = "fdakpl_input_error")
  expect_error(kpl(rcst ~ cca, d, center = NA), "`center` must be TRUE or FALSE, not NA", class = "fdakpl_input_error")
  expect_error(kpl(rcst ~ cca, d, interpolate_inputs = NA), "`interpolate_inputs` must be TRUE or FALSE",
               class = "fdakpl_input_error")
  expect_error(kpl(rcst ~ cca, d, progress = NA), "`progress` must be TRUE or FALSE", class = "fdakpl_input_error")
  expect_error(kpl(rcst ~ cca, d, level = NA), "`level` must be a whole number", class = "fdakpl_input_error")
  expect_error(kpl(rcst ~ cca, d, lambda = "cv", cv = NA), "`cv` must be a whole number", class = "fdakpl_input_error")
  expect_error(kpl(rcst ~ cca, d, dictionary = NA_character_), "`dictionary` must be one string",
               class = "fdakpl_input_error")
  expect_error(kpl(rcst ~ cca, d, output_matrix = NA_real_), "`output_matrix` must be one positive finite number",
               class = "fdakpl_input_error")
  expect_error(kpl(rcst ~ cca, d, subset = NA), "`subset`", class = "fdakpl_input_error")
})

test_that("19.3 predict() gives conformal prediction intervals and refuses the arguments it does not take", {
  need_python()
  d <- first_visits()
  fit <- kpl(rcst ~ cca, d[1:70, ], lambda = 1e-3, interpolate_inputs = TRUE, progress = FALSE)
  # (the refit on the proper-training part repeats the interpolation warning: fdakpl_warning, issue 16.1)
  p <- suppressWarnings(predict(fit, d[71:100, ], interval = "prediction", level = 0.8), classes = "fdakpl_warning")
  expect_identical(dim(p), c(30L, 55L, 3L))
  expect_identical(dimnames(p)[[3]], c("fit", "lwr", "upr"))
  expect_true(all(p[, , "lwr"] <= p[, , "fit"] & p[, , "fit"] <= p[, , "upr"]))
  py <- reticulate::py_run_string(paste(
    "from fdakpl import FunctionalRegression, datasets",
    "ds = datasets.dti_first_visits()",
    "res = FunctionalRegression('rcst ~ cca', data=ds.isel(sample=slice(0, 70)), lam=1e-3, interpolate_inputs=True,",
    "                           progress=False).fit()",
    "import warnings",
    "with warnings.catch_warnings():  # the interpolation warning of the refit, checked elsewhere",
    "    warnings.simplefilter('ignore', UserWarning)",
    "    lo, hi, mid = res.prediction_bands(ds.isel(sample=slice(70, 100)), alpha=0.2)",
    "lo, hi, mid = lo.values, hi.values, mid.values", sep = "\n"), local = TRUE)
  expect_lt(max(abs(unname(p[, , "lwr"]) - py$lo)), 1e-10)
  expect_lt(max(abs(unname(p[, , "upr"]) - py$hi)), 1e-10)
  # "fit" is the centre of the band: the model refitted on the proper-training part of the split
  expect_lt(max(abs(unname(p[, , "fit"]) - py$mid)), 1e-10)
  expect_gt(max(abs(p[, , "fit"] - predict(fit, d[71:100, ]))), 1e-6)
  long <- suppressWarnings(predict(fit, d[71:72, ], interval = "prediction", format = "long"),
                           classes = "fdakpl_warning")
  expect_identical(names(long), c("sample", "location", "fit", "lwr", "upr"))
  expect_error(predict(fit, data = d[71:72, ]), "`newdata =`, not `data =`", class = "fdakpl_input_error")
  expect_error(predict(fit, d[71:72, ], se.fit = TRUE), "`se.fit` is not available", class = "fdakpl_input_error")
  expect_error(predict(fit, d[71:72, ], type = "terms"), "`type` can only be \"response\"",
               class = "fdakpl_input_error")
  expect_error(predict(fit, d[71:72, ], intervall = "prediction"), "unknown argument 'intervall'",
               class = "fdakpl_input_error")
  expect_error(predict(fit, d[71:72, ], interval = "confidence"), "`interval` must be one of",
               class = "fdakpl_input_error")
  expect_error(predict(fit, d[71:72, ], interval = "prediction", at = 0.5), "drop `at`",
               class = "fdakpl_input_error")
})

test_that("19.4 rows keep the data's own row names everywhere, also for resamples with repeated rows", {
  need_python()
  d <- first_visits()
  fit <- kpl(rcst ~ sex + pasat, d, lambda = 1e-2, progress = FALSE)
  expect_identical(rownames(fitted(fit)), rownames(d))
  expect_identical(rownames(residuals(fit)), rownames(d))
  expect_identical(rownames(coef(fit)), rownames(d))
  expect_identical(rownames(predict(fit, d[1:3, ])), rownames(d)[1:3])
  expect_identical(unique(as.data.frame(fit)$sample), rownames(d))
  boot <- d[c(1, 1, 2, 3, 3, 3, 4:40), ]
  fit_b <- kpl(rcst ~ sex + pasat, boot, lambda = 1e-2, progress = FALSE)
  expect_identical(rownames(fitted(fit_b)), rownames(boot))
  expect_false(anyDuplicated(rownames(fitted(fit_b))) > 0)
  merged <- merge(data.frame(id = rownames(boot), pasat = boot$pasat),
                  data.frame(id = rownames(fitted(fit_b)), f1 = fitted(fit_b)[, 1]), by = "id")
  expect_identical(nrow(merged), nrow(boot))
})

test_that("19.5 numeric column names of the response are its grid; other names need grid=", {
  need_python()
  d <- first_visits()[1:40, ]
  times <- cumsum(c(0.5, rep(c(0.25, 1.5), length.out = 54)))
  y <- d$rcst
  colnames(y) <- format(times)
  e <- data.frame(id = seq_len(40))
  e$cca <- d$cca
  e$y <- y
  fit <- fit_small(y ~ cca, e)
  expect_equal(fit$grid, times)
  expect_identical(colnames(fitted(fit)), colnames(y))
  same <- fit_small(rcst ~ cca, d, grid = list(rcst = times))
  expect_equal(unname(fitted(fit)), unname(fitted(same)), tolerance = 1e-12)
  expect_false(isTRUE(all.equal(unname(fitted(fit)), unname(fitted(fit_small(rcst ~ cca, d))))))
  # decreasing column names are a grid too (issue 27.11); names that go back and forth are not
  colnames(e$y) <- format(times)[c(2, 1, 3:55)]
  expect_error(fit_small(y ~ cca, e), "numbers but neither increasing nor decreasing.*grid = list\\(y = ...\\)",
               class = "fdakpl_input_error")
})

test_that("19.6 R doubles are sent as Python integers and length-1 vectors as lists", {
  need_python()
  d <- first_visits()[1:40, ]
  fit <- kpl(rcst ~ cca, d, lambda = "cv", cv = 5, random_state = 1, n_jobs = 1, interpolate_inputs = TRUE,
             progress = FALSE, param_grid = list(dictionary = "fourier"))
  expect_s3_class(fit, "kpl")
  again <- kpl(rcst ~ cca, d, lambda = "cv", cv = 5L, random_state = 1L, n_jobs = 1L, interpolate_inputs = TRUE,
               progress = FALSE, param_grid = list(dictionary = list("fourier")))
  expect_identical(fit$lambda, again$lambda)
  expect_identical(fitted(fit), fitted(again))
  expect_error(kpl(rcst ~ cca, d, lambda = "cv", cv = 2.5), "`cv` must be a whole number >= 2",
               class = "fdakpl_input_error")
})

test_that("19.7 R's formula language: factor(), as.factor(), I(), functions, C(), dotted names, '.' and '- 1'", {
  need_python()
  d <- first_visits()[1:50, ]
  ref <- fit_small(rcst ~ cca + C(sex), d)
  for (f in list(rcst ~ cca + factor(sex), rcst ~ cca + as.factor(sex))) {
    expect_identical(unname(fitted(fit_small(f, d))), unname(fitted(ref)))
  }
  e <- d
  e$pasat2 <- e$pasat^2
  e$sq <- sqrt(e$pasat)
  e$logy <- log(e$rcst)
  expect_identical(unname(fitted(fit_small(rcst ~ cca + I(pasat^2), d))),
                   unname(fitted(fit_small(rcst ~ cca + pasat2, e))))
  expect_identical(unname(fitted(fit_small(rcst ~ cca + sqrt(pasat), d))),
                   unname(fitted(fit_small(rcst ~ cca + sq, e))))
  expect_identical(unname(fitted(fit_small(log(rcst) ~ cca, d))), unname(fitted(fit_small(logy ~ cca, e))))
  # C(visit.time): a dotted name, as a factor
  v <- fit_small(rcst ~ cca + C(visit.time), d)
  e$vt <- factor(e$visit.time)
  expect_identical(unname(fitted(v)), unname(fitted(fit_small(rcst ~ cca + vt, e))))
  # '.' is every other column
  small <- d[, c("rcst", "cca", "sex")]
  expect_identical(unname(fitted(fit_small(rcst ~ ., small))), unname(fitted(ref)))
  expect_identical(fit_small(rcst ~ . - sex, small)$term_labels, "cca")
  expect_error(fit_small(rcst ~ cca - 1, d), "KPL has no intercept to remove", class = "fdakpl_input_error")
  expect_error(fit_small(rcst ~ cca * sex, d), "interaction terms \\(cca:sex\\) are not supported",
               class = "fdakpl_input_error")
})

test_that("19.8 missing values the R way: na.action, subset; weights refused", {
  need_python()
  d <- dti(source = "bundled")
  v1 <- d[d$visit == 1, ]
  controls <- sum(is.na(v1$pasat))
  expect_gt(controls, 0L)
  fit <- fit_small(rcst ~ cca + pasat, v1)  # na.omit, as lm()
  expect_identical(nobs(fit), nrow(v1) - controls)
  expect_identical(sort(unname(fit$na.action)), which(is.na(v1$pasat)))
  expect_s3_class(fit$na.action, "omit")
  expect_output(print(fit), sprintf("%d observations deleted due to missingness", controls))
  same <- fit_small(rcst ~ cca + pasat, v1[!is.na(v1$pasat), ])
  expect_identical(fitted(fit), fitted(same))
  err <- expect_error(fit_small(rcst ~ cca + pasat, v1, na.action = na.fail), class = "fdakpl_input_error")
  expect_match(conditionMessage(err), "'pasat' is NA in rows")
  expect_match(conditionMessage(err), "na.action = na.omit", fixed = TRUE)
  expect_false(grepl("dropna", conditionMessage(err)))
  ex <- fit_small(rcst ~ cca + pasat, v1, na.action = na.exclude)
  expect_identical(dim(fitted(ex)), c(nrow(v1), 55L))
  expect_identical(rownames(fitted(ex)), rownames(v1))
  expect_true(all(is.na(fitted(ex)[is.na(v1$pasat), ])))
  expect_identical(fitted(ex)[!is.na(v1$pasat), ], fitted(fit))
  expect_identical(dim(predict(ex)), dim(fitted(ex)))
  expect_equal(predict(ex), fitted(ex), tolerance = 1e-10)
  sub <- fit_small(rcst ~ cca + pasat, v1, subset = case == 1 & sex == "female")
  expect_identical(fitted(sub), fitted(fit_small(rcst ~ cca + pasat, v1[v1$case == 1 & v1$sex == "female", ])))
  expect_error(fit_small(rcst ~ cca, v1, weights = rep(1, nrow(v1))), "`weights` is not supported",
               class = "fdakpl_input_error")
  expect_error(fit_small(rcst ~ cca, v1, na.action = na.contiguous), "`na.action` must be na.omit",
               class = "fdakpl_input_error")
})

test_that("19.9 messages give R's row numbers (1-based) and row names", {
  need_python()
  d <- first_visits()[1:30, ]
  d$pasat[17] <- NA
  err <- expect_error(fit_small(rcst ~ cca + pasat, d, na.action = na.fail), class = "fdakpl_input_error")
  expect_match(conditionMessage(err), sprintf("rows 17 (%s)", rownames(d)[17]), fixed = TRUE)
  # what Python reports by position arrives as R rows too (row 17 of the first visits has a gap in cca)
  gap <- unname(which(rowSums(is.na(d$cca)) > 0))
  expect_identical(gap, 17L)
  err <- expect_error(kpl(rcst ~ cca, d, lambda = 1e-2, na.action = na.pass, progress = FALSE),
                      class = "fdakpl_python_error")
  expect_match(conditionMessage(err), sprintf("rows 17 (%s)", rownames(d)[17]), fixed = TRUE)
  expect_false(grepl("[16]", conditionMessage(err), fixed = TRUE))
  # positions and labels in Python's messages both become R rows
  ctx <- list(labels = c("a", "b", "c"), all_labels = c("z", "a", "b", "c"))
  expect_identical(fdakpl:::r_words("x at positions [0, 2]; y for samples ['b'] (row 1)", ctx),
                   "x in rows 2 (a), 4 (c); y for rows 3 (b) (row 3 (b))")
  expect_match(conditionMessage(err), "interpolate_inputs = TRUE", fixed = TRUE)
  fit <- fit_small(rcst ~ cca + pasat, d[-17, ])
  new <- d[15:18, ]
  p <- predict(fit, new)  # na.pass, as predict.lm: NA for the row with a missing covariate
  expect_identical(rownames(p), rownames(new))
  expect_true(all(is.na(p[3, ])) && !anyNA(p[-3, ]))
  err <- expect_error(predict(fit, new, na.action = na.fail), class = "fdakpl_input_error")
  expect_match(conditionMessage(err), sprintf("rows 3 (%s)", rownames(d)[17]), fixed = TRUE)
  # a gap in an input curve of new data is filled, as at fit time (interpolate_inputs = TRUE)
  p2 <- suppressWarnings(predict(fit, transform(d[17, c("cca", "pasat")], pasat = 50)), classes = "fdakpl_warning")
  expect_false(anyNA(p2))
})

test_that("19.10 Python warnings are R warnings: caught, suppressed, once per cause; none from NA in the response", {
  need_python()
  d <- first_visits()[1:40, ]
  caught <- list()
  fit <- withCallingHandlers(
    kpl(rcst ~ cca, d, lambda = c(1e-8, 1e-7), interpolate_inputs = TRUE, progress = FALSE),
    fdakpl_warning = function(w) {
      caught[[length(caught) + 1L]] <<- w
      invokeRestart("muffleWarning")
    })
  msgs <- vapply(caught, conditionMessage, character(1))
  expect_true(any(grepl("lambda", msgs)))
  expect_false(anyDuplicated(msgs) > 0)
  expect_true(all(vapply(caught, inherits, logical(1), "warning")))
  # NA in the response (R's NA bits) no longer makes NumPy warn
  y_na <- d
  y_na$rcst[3, 5:9] <- NA
  expect_silent(kpl(rcst ~ cca, y_na, lambda = 1e-2, interpolate_inputs = TRUE, progress = FALSE))
  # suppressWarnings() silences them: nothing reaches the console
  out <- run_r(paste(
    "library(fdakpl); d <- dti(source = 'bundled'); d <- d[d$case == 1 & d$visit == 1, ][1:40, ]",
    "fit <- suppressWarnings(kpl(rcst ~ cca, d, lambda = c(1e-8, 1e-7), interpolate_inputs = TRUE, progress = FALSE))",
    "cat('done', nobs(fit))", sep = "; "),
    env = paste0("RETICULATE_PYTHON=", Sys.getenv("RETICULATE_PYTHON")))
  expect_match(out, "done 40$")
  expect_false(grepl("Warning|UserWarning|sys:1", out))
})

test_that("19.11 a lambda = 'cv' fit leaves no worker process behind", {
  need_python()
  skip_if_not(dir.exists("/proc/self"), "needs /proc (Linux)")
  # in a separate R process whose output goes through a pipe (which loky workers would hold open):
  # after the fit no worker is left, and the process ends with no leaked semaphores
  out <- run_r(paste(
    "library(fdakpl); d <- dti(source = 'bundled'); d <- d[d$case == 1 & d$visit == 1, ][1:40, ]",
    "fit <- kpl(rcst ~ cca, d, lambda = 'cv', cv = 3, n_jobs = 2, interpolate_inputs = TRUE, progress = FALSE)",
    paste0("worker_processes <- ", paste(deparse(worker_processes), collapse = "\n")),
    "cat('workers left:', length(worker_processes(Sys.getpid())), 'lambda:', fit$lambda, '\\n')", sep = "; "),
    env = paste0("RETICULATE_PYTHON=", Sys.getenv("RETICULATE_PYTHON")))
  expect_match(out, "workers left: 0 lambda: [0-9]")
  expect_false(grepl("leaked", out))
})

test_that("19.12 messages in R's terms: names, NA levels, at=, one location, kernel names, lambda, 'sample'", {
  need_python()
  d <- first_visits()[1:40, ]
  e <- data.frame(`my cca` = seq_len(40), check.names = FALSE)
  e$`my cca` <- d$cca
  e$`café` <- d$pasat
  e$sample <- d$pasat
  e$rcst <- d$rcst
  fit <- fit_small(rcst ~ `my cca` + `café`, e)
  expect_identical(fit$term_labels, c("`my cca`", "café"))
  ref <- fit_small(rcst ~ cca + pasat, d)
  expect_identical(unname(fitted(fit)), unname(fitted(ref)))
  s <- data.frame(sample = d$pasat)
  s$cca <- d$cca
  s$rcst <- d$rcst
  expect_identical(unname(fitted(fit_small(rcst ~ cca + sample, s))), unname(fitted(ref)))
  # addNA(): NA is a level like the others, at fit and predict time
  g <- d
  g$sex[1:5] <- NA
  na_fit <- fit_small(rcst ~ cca + addNA(sex), g)
  expect_identical(na_fit$levels[["addNA(sex)"]], c("male", "female", "NA"))
  expect_identical(dim(predict(na_fit, g[1:6, ])), c(6L, 55L))
  expect_error(predict(ref, d[1:2, ], at = c(NA, 0.5)), "`at` must be finite numbers", class = "fdakpl_input_error")
  one <- list(cca = d$cca, y = d$rcst[, 1, drop = FALSE])
  expect_error(fit_small(y ~ cca, one), "column 'y' of `data` has 1 column; a curve needs at least 2 locations",
               class = "fdakpl_input_error")
  by_name <- kpl(rcst ~ cca, d, lambda = 1e-2, kernel = "gaussian", interpolate_inputs = TRUE, progress = FALSE)
  expect_identical(fitted(by_name), fitted(kpl(rcst ~ cca, d, lambda = 1e-2, kernel = kpl_kernel("gaussian"),
                                               interpolate_inputs = TRUE, progress = FALSE)))
  expect_error(kpl(rcst ~ cca, d, lambda = c("gcv", "loo")), "`lambda` must be \"gcv\", \"loo\" or \"cv\"",
               class = "fdakpl_input_error")
  expect_error(kpl(rcst ~ cca, d, kernel = 3), "`kernel` must be a kernel name", class = "fdakpl_input_error")
  arr <- list(rcst = d$rcst, a = array(0, c(40, 2, 2)))
  expect_error(fit_small(rcst ~ a, arr), "column 'a' of `data` is an array with 3 dims", class = "fdakpl_input_error")
  unnamed <- d[, c("rcst", "cca")]
  names(unnamed)[2] <- ""
  expect_error(fit_small(rcst ~ cca, unnamed), "must have names for all its columns", class = "fdakpl_input_error")
})

test_that("19.13 terms(), model.frame(), formula() and nobs() answer as for lm()", {
  need_python()
  d <- dti(source = "bundled")
  v1 <- d[d$visit == 1, ][1:80, ]
  fit <- fit_small(rcst ~ cca + pasat, v1)
  expect_s3_class(terms(fit), "terms")
  expect_identical(attr(terms(fit), "term.labels"), c("cca", "pasat"))
  expect_identical(formula(fit), rcst ~ cca + pasat)
  mf <- model.frame(fit)
  expect_s3_class(mf, "data.frame")
  expect_identical(nrow(mf), nobs(fit))
  expect_identical(nrow(mf) + length(attr(mf, "na.action")), 80L)
  expect_identical(names(attr(mf, "na.action")), rownames(v1)[is.na(v1$pasat)])
  expect_identical(rownames(mf), rownames(fitted(fit)))
  expect_identical(unclass(mf$cca), v1$cca[!is.na(v1$pasat), ])
})
