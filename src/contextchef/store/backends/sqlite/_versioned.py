"""The versioned namespaces of `SQLiteBackend`: one row per version, in `memories`.

Which namespaces keep versions is the store's configuration (`keep_versions`, see
`backend.StorageBackend`): `SQLiteBackend` records each declared name in `versioned_namespaces`,
per project (so every later opener of the project keeps versioning it), keeps those namespaces
out of `entries` and serves them from here, through the ordinary backend protocol (a feature
writing one, such as memory, never knows). The table's name is historical (see migration m006).
Per (project, namespace, key):

- a write that changes the content or meta inserts a new *current* row for the key and points
  the previous current row at it through `superseded_by` (kept, never overwritten); a write
  that changes nothing (same content, same meta after the time defaults below) is a no-op:
  no version, no log row;
- a delete marks the current row `deleted_at` (soft delete); writing the key again starts a
  new current row, the deleted one stays in the history;
- every create, update and delete appends a row to `memory_log` (append-only by trigger), which
  the retention policy prunes by age and rows per project on every `PRUNE_EVERY`-th mutation
  and in `contextchef db vacuum`; versions themselves are never pruned;
- `touch` records `accessed_at` on the current row in place: a read is not a new version;
- the version token of `read_versioned`/`replace_if` is the current row's id: any change makes
  a new row, so a compare-and-swap fails exactly when another write or a delete got in first.

A row's `meta` column holds the entry's whole meta as JSON, times included (`created_at`,
`updated_at`, `accessed_at`), with the protocol's defaults: a write without `created_at` keeps
the key's, without `accessed_at` keeps the key's, and without `updated_at` keeps the key's when
nothing else changed (so rewriting a value is deduplicated) and is now otherwise. The `created_at`
*column* is when the version was recorded. `bytes` is never stored: it is the content's length.
Search uses `memories_fts` (migration m004), which indexes every version; queries keep the
current rows only.

Declaring a namespace that already has entries moves them here, each as its first version
(`VersionedTable.adopt`), in the declaring write transaction.
"""

from __future__ import annotations

import builtins
import json
import logging
import sqlite3
import time
from collections.abc import Mapping
from typing import Any

from contextchef.store.backend import ListedEntry, SearchHit, StoredEntry, Version
from contextchef.store.backends.sqlite._query import (
    fts_query,
    prefix_bounds,
    row_meta,
    split_meta,
)

__all__ = [
    "LOG_MAX_AGE_S",
    "LOG_MAX_ROWS_PER_PROJECT",
    "PRUNE_EVERY",
    "VersionedTable",
    "prune_memory_log",
    "versioned_namespaces",
]

log = logging.getLogger("contextchef.store.backends.sqlite._versioned")

LOG_MAX_AGE_S = 90 * 24 * 3600.0
"""Mutation-log rows older than this are pruned."""

LOG_MAX_ROWS_PER_PROJECT = 10_000
"""At most this many newest mutation-log rows are kept per project."""

PRUNE_EVERY = 256
"""The log is pruned for a project when a mutation's log id is a multiple of this."""

_CURRENT = "project_id = ? AND namespace = ? AND superseded_by IS NULL AND deleted_at IS NULL"
_BYTES = "length(CAST(content AS BLOB))"


def prune_memory_log(
    conn: sqlite3.Connection,
    *,
    project_id: int | None = None,
    max_age_s: float | None = None,
    max_rows: int | None = None,
    now: float | None = None,
) -> int:
    """Apply the retention policy to one project's log (all projects when None); rows removed.

    Limits default to `LOG_MAX_AGE_S` and `LOG_MAX_ROWS_PER_PROJECT`, read at call time.
    """
    max_age_s = LOG_MAX_AGE_S if max_age_s is None else max_age_s
    max_rows = LOG_MAX_ROWS_PER_PROJECT if max_rows is None else max_rows
    cutoff = (time.time() if now is None else now) - max_age_s
    removed = conn.execute("DELETE FROM memory_log WHERE at < ?", (cutoff,)).rowcount
    if project_id is None:
        projects = [int(r[0]) for r in conn.execute("SELECT DISTINCT project_id FROM memory_log")]
    else:
        projects = [project_id]
    for pid in projects:
        removed += conn.execute(
            "DELETE FROM memory_log WHERE project_id = ? AND id <= (SELECT id FROM memory_log "
            "WHERE project_id = ? ORDER BY id DESC LIMIT 1 OFFSET ?)",
            (pid, pid, max_rows),
        ).rowcount
    return removed


