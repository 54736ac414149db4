# The same model fitted from R (data.frame with matrix columns -> kpl()) and
# from Python (xarray Dataset -> FunctionalRegression) must predict the same.
python_fit <- function(formula, train, test, at = NULL, extra = "") {
  code <- sprintf(paste(
    "import numpy as np",
    "from fdakpl import FunctionalRegression, datasets",
    "ds = datasets.dti_first_visits()",
    "res = FunctionalRegression('%s', data=ds.isel(sample=slice(%d, %d)), interpolate_inputs=True,",
    "                           progress=False%s).fit()",
    "fitted = res.fitted.values",
    "resid = res.resid.values",
    "coef = np.asarray(res.coef)",
    "lam = float(res.lam)",
    "pred = res.predict(newdata=ds.isel(sample=slice(%d, %d))).values",
    "pred_at = res.predict(newdata=ds.isel(sample=slice(%d, %d)), at=np.array(%s)).values",
    sep = "\n"), formula, train[1] - 1L, train[2], extra, test[1] - 1L, test[2], test[1] - 1L, test[2],
    if (is.null(at)) "[0.5]" else paste0("[", paste(format(at, digits = 17), collapse = ", "), "]"))
  reticulate::py_run_string(code, local = TRUE)
}

max_abs <- function(a, b) {
  a <- unname(as.matrix(a))
  b <- unname(as.matrix(b))
  stopifnot(identical(dim(a), dim(b)), identical(is.na(a), is.na(b)))
  max(abs(a - b), na.rm = TRUE)
}

test_that("kpl() from R predicts as FunctionalRegression from Python, to 1e-10", {
  need_python()
  d <- first_visits()
  at <- c(0.05, 0.33, 0.9)
  fit <- kpl(rcst ~ cca, d[1:70, ], lambda = 1e-3, interpolate_inputs = TRUE, progress = FALSE)
  py <- python_fit("rcst ~ cca", c(1L, 70L), c(71L, 100L), at = at, extra = ", lam=1e-3")
  expect_lt(max_abs(fitted(fit), py$fitted), 1e-10)
  expect_lt(max_abs(residuals(fit), py$resid), 1e-10)
  expect_lt(max_abs(coef(fit), py$coef), 1e-10)
  pred <- predict(fit, newdata = d[71:100, ])
  expect_identical(dim(pred), c(30L, 55L))
  expect_identical(rownames(pred), rownames(d)[71:100])
  expect_lt(max_abs(pred, py$pred), 1e-10)
  pred_at <- predict(fit, newdata = d[71:100, ], at = at)
  expect_equal(as.numeric(colnames(pred_at)), at)
  expect_lt(max_abs(pred_at, py$pred_at), 1e-10)
  # predictions are not trivial: they vary across samples and track the data
  expect_gt(sd(pred[, 10]), 1e-3)
})

test_that("coef() is alpha (sample x atom) for exact fits and the primal weights (feature x atom) with approx", {
  need_python()
  d <- first_visits()
  fit <- kpl(rcst ~ cca, d[1:70, ], lambda = 1e-3, interpolate_inputs = TRUE, progress = FALSE)
  py <- python_fit("rcst ~ cca", c(1L, 70L), c(71L, 100L), extra = ", lam=1e-3")
  a <- coef(fit)
  expect_identical(names(dimnames(a)), c("sample", "atom"))
  expect_identical(rownames(a), rownames(d)[1:70])
  expect_identical(colnames(a), as.character(seq_len(ncol(py$coef)) - 1L))
  expect_lt(max_abs(a, py$coef), 1e-10)
  nystroem <- "__import__('fdakpl.estimators.approx', fromlist=['Nystroem']).Nystroem(20, random_state=0)"
  approx <- reticulate::py_eval(nystroem)
  fa <- kpl(rcst ~ cca, d[1:70, ], lambda = 1e-3, interpolate_inputs = TRUE, progress = FALSE, approx = approx)
  pa <- python_fit("rcst ~ cca", c(1L, 70L), c(71L, 100L), extra = paste0(", lam=1e-3, approx=", nystroem))
  m <- coef(fa)
  expect_identical(dim(m), c(20L, ncol(a)))  # one row per feature of the map, not per curve
  expect_identical(names(dimnames(m)), c("feature", "atom"))
  expect_identical(rownames(m), as.character(0:19))
  expect_lt(max_abs(m, pa$coef), 1e-10)
  expect_lt(max_abs(predict(fa, newdata = d[71:100, ]), pa$pred), 1e-10)
  expect_gt(max(abs(m)), 0)
})

