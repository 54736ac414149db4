# Issue 27 (R, round 3): lm() semantics, R term names, R graphics arguments, errors in R's words.
# One test per numbered item (5, 23, 24 and 25 are the rpy2 converters: tests/test_r.py).

fit27 <- function(formula, data, ...) {
  kpl(formula, data, lambda = 1e-2, interpolate_inputs = TRUE, progress = FALSE, ...)
}
quiet <- function(expr) suppressWarnings(expr, classes = "fdakpl_warning")  # grid-edge notices
visit1 <- function() {
  d <- dti(source = "bundled")
  d[d$visit == 1, ]
}
messages_of <- function(expr) {
  got <- character()
  withCallingHandlers(expr, warning = function(w) {
    got <<- c(got, conditionMessage(w))
    invokeRestart("muffleWarning")
  })
  got
}

test_that("27.1 subset with na.action = na.exclude pads within the subset, as lm() does", {
  need_python()
  v <- visit1()
  v$y <- rowMeans(v$rcst, na.rm = TRUE)  # NA only where pasat is (lm() drops rows with a missing response too)
  for (sub in list(11:60, 31:60)) {
    l <- lm(y ~ pasat, v, subset = sub, na.action = na.exclude)
    fit <- quiet(kpl(rcst ~ cca + pasat, v, subset = sub, na.action = na.exclude, lambda = 1e-2,
                     interpolate_inputs = TRUE, progress = FALSE))
    excluded <- unname(which(is.na(residuals(l))))
    expect_gt(length(excluded), 0L)
    expect_identical(rownames(fitted(fit)), names(residuals(l)))
    expect_identical(rownames(residuals(fit)), names(residuals(l)))
    expect_identical(unname(which(rowSums(!is.na(fitted(fit))) == 0)), excluded)
    expect_identical(unname(which(rowSums(!is.na(residuals(fit))) == 0)), excluded)
    kept <- v[sub, ][!is.na(v$pasat[sub]), ]
    expect_identical(fitted(fit)[-excluded, ], fitted(quiet(fit27(rcst ~ cca + pasat, kept))))
    expect_identical(dim(predict(fit)), dim(fitted(fit)))
    band <- quiet(predict(fit, interval = "prediction", level = 0.8))
    expect_identical(dim(band)[1:2], dim(fitted(fit)))
    expect_identical(dimnames(band)[[1L]], rownames(fitted(fit)))
    expect_true(all(is.na(band[excluded, , ])) && !anyNA(band[-excluded, , "lwr"]))
  }
  # new data: rows with a missing covariate are NA by default (na.pass) and dropped with na.exclude, as by
  # predict.lm() (which pads only the training rows)
  new <- v[c(which(is.na(v$pasat))[1:3], which(!is.na(v$pasat))[1:5], which(is.na(v$pasat))[4]), ]
  expect_identical(rownames(quiet(predict(fit, new, na.action = na.exclude))),
                   names(predict(l, new, na.action = na.exclude)))
  p <- quiet(predict(fit, new))
  expect_identical(rownames(p), names(predict(l, new)))
  expect_identical(unname(which(rowSums(!is.na(p)) == 0)), unname(which(is.na(predict(l, new)))))
})

test_that("27.2 kernel = \"gaussian\" takes its width from the data, as kernel = NULL does", {
  need_python()
  d <- first_visits()[1:60, ]
  d <- d[rowSums(is.na(d$cca)) == 0, ]
  ref <- kpl(rcst ~ cca, d, progress = FALSE)
  expect_identical(fitted(kpl(rcst ~ cca, d, kernel = "gaussian", progress = FALSE)), fitted(ref))
  expect_identical(fitted(kpl(rcst ~ cca, d, kernel = kpl_kernel("gaussian"), progress = FALSE)), fitted(ref))
  expect_identical(fitted(kpl(rcst ~ cca, d, kernel = list(cca = "gaussian"), progress = FALSE)), fitted(ref))
  fixed <- kpl(rcst ~ cca, d, kernel = kpl_kernel("gaussian", sigma = 1), progress = FALSE)
  expect_gt(max(abs(fitted(fixed) - fitted(ref))), 1e-4)
  expect_output(print(kpl_kernel("gaussian")), "width from the data \\(median heuristic, tuned with lambda\\)")
  expect_output(print(kpl_kernel("laplace", sigma = 0.5)), "Laplace kernel, sigma = 0.5")
  # a Laplace kernel without sigma: the median of the curves' L2 distances (trapezoidal weights on the grid)
  lap <- kpl(rcst ~ cca, d, kernel = "laplace", lambda = 1e-2, progress = FALSE)
  s <- seq(0, 1, length.out = ncol(d$cca))
  w <- (c(diff(s), 0) + c(0, diff(s))) / 2
  width <- median(dist(sweep(unclass(d$cca), 2, sqrt(w), "*")))
  expect_equal(lap$py$kernels[["cca"]]$sigma, width, tolerance = 1e-12)
  same <- kpl(rcst ~ cca, d, kernel = kpl_kernel("laplace", sigma = width), lambda = 1e-2, progress = FALSE)
  expect_equal(fitted(lap), fitted(same), tolerance = 1e-10)
})

