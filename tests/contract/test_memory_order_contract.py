"""The memory block's order: the order facts were learned, the same on every backend and API.

Every backend (in-memory, filesystem, SQLite, PostgreSQL), through the synchronous `Store`,
`AsyncStore` over worker threads and the async-native path, must give `Memory.entries()` and the
compiled block in insertion order: a new key goes last, an update keeps its place, a delete and
a new write put it last, a rename keeps its place, and an entry written straight through the
store (as the TypeScript reference or a host would, without a sequence) is placed by its
`created_at`. `order="key"` sorts by key everywhere, and the order survives a reopen.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from contextchef.memory import AsyncMemory, Memory
from contextchef.store import Store
from tests.contract.helpers import Blocking

MakeStore = Callable[..., Any]

KEYS = ("zeta", "alpha", "10", "2", "mid/dle")
"""Written in this order: neither sorted nor reverse-sorted, with keys that sort as numbers."""


def _memory(store: Any, **options: Any) -> Any:
    if isinstance(store, Store):
        return Memory(store, **options)
    return Blocking(AsyncMemory(store._target, **options), store._loop)  # the async API


def _block_keys(memory: Any) -> list[str]:
    return list(memory.compile_artifacts("unified").keys)


def test_entries_come_in_insertion_order_on_every_backend(
    make_store: MakeStore, backend: Any, clock: Any
) -> None:
    memory = _memory(make_store(backend), allowed_keys=[*KEYS, "renamed"])
    for key in KEYS:
        memory.set(key, f"value of {key}")  # the clock stands still: the sequence still rises
    assert [entry.key for entry in memory.entries()] == list(KEYS)
    memory.set("zeta", "changed")  # an update keeps its place
    memory.update("10", "changed by the model")
    assert _block_keys(memory) == list(KEYS)
    memory.delete("alpha")
    memory.set("alpha", "learned again")  # a new fact under an old key goes last
    memory.rename("2", "renamed")  # the same fact under a new key keeps its place
    expected = ["zeta", "10", "renamed", "mid/dle", "alpha"]
    assert [entry.key for entry in memory.entries()] == expected
    assert _block_keys(memory) == expected


@pytest.mark.parametrize("order", ["insertion", "key"])
def test_an_entry_written_through_the_store_is_placed_by_its_creation_time(
    make_store: MakeStore, backend: Any, clock: Any, order: str
) -> None:
    store = make_store(backend)
    memory = _memory(store, order=order)
    memory.set("b", "first")
    clock.advance(1)
    store.namespace("memory").put("a", "second, written without a sequence")
    clock.advance(1)
    memory.set("c", "third")
    keys = [entry.key for entry in memory.entries()]
    assert keys == (["b", "a", "c"] if order == "insertion" else ["a", "b", "c"])


def test_the_order_survives_a_reopen(reopen: Callable[[], Any], clock: Any) -> None:
    first = Memory(Store(reopen(), clock=clock))
    for key in KEYS:
        first.set(key, key)
    first.set("alpha", "changed")
    # a later process (a fresh memory, its own sequencer) writes after the first one
    clock.advance(1)
    second = Memory(Store(reopen(), clock=clock))
    second.set("0-new", "learned last")
    assert [entry.key for entry in second.entries()] == [*KEYS, "0-new"]
    by_key = Memory(Store(reopen(), clock=clock), order="key")
    assert [entry.key for entry in by_key.entries()] == sorted([*KEYS, "0-new"])
