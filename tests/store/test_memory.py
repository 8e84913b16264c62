"""InMemoryBackend specifics: isolation from callers' objects, thread safety, no persistence."""

from __future__ import annotations

import threading

import pytest

from contextchef.errors import EntryExistsError
from contextchef.store import InMemoryBackend, Store, StoredEntry, backend_supports


def test_callers_cannot_mutate_the_store() -> None:
    backend = InMemoryBackend()
    meta = {"tags": ["a"], "nested": {"k": 1}}
    backend.write("notes", "a", StoredEntry("x", meta))
    meta["tags"].append("b")
    meta["nested"]["k"] = 2
    got = backend.read("notes", "a")
    assert got is not None
    assert got.meta["tags"] == ["a"] and got.meta["nested"] == {"k": 1}
    with pytest.raises(TypeError):
        got.meta["tags"] = []  # type: ignore[index]
    saved = backend.snapshot("notes")
    saved["a"].meta["tags"].append("c")  # type: ignore[attr-defined]
    assert backend.read("notes", "a").meta["tags"] == ["a"]


def test_entry_and_directory_are_exclusive_like_on_disk() -> None:
    backend = InMemoryBackend()
    backend.write("notes", "a/b/c", StoredEntry("c"))
    for clash in ("a", "a/b"):
        with pytest.raises(EntryExistsError):
            backend.write("notes", clash, StoredEntry("x"))
    backend.write("notes", "x", StoredEntry("x"))
    with pytest.raises(EntryExistsError):
        backend.write("notes", "x/y", StoredEntry("y"))
    backend.delete("notes", "a/b/c")
    backend.write("notes", "a", StoredEntry("now an entry"))
    backend.restore("notes", {"d/e": StoredEntry("e")})
    backend.write("notes", "a", StoredEntry("fine after restore"))


def test_concurrent_appends_lose_nothing() -> None:
    notes = Store(InMemoryBackend()).namespace("notes")
    lines = [f"thread {t} line {n}\n" for t in range(8) for n in range(200)]

    def work(t: int) -> None:
        for n in range(200):
            notes.append("log.txt", f"thread {t} line {n}\n")

    threads = [threading.Thread(target=work, args=(t,)) for t in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    got = notes.get("log.txt").content
    assert sorted(got.splitlines(keepends=True)) == sorted(lines)


def test_read_times_live_in_the_store_not_the_backend() -> None:
    """The in-memory backend cannot persist access times; its Store remembers reads instead."""
    backend = InMemoryBackend()
    assert not backend_supports(backend, "touch", "notes")
    now = [1000.0]
    store = Store(backend, clock=lambda: now[0])
    notes = store.namespace("notes")
    for path in ("a", "b", "c"):
        now[0] += 1
        notes.put(path, path)
    now[0] += 1
    notes.get("a")
    assert store.cleanup("notes", max_files=1).paths == ["b", "c"]
