# What the Python side receives from R's data (through fdakpl.r.bridge.dataset_from_columns).
prepared <- function(data, vars = names(data)) {
  f <- stats::reformulate(sprintf("`%s`", vars[-1]), response = as.name(vars[1]))
  fdakpl:::prepare_data(fdakpl:::formula_spec(f, data), data, na_action = "na.pass")
}
to_python <- function(data, vars = names(data)) {
  p <- prepared(data, vars)
  fdakpl:::bridge()$dataset_from_columns(p$columns, p$labels, NULL, p$levels)
}

py_values <- function(ds, name) {  # converted to R by reticulate (1-d arrays keep a dim)
  x <- ds[[name]]$values
  if (length(dim(x)) == 1L) as.vector(x) else x
}
py_list <- function(ds, name) reticulate::py_eval("lambda ds, n: ds[n].values.tolist()")(ds, name)

test_that("NA and NaN in matrix columns arrive as NaN, values unchanged", {
  need_python()
  m <- matrix(c(1, NA, NaN, 4, 5.5, 6, 7, 8, NA), 3, dimnames = list(c("a", "b", "c"), NULL))
  ds <- to_python(list(y = m, z = c(1, NA, 3)))
  got <- py_values(ds, "y")
  expect_identical(is.na(got), is.na(unname(m)))
  expect_identical(got[!is.na(got)], m[!is.na(m)])
  expect_identical(is.na(py_values(ds, "z")), c(FALSE, TRUE, FALSE))
  expect_identical(unlist(py_list(ds, "sample")), c("a", "b", "c"))
  expect_equal(py_values(ds, "y_loc"), c(0, 0.5, 1))
})

test_that("factors keep their levels and NA; characters and logicals convert", {
  need_python()
  data <- data.frame(f = factor(c("lo", NA, "hi", "lo"), levels = c("lo", "mid", "hi")),
                     s = c("b", "a", NA, "b"), l = c(TRUE, FALSE, NA, TRUE), stringsAsFactors = FALSE)
  ds <- to_python(data)
  expect_identical(unlist(ds$f$attrs[["levels"]]), c("lo", "mid", "hi"))
  f <- py_list(ds, "f")
  expect_identical(f[c(1, 3, 4)], list("lo", "hi", "lo"))
  expect_true(is.nan(f[[2]]))
  expect_identical(unlist(ds$s$attrs[["levels"]]), c("a", "b"))
  expect_identical(is.na(py_values(ds, "l")), c(FALSE, FALSE, TRUE, FALSE))
  expect_identical(py_values(ds, "l")[c(1, 2, 4)], c(1, 0, 1))
})

test_that("plain, AsIs and integer matrix columns, and lists, are all accepted", {
  need_python()
  m <- matrix(1:6, 2)
  plain <- data.frame(id = 1:2)
  plain$y <- m
  asis <- data.frame(id = 1:2, y = I(m))
  for (data in list(plain, asis, list(id = 1:2, y = m))) {
    ds <- to_python(data)
    expect_identical(py_values(ds, "y"), matrix(as.double(m), 2))
    expect_identical(unlist(ds$y$dims), c("sample", "y_loc"))
  }
  expect_identical(prepared(asis, c("id", "y"))$kinds, c(id = "numeric", y = "matrix"))
})

test_that("bad data are R errors naming the column and the fix", {
  need_python()
  d <- first_visits()
  chr <- data.frame(id = 1:2, y = I(matrix(c("a", "b", "c", "d"), 2)))
  expect_error(kpl(y ~ id, chr), "column 'y' of `data` is a character matrix; curves must be numeric matrices",
               class = "fdakpl_input_error")
  expect_error(kpl(rcst ~ cca + age, d), "the formula names 'age', not found in `data`",
               class = "fdakpl_input_error")
  expect_error(kpl(rcst ~ cca, list(cca = d$cca, rcst = d$rcst[1:50, ])),
               "mismatched row counts in `data`: 'rcst' has 50, 'cca' has 100", class = "fdakpl_input_error")
  expect_error(kpl(rcst ~ cca, d$cca), "`data` must be a data.frame", class = "fdakpl_input_error")
  expect_error(kpl(pasat ~ cca, d), "the response 'pasat' must be a numeric matrix column",
               class = "fdakpl_input_error")
  expect_error(kpl("rcst ~ cca", d), "`formula` must be a two-sided formula", class = "fdakpl_input_error")
  expect_error(kpl(rcst ~ cca, d, kernels = list()), "argument 'kernels' cannot go through `...`",
               class = "fdakpl_input_error")
  expect_error(kpl(rcst ~ cca, d, grid = list(cca = 1:3)), "`grid\\$cca` has 3 locations but column 'cca' has 93",
               class = "fdakpl_input_error")
  # a decreasing grid is accepted (issue 27.11); one that goes back and forth is not
  expect_error(kpl(rcst ~ cca, d, grid = list(cca = c(0.5, seq(0, 1, length.out = 92)))), "strictly increasing",
               class = "fdakpl_input_error")
})

test_that("an error raised in Python is an R condition with Python's message", {
  need_python()
  d <- first_visits()
  py_message <- reticulate::py_run_string(paste(
    "from fdakpl import FunctionalRegression, datasets",
    "try:",
    "    FunctionalRegression('rcst ~ cca', data=datasets.dti_first_visits(), dictionary='nope', interpolate_inputs=True, progress=False).fit()",
    "    msg = None",
    "except ValueError as e:",
    "    msg = str(e)", sep = "\n"), local = TRUE)$msg
  expect_true(is.character(py_message) && nzchar(py_message))
  err <- expect_error(kpl(rcst ~ cca, d, dictionary = "nope", interpolate_inputs = TRUE, progress = FALSE),
                      class = "fdakpl_python_error")
  expect_s3_class(err, "fdakpl_input_error")  # a ValueError is an input problem
  expect_identical(err$python_type, "ValueError")
  expect_identical(err$python_message, py_message)
  expect_match(conditionMessage(err), "^ValueError \\(Python\\): .*nope")
  expect_match(err$python_traceback, "in fit_from_r", fixed = TRUE, all = FALSE)
  # without interpolation the NA in cca is reported in R, by name, with the R fixes
  err <- expect_error(kpl(rcst ~ cca, d, na.action = na.fail, progress = FALSE), class = "fdakpl_input_error")
  expect_match(conditionMessage(err), "'cca' has NA (gaps in the curve) in rows 17", fixed = TRUE)
  expect_match(conditionMessage(err), "interpolate_inputs = TRUE", fixed = TRUE)
})