test_that("27.3 kpl_kernel(sigma =) is one positive number or NULL, checked in R", {
  need_python()
  for (bad in list(NA, TRUE, "1", c(1, 2), list(1), 0, -1, Inf, matrix(1))) {
    expect_error(kpl_kernel("gaussian", sigma = bad), "`sigma` of kpl_kernel\\(\"gaussian\"\\) must be one positive number",
                 class = "fdakpl_input_error")
  }
  expect_null(kpl_kernel("gaussian", sigma = NULL)$sigma)
  expect_identical(kpl_kernel("laplace", sigma = 2L)$sigma, 2)
  expect_error(kpl_kernel("integral_gaussian"), "needs `sigma`", class = "fdakpl_input_error")
  expect_error(kpl_kernel("linear", sigma = 1), "takes no parameter", class = "fdakpl_input_error")
})

test_that("27.4 a factor level \"NA\" (North America) and addNA()'s missing level stay apart", {
  need_python()
  d <- first_visits()[1:60, ]
  region <- rep(c("Europe", "NA"), 30)
  region[c(3, 8, 13, 40)] <- NA
  d$region <- factor(region)
  fit <- quiet(fit27(rcst ~ cca + addNA(region), d))
  expect_identical(fit$levels[["addNA(region)"]], c("Europe", "NA", NA))
  recoded <- d
  recoded$region2 <- factor(ifelse(is.na(region), "missing", region), levels = c("Europe", "NA", "missing"))
  same <- quiet(fit27(rcst ~ cca + region2, recoded))
  expect_equal(unname(fitted(fit)), unname(fitted(same)), tolerance = 1e-12)
  merged <- recoded
  merged$region2[is.na(region)] <- "NA"
  expect_gt(max(abs(fitted(fit) - fitted(quiet(fit27(rcst ~ cca + region2, merged)))), na.rm = TRUE), 1e-6)
  expect_equal(quiet(predict(fit, d[1:8, ])), fitted(fit)[1:8, ], tolerance = 1e-10)
  pd <- quiet(partial_dependence(fit, "addNA(region)", values = addNA(factor(c(NA, "NA")))))
  expect_identical(nrow(pd), 2L)
  expect_gt(max(abs(pd[1, ] - pd[2, ])), 1e-8)
})

test_that("27.6 the vignette's models predict held-out curves better than the mean curve", {
  need_python()
  # the vignette's own code, run up to its second model
  rmd <- testthat::test_path("..", "..", "vignettes", "fdakpl.Rmd")
  code <- knitr::purl(rmd, output = tempfile(fileext = ".R"), quiet = TRUE, documentation = 0)
  env <- new.env(parent = globalenv())
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off(), add = TRUE)
  for (e in parse(code)) {
    utils::capture.output(quiet(eval(e, env)))
    if (exists("fit_sex", envir = env, inherits = FALSE)) break
  }
  observed <- env$first$rcst[env$test, ]
  rmse <- function(pred) sqrt(mean((pred - observed)^2, na.rm = TRUE))
  baseline <- rmse(matrix(colMeans(env$first$rcst[env$train, ], na.rm = TRUE), nrow(observed), ncol(observed),
                          byrow = TRUE))
  expect_identical(length(env$test), 30L)
  expect_lt(rmse(predict(env$fit, env$first[env$test, ])), baseline)
  expect_lt(rmse(quiet(predict(env$fit_sex, env$first[env$test, ]))), baseline)
})

test_that("27.7 interpretation functions take the formula's term names, and say them", {
  need_python()
  d <- first_visits()
  e <- data.frame(pasat = d$pasat, sex = d$sex)
  e$`grösse` <- (seq_len(nrow(d)) %% 7) / 7
  e$cca.x <- d$cca
  e$rcst <- d$rcst
  e <- e[!is.na(e$pasat), ]
  fit <- quiet(kpl(rcst ~ cca.x + factor(sex) + I(pasat / 10) + `grösse`, e,
                   kernel = list(cca.x = kpl_kernel("linear"), scalars = kpl_kernel("gaussian", sigma = 2)),
                   lambda = 1e-6, combine = "sum", interpolate_inputs = TRUE, progress = FALSE))
  beta <- coef_surface(fit, "cca.x")
  expect_identical(names(dimnames(beta)), c("cca.x_loc", "rcst_loc"))
  expect_identical(attr(beta, "term"), "cca.x")
  expect_equal(unclass(effect_surface(fit, "cca.x")), unclass(beta), tolerance = 1e-8, ignore_attr = TRUE)
  pd <- quiet(partial_dependence(fit, "factor(sex)"))
  expect_identical(sort(rownames(pd)), c("female", "male"))
  expect_identical(names(dimnames(pd))[1], "factor(sex)")
  by_hand <- colMeans(quiet(predict(fit, transform(e, sex = factor(rep("female", nrow(e)), levels = levels(e$sex))))))
  expect_equal(unname(pd["female", ]), unname(by_hand), tolerance = 1e-10)
  pd2 <- quiet(partial_dependence(fit, "I(pasat/10)", values = c(3, 5)))
  by_hand <- colMeans(quiet(predict(fit, transform(e, pasat = rep(50, nrow(e))))))
  expect_equal(unname(pd2[2, ]), unname(by_hand), tolerance = 1e-10)
  expect_identical(dim(quiet(partial_dependence(fit, "grösse", values = 0.5))), c(1L, 55L))
  expect_identical(dim(quiet(partial_dependence(fit, "`grösse`", values = 0.5))), c(1L, 55L))
  err <- expect_error(coef_surface(fit, "factor(sex)"), class = "fdakpl_input_error")
  expect_match(conditionMessage(err), "inputs that are curves (matrix columns): cca.x; 'factor(sex)' is a scalar term",
               fixed = TRUE)
  err <- expect_error(partial_dependence(fit, "visit_time"), class = "fdakpl_input_error")
  expect_match(conditionMessage(err), "factor(sex), I(pasat/10), grösse", fixed = TRUE)
  expect_false(grepl("factor_sex|cca_x|I_pasat", conditionMessage(err)))
  gauss <- quiet(kpl(rcst ~ cca.x, e, lambda = 1e-2, interpolate_inputs = TRUE, progress = FALSE))
  err <- expect_error(coef_surface(gauss, "cca.x"), class = "fdakpl_input_error")
  expect_match(conditionMessage(err), "kernel = list(cca.x = kpl_kernel(\"linear\"))", fixed = TRUE)
  expect_false(grepl("cca_x|Linear\\(\\)|kernels=", conditionMessage(err)))
})

