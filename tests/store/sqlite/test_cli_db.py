"""`contextchef db …` on the default database (CONTEXTCHEF_HOME) and on an explicit file."""

from __future__ import annotations

import json
import os
import re
import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

from contextchef.cli import app
from contextchef.store.backend import StoredEntry
from contextchef.store.backends.sqlite import LATEST_SCHEMA_VERSION, SQLiteBackend
from contextchef.store.backends.sqlite.backup import manifest_path
from contextchef.store.datadir import default_database_path

runner = CliRunner()


@pytest.fixture
def default_db() -> Path:
    path = default_database_path()
    with SQLiteBackend(project="test:cli") as backend:
        backend.write("notes", "n.md", StoredEntry("hello cli"))
    return path


def test_info(default_db: Path) -> None:
    result = runner.invoke(app, ["db", "info"])
    assert result.exit_code == 0, result.output
    assert str(default_db) in result.output
    assert f"schema version  {LATEST_SCHEMA_VERSION}" in result.output
    assert "test:cli" in result.output


def test_check_ok_and_problem(default_db: Path) -> None:
    assert runner.invoke(app, ["db", "check"]).exit_code == 0
    conn = sqlite3.connect(default_db)
    conn.execute("DROP TRIGGER entries_fts_delete")
    conn.execute("DELETE FROM entries")
    conn.commit()
    conn.close()
    result = runner.invoke(app, ["db", "check"])
    assert result.exit_code == 1
    assert "index rows have no entry" in result.output


def test_backup_restore_vacuum_repair(default_db: Path, tmp_path: Path) -> None:
    dest = tmp_path / "b.db"
    result = runner.invoke(app, ["db", "backup", str(dest)])
    assert result.exit_code == 0, result.output
    assert json.loads(manifest_path(dest).read_text())["schema_version"] == LATEST_SCHEMA_VERSION
    result = runner.invoke(app, ["db", "restore", str(dest)])
    assert result.exit_code == 0, result.output
    assert "previous files in" in result.output
    assert runner.invoke(app, ["db", "vacuum"]).exit_code == 0
    result = runner.invoke(app, ["db", "repair"])
    assert result.exit_code == 0, result.output
    assert "nothing was lost" in result.output


def test_migrate_and_dry_run(tmp_path: Path) -> None:
    db = tmp_path / "new.db"
    result = runner.invoke(app, ["db", "migrate", "--dry-run", "--db", str(db)])
    assert result.exit_code == 0 and "dry run" in result.output and not db.exists()
    assert runner.invoke(app, ["db", "migrate", "--db", str(db)]).exit_code == 0
    result = runner.invoke(app, ["db", "migrate", "--db", str(db)])
    assert "up to date" in result.output


def test_migrate_an_older_database_dry_run_then_with_its_backup(tmp_path: Path) -> None:
    from tests.store.sqlite.test_upgrade import at_version

    db = tmp_path / "old.db"
    at_version(db, 2)
    before = db.read_bytes()
    result = runner.invoke(app, ["db", "migrate", "--dry-run", "--db", str(db)])
    assert result.exit_code == 0, result.output
    assert "would apply m003_create_memories" in result.output
    assert "rows in entry_access: 0 → 3" in result.output
    assert "the database was not changed" in result.output and db.read_bytes() == before
    result = runner.invoke(app, ["db", "migrate", "--db", str(db)])
    assert result.exit_code == 0, result.output
    saved = re.search(r"backed up to (\S+) \(schema 2, verified\)", result.output)
    assert saved is not None and Path(saved.group(1)).is_file()
    assert result.output.index("backed up to") < result.output.index("applied m003")
    assert f"schema version 2 → {LATEST_SCHEMA_VERSION}" in result.output


def test_migrate_creates_the_data_directory(tmp_path: Path) -> None:
    db = tmp_path / "not" / "yet" / "there.db"
    assert runner.invoke(app, ["db", "migrate", "--db", str(db)]).exit_code == 0
    assert db.is_file()


def test_errors_are_one_line_without_traceback(tmp_path: Path) -> None:
    result = runner.invoke(app, ["db", "info", "--db", str(tmp_path / "missing.db")])
    assert result.exit_code == 1
    assert "error:" in result.output and "no database" in result.output
    assert "Traceback" not in result.output
    assert not isinstance(result.exception, Exception) or isinstance(result.exception, SystemExit)


def _only_backup(directory: Path) -> Path:
    """The one backup file in `directory`, checked to open as a store holding the test entry."""
    backups = [p for p in directory.iterdir() if not p.name.endswith(".manifest.json")]
    assert len(backups) == 1, backups
    assert re.fullmatch(r"context-\d{8}-\d{6}\.db", backups[0].name), backups[0].name
    assert manifest_path(backups[0]).is_file()
    with SQLiteBackend(backups[0], project="test:cli") as backend:
        entry = backend.read("notes", "n.md")
    assert entry is not None and entry.content == "hello cli"
    return backups[0]


def test_backup_into_a_new_directory_named_with_a_trailing_separator(
    default_db: Path, tmp_path: Path
) -> None:
    """`db backup backups/` creates the directory (parents too) instead of a file `backups`."""
    directory = tmp_path / "nested" / "backups"
    result = runner.invoke(app, ["db", "backup", str(directory) + os.sep])
    assert result.exit_code == 0, result.output
    assert directory.is_dir()
    _only_backup(directory)


def test_backup_into_an_existing_directory(default_db: Path, tmp_path: Path) -> None:
    directory = tmp_path / "backups"
    directory.mkdir()
    result = runner.invoke(app, ["db", "backup", str(directory)])
    assert result.exit_code == 0, result.output
    assert str(_only_backup(directory)) in result.output.replace("\n", "")


def test_backup_into_a_file_named_with_a_trailing_separator_is_refused(
    default_db: Path, tmp_path: Path
) -> None:
    file = tmp_path / "backups"
    file.write_text("not a directory")
    result = runner.invoke(app, ["db", "backup", str(file) + os.sep])
    assert result.exit_code == 1
    assert "is a file, not a directory" in result.output
    assert file.read_text() == "not a directory"


def test_restore_of_a_too_new_backup_is_refused(default_db: Path, tmp_path: Path) -> None:
    dest = tmp_path / "b.db"
    assert runner.invoke(app, ["db", "backup", str(dest)]).exit_code == 0
    manifest = json.loads(manifest_path(dest).read_text())
    manifest_path(dest).write_text(json.dumps({**manifest, "schema_version": 99}))
    result = runner.invoke(app, ["db", "restore", str(dest)])
    assert result.exit_code == 1 and "schema version 99" in result.output
