"""`contextchef db migrate`: a verified backup first, and a dry run that really runs the steps.

A real migration (`migrate`):

1. refuses a file that is not a contextchef database or is newer than this build (the fence);
2. takes the maintenance lock exclusively (locking.py): while any other process has the
   database open it refuses, or waits for them given `wait`, so no process is left running an
   older build over a newer schema (the same rule guard.py applies to migrate-on-open);
3. backs the database up into `<db>.before-migrate-<time>/` with the online backup of backup.py
   (integrity-checked, with a manifest carrying its schema version and sha256), then verifies
   the copy: its schema version and every table's row count must equal the database's. Only
   then, and after `on_backup` was told where the backup is, is anything written. A migration
   that fails leaves its failing step rolled back and the backup in place (`contextchef db
   restore` puts it back);
4. applies the pending steps (migrations.py: one transaction each, re-checked inside the lock)
   and reports what changed: schema objects created, dropped or altered, and the tables whose
   row counts moved.

A dry run (`dry_run=True`) copies the database (read-only, from one snapshot) into a temporary
directory, runs every pending step on the copy inside one transaction, measures the same
changes and checks the result (`integrity_check`, `foreign_key_check`), then rolls back and
deletes the copy. The database itself is only read (`mode=ro`): it stays byte-identical. (Like
any reader of a WAL database, SQLite may create its empty `-wal`/`-shm` coordination files.)
The copy needs as much free space as the database, in the temporary directory (`TMPDIR`).
"""

from __future__ import annotations

import sqlite3
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from contextchef.errors import MigrationError
from contextchef.store.backends.sqlite.backup import BackupResult, backup, copy_pages
from contextchef.store.backends.sqlite.connection import (
    begin_immediate,
    connect,
    translate_errors,
)
from contextchef.store.backends.sqlite.locking import exclusive, real_path
from contextchef.store.backends.sqlite.maintenance import (
    new_timestamped_dir,
    read_only,
    require_ours,
)
from contextchef.store.backends.sqlite.migrations import (
    LATEST_SCHEMA_VERSION,
    MIGRATIONS,
    Progress,
    check_fence,
    ensure_schema,
    open_database,
    pending_migrations,
    schema_version,
)
from contextchef.store.backends.sqlite.private import make_private_dirs

__all__ = ["BACKUP_LABEL", "Inventory", "MigrateReport", "describe_changes", "inventory", "migrate"]

BACKUP_LABEL = "before-migrate"
"""The backup directory of a migration is `<db>.before-migrate-<YYYYmmdd-HHMMSS>/`."""


@dataclass(frozen=True, slots=True)
class Inventory:
    """A database's schema objects (`(type, name)` → SQL) and row counts per table."""

    schema: dict[tuple[str, str], str]
    rows: dict[str, int]


def inventory(conn: sqlite3.Connection) -> Inventory:
    """The schema and the row count of every ordinary table. An FTS5 index counts as one
    `virtual table` object; the tables FTS5 keeps for itself are left out."""
    objects = conn.execute(
        "SELECT type, name, coalesce(sql, '') FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'"
    ).fetchall()
    sql_of = {(str(t), str(n)): " ".join(str(sql).split()) for t, n, sql in objects}
    virtual = {n for (t, n), sql in sql_of.items() if sql.upper().startswith("CREATE VIRTUAL")}
    schema: dict[tuple[str, str], str] = {}
    for (kind, name), sql in sql_of.items():
        if kind == "table" and any(name.startswith(f"{v}_") for v in virtual):
            continue  # FTS5's own storage (`<index>_data`, `_idx`, `_docsize`, `_config`)
        schema["virtual table" if name in virtual else kind, name] = sql
    tables = sorted(name for kind, name in schema if kind == "table")
    rows = {t: int(conn.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0]) for t in tables}
    return Inventory(schema, rows)


def describe_changes(before: Inventory, after: Inventory) -> list[str]:
    """What turned `before` into `after`, one line per schema object or table, sorted."""
    changes: list[str] = []
    for kind, name in sorted(before.schema.keys() | after.schema.keys()):
        old, new = before.schema.get((kind, name)), after.schema.get((kind, name))
        if old is None:
            changes.append(f"create {kind} {name}")
        elif new is None:
            changes.append(f"drop {kind} {name}")
        elif old != new:
            changes.append(f"alter {kind} {name}")
    for table in sorted(before.rows.keys() | after.rows.keys()):
        old_rows, new_rows = before.rows.get(table), after.rows.get(table)
        if old_rows != new_rows and (old_rows or new_rows):
            changes.append(f"rows in {table}: {old_rows or 0} → {new_rows or 0}")
    return changes


@dataclass(frozen=True, slots=True)
class MigrateReport:
    """What `migrate` did, or would do with `dry_run`."""

    path: Path
    from_version: int
    to_version: int
    steps: list[str]
    dry_run: bool
    changes: list[str] = field(default_factory=list)
    """Schema objects created, dropped or altered, and row counts that moved."""
    backup: Path | None = None
    """The verified backup taken before anything was written (None: a new or empty file)."""


