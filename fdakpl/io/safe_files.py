"""Writing files without losing anything: no silent overwrite, atomic replace, permissions and symlinks kept.

:func:`write_atomically` writes through a temporary file in the target's
directory and renames it into place, so a failed write never leaves a
half-written file and readers see the old or the new file, never a mix. An
existing file keeps its permissions; a new file gets ``0666`` minus the
umask (as ``open`` would give); a symlink keeps pointing to its target,
whose content is replaced.

Examples
--------
>>> import tempfile, pathlib
>>> path = pathlib.Path(tempfile.mkdtemp()) / "a.txt"
>>> _ = write_atomically(path, lambda tmp: pathlib.Path(tmp).write_text("hello"))
>>> path.read_text()
'hello'
"""

from __future__ import annotations

import os
import secrets
import stat
from collections.abc import Callable
from pathlib import Path

__all__ = ["resolve_target", "write_atomically"]

#: longest file name (bytes) most file systems accept
_MAX_NAME = 255


def resolve_target(path: str | os.PathLike[str]) -> Path:
    """The file a write to ``path`` should replace: the final target of a symlink, else ``path``.

    Examples
    --------
    >>> import tempfile, pathlib, os
    >>> d = pathlib.Path(tempfile.mkdtemp()); (d / "real.nc").write_text("x")
    1
    >>> os.symlink(d / "real.nc", d / "link.nc")
    >>> resolve_target(d / "link.nc").name
    'real.nc'
    """
    path = Path(path).expanduser()  # "~/model.nc" is the home folder's, as xarray and open() read it
    if len(path.name.encode("utf-8")) > _MAX_NAME:
        raise ValueError(f"the file name {path.name[:40]!r}... has {len(path.name.encode('utf-8'))} bytes; file "
                         f"systems accept at most {_MAX_NAME}: choose a shorter name")
    if path.is_symlink():
        return Path(os.path.realpath(path))
    return path


def write_atomically(path: str | os.PathLike[str], write: Callable[[str], object]) -> Path:
    """Call ``write(tmp)`` on a fresh temporary file next to the target, then rename it onto the target.

    Parameters
    ----------
    path : str or path-like
        Target (a symlink is followed: its target is replaced, the link stays).
    write : callable
        Writes the whole file to the path it is given.

    Returns
    -------
    pathlib.Path
        The file that was replaced (the symlink's target when ``path`` is a symlink).

    Raises
    ------
    IsADirectoryError
        If the target is a directory.

    Examples
    --------
    >>> import tempfile, pathlib, os
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "b.txt"
    >>> _ = path.write_text("old"); os.chmod(path, 0o640)
    >>> _ = write_atomically(path, lambda tmp: pathlib.Path(tmp).write_text("new"))
    >>> path.read_text(), oct(path.stat().st_mode & 0o777)
    ('new', '0o640')
    """
    target = resolve_target(path)
    if target.is_dir():
        raise IsADirectoryError(f"{path} is a directory; give a file name, e.g. {Path(path) / 'model.nc'}")
    target.parent.mkdir(parents=True, exist_ok=True)
    old_mode = stat.S_IMODE(target.stat().st_mode) if target.exists() else None
    # the temporary name fits where the target's does (file names of 255 bytes: the name is cut, the token unique)
    stem = target.name.encode("utf-8")[:_MAX_NAME - 20].decode("utf-8", "ignore")
    tmp = target.parent / f".{stem}.{secrets.token_hex(6)}.tmp"
    fd = os.open(tmp, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o666)  # the kernel applies the umask
    os.close(fd)
    new_mode = stat.S_IMODE(tmp.stat().st_mode)
    try:
        write(str(tmp))
        os.chmod(tmp, old_mode if old_mode is not None else new_mode)
        os.replace(tmp, target)
    finally:
        if tmp.exists():
            tmp.unlink()
    return target
