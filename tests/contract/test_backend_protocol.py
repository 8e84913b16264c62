"""The raw `StorageBackend` protocol, as every backend must honour it (no Store in between).

Tests taking `ns` run once per namespace of `NAMESPACES`: a backend may serve a namespace from
its own storage (SQLite keeps `memory` versioned in its own table) yet owes it the same contract.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from contextchef.errors import EntryExistsError
from contextchef.store import StorageBackend, Store, StoredEntry, backend_supports

UNICODE = "héllo wörld — 日本語 🌍 \u202fnbsp\ttab\nnewline \x00nul \u2028 سلام"
META: dict[str, Any] = {
    "tag": "plan",
    "priority": 2,
    "ratio": 0.25,
    "flag": True,
    "none": None,
    "nested": {"list": [1, "two", None, False], "empty": {}},
}


def entry(content: str, **meta: Any) -> StoredEntry:
    return StoredEntry(
        content, {"created_at": 1_700_000_000.0, "updated_at": 1_700_000_001.5, **meta}
    )


def test_is_a_storage_backend(backend: Any) -> None:
    assert isinstance(backend, StorageBackend)


def test_missing_entries(backend: Any, ns: str) -> None:
    assert backend.read(ns, "nothing.md") is None
    assert backend.delete(ns, "nothing.md") is False
    assert backend.list(ns) == []
    assert backend.list("never-used", "a/") == []


def test_round_trip_keeps_content_and_meta(backend: Any, ns: str) -> None:
    backend.write(ns, "a.md", entry(UNICODE, **META))
    got = backend.read(ns, "a.md")
    assert got is not None
    assert got.content == UNICODE
    for key, value in META.items():
        assert got.meta[key] == value
    assert got.meta["created_at"] == pytest.approx(1_700_000_000.0, abs=1e-6)
    assert got.meta["updated_at"] == pytest.approx(1_700_000_001.5, abs=1e-6)
    assert got.meta["bytes"] == len(UNICODE.encode("utf-8"))


def test_write_replaces(backend: Any, ns: str) -> None:
    backend.write(ns, "a.md", entry("one", v=1))
    backend.write(ns, "a.md", entry("two"))
    got = backend.read(ns, "a.md")
    assert got is not None
    assert got.content == "two"
    assert "v" not in got.meta


def test_list_prefix_nested(backend: Any, ns: str) -> None:
    for path in ("plan.md", "dir/a.md", "dir/sub/b.md", "dirt.md", "other/c.md"):
        backend.write(ns, path, entry(f"content of {path}"))
    assert {item.path for item in backend.list(ns)} == {
        "plan.md",
        "dir/a.md",
        "dir/sub/b.md",
        "dirt.md",
        "other/c.md",
    }
    assert {item.path for item in backend.list(ns, "dir/")} == {"dir/a.md", "dir/sub/b.md"}
    assert {item.path for item in backend.list(ns, "dir")} == {
        "dir/a.md",
        "dir/sub/b.md",
        "dirt.md",
    }
    assert {item.path for item in backend.list(ns, "dir/sub/")} == {"dir/sub/b.md"}
    listed = {item.path: item.meta for item in backend.list(ns, "other/")}
    assert listed["other/c.md"]["bytes"] == len(b"content of other/c.md")
    assert listed["other/c.md"]["created_at"] == pytest.approx(1_700_000_000.0, abs=1e-6)


def test_delete(backend: Any, ns: str) -> None:
    backend.write(ns, "dir/a.md", entry("x"))
    assert backend.delete(ns, "dir/a.md") is True
    assert backend.read(ns, "dir/a.md") is None
    assert backend.delete(ns, "dir/a.md") is False
    assert backend.list(ns) == []


def test_namespaces_are_isolated(backend: Any) -> None:
    backend.write("notes", "same", entry("in notes"))
    backend.write("memory", "same", entry("in memory"))
    assert backend.read("notes", "same").content == "in notes"
    assert backend.read("memory", "same").content == "in memory"
    backend.delete("notes", "same")
    assert backend.read("memory", "same") is not None
    assert [item.path for item in backend.list("memory")] == ["same"]


def test_entry_and_directory_never_silently_collide(backend: Any, ns: str) -> None:
    """A path used as entry and directory either works both ways or raises EntryExistsError."""
    backend.write(ns, "a", entry("file a"))
    try:
        backend.write(ns, "a/b", entry("file a/b"))
    except EntryExistsError:
        assert backend.read(ns, "a").content == "file a"
        assert backend.read(ns, "a/b") is None
    else:
        assert backend.read(ns, "a").content == "file a"
        assert backend.read(ns, "a/b").content == "file a/b"


def test_optional_capabilities_behave_when_present(backend: Any, ns: str) -> None:
    backend.write(ns, "a.md", entry("Alpha PLAN alpha"))
    backend.write(ns, "dir/b.md", entry("beta"))
    if backend_supports(backend, "read_all", ns):
        everything = backend.read_all(ns)
        assert set(everything) == {"a.md", "dir/b.md"}
        assert everything["dir/b.md"].content == "beta"
        assert set(backend.read_all(ns, "dir/")) == {"dir/b.md"}
    if backend_supports(backend, "exists", ns):
        assert backend.exists(ns, "a.md") is True
        assert backend.exists(ns, "dir") is False
        assert backend.exists(ns, "zzz") is False
    if backend_supports(backend, "append", ns):
        backend.append(ns, "log.txt", "one\n")
        backend.append(ns, "log.txt", "two\n")
        log = backend.read(ns, "log.txt")
        assert log.content == "one\ntwo\n"
        assert log.meta["bytes"] == 8
    if backend_supports(backend, "search", ns):
        hits = backend.search(ns, "plan")
        assert [hit.path for hit in hits] == ["a.md"]
        assert "PLAN" in (hits[0].snippet or "")
        assert backend.search(ns, "nowhere") == []
    if backend_supports(backend, "get_physical_path", ns):
        physical = backend.get_physical_path(ns, "a.md")
        assert physical is None or isinstance(physical, str)


def test_snapshot_restore_when_present(backend: Any, ns: str) -> None:
    if not (backend_supports(backend, "snapshot", ns) and backend_supports(backend, "restore", ns)):
        return
    backend.write(ns, "keep.md", entry("keep", tag="k"))
    backend.write(ns, "dir/x.md", entry("x"))
    saved = backend.snapshot(ns)
    backend.write(ns, "keep.md", entry("changed"))
    backend.write(ns, "new.md", entry("new"))
    backend.delete(ns, "dir/x.md")
    backend.restore(ns, saved)
    assert {item.path for item in backend.list(ns)} == {"keep.md", "dir/x.md"}
    assert backend.read(ns, "keep.md").content == "keep"
    assert backend.read(ns, "keep.md").meta["tag"] == "k"


def test_touch_is_reported_by_list_when_present(backend: Any, ns: str) -> None:
    if not backend_supports(backend, "touch", ns):
        return
    backend.write(ns, "a.md", entry("a"))
    backend.touch(ns, "a.md", 1_800_000_000.25)
    backend.touch(ns, "missing.md", 1_800_000_000.25)  # silently nothing
    (listed,) = backend.list(ns)
    assert listed.meta["accessed_at"] == pytest.approx(1_800_000_000.25, abs=1e-6)


def test_large_content_round_trips(backend: Any) -> None:
    """10 MB through a Store, once per backend, in a json and a raw-format namespace."""
    store = Store(backend)
    big = ("0123456789abcdef" * 64 + "é\n") * 10_000
    store.namespace("notes").put("big.txt", big)
    store.namespace("vfs").put("vfs_big.txt", big)
    assert store.namespace("notes").get("big.txt").content == big
    assert store.namespace("vfs").get("vfs_big.txt").content == big


def test_reopen_and_read(reopen: Callable[[], Any], ns: str) -> None:
    backend = reopen()
    backend.write(ns, "dir/a.md", entry(UNICODE, **META))
    backend.write("vfs", "vfs_0123456789abcdef.txt", entry("offloaded"))
    again = reopen()
    got = again.read(ns, "dir/a.md")
    assert got is not None
    assert got.content == UNICODE
    assert got.meta["nested"] == META["nested"]
    assert again.read("vfs", "vfs_0123456789abcdef.txt").content == "offloaded"
    assert {item.path for item in again.list(ns)} == {"dir/a.md"}
