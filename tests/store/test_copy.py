"""`contextchef db copy` and `store.copy`: every project and namespace moves between SQLite,
PostgreSQL and a directory byte for byte, with its meta; a second run copies nothing; a bad
location is one line and exit code 1.

The PostgreSQL legs use a schema of their own (dropped afterwards) and skip without a server
like the contract suite (fail under `CI=true`).
"""

from __future__ import annotations

import json
import os
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from contextchef.cli import app
from contextchef.errors import ConfigError, StoreError
from contextchef.store.backend import StoredEntry
from contextchef.store.backends.filesystem import FileSystemBackend
from contextchef.store.backends.sqlite import SQLiteBackend
from contextchef.store.copy import copy_store
from contextchef.store.locations import MANIFEST, open_location
from tests.contract import pg

runner = CliRunner()

T0 = 1_700_000_000.123456

CONTENTS = {
    "plain": "hello",
    "unicode": "naïve café — 日本語 🧑‍🍳 \u200d\u202e reversed",
    "binaryish": "".join(chr(c) for c in range(32)) + "\x7f\u0080\u00ff\ufffd\ue000\ue0011",
    "newlines": "a\r\nb\rc\n\n",
    "empty": "",
    "large": "word " * 5000,
}
"""Contents that must survive every backend byte for byte (NUL and the PostgreSQL escape
character included)."""

PROJECTS = ("team:alpha", "team:beta")
NAMESPACES = ("notes", "memory", "vfs", "archive", "skills")


def _entries(project: str) -> dict[tuple[str, str], StoredEntry]:
    """What the source holds for `project`: every content in every namespace, with meta."""
    found = {}
    for n, ns in enumerate(NAMESPACES):
        for k, (name, content) in enumerate(sorted(CONTENTS.items())):
            meta = {
                "created_at": T0 + n,
                "updated_at": T0 + n + k + 0.5,
                "accessed_at": T0 + 100 + k,
                "tags": ["ü", project],
                "n": k,
            }
            path = f"{project.split(':')[1]}/{name}.md" if ns != "memory" else f"{name}-fact"
            found[ns, path] = StoredEntry(content, meta)
    return found


def _fill(path: Path) -> None:
    for project in PROJECTS:
        backend = SQLiteBackend(path, project=project)
        backend.keep_versions("memory")  # as `Memory` declares it: copies carry it along
        try:
            for (ns, entry_path), entry in _entries(project).items():
                backend.write(ns, entry_path, entry)
                backend.touch(ns, entry_path, float(entry.meta["accessed_at"]))
        finally:
            backend.close()


def _read_back(location: Any) -> dict[tuple[str, str, str], StoredEntry]:
    found = {}
    for project in location.projects():
        with location.open(project) as backend:
            for ns in location.namespaces(project):
                for listed in backend.list(ns):
                    entry = backend.read(ns, listed.path)
                    assert entry is not None
                    found[project, ns, listed.path] = entry
    return found


def _assert_same(found: dict[tuple[str, str, str], StoredEntry], *, tolerance: float) -> None:
    expected = {(p, ns, path): e for p in PROJECTS for (ns, path), e in _entries(p).items()}
    assert sorted(found) == sorted(expected)
    for key, want in expected.items():
        got = found[key]
        assert got.content.encode("utf-8") == want.content.encode("utf-8"), key
        assert {k: got.meta[k] for k in ("tags", "n")} == {
            "tags": want.meta["tags"],
            "n": want.meta["n"],
        }
        for time_key in ("created_at", "updated_at", "accessed_at"):
            assert got.meta[time_key] == pytest.approx(want.meta[time_key], abs=tolerance), key
        assert got.meta["bytes"] == len(want.content.encode("utf-8"))


