"""The installed version of fdakpl (a leaf module, so that any module can read it without the package root)."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("fdakpl")
except PackageNotFoundError:  # pragma: no cover - running from a source tree
    __version__ = "0+unknown"
