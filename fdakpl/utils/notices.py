"""Warnings that point at the user's line and are said once.

A warning raised deep inside fdakpl should be reported where the user's code called
fdakpl, not at fdakpl's own line: only then do Python's warning filters (``-W once``,
``warnings.filterwarnings(..., module=...)``) and the "shown once per location" default
work as users expect. :func:`warn` does that with ``skip_file_prefixes`` on Python >= 3.12
and by walking the stack out of the package on 3.10 and 3.11.

Work that repeats an inner step (a fit, refits of a permutation test, of conformal bands)
gathers the inner warnings with :func:`said_once` and reports each distinct one once.

Gathering never touches Python's global warning filters (``warnings.catch_warnings`` is not
thread-safe: fits in two threads would mix their warnings, and a filter such as
``("always", Warning)`` could leak to the rest of the program). fdakpl's own warnings go
through :func:`warn`, which hands them to the innermost :func:`said_once` of the current
thread (a :mod:`contextvars` variable) or, outside one, warns at the user's line.
:func:`silenced` drops them (cross-validation folds). Warnings of other libraries are not
gathered: they reach the user as those libraries raise them.

This module imports nothing else of fdakpl, so every layer may use it.
"""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from types import TracebackType

__all__ = ["PACKAGE_DIR", "InterpolationWarning", "distinct", "said_once", "silenced", "user_stacklevel", "warn"]

#: the gatherers of the current context, innermost last; None inside :func:`silenced`
_GATHER: ContextVar[tuple[list[warnings.WarningMessage], ...] | None] = ContextVar("fdakpl_gather", default=())

#: files under this prefix are fdakpl's own; warnings point at the first frame outside it
PACKAGE_DIR = os.path.dirname(os.path.dirname(__file__)) + os.sep  # fdakpl/, not fdakpl/utils/


class InterpolationWarning(UserWarning):
    """Missing input values were filled by linear interpolation (``interpolate_inputs=True``).

    The user asked for it, so it is never shown as a warning: :class:`fdakpl.FunctionalRegression`
    records the fact once in ``res.notes`` (shown by the summary), and the array-level
    estimators (``KPLRegressor(interpolate_inputs=True)`` and the baselines) fill silently.
    :func:`warn` hands it to an enclosing :func:`said_once` (which gathers it for the notes) and
    drops it outside one: a loop of fits would otherwise repeat it at every call.

    Examples
    --------
    >>> issubclass(InterpolationWarning, UserWarning)
    True
    """


def user_stacklevel() -> int:
    """The ``stacklevel`` that makes a ``warnings.warn`` in the *calling* function point outside fdakpl.

    Examples
    --------
    >>> user_stacklevel() >= 1
    True
    """
    frame = sys._getframe(1)  # the function that will call warnings.warn: stacklevel 1
    level = 1
    while frame is not None and frame.f_code.co_filename.startswith(PACKAGE_DIR):
        frame = frame.f_back
        level += 1
    return level


def warn(message: str | Warning, category: type[Warning] = UserWarning, stacklevel: int | None = None) -> None:
    """``warnings.warn`` pointing at the first line outside fdakpl (the user's code).

    Inside :func:`said_once` the warning is gathered instead (and said once when it ends);
    inside :func:`silenced` it is dropped. ``stacklevel`` is accepted for the signature of
    :func:`warnings.warn` and ignored: the user's line is found by walking the stack.
    An :class:`InterpolationWarning` (filling the user asked for) is only gathered, never shown.

    Examples
    --------
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as w:
    ...     warnings.simplefilter("always")
    ...     warn("lambda on the edge of its grid")
    >>> w[0].filename.startswith(PACKAGE_DIR)
    False
    """
    if isinstance(message, Warning):
        category, message = type(message), str(message)
    sinks = _GATHER.get()
    if sinks is None:
        return
    if sinks:
        sinks[-1].append(warnings.WarningMessage(category(message), category, "", 0))
        return
    if issubclass(category, InterpolationWarning):
        return  # filling the user asked for: only gathered (for res.notes), never shown
    if sys.version_info >= (3, 12):
        warnings.warn(message, category, skip_file_prefixes=(PACKAGE_DIR,))
    else:
        warnings.warn(message, category, stacklevel=user_stacklevel())


def distinct(caught: Sequence[warnings.WarningMessage]) -> list[warnings.WarningMessage]:
    """The caught warnings without repeats (same category and text), in order of first appearance.

    Examples
    --------
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as w:
    ...     warnings.simplefilter("always")
    ...     for _ in range(3):
    ...         warnings.warn("same")
    >>> len(w), len(distinct(w))
    (3, 1)
    """
    seen: dict[tuple[type[Warning], str], warnings.WarningMessage] = {}
    for w in caught:
        seen.setdefault((w.category, str(w.message)), w)
    return list(seen.values())


class said_once:  # lower case: used like a function, ``with said_once() as gathered:``
    """Gather fdakpl's warnings raised inside; on exit, warn each distinct one once, at the user's line.

    Warnings of a ``quiet`` category are gathered (the list given by ``as`` holds them) but
    not repeated: the caller records them (for example in ``res.notes``) or drops them.
    Gathering is per thread (a context variable): no global warning filter changes.
    (A class rather than a ``contextlib`` generator, so that no frame of ``contextlib`` stands
    between fdakpl and the user's line when the warnings are repeated.)

    Examples
    --------
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as shown:
    ...     warnings.simplefilter("always")
    ...     with said_once() as gathered:
    ...         for _ in range(5):
    ...             warn("the same cause")
    >>> len(gathered), len(shown)
    (5, 1)
    """

    def __init__(self, quiet: tuple[type[Warning], ...] = ()) -> None:
        self.quiet = quiet

    def __enter__(self) -> list[warnings.WarningMessage]:
        self.caught: list[warnings.WarningMessage] = []
        sinks = _GATHER.get()
        self._token = _GATHER.set(None if sinks is None else (*sinks, self.caught))
        return self.caught

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        _GATHER.reset(self._token)
        if exc_type is None:
            for w in distinct(self.caught):
                if not issubclass(w.category, self.quiet):
                    warn(str(w.message), w.category)


@contextmanager
def silenced() -> Iterator[None]:
    """Drop fdakpl's warnings in this context (cross-validation folds: the final fit says them).

    Examples
    --------
    >>> with said_once() as gathered, silenced():
    ...     warn("a fold's warning")
    >>> gathered
    []
    """
    token = _GATHER.set(None)
    try:
        yield
    finally:
        _GATHER.reset(token)
