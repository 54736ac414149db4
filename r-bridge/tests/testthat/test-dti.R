test_that("dti() is refund's data.frame with matrix columns", {
  need_python()
  d <- dti(source = "bundled")
  expect_s3_class(d, "data.frame")
  expect_identical(dim(d), c(382L, 9L))
  expect_true(is.matrix(d$cca) && is.numeric(d$cca))
  expect_identical(dim(d$cca), c(382L, 93L))
  expect_identical(dim(d$rcst), c(382L, 55L))
  expect_identical(sum(is.na(d$rcst)), 738L)
  expect_identical(sum(is.na(d$cca)), 36L)
  expect_identical(levels(d$sex), c("male", "female"))
  expect_identical(rownames(d$cca)[1:2], c("1001_1", "1002_1"))
  expect_identical(colnames(d$rcst)[1], "rcst_1")
  expect_identical(nrow(first_visits()), 100L)
})

test_that("dti() reads refund when it is installed (a stand-in package named refund here)", {
  need_python()
  lib <- install_refund_standin()
  old <- .libPaths()
  on.exit(.libPaths(old), add = TRUE)
  .libPaths(c(lib, old))
  from_refund <- dti(source = "refund")
  expect_identical(from_refund, dti(source = "bundled"))
  expect_identical(dti(), from_refund)
  # the Python loader cannot use rpy2 inside R, and says so when asked for it
  err <- expect_error(fdakpl_python("datasets")$load_dti(source = "refund"))
  expect_match(conditionMessage(err), "rpy2")
})

test_that("dti(source = 'refund') without refund is a clear error", {
  need_python()
  if (nzchar(system.file(package = "refund"))) {
    expect_s3_class(dti(source = "refund"), "data.frame")
  } else {
    expect_error(dti(source = "refund"), "R package refund is not installed", class = "fdakpl_error")
    expect_identical(dti(), dti(source = "bundled"))
  }
})
