# Finding Python, importing the Python package fdakpl, and turning Python
# errors into R conditions.

.fdakpl <- new.env(parent = emptyenv())

# Name of the virtualenv that install_fdakpl() creates and .onLoad() prefers.
.default_env <- "r-fdakpl"

.onLoad <- function(libname, pkgname) {
  # A virtualenv made by install_fdakpl() is used unless RETICULATE_PYTHON
  # says otherwise (or Python is already running in this session).
  if (is.na(Sys.getenv("RETICULATE_PYTHON", unset = NA)) &&
      !reticulate::py_available(initialize = FALSE) &&
      reticulate::virtualenv_exists(.default_env)) {
    try(reticulate::use_virtualenv(.default_env, required = TRUE), silent = TRUE)
  }
  # delay_load, as keras and tensorflow do: Python starts on first use, and
  # reticulate also looks for a virtualenv named "r-fdakpl".
  .fdakpl$module <- reticulate::import(
    "fdakpl",
    delay_load = list(priority = 10, environment = .default_env)
  )
  reg.finalizer(.fdakpl, function(e) python_at_exit(), onexit = TRUE)
  invisible()
}

# When R exits: Python's own exit handlers of its worker pools (Python embedded in R is never
# finalized), so that a pool stopped by an interrupt leaves no semaphore behind.
python_at_exit <- function() {
  if (isTRUE(.fdakpl$checked) && reticulate::py_available(initialize = FALSE)) {
    try(bridge()$at_r_exit(), silent = TRUE)
  }
  invisible()
}

# reticulate (1.28) looks for a Poetry project in the working directory
# before it uses RETICULATE_PYTHON_FALLBACK, use_python() or the virtualenv of
# install_fdakpl(): from a directory holding a pyproject.toml (such as a
# checkout of fdakpl) it then warns "This project appears to use Poetry".
# Python is chosen with an empty directory as the Poetry project instead,
# unless the user set the option reticulate.poetry.project.
without_poetry <- function(expr) {
  if (is.null(getOption("reticulate.poetry.project")) && !reticulate::py_available(initialize = FALSE)) {
    empty <- file.path(tempdir(), "fdakpl-no-poetry")
    dir.create(empty, showWarnings = FALSE)
    old <- options(reticulate.poetry.project = empty)
    on.exit(options(old), add = TRUE)
  }
  expr
}

setup_fix <- function() {
  paste0(
    "Fix: run fdakpl::install_fdakpl() once (it creates the virtualenv '", .default_env,
    "' with NumPy < 2 and the Python package fdakpl) and restart R; or set ",
    "RETICULATE_PYTHON to a Python that has fdakpl and NumPy < 2 ",
    "(e.g. in ~/.Renviron) before loading fdakpl."
  )
}

setup_error <- function(problem) {
  cond <- structure(
    class = c("fdakpl_setup_error", "error", "condition"),
    list(message = paste(problem, setup_fix(), sep = "\n"), call = NULL)
  )
  stop(cond)
}

python_problem <- function(module = "fdakpl") {
  config <- tryCatch(without_poetry(reticulate::py_config()), error = function(e) e)
  if (inherits(config, "error")) {
    return(paste0("Python could not be started through reticulate: ", conditionMessage(config)))
  }
  if (!isTRUE(config$available)) {
    return(paste0("no usable Python was found by reticulate (tried ", config$python, ")."))
  }
  found <- find_module(module)
  if (identical(found, "missing")) {
    return(sprintf("the Python module '%s' is not installed in the Python that reticulate uses (%s).",
                   module, config$python))
  }
  if (!identical(found, "ok")) {
    return(sprintf("'%s' is not a Python package in %s: Python finds the directory %s instead.",
                   module, config$python, found))
  }
  arrays <- tryCatch({
    reticulate::r_to_py(matrix(0, 1L, 1L))
    TRUE
  }, error = function(e) e)
  if (inherits(arrays, "error")) {
    np_version <- tryCatch(as.character(reticulate::import("numpy")$`__version__`), error = function(e) "?")
    return(sprintf(
      "reticulate %s cannot pass arrays to NumPy %s of %s (%s); that Python needs numpy<2.",
      utils::packageDescription("reticulate")$Version, np_version[1L], config$python,
      conditionMessage(arrays)
    ))
  }
  NULL
}

