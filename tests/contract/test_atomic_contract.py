"""The atomic capabilities (`create`, `read_versioned`, `replace_if`; `transact` in
test_transact_contract.py) and the store flows built on them (`create`, `update`), on every
backend that claims them, through every store API.

Single-process here; the races between processes and threads are in
`tests/store/test_races.py`.
"""

from __future__ import annotations

from typing import Any

import pytest

from contextchef.errors import StoreConflictError
from contextchef.store import Store, StoredEntry
from contextchef.store.core import CAS_ATTEMPTS
from tests.contract.helpers import CompareAndSwapOnly, Minimal

ATOMIC = ("create", "read_versioned", "replace_if")


def entry(content: str, **meta: Any) -> StoredEntry:
    return StoredEntry(
        content, {"created_at": 1_700_000_000.0, "updated_at": 1_700_000_001.0, **meta}
    )


def test_built_in_backends_claim_the_atomic_capabilities(backend: Any, ns: str) -> None:
    store = Store(backend)
    assert all(store.supports(capability, ns) for capability in ATOMIC)


def test_create_only_when_absent(backend: Any, ns: str) -> None:
    assert backend.create(ns, "a/b.md", entry("first", tag=1)) is True
    assert backend.create(ns, "a/b.md", entry("second", tag=2)) is False
    got = backend.read(ns, "a/b.md")
    assert (got.content, got.meta["tag"]) == ("first", 1)
    assert backend.delete(ns, "a/b.md") is True
    assert backend.create(ns, "a/b.md", entry("third")) is True
    assert backend.read(ns, "a/b.md").content == "third"


def test_read_versioned_and_replace_if(backend: Any, ns: str) -> None:
    assert backend.read_versioned(ns, "x.md") is None
    backend.write(ns, "x.md", entry("one", tag="a"))
    found = backend.read_versioned(ns, "x.md")
    assert found is not None
    got, version = found
    assert (got.content, got.meta["tag"]) == ("one", "a")
    assert isinstance(version, str)
    if callable(getattr(backend, "touch", None)):
        backend.touch(ns, "x.md", 1_800_000_000.0)  # reads never invalidate a version
    backend.read(ns, "x.md")
    assert backend.read_versioned(ns, "x.md")[1] == version

    assert backend.replace_if(ns, "x.md", entry("two"), version) is True
    assert backend.read(ns, "x.md").content == "two"
    # The version moved on: the old token no longer swaps, and nothing is written.
    assert backend.replace_if(ns, "x.md", entry("three"), version) is False
    assert backend.read(ns, "x.md").content == "two"

    current = backend.read_versioned(ns, "x.md")[1]
    backend.write(ns, "x.md", entry("by someone else"))
    assert backend.replace_if(ns, "x.md", entry("lost"), current) is False
    assert backend.read(ns, "x.md").content == "by someone else"

    latest = backend.read_versioned(ns, "x.md")[1]
    backend.delete(ns, "x.md")
    assert backend.replace_if(ns, "x.md", entry("resurrected"), latest) is False
    assert backend.read(ns, "x.md") is None


def test_store_create(store: Any, ns: str) -> None:
    view = store.namespace(ns)
    assert view.create("plan.md", "mine", {"description": "d"}) is True
    assert view.create("plan.md", "theirs") is False
    got = view.get("plan.md")
    assert (got.content, got.meta["description"]) == ("mine", "d")


def test_store_update_applies_the_change(store: Any, ns: str) -> None:
    view = store.namespace(ns)
    assert view.update("none.md", lambda e: (e.content, None)) is None
    view.put("log.md", "a\n", {"tag": "t"})
    new = view.update("log.md", lambda e: (e.content + "b\n", dict(e.meta)))
    assert new is not None and new.content == "a\nb\n"
    got = view.get("log.md")
    assert (got.content, got.meta["tag"]) == ("a\nb\n", "t")


def test_store_update_retries_when_another_writer_gets_in_first(
    make_store: Any, backend: Any, ns: str
) -> None:
    # A backend without `transact` gets the compare-and-swap loop (see test_transact_contract
    # for the built-in backends, where the edit is one transaction and never retries).
    view = make_store(CompareAndSwapOnly(backend)).namespace(ns)
    view.put("log.md", "a\n")
    seen: list[str] = []

    def change(current: StoredEntry) -> tuple[str, None]:
        seen.append(current.content)
        if len(seen) == 1:  # a write lands between our read and our swap
            backend.write(ns, "log.md", entry(current.content + "other\n"))
        return current.content + "mine\n", None

    view.update("log.md", change)
    assert seen == ["a\n", "a\nother\n"]
    assert view.get("log.md").content == "a\nother\nmine\n"


def test_store_update_gives_up_with_a_typed_error(make_store: Any, backend: Any, ns: str) -> None:
    view = make_store(CompareAndSwapOnly(backend)).namespace(ns)
    view.put("hot.md", "0")
    calls = 0

    def change(current: StoredEntry) -> tuple[str, None]:
        nonlocal calls
        calls += 1
        backend.write(ns, "hot.md", entry(f"other {calls}"))
        return "mine", None

    with pytest.raises(StoreConflictError) as caught:
        view.update("hot.md", change)
    assert calls == CAS_ATTEMPTS
    assert (caught.value.namespace, caught.value.path) == (ns, "hot.md")
    assert view.get("hot.md").content == f"other {CAS_ATTEMPTS}"


def test_without_the_capabilities_the_flows_fall_back(backend: Any, ns: str) -> None:
    store = Store(Minimal(backend))
    assert not any(store.supports(capability, ns) for capability in ATOMIC)
    view = store.namespace(ns)
    assert view.create("a.md", "one") is True
    assert view.create("a.md", "two") is False
    assert view.update("a.md", lambda e: (e.content + "+", None)).content == "one+"
    assert view.get("a.md").content == "one+"