test_that("a scalar factor covariate and lambda chosen by GCV agree with Python too", {
  need_python()
  d <- first_visits()
  fit <- kpl(rcst ~ cca + C(sex), d[1:80, ], lambda = "gcv", interpolate_inputs = TRUE, progress = FALSE)
  py <- python_fit("rcst ~ cca + C(sex)", c(1L, 80L), c(81L, 100L), extra = ", lam='gcv'")
  expect_equal(fit$lambda, py$lam, tolerance = 1e-12)
  expect_lt(max_abs(fitted(fit), py$fitted), 1e-10)
  expect_lt(max_abs(predict(fit, d[81:100, ]), py$pred), 1e-10)
  expect_error(predict(fit, transform(d[81:82, ], sex = factor(c("male", "other")))),
               "levels 'other' that the model was not fitted with", class = "fdakpl_input_error")
})

test_that("dictionary arguments reach Python (wavelets db3 with 4 levels; B-splines)", {
  need_python()
  d <- first_visits()
  fit <- kpl(rcst ~ cca, d[1:70, ], dictionary = "db3", level = 4L, lambda = 1e-3, interpolate_inputs = TRUE,
             progress = FALSE)
  py <- python_fit("rcst ~ cca", c(1L, 70L), c(71L, 100L), extra = ", lam=1e-3, dictionary='db3', level=4")
  expect_lt(max_abs(predict(fit, d[71:100, ]), py$pred), 1e-10)
  expect_identical(ncol(coef(fit)), ncol(py$coef))
  bs <- kpl(rcst ~ cca, d[1:70, ], dictionary = "bspline", lambda = 1e-3, interpolate_inputs = TRUE, progress = FALSE)
  expect_false(ncol(coef(bs)) == ncol(coef(fit)) && max_abs(fitted(bs), fitted(fit)) < 1e-8)
})

test_that("the methods of class kpl are consistent with each other", {
  need_python()
  d <- first_visits()
  fit <- kpl(rcst ~ cca, d, lambda = 1e-2, interpolate_inputs = TRUE, progress = FALSE)
  expect_s3_class(fit, "kpl")
  y <- d$rcst
  obs <- !is.na(y)
  expect_identical(unname(is.na(residuals(fit))), unname(!obs))
  expect_equal(unname(residuals(fit)[obs]), unname((y - fitted(fit))[obs]), tolerance = 1e-12)
  expect_lt(max_abs(predict(fit), fitted(fit)), 1e-10)
  expect_identical(nrow(coef(fit)), 100L)
  expect_output(print(fit), "lambda = 0.01")
  s <- summary(fit)
  expect_s3_class(s, "summary.kpl")
  centred <- sweep(y, 2, colMeans(y, na.rm = TRUE))
  expect_equal(s$r_squared, 1 - sum(residuals(fit)^2, na.rm = TRUE) / sum(centred[obs]^2))
  expect_equal(s$mse, mean(rowMeans(residuals(fit)^2, na.rm = TRUE)))
  expect_output(print(s), "Terms (combined by product)", fixed = TRUE)  # one row per term
  expect_output(print(s), "LOO error:", fixed = TRUE)
  expect_output(print(summary(fit, diagnostics = "full")), "Excess-risk diagnostics", fixed = TRUE)
  expect_false(grepl("Excess-risk diagnostics", fit$python_summary, fixed = TRUE))
  long <- as.data.frame(fit)
  expect_identical(nrow(long), 100L * 55L)
  expect_identical(names(long), c("sample", "location", "observed", "fitted", "residual"))
  expect_equal(long$fitted, as.vector(fitted(fit)))
  expect_identical(long$sample[1:2], rownames(d)[1:2])
  lp <- predict(fit, d[1:3, ], format = "long")
  expect_identical(names(lp), c("sample", "location", "fit"))
  expect_equal(lp$fit, as.vector(predict(fit, d[1:3, ])))
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off(), add = TRUE)
  expect_identical(plot(fit), fit)
  expect_identical(plot(fit, which = "residuals", samples = rownames(d)[c(1, 5)]), fit)
  expect_error(plot(fit, samples = "nobody"), "not in the model")
})