test_that("27.8 prediction bands at the default level work on few curves; their errors are R's", {
  need_python()
  d <- first_visits()[1:40, ]
  fit <- fit27(rcst ~ cca, d)
  band <- quiet(predict(fit, d[1:3, ], interval = "prediction"))
  expect_true(all(is.finite(band)))
  expect_true(all(band[, , "lwr"] <= band[, , "fit"] & band[, , "fit"] <= band[, , "upr"]))
  # 30% of 40 curves is 12, too few for level 0.95 (19 needed at every location): the default calibrates on
  # enough curves to observe 19 of them on average at the least observed location
  k <- ceiling(19 / min(colMeans(!is.na(d$rcst))))
  expect_gt(k, 19)
  py <- reticulate::py_run_string(paste(
    "import warnings",
    "from fdakpl import FunctionalRegression, datasets",
    "ds = datasets.dti_first_visits().isel(sample=slice(0, 40))",
    "res = FunctionalRegression('rcst ~ cca', data=ds, lam=1e-2, interpolate_inputs=True, progress=False).fit()",
    "with warnings.catch_warnings():",
    "    warnings.simplefilter('ignore')",
    sprintf("    lo, hi, mid = res.prediction_bands(ds.isel(sample=[0, 1, 2]), alpha=0.05, calibration=%d / 40)", k),
    "    slo, shi, _ = res.prediction_bands(ds.isel(sample=[0, 1, 2]), alpha=0.2, kind='simultaneous')",
    "lo, hi, slo, shi = lo.values, hi.values, slo.values, shi.values", sep = "\n"), local = TRUE)
  expect_lt(max(abs(unname(band[, , "lwr"]) - py$lo)), 1e-10)
  expect_lt(max(abs(unname(band[, , "upr"]) - py$hi)), 1e-10)
  simultaneous <- quiet(predict(fit, d[1:3, ], interval = "prediction", level = 0.8, band = "simultaneous"))
  expect_lt(max(abs(unname(simultaneous[, , "lwr"]) - py$slo)), 1e-10)
  err <- expect_error(predict(fit, d[1:3, ], interval = "prediction", calibration = 0.3), class = "fdakpl_input_error")
  expect_match(conditionMessage(err), "need at least 19 calibration curves, but calibration = 0.3 of the 40 curves gives 12",
               fixed = TRUE)
  expect_match(conditionMessage(err), "raise `calibration` to at least 0.475, lower `level` to at most 0.923", fixed = TRUE)
  expect_false(grepl("alpha|kind=|calibration=", conditionMessage(err)))
  expect_identical(dim(quiet(predict(fit, d[1:3, ], interval = "prediction", calibration = 0.475))), c(3L, 55L, 3L))
  expect_identical(dim(quiet(predict(fit, d[1:3, ], interval = "prediction", level = 0.923, calibration = 0.3))),
                   c(3L, 55L, 3L))
  expect_error(predict(fit, d[1:3, ], interval = "prediction", level = 0.99), "lower `level` to at most 0.9743",
               class = "fdakpl_input_error")
  expect_error(predict(fit, interval = "prediction", calibration = 1.2), "`calibration` = 1.2 of the 40 curves",
               class = "fdakpl_input_error")
})

test_that("27.9 lambda in param_grid points to lambda = \"cv\" with lam_grid", {
  need_python()
  d <- first_visits()[1:30, ]
  for (key in c("lambda", "lam")) {
    grid <- stats::setNames(list(c(1e-3, 1e-2)), key)
    err <- expect_error(kpl(rcst ~ cca, d, lambda = "cv", param_grid = grid), class = "fdakpl_input_error")
    expect_match(conditionMessage(err), "lambda = \"cv\" and give its candidates as lam_grid = c(...)", fixed = TRUE)
  }
})

