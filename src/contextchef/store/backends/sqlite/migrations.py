"""The schema and its migrations: named, ordered functions, each applied once in a transaction.

Tables (the current shape is the sum of the migrations below):

- `projects` (one row per project; `identity` is the first identity ever computed for it, or
  the explicit identity it was opened with), `project_aliases` (every identity that maps to a
  project: each git root, each `dir:` hash) and `project_dirs` (the last identity resolved for
  each directory, reused when git fails transiently).
- `entries`: the store's text entries, unique per (project, namespace, path), with their times,
  byte size and free meta JSON. Its `accessed_at` column is unused since m005 (always NULL):
  the access time lives in `entry_access`, so recording a read never rewrites the entry's row
  (SQLite rewrites a whole record, 10 MiB of content included, for any UPDATE of it).
  `entries_fts` is an FTS5 external-content index over path and content, kept in sync by
  triggers; the update trigger fires only when path or content changed, so meta-only writes
  never rewrite the index (and `touch` never writes `entries` at all).
- `memories`: keyed facts, one *current* row per (project, key) (a partial unique index), older
  versions kept with `superseded_by` pointing at their successor; deletion is a `deleted_at`
  mark, never a destructive overwrite. `memory_log` is the append-only log of memory mutations
  (updates are refused by a trigger), pruned by the retention policy of `_memories.py`. The
  backend serves its `memory` namespace from these two tables (see `_memories.py`).
- `memories_fts`: FTS5 external-content index over the key and content of every memory version
  (versions are immutable, so rows are indexed on insert and removed on delete only); search
  keeps the current rows.
- `entry_access`: the last read time of an entry, one small row per entry that was ever read
  (or written with an explicit `accessed_at`), deleted with the entry by its foreign key.

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
from collections.abc import Callable, Iterable
from dataclasses import dataclass
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

__all__ = [
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


@dataclass(frozen=True, slots=True)
class Migration:
    """One schema step: its version (position in the chain), name and body."""

    version: int
    name: str
    apply: Callable[[sqlite3.Connection], None]


_CHAIN: list[Migration] = []


def migration(fn: Callable[[sqlite3.Connection], None]) -> Callable[[sqlite3.Connection], None]:
    """Register `fn` as the next migration; its function name is its permanent id."""
    _CHAIN.append(Migration(len(_CHAIN) + 1, fn.__name__, fn))
    return fn


def _run(conn: sqlite3.Connection, statements: Iterable[str]) -> None:
    for statement in statements:
        conn.execute(statement)


@migration
def m001_create_projects_and_entries(conn: sqlite3.Connection) -> None:
    """The bookkeeping table, project identities and the entries of the context store."""
    _run(
        conn,
        (
            """CREATE TABLE schema_migrations (
        version INTEGER PRIMARY KEY,
        name TEXT NOT NULL,
        applied_at REAL NOT NULL
    )""",
            """CREATE TABLE projects (
        id INTEGER PRIMARY KEY,
        identity TEXT NOT NULL UNIQUE,
        created_at REAL NOT NULL
    )""",
            """CREATE TABLE project_aliases (
        alias TEXT PRIMARY KEY,
        project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        created_at REAL NOT NULL
    )""",
            "CREATE INDEX project_aliases_project ON project_aliases(project_id)",
            """CREATE TABLE project_dirs (
        path TEXT PRIMARY KEY,
        project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        identity TEXT NOT NULL,
        seen_at REAL NOT NULL
    )""",
            "CREATE INDEX project_dirs_project ON project_dirs(project_id)",
            """CREATE TABLE entries (
        id INTEGER PRIMARY KEY,
        project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        namespace TEXT NOT NULL,
        path TEXT NOT NULL,
        content TEXT NOT NULL,
        meta TEXT NOT NULL DEFAULT '{}',
        created_at REAL NOT NULL,
        updated_at REAL NOT NULL,
        accessed_at REAL,
        bytes INTEGER NOT NULL,
        UNIQUE (project_id, namespace, path)
    )""",
        ),
    )


@migration
def m002_add_entries_fts(conn: sqlite3.Connection) -> None:
    """Full-text search over entries; triggers skip updates that leave path and content alone."""
    _run(
        conn,
        (
            """CREATE VIRTUAL TABLE entries_fts USING fts5(
        path, content, content='entries', content_rowid='id',
        tokenize='unicode61 remove_diacritics 2'
    )""",
            """CREATE TRIGGER entries_fts_insert AFTER INSERT ON entries BEGIN
        INSERT INTO entries_fts(rowid, path, content) VALUES (new.id, new.path, new.content);
    END""",
            """CREATE TRIGGER entries_fts_delete AFTER DELETE ON entries BEGIN
        INSERT INTO entries_fts(entries_fts, rowid, path, content)
        VALUES ('delete', old.id, old.path, old.content);
    END""",
            """CREATE TRIGGER entries_fts_update AFTER UPDATE OF path, content ON entries
    WHEN old.content IS NOT new.content OR old.path IS NOT new.path BEGIN
        INSERT INTO entries_fts(entries_fts, rowid, path, content)
        VALUES ('delete', old.id, old.path, old.content);
        INSERT INTO entries_fts(rowid, path, content) VALUES (new.id, new.path, new.content);
    END""",
            # Entries written before this step are indexed from the content table.
            "INSERT INTO entries_fts(entries_fts) VALUES ('rebuild')",
        ),
    )


@migration
def m003_create_memories(conn: sqlite3.Connection) -> None:
    """Keyed memories with supersession history, and their append-only mutation log."""
    _run(
        conn,
        (
            """CREATE TABLE memories (
        id INTEGER PRIMARY KEY,
        project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        key TEXT NOT NULL,
        content TEXT NOT NULL,
        meta TEXT NOT NULL DEFAULT '{}',
        created_at REAL NOT NULL,
        superseded_by INTEGER REFERENCES memories(id) ON DELETE SET NULL
            DEFERRABLE INITIALLY DEFERRED,
        deleted_at REAL
    )""",
            """CREATE UNIQUE INDEX memories_current ON memories(project_id, key)
        WHERE superseded_by IS NULL AND deleted_at IS NULL""",
            "CREATE INDEX memories_history ON memories(project_id, key, id)",
            """CREATE TABLE memory_log (
        id INTEGER PRIMARY KEY,
        project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        memory_id INTEGER,
        key TEXT NOT NULL,
        op TEXT NOT NULL CHECK (op IN ('create', 'update', 'delete')),
        at REAL NOT NULL
    )""",
            "CREATE INDEX memory_log_project ON memory_log(project_id, id)",
            "CREATE INDEX memory_log_at ON memory_log(at)",
            """CREATE TRIGGER memory_log_append_only BEFORE UPDATE ON memory_log BEGIN
        SELECT RAISE(ABORT, 'memory_log is append-only');
    END""",
        ),
    )


@migration
def m004_add_memories_fts(conn: sqlite3.Connection) -> None:
    """Full-text search over memory versions, so the `memory` namespace searches like the rest."""
    _run(
        conn,
        (
            """CREATE VIRTUAL TABLE memories_fts USING fts5(
        key, content, content='memories', content_rowid='id',
        tokenize='unicode61 remove_diacritics 2'
    )""",
            """CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories BEGIN
        INSERT INTO memories_fts(rowid, key, content) VALUES (new.id, new.key, new.content);
    END""",
            """CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories BEGIN
        INSERT INTO memories_fts(memories_fts, rowid, key, content)
        VALUES ('delete', old.id, old.key, old.content);
    END""",
            """CREATE TRIGGER memories_fts_update AFTER UPDATE OF key, content ON memories
    WHEN old.content IS NOT new.content OR old.key IS NOT new.key BEGIN
        INSERT INTO memories_fts(memories_fts, rowid, key, content)
        VALUES ('delete', old.id, old.key, old.content);
        INSERT INTO memories_fts(rowid, key, content) VALUES (new.id, new.key, new.content);
    END""",
            # Versions recorded before this step are indexed from the content table.
            "INSERT INTO memories_fts(memories_fts) VALUES ('rebuild')",
        ),
    )


@migration
def m005_move_access_times_to_entry_access(conn: sqlite3.Connection) -> None:
    """Access times in a table of their own; existing ones move there, the column is emptied.

    The column stays (dropping one needs SQLite 3.35 and rewrites every row) but is never
    read or written again.
    """
    _run(
        conn,
        (
            """CREATE TABLE entry_access (
        entry_id INTEGER PRIMARY KEY REFERENCES entries(id) ON DELETE CASCADE,
        accessed_at REAL NOT NULL
    )""",
            """INSERT INTO entry_access(entry_id, accessed_at)
        SELECT id, accessed_at FROM entries WHERE accessed_at IS NOT NULL""",
            "UPDATE entries SET accessed_at = NULL WHERE accessed_at IS NOT NULL",
        ),
    )


MIGRATIONS: tuple[Migration, ...] = tuple(_CHAIN)
"""Every migration, oldest first; `MIGRATIONS[i].version == i + 1`."""

LATEST_SCHEMA_VERSION = 5
"""The newest schema this build understands; always equal to `MIGRATIONS[-1].version`."""


def _table_names(conn: sqlite3.Connection) -> set[str]:
    rows = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
    return {str(row[0]) for row in rows}


def schema_version(conn: sqlite3.Connection) -> int:
    """The version recorded in `schema_migrations`, 0 when the table does not exist."""
    if "schema_migrations" not in _table_names(conn):
        return 0
    row = conn.execute("SELECT coalesce(max(version), 0) FROM schema_migrations").fetchone()
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
    return apply_migrations(conn, location=location, progress=progress)


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
    path: Path, *, readonly: bool = False, progress: Progress | None = None
) -> sqlite3.Connection:
    """Open `path` the one safe way: pragmas, schema fence, then WAL and migrations.

    A read-only open only checks the fence. The fence is checked before WAL is switched on, so
    a database this build must refuse is never written to.
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
                ensure_schema(conn, location=location, progress=progress)
    except BaseException:
        conn.close()
        raise
    return conn
