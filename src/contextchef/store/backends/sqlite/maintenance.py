"""Inspecting and tending a database file: `info`, `check`, `vacuum`.

`info` and `check` open the file read-only (`mode=ro`): they never write, never checkpoint, and
leave the file byte-identical. `vacuum` opens it the normal way, and refuses a database with
pending migrations (`contextchef db migrate` does those, with a backup first: upgrade.py).
Backup and restore live in backup.py, repair in repair.py.

`foreign_reason` tells a contextchef database from anything else (a text file, another
application's SQLite database) by the SQLite header and our own bookkeeping (`schema_migrations`
with our first step's name, `projects`, `entries`); `check` reports such a file as "not a
contextchef database", and repair and restore refuse it and leave it untouched.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from contextchef.errors import ForeignDatabaseError, MigrationError, StoreError
from contextchef.store.backends.sqlite._vectors import delete_orphans
from contextchef.store.backends.sqlite._versioned import prune_memory_log
from contextchef.store.backends.sqlite.connection import (
    connect,
    translate_errors,
    write_transaction,
)
from contextchef.store.backends.sqlite.migrations import (
    LATEST_SCHEMA_VERSION,
    MIGRATIONS,
    Progress,
    open_database,
    pending_migrations,
    schema_version,
)
from contextchef.store.backends.sqlite.receipts import receipt_problems
from contextchef.store.backends.sqlite.spelling import spelling_notes

__all__ = [
    "CheckReport",
    "DatabaseInfo",
    "VacuumReport",
    "check",
    "file_sizes",
    "foreign_error",
    "foreign_reason",
    "info",
    "new_timestamped_dir",
    "read_only",
    "require_ours",
    "schema_reason",
    "side_files",
    "vacuum",
]


def side_files(path: Path) -> list[Path]:
    """The database file and its `-wal`/`-shm` companions, those that exist."""
    names = (path.name, path.name + "-wal", path.name + "-shm")
    return [path.with_name(n) for n in names if path.with_name(n).exists()]


def file_sizes(path: Path) -> dict[str, int]:
    """Sizes in bytes of the database file and its `-wal`/`-shm` companions that exist."""
    return {file.name: file.stat().st_size for file in side_files(path)}


SQLITE_HEADER = b"SQLite format 3\x00"
_OURS = frozenset({"schema_migrations", "projects", "entries"})


def foreign_reason(path: Path) -> str | None:
    """Why the file at `path` is not a contextchef database, or None when it is one.

    Reads only: the first 16 bytes, then `sqlite_master` and our first migration row over a
    read-only connection. Raises `sqlite3.DatabaseError` when the file is SQLite but its schema
    cannot be read (damage): whose it is cannot be told then.
    """
    with path.open("rb") as handle:
        head = handle.read(len(SQLITE_HEADER))
    if not head:
        return "it is an empty file"
    if head != SQLITE_HEADER:
        return "it is not an SQLite database at all"
    conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, isolation_level=None)
    try:
        return schema_reason(conn)
    finally:
        conn.close()


def schema_reason(conn: sqlite3.Connection) -> str | None:
    """Why the open SQLite database is not contextchef's, or None when it is (see above)."""
    tables = {str(r[0]) for r in conn.execute("SELECT name FROM sqlite_master")}
    if not tables >= _OURS:
        shown = ", ".join(sorted(t for t in tables if not t.startswith("sqlite_"))[:5])
        return f"it has no contextchef schema (tables: {shown or 'none'})"
    columns = {str(r[1]) for r in conn.execute("PRAGMA table_info(schema_migrations)")}
    if "name" not in columns:
        return "its schema_migrations table is not contextchef's"
    try:
        row = conn.execute("SELECT name FROM schema_migrations WHERE version = 1").fetchone()
    except sqlite3.DatabaseError:
        return None  # a damaged page; the tables say it is ours
    if row is not None and row[0] != MIGRATIONS[0].name:
        return f"its schema_migrations records {row[0]!r}, not contextchef's first step"
    return None


def require_ours(path: Path, *, doing: str) -> None:
    """Raise `ForeignDatabaseError` when `path` is not a contextchef database (nothing written)."""
    try:
        reason = foreign_reason(path)
    except sqlite3.DatabaseError:
        return  # damaged, not foreign: what runs next reports the damage
    except OSError as exc:
        raise StoreError(f"cannot read {path}: {exc.strerror or exc}") from exc
    if reason is not None:
        raise foreign_error(path, reason, doing=doing)


def foreign_error(path: Path, reason: str, *, doing: str) -> ForeignDatabaseError:
    """The one-line refusal for a file that is not a contextchef database."""
    return ForeignDatabaseError(
        f"refusing to {doing} {path}: not a contextchef database ({reason}); it was left "
        "untouched. Check the --db path"
    )


