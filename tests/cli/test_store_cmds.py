"""`contextchef store …` on the default database, a database file and a store directory."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from contextchef.store.backend import StoredEntry
from contextchef.store.backends.filesystem import FileSystemBackend
from contextchef.store.backends.sqlite import SQLiteBackend
from contextchef.store.datadir import default_database_path
from tests.cli.helpers import contents, error_line, invoke

PROJECT = "test:cli-store"


def _default() -> SQLiteBackend:
    return SQLiteBackend(project=PROJECT)


def _json(*args: str | Path, stdin: str | None = None) -> Any:
    result = invoke(*args, "--json", stdin=stdin)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_put_cat_ls_mv_rm_on_the_default_database() -> None:
    result = invoke(
        "store", "put", "context://notes/plan.md", "--project", PROJECT, stdin="step 1\n"
    )
    assert result.exit_code == 0, result.output
    assert "wrote context://notes/plan.md" in result.stderr
    with _default() as backend:
        assert backend.read("notes", "plan.md").content == "step 1\n"  # type: ignore[union-attr]
    assert invoke("store", "cat", "notes/plan.md", "--project", PROJECT).stdout == "step 1\n"
    [listed] = _json("store", "ls", "context://notes/", "--project", PROJECT)
    assert (listed["uri"], listed["bytes"]) == ("context://notes/plan.md", 7)
    spaces = _json("store", "ls", "--project", PROJECT)["namespaces"]
    assert {row["namespace"]: row["entries"] for row in spaces} == {
        "archive": 0,
        "memory": 0,
        "notes": 1,
        "vfs": 0,
    }
    moved = invoke(
        "store", "mv", "notes/plan.md", "context://notes/done/plan.md", "--project", PROJECT
    )
    assert moved.exit_code == 0, moved.output
    assert [e["path"] for e in _json("store", "ls", "notes/", "--project", PROJECT)] == [
        "done/plan.md"
    ]
    assert invoke("store", "rm", "notes/done/plan.md", "--project", PROJECT).exit_code == 0
    assert _json("store", "ls", "notes/", "--project", PROJECT) == []


def test_reading_the_default_database_never_creates_it() -> None:
    assert not default_database_path().exists()
    assert _json("store", "ls")["namespaces"][0]["entries"] == 0
    assert invoke("store", "cat", "notes/x.md").exit_code == 1
    assert _json("store", "search", "anything") == []
    assert not default_database_path().exists()


def test_put_from_a_file_and_cat_json(tmp_path: Path) -> None:
    source = tmp_path / "log.txt"
    source.write_text("FAILED test_parse\n" * 3)
    assert invoke("store", "put", "vfs/run1.txt", source, "--project", PROJECT).exit_code == 0
    data = _json("store", "cat", "vfs/run1.txt", "--project", PROJECT)
    assert data["content"] == source.read_text() and data["uri"] == "context://vfs/run1.txt"


def test_search_across_namespaces_and_in_one(tmp_path: Path) -> None:
    with _default() as backend:
        backend.write("notes", "a.md", StoredEntry("the test command is make test"))
        backend.write("vfs", "log.txt", StoredEntry("make test failed twice"))
    hits = _json("store", "search", "make test", "--project", PROJECT)
    assert sorted(hit["uri"] for hit in hits) == ["context://notes/a.md", "context://vfs/log.txt"]
    hits = _json("store", "search", "make test", "--ns", "vfs", "--project", PROJECT)
    assert [hit["uri"] for hit in hits] == ["context://vfs/log.txt"]


def test_cleanup_evicts_the_least_recently_used(tmp_path: Path) -> None:
    with _default() as backend:
        for at, name in enumerate(("old.txt", "mid.txt", "new.txt")):
            backend.write(
                "vfs",
                name,
                StoredEntry("x" * 10, {"created_at": 1000.0 + at, "updated_at": 1000.0 + at}),
            )
    report = _json("store", "cleanup", "vfs", "--max-files", "1", "--project", PROJECT)
    assert [item["uri"] for item in report["evicted"]] == [
        "context://vfs/old.txt",
        "context://vfs/mid.txt",
    ]
    assert {item["reason"] for item in report["evicted"]} == {"max_files"}
    assert [e["path"] for e in _json("store", "ls", "vfs/", "--project", PROJECT)] == ["new.txt"]
    assert invoke("store", "cleanup", "vfs", "--project", PROJECT).exit_code == 2  # no cap given


def test_projects_are_separate(tmp_path: Path) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir()
    two.mkdir()
    assert invoke("store", "put", "notes/n.md", "--project", one, stdin="mine").exit_code == 0
    assert _json("store", "ls", "notes/", "--project", two) == []
    assert [e["path"] for e in _json("store", "ls", "notes/", "--project", one)] == ["n.md"]


def test_export_then_import_round_trips_content_and_times(tmp_path: Path) -> None:
    with _default() as backend:
        backend.write("notes", "dir/plan.md", StoredEntry("plan", {"created_at": 1700000000.5}))
        backend.write("vfs", "vfs_abc.txt", StoredEntry("raw log"))
        backend.write("memory", "test-command", StoredEntry("make test"))
    exported = tmp_path / ".context"
    report = _json("store", "export", exported, "--project", PROJECT)
    assert report["entries"] == {"archive": 0, "memory": 1, "notes": 1, "vfs": 1}
    assert (exported / "vfs" / "vfs_abc.txt").read_text() == "raw log"  # raw, as the reference
    envelope = json.loads((exported / "notes" / "dir" / "plan.md").read_text())
    assert envelope["content"] == "plan" and envelope["meta"]["createdAt"] == 1700000000500
    fresh = tmp_path / "fresh.db"
    assert _json("store", "import", exported, "--store", fresh)["entries"]["notes"] == 1
    with SQLiteBackend(fresh) as copy:
        note = copy.read("notes", "dir/plan.md")
        assert note is not None and note.content == "plan" and note.created_at == 1700000000.5
        assert copy.read("memory", "test-command").content == "make test"  # type: ignore[union-attr]


def test_a_directory_the_typescript_reference_wrote_imports_as_is(tmp_path: Path) -> None:
    root = tmp_path / ".context"
    (root / "notes").mkdir(parents=True)
    (root / "vfs").mkdir()
    (root / "notes" / "findings.md").write_text(
        '{"content":"parser ignores input",'
        '"meta":{"createdAt":1712000000000,"updatedAt":1712000000000}}'
    )
    (root / "vfs" / "vfs_0123456789abcdef.txt").write_text("400 lines of test output")
    result = invoke("store", "import", root, "--project", PROJECT)
    assert result.exit_code == 0, result.output
    assert "notes/ 1, vfs/ 1" in result.stderr
    with _default() as backend:
        note = backend.read("notes", "findings.md")
        assert note is not None and note.content == "parser ignores input"
        assert note.created_at == 1712000000.0
        log = backend.read("vfs", "vfs_0123456789abcdef.txt")
        assert log is not None and log.content == "400 lines of test output"


def test_a_store_directory_works_like_a_database(tmp_path: Path) -> None:
    root = tmp_path / "store"
    (root / "notes").mkdir(parents=True)
    assert invoke("store", "put", "notes/a.md", "--store", root, stdin="A").exit_code == 0
    assert invoke("store", "cat", "notes/a.md", "--store", root).stdout == "A\n"
    assert (
        _json("store", "search", "A", "--ns", "notes", "--store", root)[0]["uri"]
        == "context://notes/a.md"
    )
    result = invoke("store", "ls", "--store", root, "--project", PROJECT)
    assert "--project applies to a database" in error_line(result)


# -- bad input: one line, exit 1, nothing written ------------------------------------------------


@pytest.fixture
def seeded() -> dict[str, Any]:
    with _default() as backend:
        backend.write("notes", "keep.md", StoredEntry("keep me"))
        backend.write("notes", "other.md", StoredEntry("other"))
        return contents(backend)


def _unchanged(before: dict[str, Any]) -> None:
    with _default() as backend:
        assert contents(backend) == before


@pytest.mark.parametrize(
    ("args", "stdin", "message"),
    [
        (("store", "cat", "context://nots/keep.md"), None, "unknown namespace 'nots'"),
        (("store", "ls", "nots/"), None, "unknown namespace 'nots'"),
        (("store", "put", "nots/x.md"), "text", "unknown namespace 'nots'"),
        (("store", "search", "keep", "--ns", "nots"), None, "unknown namespace 'nots'"),
        (("store", "cleanup", "nots", "--max-files", "0"), None, "unknown namespace 'nots'"),
        (("store", "mv", "notes/keep.md", "nots/keep.md"), None, "unknown namespace 'nots'"),
        (("store", "mv", "notes/keep.md", "notes/other.md"), None, "already exists"),
        (("store", "cat", "notes/"), None, "names a directory"),
        (("store", "cat", "notes/missing.md"), None, "no entry context://notes/missing.md"),
        (("store", "rm", "notes/missing.md"), None, "no entry"),
        (("store", "put", "notes/keep.md", "/nonexistent/file.txt"), None, "does not exist"),
        (("store", "put", "notes/bad.md", "/"), None, "is a directory"),
        (("store", "cat", "context://"), None, "names no namespace"),
    ],
)
def test_bad_input_changes_nothing(
    seeded: dict[str, Any], args: tuple[str, ...], stdin: str | None, message: str
) -> None:
    result = invoke(*args, "--project", PROJECT, stdin=stdin)
    assert result.exit_code == 1, result.output
    assert message in error_line(result)
    _unchanged(seeded)


def test_a_directory_of_something_else_is_refused_untouched(tmp_path: Path) -> None:
    source = tmp_path / "src"
    (source / "pkg").mkdir(parents=True)
    (source / "README.md").write_text("hello")
    before = sorted(str(p.relative_to(source)) for p in source.rglob("*"))
    for args in (
        ("store", "ls", "--store", source),
        ("store", "put", "notes/x.md", "--store", source),
        ("store", "import", tmp_path / "missing", "--store", source),
        ("store", "export", source),
        ("store", "import", source),
    ):
        result = invoke(*args, stdin="x")
        assert result.exit_code == 1, result.output
        line = error_line(result)
        assert "not a context store" in line or "does not exist" in line
    assert sorted(str(p.relative_to(source)) for p in source.rglob("*")) == before
    assert not default_database_path().exists()


def test_a_file_that_is_not_a_database_is_refused_untouched(tmp_path: Path) -> None:
    text = tmp_path / "notes.txt"
    text.write_text("just text")
    result = invoke("store", "put", "notes/x.md", "--store", text, stdin="x")
    assert result.exit_code == 1
    assert "not a context database" in error_line(result)
    assert text.read_text() == "just text"
    missing = tmp_path / "missing.db"
    assert "no store at" in error_line(invoke("store", "ls", "--store", missing))
    assert not missing.exists()


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads every file")
def test_an_unreadable_file_to_put_writes_nothing(seeded: dict[str, Any], tmp_path: Path) -> None:
    locked = tmp_path / "locked.txt"
    locked.write_text("secret")
    locked.chmod(0)
    result = invoke("store", "put", "notes/keep.md", locked, "--project", PROJECT)
    assert "not readable" in error_line(result)
    _unchanged(seeded)


def test_a_filesystem_store_left_unchanged_by_bad_input(tmp_path: Path) -> None:
    root = tmp_path / "store"
    backend = FileSystemBackend(root)
    backend.write("notes", "a.md", StoredEntry("A"))
    before = contents(backend)
    assert invoke("store", "put", "nots/a.md", "--store", root, stdin="B").exit_code == 1
    assert invoke("store", "mv", "notes/a.md", "notes/a.md", "--store", root).exit_code == 1
    assert contents(backend) == before
