"""`read_recent_where` on SQLite: conditions on an entry (`store.where`) as JSON1 SQL.

Each condition renders to an expression that is 0 or 1, never NULL (so `NOT` of a comparison
on a missing field holds, as the contract says). A field is a JSON path with every member
quoted (`$."user"."access-level"`, `[2]` for an element), bound as a parameter. `json_type`
tells the kinds apart (SQLite's `json_extract` gives the same SQL value for a JSON string and
an object's text, and 1 for both `1` and `true`); a comparison checks the kind first, then
compares `json_extract` with the bound operand (TEXT by bytes, which orders UTF-8 as code
points; numbers exactly across INTEGER and REAL). The content conditions are tested only where
`json_valid(content)`: an entry that is not JSON matches none.
"""

from __future__ import annotations

import functools
import sqlite3
from collections.abc import Mapping
from typing import Any

from contextchef.store.backend import StoredEntry
from contextchef.store.backends.sqlite._atomic import ENTRY_FROM
from contextchef.store.backends.sqlite._query import prefix_bounds, row_meta
from contextchef.store.recent import recent_page
from contextchef.store.where import (
    All,
    Compare,
    Condition,
    Field,
    IfPresent,
    Is,
    Length,
    NameStarts,
    Not,
    matches,
    reads_content,
)

__all__ = ["has_json1", "page_where", "recent_entries_where", "render"]

_TYPES = {
    "object": ("object",),
    "array": ("array",),
    "string": ("text",),
    "number": ("integer", "real"),
    "boolean": ("true", "false"),
    "null": ("null",),
}
"""`json_type`'s names of each kind."""

_CONTENT = "e.content"
_NAME = "substr(e.path, length(rtrim(e.path, replace(e.path, '/', ''))) + 1)"
"""The last segment of the entry's path (`rtrim` strips back to the last `/`)."""


@functools.cache
def has_json1() -> bool:
    """Whether this Python's SQLite has the JSON functions (built in since 3.38, an option
    before)."""
    probe = sqlite3.connect(":memory:")
    try:
        probe.execute("SELECT json_valid('{}'), json_type('{}', '$')")
    except sqlite3.OperationalError:
        return False
    finally:
        probe.close()
    return True


def _path(field: Field) -> str:
    return "$" + "".join(f'."{step}"' if isinstance(step, str) else f"[{step}]" for step in field)


def _of_kinds(field: Field, kinds: tuple[str, ...], params: list[Any]) -> str:
    params.append(_path(field))
    names = ", ".join(f"'{name}'" for name in kinds)
    return f"coalesce(json_type({_CONTENT}, ?) IN ({names}), 0)"


def render(condition: Condition, params: list[Any]) -> str:
    """`condition` as a 0-or-1 SQL expression over the entry `e`; its parameters are
    appended to `params` in order."""
    if isinstance(condition, All):
        if not condition.conditions:
            return "1"
        # Nested CASEs stop at the first condition that fails (an `AND` in a value is
        # evaluated whole); the name test last, as it costs more than a JSON field.
        first, *rest = sorted(condition.conditions, key=lambda c: isinstance(c, NameStarts))
        if not rest:
            return render(first, params)
        test = render(first, params)
        return f"(CASE WHEN {test} THEN {render(All(tuple(rest)), params)} ELSE 0 END)"
    if isinstance(condition, Not):
        return f"(NOT {render(condition.condition, params)})"
    if isinstance(condition, Is):
        kinds = tuple(name for kind in sorted(condition.kinds) for name in _TYPES[kind])
        return _of_kinds(condition.field, kinds, params) if kinds else "0"
    if isinstance(condition, Compare):
        text = isinstance(condition.operand, str)
        kinds = ("text",) if text else ("integer", "real", "true", "false")
        kind = _of_kinds(condition.field, kinds, params)
        params.append(_path(condition.field))
        params.append(condition.operand if text else _number(condition.operand))
        return f"({kind} AND coalesce(json_extract({_CONTENT}, ?) {condition.op} ?, 0))"
    if isinstance(condition, Length):
        params.append(_path(condition.field))
        params.append(condition.count)
        return f"coalesce(json_array_length({_CONTENT}, ?) = ?, 0)"
    if isinstance(condition, IfPresent):
        params.append(_path(condition.field))
        then = render(condition.then, params)
        otherwise = render(condition.otherwise, params)
        return f"(CASE WHEN json_type({_CONTENT}, ?) IS NOT NULL THEN {then} ELSE {otherwise} END)"
    params.append(len(condition.text))
    params.append(condition.text)
    return f"(substr({_NAME}, 1, ?) = ?)"


