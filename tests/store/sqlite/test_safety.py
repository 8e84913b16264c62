"""Safe maintenance: repair/restore/migrate refuse a database in use or not ours; reads never
wait for the write lock; files are private."""

from __future__ import annotations

import json
import os
import sqlite3
import stat
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from contextchef.cli import app
from contextchef.errors import ForeignDatabaseError, StoreError, StoreInUseError
from contextchef.store.backend import StoredEntry
from contextchef.store.backends.sqlite import SQLiteBackend, upgrade
from contextchef.store.backends.sqlite import maintenance as mt
from contextchef.store.backends.sqlite.backup import backup, manifest_path, restore
from contextchef.store.backends.sqlite.locking import lock_path
from contextchef.store.backends.sqlite.repair import RepairReport, TableSalvage, repair
from contextchef.store.store import Store

from .helpers import finish, start_worker

runner = CliRunner()


def populate(path: Path) -> None:
    with SQLiteBackend(path, project="test:safety") as backend:
        backend.keep_versions("memory")  # as `Memory` declares it
        for i in range(20):
            backend.write("notes", f"n/{i:02d}", StoredEntry(f"note {i}"))
        backend.write("memory", "k", StoredEntry("v"))


def siblings(path: Path) -> set[str]:
    return {p.name for p in path.parent.iterdir()}


@pytest.fixture
def holder(db_path: Path, tmp_path: Path) -> Iterator[int]:
    """A real second process with a `SQLiteBackend` open on `db_path`; yields its pid."""
    stop = tmp_path / "stop"
    worker = start_worker("hold_open", str(db_path), str(stop))
    assert worker.stdout is not None
    line = worker.stdout.readline()
    assert json.loads(line) == {"ready": True}, worker.stderr.read() if worker.stderr else ""
    yield worker.pid
    stop.touch()
    finish(worker, timeout=30)


# -- refused while in use ----------------------------------------------------------------------


def test_repair_and_restore_refused_while_another_process_has_it_open(
    db_path: Path, tmp_path: Path, holder: int
) -> None:
    copy = backup(db_path, tmp_path / "b.db").path
    before, names = db_path.read_bytes(), siblings(db_path)
    with pytest.raises(StoreInUseError, match=f"1 process \\(pid {holder}\\) has it open") as err:
        repair(db_path)
    assert err.value.holders == 1
    with pytest.raises(StoreInUseError, match="contextchef db restore"):
        restore(copy, db_path)
    assert db_path.read_bytes() == before and siblings(db_path) == names  # nothing moved aside

    result = runner.invoke(app, ["db", "repair", "--db", str(db_path)])
    assert result.exit_code == 1
    assert result.output.count("\n") == 1 and "Traceback" not in result.output
    assert str(db_path) in result.output and "--wait" in result.output


def test_repair_waits_for_the_holder_with_wait(db_path: Path, tmp_path: Path) -> None:
    stop = tmp_path / "stop"
    worker = start_worker("hold_open", str(db_path), str(stop))
    assert worker.stdout is not None and json.loads(worker.stdout.readline())["ready"]
    threading.Timer(0.3, stop.touch).start()
    report = repair(db_path, wait=20)
    finish(worker, timeout=30)
    assert report.lossless
    with SQLiteBackend(db_path, project="test:holder") as backend:
        assert backend.read("notes", "holder") is not None  # the holder's write survived


def test_a_backend_waits_for_running_maintenance(db_path: Path) -> None:
    populate(db_path)
    from contextchef.store.backends.sqlite.locking import exclusive

    opened: list[float] = []
    with exclusive(db_path, command="repair"):

        def open_backend() -> None:
            with SQLiteBackend(db_path, project="test:safety") as backend:
                opened.append(time.monotonic())
                assert backend.read("notes", "n/01") is not None

        thread = threading.Thread(target=open_backend)
        thread.start()
        time.sleep(0.3)
        assert not opened  # blocked on the shared lock while maintenance runs
        released = time.monotonic()
    thread.join(10)
    assert opened and opened[0] >= released


# -- not ours -----------------------------------------------------------------------------------


def foreign_sqlite(path: Path) -> bytes:
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT)")
    conn.execute("INSERT INTO users(name) VALUES ('ada')")
    conn.commit()
    conn.close()
    return path.read_bytes()


def test_repair_restore_migrate_refuse_a_foreign_sqlite_database(tmp_path: Path) -> None:
    ours = tmp_path / "ours.db"
    populate(ours)
    good = backup(ours, tmp_path / "good.db").path
    foreign = tmp_path / "app.db"
    original = foreign_sqlite(foreign)
    names = siblings(foreign)
    with pytest.raises(ForeignDatabaseError, match=r"not a contextchef database.*users"):
        repair(foreign)
    with pytest.raises(ForeignDatabaseError, match="restore over"):
        restore(good, foreign)
    with pytest.raises(ForeignDatabaseError):
        upgrade.migrate(foreign)
    with pytest.raises(ForeignDatabaseError, match="restore from"):
        restore(foreign, ours)
    assert foreign.read_bytes() == original
    assert siblings(foreign) == names  # no backup dir, no lock file, nothing moved
    conn = sqlite3.connect(foreign)
    assert conn.execute("SELECT name FROM users").fetchall() == [("ada",)]
    conn.close()
    report = mt.check(foreign)
    assert not report.ok and report.foreign is not None and "users" in report.foreign


