"""Writes to the `entries` table of `SQLiteBackend`: the unversioned namespaces' rows.

Every function takes the caller's connection, inside the caller's write transaction (the
backend holds its lock and translates errors). Times follow the protocol: a write without
`created_at` keeps the entry's, `updated_at` defaults to now, `bytes` is the UTF-8 length,
and an explicit `accessed_at` goes to `entry_access` (see `_access.py`).
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Mapping

from contextchef.store.backend import StoredEntry
from contextchef.store.backends.sqlite._access import record_access
from contextchef.store.backends.sqlite._query import split_meta

__all__ = ["append_entry", "delete_entry", "restore_entries", "upsert_entry"]

_SCOPE = "project_id = ? AND namespace = ?"


def upsert_entry(
    conn: sqlite3.Connection,
    pid: int,
    ns: str,
    path: str,
    content: str,
    meta: str,
    times: dict[str, float],
) -> None:
    """Write one entry (`meta` and `times` as `split_meta` gives them), replacing any."""
    conn.execute(
        "INSERT INTO entries(project_id, namespace, path, content, meta, created_at, "
        "updated_at, bytes) VALUES (:pid, :ns, :path, :content, :meta, "
        "coalesce(:created, :now), coalesce(:updated, :now), :bytes) "
        "ON CONFLICT(project_id, namespace, path) DO UPDATE SET content = excluded.content, "
        "meta = excluded.meta, created_at = coalesce(:created, entries.created_at), "
        "updated_at = excluded.updated_at, bytes = excluded.bytes",
        {
            "pid": pid,
            "ns": ns,
            "path": path,
            "content": content,
            "meta": meta,
            "created": times.get("created_at"),
            "updated": times.get("updated_at"),
            "now": time.time(),
            "bytes": len(content.encode("utf-8")),
        },
    )
    if "accessed_at" in times:  # without one, the entry keeps the access time it had
        record_access(conn, pid, ns, path, times["accessed_at"])


def append_entry(conn: sqlite3.Connection, pid: int, ns: str, path: str, content: str) -> None:
    """Add `content` to the end of the entry in one statement (created when missing)."""
    now = time.time()
    conn.execute(
        "INSERT INTO entries(project_id, namespace, path, content, created_at, "
        "updated_at, bytes) VALUES (?, ?, ?, ?, ?, ?, ?) "
        "ON CONFLICT(project_id, namespace, path) DO UPDATE SET "
        "content = entries.content || excluded.content, "
        "updated_at = excluded.updated_at, bytes = entries.bytes + excluded.bytes",
        (pid, ns, path, content, now, now, len(content.encode("utf-8"))),
    )


def delete_entry(conn: sqlite3.Connection, pid: int, ns: str, path: str) -> bool:
    """Delete one entry; True when there was one."""
    cursor = conn.execute(f"DELETE FROM entries WHERE {_SCOPE} AND path = ?", (pid, ns, path))
    return cursor.rowcount > 0


def restore_entries(
    conn: sqlite3.Connection, pid: int, ns: str, snapshot: Mapping[str, StoredEntry]
) -> None:
    """Make namespace `ns` of project `pid` hold exactly `snapshot`."""
    dumped = {path: split_meta(entry.meta, ns, path) for path, entry in snapshot.items()}
    existing = {
        row[0] for row in conn.execute(f"SELECT path FROM entries WHERE {_SCOPE}", (pid, ns))
    }
    conn.executemany(
        f"DELETE FROM entries WHERE {_SCOPE} AND path = ?",
        [(pid, ns, path) for path in existing - snapshot.keys()],
    )
    for path, entry in snapshot.items():
        meta, times = dumped[path]
        upsert_entry(conn, pid, ns, path, entry.content, meta, times)
