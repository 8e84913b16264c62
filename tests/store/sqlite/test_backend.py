"""The storage protocol on SQLiteBackend: round-trips, meta, listing, isolation, reopening."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contextchef.errors import StoreError
from contextchef.store.backend import CAPABILITIES, StorageBackend, StoredEntry, backend_supports
from contextchef.store.backends.sqlite import SQLiteBackend
from contextchef.store.backends.sqlite.backend import prefix_bounds


def test_is_a_storage_backend(backend: SQLiteBackend) -> None:
    assert isinstance(backend, StorageBackend)


def test_read_missing_is_none(backend: SQLiteBackend) -> None:
    assert backend.read("notes", "nope.md") is None
    assert not backend.exists("notes", "nope.md")


@pytest.mark.parametrize(
    "content",
    [
        "",
        "plain",
        "héllo wörld — ünïcödé 🍳 中文 𝔘",
        "line1\nline2\r\n\ttab\x00nul",
        "x" * 3_000_000,
    ],
    ids=["empty", "plain", "unicode", "control", "large"],
)
def test_content_round_trips(backend: SQLiteBackend, content: str) -> None:
    backend.write("notes", "a.md", StoredEntry(content))
    stored = backend.read("notes", "a.md")
    assert stored is not None
    assert stored.content == content
    assert stored.meta["bytes"] == len(content.encode("utf-8"))
    assert backend.exists("notes", "a.md")


def test_free_meta_round_trips_and_times_are_set(backend: SQLiteBackend) -> None:
    meta = {"tags": ["a", "ü"], "nested": {"k": [1, 2.5, None, True]}, "n": 3}
    backend.write("notes", "m.md", StoredEntry("body", meta))
    stored = backend.read("notes", "m.md")
    assert stored is not None
    assert {k: stored.meta[k] for k in meta} == meta
    assert isinstance(stored.meta["created_at"], float)
    assert stored.meta["updated_at"] >= stored.meta["created_at"]
    assert "accessed_at" not in stored.meta
    assert stored.bytes == 4


def test_given_times_are_kept_and_bytes_is_always_derived(backend: SQLiteBackend) -> None:
    meta = {"created_at": 100.0, "updated_at": 200.5, "accessed_at": 300, "bytes": 999}
    backend.write("notes", "t.md", StoredEntry("abc", meta))
    stored = backend.read("notes", "t.md")
    assert stored is not None
    assert (stored.created_at, stored.updated_at, stored.meta["accessed_at"]) == (100, 200.5, 300)
    assert stored.meta["bytes"] == 3


def test_overwrite_keeps_created_at_and_replaces_free_meta(backend: SQLiteBackend) -> None:
    backend.write("notes", "o.md", StoredEntry("one", {"created_at": 5.0, "old": 1}))
    backend.write("notes", "o.md", StoredEntry("two", {"new": 2}))
    stored = backend.read("notes", "o.md")
    assert stored is not None
    assert stored.content == "two"
    assert stored.created_at == 5.0
    assert "old" not in stored.meta and stored.meta["new"] == 2


def test_unserialisable_meta_is_a_store_error(backend: SQLiteBackend) -> None:
    with pytest.raises(StoreError):
        backend.write("notes", "bad.md", StoredEntry("x", {"obj": object()}))
    assert backend.read("notes", "bad.md") is None


def test_delete(backend: SQLiteBackend) -> None:
    backend.write("notes", "d.md", StoredEntry("x"))
    assert backend.delete("notes", "d.md") is True
    assert backend.read("notes", "d.md") is None
    assert backend.delete("notes", "d.md") is False
    assert backend.delete("notes", "never.md") is False


def test_list_by_prefix_with_nested_paths(backend: SQLiteBackend) -> None:
    for path in ["a/b/c.md", "a/b.md", "a/bz.md", "ab.md", "b/a.md", "a/%_.md"]:
        backend.write("vfs", path, StoredEntry(path))
    assert [e.path for e in backend.list("vfs")] == sorted(
        ["a/b/c.md", "a/b.md", "a/bz.md", "ab.md", "b/a.md", "a/%_.md"]
    )
    assert [e.path for e in backend.list("vfs", "a/")] == [
        "a/%_.md",
        "a/b.md",
        "a/b/c.md",
        "a/bz.md",
    ]
    assert [e.path for e in backend.list("vfs", "a/b/")] == ["a/b/c.md"]
    assert [e.path for e in backend.list("vfs", "a/%")] == ["a/%_.md"]
    assert backend.list("vfs", "zzz") == []
    listed = backend.list("vfs", "b/")[0]
    assert listed.meta["bytes"] == len("b/a.md")


_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=6)


@given(prefix=_TEXT, candidate=_TEXT)
def test_prefix_bounds_match_exactly_the_strings_with_that_prefix(
    prefix: str, candidate: str
) -> None:
    low, high = prefix_bounds(prefix)
    inside = low <= candidate and (high is None or candidate < high)
    assert inside == candidate.startswith(prefix)
    assert inside == (
        candidate.encode() >= low.encode() and (high is None or candidate.encode() < high.encode())
    )


@settings(max_examples=40, deadline=None)
@given(
    path=st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=40),
    content=st.text(st.characters(blacklist_categories=("Cs",)), max_size=200),
    meta=st.dictionaries(
        st.text(max_size=8).filter(lambda k: k not in ("created_at", "updated_at", "bytes")),
        st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(max_size=10),
        max_size=4,
    ),
)
def test_any_text_and_meta_round_trip(
    tmp_path_factory: pytest.TempPathFactory, path: str, content: str, meta: dict[str, object]
) -> None:
    meta = {k: v for k, v in meta.items() if k != "accessed_at"}
    db = tmp_path_factory.mktemp("rt") / "context.db"
    with SQLiteBackend(db, project="test:rt") as backend:
        backend.write("notes", path, StoredEntry(content, meta))
        stored = backend.read("notes", path)
        assert stored is not None and stored.content == content
        assert {k: stored.meta[k] for k in meta} == meta
        assert [e.path for e in backend.list("notes", path)] == [path]


def test_read_all_with_prefix(backend: SQLiteBackend) -> None:
    backend.write("notes", "x/1", StoredEntry("one", {"k": 1}))
    backend.write("notes", "x/2", StoredEntry("two"))
    backend.write("notes", "y/1", StoredEntry("three"))
    everything = backend.read_all("notes", "x/")
    assert sorted(everything) == ["x/1", "x/2"]
    assert everything["x/1"].content == "one" and everything["x/1"].meta["k"] == 1


def test_namespaces_are_isolated(backend: SQLiteBackend) -> None:
    backend.write("notes", "same.md", StoredEntry("in notes"))
    backend.write("vfs", "same.md", StoredEntry("in vfs"))
    assert backend.read("notes", "same.md") == StoredEntry(
        "in notes",
        backend.read("notes", "same.md").meta,  # type: ignore[union-attr]
    )
    assert backend.read("vfs", "same.md").content == "in vfs"  # type: ignore[union-attr]
    backend.delete("notes", "same.md")
    assert backend.exists("vfs", "same.md")
    assert [e.path for e in backend.list("archive")] == []


def test_projects_are_isolated_in_one_file(db_path: Path) -> None:
    with (
        SQLiteBackend(db_path, project="test:one") as one,
        SQLiteBackend(db_path, project="test:two") as two,
    ):
        one.write("notes", "n.md", StoredEntry("one's"))
        assert two.read("notes", "n.md") is None
        assert two.list("notes") == []
        assert two.search("notes", "one") == []


def test_reopen_and_read(db_path: Path) -> None:
    with SQLiteBackend(db_path, project="test:re") as first:
        first.write("memory", "m.md", StoredEntry("kept", {"k": "v"}))
    with SQLiteBackend(db_path, project="test:re") as second:
        stored = second.read("memory", "m.md")
    assert stored is not None and stored.content == "kept" and stored.meta["k"] == "v"


def test_append_creates_then_extends(backend: SQLiteBackend) -> None:
    backend.append("archive", "log.txt", "first ")
    backend.append("archive", "log.txt", "second ü")
    stored = backend.read("archive", "log.txt")
    assert stored is not None
    assert stored.content == "first second ü"
    assert stored.meta["bytes"] == len("first second ü".encode())
    assert [h.path for h in backend.search("archive", "second")] == ["log.txt"]


def test_snapshot_and_restore(backend: SQLiteBackend) -> None:
    backend.write("notes", "keep.md", StoredEntry("v1", {"created_at": 1.0, "k": 1}))
    backend.write("notes", "gone.md", StoredEntry("will vanish"))
    backend.write("vfs", "other.md", StoredEntry("untouched"))
    snap = backend.snapshot("notes")
    backend.write("notes", "keep.md", StoredEntry("v2"))
    backend.write("notes", "new.md", StoredEntry("added later"))
    backend.delete("notes", "gone.md")
    backend.restore("notes", snap)
    assert backend.read_all("notes") == snap
    assert backend.read("vfs", "other.md") is not None
    assert [h.path for h in backend.search("notes", "vanish")] == ["gone.md"]
    assert backend.search("notes", "added") == []


def test_touch_sets_accessed_at_only(backend: SQLiteBackend) -> None:
    backend.write("notes", "t.md", StoredEntry("text", {"updated_at": 10.0}))
    backend.touch("notes", "t.md", 1234.5)
    stored = backend.read("notes", "t.md")
    assert stored is not None
    assert stored.meta["accessed_at"] == 1234.5 and stored.updated_at == 10.0
    backend.write("notes", "t.md", StoredEntry("text 2"))
    assert backend.read("notes", "t.md").meta["accessed_at"] == 1234.5  # type: ignore[union-attr]
    backend.touch("notes", "missing.md", 1.0)
    assert not backend.exists("notes", "missing.md")


def test_capabilities(backend: SQLiteBackend) -> None:
    backend.keep_versions("memory")  # what `Memory` declares; notes stays unversioned
    for capability in CAPABILITIES:
        methods = ("put_vectors", "delete_vectors", "nearest") if capability == "vectors" else ()
        assert all(callable(getattr(backend, name)) for name in methods or (capability,))
        assert backend_supports(backend, capability, "memory") is (  # versioned: in Python
            capability not in ("get_physical_path", "read_recent_where")
        )
        expected = capability not in ("get_physical_path", "history")
        assert backend_supports(backend, capability, "notes") is expected
    assert backend.get_physical_path("notes", "x") is None


def test_batch_commits_together_or_not_at_all(backend: SQLiteBackend) -> None:
    with backend.batch():
        for i in range(5):
            backend.write("notes", f"b{i}", StoredEntry(str(i)))
        with backend.batch():
            backend.write("notes", "nested", StoredEntry("n"))
    assert len(backend.list("notes")) == 6
    with pytest.raises(RuntimeError), backend.batch():
        backend.write("notes", "rolled-back", StoredEntry("x"))
        backend.delete("notes", "b0")
        raise RuntimeError("abort the batch")
    assert backend.read("notes", "rolled-back") is None
    assert backend.exists("notes", "b0")


def test_threads_share_one_backend(backend: SQLiteBackend) -> None:
    def work(t: int) -> None:
        for i in range(50):
            backend.write("notes", f"t{t}/{i}", StoredEntry(f"{t}-{i}"))
            assert backend.read("notes", f"t{t}/{i}") is not None

    threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(backend.list("notes")) == 200


def test_surrogate_paths_are_a_store_error(backend: SQLiteBackend) -> None:
    with pytest.raises(StoreError):
        backend.write("notes", "bad\ud800", StoredEntry("x"))
