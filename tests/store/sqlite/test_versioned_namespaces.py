"""SQLite's versioned namespaces: migration m006, declarations per project, moving entries,
another process's declaration, and `db repair` of files from before m006."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from contextchef.memory import Memory
from contextchef.store import Store
from contextchef.store.backend import StoredEntry
from contextchef.store.backends.sqlite import SQLiteBackend
from contextchef.store.backends.sqlite import migrations as mig
from contextchef.store.backends.sqlite.connection import connect, enable_wal
from contextchef.store.backends.sqlite.repair import repair


def _rows(path: Path, sql: str) -> list[tuple[Any, ...]]:
    conn = sqlite3.connect(path)
    try:
        return [tuple(row) for row in conn.execute(sql).fetchall()]
    finally:
        conn.close()


def _seed_v5(path: Path) -> None:
    """A database as m005 left it: project 1 has two versions of a memory and a log; project 2
    only a note."""
    conn = connect(path)
    enable_wal(conn, str(path))
    mig.apply_migrations(conn, location=str(path), target=5)
    conn.execute("INSERT INTO projects(identity, created_at) VALUES ('test:old', 0)")
    conn.execute("INSERT INTO projects(identity, created_at) VALUES ('test:notes-only', 0)")
    conn.execute("BEGIN")  # superseded_by is deferred: it may point at the row inserted next
    conn.execute(
        "INSERT INTO memories(id, project_id, key, content, meta, created_at, superseded_by) "
        "VALUES (1, 1, 'goal', 'ship v1', '{\"created_at\": 1.0, \"updated_at\": 1.0}', 1, 2)"
    )
    conn.execute(
        "INSERT INTO memories(id, project_id, key, content, meta, created_at) "
        "VALUES (2, 1, 'goal', 'ship v2', '{\"created_at\": 1.0, \"updated_at\": 2.0}', 2)"
    )
    conn.execute("COMMIT")
    conn.execute("INSERT INTO memory_log(project_id, key, op, at) VALUES (1, 'goal', 'create', 1)")
    conn.execute(
        "INSERT INTO entries(project_id, namespace, path, content, created_at, updated_at, bytes) "
        "VALUES (2, 'notes', 'n.md', 'a note', 0, 0, 6)"
    )
    conn.close()


def test_m006_keeps_versioning_what_had_versions(db_path: Path) -> None:
    _seed_v5(db_path)
    with SQLiteBackend(db_path, project="test:old") as old:  # migrates; told nothing
        assert [listed.path for listed in old.list("memory")] == ["goal"]
        assert old.supports("history", "memory") and not old.supports("history", "notes")
        assert [v.content for v in old.history("memory", "goal")] == ["ship v1", "ship v2"]
        assert [h.path for h in old.search("memory", "ship")] == ["goal"]
        old.write("memory", "goal", StoredEntry("ship v3"))
        assert len(old.history("memory", "goal")) == 3
    with SQLiteBackend(db_path, project="test:notes-only") as other:
        assert not other.supports("history", "memory")  # it had no versions: nothing to keep
        assert other.read("notes", "n.md") is not None
    assert _rows(db_path, "SELECT project_id, namespace FROM versioned_namespaces") == [
        (1, "memory")
    ]
    assert _rows(db_path, "SELECT DISTINCT namespace FROM memory_log") == [("memory",)]


def test_declaring_a_namespace_moves_its_entries_of_this_project(db_path: Path) -> None:
    with (
        SQLiteBackend(db_path, project="test:a") as a,
        SQLiteBackend(db_path, project="test:b") as b,
    ):
        a.write("notes", "plan.md", StoredEntry("the plan", {"tag": "x", "created_at": 5.0}))
        a.touch("notes", "plan.md", 7.0)
        b.write("notes", "plan.md", StoredEntry("b's plan"))
        before = a.read("notes", "plan.md")
        a.keep_versions("notes")
        a.keep_versions("notes")  # idempotent
        assert a.read("notes", "plan.md") == before  # the same entry, now versioned
        (first,) = a.history("notes", "plan.md")
        assert first.content == "the plan" and first.meta["tag"] == "x"
        assert first.meta["created_at"] == 5.0 and first.meta["accessed_at"] == 7.0
        assert not b.supports("history", "notes")  # declarations are per project
        assert b.read("notes", "plan.md").content == "b's plan"  # type: ignore[union-attr]
    assert _rows(db_path, "SELECT project_id, path FROM entries WHERE namespace = 'notes'") == [
        (2, "plan.md")
    ]
    assert _rows(db_path, "SELECT project_id, namespace, key FROM memories") == [
        (1, "notes", "plan.md")
    ]


def test_another_process_declaring_is_honoured_by_the_next_write(db_path: Path) -> None:
    with (
        SQLiteBackend(db_path, project="test:p") as early,
        SQLiteBackend(db_path, project="test:p") as late,
    ):
        assert early.list("facts") == []  # resolved before the declaration
        late.keep_versions("facts")
        early.write("facts", "k", StoredEntry("from the early backend"))
        assert [v.content for v in late.history("facts", "k")] == ["from the early backend"]
        assert early.supports("history", "facts")


def test_memory_declares_its_namespace_and_store_versioned_any(db_path: Path) -> None:
    backend = SQLiteBackend(db_path, project="test:decl")
    try:
        Memory(Store(backend)).set("goal", "x")
        Store(backend, versioned=["journal"]).namespace("journal").put("day.md", "one")
    finally:
        backend.close()
    assert _rows(db_path, "SELECT namespace FROM versioned_namespaces ORDER BY 1") == [
        ("journal",),
        ("memory",),
    ]


def test_repair_of_a_file_older_than_m006_keeps_its_versions(db_path: Path) -> None:
    _seed_v5(db_path)
    outcome = repair(db_path)
    assert outcome.lossless
    salvaged = {t.table: t for t in outcome.tables}["versioned_namespaces"]
    assert (salvaged.recovered, salvaged.source_rows, salvaged.final_rows) == (1, 1, 1)
    with SQLiteBackend(db_path, project="test:old") as backend:
        assert [v.content for v in backend.history("memory", "goal")] == ["ship v1", "ship v2"]


def test_repair_keeps_declarations(db_path: Path) -> None:
    with SQLiteBackend(db_path, project="test:r") as backend:
        backend.keep_versions("facts")  # declared, nothing written yet
        backend.keep_versions("memory")
        backend.write("memory", "k", StoredEntry("v"))
    outcome = repair(db_path)
    assert outcome.lossless
    with SQLiteBackend(db_path, project="test:r") as backend:
        assert backend.supports("history", "facts") and backend.supports("history", "memory")
        assert [v.content for v in backend.history("memory", "k")] == ["v"]
