"""fdakpl's own warnings, collected per fit without touching Python's global warning filters.

``warnings.catch_warnings`` changes process-wide state and is not
thread-safe: two fits in two threads would see each other's warnings, and a
filter such as ``("always", Warning)`` could leak to the rest of the
program. fdakpl's code therefore warns through :func:`warn`, which

* appends the message to every collector opened by :func:`collecting` in the
  current thread (or :mod:`contextvars` context): the notes of a fit;
* then emits the warning with :func:`warnings.warn`, unless the current
  context muted it (:func:`muted`: a kind such as ``"interpolation"``, or
  every kind with ``muted(None)``, as the cross-validation folds do).

Examples
--------
>>> with collecting() as notes, muted("demo"):
...     warn("something to know", kind="demo")
>>> notes
['something to know']
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

__all__ = ["collecting", "muted", "silenced", "warn"]

_SINKS: ContextVar[tuple[list[str], ...]] = ContextVar("fdakpl_note_sinks", default=())
_MUTED: ContextVar[frozenset[str] | None] = ContextVar("fdakpl_muted", default=frozenset())


def warn(message: str, category: type[Warning] = UserWarning, stacklevel: int = 2, *, kind: str = "") -> None:
    """Record ``message`` in the open collectors, then warn unless muted (see the module docstring).

    Examples
    --------
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as w:
    ...     warnings.simplefilter("always")
    ...     warn("careful")
    >>> str(w[0].message)
    'careful'
    """
    for sink in _SINKS.get():
        sink.append(str(message))
    mute = _MUTED.get()
    if mute is None or kind in mute:
        return
    warnings.warn(message, category, stacklevel=stacklevel + 1)


@contextmanager
def collecting() -> Iterator[list[str]]:
    """Collect the messages of :func:`warn` in this context (nested collectors all receive them).

    Examples
    --------
    >>> with collecting() as notes:
    ...     warn("a note", kind="x") if False else None
    >>> notes
    []
    """
    notes: list[str] = []
    token = _SINKS.set((*_SINKS.get(), notes))
    try:
        yield notes
    finally:
        _SINKS.reset(token)


@contextmanager
def muted(kind: str | None) -> Iterator[None]:
    """Do not emit warnings of ``kind`` (every kind: ``None``) in this context; collectors still get them.

    Examples
    --------
    >>> with muted(None):
    ...     warn("not shown")
    """
    current = _MUTED.get()
    new = None if kind is None or current is None else current | {kind}
    token = _MUTED.set(new)
    try:
        yield
    finally:
        _MUTED.reset(token)


@contextmanager
def silenced() -> Iterator[None]:
    """Neither emit nor collect :func:`warn` messages in this context (e.g. inside cross-validation folds).

    Examples
    --------
    >>> with collecting() as notes, silenced():
    ...     warn("a fold's warning")
    >>> notes
    []
    """
    sinks, mute = _SINKS.set(()), _MUTED.set(None)
    try:
        yield
    finally:
        _MUTED.reset(mute)
        _SINKS.reset(sinks)
