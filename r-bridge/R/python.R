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
  invisible()
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
  config <- tryCatch(reticulate::py_config(), error = function(e) e)
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
  reticulate::virtualenv_create(envname, python = python, packages = numpy)
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

# Evaluate `expr` (a call into Python); a Python exception becomes an R error
# of class "fdakpl_python_error" carrying the original type, message and
# traceback.
py_call <- function(expr, call = sys.call(-1L)) {
  tryCatch(expr, error = function(e) {
    if (inherits(e, "fdakpl_setup_error") || inherits(e, "fdakpl_error")) stop(e)
    last <- tryCatch(reticulate::py_last_error(), error = function(e2) NULL)
    msg <- conditionMessage(e)
    if (is.null(last) || !startsWith(trimws(msg), paste0(last$type, ":"))) stop(e)
    cond <- structure(
      class = c("fdakpl_python_error", "error", "condition"),
      list(
        message = paste0(last$type, " (Python): ", last$value),
        call = call,
        python_type = last$type,
        python_message = last$value,
        python_traceback = last$traceback
      )
    )
    stop(cond)
  })
}

# An input error raised on the R side (bad data, bad formula).
input_error <- function(fmt, ..., call = sys.call(-1L)) {
  stop(structure(
    class = c("fdakpl_input_error", "fdakpl_error", "error", "condition"),
    list(message = sprintf(fmt, ...), call = call)
  ))
}
