"""Which processes have a file open, told by the file's identity (device and inode), not its name.

Maintenance must see every user of a database, whatever name it was opened under: a symlink
resolves to the same name (locking.py resolves it), but a hard link is a second name for the
same inode, with its own `<name>.lock`. So, before it replaces or rewrites a file, maintenance
also asks the kernel who has *the inode* open: on Linux, every `/proc/<pid>/fd/<n>` that stats to
the same device and inode. SQLite keeps the database file open for a connection's whole life,
so an idle backend shows up too.

Best effort, and said so: processes of other users cannot be inspected (their `fd` directories
are unreadable), and platforms without `/proc` report None ("cannot tell"), on which callers
fall back to refusing files that have several names.

`flock_holders` reads `/proc/locks` for the processes holding an `flock` on a file (the lock
file), matched by device and inode too.
"""

from __future__ import annotations

import os
from collections.abc import Collection
from pathlib import Path

__all__ = ["FileId", "file_id", "flock_holders", "openers"]

FileId = tuple[int, int]
"""(st_dev, st_ino): a file's identity, shared by all its names."""

_PROC = Path("/proc")
_NOT_FILES = ("socket:", "pipe:", "anon_inode:", "/dev/", "/proc/", "/sys/")


def file_id(path: Path) -> FileId | None:
    """The identity of the file `path` names (symlinks followed); None when there is none."""
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


def _pids() -> list[int]:
    try:
        return [int(entry.name) for entry in os.scandir(_PROC) if entry.name.isdigit()]
    except OSError:
        return []


def _holds(pid: int, targets: Collection[FileId]) -> bool:
    """Whether process `pid` has a descriptor on one of `targets` (False when unreadable)."""
    try:
        entries = list(os.scandir(_PROC / str(pid) / "fd"))
    except OSError:
        return False
    for entry in entries:
        try:
            if str(Path(entry.path).readlink()).startswith(_NOT_FILES):
                continue
            st = entry.stat()  # follows the link: the open file itself
        except OSError:
            continue  # closed meanwhile, or not ours to read
        if (st.st_dev, st.st_ino) in targets:
            return True
    return False


def openers(*targets: FileId) -> list[int] | None:
    """PIDs that have one of the files `targets` open under any name; None where that cannot
    be told.

    Only processes whose descriptors this process may read are seen (the same user, or all of
    them for root).
    """
    if not (_PROC / "self" / "fd").is_dir():
        return None
    wanted = frozenset(targets)
    return [pid for pid in _pids() if _holds(pid, wanted)] if wanted else []


def flock_holders(lock_file: Path) -> list[int] | None:
    """PIDs holding an `flock` on `lock_file`, from `/proc/locks`; None when it cannot be told."""
    try:
        st = lock_file.stat()
        text = (_PROC / "locks").read_text()
    except OSError:
        return None
    device = (os.major(st.st_dev), os.minor(st.st_dev), st.st_ino)
    pids: list[int] = []
    for line in text.splitlines():
        fields = line.split()
        if len(fields) < 6 or fields[1] == "->" or fields[1] != "FLOCK":
            continue
        try:
            major, minor, inode = fields[5].split(":")
            where = (int(major, 16), int(minor, 16), int(inode))
            pid = int(fields[4])
        except ValueError:
            continue
        if where == device and pid not in pids:
            pids.append(pid)
    return pids or None
