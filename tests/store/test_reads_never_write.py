"""Reads never write: `Store.get` is one read on SQLite and PostgreSQL, and a compile with memory
completes while another connection holds the write lock. Read times and the turn a compile
counts are written with the next write, `flush()` or `close()`, and nothing is lost."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from contextchef import AsyncContextChef, ContextChef
from contextchef.errors import StoreBusyError
from contextchef.memory import Memory
from contextchef.store import AsyncStore, InMemoryBackend, Store, pending
from contextchef.store.backends.postgres import AsyncPostgresBackend, PostgresBackend
from contextchef.store.backends.postgres import asynchronous as pg_async
from contextchef.store.backends.postgres import backend as pg_backend
from contextchef.store.backends.postgres._common import execute, execute_async
from contextchef.store.backends.sqlite import SQLiteBackend
from contextchef.store.ops import Op
from tests.contract import pg
from tests.contract.helpers import Spy


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def _reads_only(statements: list[str]) -> bool:
    return all(s.lstrip().upper().startswith("SELECT") for s in statements)


def _trace(backend: SQLiteBackend) -> list[str]:
    seen: list[str] = []
    with backend.connection() as conn:
        conn.set_trace_callback(seen.append)
    return seen


def _hold_write_lock(db: Path) -> sqlite3.Connection:
    other = sqlite3.connect(db, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    return other


def _busy(backend: SQLiteBackend) -> None:
    """A small busy timeout: a compile that waited for the lock would fail in 50 ms."""
    with backend.connection() as conn:
        conn.execute("PRAGMA busy_timeout = 50")


def _stored_turn(db: Path) -> int:
    with SQLiteBackend(db, project="test:nowrite") as backend:
        stored = backend.read("memory_state", "turn")
        assert stored is not None
        return int(stored.content)


def test_a_sqlite_compile_with_memory_completes_while_a_writer_holds_the_lock(
    tmp_path: Path,
) -> None:
    db = tmp_path / "context.db"
    backend = SQLiteBackend(db, project="test:nowrite")
    _busy(backend)
    store = Store(backend)
    chef = ContextChef(store=store, memory={})
    chef.memory.set("todo", "buy milk", ttl={"turns": 1})
    chef.memory.set("kept", "forever")
    chef.set_history([user("one")]).compile()  # opens turn 0
    store.flush()
    statements = _trace(backend)
    other = _hold_write_lock(db)  # held across the compiles: longer than the busy timeout
    try:
        chef.set_history([user("one"), {"role": "assistant", "content": "ok"}, user("two")])
        payload = chef.compile()  # turn 1: counts a turn, expires `todo`
        assert payload.meta.expired_memory_keys == ("todo",)
        assert payload.meta.memory_keys == ("kept",)
        assert chef.compile().meta.memory_keys == ("kept",)  # the same turn, nothing repeated
        assert chef.memory.turn == 1
        assert _reads_only(statements), statements
    finally:
        other.execute("COMMIT")
        other.close()
    store.close()  # the turn and the deletion are written here
    assert _stored_turn(db) == 1
    with SQLiteBackend(db, project="test:nowrite") as again:
        assert again.read("memory", "todo") is None
        assert again.read("memory", "kept") is not None


def test_the_next_write_carries_the_turn_and_the_expiry(tmp_path: Path) -> None:
    db = tmp_path / "context.db"
    chef = ContextChef(store=SQLiteBackend(db, project="test:nowrite"), memory={})
    chef.memory.set("todo", "buy milk", ttl={"turns": 1})
    chef.set_history([user("one")]).compile()
    chef.set_history([user("one"), user("two")]).compile()
    assert chef.memory.turn == 1
    chef.memory.set("note", "x")  # any write of the store flushes what the compiles deferred
    assert _stored_turn(db) == 1
    assert [entry.key for entry in Memory(Store(chef.store.backend)).entries()] == ["note"]


def test_turn_ttls_expire_on_the_right_turn_across_restarts(tmp_path: Path) -> None:
    db = tmp_path / "context.db"
    history = [user("one")]
    for turn, shown in enumerate([("todo",), ("todo",), ()]):
        store = Store(SQLiteBackend(db, project="test:nowrite"))  # a new process each turn
        chef = ContextChef(store=store, memory={})
        if turn == 0:
            chef.memory.set("todo", "buy milk", ttl={"turns": 2})
        chef.set_history(history)
        assert chef.compile().meta.memory_keys == shown
        assert chef.memory.turn == turn
        store.close()
        history = [*history, {"role": "assistant", "content": "ok"}, user(f"turn {turn + 1}")]


def test_async_compiles_defer_too(tmp_path: Path) -> None:
    db = tmp_path / "context.db"

    async def main() -> None:
        backend = SQLiteBackend(db, project="test:nowrite")
        _busy(backend)
        store = AsyncStore(backend)
        chef = AsyncContextChef(store=store, memory={})
        await chef.memory.set("todo", "x", ttl={"turns": 1})
        await chef.set_history([user("one")]).compile()
        await store.flush()
        other = _hold_write_lock(db)
        try:
            chef.set_history([user("one"), user("two")])
            assert (await chef.compile()).meta.expired_memory_keys == ("todo",)
        finally:
            other.execute("COMMIT")
            other.close()
        await store.close()

    asyncio.run(main())
    assert _stored_turn(db) == 1


def test_eviction_sees_reads_not_yet_written(tmp_path: Path) -> None:
    clock = iter(float(t) for t in range(100, 200))
    backend = SQLiteBackend(tmp_path / "context.db", project="test:nowrite")
    store = Store(backend, clock=lambda: next(clock))
    notes = store.namespace("notes")
    for path in ("a.md", "b.md", "c.md"):
        notes.put(path, path)
    notes.get("a.md")  # the newest use: kept, though its time is still in memory
    report = store.cleanup("notes", max_files=1)
    assert report.paths == ["b.md", "c.md"]
    store.close()


# -- PostgreSQL -------------------------------------------------------------------------------


@pytest.fixture
def pg_statements(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Every statement the PostgreSQL backends run from now on."""
    seen: list[str] = []

    def sync(conn: Any, query: Any) -> Any:
        seen.append(query.sql)
        return execute(conn, query)

    async def aio(conn: Any, query: Any) -> Any:
        seen.append(query.sql)
        return await execute_async(conn, query)

    monkeypatch.setattr(pg_backend, "execute", sync)
    monkeypatch.setattr(pg_async, "execute_async", aio)
    yield seen