@pytest.fixture
def pg_dsn() -> Iterator[str]:
    """A DSN choosing a schema of its own; the schema is dropped afterwards."""
    pg.require_server()
    import psycopg

    schema = f"contextchef_copy_{os.getpid()}_{secrets.token_hex(4)}"
    separator = "&" if "?" in pg.DSN else "?"
    try:
        yield f"{pg.DSN}{separator}contextchef_schema={schema}"
    finally:
        with psycopg.connect(pg.DSN, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


def test_sqlite_to_postgres_to_sqlite_round_trips_every_entry(tmp_path: Path, pg_dsn: str) -> None:
    source = tmp_path / "source.db"
    _fill(source)
    first = copy_store(open_location(str(source)), open_location(pg_dsn))
    total = len(PROJECTS) * len(NAMESPACES) * len(CONTENTS)
    assert (first.copied, first.unchanged, first.projects) == (total, 0, len(PROJECTS))
    assert len(first.namespaces) == len(PROJECTS) * len(NAMESPACES)
    _assert_same(_read_back(open_location(pg_dsn)), tolerance=1e-6)

    back = tmp_path / "back.db"
    steps: list[tuple[int, int]] = []
    result = copy_store(
        open_location(pg_dsn), open_location(str(back)), progress=lambda *a: steps.append(a)
    )
    assert result.copied == total and steps[-1] == (total, total)
    _assert_same(_read_back(open_location(str(back))), tolerance=1e-6)

    again = copy_store(open_location(pg_dsn), open_location(str(back)))
    assert (again.copied, again.unchanged) == (0, total)
    history = SQLiteBackend(back, project="team:alpha")
    try:  # the second run wrote no memory version either
        assert len(history.history("memory", "plain-fact")) == 1
    finally:
        history.close()


def test_sqlite_to_directory_to_sqlite_round_trips_every_entry(tmp_path: Path) -> None:
    source = tmp_path / "source.db"
    _fill(source)
    directory = tmp_path / "copy"
    total = len(PROJECTS) * len(NAMESPACES) * len(CONTENTS)
    assert copy_store(open_location(str(source)), open_location(str(directory))).copied == total
    assert (directory / MANIFEST).is_file()
    assert sorted(p.name for p in directory.iterdir()) == sorted(
        [MANIFEST, "team_alpha", "team_beta"]
    )
    _assert_same(_read_back(open_location(str(directory))), tolerance=1e-3)
    again = copy_store(open_location(str(source)), open_location(str(directory)))
    assert (again.copied, again.unchanged) == (0, total)

    back = tmp_path / "back.sqlite"
    assert copy_store(open_location(str(directory)), open_location(str(back))).copied == total
    _assert_same(_read_back(open_location(str(back))), tolerance=1e-3)


def test_a_plain_filesystem_root_is_one_project(tmp_path: Path) -> None:
    root = tmp_path / ".context"
    backend = FileSystemBackend(root)
    backend.write("notes", "a.md", StoredEntry("from the files", {"k": 1}))
    backend.write("vfs", "out.txt", StoredEntry("raw tool output"))
    target = tmp_path / "team.db"
    report = copy_store(
        open_location(str(root), plain_project="team:files"), open_location(str(target))
    )
    assert report.copied == 2 and report.projects == 1
    copied = SQLiteBackend(target, project="team:files")
    try:
        note = copied.read("notes", "a.md")
        assert note is not None and note.content == "from the files" and note.meta["k"] == 1
        assert copied.read("vfs", "out.txt") is not None
    finally:
        copied.close()
    with pytest.raises(ConfigError, match="plain FileSystemBackend"):
        copy_store(open_location(str(target)), open_location(str(root)))


def test_the_command_copies_with_counts_and_reruns_as_a_no_op(tmp_path: Path, pg_dsn: str) -> None:
    source = tmp_path / "source.db"
    _fill(source)
    total = len(PROJECTS) * len(NAMESPACES) * len(CONTENTS)
    result = runner.invoke(
        app, ["db", "copy", "--from", str(source), "--to", pg_dsn], env={"COLUMNS": "200"}
    )
    assert result.exit_code == 0, result.output
    assert f"copied {total} entries" in result.output and "0 unchanged" in result.output
    assert "team:alpha" in result.output and "memory" in result.output
    again = runner.invoke(app, ["db", "copy", "--from", str(source), "--to", pg_dsn])
    assert again.exit_code == 0, again.output
    assert f"copied 0 entries (0 B), {total} unchanged" in again.output
    only = runner.invoke(
        app,
        ["db", "copy", "--from", pg_dsn, "--to", str(tmp_path / "b.db"), "--project", "team:beta"],
    )
    assert only.exit_code == 0, only.output
    assert f"copied {total // 2} entries" in only.output


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("postgresql://agent:s3cret@127.0.0.1/db?bogus_option=1", "not a valid PostgreSQL DSN"),
        ("mysql://agent:s3cret@host/db", "neither a postgresql:// DSN nor a path"),
        ("{missing}/nothing.db", "no SQLite database at"),
        ("{missing}", "no directory at"),
        ("{file}", "not a SQLite database"),
    ],
)
def test_a_bad_location_is_one_line_and_exit_code_one(
    tmp_path: Path, source: str, expected: str
) -> None:
    text = tmp_path / "notes.txt"
    text.write_text("not a database")
    source = source.format(missing=tmp_path / "missing", file=text)
    result = runner.invoke(app, ["db", "copy", "--from", source, "--to", str(tmp_path / "x.db")])
    assert result.exit_code == 1
    output = result.output.strip()
    assert expected in output and "s3cret" not in output
    assert output.startswith("error:") and len(output.splitlines()) <= 2, output  # wrapped line
    assert "Traceback" not in output
    assert not (tmp_path / "x.db").exists()


def test_a_missing_sqlite_source_is_reported() -> None:
    with pytest.raises(StoreError, match="no SQLite database"):
        open_location("/nonexistent/dir/source.db").projects()


def test_the_command_prints_its_counts_as_json(tmp_path: Path) -> None:
    source = tmp_path / "source.db"
    _fill(source)
    total = len(PROJECTS) * len(NAMESPACES) * len(CONTENTS)
    target = str(tmp_path / "copy")
    first = runner.invoke(app, ["db", "copy", "--from", str(source), "--to", target, "--json"])
    assert first.exit_code == 0, first.output
    report = json.loads(first.stdout)
    assert (report["copied"], report["unchanged"]) == (total, 0)
    assert sum(row["copied"] for row in report["namespaces"]) == total
    again = runner.invoke(app, ["db", "copy", "--from", str(source), "--to", target, "--json"])
    assert (json.loads(again.stdout)["copied"], json.loads(again.stdout)["unchanged"]) == (0, total)
