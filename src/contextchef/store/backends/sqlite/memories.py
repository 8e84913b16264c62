"""Keyed memories with history: the table the Memory module builds on.

A memory is `(scope, key) -> content + meta`. Scope `"project"` is the backend's project (a clone
of the same repository elsewhere sees the same memories); scope `"user"` is shared by every
project on the machine. Writes never destroy: setting a key inserts a new version and points the
previous one at it through `superseded_by`; deleting marks the current version `deleted_at`.
Setting the same content and meta again is deduplicated (no new version). Every mutation appends
a row to `memory_log`, which is pruned by a retention policy (age and rows per project) on
every `PRUNE_EVERY`-th mutation and by `contextchef db vacuum`.

The generic store protocol's `memory/` namespace stays in the `entries` table (see backend.py):
these keyed, versioned facts are a different shape, reached through `SQLiteBackend.memories`.
"""

from __future__ import annotations

import builtins
import json
import logging
import sqlite3
import time
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any, Literal

from contextchef.errors import StoreError
from contextchef.store.backends.sqlite.connection import write_transaction

__all__ = [
    "LOG_MAX_AGE_S",
    "LOG_MAX_ROWS_PER_PROJECT",
    "PRUNE_EVERY",
    "Memories",
    "Memory",
    "MemoryScope",
    "prune_memory_log",
]

log = logging.getLogger("contextchef.store.backends.sqlite.memories")

MemoryScope = Literal["project", "user"]

LOG_MAX_AGE_S = 90 * 24 * 3600.0
"""Mutation-log rows older than this are pruned."""

LOG_MAX_ROWS_PER_PROJECT = 10_000
"""At most this many newest mutation-log rows are kept per project."""

PRUNE_EVERY = 256
"""The log is pruned for a project when a mutation's log id is a multiple of this."""

_COLUMNS = "id, key, content, meta, created_at, superseded_by, deleted_at"


@dataclass(frozen=True, slots=True)
class Memory:
    """One version of a memory. `current` is False once superseded or deleted."""

    id: int
    key: str
    content: str
    meta: Mapping[str, Any] = field(default_factory=dict)
    created_at: float = 0.0
    superseded_by: int | None = None
    deleted_at: float | None = None

    @property
    def current(self) -> bool:
        return self.superseded_by is None and self.deleted_at is None


def _memory(row: sqlite3.Row | tuple[Any, ...]) -> Memory:
    return Memory(
        id=int(row[0]),
        key=str(row[1]),
        content=str(row[2]),
        meta=json.loads(row[3]),
        created_at=float(row[4]),
        superseded_by=None if row[5] is None else int(row[5]),
        deleted_at=None if row[6] is None else float(row[6]),
    )


def _dump_meta(meta: Mapping[str, Any] | None, key: str) -> str:
    try:
        return json.dumps(dict(meta or {}), sort_keys=True, ensure_ascii=False)
    except (TypeError, ValueError) as exc:
        raise StoreError(f"memory {key!r}: meta is not JSON-serialisable: {exc}") from exc


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


class Memories:
    """Typed access to the memories of one project and of the user scope."""

    def __init__(
        self,
        connection: Callable[[], AbstractContextManager[sqlite3.Connection]],
        scope_id: Callable[[MemoryScope], int],
    ) -> None:
        self._connection = connection
        self._scope_id = scope_id

    def get(self, key: str, *, scope: MemoryScope = "project") -> Memory | None:
        """The current version of `key`, or None."""
        pid = self._scope_id(scope)
        with self._connection() as conn:
            return self._current(conn, pid, key)

    def _current(self, conn: sqlite3.Connection, pid: int, key: str) -> Memory | None:
        row = conn.execute(
            f"SELECT {_COLUMNS} FROM memories WHERE project_id = ? AND key = ? "
            "AND superseded_by IS NULL AND deleted_at IS NULL",
            (pid, key),
        ).fetchone()
        return None if row is None else _memory(row)

    def set(
        self,
        key: str,
        content: str,
        *,
        meta: Mapping[str, Any] | None = None,
        scope: MemoryScope = "project",
    ) -> Memory:
        """Make `content` the current version of `key`; identical content and meta is a no-op."""
        meta_json = _dump_meta(meta, key)
        pid = self._scope_id(scope)
        with self._connection() as conn, write_transaction(conn):
            previous = self._current(conn, pid, key)
            if previous is not None and (previous.content, dict(previous.meta)) == (
                content,
                json.loads(meta_json),
            ):
                return previous
            next_id = conn.execute("SELECT coalesce(max(id), 0) + 1 FROM memories").fetchone()
            new_id = int(next_id[0])
            if previous is not None:
                # superseded_by is a deferred foreign key: it may point at the row inserted next.
                conn.execute(
                    "UPDATE memories SET superseded_by = ? WHERE id = ?", (new_id, previous.id)
                )
            now = time.time()
            conn.execute(
                "INSERT INTO memories(id, project_id, key, content, meta, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (new_id, pid, key, content, meta_json, now),
            )
            self._log(conn, pid, new_id, key, "create" if previous is None else "update", now)
            row = conn.execute(f"SELECT {_COLUMNS} FROM memories WHERE id = ?", (new_id,))
            return _memory(row.fetchone())

    def delete(self, key: str, *, scope: MemoryScope = "project") -> bool:
        """Mark the current version of `key` deleted (history is kept); False when absent."""
        pid = self._scope_id(scope)
        with self._connection() as conn, write_transaction(conn):
            current = self._current(conn, pid, key)
            if current is None:
                return False
            now = time.time()
            conn.execute("UPDATE memories SET deleted_at = ? WHERE id = ?", (now, current.id))
            self._log(conn, pid, current.id, key, "delete", now)
            return True

    def list(self, *, scope: MemoryScope = "project", prefix: str = "") -> list[Memory]:
        """The current memories of a scope whose key starts with `prefix`, sorted by key."""
        pid = self._scope_id(scope)
        with self._connection() as conn:
            rows = conn.execute(
                f"SELECT {_COLUMNS} FROM memories WHERE project_id = ? "
                "AND superseded_by IS NULL AND deleted_at IS NULL "
                "AND substr(key, 1, ?) = ? ORDER BY key",
                (pid, len(prefix), prefix),
            ).fetchall()
        return [_memory(row) for row in rows]

    def history(self, key: str, *, scope: MemoryScope = "project") -> builtins.list[Memory]:
        """Every version of `key`, oldest first, the current one (if any) last."""
        pid = self._scope_id(scope)
        with self._connection() as conn:
            rows = conn.execute(
                f"SELECT {_COLUMNS} FROM memories WHERE project_id = ? AND key = ? ORDER BY id",
                (pid, key),
            ).fetchall()
        return [_memory(row) for row in rows]

    def _log(
        self, conn: sqlite3.Connection, pid: int, memory_id: int, key: str, op: str, now: float
    ) -> None:
        cursor = conn.execute(
            "INSERT INTO memory_log(project_id, memory_id, key, op, at) VALUES (?, ?, ?, ?, ?)",
            (pid, memory_id, key, op, now),
        )
        if (cursor.lastrowid or 0) % PRUNE_EVERY == 0:
            removed = prune_memory_log(conn, project_id=pid, now=now)
            log.debug("pruned %d memory-log rows", removed)
