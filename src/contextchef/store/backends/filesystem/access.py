"""Read times for least-recently-read eviction, kept in a log beside a namespace's entries.

`touch` used to set each file's `atime`, and the order of reads did not survive a restart: a
file read again less than a second after its last recorded read kept the older time (so a later
read of another file outranked it), another program reading a file could move its atime, and
some filesystems keep atime coarsely or not at all. So each namespace keeps its read times in
`.accessed`, a hidden file in its directory (listing, the temporary-file sweep and the
TypeScript reference all skip dotfiles): one JSON line `[path, seconds]` appended per `touch`,
and for each path the latest time wins; a delete appends `[path, null]`, which drops the times
logged before it (an entry created there later has not been read). `touch` is only ever called
from the store's flush (reads never write: see `store/pending.py`); appends need no lock, and
when the log passes `COMPACT_BYTES` it is rewritten atomically, under the namespace lock, with
one line per entry still present. A torn last line (a crash mid-append) is skipped, and the next
append starts a line of its own. An entry with no line (never read since, written by the
TypeScript reference, or read by an older build) reports its file's atime, as before.
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from threading import Lock

from contextchef.errors import StoreError
from contextchef.store.backends.filesystem.fileio import (
    DIR_FLAGS,
    atomic_replace,
    linked_elsewhere,
    read_regular,
)

__all__ = ["COMPACT_BYTES", "LOG_NAME", "AccessLog"]

logger = logging.getLogger("contextchef.store.backends.filesystem.access")

LOG_NAME = ".accessed"
COMPACT_BYTES = 256 * 1024
"""A log larger than this is rewritten with one line per entry still present."""

_APPEND_FLAGS = os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC

_StatKey = tuple[int, int, int]


def parse_log(data: bytes) -> dict[str, float]:
    """The latest time of each path in a log's bytes; lines that do not parse are skipped."""
    lines = data.splitlines()
    try:  # one parse for the whole log, unless a line is torn or foreign
        pairs: list[object] = json.loads(b"[" + b",".join(lines) + b"]")
    except ValueError:
        pairs = [_pair(line) for line in lines]
    times: dict[str, float] = {}
    for pair in pairs:
        if not isinstance(pair, list) or len(pair) != 2:
            continue
        path, at = pair
        if not isinstance(path, str):
            continue
        if at is None:  # the entry was deleted: the reads logged before are not a new one's
            times.pop(path, None)
            continue
        if not isinstance(at, int | float) or isinstance(at, bool):
            continue
        at = float(at)
        if math.isfinite(at) and at > times.get(path, -math.inf):
            times[path] = at
    return times


def _pair(line: bytes) -> object:
    try:
        return json.loads(line)
    except ValueError:
        return None


_encode = json.JSONEncoder(ensure_ascii=False, allow_nan=False).encode


def _line(path: str, at: float | None) -> bytes:
    return _encode([path, at]).encode("utf-8") + b"\n"


class AccessLog:
    """The read times of every namespace of one backend, cached per namespace until its log
    changes (a `stat` tells)."""

    def __init__(self, *, fsync: bool) -> None:
        self._fsync = fsync
        self._cache: dict[Path, tuple[_StatKey, dict[str, float]]] = {}
        self._logs: dict[Path, Path] = {}
        self._lock = Lock()

    def times(self, directory: Path) -> Mapping[str, float]:
        """The read times logged in the namespace `directory` (empty when none)."""
        log = self._logs.get(directory)
        if log is None:
            log = self._logs[directory] = directory / LOG_NAME
        try:
            st = log.lstat()
        except (FileNotFoundError, NotADirectoryError):
            return {}
        key = (st.st_ino, st.st_size, st.st_mtime_ns)
        with self._lock:
            cached = self._cache.get(directory)
        if cached is not None and cached[0] == key:
            return cached[1]
        try:
            top = os.open(directory, DIR_FLAGS)
        except OSError:
            return {}
        try:
            found = read_regular(top, LOG_NAME, LOG_NAME)
        except (OSError, StoreError) as exc:  # a link planted under its name: no times from it
            logger.warning("ignoring the read-time log in %s: %s", directory, exc)
            return {}
        finally:
            os.close(top)
        if found is None:
            return {}
        data, st = found
        times = parse_log(data)
        with self._lock:
            self._cache[directory] = ((st.st_ino, st.st_size, st.st_mtime_ns), times)
        return times

    def forget(self, top: int, path: str) -> None:
        """Log that `path` was deleted (a `[path, null]` line), so that an entry created there
        later does not inherit the old entry's read times; nothing without a log."""
        with contextlib.suppress(FileNotFoundError):
            self.append(top, path, None, create=False)

    def append(self, top: int, path: str, at: float | None, *, create: bool = True) -> bool:
        """Log that `path` was read at `at` (None: deleted), in the namespace directory `top`:
        one append, which other appenders never interleave with. True when the log has grown
        past `COMPACT_BYTES` (the caller then takes the namespace lock and calls `compact`)."""
        flags = _APPEND_FLAGS if create else _APPEND_FLAGS & ~os.O_CREAT
        fd = os.open(LOG_NAME, flags, 0o600, dir_fd=top)
        try:
            st = os.fstat(fd)
            if linked_elsewhere(top, st, lambda: os.fstat(fd)):
                logger.warning("the read-time log is a hard link; read times are not kept")
                return False
            line = _line(path, at)
            if st.st_size and os.pread(fd, 1, st.st_size - 1) != b"\n":
                line = b"\n" + line  # after a torn line (a crash mid-append): a line of its own
            os.write(fd, line)
            return st.st_size + len(line) > COMPACT_BYTES
        finally:
            os.close(fd)

    def compact(self, top: int, present: Callable[[str], bool], temp: str) -> None:
        """Rewrite the log with one line per `present` path (the caller holds the namespace
        lock; an append racing the rewrite may be lost, which only makes an entry look older)."""
        found = read_regular(top, LOG_NAME, LOG_NAME)
        if found is None:
            return
        times = parse_log(found[0])
        body = b"".join(_line(path, times[path]) for path in sorted(times) if present(path))
        atomic_replace(top, LOG_NAME, body, temp, fsync=self._fsync, where=LOG_NAME)