@pytest.fixture
def pg_schema() -> Iterator[str]:
    yield from pg.throwaway_schema("contextchef_nowrite")


def test_postgres_get_is_one_read(pg_schema: str, pg_statements: list[str]) -> None:
    backend = PostgresBackend(pg.DSN, schema=pg_schema, project="test:nowrite", pool_size=2)
    store = Store(backend)
    notes = store.namespace("notes")
    notes.put("a.md", "alpha")
    pg_statements.clear()
    for _ in range(3):
        assert notes.get("a.md").content == "alpha"  # type: ignore[union-attr]
    assert len(pg_statements) == 3 and _reads_only(pg_statements), pg_statements
    store.flush()
    assert [s for s in pg_statements if "accessed_at" in s and s.startswith("UPDATE")]
    assert backend.read("notes", "a.md").meta["accessed_at"] is not None  # type: ignore[union-attr]
    store.close()


def test_async_postgres_get_is_one_read(pg_schema: str, pg_statements: list[str]) -> None:
    async def main() -> None:
        backend = AsyncPostgresBackend(pg.DSN, schema=pg_schema, project="test:nowrite")
        store = AsyncStore(backend)
        notes = store.namespace("notes")
        await notes.put("a.md", "alpha")
        pg_statements.clear()
        assert (await notes.get("a.md")).content == "alpha"  # type: ignore[union-attr]
        assert len(pg_statements) == 1 and _reads_only(pg_statements), pg_statements
        await store.close()

    asyncio.run(main())


# -- what waits, and how much ------------------------------------------------------------------


def test_a_failing_deferred_write_is_kept_and_an_explicit_flush_raises_it() -> None:
    store = Store(InMemoryBackend())
    notes = store.namespace("notes")
    attempts: list[int] = []

    def write() -> Op[None]:
        attempts.append(1)
        if len(attempts) == 1:
            raise StoreBusyError("held by another writer")
        yield from store.core.put("notes", "later.md", "written", None)

    store.core.defer("later", write)
    notes.put("now.md", "x")  # the implicit flush logs the failure; the write goes ahead
    assert notes.get("now.md") is not None and notes.get("later.md") is None
    store.flush()  # kept: the second attempt succeeds
    assert notes.get("later.md").content == "written"  # type: ignore[union-attr]
    store.core.defer("again", lambda: _raise(StoreBusyError("still held")))
    with pytest.raises(StoreBusyError):
        store.flush()


def _raise(exc: Exception) -> Op[None]:
    raise exc
    yield  # a flow


def test_read_times_waiting_for_a_flush_are_bounded(tmp_path: Path) -> None:
    backend = SQLiteBackend(tmp_path / "context.db", project="test:nowrite")
    store = Store(backend)
    notes = store.namespace("notes")
    for index in range(3):
        notes.put(f"{index}.md", "x")
    spy = Spy(backend)
    spied = Store(spy)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(pending, "MAX_PENDING", 2)
        for index in range(3):
            assert spied.namespace("notes").get(f"{index}.md") is not None
    spied.flush()
    calls = spy.calls
    assert calls.count("touch") == 2 and calls.count("read") == 3
    store.close()