def _number(value: Any) -> int | float:
    return int(value) if isinstance(value, bool) else value


def recent_entries_where(
    conn: sqlite3.Connection,
    pid: int,
    ns: str,
    prefix: str,
    where: Condition,
    limit: int,
    offset: int,
) -> dict[str, StoredEntry]:
    """A page of the entries under `prefix` matching `where`, the most recently updated first."""
    params: list[Any] = [pid, ns]
    low, high = prefix_bounds(prefix)
    bound = "e.path >= ?" if high is None else "e.path >= ? AND e.path < ?"
    params += [low] if high is None else [low, high]
    test = render(where, params)
    if reads_content(where):
        test = f"CASE WHEN json_valid({_CONTENT}) THEN {test} ELSE 0 END"
    order = _RECENT if _by_recency(conn, pid, ns, prefix, limit + offset) else _PATHS
    sql = (
        "SELECT e.path, e.content, e.meta, e.created_at, e.updated_at, a.accessed_at, e.bytes "
        f"FROM {order} WHERE e.project_id = ? AND e.namespace = ? AND {bound} AND {test} "
        "ORDER BY e.updated_at DESC, e.path LIMIT ? OFFSET ?"
    )
    rows = conn.execute(sql, (*params, limit, offset)).fetchall()
    return {row[0]: StoredEntry(row[1], row_meta(row)) for row in rows}


_RECENT = ENTRY_FROM.replace("entries AS e", "entries AS e INDEXED BY entries_recent", 1)
_PATHS = ENTRY_FROM.replace("entries AS e", "entries AS e INDEXED BY sqlite_autoindex_entries_1", 1)
_SELECTIVITY = 0.1
"""The share of entries a filter is taken to keep, for the choice of `_by_recency`."""


def _by_recency(conn: sqlite3.Connection, pid: int, ns: str, prefix: str, wanted: int) -> bool:
    """Whether to read the namespace newest first (index `entries_recent`, m010) and stop once
    the page is full, rather than every entry under `prefix` (the primary key's range), sorted.

    Newest first reads about `wanted / selectivity` entries of the prefix, and the namespace's
    other entries in between: `wanted * total / (selectivity * under)` rows, against the
    `under` rows (and a sort) of the range. The counts come from the namespace index
    (`entry_dirs`, m009), read no further than a few times the prefix's own directories: a
    namespace with more than that is taken to be too large to walk for a small prefix."""
    if not prefix:
        return True
    low, high = prefix_bounds(prefix)
    in_range = "dir >= ?3" if high is None else "dir >= ?3 AND dir < ?4"
    namespace = "FROM entry_dirs WHERE project_id = ?1 AND namespace = ?2"
    first = f"{namespace} LIMIT (SELECT cap FROM r)"  # a few times the prefix's directories
    under, cap, total, seen = conn.execute(
        "WITH r AS (SELECT coalesce(sum(entries), 0) AS under, 8 * count(*) + 64 AS cap "
        f"{namespace} AND {in_range}) SELECT under, cap, "
        f"(SELECT coalesce(sum(entries), 0) FROM (SELECT entries {first})), "
        f"(SELECT count(*) FROM (SELECT 1 {first})) FROM r",
        (pid, ns, low) if high is None else (pid, ns, low, high),
    ).fetchone()
    return bool(seen < cap and under * under * _SELECTIVITY > wanted * total)


def page_where(
    entries: Mapping[str, StoredEntry], where: Condition, limit: int, offset: int
) -> dict[str, StoredEntry]:
    """The same page of `entries` (read by the caller), `where` tested in Python: for the
    versioned namespaces' rows (`memories`), and where SQLite lacks JSON1."""
    kept = [(path, entry) for path, entry in entries.items() if matches(where, path, entry)]
    return recent_page(kept, limit, offset)