# Find a Python module the way `import` will. A directory named like the
# module in R's working directory (R CMD check's fdakpl.Rcheck/fdakpl, say)
# would shadow the real package as a namespace package: then the working
# directory leaves sys.path. Returns "ok", "missing" or the shadowing path.
find_module <- function(module) {
  finder <- reticulate::py_run_string(paste(
    "def _fdakpl_find_module(name):",
    "    import importlib, importlib.util, os, sys",
    "    def find():",
    "        try:",
    "            return importlib.util.find_spec(name)",
    "        except (ImportError, ValueError):",
    "            return None",
    "    spec = find()",
    "    if spec is not None and spec.origin is None:",
    "        cwd = os.path.abspath(os.getcwd())",
    "        sys.path[:] = [p for p in sys.path if os.path.abspath(p or '.') != cwd]",
    "        sys.modules.pop(name, None)",
    "        importlib.invalidate_caches()",
    "        shadow = list(spec.submodule_search_locations or [])",
    "        spec = find()",
    "        if spec is not None and spec.origin is None:",
    "            return ', '.join(shadow)",
    "    return 'missing' if spec is None else 'ok'",
    sep = "\n"), local = TRUE)
  finder$`_fdakpl_find_module`(module)
}

check_python <- function(module = "fdakpl") {
  if (identical(module, "fdakpl") && isTRUE(.fdakpl$checked)) {
    return(invisible(TRUE))
  }
  problem <- python_problem(module)
  if (!is.null(problem)) setup_error(problem)
  if (identical(module, "fdakpl")) .fdakpl$checked <- TRUE
  invisible(TRUE)
}

fdakpl_python <- function(submodule = NULL) {
  check_python()
  if (is.null(submodule)) {
    return(.fdakpl$module)
  }
  key <- paste0("sub_", submodule)
  if (is.null(.fdakpl[[key]])) {
    .fdakpl[[key]] <- reticulate::import(paste0("fdakpl.", submodule))
  }
  .fdakpl[[key]]
}

fdakpl_available <- function() {
  is.null(tryCatch(python_problem(), error = function(e) conditionMessage(e)))
}

fdakpl_config <- function() {
  check_python()
  config <- reticulate::py_config()
  np <- reticulate::import("numpy")
  list(
    python = config$python,
    python_version = as.character(config$version),
    numpy = np$`__version__`,
    fdakpl = fdakpl_python()$`__version__`,
    reticulate = utils::packageDescription("reticulate")$Version,
    R = paste(R.version$major, R.version$minor, sep = ".")
  )
}

install_fdakpl <- function(envname = "r-fdakpl", package = "fdakpl", python = NULL,
                           editable = FALSE, numpy = "numpy<2") {
  if (!is.character(package) || length(package) != 1L || !nzchar(package)) {
    stop("`package` must be one string: \"fdakpl\" (from PyPI) or the path of a checkout of fdakpl",
         call. = FALSE)
  }
  if (isTRUE(editable) && !dir.exists(package)) {
    stop(sprintf("editable = TRUE needs `package` to be the path of a checkout of fdakpl; '%s' is not a directory",
                 package), call. = FALSE)
  }
  if (dir.exists(package)) package <- normalizePath(package)
  without_poetry(reticulate::virtualenv_create(envname, python = python, packages = numpy))
  # keep the NumPy requirement while pip resolves fdakpl's dependencies
  constraints <- tempfile("fdakpl-constraints", fileext = ".txt")
  on.exit(unlink(constraints), add = TRUE)
  writeLines(numpy, constraints)
  reticulate::virtualenv_install(envname, packages = package,
                                 pip_options = c("--constraint", shQuote(constraints),
                                                 if (isTRUE(editable)) "-e"))
  path <- reticulate::virtualenv_python(envname)
  message(sprintf("Python with fdakpl: %s\nRestart R; fdakpl uses it when RETICULATE_PYTHON is unset%s.",
                  path, if (identical(envname, .default_env)) "" else
                    sprintf(" only if you set RETICULATE_PYTHON=%s", path)))
  invisible(path)
}

# The Python module of the R bridge, fdakpl.r.bridge.
bridge <- function() fdakpl_python("r.bridge")

