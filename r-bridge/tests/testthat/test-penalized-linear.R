# kpl_kernel("penalized_linear"): Python's PenalizedLinear (a linear kernel whose coefficient function is penalised
# by its roughness) reachable from R, its parameters checked in R, the fit equal to the same fit made in Python.

test_that("kpl_kernel(\"penalized_linear\") fits what Python's PenalizedLinear fits, with its order and null_weight", {
  need_python()
  d <- first_visits()[1:60, ]
  py <- reticulate::py_run_string(paste(
    "from fdakpl import FunctionalRegression, PenalizedLinear, datasets",
    "ds = datasets.dti_first_visits().isel(sample=slice(0, 60))",
    "fits = {}",
    "for key, kern in {'default': PenalizedLinear(), 'order1': PenalizedLinear(order=1, null_weight=100.0)}.items():",
    "    res = FunctionalRegression('rcst ~ cca', data=ds, kernels={'cca': kern}, lam=1e-3, interpolate_inputs=True,",
    "                               progress=False).fit()",
    "    fits[key] = res.predict(ds).values",
    sep = "\n"), local = TRUE)
  fit <- kpl(rcst ~ cca, d, kernel = kpl_kernel("penalized_linear"), lambda = 1e-3, interpolate_inputs = TRUE,
             progress = FALSE)
  kern <- fit$py$kernels[["cca"]]
  expect_identical(class(kern)[1], "fdakpl.roughness_kernels.PenalizedLinear")
  expect_identical(kern$order, 2L)
  expect_identical(kern$null_weight, 1e4)
  expect_lt(max(abs(unname(predict(fit, d)) - py$fits$default)), 1e-10)
  other <- kpl(rcst ~ cca, d, kernel = list(cca = kpl_kernel("penalized_linear", order = 1, null_weight = 100)),
               lambda = 1e-3, interpolate_inputs = TRUE, progress = FALSE)
  expect_identical(other$py$kernels[["cca"]]$order, 1L)
  expect_lt(max(abs(unname(predict(other, d)) - py$fits$order1)), 1e-10)
  expect_gt(max(abs(py$fits$order1 - py$fits$default)), 1e-6)  # the parameters change the fit: they reached Python
  expect_output(print(kpl_kernel("penalized_linear")),
                "Penalized linear kernel: roughness of order 2 penalised, polynomials of degree < 2 10000 times less")
})

test_that("kpl_kernel(\"penalized_linear\") refuses a width, unknown and bad parameters, naming them", {
  expect_error(kpl_kernel("penalized_linear", sigma = 1), "takes `order` \\(1, 2 or 3\\) and `null_weight`.*not `sigma`",
               class = "fdakpl_input_error")
  expect_error(kpl_kernel("penalized_linear", width = 1), "not `width`", class = "fdakpl_input_error")
  expect_error(kpl_kernel("penalized_linear", 2, 3), "not `sigma`, an unnamed argument", class = "fdakpl_input_error")
  expect_error(kpl_kernel("penalized_linear", order = 4), "`order` of kpl_kernel\\(\"penalized_linear\"\\) must be 1, 2 or 3",
               class = "fdakpl_input_error")
  expect_error(kpl_kernel("penalized_linear", order = 1.5), "`order` must be a whole number", class = "fdakpl_input_error")
  expect_error(kpl_kernel("penalized_linear", null_weight = 0.5), "must be a number >= 1", class = "fdakpl_input_error")
  expect_error(kpl_kernel("penalized_linear", null_weight = NA), "`null_weight` must be one finite number",
               class = "fdakpl_input_error")
  expect_identical(kpl_kernel("penalized_linear", order = 3L)$order, 3L)
  expect_identical(kpl_kernel("gaussian")$type, "gaussian")  # the other kernels as before
  expect_error(kpl_kernel("gaussian", order = 2), "takes `sigma` \\(the width\\), not `order`", class = "fdakpl_input_error")
})
