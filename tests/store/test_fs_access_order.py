"""The filesystem backend keeps least-recently-read order across restarts (`.accessed` log).

Reads a fraction of a second apart, each flushed by a write, used to lose their order once the
process ended (a file read again within a second of its recorded read kept the older time).
The same operations must now evict the same entries after a reopen as the in-memory backend
evicts in-process.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest

from contextchef.store import FileSystemBackend, InMemoryBackend, Store, StoredEntry
from contextchef.store.backends.filesystem import access
from tests.contract.helpers import Clock

PATHS = ("a.md", "b.md", "c.md", "d.md")


def _play(backend: Any, clock: Clock, reads: str) -> Store:
    """Write every entry, then read in `reads` order (letters), 0.2 s apart, each read
    flushed by a write elsewhere (as an agent loop's writes do)."""
    store = Store(backend, clock=clock)
    notes = store.namespace("notes")
    for path in PATHS:
        notes.put(path, path * 4)
        clock.advance(1)
    clock.advance(10)
    for letter in reads:
        notes.get(f"{letter}.md")
        clock.advance(0.2)
        store.namespace("scratch").put("log", letter)  # a write: the read time is flushed
    return store


@pytest.mark.parametrize("reads", ["cabc", "dcba", "abcdcbad", "bbbbab", "dadcd"])
def test_eviction_after_a_restart_follows_the_order_of_reads(tmp_path: Path, reads: str) -> None:
    clock = Clock(time.time() + 1000)  # ahead of the files' own times
    _play(FileSystemBackend(tmp_path, fsync=False), clock, reads).close()
    reopened = Store(FileSystemBackend(tmp_path, fsync=False), clock=clock)
    evicted = [item.path for item in reopened.cleanup("notes", max_files=2).evicted]

    oracle = _play(InMemoryBackend(), Clock(time.time() + 1000), reads)  # one process
    expected = [item.path for item in oracle.cleanup("notes", max_files=2).evicted]
    assert evicted == expected
    assert len(evicted) == 2 and reads[-1] + ".md" not in evicted


def test_reads_are_logged_only_when_flushed_and_the_log_is_hidden(tmp_path: Path) -> None:
    clock = Clock(2_000_000_000.0)
    store = Store(FileSystemBackend(tmp_path, fsync=False), clock=clock)
    store.namespace("notes").put("a.md", "a")
    log = tmp_path / "notes" / access.LOG_NAME
    clock.advance(5)
    store.namespace("notes").get("a.md")
    assert not log.exists()  # reads never write
    store.flush()
    assert log.read_text() == '["a.md", 2000000005.0]\n'
    assert [item.path for item in store.namespace("notes").list()] == ["a.md"]
    listed = FileSystemBackend(tmp_path, fsync=False).list("notes")
    assert listed[0].meta["accessed_at"] == 2_000_000_005.0
    assert (
        FileSystemBackend(tmp_path, fsync=False).read("notes", "a.md").meta["accessed_at"]
        == 2_000_000_005.0
    )


def test_a_torn_line_and_foreign_lines_are_skipped(tmp_path: Path) -> None:
    backend = FileSystemBackend(tmp_path, fsync=False)
    backend.write("notes", "a.md", StoredEntry("a"))
    backend.write("notes", "b.md", StoredEntry("b"))
    backend.touch("notes", "a.md", 50.0)
    backend.touch("notes", "a.md", 40.0)  # an older time never wins
    log = tmp_path / "notes" / access.LOG_NAME
    with log.open("a") as handle:
        handle.write('"not a pair"\n[1, 2]\n["b.md", "x"]\n["b.md", 7')  # a crash mid-append
    times = {item.path: item.meta["accessed_at"] for item in backend.list("notes")}
    assert times["a.md"] == 50.0 and times["b.md"] != 7
    assert access.parse_log(log.read_bytes()) == {"a.md": 50.0}
    backend.touch("notes", "b.md", 60.0)  # the line after a torn one is a line of its own
    assert (
        FileSystemBackend(tmp_path, fsync=False).read("notes", "b.md").meta["accessed_at"] == 60.0
    )


def test_the_log_is_compacted_to_the_entries_still_present(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(access, "COMPACT_BYTES", 200)
    backend = FileSystemBackend(tmp_path, fsync=False)
    for path in PATHS:
        backend.write("notes", path, StoredEntry(path))
    backend.delete("notes", "d.md")
    log = tmp_path / "notes" / access.LOG_NAME
    with log.open("a") as handle:
        handle.write('["d.md", 1.0]\n')  # a read time of an entry deleted since
    for step in range(20):
        backend.touch("notes", PATHS[step % 3], 100.0 + step)
    assert log.stat().st_size <= 200 + 40
    assert access.parse_log(log.read_bytes()) == {"a.md": 118.0, "b.md": 119.0, "c.md": 117.0}
    assert not [name for name in os.listdir(log.parent) if name.startswith(".tmp_")]


@pytest.mark.skipif(not hasattr(os, "link"), reason="needs hard links")
def test_a_hard_linked_log_is_never_written(tmp_path: Path, caplog: Any) -> None:
    backend = FileSystemBackend(tmp_path / "store", fsync=False)
    backend.write("notes", "a.md", StoredEntry("a"))
    outside = tmp_path / "outside.txt"
    outside.write_text("precious\n")
    os.link(outside, tmp_path / "store" / "notes" / access.LOG_NAME)
    backend.touch("notes", "a.md", 5.0)
    assert outside.read_text() == "precious\n"
    assert "hard link" in caplog.text
    assert backend.list("notes")[0].meta["accessed_at"] != 5.0


def test_two_backends_over_one_root_share_the_read_times(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(access, "COMPACT_BYTES", 120)
    first = FileSystemBackend(tmp_path, fsync=False)
    second = FileSystemBackend(tmp_path, fsync=False)
    for path in PATHS:
        first.write("notes", path, StoredEntry(path))
    expected: dict[str, float] = {}
    for step in range(12):  # alternate writers; compaction happens on the way
        backend = (first, second)[step % 2]
        path = PATHS[step % len(PATHS)]
        backend.touch("notes", path, 10.0 + step)
        expected[path] = 10.0 + step
        for reader in (first, second):  # each sees every time logged so far, whoever wrote it
            times = {item.path: item.meta["accessed_at"] for item in reader.list("notes")}
            assert {p: times[p] for p in expected} == expected


def test_a_read_logged_before_an_entry_was_recreated_is_not_its_read(tmp_path: Path) -> None:
    """Deleting an entry leaves its line in the log until compaction: a new entry at the same
    path must not inherit that older read time (it would look least recently read)."""
    clock = Clock(time.time() - 1000)  # behind the files' own times, which a fresh entry reports
    store = Store(FileSystemBackend(tmp_path, fsync=False), clock=clock)
    notes = store.namespace("notes")
    notes.put("a.md", "old")
    notes.get("a.md")
    store.namespace("scratch").put("log", "x")  # flushes the read time
    notes.delete("a.md")
    clock.advance(100)
    notes.put("a.md", "new")
    store.close()
    reopened = Store(FileSystemBackend(tmp_path, fsync=False), clock=clock)
    entry = reopened.namespace("notes").get("a.md")
    assert entry is not None
    assert entry.meta["accessed_at"] >= entry.meta["created_at"]