test_that("27.10 a fit read back from disk: every function that needs Python asks for a refit, classed", {
  need_python()
  d <- first_visits()
  fit <- kpl(rcst ~ cca + factor(sex), d, kernel = list(cca = kpl_kernel("linear")), lambda = 1e-3,
             combine = "sum", interpolate_inputs = TRUE, progress = FALSE)
  path <- tempfile(fileext = ".rds")
  saveRDS(fit, path)
  back <- readRDS(path)
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off(), add = TRUE)
  calls <- list(function() predict(back, d[1:2, ]), function() coef_surface(back, "cca"),
                function() effect_surface(back, "cca"), function() partial_dependence(back, "factor(sex)"),
                function() plot_surface(back, "cca"), function() plot(back, type = "surface", term = "cca"))
  for (f in calls) expect_error(f(), "refit it with kpl\\(\\)", class = "fdakpl_error")
  expect_identical(fitted(back), fitted(fit))
  # in a new R session (reticulate's "object is from previous session" before)
  out <- run_r(paste(sprintf("library(fdakpl); fit <- readRDS('%s')", path),
                     "for (f in list(function() predict(fit), function() coef_surface(fit, 'cca'),",
                     "               function() partial_dependence(fit, 'factor(sex)'))) {",
                     "  cat(tryCatch({f(); 'no error'}, fdakpl_error = function(e) 'fdakpl_error',",
                     "               error = function(e) conditionMessage(e)), '\\n')",
                     "}", sep = "\n"),
               env = paste0("RETICULATE_PYTHON=", Sys.getenv("RETICULATE_PYTHON")))
  expect_identical(lengths(regmatches(out, gregexpr("fdakpl_error", out))), 3L)
})

test_that("27.11 decreasing column names (wavenumbers) are a grid, sent increasing, answered in the user's order", {
  need_python()
  d <- first_visits()[1:50, ]
  wav <- seq(4000, 400, length.out = 93)
  theta <- seq(1, 0, length.out = 55)
  down <- data.frame(id = seq_len(50))
  down$spec <- unclass(d$cca)
  colnames(down$spec) <- as.character(wav)
  down$y <- unclass(d$rcst)
  colnames(down$y) <- as.character(theta)
  up <- down
  up$spec <- down$spec[, 93:1]
  up$y <- down$y[, 55:1]
  a <- fit27(y ~ spec, down)
  b <- fit27(y ~ spec, up)
  expect_identical(a$grid, as.numeric(colnames(down$y)))
  expect_true(all(diff(a$grid) < 0))
  expect_identical(colnames(fitted(a)), colnames(down$y))
  expect_equal(unname(fitted(a)), unname(fitted(b)[, 55:1]), tolerance = 1e-12)
  expect_equal(unname(residuals(a)), unname(residuals(b)[, 55:1]), tolerance = 1e-12)
  expect_gt(max(abs(fitted(a) - fitted(b)), na.rm = TRUE), 1e-3)  # not the same columns
  expect_equal(unname(predict(a, down[1:3, ])), unname(predict(b, up[1:3, ])[, 55:1]), tolerance = 1e-12)
  expect_equal(predict(a, down[1:3, ], at = c(0.2, 0.8)), predict(b, up[1:3, ], at = c(0.2, 0.8)), tolerance = 1e-12)
  band_a <- quiet(predict(a, down[1:3, ], interval = "prediction", level = 0.8))
  band_b <- quiet(predict(b, up[1:3, ], interval = "prediction", level = 0.8))
  expect_equal(unname(band_a), unname(band_b[, 55:1, ]), tolerance = 1e-12)
  plain <- down
  plain$spec <- unname(plain$spec)
  by_grid <- fit27(y ~ spec, plain, grid = list(spec = wav))
  expect_equal(fitted(by_grid), fitted(a), tolerance = 1e-12)
})

test_that("27.12 messages in R's words: cv, infinite covariates, kernel parameters", {
  need_python()
  d <- first_visits()[1:30, ]
  err <- expect_error(kpl(rcst ~ cca, d, lambda = "cv", cv = 31, interpolate_inputs = TRUE, progress = FALSE),
                      class = "fdakpl_input_error")
  expect_match(conditionMessage(err), "`cv` = 31 folds, but the fit has 30 curves; use cv <= 30", fixed = TRUE)
  expect_false(grepl("n_splits", conditionMessage(err)))
  d$score <- seq_len(30) - 1
  err <- expect_error(fit27(rcst ~ cca + log(score), d), class = "fdakpl_input_error")
  expect_match(conditionMessage(err), sprintf("the term 'log(score)' of `data` is infinite in rows 1 (%s)", rownames(d)[1]),
               fixed = TRUE)
  expect_false(grepl("ds\\.|isel", conditionMessage(err)))
  fit <- quiet(fit27(rcst ~ cca + log(score), d[-1, ]))
  err <- expect_error(predict(fit, d[1:3, ]), class = "fdakpl_input_error")
  expect_match(conditionMessage(err), "is infinite in rows 1 .*leave these rows out of `newdata`")
  err <- expect_error(kpl_kernel("gaussian", width = 1), class = "fdakpl_input_error")
  expect_match(conditionMessage(err), "kpl_kernel(\"gaussian\") takes `sigma` (the width), not `width`", fixed = TRUE)
  expect_false(grepl("__init__", conditionMessage(err)))
})