def test_repair_refuses_a_file_that_is_not_sqlite(tmp_path: Path) -> None:
    text = tmp_path / "notes.txt"
    text.write_text("just some text\n" * 100)
    original = text.read_bytes()
    with pytest.raises(ForeignDatabaseError, match="not an SQLite database"):
        repair(text)
    assert text.read_bytes() == original
    assert mt.check(text).foreign == "it is not an SQLite database at all"
    result = runner.invoke(app, ["db", "check", "--db", str(text)])
    assert result.exit_code == 1 and result.output.count("\n") == 1
    assert "not a contextchef database" in result.output and str(text) in result.output


# -- repair verdict -----------------------------------------------------------------------------


def test_lossless_only_when_counts_were_verified(tmp_path: Path) -> None:
    counted = TableSalvage("entries", recovered=3, source_rows=3, final_rows=3)
    uncounted = TableSalvage("entries", recovered=3, source_rows=None, final_rows=3)
    short = TableSalvage("entries", recovered=3, source_rows=5, final_rows=3)
    assert RepairReport(tmp_path, tmp_path, [counted]).lossless
    unknown = RepairReport(tmp_path, tmp_path, [counted, uncounted])
    assert not unknown.lossless and not unknown.lost_something
    assert RepairReport(tmp_path, tmp_path, [short]).lost_something


def test_repair_counts_rows_before_and_after(db_path: Path) -> None:
    populate(db_path)
    report = repair(db_path)
    entries = next(t for t in report.tables if t.table == "entries")
    assert entries.source_rows == entries.final_rows == 20 and report.lossless


# -- CLI one-line errors -------------------------------------------------------------------------


def test_bad_restore_manifest_is_one_line(db_path: Path, tmp_path: Path) -> None:
    populate(db_path)
    copy = backup(db_path, tmp_path / "b.db").path
    for bad in ("{not json", "[1, 2]", json.dumps({"format": "x", "schema_version": 1})):
        manifest_path(copy).write_text(bad)
        result = runner.invoke(app, ["db", "restore", str(copy), "--db", str(db_path)])
        assert result.exit_code == 1, result.output
        assert result.output.count("\n") == 1 and "Traceback" not in result.output
        assert str(manifest_path(copy)) in result.output and "db backup" in result.output
    with pytest.raises(StoreError, match="schema_version 'x'"):
        manifest_path(copy).write_text(
            json.dumps({"format": "contextchef-sqlite-backup/1", "schema_version": "x"})
        )
        restore(copy, db_path)


def test_cli_errors_are_one_line_and_debug_shows_the_traceback(tmp_path: Path) -> None:
    missing = tmp_path / "missing.db"
    for args in (["check"], ["info"], ["repair"], ["vacuum"], ["backup", str(tmp_path / "b")]):
        result = runner.invoke(app, ["db", *args, "--db", str(missing)])
        assert result.exit_code == 1, (args, result.output)
        assert result.output.count("\n") == 1 and str(missing) in result.output, args
    result = runner.invoke(app, ["db", "--debug", "check", "--db", str(missing)])
    assert result.exit_code == 1 and isinstance(result.exception, StoreError)


# -- reads never wait ----------------------------------------------------------------------------


_ACCESSED = (
    "SELECT a.accessed_at FROM entries AS e LEFT JOIN entry_access AS a ON a.entry_id = e.id "
    "WHERE e.path = ?"
)


def test_a_read_completes_while_another_connection_holds_the_write_lock(db_path: Path) -> None:
    backend = SQLiteBackend(db_path, project="test:safety")
    store = Store(backend, clock=lambda: 1234.0)
    notes = store.namespace("notes")
    notes.put("a.md", "hello")
    other = sqlite3.connect(db_path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    other.execute("UPDATE entries SET meta = meta")
    try:
        start = time.monotonic()
        entry = notes.get("a.md")
        assert time.monotonic() - start < 1.0
        assert entry is not None and entry.content == "hello"
    finally:
        other.execute("COMMIT")
    row = other.execute(_ACCESSED, ("a.md",)).fetchone()
    assert row == (None,)  # kept in memory while the lock was taken…
    notes.put("b.md", "next write")
    row = other.execute(_ACCESSED, ("a.md",)).fetchone()
    assert row == (1234.0,)  # …and written with the next write transaction
    notes.get("b.md")
    store.close()
    row = other.execute(_ACCESSED, ("b.md",)).fetchone()
    assert row == (1234.0,)  # and at close
    other.close()


# -- file modes ----------------------------------------------------------------------------------


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_files_and_directories_are_private_whatever_the_umask(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        db = tmp_path / "new" / "deeper" / "context.db"
        with SQLiteBackend(db, project="test:modes") as backend:
            backend.write("notes", "x", StoredEntry("secret"))
            assert mode(db.parent) == mode(db.parent.parent) == 0o700
            for path in (db, lock_path(db), db.with_name("context.db-wal")):
                assert mode(path) == 0o600, path
            if db.with_name("context.db-shm").exists():
                assert mode(db.with_name("context.db-shm")) == 0o600
        made = backup(db, tmp_path / "copy.db")
        assert mode(made.path) == mode(made.manifest) == 0o600
        restored = restore(made.path, db)
        assert mode(db) == 0o600 and restored.moved_aside is not None
        assert mode(restored.moved_aside) == 0o700
        report = repair(db)
        assert mode(db) == 0o600 and mode(report.backup_dir) == 0o700
        assert all(mode(f) == 0o600 for f in report.backup_dir.iterdir())
        shared = tmp_path / "shared"
        shared.mkdir(mode=0o755)
        SQLiteBackend(shared / "c.db", project="test:modes").close()
        assert mode(shared) == 0o755  # an existing directory is never re-moded
        assert mode(shared / "c.db") == 0o600
    finally:
        os.umask(old)
