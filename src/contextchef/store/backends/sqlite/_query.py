"""Query helpers shared by the entry and memory tables: key ranges, FTS5 queries, meta JSON,
and the entries' full-text search."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping
from typing import Any

from contextchef.errors import StoreError
from contextchef.store.backend import SearchHit

__all__ = [
    "DERIVED_KEYS",
    "TIME_KEYS",
    "fts_query",
    "prefix_bounds",
    "row_meta",
    "search_entries",
    "split_meta",
]

TIME_KEYS = ("created_at", "updated_at", "accessed_at")
"""Meta keys holding times; only numbers are kept for them."""

DERIVED_KEYS = (*TIME_KEYS, "bytes")
"""Meta keys the backend manages itself: never stored as free meta."""


def prefix_bounds(prefix: str) -> tuple[str, str | None]:
    """`(low, high)` with `low <= s < high` exactly for strings `s` starting with `prefix`.

    SQLite compares TEXT by UTF-8 bytes, which orders like code points, so incrementing the last
    code point gives the exclusive upper bound and the primary-key index serves the range.
    """
    if not prefix:
        return "", None
    last = ord(prefix[-1]) + 1
    if 0xD800 <= last <= 0xDFFF:
        last = 0xE000
    if last > 0x10FFFF:
        return prefix, None
    return prefix, prefix[:-1] + chr(last)


def fts_query(text: str) -> str | None:
    """An FTS5 query matching every word of `text` as a prefix; None when it has no words.

    Each word is wrapped in double quotes (inner quotes doubled), so FTS5 operators and syntax
    characters in user input are plain text and never raise. A NUL would end the query string
    inside SQLite's parser, so it separates words like whitespace.
    """
    words = [w for w in text.replace("\x00", " ").split() if any(ch.isalnum() for ch in w)]
    if not words:
        return None
    return " ".join('"' + w.replace('"', '""') + '"*' for w in words)


def split_meta(meta: Mapping[str, Any], ns: str, path: str) -> tuple[str, dict[str, float]]:
    """`(free meta as canonical JSON, numeric time keys)`; StoreError when not serialisable."""
    free = {k: v for k, v in meta.items() if k not in DERIVED_KEYS}
    times = {
        k: float(v)
        for k in TIME_KEYS
        if isinstance(v := meta.get(k), int | float) and not isinstance(v, bool)
    }
    try:
        return json.dumps(free, sort_keys=True, ensure_ascii=False), times
    except (TypeError, ValueError) as exc:
        raise StoreError(
            f"meta of {ns}/{path} is not JSON-serialisable: {exc}", namespace=ns, path=path
        ) from exc


def row_meta(row: tuple[Any, ...]) -> dict[str, Any]:
    """Meta from the last five columns `meta, created_at, updated_at, accessed_at, bytes`."""
    raw, created, updated, accessed, size = row[-5:]
    meta: dict[str, Any] = json.loads(raw) if raw != "{}" else {}
    meta["created_at"] = created
    meta["updated_at"] = updated
    if accessed is not None:
        meta["accessed_at"] = accessed
    meta["bytes"] = size
    return meta


def search_entries(
    conn: sqlite3.Connection, pid: int, ns: str, match: str, prefix: str, limit: int | None
) -> list[SearchHit]:
    """Full-text hits in `entries` (not `memories`), best rank first, with snippets."""
    low, high = prefix_bounds(prefix)
    bound = "" if high is None else " AND e.path < :high"
    sql = (
        "SELECT e.path, snippet(entries_fts, 1, '', '', '…', 16), bm25(entries_fts) AS rank, "
        "e.meta, e.created_at, e.updated_at, a.accessed_at, e.bytes "
        "FROM entries_fts JOIN entries AS e ON e.id = entries_fts.rowid "
        "LEFT JOIN entry_access AS a ON a.entry_id = e.id "
        "WHERE entries_fts MATCH :match AND e.project_id = :pid AND e.namespace = :ns "
        f"AND e.path >= :low{bound} ORDER BY rank, e.updated_at DESC, e.path LIMIT :limit"
    )
    params = {"match": match, "pid": pid, "ns": ns, "low": low, "high": high}
    params["limit"] = -1 if limit is None else limit
    rows = conn.execute(sql, params).fetchall()
    return [SearchHit(r[0], row_meta(r), r[1] or None, -float(r[2])) for r in rows]
