"""Removing the temporary files a crashed writer left behind, when a backend opens.

An entry is written to `.tmp_<pid>_<token>_<n>` in its directory and renamed over its name; a
process killed between the two leaves the temporary file. Listing already ignores it, but it
takes room for ever. `sweep_temp_files` removes such files when a `FileSystemBackend` opens:
only names of exactly that pattern (nothing else in the tree is ever touched), only regular
files (never a link), and only those not modified for `GRACE_S` (one hour), so a write in
flight in another process (which takes milliseconds) is never disturbed. The walk never
follows a symbolic link, and an error on one file or directory skips it: the sweep is a
courtesy and never makes opening fail.
"""

from __future__ import annotations

import logging
import os
import re
import stat
import time
from pathlib import Path

__all__ = ["GRACE_S", "TEMP_NAME", "sweep_temp_files"]

logger = logging.getLogger("contextchef.store.backends.filesystem.sweep")

TEMP_NAME = re.compile(r"\.tmp_\d+_[0-9a-f]+_\d+")
"""The names `FileSystemBackend.write` gives its temporary files (matched in full)."""

GRACE_S = 3600.0
"""A temporary file younger than this may belong to a write in flight; it is left alone."""


def sweep_temp_files(root: Path, *, grace: float = GRACE_S, now: float | None = None) -> int:
    """Remove our stale temporary files anywhere under `root`; return how many went."""
    cutoff = (time.time() if now is None else now) - grace
    removed = 0
    try:
        walk = os.fwalk(root, follow_symlinks=False)
        for _, _, files, dfd in walk:
            for name in files:
                if TEMP_NAME.fullmatch(name) and _remove_if_stale(dfd, name, cutoff):
                    removed += 1
    except OSError as exc:  # the root itself vanished or is unreadable: nothing to sweep
        logger.debug("temp-file sweep of %s stopped: %s", root, exc)
    if removed:
        logger.info("removed %d stale temporary file(s) under %s", removed, root)
    return removed


def _remove_if_stale(dfd: int, name: str, cutoff: float) -> bool:
    try:
        st = os.stat(name, dir_fd=dfd, follow_symlinks=False)
        if not stat.S_ISREG(st.st_mode) or st.st_mtime > cutoff:
            return False
        os.unlink(name, dir_fd=dfd)
    except OSError:
        return False
    return True
