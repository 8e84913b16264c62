"""ChefPool / AsyncChefPool: one chef per conversation, bounded, over one store."""

from __future__ import annotations

import asyncio
import threading
import unicodedata
import uuid
from pathlib import Path
from typing import Any

import pytest

from contextchef import (
    AsyncChefPool,
    AsyncContextChef,
    ChefPool,
    ConfigError,
    ContextChef,
    InMemoryBackend,
    SQLiteBackend,
)
from contextchef.pool import DEFAULT_KEY, session_key


def test_keys_are_normalised_with_a_default_for_none() -> None:
    assert session_key(None) == session_key("") == session_key("  ") == DEFAULT_KEY
    assert session_key(" user-1 ") == "user-1"
    assert session_key(7) == "7"
    ident = uuid.uuid4()
    assert session_key(ident) == str(ident)
    decomposed = unicodedata.normalize("NFD", "café")
    assert session_key(decomposed) == session_key("café")
    for bad in (1.5, b"x", True, ["a"]):
        with pytest.raises(ConfigError, match="session key"):
            session_key(bad)


def test_one_chef_per_key_and_the_least_recently_used_goes_first() -> None:
    backend = InMemoryBackend()
    built: list[str] = []
    evicted: list[tuple[str, ContextChef]] = []

    def factory(key: str) -> ContextChef:
        built.append(key)
        return ContextChef(store=backend)

    pool = ChefPool(factory, max_size=2, on_evict=lambda key, chef: evicted.append((key, chef)))
    a = pool.get("a")
    assert pool.get(" a ") is a and pool.get("a") is a
    b = pool.get("b")
    assert pool.get("a") is a  # a is now the most recent
    pool.get("c")
    assert pool.keys() == ["a", "c"] and "b" not in pool and len(pool) == 2
    assert evicted == [("b", b)]
    assert pool.get("b") is not b and built == ["a", "b", "c", "b"]
    assert pool.keys() == ["c", "b"]
    assert pool.evict("c") and not pool.evict("c") and pool.keys() == ["b"]
    assert pool.get(None) is pool.get("")


def test_evicting_a_chef_loses_nothing_the_store_holds(tmp_path: Path) -> None:
    backend = SQLiteBackend(tmp_path / "pool.db", project="team:pool")
    pool = ChefPool(lambda key: ContextChef(store=backend, memory={}), max_size=1)
    first = pool.get("alice")
    created = first.handle_tool(
        "context", {"command": "create", "path": "memory/editor", "file_text": "vim"}
    )
    assert created == "Created context://memory/editor."
    first.handle_tool("context", {"command": "create", "path": "notes/n.md", "file_text": "x"})
    pool.get("bob")  # evicts alice
    assert "alice" not in pool
    again = pool.get("alice")
    assert again is not first
    memory = again.memory.get("editor")
    assert memory is not None and memory.value == "vim"
    payload = again.set_history([{"role": "user", "content": "hi"}]).compile()
    assert "vim" in payload["messages"][0]["content"]
    assert again.store.namespace("notes").get("n.md") is not None
    backend.close()


def test_a_pool_refuses_chefs_over_different_stores_and_bad_options() -> None:
    pool = ChefPool(lambda key: ContextChef(), max_size=4)
    pool.get("a")
    with pytest.raises(ConfigError, match="share one store"):
        pool.get("b")
    assert pool.keys() == ["a"]
    for size in (0, -1, 1.5, True):
        with pytest.raises(ConfigError, match="max_size"):
            ChefPool(lambda key: ContextChef(), max_size=size)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="ContextChef"):
        ChefPool(lambda key: AsyncContextChef()).get("x")  # type: ignore[arg-type, return-value]


def test_concurrent_threads_get_one_chef_per_key() -> None:
    backend = InMemoryBackend()
    calls: list[str] = []
    pool = ChefPool(lambda key: calls.append(key) or ContextChef(store=backend), max_size=64)
    seen: dict[str, set[int]] = {}
    guard = threading.Lock()
    start = threading.Barrier(8)

    def work() -> None:
        start.wait()
        for round_ in range(50):
            key = f"k{round_ % 20}"
            chef = pool.get(key)
            with guard:
                seen.setdefault(key, set()).add(id(chef))

    threads = [threading.Thread(target=work) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(calls) == sorted(f"k{i}" for i in range(20))
    assert all(len(ids) == 1 for ids in seen.values())


async def test_the_async_pool_is_task_safe_and_keeps_the_store(tmp_path: Path) -> None:
    backend = SQLiteBackend(tmp_path / "apool.db", project="team:pool")
    built: list[str] = []
    evicted: list[str] = []

    async def factory(key: str) -> AsyncContextChef:
        built.append(key)
        await asyncio.sleep(0.01)  # a slow factory: concurrent gets must still build one chef
        return AsyncContextChef(store=backend, memory={})

    async def on_evict(key: str, chef: Any) -> None:
        evicted.append(key)

    pool = AsyncChefPool(factory, max_size=2, on_evict=on_evict)
    chefs = await asyncio.gather(*(pool.get("alice") for _ in range(10)))
    assert len({id(chef) for chef in chefs}) == 1 and built == ["alice"]
    await chefs[0].handle_tool(
        "context", {"command": "create", "path": "memory/lang", "file_text": "python"}
    )
    await pool.get("bob")
    await pool.get("carol")
    assert evicted == ["alice"] and pool.keys() == ["bob", "carol"]
    again = await pool.get("alice")
    assert again is not chefs[0]
    entry = await again.memory.get("lang")
    assert entry is not None and entry.value == "python"
    assert evicted == ["alice", "bob"]
    assert await pool.evict("carol") and "carol" not in pool and pool.keys() == ["alice"]
    backend.close()
