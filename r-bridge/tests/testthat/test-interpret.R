# coef_surface(), effect_surface(), partial_dependence(), plot_surface() (R/interpret.R).

trapezoid_weights <- function(grid) {
  d <- diff(grid)
  (c(d, 0) + c(0, d)) / 2
}

linear_fit <- function(d) {
  kpl(rcst ~ cca + sex, d, kernel = list(cca = kpl_kernel("linear"), sex = kpl_kernel("categorical", sigma = 2)),
      lambda = 1e-6, combine = "sum", interpolate_inputs = TRUE, progress = FALSE)
}

test_that("coef_surface() is labelled and reproduces the fitted curves with the trapezoidal weights", {
  need_python()
  d <- first_visits()
  fit <- kpl(rcst ~ cca, d, kernel = list(cca = kpl_kernel("linear")), lambda = 1e-6, interpolate_inputs = TRUE,
             progress = FALSE)
  beta <- coef_surface(fit, "cca")
  expect_identical(dim(beta), c(ncol(d$cca), length(fit$grid)))
  expect_identical(names(dimnames(beta)), c("cca_loc", "rcst_loc"))
  expect_identical(dimnames(beta)[[2L]], as.character(fit$grid))
  s <- attr(beta, "coordinates")[[1L]]
  complete <- which(rowSums(is.na(d$cca)) == 0)  # curves used as given (no interpolation)
  recon <- sweep(d$cca[complete, ] %*% (trapezoid_weights(s) * unclass(beta)), 2L, fit$mean_function, "+")
  expect_lt(max(abs(recon - fitted(fit)[complete, ])) / max(abs(fitted(fit))), 1e-8)
  expect_equal(unclass(effect_surface(fit, "cca")), unclass(beta), tolerance = 1e-8, ignore_attr = TRUE)
})

test_that("effect_surface() works for a Gaussian kernel; partial_dependence() averages predictions", {
  need_python()
  d <- first_visits()
  fit <- kpl(rcst ~ cca + sex, d, lambda = 1e-3, interpolate_inputs = TRUE, progress = FALSE)
  eff <- effect_surface(fit, "cca")
  expect_identical(dim(eff), c(ncol(d$cca), length(fit$grid)))
  expect_true(all(is.finite(eff)))
  pd <- partial_dependence(fit, "sex")
  expect_identical(rownames(pd), c("female", "male"))
  by_hand <- colMeans(predict(fit, newdata = transform(d, sex = factor(rep("male", nrow(d)),
                                                                        levels = levels(d$sex)))))
  expect_equal(unname(pd["male", ]), unname(by_hand), tolerance = 1e-10)
})

test_that("plot_surface() draws and errors name the argument", {
  need_python()
  d <- first_visits()
  fit <- linear_fit(d)
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off())
  m <- plot_surface(fit, "cca")
  expect_identical(attr(m, "kind"), "coefficient")
  m2 <- plot(fit, type = "surface", term = "cca")  # the plot method routes to plot_surface()
  expect_equal(unclass(m2), unclass(m))
  expect_error(coef_surface(fit, "rcst"), "`term` must be one of the model's inputs")
  expect_error(coef_surface(list(), "cca"), "fitted by kpl")
})
