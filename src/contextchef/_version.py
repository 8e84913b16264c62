"""The installed version of contextchef, from the package metadata (one source: pyproject)."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("contextchef")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0+unknown"

__all__ = ["__version__"]
