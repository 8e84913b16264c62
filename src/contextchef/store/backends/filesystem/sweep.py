"""Removing the temporary files a crashed writer left behind, when a backend opens.

An entry is written to `.tmp_<pid>_<token>_<n>` in its directory and renamed over its name; a
process killed between the two leaves the temporary file. Listing already ignores it, but it
takes room for ever. `sweep_temp_files` removes such files when a `FileSystemBackend` opens:
only names of exactly that pattern (nothing else in the tree is ever touched), only regular
files (never a link), and only stale ones:

- older than `DEAD_GRACE_S` (a few seconds) when the writer whose pid the name carries is gone
  from this machine (`os.kill(pid, 0)` raises `ProcessLookupError`): a write takes
  milliseconds, so a file that old from a dead writer was torn by its death;
- older than `GRACE_S` (one hour) whatever the pid says, since a pid alone cannot tell a live
  writer from a reused pid, nor a writer on another machine sharing the directory (a network
  filesystem) from a local process.

A writer on another machine whose pid happens to be free here could lose its temporary file
only if its write took longer than `DEAD_GRACE_S`; its rename then fails, and the write raises
rather than losing anything silently. Where a pid cannot be probed (Windows, where `os.kill`
would end the process), only the hour counts. The walk never follows a symbolic link, and an
error on one file or directory skips it: the sweep is a courtesy and never makes opening fail.
"""

from __future__ import annotations

import logging
import os
import re
import stat
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

__all__ = ["DEAD_GRACE_S", "GRACE_S", "TEMP_NAME", "sweep_temp_files", "writer_gone"]

logger = logging.getLogger("contextchef.store.backends.filesystem.sweep")

TEMP_NAME = re.compile(r"\.tmp_(\d+)_[0-9a-f]+_\d+")
"""The names `FileSystemBackend.write` gives its temporary files (matched in full); the group
is the writer's pid."""

GRACE_S = 3600.0
"""A temporary file younger than this may belong to a write in flight (whatever its pid); it is
left alone unless its writer is gone."""

DEAD_GRACE_S = 5.0
"""A temporary file whose writer process is gone is removed once it is this old."""

_CAN_PROBE = os.name == "posix"


def sweep_temp_files(
    root: Path,
    *,
    grace: float = GRACE_S,
    dead_grace: float = DEAD_GRACE_S,
    now: float | None = None,
    gone: Callable[[int], bool] | None = None,
) -> int:
    """Remove our stale temporary files anywhere under `root`; return how many went.

    `gone(pid)` says whether a writer is gone (default `writer_gone`)."""
    clock = time.time() if now is None else now
    cutoff, dead_cutoff = clock - grace, clock - dead_grace
    is_gone = writer_gone if gone is None else gone
    removed = 0
    try:
        walk = os.fwalk(root, follow_symlinks=False)
        for _, _, files, dfd in walk:
            for name in files:
                match = TEMP_NAME.fullmatch(name)
                if match is None:
                    continue
                stale = partial(_stale, int(match[1]), cutoff, dead_cutoff, is_gone)
                if _remove_if_stale(dfd, name, stale):
                    removed += 1
    except OSError as exc:  # the root itself vanished or is unreadable: nothing to sweep
        logger.debug("temp-file sweep of %s stopped: %s", root, exc)
    if removed:
        logger.info("removed %d stale temporary file(s) under %s", removed, root)
    return removed


def writer_gone(pid: int) -> bool:
    """Whether no process `pid` runs on this machine (False when that cannot be known)."""
    if not _CAN_PROBE or pid <= 0 or pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except (PermissionError, OverflowError, OSError):
        return False  # alive under another user, or not a pid this platform can probe
    return False


def _stale(
    pid: int, cutoff: float, dead_cutoff: float, gone: Callable[[int], bool], mtime: float
) -> bool:
    if mtime <= cutoff:
        return True
    return mtime <= dead_cutoff and gone(pid)


def _remove_if_stale(dfd: int, name: str, stale: Callable[[float], bool]) -> bool:
    try:
        st = os.stat(name, dir_fd=dfd, follow_symlinks=False)
        if not stat.S_ISREG(st.st_mode) or not stale(st.st_mtime):
            return False
        os.unlink(name, dir_fd=dfd)
    except OSError:
        return False
    return True
