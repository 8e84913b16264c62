"""Repairing a damaged database: back the files up first, then salvage every readable row.

`repair` first takes the sidecar lock exclusively (locking.py): while any other process has the
database open it refuses (or waits, given `wait`), because a writer that kept its connection
would go on committing into the file that repair moves away. It refuses a file that is not a
contextchef database (maintenance.foreign_reason) and leaves it untouched, and it refuses a
database whose schema cannot be read at all: no row could be salvaged from it.

It never works on the damaged files themselves. It copies the database and its
`-wal`/`-shm` into `<db>.corrupt-backup-<time>/` before anything else, reads rows from that
copy, writes them into a freshly installed database, and only then swaps the fresh file in; the
damaged originals then take their copies' place in that directory, exactly as they were, with
a receipt that `check` verifies (receipts.py). Through a symlink, the file it points to is
repaired in its place and the link is kept.
Rows are read in rowid order in chunks; when a chunk hits a damaged page the reader probes rowid
by rowid past it, so one bad page costs the rows on that page and no more. The report lists,
per table, the rows recovered, the rowid ranges that could not be read, and the rows dropped
because what they referred to was lost. "Nothing was lost" is only claimed when it was
verified: every table's rows were counted in the damaged copy and again in the repaired file,
and the counts match (`TableSalvage.verified`).
"""

from __future__ import annotations

import logging
import shutil
import sqlite3
import time
from collections.abc import Generator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from contextchef.errors import SchemaTooNewError, StoreCorruptError, StoreError
from contextchef.store.backends.sqlite.connection import translate_errors, write_transaction
from contextchef.store.backends.sqlite.locking import exclusive, real_path
from contextchef.store.backends.sqlite.maintenance import (
    foreign_error,
    foreign_reason,
    new_timestamped_dir,
    read_only,
    schema_reason,
    side_files,
)
from contextchef.store.backends.sqlite.migrations import (
    LATEST_SCHEMA_VERSION,
    Progress,
    open_database,
    schema_version,
)
from contextchef.store.backends.sqlite.private import FILE_MODE
from contextchef.store.backends.sqlite.receipts import write_receipt

__all__ = ["RepairReport", "TableSalvage", "repair"]

log = logging.getLogger("contextchef.store.backends.sqlite.repair")

SALVAGE_ORDER = (
    "projects",
    "project_aliases",
    "project_dirs",
    "entries",
    "entry_access",
    "memories",
    "memory_log",
    "versioned_namespaces",
)
"""Tables copied, parents before children so foreign keys hold."""

_CHUNK = 500
_MIN_ROWID = -(2**63)
_PROBE_WITHOUT_BOUND = 100_000


@dataclass(slots=True)
class TableSalvage:
    """What was saved of one table."""

    table: str
    recovered: int = 0
    unreadable: list[tuple[int, int]] = field(default_factory=list)
    """Inclusive rowid ranges that could not be read."""
    dropped: int = 0
    """Rows read but not kept, because a row they referred to was lost."""
    source_rows: int | None = None
    """`count(*)` in the damaged copy; None when even counting failed."""
    final_rows: int | None = None
    """`count(*)` in the repaired database, after the swap."""

    @property
    def lost_something(self) -> bool:
        short = (
            self.source_rows is not None
            and self.final_rows is not None
            and self.final_rows < self.source_rows
        )
        return bool(self.unreadable or self.dropped or short)

    @property
    def verified(self) -> bool:
        """Whether the repaired table provably holds every row of the damaged one."""
        return (
            not self.lost_something
            and self.source_rows is not None
            and self.final_rows == self.source_rows
        )


@dataclass(frozen=True, slots=True)
class RepairReport:
    """The outcome of `repair`: where the damaged files were saved, and what was salvaged."""

    path: Path
    backup_dir: Path
    tables: list[TableSalvage]

    @property
    def lossless(self) -> bool:
        """True only when every table's rows were counted before and after, and match."""
        return all(t.verified for t in self.tables)

    @property
    def lost_something(self) -> bool:
        return any(t.lost_something for t in self.tables)


def _columns(conn: sqlite3.Connection, table: str) -> list[str]:
    try:
        return [str(row[1]) for row in conn.execute(f"PRAGMA table_info({table})")]
    except sqlite3.DatabaseError:
        return []


def _max_rowid(conn: sqlite3.Connection, table: str) -> int | None:
    try:
        row = conn.execute(f"SELECT rowid FROM {table} ORDER BY rowid DESC LIMIT 1").fetchone()
    except sqlite3.DatabaseError:
        return None
    return None if row is None else int(row[0])


