"""`FileSystemBackend` removes its own stale temporary files when it opens, and nothing else."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from contextchef.store import StoredEntry
from contextchef.store.backends.filesystem import FileSystemBackend
from contextchef.store.backends.filesystem.sweep import DEAD_GRACE_S, GRACE_S, writer_gone


def test_only_our_old_temp_files_are_swept(tmp_path: Path) -> None:
    root = tmp_path / "store"
    deep = root / "notes" / "a" / "b"
    deep.mkdir(parents=True)
    old = time.time() - GRACE_S - 60
    stale = deep / ".tmp_1234_deadbeef_7"
    fresh = deep / ".tmp_1234_deadbeef_8"
    foreign = [deep / ".tmp_upload", root / "notes" / "x.tmp", deep / ".tmp_1_zz_2"]
    kept_link = deep / ".tmp_99_abcd_1"
    for path in (stale, fresh, *foreign):
        path.write_text("partial")
    os.symlink(foreign[0], kept_link)
    for path in (stale, *foreign):
        os.utime(path, (old, old))
    os.utime(kept_link, (old, old), follow_symlinks=False)

    FileSystemBackend(root)

    assert not stale.exists()
    assert fresh.exists() and all(p.exists() for p in foreign)
    assert kept_link.is_symlink()  # a link is never a temp file of ours


def test_opening_a_missing_root_is_fine(tmp_path: Path) -> None:
    backend = FileSystemBackend(tmp_path / "not-yet")
    assert not (tmp_path / "not-yet").exists()
    assert backend.list("notes") == []


def _dead_pid() -> int:
    """The pid of a process that has exited (and been reaped)."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


@pytest.mark.skipif(os.name != "posix", reason="a pid is only probed on POSIX")
def test_temp_files_of_dead_writers_go_after_a_few_seconds(tmp_path: Path) -> None:
    root = tmp_path / "store"
    deep = root / "notes" / "a"
    deep.mkdir(parents=True)
    dead, alive = _dead_pid(), os.getppid()
    aged = time.time() - DEAD_GRACE_S - 5
    torn = deep / f".tmp_{dead}_deadbeef_0"
    in_flight = deep / f".tmp_{dead}_deadbeef_1"  # too young: maybe another machine's write
    live = deep / f".tmp_{alive}_deadbeef_2"  # its writer still runs (or its pid was reused)
    own = deep / f".tmp_{os.getpid()}_deadbeef_3"
    for path in (torn, in_flight, live, own):
        path.write_text("partial")
    for path in (torn, live, own):
        os.utime(path, (aged, aged))

    FileSystemBackend(root)

    assert not torn.exists()
    assert in_flight.exists() and live.exists() and own.exists()


def test_writer_liveness(tmp_path: Path) -> None:
    assert writer_gone(os.getpid()) is False
    assert writer_gone(0) is False
    if os.name == "posix":
        assert writer_gone(_dead_pid()) is True
        assert writer_gone(os.getppid()) is False


def test_a_killed_create_leaves_nothing_after_the_next_open(tmp_path: Path) -> None:
    """A writer killed inside `create`, between linking its temporary file to the entry's name
    and unlinking it, leaves the entry whole and a second name for it; the sweep removes that
    name and the entry reads as before."""
    root = tmp_path / "store"
    FileSystemBackend(root).write("notes", "a.md", StoredEntry("a"))
    leftover = root / "notes" / ".tmp_123_abcd_0"
    os.link(root / "notes" / "a.md", leftover)
    old = time.time() - GRACE_S - 1
    os.utime(leftover, (old, old))
    reopened = FileSystemBackend(root)
    assert not leftover.exists()
    assert (root / "notes" / "a.md").stat().st_nlink == 1
    assert reopened.read("notes", "a.md").content == "a"
