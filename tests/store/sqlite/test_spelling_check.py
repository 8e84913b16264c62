"""`db check` names entries stored under a path that is not in NFC, without failing."""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

from typer.testing import CliRunner

from contextchef.cli import app
from contextchef.store import Store, StoredEntry
from contextchef.store.backends.sqlite import SQLiteBackend
from contextchef.store.backends.sqlite import maintenance as mt

NFC = unicodedata.normalize("NFC", "café.md")
NFD = unicodedata.normalize("NFD", NFC)


def test_check_notes_nfd_entries(db_path: Path) -> None:
    with SQLiteBackend(db_path, project="test:spelling") as backend:
        backend.write("notes", NFD, StoredEntry("decomposed"))  # as an older writer left it
        Store(backend).namespace("notes").put("résumé.md", "written through the store")
        backend.write("notes", "plain.md", StoredEntry("ascii"))
    report = mt.check(db_path)
    assert report.ok  # a spelling is not damage
    assert len(report.notes) == 1
    assert repr(NFD) in report.notes[0] and "test:spelling" in report.notes[0]

    result = CliRunner().invoke(app, ["db", "check", "--db", str(db_path), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["notes"] == report.notes
    result = CliRunner().invoke(app, ["db", "check", "--db", str(db_path)])
    assert result.exit_code == 0, result.output
    assert "not in NFC" in result.output and "passed every check" in result.output


def test_a_tidy_database_has_no_notes(db_path: Path) -> None:
    with SQLiteBackend(db_path, project="test:spelling") as backend:
        Store(backend).namespace("notes").put(NFD, "normalised on the way in")
    assert mt.check(db_path).notes == []