test_that("27.13 kpl() takes width_grid and b_grid as R vectors; edge advice in R's syntax", {
  need_python()
  d <- first_visits()[1:60, ]
  fit <- quiet(kpl(rcst ~ cca, d, width_grid = c(0.5, 1, 2), b_grid = c(1, 1.25), interpolate_inputs = TRUE,
                   progress = FALSE))
  py <- reticulate::py_run_string(paste(
    "import warnings",
    "from fdakpl import FunctionalRegression, datasets",
    "ds = datasets.dti_first_visits().isel(sample=slice(0, 60))",
    "with warnings.catch_warnings():",
    "    warnings.simplefilter('ignore')",
    "    res = FunctionalRegression('rcst ~ cca', data=ds, width_grid=[0.5, 1, 2], b_grid=[1, 1.25],",
    "                               interpolate_inputs=True, progress=False).fit()",
    "fitted = res.fitted.values", sep = "\n"), local = TRUE)
  expect_lt(max(abs(unname(fitted(fit)) - py$fitted), na.rm = TRUE), 1e-10)
  one <- quiet(kpl(rcst ~ cca, d, width_grid = 1, b_grid = 1, interpolate_inputs = TRUE, progress = FALSE))
  expect_gt(max(abs(fitted(one) - fitted(fit)), na.rm = TRUE), 1e-8)
  expect_error(kpl(rcst ~ cca, d, width_grid = c(1, NA)), "`width_grid` must be positive finite numbers",
               class = "fdakpl_input_error")
  expect_error(kpl(rcst ~ cca, d, b_grid = "wide"), "`b_grid` must be one of \"auto\"", class = "fdakpl_input_error")
  expect_identical(fdakpl:::r_words("extend the grid (width_grid=[...], multiples of the median heuristic)"),
                   "extend the grid (width_grid = c(...), multiples of the median heuristic)")
  expect_identical(fdakpl:::r_words("b_grid=[...] tries others"), "b_grid = c(...) tries others")
  msgs <- messages_of(kpl(rcst ~ cca + sex, d, interpolate_inputs = TRUE, progress = FALSE))
  expect_false(any(grepl("=\\[|np\\.|\\[\\.\\.\\.\\]", msgs)))
})

test_that("27.14 plot() passes graphical parameters to matplot(); which = 1, 2; samples checked", {
  need_python()
  d <- first_visits()[1:30, ]
  fit <- fit27(rcst ~ cca, d)
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off(), add = TRUE)
  grDevices::dev.control("enable")
  expect_identical(plot(fit, main = "My title 27", xlab = "arc length", ylab = "FA", ylim = c(-1, 2)), fit)
  shown <- utils::capture.output(utils::str(grDevices::recordPlot()[[1]]))
  expect_true(any(grepl("My title 27", shown)) && any(grepl("arc length", shown)))
  expect_equal(graphics::par("usr")[3:4], c(-1, 2) + c(-0.12, 0.12))  # ylim (extended by 4%)
  expect_identical(plot(fit, which = 2, main = "res", pch = 1), fit)
  expect_identical(plot(fit, which = 1, samples = 2:3, col = "red"), fit)
  expect_error(plot(fit, samples = 0), "`samples` must be row numbers between 1 and 30", class = "fdakpl_input_error")
  expect_error(plot(fit, samples = "nobody"), "not in the model", class = "fdakpl_input_error")
  expect_error(plot(fit, which = 3), "`which` must be 1", class = "fdakpl_input_error")
  m <- plot_surface(quiet(kpl(rcst ~ cca, d, kernel = list(cca = kpl_kernel("linear")), lambda = 1e-3,
                              interpolate_inputs = TRUE, progress = FALSE)), "cca", main = "surface 27", xlab = "s")
  expect_true(is.matrix(m))
})

test_that("27.15 one-column matrices (scale(), poly(x, 1)) and poly(x, 2) are scalar covariates, predicted as lm() does", {
  need_python()
  v <- first_visits()
  v <- v[!is.na(v$pasat), ]
  train <- v[1:70, ]
  new <- v[71:80, ]
  a <- quiet(fit27(rcst ~ cca + scale(pasat), train))
  z <- train
  z$z <- as.vector(scale(train$pasat))
  b <- quiet(fit27(rcst ~ cca + z, z))
  expect_identical(unname(fitted(a)), unname(fitted(b)))
  # new data are scaled by the training mean and sd (lm()'s predvars), not their own
  new_z <- transform(new, z = (pasat - mean(train$pasat)) / sd(train$pasat))
  expect_equal(quiet(predict(a, new)), quiet(predict(b, new_z)), tolerance = 1e-12)
  p1 <- quiet(fit27(rcst ~ cca + poly(pasat, 1), train))
  q <- train
  q$q <- as.vector(poly(train$pasat, 1))
  expect_identical(unname(fitted(p1)), unname(fitted(quiet(fit27(rcst ~ cca + q, q)))))
  p2 <- quiet(fit27(rcst ~ cca + poly(pasat, 2), train))
  basis <- poly(train$pasat, 2)
  cols <- train
  cols$p_1 <- basis[, 1]
  cols$p_2 <- basis[, 2]
  two <- quiet(fit27(rcst ~ cca + p_1 + p_2, cols))
  expect_equal(unname(fitted(p2)), unname(fitted(two)), tolerance = 1e-12)
  new_basis <- predict(basis, new$pasat)
  expect_equal(unname(quiet(predict(p2, new))),
               unname(quiet(predict(two, transform(new, p_1 = new_basis[, 1], p_2 = new_basis[, 2])))), tolerance = 1e-12)
  expect_identical(p2$kinds[["poly(pasat, 2)"]], "scalars")
})

