"""Nothing left behind: no lock file beside a file that is not ours, no leftovers of a killed
repair or restore after the next open, no backup made of a foreign file."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

from contextchef.cli import app
from contextchef.errors import ForeignDatabaseError, StoreError
from contextchef.store.backend import StoredEntry
from contextchef.store.backends.sqlite import SQLiteBackend
from contextchef.store.backends.sqlite.backup import backup
from contextchef.store.backends.sqlite.locking import LEFTOVER_SUFFIXES, exclusive
from contextchef.store.backends.sqlite.repair import repair

runner = CliRunner()


def names(directory: Path) -> set[str]:
    return {p.name for p in directory.iterdir()}


def foreign_sqlite(path: Path) -> None:
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT)")
    conn.commit()
    conn.close()


def test_opening_a_foreign_database_leaves_no_lock_file(tmp_path: Path) -> None:
    foreign = tmp_path / "app.db"
    foreign_sqlite(foreign)
    before = names(tmp_path)
    with pytest.raises(StoreError, match="not a contextchef database"):
        SQLiteBackend(foreign, project="test:sidecars")
    text = tmp_path / "notes.txt"
    text.write_text("not a database\n")
    with pytest.raises(ForeignDatabaseError):
        repair(text)
    assert names(tmp_path) == before | {"notes.txt"}


def test_a_lock_file_that_others_use_is_kept(tmp_path: Path) -> None:
    foreign = tmp_path / "app.db"
    foreign_sqlite(foreign)
    with exclusive(foreign, command="migrate"):
        pass  # a lock file made for a block that was not refused stays
    assert "app.db.lock" in names(tmp_path)
    with pytest.raises(StoreError, match="not a contextchef database"):
        SQLiteBackend(foreign, project="test:sidecars")  # not created by this hold: kept
    assert "app.db.lock" in names(tmp_path)


@pytest.mark.parametrize("suffixes", [LEFTOVER_SUFFIXES[:3], LEFTOVER_SUFFIXES])
def test_leftovers_of_killed_maintenance_are_removed_on_the_next_open(
    db_path: Path, suffixes: tuple[str, ...]
) -> None:
    with SQLiteBackend(db_path, project="test:sidecars") as backend:
        backend.write("notes", "kept", StoredEntry("kept"))
    for suffix in suffixes:  # what a repair or restore killed mid-way leaves
        db_path.with_name(db_path.name + suffix).write_bytes(b"half-written")
    with SQLiteBackend(db_path, project="test:sidecars") as backend:
        assert backend.read("notes", "kept") is not None
    assert names(db_path.parent) <= {"context.db", "context.db.lock", "context.db-wal"}


def test_maintenance_removes_the_leftovers_too(db_path: Path) -> None:
    with SQLiteBackend(db_path, project="test:sidecars") as backend:
        backend.write("notes", "kept", StoredEntry("kept"))
    for suffix in LEFTOVER_SUFFIXES:
        db_path.with_name(db_path.name + suffix).write_bytes(b"half-written")
    assert repair(db_path).lossless
    assert not [n for n in names(db_path.parent) if n.endswith((".repairing", ".restoring"))]
    assert not [n for n in names(db_path.parent) if ".repairing-" in n or ".restoring-" in n]


@pytest.mark.parametrize("kind", ["foreign sqlite", "empty sqlite", "empty file", "text"])
def test_backup_refuses_a_file_that_is_not_ours(tmp_path: Path, kind: str) -> None:
    source = tmp_path / "app.db"
    if kind == "foreign sqlite":
        foreign_sqlite(source)
    elif kind == "empty sqlite":
        conn = sqlite3.connect(source)  # an SQLite header, no table at all: "schema 0"
        conn.executescript("CREATE TABLE t (x); DROP TABLE t;")
        conn.close()
    elif kind == "empty file":
        source.touch()
    else:
        source.write_text("hello\n")
    before = names(tmp_path)
    with pytest.raises(ForeignDatabaseError, match="refusing to back up"):
        backup(source, tmp_path / "copies/")
    assert names(tmp_path) == before  # no copy, no manifest, no directory, no lock
    result = runner.invoke(app, ["db", "backup", str(tmp_path / "b.db"), "--db", str(source)])
    assert result.exit_code == 1 and result.output.count("\n") == 1
    assert "not a contextchef database" in result.output
    assert names(tmp_path) == before


def test_backup_of_a_missing_database_says_so(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="no database"):
        backup(tmp_path / "missing.db", tmp_path / "b.db")