def _problems(conn: sqlite3.Connection) -> list[str]:
    """What `integrity_check` and `foreign_key_check` find wrong (empty: nothing)."""
    found = [str(r[0]) for r in conn.execute("PRAGMA integrity_check(20)") if r[0] != "ok"]
    keys = conn.execute("PRAGMA foreign_key_check").fetchall()
    return found + [
        f"{table} row {rowid} points at a missing {parent}" for table, rowid, parent, _ in keys
    ]


def _dry_run(path: Path, progress: Progress | None) -> MigrateReport:
    exists = path.is_file() and path.stat().st_size > 0
    if exists:
        require_ours(path, doing="migrate")
    with tempfile.TemporaryDirectory(prefix="contextchef-dry-run-") as scratch:
        copy = Path(scratch) / path.name
        before = 0
        if exists:
            with read_only(path) as ro, translate_errors(f"reading {path}"):
                ro.execute("BEGIN")  # one snapshot for the version and the copy
                try:
                    before = check_fence(ro, str(path))
                    if not pending_migrations(ro, str(path)):
                        return MigrateReport(path, before, before, [], dry_run=True)
                    copy_pages(ro, copy, None)
                finally:
                    ro.execute("ROLLBACK")
        location = f"a copy of {path}"
        conn = connect(copy)
        try:
            with translate_errors(f"migrating {location}"):
                start = inventory(conn)
                begin_immediate(conn)  # every step joins this one transaction, rolled back below
                try:
                    steps = ensure_schema(conn, location=location, progress=progress)
                    end = inventory(conn)
                    problems = _problems(conn)
                    after = schema_version(conn)
                finally:
                    conn.rollback()
        finally:
            conn.close()
    if problems:
        raise MigrationError(
            f"migrating a copy of {path} left it inconsistent ({'; '.join(problems[:5])}); "
            "the database was not changed; do not migrate it with this build"
        )
    return MigrateReport(path, before, after, steps, True, describe_changes(start, end))


def _verified_backup(path: Path, backup_dir: Path | None, version: int) -> BackupResult:
    """Back `path` up and check the copy against it: schema version and every row count."""
    real = real_path(path)
    where = new_timestamped_dir(real, BACKUP_LABEL) if backup_dir is None else backup_dir
    if backup_dir is not None:
        make_private_dirs(backup_dir)
    result = backup(path, where / real.name if backup_dir is None else f"{where}/")
    with read_only(path) as conn, translate_errors(f"reading {path}"):
        expected = inventory(conn).rows
    with read_only(result.path) as conn, translate_errors(f"verifying {result.path}"):
        found, rows = schema_version(conn), inventory(conn).rows
    if found != version or rows != expected:
        raise MigrationError(
            f"the backup {result.path} does not match {path} (schema {found}, expected "
            f"{version}; row counts {'match' if rows == expected else 'differ'}); nothing was "
            "migrated"
        )
    return result


def migrate(
    path: Path,
    *,
    dry_run: bool = False,
    progress: Progress | None = None,
    wait: float = 0.0,
    backup_dir: Path | None = None,
    on_backup: Callable[[BackupResult], object] | None = None,
) -> MigrateReport:
    """Bring `path` to the latest schema, after a verified backup (see the module docstring).

    With `dry_run`, run the steps on a copy and report; the file is only read. A real migration
    refuses (`StoreInUseError`) while other processes have the database open, unless they close
    within `wait` seconds. The backup goes to `backup_dir` when given (else next to the
    database); `on_backup` receives it before the first write.
    """
    if dry_run:
        return _dry_run(path, progress)
    if path.is_file():
        require_ours(path, doing="migrate")
        with read_only(path) as conn, translate_errors(f"reading {path}"):
            if not pending_migrations(conn, str(path)):
                current = schema_version(conn)
                return MigrateReport(path, current, current, [], dry_run=False)
    make_private_dirs(path.parent)
    with exclusive(path, command="migrate", wait=wait):
        saved: BackupResult | None = None
        start = Inventory({}, {})
        before = 0
        if path.is_file() and path.stat().st_size > 0:
            with read_only(path) as conn, translate_errors(f"reading {path}"):
                before = check_fence(conn, str(path))  # again, inside the lock
                start = inventory(conn)
            if before > 0 and before < LATEST_SCHEMA_VERSION:
                saved = _verified_backup(path, backup_dir, before)
                if on_backup is not None:
                    on_backup(saved)
        conn = open_database(path, progress=progress)
        try:
            after = schema_version(conn)
            changes = describe_changes(start, inventory(conn))
        finally:
            conn.close()
    steps = [m.name for m in MIGRATIONS if before < m.version <= after]
    return MigrateReport(path, before, after, steps, False, changes, saved.path if saved else None)