test_that("list data, explicit grids and Python kernels are passed through", {
  need_python()
  d <- first_visits()
  cca <- d$cca
  cca[is.na(cca)] <- 0.5
  data <- list(cca = cca, rcst = d$rcst)
  fit_list <- kpl(rcst ~ cca, data, lambda = 1e-3, kernel = kpl_kernel("gaussian", sigma = 0.7), progress = FALSE)
  d$cca <- I(cca)
  fit_df <- kpl(rcst ~ cca, d, lambda = 1e-3,
                kernel = list(cca = kpl_kernel("gaussian", sigma = 0.7)), progress = FALSE)
  expect_lt(max_abs(fitted(fit_list), fitted(fit_df)), 1e-12)
  # the input grid matters (curves enter kernels through their L2 geometry)
  fit_grid <- kpl(rcst ~ cca, data, lambda = 1e-3, kernel = kpl_kernel("gaussian", sigma = 0.7), progress = FALSE,
                  grid = list(cca = seq(0, 2, length.out = 93)))
  expect_gt(max_abs(fitted(fit_grid), fitted(fit_list)), 1e-6)
  expect_lt(max_abs(predict(fit_grid, data), fitted(fit_grid)), 1e-10)
  expect_error(predict(fit_grid, list(cca = cca[, 1:90])), "has 90 columns but the model was fitted with 93",
               class = "fdakpl_input_error")
})

test_that("a model read back from disk asks to be refitted", {
  need_python()
  d <- first_visits()
  fit <- kpl(rcst ~ cca, d[1:30, ], lambda = 1e-2, interpolate_inputs = TRUE, progress = FALSE)
  path <- tempfile(fileext = ".rds")
  saveRDS(fit, path)
  back <- readRDS(path)
  expect_identical(fitted(back), fitted(fit))
  expect_error(predict(back, d[31:32, ]), "refit it with kpl\\(\\)")
})

test_that("a factor has its own kernel: level names, level order and kernels by R term name", {
  need_python()
  d <- first_visits()
  fit <- kpl(rcst ~ cca + sex, d, interpolate_inputs = TRUE, progress = FALSE)
  d2 <- d
  d2$sex <- factor(ifelse(d$sex == "male", "M", "F"), levels = c("M", "F"))  # renamed, other reference level
  fit2 <- kpl(rcst ~ cca + sex, d2, interpolate_inputs = TRUE, progress = FALSE)
  expect_lt(max_abs(fitted(fit2), fitted(fit)) / max(abs(fitted(fit))), 1e-10)
  fixed <- kpl(rcst ~ cca + sex, d, lambda = 1e-3, interpolate_inputs = TRUE, progress = FALSE,
               kernel = list(cca = kpl_kernel("gaussian", sigma = 0.5), sex = kpl_kernel("categorical", sigma = 1)))
  expect_match(fixed$python_summary, "C\\(sex\\) +factor +Categorical\\(sigma = 1\\)")  # its row of the term table
  expect_error(kpl(rcst ~ cca + pasat, d, interpolate_inputs = TRUE, kernel = list(pasat = "gaussian")),
               "numeric scalar terms share one kernel, named \"scalars\"", class = "fdakpl_input_error")
})
