# Issue 29: subject effects (functional random intercepts) in the formula: re(ID) and pffr's s(ID, bs = "re").

ms_visits <- function() {
  d <- dti(source = "bundled")
  d <- d[d$case == 1, ]
  d[d$ID %in% unique(d$ID)[1:25], ]
}
fit29 <- function(formula, data, ...) {
  suppressWarnings(kpl(formula, data, interpolate_inputs = TRUE, progress = FALSE, ...), classes = "fdakpl_warning")
}

test_that("29 re(ID) and pffr's s(ID, bs = \"re\") are the same subject term", {
  need_python()
  d <- ms_visits()
  a <- fit29(rcst ~ cca + re(ID), d)
  b <- fit29(rcst ~ cca + s(ID, bs = "re"), d)
  expect_equal(fitted(a), fitted(b), tolerance = 1e-10)
  expect_equal(a$lambda, b$lambda)
  plain <- fit29(rcst ~ cca, d)
  expect_lt(mean((d$rcst - fitted(a))^2, na.rm = TRUE), mean((d$rcst - fitted(plain))^2, na.rm = TRUE))
})

test_that("29 subject labels of any type; renaming them changes nothing", {
  need_python()
  d <- ms_visits()
  a <- fit29(rcst ~ cca + re(ID), d)
  d2 <- d
  d2$ID <- factor(paste0("patient-", rev(d$ID)))[match(d$ID, rev(d$ID))]  # a factor, other names and order
  d2$ID <- factor(paste0("p", 1e6 - d$ID))
  b <- fit29(rcst ~ cca + re(ID), d2)
  expect_equal(unname(fitted(a)), unname(fitted(b)), tolerance = 1e-10)
  d3 <- d
  d3$ID <- as.character(d$ID)
  expect_equal(unname(fitted(fit29(rcst ~ cca + s(ID, bs = "re"), d3))), unname(fitted(a)), tolerance = 1e-10)
})

test_that("29 predict() on a new subject gives the population prediction, and says so", {
  need_python()
  d <- ms_visits()
  fit <- fit29(rcst ~ cca + re(ID), d)
  new <- d[1:2, ]
  new$ID <- c(-1, -2)
  expect_warning(p <- predict(fit, new), "population prediction")
  expect_equal(dim(p), c(2L, ncol(d$rcst)))
  expect_true(all(is.finite(p)))
  known <- predict(fit, d[1:2, ])
  expect_false(isTRUE(all.equal(unname(known), unname(p))))
})

test_that("29 new_subjects = TRUE tunes by leaving out whole subjects; other s() terms are refused", {
  need_python()
  d <- ms_visits()
  fit <- fit29(rcst ~ cca + re(ID), d, new_subjects = TRUE)
  expect_equal(fit$py$criterion$key, "group_loo")
  expect_error(fit29(rcst ~ cca + s(ID), d), "s\\(ID, bs = \"re\"\\) or re\\(ID\\)")
  expect_error(fit29(rcst ~ cca + s(ID, bs = "ps"), d), "no smooth terms")
})
