"""Migrate-on-open, guarded: a newer build never migrates a database that an older one is using.

Two rules keep builds of different versions off each other's schema (seed 004's fence against
older writers):

1. **An older build refuses a newer database.** The schema fence (`migrations.check_fence`):
   opening a database whose version is above the build's `LATEST_SCHEMA_VERSION` raises
   `SchemaTooNewError` before anything is written.
2. **A newer build never migrates under an older one.** Rule 1 only covers processes that open
   the file *after* it was migrated; one that already had it open would go on writing with the
   old schema. While a database is at version N, every process that has it open opened it at
   N, i.e. runs a build that understands N (a build that understands more would have migrated
   it when it opened it). So `open_for_use` migrates only while no other process has the
   database open: it gives up its own shared hold on the maintenance lock (`<db>.lock`, see
   locking.py) and takes the lock exclusively, exactly as `contextchef db migrate` does. While
   other processes hold it, opening is refused with `StoreInUseError`, naming their pids where
   the platform can tell: stop or upgrade them, then open again (or run `contextchef db migrate
   --wait`). Nothing is written before the refusal.

Processes of the *same* new build opening an older database together do not refuse each other:
a process that cannot take the lock exclusively takes its shared hold again (waiting while
another process migrates), re-reads the version, and goes on once someone else migrated the
file; only when the database is still behind after `MIGRATE_ON_OPEN_WAIT_S` does it refuse. An
empty file (a first open) is installed under the shared hold as before: nobody can be using a
schema that does not exist yet, and the install re-checks inside its write transaction.
"""

from __future__ import annotations

import logging
import os
import random
import sqlite3
import time
from pathlib import Path

from contextchef.errors import StoreInUseError
from contextchef.store.backends.sqlite.locking import SharedLock, exclusive, holders
from contextchef.store.backends.sqlite.migrations import (
    ensure_schema,
    open_database,
    pending_migrations,
)

__all__ = ["MIGRATE_ON_OPEN_WAIT_S", "open_for_use"]

log = logging.getLogger("contextchef.store.backends.sqlite.guard")

MIGRATE_ON_OPEN_WAIT_S = 2.0
"""How long opening an older database retries for the exclusive lock before refusing."""

_RETRY_S = 0.05


def _open_held(path: Path) -> tuple[SharedLock, sqlite3.Connection]:
    """The shared hold and a connection whose fence passed, not migrated yet."""
    hold = SharedLock(path)
    try:
        return hold, open_database(path, migrate=False)
    except BaseException:
        hold.discard()  # refused: no lock file is left beside a file that is not ours
        raise


def _refusal(path: Path, version: int, target: int, cause: StoreInUseError) -> StoreInUseError:
    pids = [pid for pid in holders(path) or [] if pid != os.getpid()]
    if pids:
        plural = len(pids) > 1
        who = f"process{'es' if plural else ''} {', '.join(map(str, pids))} still "
        who += "have it open" if plural else "has it open"
    else:
        who = "another process still has it open"
    return StoreInUseError(
        f"refusing to migrate {path} from schema version {version} to {target}: {who}, "
        f"running a contextchef that uses schema version {version}, and it would go on writing "
        "with that schema. Stop or upgrade it, then open the store again (or run `contextchef "
        f"db migrate --db {path} --wait`). Nothing was changed",
        holders=len(pids) if pids else cause.holders,
    )


def open_for_use(path: Path) -> tuple[SharedLock, sqlite3.Connection]:
    """Open `path` for a backend: the shared hold on its lock and a connection at the latest
    schema, migrated only while no other process uses the file (see the module docstring)."""
    deadline = time.monotonic() + MIGRATE_ON_OPEN_WAIT_S
    while True:
        hold, conn = _open_held(path)
        try:
            pending = pending_migrations(conn, str(path))
            if not pending:
                return hold, conn
            if pending[0].version == 1:  # an empty file: installed under the shared hold
                ensure_schema(conn, location=str(path))
                return hold, conn
            version, target = pending[0].version - 1, pending[-1].version
        except BaseException:
            conn.close()
            hold.release()
            raise
        conn.close()
        hold.release()
        try:
            with exclusive(path, command="migrate"):
                open_database(path).close()  # migrates: the lock says nobody else has it open
            log.info("migrated %s from schema version %d to %d on open", path, version, target)
        except StoreInUseError as busy:
            if time.monotonic() >= deadline:
                raise _refusal(path, version, target, busy) from busy
            time.sleep(_RETRY_S * (0.5 + random.random()))
