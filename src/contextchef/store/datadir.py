"""Where contextchef keeps its data on this machine: the one place `CONTEXTCHEF_HOME` is read.

The data directory is `CONTEXTCHEF_HOME` when set, else the platform's user data directory
(platformdirs). The library behaves the same everywhere, test processes included: a test suite
that must not touch the user's data points `CONTEXTCHEF_HOME` at a temporary directory (this
project's own `tests/conftest.py` does so for the whole session and guards the real directory).
"""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

__all__ = [
    "DATABASE_FILENAME",
    "HOME_ENV",
    "data_dir",
    "default_database_path",
    "user_data_dir",
]

HOME_ENV = "CONTEXTCHEF_HOME"
"""Environment variable that overrides the data directory."""

APP_NAME = "contextchef"
DATABASE_FILENAME = "context.db"


def user_data_dir() -> Path:
    """The platform's user data directory for contextchef, used when `CONTEXTCHEF_HOME` is unset."""
    return Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))


def data_dir() -> Path:
    """The directory holding contextchef's data: `$CONTEXTCHEF_HOME`, else the user data dir."""
    override = os.environ.get(HOME_ENV)
    if override:
        return Path(override).expanduser()
    return user_data_dir()


def default_database_path() -> Path:
    """The machine's shared context database, `context.db` in `data_dir()`."""
    return data_dir() / DATABASE_FILENAME