def versioned_namespaces(conn: sqlite3.Connection, pid: int) -> frozenset[str]:
    """The namespaces the database keeps versions of for project `pid`."""
    rows = conn.execute("SELECT namespace FROM versioned_namespaces WHERE project_id = ?", (pid,))
    return frozenset(str(row[0]) for row in rows)


def _with_bytes(raw: str, size: int) -> dict[str, Any]:
    meta: dict[str, Any] = json.loads(raw)
    meta["bytes"] = int(size)
    return meta


class VersionedTable:
    """The protocol operations of the versioned namespaces over `memories`, for one project.

    Every method takes the caller's connection: `SQLiteBackend` holds the lock, translates
    errors and opens the write transaction (writers call these inside `BEGIN IMMEDIATE`).
    """

    # -- reads --------------------------------------------------------------------------------

    @staticmethod
    def _current(
        conn: sqlite3.Connection, pid: int, ns: str, key: str
    ) -> tuple[int, str, str] | None:
        row = conn.execute(
            f"SELECT id, content, meta FROM memories WHERE {_CURRENT} AND key = ?", (pid, ns, key)
        ).fetchone()
        return None if row is None else (int(row[0]), str(row[1]), str(row[2]))

    @staticmethod
    def read(conn: sqlite3.Connection, pid: int, ns: str, key: str) -> StoredEntry | None:
        row = conn.execute(
            f"SELECT content, meta, {_BYTES} FROM memories WHERE {_CURRENT} AND key = ?",
            (pid, ns, key),
        ).fetchone()
        return None if row is None else StoredEntry(row[0], _with_bytes(row[1], row[2]))

    @staticmethod
    def read_versioned(
        conn: sqlite3.Connection, pid: int, ns: str, key: str
    ) -> tuple[StoredEntry, Version] | None:
        row = conn.execute(
            f"SELECT id, content, meta, {_BYTES} FROM memories WHERE {_CURRENT} AND key = ?",
            (pid, ns, key),
        ).fetchone()
        if row is None:
            return None
        return StoredEntry(row[1], _with_bytes(row[2], row[3])), str(row[0])

    @staticmethod
    def _range(pid: int, ns: str, prefix: str) -> tuple[str, tuple[Any, ...]]:
        low, high = prefix_bounds(prefix)
        if high is None:
            return f"{_CURRENT} AND key >= ?", (pid, ns, low)
        return f"{_CURRENT} AND key >= ? AND key < ?", (pid, ns, low, high)

    def list(self, conn: sqlite3.Connection, pid: int, ns: str, prefix: str) -> list[ListedEntry]:
        where, params = self._range(pid, ns, prefix)
        rows = conn.execute(
            f"SELECT key, meta, {_BYTES} FROM memories WHERE {where} ORDER BY key", params
        ).fetchall()
        return [ListedEntry(r[0], _with_bytes(r[1], r[2])) for r in rows]

    def read_all(
        self, conn: sqlite3.Connection, pid: int, ns: str, prefix: str
    ) -> dict[str, StoredEntry]:
        where, params = self._range(pid, ns, prefix)
        rows = conn.execute(
            f"SELECT key, content, meta, {_BYTES} FROM memories WHERE {where} ORDER BY key",
            params,
        ).fetchall()
        return {r[0]: StoredEntry(r[1], _with_bytes(r[2], r[3])) for r in rows}

    def exists(self, conn: sqlite3.Connection, pid: int, ns: str, key: str) -> bool:
        return self._current(conn, pid, ns, key) is not None

    @staticmethod
    def search(
        conn: sqlite3.Connection, pid: int, ns: str, query: str, prefix: str, limit: int | None
    ) -> builtins.list[SearchHit]:
        match = fts_query(query)
        if match is None or (limit is not None and limit <= 0):
            return []
        low, high = prefix_bounds(prefix)
        bound = "" if high is None else " AND m.key < :high"
        sql = (
            "SELECT m.key, snippet(memories_fts, 1, '', '', '…', 16), bm25(memories_fts) AS rank, "
            "m.meta, length(CAST(m.content AS BLOB)) "
            "FROM memories_fts JOIN memories AS m ON m.id = memories_fts.rowid "
            "WHERE memories_fts MATCH :match AND m.project_id = :pid AND m.namespace = :ns "
            "AND m.superseded_by IS NULL AND m.deleted_at IS NULL "
            f"AND m.key >= :low{bound} ORDER BY rank, m.id DESC LIMIT :limit"
        )
        params = {"match": match, "pid": pid, "ns": ns, "low": low, "high": high}
        params["limit"] = -1 if limit is None else limit
        rows = conn.execute(sql, params).fetchall()
        return [SearchHit(r[0], _with_bytes(r[3], r[4]), r[1] or None, -float(r[2])) for r in rows]

    @staticmethod
    def history(
        conn: sqlite3.Connection, pid: int, ns: str, key: str
    ) -> builtins.list[StoredEntry]:
        """Every version of `key`, oldest first, with `recorded_at` and, when they apply,
        `superseded_at` (when its successor was recorded) and `deleted_at` in its meta."""
        rows = conn.execute(
            "SELECT m.content, m.meta, length(CAST(m.content AS BLOB)), m.created_at, "
            "m.deleted_at, s.created_at FROM memories AS m "
            "LEFT JOIN memories AS s ON s.id = m.superseded_by "
            "WHERE m.project_id = ? AND m.namespace = ? AND m.key = ? ORDER BY m.id",
            (pid, ns, key),
        ).fetchall()
        versions = []
        for content, raw, size, recorded, deleted, superseded in rows:
            meta = _with_bytes(raw, size)
            meta["recorded_at"] = float(recorded)
            if superseded is not None:
                meta["superseded_at"] = float(superseded)
            if deleted is not None:
                meta["deleted_at"] = float(deleted)
            versions.append(StoredEntry(content, meta))
        return versions

    # -- writes (inside the caller's write transaction) -----------------------------------------

    def create(
        self, conn: sqlite3.Connection, pid: int, ns: str, key: str, entry: StoredEntry
    ) -> bool:
        """Write `key` only when it has no current version; True when this call created it."""
        if self.exists(conn, pid, ns, key):
            return False
        self.write(conn, pid, ns, key, entry.content, entry.meta)
        return True

    def write(
        self,
        conn: sqlite3.Connection,
        pid: int,
        ns: str,
        key: str,
        content: str,
        meta: Mapping[str, Any],
    ) -> bool:
        """Make `content` + `meta` the current version of `key`; False when nothing changed."""
        free, times = split_meta(meta, ns, key)
        current = self._current(conn, pid, ns, key)
        previous: dict[str, Any] = json.loads(current[2]) if current is not None else {}
        now = time.time()
        resolved: dict[str, Any] = json.loads(free)
        for name in ("created_at", "updated_at", "accessed_at"):
            value = times.get(name, previous.get(name))
            if value is not None:
                resolved[name] = value
        resolved.setdefault("created_at", now)
        if current is not None and (content, resolved) == (current[1], previous):
            return False
        if "updated_at" not in times:
            resolved["updated_at"] = now
        new_id = int(conn.execute("SELECT coalesce(max(id), 0) + 1 FROM memories").fetchone()[0])
        if current is not None:
            # superseded_by is a deferred foreign key: it may point at the row inserted next.
            conn.execute("UPDATE memories SET superseded_by = ? WHERE id = ?", (new_id, current[0]))
        conn.execute(
            "INSERT INTO memories(id, project_id, namespace, key, content, meta, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                new_id,
                pid,
                ns,
                key,
                content,
                json.dumps(resolved, sort_keys=True, ensure_ascii=False),
                now,
            ),
        )
        self._log(conn, pid, ns, new_id, key, "create" if current is None else "update", now)
        return True

    def replace_if(
        self,
        conn: sqlite3.Connection,
        pid: int,
        ns: str,
        key: str,
        entry: StoredEntry,
        expected: Version,
    ) -> bool:
        """`write` when the current row of `key` is still row `expected`; False otherwise."""
        current = self._current(conn, pid, ns, key)
        if current is None or str(current[0]) != expected:
            return False
        self.write(conn, pid, ns, key, entry.content, entry.meta)
        return True

    def delete(self, conn: sqlite3.Connection, pid: int, ns: str, key: str) -> bool:
        """Mark the current version of `key` deleted (history is kept); False when absent."""
        current = self._current(conn, pid, ns, key)
        if current is None:
            return False
        now = time.time()
        conn.execute("UPDATE memories SET deleted_at = ? WHERE id = ?", (now, current[0]))
        self._log(conn, pid, ns, current[0], key, "delete", now)
        return True

    def append(self, conn: sqlite3.Connection, pid: int, ns: str, key: str, content: str) -> None:
        """A new version holding the current content followed by `content` (created if absent)."""
        current = self._current(conn, pid, ns, key)
        if current is None:
            self.write(conn, pid, ns, key, content, {})
            return
        meta = json.loads(current[2])
        meta["updated_at"] = time.time()
        self.write(conn, pid, ns, key, current[1] + content, meta)

    def touch(
        self, conn: sqlite3.Connection, pid: int, ns: str, key: str, accessed_at: float
    ) -> None:
        """Record the last read time on the current row in place; a missing key is ignored."""
        current = self._current(conn, pid, ns, key)
        if current is None:
            return
        meta = json.loads(current[2])
        meta["accessed_at"] = float(accessed_at)
        conn.execute(
            "UPDATE memories SET meta = ? WHERE id = ?",
            (json.dumps(meta, sort_keys=True, ensure_ascii=False), current[0]),
        )

    def restore(
        self, conn: sqlite3.Connection, pid: int, ns: str, snapshot: Mapping[str, StoredEntry]
    ) -> None:
        """Make the namespace hold exactly `snapshot`: versioned writes and soft deletes."""
        for key in [e.path for e in self.list(conn, pid, ns, "")]:
            if key not in snapshot:
                self.delete(conn, pid, ns, key)
        for key, entry in snapshot.items():
            self.write(conn, pid, ns, key, entry.content, entry.meta)

    def adopt(self, conn: sqlite3.Connection, pid: int, ns: str) -> None:
        """Declare `ns` versioned for project `pid`; its rows in `entries` move here, each as
        the first version of its key. Inside the caller's write transaction."""
        inserted = conn.execute(
            "INSERT INTO versioned_namespaces(project_id, namespace, declared_at) "
            "VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
            (pid, ns, time.time()),
        ).rowcount
        if not inserted:
            return
        rows = conn.execute(
            "SELECT e.path, e.content, e.meta, e.created_at, e.updated_at, a.accessed_at, "
            "e.bytes FROM entries AS e LEFT JOIN entry_access AS a ON a.entry_id = e.id "
            "WHERE e.project_id = ? AND e.namespace = ? ORDER BY e.path",
            (pid, ns),
        ).fetchall()
        for row in rows:
            self.write(conn, pid, ns, str(row[0]), str(row[1]), row_meta(row))
        conn.execute("DELETE FROM entries WHERE project_id = ? AND namespace = ?", (pid, ns))

    @staticmethod
    def _log(
        conn: sqlite3.Connection,
        pid: int,
        ns: str,
        memory_id: int,
        key: str,
        op: str,
        now: float,
    ) -> None:
        cursor = conn.execute(
            "INSERT INTO memory_log(project_id, namespace, memory_id, key, op, at) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (pid, ns, memory_id, key, op, now),
        )
        if (cursor.lastrowid or 0) % PRUNE_EVERY == 0:
            removed = prune_memory_log(conn, project_id=pid, now=now)
            log.debug("pruned %d memory-log rows", removed)
