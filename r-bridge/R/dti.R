# The DTI data of the R package refund, as refund stores it: a data.frame
# with matrix columns cca (382 x 93) and rcst (382 x 55).

dti <- function(source = c("auto", "refund", "bundled")) {
  source <- match.arg(source)
  has_refund <- nzchar(system.file(package = "refund"))
  if (source == "refund" && !has_refund) {
    stop(structure(class = c("fdakpl_error", "error", "condition"), list(
      message = paste0("the R package refund is not installed (.libPaths(): ",
                       paste(.libPaths(), collapse = ", "),
                       "); install.packages(\"refund\"), or use dti(source = \"bundled\")"),
      call = sys.call())))
  }
  env <- new.env(parent = emptyenv())
  if (source == "refund" || (source == "auto" && has_refund)) {
    utils::data("DTI", package = "refund", envir = env)
  } else {
    check_python()
    path <- py_call(fdakpl_python("datasets._dti")$bundled_path())
    load(path, envir = env)
  }
  nan_to_na_columns(env$DTI)
}

# R's NA for unobserved values (refund's DTI has NA; a copy written by
# Python may hold NaN), in every numeric column and matrix column.
nan_to_na_columns <- function(d) {
  for (v in names(d)) {
    if (is.double(d[[v]]) && any(is.nan(d[[v]]))) d[[v]][is.nan(d[[v]])] <- NA
  }
  d
}
