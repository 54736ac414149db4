# Python must be there for these tests. Where the tests are required to run
# (CI=true, or FDAKPL_REQUIRE_PYTHON set, as tools/test-r does), a missing
# Python is a failure, never a skip.
python_required <- function() {
  identical(tolower(Sys.getenv("CI")), "true") || nzchar(Sys.getenv("FDAKPL_REQUIRE_PYTHON"))
}

need_python <- function() {
  if (fdakpl_available()) return(invisible(TRUE))
  if (python_required()) {
    stop("Python with fdakpl is required for these tests but is not usable: ",
         tryCatch(fdakpl:::check_python(), error = conditionMessage))
  }
  testthat::skip("Python with the fdakpl module is not available (set RETICULATE_PYTHON)")
}

# refund's DTI first visits of the multiple sclerosis cases, the paper's sample
first_visits <- function() {
  d <- dti(source = "bundled")
  d[d$case == 1 & d$visit == 1, ]
}

# Run R code in a fresh R process with the given environment variables; returns its output.
run_r <- function(code, env = character()) {
  libs <- paste(.libPaths(), collapse = .Platform$path.sep)
  out <- suppressWarnings(system2(
    file.path(R.home("bin"), "Rscript"), c("--vanilla", "-e", shQuote(code)),
    stdout = TRUE, stderr = TRUE, env = c(paste0("R_LIBS=", libs), env)
  ))
  paste(out, collapse = "\n")
}

# A minimal package named refund (DESCRIPTION + data/DTI.RData from the
# bundled copy) installed into a temporary library; returns that library.
install_refund_standin <- function() {
  root <- tempfile("refund-standin")
  pkg <- file.path(root, "refund")
  lib <- file.path(root, "lib")
  dir.create(file.path(pkg, "data"), recursive = TRUE)
  dir.create(lib)
  writeLines(c(
    "Package: refund", "Version: 0.1-40", "Title: Test Stand-in Holding the DTI Data of refund",
    "Description: Test stand-in so that data(\"DTI\", package = \"refund\") runs where refund",
    "    cannot be installed.", "License: GPL (>= 2)"
  ), file.path(pkg, "DESCRIPTION"))
  writeLines(character(), file.path(pkg, "NAMESPACE"))
  bundled <- reticulate::import("fdakpl.datasets._dti")$bundled_path()
  stopifnot(file.copy(bundled, file.path(pkg, "data", "DTI.RData")))
  status <- system2(file.path(R.home("bin"), "R"),
                    c("CMD", "INSTALL", "--no-test-load", paste0("--library=", shQuote(lib)), shQuote(pkg)),
                    stdout = FALSE, stderr = FALSE)
  stopifnot(status == 0L)
  lib
}

# Python worker processes (loky) among the descendants of process `pid`, read from /proc (Linux);
# the resource trackers of loky and multiprocessing (one small process each, ending with R) are not workers.
worker_processes <- function(pid) {
  stats <- list.files("/proc", pattern = "^[0-9]+$")
  parent <- vapply(stats, function(p) {
    s <- tryCatch(suppressWarnings(readLines(file.path("/proc", p, "stat"), warn = FALSE)), error = function(e) "")
    if (!length(s) || !nzchar(s[1])) return(NA_integer_)
    as.integer(strsplit(sub("^.*\\) ", "", s[1]), " ")[[1]][2])
  }, integer(1))
  found <- character()
  frontier <- as.character(pid)
  while (length(frontier)) {
    kids <- names(parent)[!is.na(parent) & parent %in% as.integer(frontier)]
    found <- c(found, kids)
    frontier <- kids
  }
  cmd <- vapply(found, function(p) {
    r <- tryCatch(readBin(file.path("/proc", p, "cmdline"), "raw", 10000L), error = function(e) raw())
    r[r == as.raw(0)] <- as.raw(32)
    rawToChar(r)
  }, character(1))
  found[grepl("python", cmd) & !grepl("resource_tracker", cmd)]
}
