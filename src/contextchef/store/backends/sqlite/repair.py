"""Repairing a damaged database: back the files up first, then salvage every readable row.

`repair` never works on the damaged files themselves. It copies the database and its
`-wal`/`-shm` into `<db>.corrupt-backup-<time>/` before anything else, reads rows from that
copy, writes them into a freshly installed database, and only then swaps the fresh file in.
Rows are read in rowid order in chunks; when a chunk hits a damaged page the reader probes rowid
by rowid past it, so one bad page costs the rows on that page and no more. The report lists,
per table, the rows recovered, the rowid ranges that could not be read, and the rows dropped
because what they referred to was lost.
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

from contextchef.errors import SchemaTooNewError, StoreError
from contextchef.store.backends.sqlite.connection import translate_errors, write_transaction
from contextchef.store.backends.sqlite.maintenance import new_timestamped_dir, side_files
from contextchef.store.backends.sqlite.migrations import (
    LATEST_SCHEMA_VERSION,
    Progress,
    open_database,
    schema_version,
)

__all__ = ["RepairReport", "TableSalvage", "repair"]

log = logging.getLogger("contextchef.store.backends.sqlite.repair")

SALVAGE_ORDER = ("projects", "project_aliases", "project_dirs", "entries", "memories", "memory_log")
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

    @property
    def lost_something(self) -> bool:
        return bool(self.unreadable or self.dropped)


@dataclass(frozen=True, slots=True)
class RepairReport:
    """The outcome of `repair`: where the damaged files were saved, and what was salvaged."""

    path: Path
    backup_dir: Path
    tables: list[TableSalvage]

    @property
    def lossless(self) -> bool:
        return not any(t.lost_something for t in self.tables)


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


def _copy_table(source: sqlite3.Connection, dest: sqlite3.Connection, table: str) -> TableSalvage:
    report = TableSalvage(table)
    wanted = _columns(dest, table)
    present = set(_columns(source, table))
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
    return report


def repair(db_path: Path, *, progress: Progress | None = None) -> RepairReport:
    """Back up the damaged files, salvage their readable rows into a fresh database, swap it in."""
    originals = side_files(db_path)
    if not originals or not db_path.is_file():
        raise StoreError(f"no database at {db_path}")
    backup_dir = new_timestamped_dir(db_path, "corrupt-backup")
    for file in originals:
        shutil.copy2(file, backup_dir / file.name)
    log.info("copied the damaged files of %s to %s", db_path, backup_dir)

    fresh = db_path.with_name(db_path.name + ".repairing")
    for stale in side_files(fresh):
        stale.unlink()
    source = sqlite3.connect(backup_dir / db_path.name, isolation_level=None)
    try:
        try:
            found = schema_version(source)
        except sqlite3.DatabaseError:
            found = LATEST_SCHEMA_VERSION
        if found > LATEST_SCHEMA_VERSION:
            raise SchemaTooNewError(found, LATEST_SCHEMA_VERSION, location=str(db_path))
        dest = open_database(fresh)
        try:
            tables = []
            with translate_errors(f"writing the repaired database {fresh}"):
                for done, table in enumerate(SALVAGE_ORDER, start=1):
                    tables.append(_copy_table(source, dest, table))
                    if progress is not None:
                        progress(done, len(SALVAGE_ORDER))
        finally:
            dest.close()
    finally:
        source.close()
    for file in side_files(db_path):
        file.unlink()
    fresh.replace(db_path)
    for leftover in side_files(fresh):
        leftover.unlink()
    return RepairReport(db_path, backup_dir, tables)
