"""The `transact` capability (an atomic read-modify-write of a few entries) and the store's
edits built on it, on every backend, in a plain and a versioned namespace.

The races across processes are in tests/store/test_edit_races.py.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

import pytest

from contextchef.store import Store, StoredEntry
from tests.contract.helpers import Spy


def entry(content: str, **meta: Any) -> StoredEntry:
    return StoredEntry(
        content, {"created_at": 1_700_000_000.0, "updated_at": 1_700_000_001.0, **meta}
    )


class Refused(Exception):
    pass


def test_built_in_backends_claim_transact(backend: Any, ns: str) -> None:
    assert Store(backend).supports("transact", ns)


def test_transact_reads_writes_and_deletes_in_one_step(backend: Any, ns: str) -> None:
    backend.write(ns, "a.md", entry("A", tag="kept"))
    seen: list[dict[str, Any]] = []

    def change(current: Mapping[str, StoredEntry | None]) -> dict[str, StoredEntry | None]:
        seen.append({path: None if e is None else e.content for path, e in current.items()})
        old = current["a.md"]
        assert old is not None
        return {"b.md": entry(old.content + "!", tag=old.meta["tag"]), "a.md": None}

    written = backend.transact(ns, ("a.md", "b.md"), change)
    assert seen == [{"a.md": "A", "b.md": None}]
    assert set(written) == {"a.md", "b.md"}
    assert backend.read(ns, "a.md") is None
    moved = backend.read(ns, "b.md")
    assert (moved.content, moved.meta["tag"]) == ("A!", "kept")


def test_transact_leaves_unnamed_paths_alone_and_creates_missing_ones(
    backend: Any, ns: str
) -> None:
    backend.write(ns, "keep.md", entry("same"))
    backend.transact(ns, ("keep.md", "new.md"), lambda current: {"new.md": entry("fresh")})
    assert backend.read(ns, "keep.md").content == "same"
    assert backend.read(ns, "new.md").content == "fresh"


def test_a_raising_change_writes_nothing(backend: Any, ns: str) -> None:
    backend.write(ns, "a.md", entry("A"))

    def change(current: Mapping[str, StoredEntry | None]) -> dict[str, StoredEntry | None]:
        raise Refused("the text to replace is gone")

    with pytest.raises(Refused):
        backend.transact(ns, ("a.md", "b.md"), change)
    assert backend.read(ns, "a.md").content == "A"
    assert backend.read(ns, "b.md") is None
    # The backend is usable afterwards (no transaction or lock left behind).
    backend.transact(ns, ("a.md",), lambda current: {"a.md": entry("B")})
    assert backend.read(ns, "a.md").content == "B"


def test_transact_records_versions(backend: Any) -> None:
    backend.write("memory", "fact", entry("v1"))
    backend.transact("memory", ("fact",), lambda current: {"fact": entry("v2")})
    backend.transact("memory", ("fact", "moved"), lambda c: {"moved": c["fact"], "fact": None})
    assert [v.content for v in backend.history("memory", "fact")] == ["v1", "v2"]
    assert "deleted_at" in backend.history("memory", "fact")[-1].meta
    assert [v.content for v in backend.history("memory", "moved")] == ["v2"]


def test_store_update_is_one_transaction(make_store: Any, backend: Any, ns: str) -> None:
    spy = Spy(backend)
    view = make_store(spy).namespace(ns)
    view.put("log.md", "a\n", {"tag": "t"})
    calls = 0

    def change(current: StoredEntry) -> tuple[str, dict[str, Any]]:
        nonlocal calls
        calls += 1
        return current.content + "b\n", dict(current.meta)

    assert view.update("log.md", change).content == "a\nb\n"
    assert calls == 1
    assert "transact" in spy.calls and "replace_if" not in spy.calls
    got = view.get("log.md")
    assert (got.content, got.meta["tag"]) == ("a\nb\n", "t")
    assert view.update("missing.md", change) is None
    assert calls == 1


def test_store_update_refused_by_its_change_writes_nothing(store: Any, ns: str) -> None:
    view = store.namespace(ns)
    view.put("a.md", "text")

    def change(current: StoredEntry) -> tuple[str, None]:
        raise Refused("gone")

    with pytest.raises(Refused):
        view.update("a.md", change)
    assert view.get("a.md").content == "text"


def test_append_with_meta_merges_in_one_transaction(store: Any, ns: str) -> None:
    view = store.namespace(ns)
    view.put("log.md", "a\n", {"tag": "t"})
    view.append("log.md", "b\n", {"more": 1})
    got = view.get("log.md")
    assert (got.content, got.meta["tag"], got.meta["more"]) == ("a\nb\n", "t", 1)


def test_threads_editing_one_entry_queue_and_lose_nothing(backend: Any, ns: str) -> None:
    """8 threads × 15 increments of one entry through one `Store`: every edit lands."""
    view = Store(backend).namespace(ns)
    view.put("counter", "0")
    errors: list[BaseException] = []

    def work() -> None:
        try:
            for _ in range(15):
                view.update("counter", lambda e: (str(int(e.content) + 1), None))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert view.get("counter").content == str(8 * 15)
