"""The schema and its migrations: named, ordered functions, each applied once in a transaction.

The tables themselves, and the steps that made them, are in `steps.py`.

Rules (each one a lesson from the peer inventoried in shared/reference):

- A migration is a function `mNNN_what_it_does(conn)` registered with `@migration`; its position
  is its version and its name never changes. `LATEST_SCHEMA_VERSION` is the newest version, and
  a test keeps the two in lockstep.
- Each step runs in `BEGIN IMMEDIATE` together with its `schema_migrations` row, and the version
  is re-read *inside* the lock: when two processes race, the second finds the step done and
  skips it. No error-message parsing, no partial step.
- Fail closed: a database whose version is newer than this build's is refused with
  `SchemaTooNewError` before anything is written. A non-empty file without our bookkeeping
  table is refused too: it is not a contextchef database.
- Version lanes (seed 004): versions below `FORK_LANE_FLOOR` (10000) are ours; rows at or
  above it belong to whoever shares the file with a chain of their own (a fork, a plugin), who
  keeps their DDL compatible with ours. The fence and the version read only our lane, so such
  rows neither trip the fence nor hide a step of ours that is still pending.
- Opening a current database only reads, so processes starting together never queue.
- A fresh (empty) database gets every step in one transaction; a test checks that a database
  migrated step by step from each earlier version, with rows in it, ends with the same
  `sqlite_master`.
- Migration bodies are frozen once released: to change the schema, append a migration (and a
  test of it); never edit a released step.
"""

from __future__ import annotations

import logging
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path

from contextchef.errors import MigrationError, SchemaTooNewError
from contextchef.store.backends.sqlite.connection import (
    connect,
    enable_wal,
    require_fts5,
    translate_errors,
    write_transaction,
)
from contextchef.store.backends.sqlite.private import private_sidecars
from contextchef.store.backends.sqlite.steps import MIGRATIONS, Migration

__all__ = [
    "FORK_LANE_FLOOR",
    "LATEST_SCHEMA_VERSION",
    "MIGRATIONS",
    "Migration",
    "apply_migrations",
    "check_fence",
    "ensure_schema",
    "open_database",
    "pending_migrations",
    "schema_version",
]

log = logging.getLogger("contextchef.store.backends.sqlite.migrations")

Progress = Callable[[int, int], None]
"""A progress callback: `(steps done, steps in all)`."""


LATEST_SCHEMA_VERSION = 10
"""The newest schema this build understands; always equal to `MIGRATIONS[-1].version`."""

FORK_LANE_FLOOR = 10_000
"""Versions from here up are another chain's (see the module docstring); ours stay below."""


def _table_names(conn: sqlite3.Connection) -> set[str]:
    rows = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
    return {str(row[0]) for row in rows}


def schema_version(conn: sqlite3.Connection) -> int:
    """The version recorded in `schema_migrations` in our lane, 0 when the table does not exist."""
    if "schema_migrations" not in _table_names(conn):
        return 0
    row = conn.execute(
        "SELECT coalesce(max(version), 0) FROM schema_migrations WHERE version < ?",
        (FORK_LANE_FLOOR,),
    ).fetchone()
    return int(row[0])


def check_fence(conn: sqlite3.Connection, location: str) -> int:
    """The database's version, after refusing a newer or foreign database (reads only)."""
    tables = _table_names(conn)
    if "schema_migrations" not in tables:
        if tables:
            raise MigrationError(
                f"{location} is not a contextchef database (it has tables {sorted(tables)} but "
                "no schema_migrations); refusing to touch it"
            )
        return 0
    version = schema_version(conn)
    if version > LATEST_SCHEMA_VERSION:
        raise SchemaTooNewError(version, LATEST_SCHEMA_VERSION, location=location)
    return version


def pending_migrations(conn: sqlite3.Connection, location: str) -> list[Migration]:
    """The migrations an `ensure_schema` call would apply, without applying any."""
    version = check_fence(conn, location)
    return [m for m in MIGRATIONS if m.version > version]


def ensure_schema(
    conn: sqlite3.Connection, *, location: str, progress: Progress | None = None
) -> list[str]:
    """Bring the database to `LATEST_SCHEMA_VERSION`; return the names of the steps applied.

    An empty database is installed fresh; an older one is migrated step by step; a current one
    is only read.
    """
    version = check_fence(conn, location)
    if version == LATEST_SCHEMA_VERSION:
        return []
    if version == 0 and _install_fresh(conn, location):
        if progress is not None:
            progress(1, 1)
        return [m.name for m in MIGRATIONS]
    return apply_migrations(
        conn, location=location, target=LATEST_SCHEMA_VERSION, progress=progress
    )


def _install_fresh(conn: sqlite3.Connection, location: str) -> bool:
    with write_transaction(conn):
        if _table_names(conn):
            return False  # another process installed it while we waited for the lock
        now = time.time()
        for step in MIGRATIONS:
            try:
                step.apply(conn)
            except sqlite3.Error as exc:
                raise MigrationError(
                    f"installing the schema into {location} failed at {step.name}: {exc}"
                ) from exc
        conn.executemany(
            "INSERT INTO schema_migrations(version, name, applied_at) VALUES (?, ?, ?)",
            [(m.version, m.name, now) for m in MIGRATIONS],
        )
    log.info("installed schema version %d into %s", LATEST_SCHEMA_VERSION, location)
    return True


def apply_migrations(
    conn: sqlite3.Connection,
    *,
    location: str,
    target: int = LATEST_SCHEMA_VERSION,
    progress: Progress | None = None,
) -> list[str]:
    """Apply the pending migrations up to `target`, each in its own write transaction."""
    seen = check_fence(conn, location)  # steps already applied never take the write lock
    steps = [m for m in MIGRATIONS if seen < m.version <= target]
    applied: list[str] = []
    for done, step in enumerate(steps, start=1):
        with write_transaction(conn):
            current = check_fence(conn, location)  # re-read inside the lock
            if current < step.version:
                if current != step.version - 1:
                    raise MigrationError(
                        f"{location} is at version {current}; cannot apply {step.name}"
                    )
                try:
                    step.apply(conn)
                    conn.execute(
                        "INSERT INTO schema_migrations(version, name, applied_at) VALUES (?, ?, ?)",
                        (step.version, step.name, time.time()),
                    )
                except sqlite3.Error as exc:
                    raise MigrationError(
                        f"migration {step.version} ({step.name}) failed on {location}: {exc}; "
                        "nothing of it was applied"
                    ) from exc
                applied.append(step.name)
                log.info("applied migration %s to %s", step.name, location)
        if progress is not None:
            progress(done, len(steps))
    return applied


def open_database(
    path: Path,
    *,
    readonly: bool = False,
    progress: Progress | None = None,
    migrate: bool = True,
) -> sqlite3.Connection:
    """Open `path` the one safe way: pragmas, schema fence, then WAL and migrations.

    A read-only open only checks the fence. The fence is checked before WAL is switched on, so
    a database this build must refuse is never written to. With `migrate=False` the schema is
    left as it is (the caller decides: see guard.py, which never migrates under another
    process's feet).
    """
    location = str(path)
    conn = connect(path, readonly=readonly)
    try:
        with translate_errors(f"opening {location}"):
            check_fence(conn, location)
            if not readonly:
                require_fts5(conn)
                enable_wal(conn, location)
                private_sidecars(path)
                if migrate:
                    ensure_schema(conn, location=location, progress=progress)
    except BaseException:
        conn.close()
        raise
    return conn