test_that("27.16 kernel = list() by the formula's names (backquotes optional); scalar terms share \"scalars\"", {
  need_python()
  d <- first_visits()[1:40, ]
  e <- data.frame(pasat = d$pasat)
  e$`my cca` <- d$cca
  e$rcst <- d$rcst
  e <- e[!is.na(e$pasat), ]
  err <- expect_error(kpl(rcst ~ `my cca` + pasat, e, kernel = list(pasat = kpl_kernel("gaussian", sigma = 2))),
                      class = "fdakpl_input_error")
  expect_match(conditionMessage(err),
               "`kernel` names the numeric scalar term 'pasat': numeric scalar terms share one kernel, named \"scalars\"",
               fixed = TRUE)
  k <- kpl_kernel("linear")
  plain <- quiet(fit27(rcst ~ `my cca` + pasat, e, kernel = list(`my cca` = k)))
  quoted <- quiet(fit27(rcst ~ `my cca` + pasat, e, kernel = list("`my cca`" = k)))
  expect_identical(fitted(plain), fitted(quoted))
  expect_gt(max(abs(fitted(plain) - fitted(quiet(fit27(rcst ~ `my cca` + pasat, e)))), na.rm = TRUE), 1e-6)
  g <- seq(0, 2, length.out = 93)
  expect_identical(fitted(quiet(fit27(rcst ~ `my cca`, e, grid = list(`my cca` = g)))),
                   fitted(quiet(fit27(rcst ~ `my cca`, e, grid = list("`my cca`" = g)))))
  expect_error(kpl(rcst ~ `my cca`, e, kernel = list(cca = k)), "`kernel` names 'cca', which is not a term of the formula",
               class = "fdakpl_input_error")
  expect_identical(coef_surface(plain, "my cca"), coef_surface(plain, "`my cca`"))
})

test_that("27.17 subset takes negative row numbers and row names, as lm()", {
  need_python()
  d <- first_visits()[1:40, ]
  fit_sub <- function(rows) kpl(rcst ~ cca, d, subset = rows, lambda = 1e-2, interpolate_inputs = TRUE, progress = FALSE)
  ref <- fit_sub(6:40)
  expect_identical(fitted(kpl(rcst ~ cca, d, subset = -(1:5), lambda = 1e-2, interpolate_inputs = TRUE,
                              progress = FALSE)), fitted(ref))
  expect_identical(fitted(fit_sub(rownames(d)[6:40])), fitted(ref))
  expect_identical(fitted(fit_sub(factor(rownames(d)[6:40]))), fitted(ref))
  expect_error(fit_sub(c("nobody", rownames(d)[1])), "`subset` names rows that `data` does not have: 'nobody'",
               class = "fdakpl_input_error")
  expect_error(fit_sub(c(-1, 2)), "mixes positive and negative", class = "fdakpl_input_error")
  expect_error(fit_sub(41), "between 1 and 40", class = "fdakpl_input_error")
})

test_that("27.18 formula(), model.frame(data =), residuals(type =), sigma() and deviance() answer as for lm()", {
  need_python()
  d <- first_visits()[1:50, c("rcst", "cca", "pasat")]
  d <- d[!is.na(d$pasat), ]
  fit <- quiet(fit27(rcst ~ ., d))
  expect_identical(deparse(formula(fit)), "rcst ~ cca + pasat")
  expect_identical(deparse(formula(lm(pasat ~ ., d[, c("pasat", "cca")]))), "pasat ~ cca")  # lm() expands too
  new <- d[1:5, ]
  new$pasat <- new$pasat + 1
  mf <- model.frame(fit, data = new)
  expect_identical(nrow(mf), 5L)
  expect_identical(rownames(mf), rownames(new))
  expect_identical(mf$pasat, new$pasat)
  expect_identical(unclass(mf$rcst), new$rcst)
  expect_identical(nrow(model.frame(fit, data = d, subset = pasat > 50)), sum(d$pasat > 50))
  expect_identical(model.frame(fit), fit$model)
  expect_error(model.frame(fit, data = new[, c("cca", "pasat")]), "the formula names 'rcst', not found",
               class = "fdakpl_input_error")
  expect_identical(residuals(fit, type = "pearson"), residuals(fit))
  expect_identical(residuals(fit, type = "working"), residuals(fit))
  expect_error(residuals(fit, type = "partial"), "partial residuals need an additive model", class = "fdakpl_input_error")
  rss <- sum(residuals(fit)^2, na.rm = TRUE)
  expect_identical(deviance(fit), rss)
  n_obs <- sum(!is.na(d$rcst))
  expect_equal(sigma(fit)^2 * (n_obs - fit$edf), rss, tolerance = 1e-12)
  expect_gt(fit$edf, 1)
  expect_lt(sigma(fit), sqrt(rss / n_obs) * 1.5)
})

