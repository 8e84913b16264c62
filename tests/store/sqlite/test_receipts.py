"""`db check` verifies what repair and restore claimed: that nothing wrote to the file they
replaced (a write there is acknowledged, yet missing from the database)."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from typer.testing import CliRunner

from contextchef.cli import app
from contextchef.store.backend import StoredEntry
from contextchef.store.backends.sqlite import SQLiteBackend
from contextchef.store.backends.sqlite import maintenance as mt
from contextchef.store.backends.sqlite.backup import backup, restore
from contextchef.store.backends.sqlite.receipts import RECEIPT_NAME
from contextchef.store.backends.sqlite.repair import repair

runner = CliRunner()


def populate(path: Path, n: int = 5) -> None:
    with SQLiteBackend(path, project="test:receipts") as backend:
        for i in range(n):
            backend.write("notes", f"n/{i}", StoredEntry(f"note {i}"))


def late_write(replaced: Path) -> None:
    """What a process that kept the replaced file open would do: commit into it."""
    conn = sqlite3.connect(replaced, isolation_level=None)
    conn.execute("UPDATE entries SET content = 'written after the swap'")
    conn.close()


def test_restore_keeps_a_receipt_and_check_catches_a_late_write(
    db_path: Path, tmp_path: Path
) -> None:
    populate(db_path)
    good = backup(db_path, tmp_path / "good.db").path
    result = restore(good, db_path)
    assert result.moved_aside is not None and (result.moved_aside / RECEIPT_NAME).is_file()
    assert mt.check(db_path).ok

    late_write(result.moved_aside / db_path.name)
    report = mt.check(db_path)
    assert not report.ok
    assert any(
        "changed after `restore`" in p and str(result.moved_aside) in p for p in report.problems
    )
    cli = runner.invoke(app, ["db", "check", "--db", str(db_path)])
    assert cli.exit_code == 1 and str(result.moved_aside) in cli.output
    assert "writes may be missing" in cli.output and "db repair" not in cli.output

    (result.moved_aside / RECEIPT_NAME).unlink()  # inspected: the user ends the verification
    assert mt.check(db_path).ok


def test_repair_keeps_the_damaged_originals_untouched_and_check_watches_them(
    db_path: Path,
) -> None:
    populate(db_path)
    original = db_path.read_bytes()
    report = repair(db_path)
    assert report.lossless
    kept = report.backup_dir / db_path.name
    assert kept.read_bytes() == original  # the file as it was, not a copy SQLite reopened
    assert mt.check(db_path).ok

    late_write(kept)
    assert any("changed after `repair`" in p for p in mt.check(db_path).problems)


def test_check_names_a_process_that_still_has_the_replaced_file_open(
    db_path: Path, tmp_path: Path
) -> None:
    populate(db_path)
    result = restore(backup(db_path, tmp_path / "good.db").path, db_path)
    assert result.moved_aside is not None
    conn = sqlite3.connect(f"{(result.moved_aside / db_path.name).as_uri()}?mode=ro", uri=True)
    try:
        conn.execute("SELECT count(*) FROM entries").fetchone()
        problems = mt.check(db_path).problems
    finally:
        conn.close()
    assert any(f"process {os.getpid()} still has" in p for p in problems)
    assert mt.check(db_path).ok


def test_an_unreadable_receipt_is_reported(db_path: Path, tmp_path: Path) -> None:
    populate(db_path)
    result = restore(backup(db_path, tmp_path / "good.db").path, db_path)
    assert result.moved_aside is not None
    (result.moved_aside / RECEIPT_NAME).write_text("{not json")
    assert any("cannot be read" in p for p in mt.check(db_path).problems)
