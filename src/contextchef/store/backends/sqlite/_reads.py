"""Reads of the `entries` table of `SQLiteBackend`: the unversioned namespaces' rows.

Every function takes the caller's connection (the backend holds its lock and translates
errors). A prefix is a key range (`prefix_bounds`), so each read walks the primary key
`(project_id, namespace, path)` from the prefix on: its cost is that of the rows it returns.
An entry's access time lives in `entry_access` (see `_access.py`), joined in by `ENTRY_FROM`;
the directories holding entries, in `entry_dirs` (see `steps.py`, m009).
"""

from __future__ import annotations

import sqlite3
from typing import Any

from contextchef.store.backend import ListedEntry, StoredEntry
from contextchef.store.backends.sqlite._atomic import ENTRY_FROM
from contextchef.store.backends.sqlite._query import prefix_bounds, row_meta

__all__ = [
    "READ_ENTRY",
    "entry_dirs",
    "entry_exists",
    "list_entries",
    "read_entries",
    "read_entry",
    "recent_entries",
]

_ENTRY = "e.content, e.meta, e.created_at, e.updated_at, a.accessed_at, e.bytes"
_LISTED = "e.path, e.meta, e.created_at, e.updated_at, a.accessed_at, e.bytes"
_SCOPE = "project_id = ? AND namespace = ?"
_SCOPE_E = "e.project_id = ? AND e.namespace = ?"

READ_ENTRY = f"SELECT {_ENTRY} FROM {ENTRY_FROM} WHERE {_SCOPE_E} AND e.path = ?"
"""One entry's row, parameters `(project id, namespace, path)`; `row_meta` reads its meta."""


def read_entry(conn: sqlite3.Connection, pid: int, ns: str, path: str) -> StoredEntry | None:
    row = conn.execute(READ_ENTRY, (pid, ns, path)).fetchone()
    return None if row is None else StoredEntry(row[0], row_meta(row))


def entry_exists(conn: sqlite3.Connection, pid: int, ns: str, path: str) -> bool:
    sql = f"SELECT 1 FROM entries WHERE {_SCOPE} AND path = ?"
    return conn.execute(sql, (pid, ns, path)).fetchone() is not None


def _range(pid: int, ns: str, prefix: str, column: str) -> tuple[str, tuple[Any, ...]]:
    """The condition (after the scope) and parameters selecting the paths under `prefix`."""
    low, high = prefix_bounds(prefix)
    if high is None:
        return f"{column} >= ?", (pid, ns, low)
    return f"{column} >= ? AND {column} < ?", (pid, ns, low, high)


def _rows(
    conn: sqlite3.Connection, pid: int, ns: str, prefix: str, columns: str, last: int | None
) -> list[Any]:
    """The rows under `prefix` in path order; with `last`, only the last `last` of them
    (read backwards along the primary key, so the cost is theirs alone)."""
    where, params = _range(pid, ns, prefix, "e.path")
    order = "ORDER BY e.path" if last is None else "ORDER BY e.path DESC LIMIT ?"
    sql = f"SELECT {columns} FROM {ENTRY_FROM} WHERE {_SCOPE_E} AND {where} {order}"
    if last is not None:
        params = (*params, last)
    rows = conn.execute(sql, params).fetchall()
    return rows if last is None else rows[::-1]


def list_entries(conn: sqlite3.Connection, pid: int, ns: str, prefix: str) -> list[ListedEntry]:
    rows = _rows(conn, pid, ns, prefix, _LISTED, None)
    return [ListedEntry(row[0], row_meta(row)) for row in rows]


def read_entries(
    conn: sqlite3.Connection, pid: int, ns: str, prefix: str, last: int | None = None
) -> dict[str, StoredEntry]:
    """The entries under `prefix` in path order (with `last`, the last `last` of them)."""
    rows = _rows(conn, pid, ns, prefix, f"e.path, {_ENTRY}", last)
    return {row[0]: StoredEntry(row[1], row_meta(row)) for row in rows}


def recent_entries(
    conn: sqlite3.Connection, pid: int, ns: str, prefix: str, limit: int, offset: int
) -> dict[str, StoredEntry]:
    """A page of the entries under `prefix`, the most recently updated first."""
    where, params = _range(pid, ns, prefix, "e.path")
    sql = (
        f"SELECT e.path, {_ENTRY} FROM {ENTRY_FROM} WHERE {_SCOPE_E} AND {where} "
        "ORDER BY e.updated_at DESC, e.path LIMIT ? OFFSET ?"
    )
    rows = conn.execute(sql, (*params, limit, offset)).fetchall()
    return {row[0]: StoredEntry(row[1], row_meta(row)) for row in rows}


def entry_dirs(conn: sqlite3.Connection, pid: int, ns: str, prefix: str) -> list[str]:
    """The directories (`a/`, `a/b/`, and `""` for the top) holding entries under `prefix`:
    a key range of the namespace index `entry_dirs` (m009), already in order."""
    where, params = _range(pid, ns, prefix, "dir")
    sql = f"SELECT dir FROM entry_dirs WHERE {_SCOPE} AND {where} ORDER BY dir"
    return [row[0] for row in conn.execute(sql, params)]
