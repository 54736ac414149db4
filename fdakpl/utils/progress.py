"""Progress bars for long work, switchable per call and globally.

Set the environment variable ``FDAKPL_PROGRESS=0`` (or call
``fdakpl.utils.progress.set_enabled(False)``) to turn every bar off, e.g. in batch jobs.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Iterator
from typing import TypeVar

T = TypeVar("T")

_ENABLED: bool | None = None

__all__ = ["progress", "progress_enabled", "set_enabled"]


def set_enabled(flag: bool | None) -> None:
    """Turn all progress bars on or off (``None`` restores the default).

    Examples
    --------
    >>> set_enabled(False); set_enabled(None)
    """
    global _ENABLED
    _ENABLED = flag


def progress_enabled(enabled: bool | None = None) -> bool:
    """Whether a progress bar shows: ``enabled`` (``None``: the package default), and off when
    ``fdakpl.utils.progress.set_enabled(False)`` or ``FDAKPL_PROGRESS=0`` or standard error is not a terminal.

    Examples
    --------
    >>> progress_enabled(False)
    False
    """
    return bool(enabled) and _default() if enabled is not None else _default()


def _default() -> bool:
    if _ENABLED is not None:
        return _ENABLED
    env = os.environ.get("FDAKPL_PROGRESS")
    if env is not None:
        return env.strip().lower() not in {"0", "false", "no", "off"}
    return sys.stderr.isatty()


def progress(iterable: Iterable[T], desc: str = "", enabled: bool | None = True,
             total: int | None = None) -> Iterator[T]:
    """Wrap ``iterable`` in a tqdm bar when enabled (and stderr is a terminal by default).

    Parameters
    ----------
    iterable : iterable
    desc : str
        Label of the bar.
    enabled : bool or None
        ``False`` never shows a bar; ``True`` shows it unless turned off globally;
        ``None`` follows the global default.
    total : int, optional

    Examples
    --------
    >>> list(progress(range(3), enabled=False))
    [0, 1, 2]
    """
    show = progress_enabled(enabled)
    if not show:
        yield from iterable
        return
    from tqdm.auto import tqdm

    yield from tqdm(iterable, desc=desc, total=total, leave=False)
