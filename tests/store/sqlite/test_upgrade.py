"""Migration safety (issue 26, item 6): `db migrate` backs up first and its dry run really runs
the steps (on a copy), and builds of different schema versions never share a database: an older
build refuses a migrated file, a newer one refuses to migrate under an older one."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import threading
from pathlib import Path
from typing import Any

import pytest

from contextchef.errors import MigrationError, SchemaTooNewError, StoreInUseError
from contextchef.store.backend import StoredEntry
from contextchef.store.backends.sqlite import (
    LATEST_SCHEMA_VERSION,
    SQLiteBackend,
    guard,
    maintenance,
    upgrade,
)
from contextchef.store.backends.sqlite import migrations as mig
from contextchef.store.backends.sqlite.backup import BackupResult, manifest_path
from contextchef.store.backends.sqlite.connection import connect, enable_wal
from contextchef.store.backends.sqlite.migrations import MIGRATIONS, apply_migrations
from tests.store.sqlite.helpers import finish, start_worker

OLD = LATEST_SCHEMA_VERSION - 1


def at_version(path: Path, version: int, *, rows: int = 3) -> None:
    """A database as a build of schema `version` left it, with entries (and access times)."""
    conn = connect(path)
    enable_wal(conn, str(path))
    apply_migrations(conn, location=str(path), target=version)
    conn.execute("INSERT INTO projects(identity, created_at) VALUES ('test:upgrade', 0)")
    for i in range(rows):
        conn.execute(
            "INSERT INTO entries(project_id, namespace, path, content, created_at, updated_at, "
            "accessed_at, bytes) VALUES (1, 'notes', ?, 'x', 0, 0, ?, 1)",
            (f"n{i}", 10.0 + i if version < 5 else None),
        )
    conn.close()


def version_of(path: Path) -> int:
    conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    try:
        return int(conn.execute("SELECT max(version) FROM schema_migrations").fetchone()[0])
    finally:
        conn.close()


def files(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir()) if p.is_file()}


def test_dry_run_runs_the_steps_on_a_copy_and_leaves_the_file_byte_identical(
    tmp_path: Path,
) -> None:
    db = tmp_path / "context.db"
    at_version(db, 2)
    before = (db.read_bytes(), db.stat().st_mtime_ns)

    report = upgrade.migrate(db, dry_run=True)

    assert (db.read_bytes(), db.stat().st_mtime_ns) == before
    assert set(files(tmp_path)) <= {"context.db", "context.db-wal", "context.db-shm"}
    assert files(tmp_path).get("context.db-wal", b"") == b""  # a reader's index; no frames
    assert version_of(db) == 2
    assert (report.from_version, report.to_version) == (2, LATEST_SCHEMA_VERSION)
    assert report.steps == [m.name for m in MIGRATIONS[2:]]
    assert "create table memories" in report.changes
    assert "create virtual table memories_fts" in report.changes
    assert "rows in entry_access: 0 → 3" in report.changes  # m005 moved the access times
    assert not any(c.startswith("create table memories_fts_") for c in report.changes)
    assert report.backup is None

    done = upgrade.migrate(db)  # the real run makes exactly the changes the dry run measured
    assert done.changes == report.changes and done.steps == report.steps


def test_migrate_backs_up_and_verifies_before_it_writes(tmp_path: Path) -> None:
    db = tmp_path / "context.db"
    at_version(db, OLD)
    seen: list[tuple[BackupResult, int]] = []

    report = upgrade.migrate(db, on_backup=lambda saved: seen.append((saved, version_of(db))))

    [(saved, version_when_told)] = seen
    assert version_when_told == OLD  # told before the first write
    assert report.backup == saved.path and saved.path.parent.name.startswith(
        "context.db.before-migrate-"
    )
    assert json.loads(manifest_path(saved.path).read_text())["schema_version"] == OLD
    assert version_of(saved.path) == OLD and version_of(db) == LATEST_SCHEMA_VERSION
    kept = sqlite3.connect(saved.path).execute("SELECT count(*) FROM entries").fetchone()[0]
    assert kept == 3
    assert upgrade.migrate(db).steps == []  # nothing left, and no second backup
    assert len(list(tmp_path.glob("context.db.before-migrate-*"))) == 1


def test_migrate_puts_the_backup_where_asked(tmp_path: Path) -> None:
    db = tmp_path / "context.db"
    at_version(db, OLD)
    report = upgrade.migrate(db, backup_dir=tmp_path / "backups")
    assert report.backup is not None and report.backup.parent == tmp_path / "backups"
    assert version_of(report.backup) == OLD


def _old_build(db: Path, stop: Path, version: int = OLD) -> tuple[subprocess.Popen[str], Any]:
    """A process running a build whose newest schema is `version`, and its first JSON line."""
    worker = start_worker("old_build", str(db), str(version), str(stop))
    assert worker.stdout is not None
    return worker, json.loads(worker.stdout.readline())


def test_a_newer_build_never_migrates_while_an_older_one_has_the_database_open(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(guard, "MIGRATE_ON_OPEN_WAIT_S", 0.2)
    db, stop = tmp_path / "context.db", tmp_path / "stop"
    old, first = _old_build(db, stop)  # creates the database at the old version and holds it
    assert first["ready"] and version_of(db) == OLD
    try:
        before = db.read_bytes()
        with pytest.raises(StoreInUseError, match=f"process {first['pid']} still has it open"):
            SQLiteBackend(db, project="test:new-build")
        assert version_of(db) == OLD and db.read_bytes() == before
    finally:
        stop.touch()
        finish(old)
    with SQLiteBackend(db, project="test:new-build") as new:  # the old build is gone: migrate
        new.write("notes", "new", StoredEntry("written by the new build"))
    assert version_of(db) == LATEST_SCHEMA_VERSION


def test_an_older_build_refuses_a_database_a_newer_one_migrated(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "context.db"
    at_version(db, OLD)
    with SQLiteBackend(db, project="test:new-build"):
        pass
    before = db.read_bytes()
    monkeypatch.setattr(mig, "LATEST_SCHEMA_VERSION", OLD)  # this process is now the old build
    monkeypatch.setattr(mig, "MIGRATIONS", mig.MIGRATIONS[:OLD])
    with pytest.raises(SchemaTooNewError, match=f"understands versions up to {OLD}"):
        SQLiteBackend(db, project="test:old-build")
    assert db.read_bytes() == before


def test_backends_of_one_build_opening_an_older_database_together_all_open(
    tmp_path: Path,
) -> None:
    db = tmp_path / "context.db"
    at_version(db, OLD)
    start = threading.Barrier(4)
    opened: list[int] = []

    def open_it() -> None:
        start.wait()
        with SQLiteBackend(db, project="test:upgrade") as backend:
            opened.append(len(backend.list("notes")))

    threads = [threading.Thread(target=open_it) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert opened == [3, 3, 3, 3]
    conn = connect(db)
    rows = conn.execute("SELECT version FROM schema_migrations ORDER BY version").fetchall()
    conn.close()
    assert [r[0] for r in rows] == list(range(1, LATEST_SCHEMA_VERSION + 1))


def test_vacuum_leaves_pending_migrations_to_migrate(tmp_path: Path) -> None:
    db = tmp_path / "context.db"
    at_version(db, OLD)
    with pytest.raises(MigrationError, match="contextchef db migrate"):
        maintenance.vacuum(db)
    assert version_of(db) == OLD


def test_another_lane_neither_trips_the_fence_nor_hides_a_pending_step(tmp_path: Path) -> None:
    assert all(step.version < mig.FORK_LANE_FLOOR for step in MIGRATIONS)
    db = tmp_path / "context.db"
    at_version(db, OLD)
    conn = connect(db)
    conn.execute("CREATE TABLE plugin_notes (x)")  # a plugin's own step, in its own lane
    conn.execute("INSERT INTO schema_migrations VALUES (10001, 'plugin_first_step', 0)")
    conn.close()
    with SQLiteBackend(db, project="test:upgrade") as backend:
        assert len(backend.list("notes")) == 3
    conn = connect(db)
    versions = [r[0] for r in conn.execute("SELECT version FROM schema_migrations ORDER BY 1")]
    conn.close()
    assert versions == [*range(1, LATEST_SCHEMA_VERSION + 1), 10001]


def test_a_dry_run_of_a_failing_step_reports_it_and_changes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "context.db"
    at_version(db, LATEST_SCHEMA_VERSION)
    before = db.read_bytes()

    def m999_broken(conn: sqlite3.Connection) -> None:
        conn.execute("INSERT INTO entry_access(entry_id, accessed_at) VALUES (424242, 0)")

    step = mig.Migration(LATEST_SCHEMA_VERSION + 1, "m999_broken", m999_broken)
    monkeypatch.setattr(mig, "MIGRATIONS", (*mig.MIGRATIONS, step))
    monkeypatch.setattr(mig, "LATEST_SCHEMA_VERSION", LATEST_SCHEMA_VERSION + 1)
    with pytest.raises(MigrationError, match="m999_broken"):
        upgrade.migrate(db, dry_run=True)
    assert db.read_bytes() == before and version_of(db) == LATEST_SCHEMA_VERSION
