"""`contextchef store import --from-4.1 DIR`: the 4.1 files land in a database; the report names
every entry and every skipped file; a second run reports everything as already there."""

from __future__ import annotations

import json
from pathlib import Path

from contextchef.store.backends.sqlite import SQLiteBackend
from tests.cli.helpers import error_line, invoke
from tests.store.test_legacy41 import MEMORIES, VFS, build_41_directory

PROJECT = "test:cli-legacy41"


def test_import_from_41_into_a_database_twice(tmp_path: Path) -> None:
    app = build_41_directory(tmp_path / "app")
    db = tmp_path / "context.db"
    args = ("store", "import", "--from-4.1", app, "--store", db, "--project", PROJECT)

    first = invoke(*args)
    assert first.exit_code == 0, first.output
    assert "context://memory/user_name" in first.stdout
    assert "skipped" in first.stdout and "not valid JSON" in first.stdout
    assert f"{len(MEMORIES) + len(VFS)} created" in first.stderr
    with SQLiteBackend(db, project=PROJECT) as backend:
        entry = backend.read("memory", "user_name")
        assert entry is not None and entry.content == "Ada Lovelace"
        assert len(backend.list("vfs")) == 4

    again = invoke(*args, "--json")
    assert again.exit_code == 0, again.output
    data = json.loads(again.stdout)
    assert {e["action"] for e in data["entries"]} == {"unchanged"}
    assert len(data["skipped"]) == 8


def test_import_from_41_of_a_directory_without_its_files_fails(tmp_path: Path) -> None:
    result = invoke("store", "import", "--from-4.1", tmp_path, "--store", tmp_path / "c.db")
    assert result.exit_code == 1
    assert "no 4.1 data" in error_line(result)