def _salvage_rows(
    conn: sqlite3.Connection, table: str, columns: list[str], report: TableSalvage
) -> Iterator[tuple[Any, ...]]:
    """Every readable row of `table` (rowid first), recording unreadable rowid ranges."""
    select = f"SELECT rowid, {', '.join(columns)} FROM {table}"
    upper = _max_rowid(conn, table)
    position = _MIN_ROWID
    while True:
        try:
            chunk = conn.execute(
                f"{select} WHERE rowid > ? ORDER BY rowid LIMIT {_CHUNK}", (position,)
            ).fetchall()
        except sqlite3.DatabaseError:
            resume = yield from _probe_past(conn, select, max(position, 0), upper, report)
            if resume is None:
                return
            position = resume
            continue
        if not chunk:
            return
        yield from chunk
        position = int(chunk[-1][0])


def _probe_past(
    conn: sqlite3.Connection,
    select: str,
    position: int,
    upper: int | None,
    report: TableSalvage,
) -> Generator[tuple[Any, ...], None, int | None]:
    """Read rowid by rowid after `position` until a row reads again; return where to resume."""
    limit = upper if upper is not None else position + _PROBE_WITHOUT_BOUND
    first_bad: int | None = None
    for rowid in range(position + 1, limit + 1):
        try:
            row = conn.execute(f"{select} WHERE rowid = ?", (rowid,)).fetchone()
        except sqlite3.DatabaseError:
            first_bad = rowid if first_bad is None else first_bad
            continue
        if row is None:
            continue
        if first_bad is not None:
            report.unreadable.append((first_bad, rowid - 1))
        yield row
        return rowid
    if first_bad is not None:
        report.unreadable.append((first_bad, limit))
    return None


def _legacy_access_times(source: sqlite3.Connection, dest: sqlite3.Connection) -> TableSalvage:
    """`entry_access` of a file older than m005, whose access times were the (salvaged)
    `entries.accessed_at` column: moved into the table as m005 does."""
    report = TableSalvage("entry_access")
    with write_transaction(dest):
        moved = dest.execute(
            "INSERT INTO entry_access(entry_id, accessed_at) "
            "SELECT id, accessed_at FROM entries WHERE accessed_at IS NOT NULL"
        )
        report.recovered = moved.rowcount
        dest.execute("UPDATE entries SET accessed_at = NULL WHERE accessed_at IS NOT NULL")
    try:
        counted = source.execute("SELECT count(*) FROM entries WHERE accessed_at IS NOT NULL")
        report.source_rows = int(counted.fetchone()[0])
    except sqlite3.DatabaseError:
        report.source_rows = None
    return report


def _legacy_versioned_namespaces(dest: sqlite3.Connection) -> TableSalvage:
    """`versioned_namespaces` of a file older than m006: the namespaces of the (salvaged)
    `memories` rows, as m006 records them."""
    report = TableSalvage("versioned_namespaces")
    with write_transaction(dest):
        report.recovered = report.source_rows = _declare_salvaged_namespaces(dest)
    return report


def _declare_salvaged_namespaces(dest: sqlite3.Connection) -> int:
    """Name every namespace that has rows in `memories` in `versioned_namespaces` (a lost
    declaration would hide its rows); how many were added."""
    return dest.execute(
        "INSERT INTO versioned_namespaces(project_id, namespace, declared_at) "
        "SELECT DISTINCT project_id, namespace, ? FROM memories WHERE true "
        "ON CONFLICT DO NOTHING",
        (time.time(),),
    ).rowcount


def _copy_table(source: sqlite3.Connection, dest: sqlite3.Connection, table: str) -> TableSalvage:
    present = set(_columns(source, table))
    if table == "entry_access" and not present and "accessed_at" in _columns(source, "entries"):
        return _legacy_access_times(source, dest)
    if table == "versioned_namespaces" and not present:
        return _legacy_versioned_namespaces(dest)
    report = TableSalvage(table)
    wanted = _columns(dest, table)
    columns = [c for c in wanted if c in present]
    if not columns:
        report.unreadable.append((_MIN_ROWID, -_MIN_ROWID - 1))
        return report
    insert = (
        f"INSERT INTO {table}(rowid, {', '.join(columns)}) "
        f"VALUES ({', '.join('?' * (len(columns) + 1))})"
    )
    with write_transaction(dest):
        for row in _salvage_rows(source, table, columns, report):
            try:
                dest.execute(insert, row)
            except sqlite3.IntegrityError:
                report.dropped += 1
                continue
            report.recovered += 1
        if table == "memories":
            # A version whose successor was lost: its current value is unknown, so close it.
            dest.execute(
                "UPDATE memories SET superseded_by = NULL, deleted_at = coalesce(deleted_at, ?) "
                "WHERE superseded_by IS NOT NULL "
                "AND superseded_by NOT IN (SELECT id FROM memories)",
                (time.time(),),
            )
        if table == "versioned_namespaces":
            _declare_salvaged_namespaces(dest)
    return report


def _count(conn: sqlite3.Connection, table: str) -> int | None:
    try:
        return int(conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0])
    except sqlite3.DatabaseError:
        return None


