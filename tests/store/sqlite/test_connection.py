"""Connection pragmas, the write-lock retry, error translation and the data directory."""

from __future__ import annotations

import os
import sqlite3
import threading
from pathlib import Path

import pytest

from contextchef.errors import StoreBusyError, StoreCorruptError, StoreError
from contextchef.store import datadir
from contextchef.store.backend import StoredEntry
from contextchef.store.backends.sqlite import SQLiteBackend
from contextchef.store.backends.sqlite import connection as cx


def test_pragmas_are_read_back(backend: SQLiteBackend) -> None:
    with backend.connection() as conn:
        assert cx.read_pragmas(conn) == {
            "journal_mode": "wal",
            "busy_timeout": cx.BUSY_TIMEOUT_MS,
            "foreign_keys": 1,
            "synchronous": 1,
        }
    assert cx.BUSY_TIMEOUT_MS >= 5000


def _holder(path: Path) -> sqlite3.Connection:
    holder = cx.connect(path)
    holder.execute("BEGIN IMMEDIATE")
    return holder


def test_write_lock_gives_up_with_store_busy(backend: SQLiteBackend) -> None:
    holder = _holder(backend.path)
    try:
        other = cx.connect(backend.path)
        other.execute("PRAGMA busy_timeout = 10")
        with pytest.raises(StoreBusyError):
            cx.begin_immediate(other, budget_s=0.2)
        assert not other.in_transaction
    finally:
        holder.execute("ROLLBACK")


def test_write_lock_is_retried_until_released(backend: SQLiteBackend) -> None:
    holder = _holder(backend.path)
    release = threading.Timer(0.3, lambda: holder.execute("ROLLBACK"))
    release.start()
    other = cx.connect(backend.path)
    other.execute("PRAGMA busy_timeout = 10")
    cx.begin_immediate(other, budget_s=30)
    assert other.in_transaction
    other.execute("ROLLBACK")
    release.join()


def test_a_first_open_waits_for_another_that_holds_the_write_lock(tmp_path: Path) -> None:
    """Two processes opening a new store at once: while one holds the write lock of the file,
    still in rollback mode, SQLite refuses the other's switch to WAL at once, without its busy
    handler (waiting for that lock upgrade could deadlock). The open waits for the lock instead
    of failing with `StoreBusyError`, then the store works."""
    path = tmp_path / "context.db"
    racer = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    racer.execute("BEGIN IMMEDIATE")  # the racing first open, writing in rollback mode
    refused = cx.connect(path)
    with pytest.raises(sqlite3.OperationalError) as caught:  # what SQLite does by itself
        refused.execute("PRAGMA journal_mode = WAL")
    assert cx.is_busy(caught.value)
    refused.close()
    release = threading.Timer(0.3, lambda: racer.execute("COMMIT"))
    release.start()
    try:
        backend = SQLiteBackend(path, project="test:first-open")
        with backend.connection() as conn:
            assert cx.read_pragmas(conn)["journal_mode"] == "wal"
        backend.write("notes", "a.md", StoredEntry("kept"))
        kept = backend.read("notes", "a.md")
        assert kept is not None and kept.content == "kept"
        backend.close()
    finally:
        release.join()
        racer.close()


def test_write_transaction_rolls_back_on_error(backend: SQLiteBackend) -> None:
    with backend.connection() as conn:
        with pytest.raises(ValueError), cx.write_transaction(conn):
            conn.execute("INSERT INTO projects(identity, created_at) VALUES ('gone', 0)")
            raise ValueError("boom")
        assert conn.execute("SELECT 1 FROM projects WHERE identity = 'gone'").fetchone() is None


def test_a_file_that_is_not_a_database_is_reported_corrupt(tmp_path: Path) -> None:
    path = tmp_path / "context.db"
    path.write_bytes(b"definitely not SQLite" * 300)
    with pytest.raises(StoreCorruptError, match="db repair"):
        SQLiteBackend(path, project="test:bad")


def test_missing_fts5_is_a_clear_error() -> None:
    class NoFts:
        def execute(self, sql: str) -> None:
            raise sqlite3.OperationalError("no such module: fts5")

    with pytest.raises(StoreError, match="FTS5"):
        cx.require_fts5(NoFts())  # type: ignore[arg-type]


def test_unopenable_directory_is_a_store_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(StoreError):
        SQLiteBackend(blocker / "sub" / "context.db", project="test:x")


def test_default_path_is_in_contextchef_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(datadir.HOME_ENV, str(tmp_path / "home"))
    with SQLiteBackend(project="test:default") as backend:
        assert backend.path == tmp_path / "home" / "context.db"
        assert backend.path.is_file()


def test_without_contextchef_home_the_user_data_dir_is_the_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The library never looks at pytest: only CONTEXTCHEF_HOME and platformdirs decide."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "user"))
    monkeypatch.delenv(datadir.HOME_ENV)
    expected = tmp_path / "user" / "contextchef" / "context.db"
    assert datadir.default_database_path() == expected
    with SQLiteBackend(project="test:x") as backend:
        assert backend.path == expected and expected.is_file()


def test_the_suite_refuses_the_real_user_data_dir(monkeypatch: pytest.MonkeyPatch) -> None:
    """tests/conftest.py, not the library, keeps tests away from the real user data."""
    monkeypatch.delenv(datadir.HOME_ENV)
    with pytest.raises(pytest.fail.Exception, match="real user data directory"):
        datadir.default_database_path()
    with pytest.raises(pytest.fail.Exception, match="real user data directory"):
        SQLiteBackend(project="test:x")


def test_a_reader_never_blocks_a_writer(backend: SQLiteBackend) -> None:
    backend.write("notes", "n.md", StoredEntry("before"))
    reader = cx.connect(backend.path)
    reader.execute("BEGIN")
    assert reader.execute("SELECT count(*) FROM entries").fetchone()[0] == 1
    backend.write("notes", "m.md", StoredEntry("written while a read is open"))
    assert reader.execute("SELECT count(*) FROM entries").fetchone()[0] == 1  # its snapshot
    reader.execute("COMMIT")
    assert reader.execute("SELECT count(*) FROM entries").fetchone()[0] == 2
    reader.close()


def test_a_forked_child_opens_its_own_connection(backend: SQLiteBackend) -> None:
    backend.write("notes", "parent.md", StoredEntry("p"))
    pid = os.fork()
    if pid == 0:  # pragma: no cover - runs in the child
        try:
            backend.write("notes", "child.md", StoredEntry("c"))
            reopened = bool(backend._db.abandoned)  # the parent's connection was set aside
            os._exit(0 if reopened and backend.read("notes", "parent.md") is not None else 2)
        except BaseException:
            os._exit(1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert backend.read("notes", "child.md") is not None
