# Issue 16, R items 6-11: say things once, in R's words.

test_that("16.6 withCallingHandlers() catches Python warnings as fdakpl_warning, from any bridge call", {
  need_python()
  got <- NULL
  value <- withCallingHandlers(
    fdakpl:::py_call(reticulate::py_eval("__import__('warnings').warn('from Python') or 7")),
    warning = function(w) {
      got <<- w
      invokeRestart("muffleWarning")
    })
  expect_identical(value, 7L)
  expect_s3_class(got, "fdakpl_warning")
  expect_identical(got$python_category, "UserWarning")
  expect_match(conditionMessage(got), "from Python [Python UserWarning]", fixed = TRUE)
  # once per distinct cause
  n <- 0L
  withCallingHandlers(
    fdakpl:::py_call(reticulate::py_eval("[__import__('warnings').warn('same') for _ in range(5)]")),
    fdakpl_warning = function(w) {
      n <<- n + 1L
      invokeRestart("muffleWarning")
    })
  expect_identical(n, 1L)
})

test_that("16.7 errors in R's words: lambda, NA advice, interpolate_inputs = TRUE, factor(), fdakpl_input_error", {
  need_python()
  d <- first_visits()[1:40, ]
  expect_error(kpl(rcst ~ cca, d, lambda = "gvc"), "lambda", class = "fdakpl_input_error")
  expect_error(kpl(rcst ~ cca, d, lambda = "gvc"), "`lambda` must be \"gcv\", \"loo\" or \"cv\"")
  d$pasat[3] <- NA
  err <- expect_error(kpl(rcst ~ cca + pasat, d, interpolate_inputs = TRUE, na.action = na.fail),
                      class = "fdakpl_input_error")
  expect_false(grepl("ds.dropna", conditionMessage(err), fixed = TRUE))
  expect_match(conditionMessage(err), "na.action = na.omit", fixed = TRUE)
  err <- expect_error(kpl(rcst ~ cca, d, na.action = na.fail), class = "fdakpl_input_error")
  expect_match(conditionMessage(err), "interpolate_inputs = TRUE", fixed = TRUE)
  expect_false(grepl("True", conditionMessage(err), fixed = TRUE))
  fit <- kpl(rcst ~ cca + factor(sex), d, lambda = 1e-2, interpolate_inputs = TRUE, progress = FALSE)
  expect_identical(fit$levels[["factor(sex)"]], c("male", "female"))
  # a Python-side input problem is an fdakpl_input_error too
  expect_error(kpl(rcst ~ cca, d, dictionary = "nope", interpolate_inputs = TRUE, progress = FALSE),
               "unknown dictionary 'nope'", class = "fdakpl_input_error")
})

test_that("16.8 R data conventions: NA not NaN, readable column names, nobs(), na.action", {
  need_python()
  d <- dti(source = "bundled")
  expect_false(any(vapply(d, function(x) is.double(x) && any(is.nan(x)), logical(1))))
  expect_identical(sum(is.na(d$rcst)), 738L)
  f <- first_visits()
  fit <- kpl(rcst ~ cca, f, lambda = 1e-2, interpolate_inputs = TRUE, progress = FALSE)
  long <- as.data.frame(fit)
  expect_false(any(is.nan(long$residual)))
  expect_identical(sum(is.na(long$residual)), sum(is.na(f$rcst)))
  expect_false(any(is.nan(residuals(fit))))
  expect_identical(colnames(fitted(fit)), colnames(f$rcst))
  expect_identical(colnames(predict(fit, f[1:2, ])), colnames(f$rcst))
  at <- c(1 / 54, 0.5, 2 / 3)
  expect_identical(colnames(predict(fit, f[1:2, ], at = at)), c("0.0185", "0.5", "0.667"))
  noname <- list(cca = unname(f$cca), rcst = unname(f$rcst))
  fit2 <- kpl(rcst ~ cca, noname, lambda = 1e-2, interpolate_inputs = TRUE, progress = FALSE)
  expect_identical(colnames(fitted(fit2))[1:3], c("0", "0.0185", "0.037"))
  expect_identical(nobs(fit), 100L)
  g <- f
  g$pasat[1:4] <- NA
  expect_identical(nobs(kpl(rcst ~ cca + pasat, g, lambda = 1e-2, interpolate_inputs = TRUE, progress = FALSE)), 96L)
})

test_that("16.9 the R summary's training error is the Python summary's Training MSE", {
  need_python()
  fit <- kpl(rcst ~ cca, first_visits(), lambda = 1e-2, interpolate_inputs = TRUE, progress = FALSE)
  s <- summary(fit)
  expect_equal(s$mse, fit$train_mse, tolerance = 1e-12)
  py_mse <- as.numeric(regmatches(fit$python_summary, regexec("Training MSE: +([0-9.e+-]+)", fit$python_summary))[[1]][2])
  expect_equal(s$mse, py_mse, tolerance = 1e-3)
  out <- paste(capture.output(print(s)), collapse = "\n")
  expect_match(out, "Training MSE", fixed = TRUE)
  expect_false(grepl("RMSE", out, fixed = TRUE))
})

test_that("16.10 no Poetry warning from a directory with a pyproject.toml", {
  need_python()
  dir <- tempfile("poetry-project")
  dir.create(dir)
  writeLines(c("[tool.poetry]", "name = \"someone-else\"", "version = \"0.1.0\""), file.path(dir, "pyproject.toml"))
  out <- run_r(sprintf(paste(
    "Sys.unsetenv('RETICULATE_PYTHON'); setwd('%s'); library(fdakpl)",
    "withCallingHandlers(cat('python', fdakpl_config()$python, '\\n'), warning = function(w) cat('R WARNING:', conditionMessage(w), '\\n'))",
    sep = "; "), dir),
    env = paste0("RETICULATE_PYTHON_FALLBACK=", Sys.getenv("RETICULATE_PYTHON")))
  expect_match(out, paste("python", Sys.getenv("RETICULATE_PYTHON")), fixed = TRUE)
  expect_false(grepl("Poetry", out, fixed = TRUE))
  expect_false(grepl("R WARNING", out, fixed = TRUE))
})