def _unsalvaged_tables(conn: sqlite3.Connection) -> list[str]:
    """Tables of the damaged file that repair does not copy (not ours, not derived indexes)."""
    try:
        names = [
            str(r[0]) for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")
        ]
    except sqlite3.DatabaseError:
        return []
    skipped = {*SALVAGE_ORDER, "schema_migrations", "entry_dirs"}  # entry_dirs: kept by triggers
    return [
        n for n in names if n not in skipped and not n.startswith("sqlite_") and "_fts" not in n
    ]


def _copy_aside(db_path: Path) -> Path:
    """Copy the database and its `-wal`/`-shm` into a fresh private `.corrupt-backup-` dir."""
    backup_dir = new_timestamped_dir(db_path, "corrupt-backup")
    for file in side_files(db_path):
        shutil.copy2(file, backup_dir / file.name)
        (backup_dir / file.name).chmod(FILE_MODE)
    log.info("copied the damaged files of %s to %s", db_path, backup_dir)
    return backup_dir


def _salvage(
    source: sqlite3.Connection, fresh: Path, progress: Progress | None
) -> list[TableSalvage]:
    dest = open_database(fresh)
    try:
        tables = []
        with translate_errors(f"writing the repaired database {fresh}"):
            for done, table in enumerate(SALVAGE_ORDER, start=1):
                salvage = _copy_table(source, dest, table)
                if salvage.source_rows is None:
                    salvage.source_rows = _count(source, table)
                tables.append(salvage)
                if progress is not None:
                    progress(done, len(SALVAGE_ORDER))
        for table in _unsalvaged_tables(source):
            tables.append(TableSalvage(table, source_rows=_count(source, table), final_rows=0))
        return tables
    finally:
        dest.close()


def repair(db_path: Path, *, progress: Progress | None = None, wait: float = 0.0) -> RepairReport:
    """Back up the damaged files, salvage their readable rows into a fresh database, swap it in.

    Refuses (`StoreInUseError`) while other processes have the database open, unless they
    close within `wait` seconds; refuses (`ForeignDatabaseError`) a file that is not ours.
    """
    if not db_path.is_file():
        raise StoreError(f"no database at {db_path}; nothing to repair")
    with exclusive(db_path, command="repair", wait=wait, replaces=True):
        real = real_path(db_path)  # through a symlink: the file itself is repaired, in its place
        try:
            reason = foreign_reason(real)
        except sqlite3.DatabaseError:
            reason = None  # judged again below, on the copy (its WAL recovered)
        except OSError as exc:
            raise StoreError(f"cannot read {db_path}: {exc.strerror or exc}") from exc
        if reason is not None:
            raise foreign_error(db_path, reason, doing="repair")
        backup_dir = _copy_aside(real)
        source = sqlite3.connect(backup_dir / real.name, isolation_level=None)
        try:
            try:
                reason = schema_reason(source)
            except sqlite3.DatabaseError as exc:
                raise StoreCorruptError(
                    f"cannot repair {db_path}: even its schema is unreadable ({exc}), so no row "
                    f"can be salvaged; it was left untouched (a copy is in {backup_dir}). "
                    "Restore a backup with `contextchef db restore BACKUP`"
                ) from exc
            if reason is not None:
                source.close()
                shutil.rmtree(backup_dir)
                raise foreign_error(db_path, reason, doing="repair")
            tables, fresh = _rebuild(source, real, progress)
        finally:
            source.close()
        replaced = _swap(real, fresh, backup_dir)
        write_receipt(backup_dir, command="repair", database=real, files=replaced)
        with read_only(real) as conn:
            for salvage in tables:
                if salvage.final_rows is None:
                    salvage.final_rows = _count(conn, salvage.table)
    return RepairReport(db_path, backup_dir, tables)


def _rebuild(
    source: sqlite3.Connection, db_path: Path, progress: Progress | None
) -> tuple[list[TableSalvage], Path]:
    """Salvage `source` into a fresh `<db>.repairing`: (what was saved, the fresh file)."""
    fresh = db_path.with_name(db_path.name + ".repairing")
    for stale in side_files(fresh):
        stale.unlink()
    try:
        found = schema_version(source)
    except sqlite3.DatabaseError:
        found = LATEST_SCHEMA_VERSION
    if found > LATEST_SCHEMA_VERSION:
        raise SchemaTooNewError(found, LATEST_SCHEMA_VERSION, location=str(db_path))
    return _salvage(source, fresh, progress), fresh


def _swap(db_path: Path, fresh: Path, backup_dir: Path) -> list[Path]:
    """Put `fresh` in place; the damaged originals replace their working copies in `backup_dir`
    (untouched since, which `check` verifies: receipts.py). Returns the files moved there."""
    for copy in side_files(backup_dir / db_path.name):
        copy.unlink()
    moved = []
    for file in side_files(db_path):
        moved.append(backup_dir / file.name)
        file.replace(moved[-1])
    fresh.replace(db_path)
    for leftover in side_files(fresh):
        leftover.unlink()
    return moved