# Evaluate `expr` (a call into Python). Python warnings raised meanwhile are
# recorded (reticulate would print them where R cannot catch them) and
# re-signalled as R warnings of class "fdakpl_warning", each distinct one
# once. A Python exception becomes an R error of class "fdakpl_python_error"
# (and "fdakpl_input_error" for ValueError, TypeError and KeyError, which
# fdakpl raises on bad input) carrying Python's type, message and traceback.
# `context` (names: Python name -> R label; labels of the rows sent; the
# data's labels) puts the message in R's words.
py_call <- function(expr, context = NULL, call = sys.call(-1L)) {
  recorder <- tryCatch(bridge()$WarningRecorder(), error = function(e) NULL)
  stop_recording <- function() {
    if (is.null(recorder)) return(invisible())
    found <- tryCatch(recorder$stop(), error = function(e) list())
    recorder <<- NULL
    for (w in found) {
      w <- unlist(w)
      warning(structure(
        class = c("fdakpl_warning", "warning", "condition"),
        list(message = paste0(r_words(w[[2L]], context), " [Python ", w[[1L]], "]"), call = call,
             python_category = w[[1L]], python_message = w[[2L]])
      ))
    }
  }
  if (!is.null(recorder)) recorder$start()
  value <- tryCatch(expr, error = function(e) {
    stop_recording()
    if (inherits(e, "fdakpl_setup_error") || inherits(e, "fdakpl_error")) stop(e)
    last <- tryCatch(reticulate::py_last_error(), error = function(e2) NULL)
    msg <- conditionMessage(e)
    if (is.null(last) || !startsWith(trimws(msg), paste0(last$type, ":"))) stop(e)
    input <- last$type %in% c("ValueError", "TypeError", "KeyError")
    cond <- structure(
      class = c(if (input) "fdakpl_input_error", "fdakpl_python_error", "fdakpl_error", "error", "condition"),
      list(
        message = paste0(last$type, " (Python): ", r_words(last$value, context)),
        call = call,
        python_type = last$type,
        python_message = last$value,
        python_traceback = last$traceback
      )
    )
    stop(cond)
  })
  stop_recording()
  value
}

# A Python message in R's words: the R names of the terms, R's TRUE/FALSE and
# lambda, R's spelling of arguments and values (width_grid = c(...)), R row
# numbers (1-based, in the data) and row names for positions. Vectorised.
r_words <- function(msg, context = NULL) {
  if (!length(msg)) return(character())
  vapply(as.character(msg), r_words_one, character(1), context = context, USE.NAMES = FALSE)
}

r_syntax <- list(
  # how to change a grid or an argument, as kpl() takes it
  c("(lam|lam_grid)=np\\.geomspace\\(\\.\\.\\.\\)", "LAMBDA_GRID = 10^seq(...)"),
  c("\\b([a-z_]+)=np\\.geomspace\\(([^,()]+), ([^,()]+), ([^,()]+)\\)",
    "\\1 = exp(seq(log(\\2), log(\\3), length.out = \\4))"),
  c("param_grid=\\{'([A-Za-z_]+)': \\[\\.\\.\\.\\]\\}", "param_grid = list(\\1 = c(...))"),
  c("kernels=\\{'([^']+)': ([A-Za-z]+)\\(\\)\\}", "kernel = list(\\1 = KERNEL<\\2>)"),
  c("kind='simultaneous'", "band = \"simultaneous\""),
  c("domain=\\(lo, hi\\)", "domain = c(lo, hi)"),
  c("([A-Za-z_]+)=\\[\\.\\.\\.\\]", "\\1 = c(...)"),
  c("([A-Za-z_]+)=\\[([-0-9.e, ]*)\\]", "\\1 = c(\\2)"),
  c("\\b([a-z_]+)=True\\b", "\\1 = TRUE"),
  c("\\b([a-z_]+)=False\\b", "\\1 = FALSE"),
  c("\\b([a-z_]+)=None\\b", "\\1 = NULL"),
  c("\\b([a-z_]+)='([^']*)'", "\\1 = \"\\2\""),
  c("\\b([a-z_]+)=\"([^\"]*)\"", "\\1 = \"\\2\""),
  c("\\bres\\.notes\\b", "fit$notes"),
  c("\\b([a-z_]+)=([-0-9.][-0-9.e]*)", "\\1 = \\2"),
  c("\\b([A-Z][A-Za-z]*)\\.__init__\\(\\) got an unexpected keyword argument '([a-z_]+)'",
    "the \\1 constructor does not take `\\2`"),
  c("e\\.g\\. ds\\.dropna\\([^)]*\\)", "with na.action = na.omit"),
  c("ds\\.dropna\\([^)]*\\)", "na.action = na.omit"),
  c("ds\\.isel\\([^;]*\\)", "subset = ")
)