test_that("27.19 no Python syntax reaches the R user", {
  need_python()
  d <- first_visits()[1:40, ]
  expect_error(kpl(rcst ~ cca, d, dictionary = "fourier", level = 3L), "the \"fourier\" dictionary has none: drop `level`",
               class = "fdakpl_input_error")
  msgs <- messages_of(kpl(rcst ~ cca, d, lambda = c(1e-9, 1e-8), interpolate_inputs = TRUE, progress = FALSE))
  expect_true(any(grepl("extend the grid (lambda = 10^seq(...))", msgs, fixed = TRUE)))
  msgs <- messages_of(kpl(rcst ~ cca, d, lam_grid = c(1e-9, 1e-8), interpolate_inputs = TRUE, progress = FALSE))
  expect_true(any(grepl("extend the grid (lam_grid = 10^seq(...))", msgs, fixed = TRUE)))
  ctx <- list(names = list(cca_x = "cca.x"))
  expect_identical(fdakpl:::r_words("refit with kernels={'cca_x': Linear()} or", ctx),
                   "refit with kernel = list(cca.x = kpl_kernel(\"linear\")) or")
  expect_identical(fdakpl:::r_words("pass domain=(lo, hi) to the dictionary"), "pass domain = c(lo, hi) to the dictionary")
  expect_identical(fdakpl:::r_words("Fourier.__init__() got an unexpected keyword argument 'level'"),
                   "the Fourier constructor does not take `level`")
  expect_identical(fdakpl:::r_words("extend the grid (lam_grid=np.geomspace(...))", list(lambda_grid = "lambda")),
                   "extend the grid (lambda = 10^seq(...))")
  expect_identical(fdakpl:::r_words("e.g. lam_grid=np.geomspace(1e-8, 1, 21)"),
                   "e.g. lam_grid = exp(seq(log(1e-8), log(1), length.out = 21))")
  expect_identical(fdakpl:::r_words("use kind='simultaneous' or a larger alpha"),
                   "use band = \"simultaneous\" or a larger alpha")
  expect_identical(fdakpl:::r_words("n_components=300 exceeds n=54; (interpolate_inputs=True), param_grid={'sigma': [...]}"),
                   "n_components = 300 exceeds n = 54; (interpolate_inputs = TRUE), param_grid = list(sigma = c(...))")
  y <- d
  y$rcst[, 1] <- NA  # a location no curve observes
  msgs <- messages_of(fit <- kpl(rcst ~ cca, y, interpolate_inputs = TRUE, progress = FALSE))
  expect_false(any(grepl("Mean of empty slice", msgs)))
  text <- paste(c(fit$python_summary, fit$notes), collapse = "\n")
  expect_match(text, "interpolate_inputs = TRUE", fixed = TRUE)
  expect_false(grepl("=True|=\\[|np\\.", text))
})

test_that("27.20 approximations from R: kpl_approx() and approx = \"nystroem\"", {
  need_python()
  d <- first_visits()
  k <- kpl_kernel("gaussian", sigma = 0.5)
  # the approximate route integrates partially observed curves as the exact route does (dense curves with gaps:
  # their interpolants, filled chunk by chunk as it streams them)
  exact <- fit27(rcst ~ cca, d[1:60, ], kernel = k, output_matrix = 1)
  expect_identical(exact$py$estimator$integration_, "interpolate")
  expect_error(fit27(rcst ~ cca, d[1:60, ], integration = "trapz"), "`integration` must be one of",
               class = "fdakpl_input_error")
  ny_all <- fit27(rcst ~ cca, d[1:60, ], kernel = k, output_matrix = 1, approx = "nystroem")  # a landmark per curve
  expect_lt(max(abs(predict(ny_all, d[61:70, ]) - predict(exact, d[61:70, ]))), 1e-6)  # exact KPL
  ny <- fit27(rcst ~ cca, d[1:60, ], approx = kpl_approx("nystroem", n_components = 20, random_state = 3))
  rff <- fit27(rcst ~ cca, d[1:60, ], kernel = kpl_kernel("gaussian", sigma = 0.5),
               approx = kpl_approx("random_features", n_components = 200))
  py <- reticulate::py_run_string(paste(
    "import warnings",
    "from fdakpl import FunctionalRegression, Gaussian, datasets",
    "from fdakpl.solvers.features import Nystroem, RandomFourierFeatures",
    "ds = datasets.dti_first_visits()",
    "kw = dict(lam=1e-2, interpolate_inputs=True, progress=False)",
    "with warnings.catch_warnings():",
    "    warnings.simplefilter('ignore')",
    "    ny = FunctionalRegression('rcst ~ cca', ds.isel(sample=slice(0, 60)), approx=Nystroem(20, random_state=3), **kw).fit()",
    "    rff = FunctionalRegression('rcst ~ cca', ds.isel(sample=slice(0, 60)), kernel=Gaussian(0.5),",
    "                               approx=RandomFourierFeatures(200, random_state=0), **kw).fit()",
    "ny_pred = ny.predict(ds.isel(sample=slice(60, 70))).values",
    "rff_pred = rff.predict(ds.isel(sample=slice(60, 70))).values", sep = "\n"), local = TRUE)
  expect_lt(max(abs(unname(predict(ny, d[61:70, ])) - py$ny_pred)), 1e-10)
  expect_lt(max(abs(unname(predict(rff, d[61:70, ])) - py$rff_pred)), 1e-10)
  expect_identical(dim(coef(ny)), c(20L, ncol(coef(exact))))
  expect_error(fit27(rcst ~ cca, d[1:10, ], approx = kpl_approx("nystroem", n_components = 20)),
               "n_components = 20\\): at most one landmark per curve, and the fit has 10 curves", class = "fdakpl_input_error")
  expect_error(kpl(rcst ~ cca, d, lambda = "cv", approx = "nystroem"), "not \"cv\"", class = "fdakpl_input_error")
  expect_error(kpl(rcst ~ cca, d, approx = "svd"), "`approx` must be one of", class = "fdakpl_input_error")
  expect_output(print(kpl_approx("nystroem", 50)), "Nystroem approximation of the input kernel: 50 landmarks")
})

