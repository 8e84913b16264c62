"""Access times for eviction, recorded without ever waiting for the write lock.

A `Store` keeps read times in memory and calls `touch` only when it flushes them, at its next
write (see store/pending.py). `touch` itself is a write on SQLite, and one that waited for the
write lock waited as long as any writer held it (30 s were observed). So the time is written
only when the lock is free right now (`nowait_transaction`); when another writer holds it, the
time is kept in memory (the newest per entry, at most `MAX_PENDING` entries) and written with
the backend's next write transaction, or at `close`. A time still pending when the process
dies is lost: access times are eviction hints, and losing one only makes an entry look older
than it is.

The time goes to the small `entry_access` row of the entry (`record_access`), never to the
`entries` row: SQLite rewrites a whole record for any UPDATE, so a time kept there cost a read
of a 10 MiB entry a 10 MiB write.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from contextchef.store.backends.sqlite._versioned import VersionedTable
from contextchef.store.backends.sqlite.connection import nowait_transaction

__all__ = ["MAX_PENDING", "AccessTimes", "record_access"]

MAX_PENDING = 10_000
"""Entries whose access time may wait in memory; later ones are dropped until a flush."""


class AccessTimes:
    """The access times of one backend that could not be written yet. Not thread-safe: the
    backend calls it under its own lock."""

    def __init__(self, versions: VersionedTable, is_versioned: Callable[[str], bool]) -> None:
        self._versions = versions
        self._is_versioned = is_versioned
        self._pending: dict[tuple[str, str], float] = {}

    def __bool__(self) -> bool:
        return bool(self._pending)

    def touch(self, conn: sqlite3.Connection, pid: int, ns: str, path: str, at: float) -> None:
        """Write `at` now if the write lock is free, else keep it for the next flush."""
        with nowait_transaction(conn) as locked:
            if locked:
                self._write(conn, pid, ns, path, at)
                return
        key = (ns, path)
        if key in self._pending or len(self._pending) < MAX_PENDING:
            self._pending[key] = max(at, self._pending.get(key, 0.0))

    def flush(self, conn: sqlite3.Connection, pid: int) -> None:
        """Write every pending time; the caller holds a write transaction."""
        pending, self._pending = self._pending, {}
        for (ns, path), at in pending.items():
            self._write(conn, pid, ns, path, at)

    def flush_if_free(self, conn: sqlite3.Connection, pid: int) -> bool:
        """Flush in a transaction of its own if the write lock is free; whether it was."""
        with nowait_transaction(conn) as locked:
            if locked:
                self.flush(conn, pid)
            return locked

    def _write(self, conn: sqlite3.Connection, pid: int, ns: str, path: str, at: float) -> None:
        if self._is_versioned(ns):
            self._versions.touch(conn, pid, ns, path, at)
            return
        record_access(conn, pid, ns, path, at)


def record_access(conn: sqlite3.Connection, pid: int, ns: str, path: str, at: float) -> None:
    """Set the access time of entry `ns/path` to `at`; nothing when there is no such entry."""
    conn.execute(
        "INSERT INTO entry_access(entry_id, accessed_at) SELECT id, ? FROM entries "
        "WHERE project_id = ? AND namespace = ? AND path = ? "
        "ON CONFLICT(entry_id) DO UPDATE SET accessed_at = excluded.accessed_at",
        (at, pid, ns, path),
    )
