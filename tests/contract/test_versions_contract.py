"""Versioned namespaces: the same history on every backend, through every store API.

A namespace keeps versions because the store says so (`Store(versioned=[...])`, or memory
declaring its own), never because of its name: each test declares `ns` (`notes` or `memory`)
itself. What SQLite did for `memory/` alone is now the contract: every write is a version,
oldest first, each with `recorded_at` and, where they apply, `superseded_at` (its successor's
`recorded_at`) and `deleted_at`; a delete keeps the history, a new write starts after it; reads
are not versions; `restore` is deletes and writes; entries already there become the first
version; the declaration survives a reopen. A backend that keeps no versions says so with
`StoreCapabilityError`, from the store and from `Memory.history`.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import pytest

from contextchef.errors import StoreCapabilityError
from contextchef.memory import AsyncMemory, Memory
from contextchef.store import InMemoryBackend, Store, StoredEntry
from tests.contract.helpers import Blocking, Minimal

MakeStore = Callable[..., Any]


def _contents(history: list[StoredEntry]) -> list[str]:
    return [version.content for version in history]


def _assert_chain(history: list[StoredEntry]) -> None:
    """Each version names when it was recorded and, unless deleted, when it was superseded."""
    recorded = [version.meta["recorded_at"] for version in history]
    assert all(isinstance(at, float) for at in recorded)
    assert recorded == sorted(recorded)
    for before, after in itertools.pairwise(history):
        if "deleted_at" not in before.meta:
            assert before.meta["superseded_at"] == after.meta["recorded_at"]
    for version in history:
        assert version.meta["bytes"] == len(version.content.encode("utf-8"))


def test_every_write_is_a_version_oldest_first(
    make_store: MakeStore, backend: Any, ns: str
) -> None:
    view = make_store(backend, versioned=[ns]).namespace(ns)
    assert view.supports("history") and view.supports("keep_versions")
    view.put("fact", "one", {"tag": "a"})
    view.put("fact", "two", {"tag": "b"})
    view.append("fact", " and more")
    assert view.create("fact", "refused") is False  # a refused create records nothing
    view.update("fact", lambda entry: (entry.content.upper(), dict(entry.meta)))
    history = view.history("fact")
    assert _contents(history) == ["one", "two", "two and more", "TWO AND MORE"]
    assert [version.meta["tag"] for version in history] == ["a", "b", "b", "b"]
    assert all(isinstance(version.meta["updated_at"], float) for version in history)
    _assert_chain(history)
    assert "superseded_at" not in history[-1].meta and "deleted_at" not in history[-1].meta
    assert view.get("fact").content == "TWO AND MORE"
    assert view.history("never-written") == []


def test_a_delete_keeps_the_history_and_a_new_write_starts_after_it(
    make_store: MakeStore, backend: Any, ns: str
) -> None:
    view = make_store(backend, versioned=[ns]).namespace(ns)
    view.put("k", "v1")
    assert view.delete("k") is True
    assert view.get("k") is None and not view.exists("k") and view.list() == []
    (only,) = view.history("k")
    assert only.content == "v1" and "deleted_at" in only.meta and "superseded_at" not in only.meta
    assert view.delete("k") is False  # nothing current: nothing more to mark
    assert view.create("k", "v2") is True  # the key is free again
    history = view.history("k")
    assert _contents(history) == ["v1", "v2"]
    assert "deleted_at" in history[0].meta and "superseded_at" not in history[0].meta
    assert not {"deleted_at", "superseded_at"} & set(history[1].meta)
    _assert_chain(history)


def test_reads_and_listings_are_not_versions(make_store: MakeStore, backend: Any, ns: str) -> None:
    view = make_store(backend, versioned=[ns]).namespace(ns)
    view.put("k", "v")
    for _ in range(3):
        assert view.get("k").content == "v"
    assert [listed.path for listed in view.list()] == ["k"]
    assert view.exists("k") and list(view.entries()) == ["k"]
    assert _contents(view.history("k")) == ["v"]


def test_compare_and_swap_sees_every_version(make_store: MakeStore, backend: Any, ns: str) -> None:
    view = make_store(backend, versioned=[ns]).namespace(ns)
    view.put("k", "0")
    found = backend.read_versioned(ns, "k")
    assert found is not None
    _, token = found
    view.put("k", "1")  # another writer gets in first
    assert backend.replace_if(ns, "k", StoredEntry("lost"), token) is False
    assert view.update("k", lambda e: (str(int(e.content) + 1), None)).content == "2"
    assert _contents(view.history("k")) == ["0", "1", "2"]


def test_restore_is_deletes_and_writes(make_store: MakeStore, backend: Any, ns: str) -> None:
    view = make_store(backend, versioned=[ns]).namespace(ns)
    view.put("keep", "k")
    saved = view.snapshot()
    view.put("keep", "changed")
    view.put("extra", "e")
    view.restore(saved)
    assert {path: entry.content for path, entry in view.entries().items()} == {"keep": "k"}
    keep = view.history("keep")
    assert _contents(keep)[:2] == ["k", "changed"] and keep[-1].content == "k"
    assert not {"deleted_at", "superseded_at"} & set(keep[-1].meta)
    (extra,) = view.history("extra")
    assert extra.content == "e" and "deleted_at" in extra.meta


def test_entries_already_there_become_the_first_version(
    make_store: MakeStore, backend: Any
) -> None:
    plain = make_store(backend).namespace("facts")
    plain.put("old", "written before", {"n": 1})
    assert not plain.supports("history")
    with pytest.raises(StoreCapabilityError) as info:
        plain.history("old")
    assert info.value.missing == ["history"] and "versioned=['facts']" in str(info.value)

    view = make_store(backend, versioned=["facts"]).namespace("facts")
    assert [listed.path for listed in view.list()] == ["old"]
    view.put("old", "written after")
    history = view.history("old")
    assert _contents(history) == ["written before", "written after"]
    assert history[0].meta["n"] == 1
    _assert_chain(history)


def test_other_namespaces_stay_unversioned(make_store: MakeStore, backend: Any) -> None:
    store = make_store(backend, versioned=["facts"])
    assert store.versioned >= {"facts"}
    store.namespace("facts").put("k", "v")
    store.namespace("scratch").put("k", "v")
    assert not store.namespace("scratch").supports("history")
    with pytest.raises(StoreCapabilityError):
        store.namespace("scratch").history("k")


def test_the_declaration_and_the_versions_survive_a_reopen(reopen: Callable[[], Any]) -> None:
    first = reopen()
    first.keep_versions("facts")
    first.write("facts", "k", StoredEntry("v1"))
    first.write("facts", "k", StoredEntry("v2"))
    first.delete("facts", "k")
    first.write("facts", "other/deep", StoredEntry("kept"))
    again = reopen()  # told nothing: the storage remembers which namespaces keep versions
    assert [listed.path for listed in again.list("facts")] == ["other/deep"]  # its first call
    assert again.supports("history", "facts") and not again.supports("history", "notes")
    history = again.history("facts", "k")
    assert _contents(history) == ["v1", "v2"] and "deleted_at" in history[1].meta
    again.write("facts", "k", StoredEntry("v3"))
    assert _contents(Store(again).namespace("facts").history("k")) == ["v1", "v2", "v3"]


def test_memory_history_is_the_same_on_every_backend(
    make_store: MakeStore, backend: Any, clock: Any
) -> None:
    """`Memory` declares its namespace versioned; set, update, delete and set again read back
    alike everywhere (values, update counts, descriptions, deletion)."""
    store = make_store(backend)
    memory: Any = (
        Memory(store)
        if isinstance(store, Store)
        else Blocking(AsyncMemory(store._target), store._loop)  # the async API, awaited
    )
    assert memory.supports_history()
    memory.set("goal", "ship v1")
    clock.advance(1)
    memory.set("goal", "ship v2", description="the objective")
    assert memory.delete("goal") is True
    clock.advance(1)
    memory.set("goal", "ship v3")
    versions = memory.history("goal")
    assert [v.value for v in versions] == ["ship v1", "ship v2", "ship v3"]
    assert [v.update_count for v in versions] == [1, 2, 1]
    assert [v.description for v in versions] == [None, "the objective", None]
    assert memory.get("goal").value == "ship v3"


class _NoVersions(Minimal):
    """A custom backend declaring capabilities, `keep_versions` and `history` not among them."""

    def supports(self, capability: str, ns: str) -> bool:
        return capability in ("read_all",) and callable(getattr(self, capability, None))

    def read_all(self, ns: str, prefix: str = "") -> dict[str, StoredEntry]:
        return {e.path: self.read(ns, e.path) for e in self.list(ns, prefix)}  # type: ignore[misc]


@pytest.mark.parametrize("make", [Minimal, _NoVersions])
def test_a_backend_without_versions_says_so_from_the_memory_api(make: type[Minimal]) -> None:
    memory = Memory(Store(make(InMemoryBackend())))
    memory.set("goal", "ship v1")  # memory still works: only its history is missing
    memory.set("goal", "ship v2")
    assert memory.get("goal").value == "ship v2"
    assert memory.supports_history() is False
    with pytest.raises(StoreCapabilityError) as info:
        memory.history("goal")
    assert info.value.namespace == "memory"
    assert info.value.missing == ["keep_versions", "history"]
    assert "keeps no versions" in str(info.value)
    with pytest.raises(StoreCapabilityError) as declared:
        Store(make(InMemoryBackend()), versioned=["memory"])  # asked for, so refused at once
    assert declared.value.missing == ["keep_versions", "history"]
