test_that("the Python side is found, imported lazily and has NumPy < 2", {
  need_python()
  config <- fdakpl_config()
  expect_true(file.exists(config$python))
  expect_true(numeric_version(config$numpy) < "2")
  expect_identical(config$R, paste(R.version$major, R.version$minor, sep = "."))
  expect_s3_class(fdakpl_python(), "python.builtin.module")
  # Python runs inside R here: fdakpl knows, and its loaders then avoid rpy2
  expect_true(fdakpl_python("r.convert")$inside_r())
  expect_false(fdakpl_python("r.convert")$rpy2_available())
  ds <- fdakpl_python("datasets")$load_dti()
  expect_match(ds$attrs[["source"]], "rdata")
})

test_that("a missing Python module is an R error that says how to fix it", {
  need_python()
  err <- expect_error(fdakpl:::check_python("fdakpl_no_such_module"), class = "fdakpl_setup_error")
  expect_match(conditionMessage(err), "Python module 'fdakpl_no_such_module' is not installed", fixed = TRUE)
  expect_match(conditionMessage(err), "install_fdakpl()", fixed = TRUE)
  expect_match(conditionMessage(err), "RETICULATE_PYTHON", fixed = TRUE)
})

test_that("a missing Python is an R error that says how to fix it", {
  need_python()
  out <- run_r("library(fdakpl); x <- tryCatch(dti(source = 'bundled'), error = function(e) e); cat(class(x)[1], conditionMessage(x))",
               env = "RETICULATE_PYTHON=/nonexistent/bin/python")
  expect_match(out, "fdakpl_setup_error", fixed = TRUE)
  expect_match(out, "Python could not be started", fixed = TRUE)
  expect_match(out, "/nonexistent/bin/python", fixed = TRUE)
  expect_match(out, "install_fdakpl()", fixed = TRUE)
})

test_that("a Python with NumPy 2 is an R error that asks for numpy<2", {
  need_python()
  numpy2 <- Sys.getenv("FDAKPL_TEST_NUMPY2_PYTHON")
  if (!nzchar(numpy2)) {
    if (python_required()) stop("set FDAKPL_TEST_NUMPY2_PYTHON to a Python with NumPy 2 and fdakpl (tools/test-r does)")
    skip("FDAKPL_TEST_NUMPY2_PYTHON is not set")
  }
  out <- run_r("library(fdakpl); x <- tryCatch(kpl(y ~ x, list(x = matrix(0, 2, 2), y = matrix(0, 2, 2))), error = function(e) e); cat(class(x)[1], conditionMessage(x))",
               env = paste0("RETICULATE_PYTHON=", numpy2))
  if (utils::packageVersion("reticulate") < "1.36") {
    expect_match(out, "fdakpl_setup_error", fixed = TRUE)
    expect_match(out, "needs numpy<2", fixed = TRUE)
    expect_match(out, "install_fdakpl()", fixed = TRUE)
  } else {
    expect_false(grepl("fdakpl_setup_error", out, fixed = TRUE))
  }
})

test_that("install_fdakpl() checks its arguments", {
  expect_error(install_fdakpl(package = ""), "must be one string")
  expect_error(install_fdakpl(package = file.path(tempdir(), "no-such-checkout"), editable = TRUE),
               "needs `package` to be the path of a checkout")
})

test_that("a directory named fdakpl in the working directory does not shadow the Python package", {
  need_python()
  dir <- tempfile("shadow")
  dir.create(file.path(dir, "fdakpl"), recursive = TRUE)
  out <- run_r(sprintf("setwd('%s'); library(fdakpl); d <- dti(source = 'bundled'); cat('version', fdakpl_config()$fdakpl, 'rows', nrow(d))",
                       dir),
               env = paste0("RETICULATE_PYTHON=", Sys.getenv("RETICULATE_PYTHON")))
  expect_match(out, sprintf("version %s rows 382", fdakpl_config()$fdakpl), fixed = TRUE)
})
