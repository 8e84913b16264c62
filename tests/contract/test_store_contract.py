"""What a user relies on from `Store` / `AsyncStore`, on every backend, through both APIs.

Tests taking `ns` run in `notes` and in `memory` (which SQLite keeps versioned, apart).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

import pytest

from contextchef.errors import ConfigError, InvalidPathError, StoreCapabilityError, StoreError
from contextchef.store import Store, StoredEntry
from tests.contract.helpers import Clock, FailingDeletes, Minimal, Spy

UNICODE = "Plan — «quoted» ✓ 日本語 🌍\n\ttab \x01 ctrl \u2028"


def test_put_get_round_trip(store: Any, clock: Clock) -> None:
    notes = store.namespace("notes")
    result = notes.put("plan.md", UNICODE, {"tag": "plan", "bytes": 1, "accessed_at": 5})
    assert result == ("plan.md", "context://notes/plan.md")
    assert (result.path, result.uri) == ("plan.md", "context://notes/plan.md")
    got = notes.get("plan.md")
    assert got.content == UNICODE
    assert got.meta["tag"] == "plan"
    assert got.meta["bytes"] == len(UNICODE.encode("utf-8"))  # derived, never the caller's
    assert got.meta["created_at"] == pytest.approx(clock.now, abs=1e-6)
    assert got.meta["updated_at"] == pytest.approx(clock.now, abs=1e-6)
    assert notes.get("missing.md") is None


def test_put_keeps_given_times(store: Any, ns: str) -> None:
    notes = store.namespace(ns)
    notes.put("a.md", "a", {"created_at": 1_600_000_000.5, "updated_at": 1_650_000_000})
    got = notes.get("a.md")
    assert got.meta["created_at"] == pytest.approx(1_600_000_000.5, abs=1e-6)
    assert got.meta["updated_at"] == pytest.approx(1_650_000_000, abs=1e-6)


def test_content_addressed_put_is_idempotent(store: Any) -> None:
    vfs = store.namespace("vfs")
    content = "a large tool output\n" * 50
    digest = hashlib.sha256(content.encode()).hexdigest()[:16]
    first = vfs.put_content(content, meta={"tool": "grep"})
    assert first.path == f"vfs_{digest}.txt"
    assert first.uri == f"context://vfs/vfs_{digest}.txt"
    assert vfs.content_path(content) == first.path
    assert vfs.put_content(content) == first
    assert [item.path for item in vfs.list()] == [first.path]
    assert vfs.get(first.path).content == content
    assert store.namespace("notes").put_content(content).path == f"notes_{digest}.txt"


def test_append(store: Any, clock: Clock, ns: str) -> None:
    notes = store.namespace(ns)
    assert notes.append("log.txt", "one\n") == ("log.txt", f"context://{ns}/log.txt")
    notes.append("log.txt", "two\n")
    assert notes.get("log.txt").content == "one\ntwo\n"
    created = notes.get("log.txt").meta["created_at"]
    clock.advance(10)
    notes.append("log.txt", "three\n", {"kind": "log"})
    got = notes.get("log.txt")
    assert got.content == "one\ntwo\nthree\n"
    assert got.meta["kind"] == "log"
    assert got.meta["created_at"] == pytest.approx(created, abs=1e-6)
    assert got.meta["updated_at"] == pytest.approx(clock.now, abs=1e-6)
    assert got.meta["bytes"] == len(got.content)


def test_delete(store: Any, ns: str) -> None:
    notes = store.namespace(ns)
    notes.put("dir/a.md", "a")
    assert notes.exists("dir/a.md") is True
    assert notes.delete("dir/a.md") is True
    assert notes.delete("dir/a.md") is False
    assert notes.delete("never.md") is False
    assert notes.get("dir/a.md") is None
    assert notes.exists("dir/a.md") is False


def test_list_and_entries_are_sorted_and_recursive(store: Any, ns: str) -> None:
    notes = store.namespace(ns)
    for path in ("zeta.md", "dir/sub/b.md", "alpha.md", "dir/a.md", "10.md", "9.md"):
        notes.put(path, f"content {path}")
    expected = ["10.md", "9.md", "alpha.md", "dir/a.md", "dir/sub/b.md", "zeta.md"]
    assert [item.path for item in notes.list()] == expected
    entries = notes.entries()
    assert list(entries) == expected
    assert entries["dir/sub/b.md"].content == "content dir/sub/b.md"
    assert [item.path for item in notes.list("dir/")] == ["dir/a.md", "dir/sub/b.md"]
    assert list(notes.entries("dir/sub/")) == ["dir/sub/b.md"]
    assert [item.path for item in notes.list("al")] == ["alpha.md"]
    assert notes.list("nothing/") == []


def test_directory_paths_are_not_entries(store: Any, ns: str) -> None:
    notes = store.namespace(ns)
    notes.put("dir/a.md", "a")
    for directory in ("dir/", "dir/sub/"):
        with pytest.raises(InvalidPathError, match="directory"):
            notes.get(directory)
        with pytest.raises(InvalidPathError):
            notes.put(directory, "x")
    assert notes.exists("dir/a.md")
    # A directory's name without the slash is not an entry either: reading it finds nothing.
    assert notes.get("dir") is None
    assert notes.exists("dir") is False


def test_search(store: Any, ns: str) -> None:
    notes = store.namespace(ns)
    notes.put("a.md", "The PLAN is to read the failing test, then plan again.")
    notes.put("dir/b.md", "nothing to see")
    notes.put("dir/c.md", "a plan")
    if not store.supports("search", ns):
        with pytest.raises(StoreCapabilityError):
            notes.search("plan")
        return
    hits = notes.search("plan")
    assert sorted(hit.path for hit in hits) == ["a.md", "dir/c.md"]  # rank order is the backend's
    by_path = {hit.path: hit for hit in hits}
    assert "PLAN" in (by_path["a.md"].snippet or "")
    assert hits[0].score >= hits[1].score
    assert [hit.path for hit in notes.search("PLAN", prefix="dir/")] == ["dir/c.md"]
    assert len(notes.search("plan", limit=1)) == 1
    assert notes.search("absent") == []
    with pytest.raises(ConfigError):
        notes.search("")


def test_namespaces_are_isolated(store: Any) -> None:
    store.namespace("notes").put("same.md", "notes")
    store.namespace("memory").put("same.md", "memory")
    assert store.namespace("notes").get("same.md").content == "notes"
    store.namespace("notes").delete("same.md")
    assert store.namespace("memory").get("same.md").content == "memory"
    assert [item.path for item in store.namespace("notes").list()] == []


BAD_PATHS = [
    "",
    "../x",
    "a/../b",
    "./a",
    "a//b",
    "/abs",
    "a\\b",
    "..\\..\\evil",
    "a\x00b",
    "a\nb",
    ".hidden",
    "dir/.tmp_1_x",
    "．．/x",
    "a／b",
    "x\u202etxt.exe",
    "a" * 256,
]


@pytest.mark.parametrize("bad", BAD_PATHS)
def test_bad_paths_never_reach_the_backend(
    make_store: Callable[..., Any], backend: Any, bad: str
) -> None:
    spy = Spy(backend)
    notes = make_store(spy).namespace("notes")
    for attempt in (
        lambda: notes.put(bad, "x"),
        lambda: notes.get(bad),
        lambda: notes.append(bad, "x"),
        lambda: notes.delete(bad),
        lambda: notes.exists(bad),
    ):
        with pytest.raises(InvalidPathError):
            attempt()
    assert spy.calls == []


@pytest.mark.parametrize(
    "bad", ["", ".", "..", "a/b", "a\\b", "a:b", "ctl\x07", ".hidden", "ｎｓ:x"]
)
def test_bad_namespaces_are_rejected(store: Any, bad: str) -> None:
    with pytest.raises(InvalidPathError) as info:
        store.namespace(bad)
    assert "namespace" in str(info.value)
    with pytest.raises(InvalidPathError):
        store.namespace(["not", "a", "str"])


def test_bad_content_and_meta_have_typed_errors(store: Any) -> None:
    notes = store.namespace("notes")
    with pytest.raises(StoreError, match="surrogate"):
        notes.put("a.md", "broken \ud800 text")
    with pytest.raises(ConfigError):
        notes.put("a.md", 42)
    with pytest.raises(ConfigError):
        notes.put("a.md", "x", {"when": object()})
    with pytest.raises(ConfigError):
        notes.put("a.md", "x", {"n": float("nan")})
    with pytest.raises(ConfigError):
        notes.put("a.md", "x", {"created_at": "yesterday"})
    assert notes.list() == []


def test_capabilities_missing_from_a_minimal_backend(
    make_store: Callable[..., Any], backend: Any
) -> None:
    store = make_store(Minimal(backend))
    notes = store.namespace("notes")
    notes.put("a.md", "alpha")
    for capability in ("search", "snapshot", "restore", "append", "exists", "touch"):
        assert notes.supports(capability) is False
    with pytest.raises(StoreCapabilityError) as info:
        notes.search("alpha")
    assert info.value.namespace == "notes"
    assert info.value.missing == ["search"]
    assert "search" in str(info.value) and "notes" in str(info.value)
    with pytest.raises(StoreCapabilityError):
        notes.snapshot()
    with pytest.raises(StoreCapabilityError):
        notes.restore({})
    # Capabilities with a portable fallback keep working.
    notes.append("a.md", " beta")
    assert notes.get("a.md").content == "alpha beta"
    assert notes.exists("a.md") is True
    assert list(notes.entries()) == ["a.md"]
    assert notes.get_physical_path("a.md") is None
    with pytest.raises(ConfigError):
        notes.supports("teleport")


def test_snapshot_and_restore(store: Any, ns: str) -> None:
    notes = store.namespace(ns)
    if not (notes.supports("snapshot") and notes.supports("restore")):
        return
    notes.put("a.md", "a", {"tag": 1})
    notes.put("dir/b.md", "b")
    saved = notes.snapshot()
    assert list(saved) == ["a.md", "dir/b.md"]
    notes.put("a.md", "changed")
    notes.put("c.md", "c")
    notes.restore(saved)
    assert [item.path for item in notes.list()] == ["a.md", "dir/b.md"]
    assert notes.get("a.md").content == "a"
    assert notes.get("a.md").meta["tag"] == 1
    with pytest.raises(InvalidPathError):
        notes.restore({"../x": StoredEntry("x")})


def _fill(notes: Any, clock: Clock, paths: list[str], size: int = 10) -> None:
    for path in paths:
        clock.advance(1)
        notes.put(path, "x" * size)


def test_eviction_by_age_then_least_recently_used(
    make_store: Callable[..., Any], backend: Any, clock: Clock, ns: str
) -> None:
    store = make_store(backend, eviction={ns: {"max_age": 100, "max_files": 2}})
    notes = store.namespace(ns)
    _fill(notes, clock, ["old1.md", "old2.md"])
    clock.advance(200)
    _fill(notes, clock, ["a.md", "b.md", "c.md", "d.md"])
    clock.advance(1)
    notes.get("b.md")
    clock.advance(1)
    notes.get("a.md")
    report = store.cleanup(ns)
    assert [(item.path, item.reason) for item in report.evicted] == [
        ("old1.md", "max_age"),
        ("old2.md", "max_age"),
        ("c.md", "max_files"),
        ("d.md", "max_files"),
    ]
    assert report.failed == ()
    assert report.count("max_age") == 2
    assert report.evicted_bytes == 40
    assert [item.path for item in notes.list()] == ["a.md", "b.md"]
    assert store.cleanup(ns).evicted == ()


def test_eviction_by_bytes_and_overrides(store: Any, clock: Clock, ns: str) -> None:
    notes = store.namespace(ns)
    _fill(notes, clock, ["a.md", "b.md", "c.md"], size=100)
    notes.put("é.md", "é" * 50)  # 100 UTF-8 bytes, newest
    report = store.cleanup(ns, max_bytes=250)
    assert [(item.path, item.reason) for item in report.evicted] == [
        ("a.md", "max_bytes"),
        ("b.md", "max_bytes"),
    ]
    assert store.cleanup(ns, max_files=float("inf")).evicted == ()
    assert len(store.cleanup(ns, max_files=0).evicted) == 2
    assert notes.list() == []
    with pytest.raises(ConfigError):
        store.cleanup(ns, max_files=-1)


def test_failing_delete_is_reported_and_the_sweep_goes_on(
    make_store: Callable[..., Any], backend: Any, clock: Clock
) -> None:
    store = make_store(FailingDeletes(backend, {"a.md"}))
    notes = store.namespace("notes")
    _fill(notes, clock, ["a.md", "b.md", "c.md"])
    report = store.cleanup("notes", max_files=1)
    assert [failure.path for failure in report.failed] == ["a.md"]
    assert isinstance(report.failed[0].error, OSError)
    assert report.failed[0].reason == "max_files"
    assert [item.path for item in report.evicted] == ["b.md", "c.md"]
    assert [item.path for item in notes.list()] == ["a.md"]


def test_reopen_keeps_entries_and_access_times(
    make_store: Callable[..., Any], reopen: Callable[[], Any], clock: Clock, ns: str
) -> None:
    first = make_store(reopen())
    notes = first.namespace(ns)
    _fill(notes, clock, ["a.md", "b.md", "c.md"])
    clock.advance(10)
    notes.get("a.md")
    first.flush()  # a read time waits in memory until the next write, flush or close
    assert reopen().read(ns, "b.md").content == "x" * 10  # a raw read does not touch
    again = make_store(reopen())
    clock.advance(10)
    assert again.namespace(ns).get("c.md").content == "x" * 10
    again.flush()
    third = make_store(reopen())
    report = third.cleanup(ns, max_files=2)
    assert [item.path for item in report.evicted] == ["b.md"]


def test_store_of_and_uris(backend: Any) -> None:
    store = Store(backend)
    assert Store.of(store) is store
    assert Store.of(backend).backend is backend
    assert store.namespace("notes") is store.namespace("notes")
    assert store.namespace("notes").uri("dir/a.md") == "context://notes/dir/a.md"
    assert Store.uri("notes", "a.md") == "context://notes/a.md"
    assert Store.parse_uri("context://notes/dir/a.md") == ("notes", "dir/a.md")