def new_timestamped_dir(path: Path, label: str) -> Path:
    """Create and return a fresh directory `<path>.<label>-<time>` (0700) next to `path`."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    for attempt in range(1000):
        suffix = "" if attempt == 0 else f"-{attempt}"
        candidate = path.with_name(f"{path.name}.{label}-{stamp}{suffix}")
        try:
            candidate.mkdir(mode=0o700)
        except FileExistsError:
            continue
        candidate.chmod(0o700)
        return candidate
    raise StoreError(f"cannot create a {label} directory next to {path}")


@contextmanager
def read_only(path: Path) -> Iterator[sqlite3.Connection]:
    """A read-only connection to an existing database file, closed on exit."""
    if not path.is_file():
        raise StoreError(
            f"no database at {path} (it is created on first use, or by `contextchef db migrate`)"
        )
    conn = connect(path, readonly=True)
    try:
        yield conn
    finally:
        conn.close()


@dataclass(frozen=True, slots=True)
class DatabaseInfo:
    """What `contextchef db info` shows."""

    path: Path
    schema_version: int
    supported_version: int
    pending: list[str]
    sizes: dict[str, int]
    page_size: int
    page_count: int
    freelist_count: int
    journal_mode: str
    entries: list[tuple[str, str, int, int]] = field(default_factory=list)
    """(project identity, namespace, entries, bytes) rows."""
    memories: list[tuple[str, int]] = field(default_factory=list)
    """(project identity, current memories) rows."""


def info(path: Path) -> DatabaseInfo:
    """Path, schema version and fence, sizes, and row counts per namespace and project.

    `entries` counts the `entries` table; the versioned namespaces live in `memories`, counted
    (current versions only, all namespaces together) in `memories`.
    """
    if path.is_file():
        require_ours(path, doing="describe")
    with read_only(path) as conn, translate_errors(f"reading {path}"):
        version = schema_version(conn)
        readable = version <= LATEST_SCHEMA_VERSION
        pending = [m.name for m in pending_migrations(conn, str(path))] if readable else []
        entries: list[tuple[str, str, int, int]] = []
        memories: list[tuple[str, int]] = []
        if readable and version >= 1:
            entries = conn.execute(
                "SELECT p.identity, e.namespace, count(*), coalesce(sum(e.bytes), 0) "
                "FROM entries e JOIN projects p ON p.id = e.project_id "
                "GROUP BY p.identity, e.namespace ORDER BY p.identity, e.namespace"
            ).fetchall()
        if readable and version >= 3:
            memories = conn.execute(
                "SELECT p.identity, count(*) FROM memories m "
                "JOIN projects p ON p.id = m.project_id "
                "WHERE m.superseded_by IS NULL AND m.deleted_at IS NULL "
                "GROUP BY p.identity ORDER BY p.identity"
            ).fetchall()
        pragma = {
            name: conn.execute(f"PRAGMA {name}").fetchone()[0]
            for name in ("page_size", "page_count", "freelist_count", "journal_mode")
        }
    return DatabaseInfo(
        path=path,
        schema_version=version,
        supported_version=LATEST_SCHEMA_VERSION,
        pending=pending,
        sizes=file_sizes(path),
        page_size=int(pragma["page_size"]),
        page_count=int(pragma["page_count"]),
        freelist_count=int(pragma["freelist_count"]),
        journal_mode=str(pragma["journal_mode"]),
        entries=[(str(a), str(b), int(c), int(d)) for a, b, c, d in entries],
        memories=[(str(a), int(b)) for a, b in memories],
    )


@dataclass(frozen=True, slots=True)
class CheckReport:
    """The result of `check`: `ok` when no problem was found."""

    path: Path
    problems: list[str]
    foreign: str | None = None
    """Why the file is not a contextchef database, when it is not one (then nothing else ran)."""
    notes: list[str] = field(default_factory=list)
    """Findings that are not damage (entries stored under a non-NFC path; see `spelling`)."""

    @property
    def ok(self) -> bool:
        return not self.problems and self.foreign is None


_FTS_INDEXES = (
    ("entries", "entries_fts", "entries", "entry"),
    ("memories", "memories_fts", "memory versions", "memory version"),
)
"""(content table, FTS5 index, its rows, one row) that `check` compares."""


def _fts_problems(conn: sqlite3.Connection) -> list[str]:
    """Rows missing from each FTS index, and index rows whose row is gone."""
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    problems = []
    for table, index, rows, row in _FTS_INDEXES:
        if f"{index}_docsize" not in tables:
            continue
        missing = conn.execute(
            f"SELECT count(*) FROM {table} WHERE id NOT IN (SELECT id FROM {index}_docsize)"
        ).fetchone()[0]
        stray = conn.execute(
            f"SELECT count(*) FROM {index}_docsize WHERE id NOT IN (SELECT id FROM {table})"
        ).fetchone()[0]
        if missing:
            problems.append(f"full-text index {index}: {missing} {rows} are not indexed")
        if stray:
            problems.append(f"full-text index {index}: {stray} index rows have no {row}")
    return problems


_DIRS_OF_ENTRIES = (
    "SELECT project_id, namespace, rtrim(path, replace(path, '/', '')), count(*) FROM entries "
    "GROUP BY 1, 2, 3"
)
_DIR_INDEX = "SELECT project_id, namespace, dir, entries FROM entry_dirs"


def _dir_index_problems(conn: sqlite3.Connection) -> list[str]:
    """Directories whose count in the namespace index (`entry_dirs`, m009) is not the number
    of entries in them (`db repair` rebuilds the index from the entries)."""
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if "entry_dirs" not in tables:
        return []
    wrong = conn.execute(
        f"SELECT count(*) FROM ({_DIRS_OF_ENTRIES} EXCEPT {_DIR_INDEX}) "
        f"UNION ALL SELECT count(*) FROM ({_DIR_INDEX} EXCEPT {_DIRS_OF_ENTRIES})"
    ).fetchall()
    missing, stray = wrong[0][0], wrong[1][0]
    if not missing and not stray:
        return []
    return [f"namespace index entry_dirs: {missing + stray} directory counts disagree with entries"]


def check(path: Path, *, max_problems: int = 100) -> CheckReport:
    """integrity_check, foreign_key_check, FTS and namespace index consistency, read-only; never
    raises on damage.

    Also verifies what earlier repairs and restores of the file claimed: that nothing wrote to
    the file they replaced (receipts.py).

    A file that is not a contextchef database is reported as such (`foreign`), not checked.
    """
    if not path.is_file():
        raise StoreError(
            f"no database at {path} (it is created on first use, or by `contextchef db migrate`)"
        )
    problems: list[str] = []
    notes: list[str] = []
    try:
        reason = foreign_reason(path)
    except (sqlite3.DatabaseError, OSError):
        reason = None  # unreadable schema: integrity_check below says what is wrong
    if reason is not None:
        return CheckReport(path, [], foreign=reason)
    try:
        with read_only(path) as conn:
            rows = conn.execute(f"PRAGMA integrity_check({max_problems})").fetchall()
            problems += [f"integrity: {r[0]}" for r in rows if r[0] != "ok"]
            for table, rowid, parent, _ in conn.execute("PRAGMA foreign_key_check"):
                problems.append(f"foreign key: {table} row {rowid} points at a missing {parent}")
            problems += _fts_problems(conn)
            problems += _dir_index_problems(conn)
            notes = spelling_notes(conn, limit=max_problems)
    except sqlite3.DatabaseError as exc:
        problems.append(f"unreadable: {exc}")
    except StoreError as exc:
        problems.append(f"unreadable: {exc}")
    problems += receipt_problems(path.resolve())
    return CheckReport(path, problems[:max_problems], notes=notes)


@dataclass(frozen=True, slots=True)
class VacuumReport:
    """Sizes before and after `vacuum`, the mutation-log rows the retention policy pruned and
    the vectors of a semantic index whose entry was gone."""

    bytes_before: int
    bytes_after: int
    pruned_log_rows: int
    orphaned_vectors: int = 0


def vacuum(path: Path, *, progress: Progress | None = None) -> VacuumReport:
    """Prune the mutation log and the vectors whose entry is gone, optimise the FTS index,
    checkpoint and VACUUM the file."""
    if not path.is_file():
        raise StoreError(f"no database at {path}; nothing to vacuum")
    require_ours(path, doing="vacuum")
    before = sum(file_sizes(path).values())
    conn = open_database(path, migrate=False)
    try:
        if pending_migrations(conn, str(path)):
            raise MigrationError(
                f"{path} has pending schema migrations; run `contextchef db migrate --db {path}` "
                "first (it backs the database up before it writes)"
            )
        with translate_errors(f"vacuuming {path}"):
            steps = (
                "prune",
                "INSERT INTO entries_fts(entries_fts) VALUES ('optimize')",
                "INSERT INTO memories_fts(memories_fts) VALUES ('optimize')",
                "PRAGMA wal_checkpoint(TRUNCATE)",
                "VACUUM",
                "PRAGMA wal_checkpoint(TRUNCATE)",
                "PRAGMA optimize",
            )
            pruned = orphans = 0
            for done, step in enumerate(steps, start=1):
                if step == "prune":
                    with write_transaction(conn):
                        pruned = prune_memory_log(conn, now=time.time())
                        orphans = delete_orphans(conn)
                else:
                    conn.execute(step).fetchall()
                if progress is not None:
                    progress(done, len(steps))
    finally:
        conn.close()
    return VacuumReport(before, sum(file_sizes(path).values()), pruned, orphans)
