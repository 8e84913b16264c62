"""Where contextchef keeps its data on this machine: the one place `CONTEXTCHEF_HOME` is read.

The data directory is `CONTEXTCHEF_HOME` when set, else the platform's user data directory
(platformdirs). Under pytest the real user directory is refused: a test that forgot to point
`CONTEXTCHEF_HOME` at a temporary directory fails loudly instead of writing into the user's
memories.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import platformdirs

from contextchef.errors import StoreError

__all__ = [
    "DATABASE_FILENAME",
    "HOME_ENV",
    "data_dir",
    "default_database_path",
    "refuse_real_user_data_under_pytest",
]

HOME_ENV = "CONTEXTCHEF_HOME"
"""Environment variable that overrides the data directory."""

_APP_NAME = "contextchef"
DATABASE_FILENAME = "context.db"


def _user_data_dir() -> Path:
    return Path(platformdirs.user_data_dir(_APP_NAME, appauthor=False))


def _under_pytest() -> bool:
    return "pytest" in sys.modules or "PYTEST_CURRENT_TEST" in os.environ


def data_dir() -> Path:
    """The directory holding contextchef's data: `$CONTEXTCHEF_HOME`, else the user data dir."""
    override = os.environ.get(HOME_ENV)
    if override:
        return Path(override).expanduser()
    return _user_data_dir()


def default_database_path() -> Path:
    """The machine's shared context database, `context.db` in `data_dir()`."""
    if _under_pytest() and not os.environ.get(HOME_ENV):
        raise StoreError(
            f"refusing to open the default database from a test process: set {HOME_ENV} to a "
            "temporary directory so tests never touch the real user database"
        )
    path = data_dir() / DATABASE_FILENAME
    refuse_real_user_data_under_pytest(path)
    return path


def refuse_real_user_data_under_pytest(path: Path) -> None:
    """Refuse `path` when a test process would read or write the real user data directory.

    Under pytest no path may lie inside the real user data directory, even when given
    explicitly, so the suite can never touch the memories of the person running it.
    """
    if not _under_pytest():
        return
    real = _user_data_dir().resolve()
    target = path.expanduser().resolve()
    if target == real or real in target.parents:
        raise StoreError(
            f"refusing to open {target} from a test process: set {HOME_ENV} to a temporary "
            f"directory so tests never touch the real user database in {real}"
        )