kernel_call <- c(Linear = "kpl_kernel(\"linear\")", SmoothedLinear = "kpl_kernel(\"linear\")",
                 Gaussian = "kpl_kernel(\"gaussian\")", Laplace = "kpl_kernel(\"laplace\")",
                 PenalizedLinear = "kpl_kernel(\"penalized_linear\")")

r_words_one <- function(msg, context = NULL) {
  names_map <- context$names
  for (py in names(names_map)) {
    if (!identical(py, names_map[[py]])) {
      msg <- gsub(paste0("'", py, "'"), paste0("'", names_map[[py]], "'"), msg, fixed = TRUE)
    }
  }
  for (rule in r_syntax) msg <- gsub(rule[[1L]], rule[[2L]], msg, perl = TRUE)
  msg <- gsub("LAMBDA_GRID", if (is.null(context$lambda_grid)) "lam_grid" else context$lambda_grid, msg, fixed = TRUE)
  m <- regmatches(msg, regexec("KERNEL<([A-Za-z]+)>", msg))[[1L]]
  if (length(m)) {
    msg <- sub(m[1L], if (m[2L] %in% names(kernel_call)) kernel_call[[m[2L]]] else paste0("kpl_kernel(\"", tolower(m[2L]), "\")"),
               msg, fixed = TRUE)
  }
  msg <- gsub("\\blam\\b", "lambda", msg, perl = TRUE)
  rows_of <- function(pos) {
    pos <- as.integer(strsplit(pos, "[, ]+")[[1L]]) + 1L
    if (is.null(context$labels) || any(pos > length(context$labels))) {
      return(paste(pos, collapse = ", "))
    }
    labels <- context$labels[pos]
    rows <- if (is.null(context$all_labels)) pos else match(labels, context$all_labels)
    describe_rows(rows, if (is.null(context$all_labels)) context$labels else context$all_labels)
  }
  # samples named by label: "samples ['2017_1', '2021_1']" -> "rows 17 (2017_1), 21 (2021_1)"
  m <- regmatches(msg, regexec("samples \\[('[^']*'(, '[^']*')*)\\]", msg))[[1L]]
  if (length(m) && !is.null(context$all_labels)) {
    labels <- gsub("^'|'$", "", strsplit(m[2L], ", ", fixed = TRUE)[[1L]])
    rows <- match(labels, context$all_labels)
    if (!anyNA(rows)) msg <- sub(m[1L], paste("rows", describe_rows(rows, context$all_labels)), msg, fixed = TRUE)
  }
  for (pattern in c("at positions \\[([0-9, ]+)\\]", "\\(row ([0-9]+)\\)")) {
    m <- regmatches(msg, regexec(pattern, msg))[[1L]]
    if (length(m)) {
      replacement <- if (startsWith(pattern, "at")) paste("in rows", rows_of(m[2L])) else paste0("(row ", rows_of(m[2L]), ")")
      msg <- sub(m[1L], replacement, msg, fixed = TRUE)
    }
  }
  msg
}

# The fit's Python model, or an fdakpl_error when it did not survive saveRDS() / a new R session.
python_model <- function(fit, what = "this") {
  py <- fit$py
  gone <- is.null(py) || !is_python(py) ||
    isTRUE(tryCatch(reticulate::py_is_null_xptr(py), error = function(e) TRUE))
  if (gone) {
    stop(structure(class = c("fdakpl_refit_error", "fdakpl_error", "error", "condition"), list(
      message = sprintf(paste0("the Python side of this model is gone (Python objects do not survive saveRDS() ",
                               "or a new R session), so %s needs the model: refit it with kpl(), e.g. fit <- eval(fit$call)"),
                        what),
      call = sys.call(-1L))))
  }
  py
}

# An input error raised on the R side (bad data, bad formula, bad argument).
input_error <- function(fmt, ..., call = sys.call(-1L)) {
  stop(structure(
    class = c("fdakpl_input_error", "fdakpl_error", "error", "condition"),
    list(message = sprintf(fmt, ...), call = call)
  ))
}