test_that("27.21 fdakpl_python() reaches the submodules ?fdakpl_python names", {
  need_python()
  expect_true(reticulate::py_has_attr(fdakpl_python("r.bridge"), "fit_from_r"))
  expect_true(reticulate::py_has_attr(fdakpl_python("r.convert"), "r_to_xarray"))
  rd <- tools::Rd_db("fdakpl")[["install_fdakpl.Rd"]]
  args <- rd[vapply(rd, attr, character(1), "Rd_tag") == "\\arguments"][[1L]]
  item <- Filter(function(it) identical(attr(it, "Rd_tag"), "\\item") &&
                   identical(paste(unlist(it[[1L]]), collapse = ""), "submodule"), args)[[1L]]
  text <- paste(unlist(item[[2L]]), collapse = "")
  named <- gsub("\"", "", unique(regmatches(text, gregexpr("\"[a-z_.]+\"", text))[[1L]]))
  expect_true(all(c("r.bridge", "r.convert") %in% named))
  for (m in named) {
    expect_true(inherits(fdakpl_python(m), "python.builtin.module"), info = m)
  }
})

test_that("27.22 an interrupted lambda = 'cv' fit with workers leaves no semaphore behind", {
  need_python()
  skip_if_not(dir.exists("/proc/self"), "needs /proc (Linux)")
  dir <- tempfile("interrupt")
  dir.create(dir)
  script <- file.path(dir, "fit.R")
  writeLines(c(
    "library(fdakpl)",
    "d <- dti(source = 'bundled'); d <- d[rep(seq_len(nrow(d)), 2), ][1:520, ]",
    sprintf("writeLines(as.character(Sys.getpid()), '%s')", file.path(dir, "pid")),
    "r <- tryCatch(kpl(rcst ~ cca, d, lambda = 'cv', cv = 5, n_jobs = 2, loss = 'logcosh',",
    "                  interpolate_inputs = TRUE, progress = FALSE), interrupt = function(e) 'interrupted')",
    "cat('result:', if (is.character(r)) r else 'finished', '\\n')",
    "fit <- kpl(rcst ~ cca, d[1:30, ], lambda = 1e-2, interpolate_inputs = TRUE, progress = FALSE)",
    "cat('next fit:', nobs(fit), '\\n')"), script)
  log <- file.path(dir, "log")
  libs <- paste(.libPaths(), collapse = .Platform$path.sep)
  system2(file.path(R.home("bin"), "Rscript"), c("--vanilla", shQuote(script)), stdout = log, stderr = log,
          wait = FALSE, env = c(paste0("R_LIBS=", libs), paste0("RETICULATE_PYTHON=", Sys.getenv("RETICULATE_PYTHON"))))
  pid_file <- file.path(dir, "pid")
  deadline <- Sys.time() + 120
  workers <- character()
  while (Sys.time() < deadline) {
    if (file.exists(pid_file) && length(pid <- readLines(pid_file, warn = FALSE))) {
      workers <- worker_processes(as.integer(pid))
      if (length(workers) > 0L) break
    }
    Sys.sleep(0.5)
  }
  expect_gt(length(workers), 0L)  # the fit got as far as its worker processes
  Sys.sleep(1)
  tools::pskill(as.integer(pid), tools::SIGINT)
  deadline <- Sys.time() + 120
  while (Sys.time() < deadline && !any(grepl("next fit", readLines(log, warn = FALSE)))) Sys.sleep(0.5)
  Sys.sleep(3)  # R exits after the second fit
  out <- paste(readLines(log, warn = FALSE), collapse = "\n")
  expect_match(out, "result: interrupted")
  expect_match(out, "next fit: 30")
  expect_false(grepl("leaked", out))
})
