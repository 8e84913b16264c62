"""A versioned namespace on SQLite (`memory`, declared by the test as memory declares it):
versions in `memories`, soft deletes, the log, `history`."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from contextchef import ContextChef
from contextchef.errors import StoreCapabilityError, StoreError
from contextchef.memory import Memory
from contextchef.store import Store, StoredEntry, backend_supports
from contextchef.store.backends.sqlite import SQLiteBackend
from contextchef.store.backends.sqlite._versioned import prune_memory_log
from tests.contract.helpers import Minimal


@pytest.fixture
def backend(db_path: Path) -> Iterator[SQLiteBackend]:
    """A backend whose `memory` namespace keeps versions (what `Memory` declares)."""
    with SQLiteBackend(db_path, project="test:unit") as opened:
        opened.keep_versions("memory")
        yield opened


def _log(backend: SQLiteBackend) -> list[tuple[str, str]]:
    with backend.connection() as conn:
        return [(r[0], r[1]) for r in conn.execute("SELECT key, op FROM memory_log ORDER BY id")]


def _count(backend: SQLiteBackend, table: str, where: str = "1") -> int:
    with backend.connection() as conn:
        return int(conn.execute(f"SELECT count(*) FROM {table} WHERE {where}").fetchone()[0])


def _write(backend: SQLiteBackend, key: str, content: str, **meta: Any) -> None:
    backend.write("memory", key, StoredEntry(content, {"updated_at": 5.0, **meta}))


def test_memory_lives_in_memories_not_entries(backend: SQLiteBackend) -> None:
    _write(backend, "style", "tabs", source="user")
    backend.write("notes", "style", StoredEntry("a note"))
    assert _count(backend, "memories") == 1
    assert _count(backend, "entries", "namespace = 'memory'") == 0
    got = backend.read("memory", "style")
    assert got is not None and got.content == "tabs" and got.meta["source"] == "user"
    assert got.meta["bytes"] == 4 and got.updated_at == 5.0


def test_identical_write_is_deduplicated(backend: SQLiteBackend) -> None:
    _write(backend, "style", "tabs", source="user")
    _write(backend, "style", "tabs", source="user")
    backend.write("memory", "style", StoredEntry("tabs", {"source": "user"}))  # times kept
    assert len(backend.history("memory", "style")) == 1
    assert _log(backend) == [("style", "create")]


def test_update_supersedes_instead_of_overwriting(backend: SQLiteBackend) -> None:
    _write(backend, "style", "tabs")
    _write(backend, "style", "spaces")
    _write(backend, "style", "spaces", why="pep8")
    history = backend.history("memory", "style")
    assert [v.content for v in history] == ["tabs", "spaces", "spaces"]
    assert ["superseded_at" in v.meta for v in history] == [True, True, False]
    assert history[0].meta["superseded_at"] == history[1].meta["recorded_at"]
    assert not any("deleted_at" in v.meta for v in history)
    assert backend.read("memory", "style").meta["why"] == "pep8"  # type: ignore[union-attr]
    assert [op for _, op in _log(backend)] == ["create", "update", "update"]
    with backend.connection() as conn:
        links = conn.execute("SELECT id, superseded_by FROM memories ORDER BY id").fetchall()
    assert [tuple(r) for r in links] == [(1, 2), (2, 3), (3, None)]


def test_created_at_is_kept_across_versions(backend: SQLiteBackend) -> None:
    backend.write("memory", "k", StoredEntry("one", {"created_at": 100.0}))
    backend.write("memory", "k", StoredEntry("two"))
    assert backend.read("memory", "k").created_at == 100.0  # type: ignore[union-attr]


def test_delete_is_soft_and_keeps_history(backend: SQLiteBackend) -> None:
    _write(backend, "k", "v")
    assert backend.delete("memory", "k") is True
    assert backend.read("memory", "k") is None and not backend.exists("memory", "k")
    assert backend.delete("memory", "k") is False
    assert ["deleted_at" in v.meta for v in backend.history("memory", "k")] == [True]
    _write(backend, "k", "again")
    assert backend.read("memory", "k").content == "again"  # type: ignore[union-attr]
    assert [v.content for v in backend.history("memory", "k")] == ["v", "again"]
    assert [op for _, op in _log(backend)] == ["create", "delete", "create"]


def test_list_read_all_and_search_see_current_versions_only(backend: SQLiteBackend) -> None:
    for key in ["b", "a/2", "a/1", "a_"]:
        _write(backend, key, f"old {key}")
        _write(backend, key, f"new {key}")
    backend.delete("memory", "a/2")
    assert [e.path for e in backend.list("memory")] == ["a/1", "a_", "b"]
    assert [e.path for e in backend.list("memory", "a/")] == ["a/1"]
    assert {k: v.content for k, v in backend.read_all("memory", "a").items()} == {
        "a/1": "new a/1",
        "a_": "new a_",
    }
    assert sorted(h.path for h in backend.search("memory", "old")) == []
    assert sorted(h.path for h in backend.search("memory", "new")) == ["a/1", "a_", "b"]
    assert [h.path for h in backend.search("memory", "new", prefix="a/")] == ["a/1"]


def test_append_and_touch(backend: SQLiteBackend) -> None:
    backend.append("memory", "log", "one\n")
    backend.append("memory", "log", "two\n")
    backend.touch("memory", "log", 1234.5)
    got = backend.read("memory", "log")
    assert got is not None and got.content == "one\ntwo\n" and got.meta["accessed_at"] == 1234.5
    assert [v.content for v in backend.history("memory", "log")] == ["one\n", "one\ntwo\n"]
    assert [op for _, op in _log(backend)] == ["create", "update"]  # a touch is not a version


def test_restore_versions_changes_and_soft_deletes(backend: SQLiteBackend) -> None:
    _write(backend, "keep", "k")
    _write(backend, "gone", "g")
    saved = backend.snapshot("memory")
    _write(backend, "keep", "changed")
    backend.restore("memory", saved)
    assert {k: v.content for k, v in backend.read_all("memory").items()} == {
        "keep": "k",
        "gone": "g",
    }
    backend.restore("memory", {"keep": saved["keep"]})
    assert [e.path for e in backend.list("memory")] == ["keep"]
    assert [v.content for v in backend.history("memory", "keep")] == ["k", "changed", "k"]
    assert [op for _, op in _log(backend)] == ["create", "create", "update", "update", "delete"]


def test_history_is_a_memory_only_capability(backend: SQLiteBackend) -> None:
    assert backend_supports(backend, "history", "memory")
    assert not backend_supports(backend, "history", "notes")
    with pytest.raises(StoreCapabilityError):
        backend.history("notes", "x")
    assert backend.history("memory", "never-written") == []


def test_projects_do_not_share_memories(db_path: Path) -> None:
    with (
        SQLiteBackend(db_path, project="test:p1") as p1,
        SQLiteBackend(db_path, project="test:p2") as p2,
    ):
        p1.keep_versions("memory")
        p2.keep_versions("memory")
        _write(p1, "k", "one")
        _write(p2, "k", "two")
        assert p1.read("memory", "k").content == "one"  # type: ignore[union-attr]
        assert [v.content for v in p2.history("memory", "k")] == ["two"]
        assert p2.list("memory") and [h.path for h in p1.search("memory", "two")] == []


def test_one_current_row_per_key_is_enforced_by_the_schema(backend: SQLiteBackend) -> None:
    _write(backend, "k", "v")
    with backend.connection() as conn, pytest.raises(sqlite3.IntegrityError):
        conn.execute(
            "INSERT INTO memories(project_id, key, content, created_at) VALUES (?, 'k', 'x', 0)",
            (backend.project.id,),
        )


def test_log_is_append_only(backend: SQLiteBackend) -> None:
    _write(backend, "k", "v")
    with backend.connection() as conn, pytest.raises(sqlite3.IntegrityError):
        conn.execute("UPDATE memory_log SET op = 'delete'")


def test_unserialisable_meta(backend: SQLiteBackend) -> None:
    with pytest.raises(StoreError):
        backend.write("memory", "k", StoredEntry("v", {"x": {1, 2}}))
    assert _count(backend, "memories") == 0


def test_batch_rolls_back_versions_and_log(backend: SQLiteBackend) -> None:
    _write(backend, "k", "v1")
    with pytest.raises(RuntimeError), backend.batch():
        _write(backend, "k", "v2")
        backend.delete("memory", "k")
        raise RuntimeError("abort")
    assert [v.content for v in backend.history("memory", "k")] == ["v1"]
    assert _log(backend) == [("k", "create")]


def test_retention_prunes_by_age_and_count(backend: SQLiteBackend) -> None:
    for i in range(12):
        _write(backend, "k", f"v{i}")
    with backend.connection() as conn:
        conn.execute("BEGIN IMMEDIATE")
        assert prune_memory_log(conn, max_rows=5) == 7
        ids = [r[0] for r in conn.execute("SELECT id FROM memory_log ORDER BY id")]
        assert ids == list(range(8, 13))
        assert prune_memory_log(conn, max_age_s=10, now=10**12) == 5
        conn.execute("COMMIT")
    assert len(backend.history("memory", "k")) == 12  # versions are never pruned


def test_log_is_pruned_while_writing(
    backend: SQLiteBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("contextchef.store.backends.sqlite._versioned.PRUNE_EVERY", 4)
    monkeypatch.setattr("contextchef.store.backends.sqlite._versioned.LOG_MAX_ROWS_PER_PROJECT", 2)
    for i in range(8):
        _write(backend, "k", f"v{i}")
    assert len(_log(backend)) <= 4


def _raw(path: Path, sql: str) -> list[tuple[Any, ...]]:
    conn = sqlite3.connect(path)
    try:
        return [tuple(r) for r in conn.execute(sql).fetchall()]
    finally:
        conn.close()


def test_memory_module_writes_versioned_rows(db_path: Path) -> None:
    """`Memory` knows nothing of SQLite, yet set → update → delete leaves real rows."""
    backend = SQLiteBackend(db_path, project="test:real")
    memory = Memory(Store(backend))
    memory.set("goal", "ship v1", description="the objective")
    memory.set("goal", "ship v2")
    assert memory.delete("goal") is True
    backend.close()

    rows = _raw(
        db_path,
        "SELECT content, superseded_by IS NOT NULL, deleted_at IS NOT NULL "
        "FROM memories WHERE key = 'goal' ORDER BY id",
    )
    assert rows == [("ship v1", 1, 0), ("ship v2", 0, 1)]
    assert _raw(db_path, "SELECT op FROM memory_log ORDER BY id") == [
        ("create",),
        ("update",),
        ("delete",),
    ]
    assert _raw(db_path, "SELECT count(*) FROM entries WHERE namespace = 'memory'") == [(0,)]

    with SQLiteBackend(db_path, project="test:real") as again:
        store = Store(again)
        assert store.namespace("memory").list() == []
        versions = again.history("memory", "goal")
    assert [v.content for v in versions] == ["ship v1", "ship v2"]
    assert versions[0].meta["description"] == "the objective"
    assert versions[1].meta["update_count"] == 2 and "deleted_at" in versions[1].meta


def test_context_chef_memory_uses_the_memories_table(db_path: Path) -> None:
    """Through `ContextChef(store=SQLiteBackend(...), memory=...)`: 2 superseded, 1 deleted."""
    backend = SQLiteBackend(db_path, project="test:chef")
    chef = ContextChef(store=backend, memory={})
    chef.memory.set("name", "Ada")
    chef.memory.set("name", "Ada L.")
    chef.memory.set("name", "Ada Lovelace")
    chef.memory.delete("name")
    backend.close()
    counts = _raw(db_path, "SELECT count(superseded_by), count(deleted_at) FROM memories")
    assert counts == [(2, 1)]
    assert [r[0] for r in _raw(db_path, "SELECT op FROM memory_log ORDER BY id")] == [
        "create",
        "update",
        "update",
        "delete",
    ]


def test_memory_history_lists_every_version_on_sqlite(tmp_path: Path) -> None:
    from contextchef import InMemoryBackend

    memory = Memory(Store(SQLiteBackend(tmp_path / "h.db", project="test:history")))
    assert memory.supports_history()
    memory.set("goal", "ship v1")
    memory.set("goal", "ship v2", description="the objective")
    memory.delete("goal")
    versions = memory.history("goal")
    assert [v.value for v in versions] == ["ship v1", "ship v2"]
    assert [v.update_count for v in versions] == [1, 2]
    assert versions[1].description == "the objective"
    assert memory.get("goal") is None

    plain = Memory(Store(Minimal(InMemoryBackend())))  # a backend that keeps no versions
    assert not plain.supports_history()
    with pytest.raises(StoreCapabilityError):
        plain.history("goal")
