"""The `entries` side of `SQLiteBackend`'s atomic capabilities: create-if-absent and versions.

`create` is one `INSERT … ON CONFLICT DO NOTHING` whose row count says who won. A version is a
digest of the row's id, content, meta and its times other than `accessed_at`, so a `touch` (a
read) never invalidates another reader's compare-and-swap while any rewrite does; the backend
compares it again inside `BEGIN IMMEDIATE`, which makes `replace_if` exact across processes.
"""

from __future__ import annotations

import hashlib
import sqlite3
import time
from typing import Any

from contextchef.store.backend import StoredEntry, Version
from contextchef.store.backends.sqlite._entries import upsert_entry
from contextchef.store.backends.sqlite._query import row_meta

__all__ = [
    "ENTRY_FROM",
    "ENTRY_ROW",
    "insert_if_absent",
    "read_with_version",
    "replace_entry_if",
    "row_version",
    "versioned_row",
]

ENTRY_ROW = "e.id, e.content, e.meta, e.created_at, e.updated_at, a.accessed_at, e.bytes"
"""The columns `versioned_row` selects: the id, then the backend's usual entry columns."""

ENTRY_FROM = "entries AS e LEFT JOIN entry_access AS a ON a.entry_id = e.id"
"""An entry with its access time (kept apart, in `entry_access`): columns as `e.`, `a.`."""


def versioned_row(conn: sqlite3.Connection, pid: int, ns: str, path: str) -> Any:
    """The `ENTRY_ROW` of one entry, or None."""
    return conn.execute(
        f"SELECT {ENTRY_ROW} FROM {ENTRY_FROM} "
        "WHERE e.project_id = ? AND e.namespace = ? AND e.path = ?",
        (pid, ns, path),
    ).fetchone()


def row_version(row: tuple[Any, ...]) -> Version:
    """The version token of an `ENTRY_ROW` (everything but `accessed_at` and `bytes`)."""
    digest = hashlib.blake2b(repr(row[:5]).encode("utf-8", "surrogatepass"), digest_size=16)
    return digest.hexdigest()


def read_with_version(
    conn: sqlite3.Connection, pid: int, ns: str, path: str
) -> tuple[StoredEntry, Version] | None:
    """The entry and its version token, or None."""
    row = versioned_row(conn, pid, ns, path)
    return None if row is None else (StoredEntry(row[1], row_meta(row)), row_version(row))


def replace_entry_if(
    conn: sqlite3.Connection,
    pid: int,
    ns: str,
    path: str,
    content: str,
    split: tuple[str, dict[str, float]],
    expected: Version,
) -> bool:
    """Write the entry (`split`: its meta as `split_meta` gives it) only when `path` still has
    version `expected`; inside the caller's write transaction. True when written."""
    row = versioned_row(conn, pid, ns, path)
    if row is None or row_version(row) != expected:
        return False
    upsert_entry(conn, pid, ns, path, content, *split)
    return True


def insert_if_absent(
    conn: sqlite3.Connection,
    pid: int,
    ns: str,
    path: str,
    content: str,
    meta: str,
    times: dict[str, float],
) -> bool:
    """Insert the entry unless `path` is taken; True when this statement inserted it."""
    now = time.time()
    cursor = conn.execute(
        "INSERT INTO entries(project_id, namespace, path, content, meta, created_at, "
        "updated_at, bytes) VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
        "ON CONFLICT(project_id, namespace, path) DO NOTHING",
        (
            pid,
            ns,
            path,
            content,
            meta,
            times.get("created_at", now),
            times.get("updated_at", now),
            len(content.encode("utf-8")),
        ),
    )
    if cursor.rowcount <= 0:
        return False
    if "accessed_at" in times:
        conn.execute(
            "INSERT INTO entry_access(entry_id, accessed_at) VALUES (?, ?) "
            "ON CONFLICT(entry_id) DO UPDATE SET accessed_at = excluded.accessed_at",
            (cursor.lastrowid, times["accessed_at"]),
        )
    return True
