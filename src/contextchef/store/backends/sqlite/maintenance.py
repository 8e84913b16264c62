"""Inspecting and tending a database file: `info`, `check`, `migrate` (with a dry run), `vacuum`.

`info`, `check` and `migrate --dry-run` open the file read-only (`mode=ro`): they never write,
never checkpoint, and leave the file byte-identical. `migrate` and `vacuum` open it the normal way.
Backup and restore live in backup.py, repair in repair.py.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from contextchef.errors import StoreError
from contextchef.store.backends.sqlite._memories import prune_memory_log
from contextchef.store.backends.sqlite.connection import (
    connect,
    translate_errors,
    write_transaction,
)
from contextchef.store.backends.sqlite.migrations import (
    LATEST_SCHEMA_VERSION,
    Progress,
    check_fence,
    open_database,
    pending_migrations,
    schema_version,
)

__all__ = [
    "CheckReport",
    "DatabaseInfo",
    "MigrateReport",
    "VacuumReport",
    "check",
    "file_sizes",
    "info",
    "migrate",
    "new_timestamped_dir",
    "read_only",
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


def new_timestamped_dir(path: Path, label: str) -> Path:
    """Create and return a fresh directory `<path>.<label>-<time>` next to `path`."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    for attempt in range(1000):
        suffix = "" if attempt == 0 else f"-{attempt}"
        candidate = path.with_name(f"{path.name}.{label}-{stamp}{suffix}")
        try:
            candidate.mkdir(parents=True)
        except FileExistsError:
            continue
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

    `entries` counts the `entries` table; the `memory` namespace lives in `memories`, counted
    (current versions only) in `memories`.
    """
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

    @property
    def ok(self) -> bool:
        return not self.problems


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


def check(path: Path, *, max_problems: int = 100) -> CheckReport:
    """integrity_check, foreign_key_check and FTS consistency, read-only; never raises on damage."""
    problems: list[str] = []
    try:
        with read_only(path) as conn:
            rows = conn.execute(f"PRAGMA integrity_check({max_problems})").fetchall()
            problems += [f"integrity: {r[0]}" for r in rows if r[0] != "ok"]
            for table, rowid, parent, _ in conn.execute("PRAGMA foreign_key_check"):
                problems.append(f"foreign key: {table} row {rowid} points at a missing {parent}")
            problems += _fts_problems(conn)
    except sqlite3.DatabaseError as exc:
        problems.append(f"unreadable: {exc}")
    except StoreError as exc:
        problems.append(f"unreadable: {exc}")
    return CheckReport(path, problems[:max_problems])


@dataclass(frozen=True, slots=True)
class MigrateReport:
    """What `migrate` did, or would do with `dry_run`."""

    path: Path
    from_version: int
    to_version: int
    steps: list[str]
    dry_run: bool


def migrate(
    path: Path, *, dry_run: bool = False, progress: Progress | None = None
) -> MigrateReport:
    """Bring `path` to the latest schema; with `dry_run`, only report (the file is untouched)."""
    if path.is_file():
        with read_only(path) as conn, translate_errors(f"reading {path}"):
            before = check_fence(conn, str(path))
            steps = [m.name for m in pending_migrations(conn, str(path))]
    else:
        before, steps = 0, [f"create {path} at schema version {LATEST_SCHEMA_VERSION}"]
    if dry_run:
        return MigrateReport(path, before, LATEST_SCHEMA_VERSION, steps, dry_run=True)
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    conn = open_database(path, progress=progress)
    try:
        after = schema_version(conn)
    finally:
        conn.close()
    return MigrateReport(path, before, after, steps, dry_run=False)


@dataclass(frozen=True, slots=True)
class VacuumReport:
    """Sizes before and after `vacuum`, and the mutation-log rows the retention policy pruned."""

    bytes_before: int
    bytes_after: int
    pruned_log_rows: int


def vacuum(path: Path, *, progress: Progress | None = None) -> VacuumReport:
    """Prune the mutation log, optimise the FTS index, checkpoint and VACUUM the file."""
    before = sum(file_sizes(path).values())
    conn = open_database(path)
    try:
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
            pruned = 0
            for done, step in enumerate(steps, start=1):
                if step == "prune":
                    with write_transaction(conn):
                        pruned = prune_memory_log(conn, now=time.time())
                else:
                    conn.execute(step).fetchall()
                if progress is not None:
                    progress(done, len(steps))
    finally:
        conn.close()
    return VacuumReport(before, sum(file_sizes(path).values()), pruned)
