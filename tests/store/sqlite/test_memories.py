"""Keyed memories: deduplication, supersession history, soft deletion, scopes, the log."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from contextchef.errors import StoreError
from contextchef.store.backends.sqlite import SQLiteBackend
from contextchef.store.backends.sqlite.memories import prune_memory_log


def _log(backend: SQLiteBackend) -> list[tuple[str, str]]:
    with backend.connection() as conn:
        return [(r[0], r[1]) for r in conn.execute("SELECT key, op FROM memory_log ORDER BY id")]


def test_set_get_and_dedup(backend: SQLiteBackend) -> None:
    first = backend.memories.set("style", "tabs", meta={"source": "user"})
    again = backend.memories.set("style", "tabs", meta={"source": "user"})
    assert again == first
    got = backend.memories.get("style")
    assert got is not None and got.content == "tabs" and got.meta == {"source": "user"}
    assert got.current
    assert len(backend.memories.history("style")) == 1
    assert _log(backend) == [("style", "create")]


def test_update_supersedes_instead_of_overwriting(backend: SQLiteBackend) -> None:
    v1 = backend.memories.set("style", "tabs")
    v2 = backend.memories.set("style", "spaces")
    backend.memories.set("style", "spaces", meta={"why": "pep8"})
    history = backend.memories.history("style")
    assert [m.content for m in history] == ["tabs", "spaces", "spaces"]
    assert history[0].id == v1.id and history[0].superseded_by == v2.id
    assert history[1].superseded_by == history[2].id
    assert [m.current for m in history] == [False, False, True]
    assert backend.memories.get("style").meta == {"why": "pep8"}  # type: ignore[union-attr]
    assert [op for _, op in _log(backend)] == ["create", "update", "update"]


def test_delete_keeps_history(backend: SQLiteBackend) -> None:
    backend.memories.set("k", "v")
    assert backend.memories.delete("k") is True
    assert backend.memories.get("k") is None
    assert backend.memories.delete("k") is False
    assert [m.deleted_at is not None for m in backend.memories.history("k")] == [True]
    backend.memories.set("k", "again")
    assert backend.memories.get("k").content == "again"  # type: ignore[union-attr]
    assert [op for _, op in _log(backend)] == ["create", "delete", "create"]


def test_list_by_prefix(backend: SQLiteBackend) -> None:
    for key in ["b", "a/2", "a/1", "a_"]:
        backend.memories.set(key, key)
    backend.memories.delete("a/2")
    assert [m.key for m in backend.memories.list()] == ["a/1", "a_", "b"]
    assert [m.key for m in backend.memories.list(prefix="a/")] == ["a/1"]


def test_user_scope_is_shared_and_project_scope_is_not(db_path: Path) -> None:
    with (
        SQLiteBackend(db_path, project="test:p1") as p1,
        SQLiteBackend(db_path, project="test:p2") as p2,
    ):
        p1.memories.set("name", "Ada", scope="user")
        p1.memories.set("lang", "python")
        assert p2.memories.get("name", scope="user").content == "Ada"  # type: ignore[union-attr]
        assert p2.memories.get("lang") is None
        assert p1.memories.get("name") is None


def test_same_key_in_two_projects(db_path: Path) -> None:
    with (
        SQLiteBackend(db_path, project="test:p1") as p1,
        SQLiteBackend(db_path, project="test:p2") as p2,
    ):
        p1.memories.set("k", "one")
        p2.memories.set("k", "two")
        assert p1.memories.get("k").content == "one"  # type: ignore[union-attr]


def test_one_current_row_per_key_is_enforced_by_the_schema(backend: SQLiteBackend) -> None:
    backend.memories.set("k", "v")
    with backend.connection() as conn, pytest.raises(sqlite3.IntegrityError):
        conn.execute(
            "INSERT INTO memories(project_id, key, content, created_at) VALUES (?, 'k', 'x', 0)",
            (backend.project.id,),
        )


def test_log_is_append_only(backend: SQLiteBackend) -> None:
    backend.memories.set("k", "v")
    with backend.connection() as conn, pytest.raises(sqlite3.IntegrityError):
        conn.execute("UPDATE memory_log SET op = 'delete'")


def test_unserialisable_meta(backend: SQLiteBackend) -> None:
    with pytest.raises(StoreError):
        backend.memories.set("k", "v", meta={"x": {1, 2}})


def test_retention_prunes_by_age_and_count(backend: SQLiteBackend) -> None:
    for i in range(12):
        backend.memories.set("k", f"v{i}")
    with backend.connection() as conn:
        conn.execute("BEGIN IMMEDIATE")
        assert prune_memory_log(conn, max_rows=5) == 7
        ids = [r[0] for r in conn.execute("SELECT id FROM memory_log ORDER BY id")]
        assert ids == list(range(8, 13))
        assert prune_memory_log(conn, max_age_s=10, now=10**12) == 5
        conn.execute("COMMIT")
    assert len(backend.memories.history("k")) == 12


def test_log_is_pruned_while_writing(
    backend: SQLiteBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("contextchef.store.backends.sqlite.memories.PRUNE_EVERY", 4)
    monkeypatch.setattr("contextchef.store.backends.sqlite.memories.LOG_MAX_ROWS_PER_PROJECT", 2)
    for i in range(8):
        backend.memories.set("k", f"v{i}")
    assert len(_log(backend)) <= 4
