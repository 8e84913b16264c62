"""Every SQL statement of the PostgreSQL backends, as *plans* both drivers run.

A plan is a generator that yields `Query` objects and receives each one's rows (a list of
tuples, empty for statements without a result), then returns the operation's value. The sync
driver (`PostgresBackend`) and the async one (`AsyncPostgresBackend`) differ only in how they
execute a query, so the logic lives here once. Each plan runs inside one transaction of one
pooled connection whose `search_path` is the backend's schema. User input only ever travels
as parameters (`%s`), never in the SQL text.
"""

from __future__ import annotations

import re
import time
from collections.abc import Generator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from contextchef.store.backend import ListedEntry, SearchHit, StoredEntry, Transaction, Version
from contextchef.store.backends.sqlite._query import row_meta, split_meta

__all__ = ["Plan", "Query", "Raced", "Rows"]

Rows = list[tuple[Any, ...]]


@dataclass(frozen=True, slots=True)
class Query:
    """One statement and its parameters.

    `alone`: the plan's only statement. It runs in autocommit (one statement is atomic by
    itself), saving the BEGIN and COMMIT round trips; any other query runs inside the plan's
    transaction. `many`: `params` is a sequence of parameter tuples, run with `executemany`
    (pipelined: no round trip per row). `binary`: rows come in PostgreSQL's binary format (a
    `BYTEA` as its bytes, not as hex text to decode)."""

    sql: str
    params: Any = ()
    alone: bool = False
    many: bool = False
    binary: bool = False


def _only(sql: str, params: tuple[Any, ...] = ()) -> Query:
    """The plan's one statement (see `Query.alone`)."""
    return Query(sql, params, alone=True)


Plan = Generator[Query, Rows, Any]

_META = "meta, created_at, updated_at, accessed_at, bytes"
_ENTRY = f"content, {_META}"
_KEY = "project = %s AND namespace = %s AND path = %s"
_KEY_COLUMNS = "project, namespace, path"
_SCOPE = "project = %s AND namespace = %s"
_PREFIX = "starts_with(path, %s)"


_MARK = "\ue000"
_UNMARK = re.compile("\ue000([01])")


def encode(text: str) -> str:
    """`text` storable as PostgreSQL TEXT, which cannot hold NUL: NUL becomes U+E000 "0" and
    U+E000 itself U+E000 "1". Per character, so `encode(a) || encode(b) == encode(a + b)` and
    `append` stays one SQL concatenation."""
    if "\x00" not in text and _MARK not in text:
        return text
    return text.replace(_MARK, _MARK + "1").replace("\x00", _MARK + "0")


def decode(text: str) -> str:
    """The inverse of `encode`."""
    if _MARK not in text:
        return text
    return _UNMARK.sub(lambda m: "\x00" if m.group(1) == "0" else _MARK, text)


def _entry(row: tuple[Any, ...]) -> StoredEntry:
    return StoredEntry(decode(row[0]), row_meta(row))


def read(pid: str, ns: str, path: str) -> Plan:
    rows = yield _only(f"SELECT {_ENTRY} FROM entries WHERE {_KEY}", (pid, ns, path))
    return _entry(rows[0]) if rows else None


def exists(pid: str, ns: str, path: str) -> Plan:
    rows = yield _only(f"SELECT 1 FROM entries WHERE {_KEY}", (pid, ns, path))
    return bool(rows)


def _values(pid: str, ns: str, path: str, entry: StoredEntry) -> tuple[Any, ...]:
    meta, times = split_meta(entry.meta, ns, path)
    now = time.time()
    size = len(entry.content.encode("utf-8"))
    created = times.get("created_at")
    return (
        pid,
        ns,
        path,
        encode(entry.content),
        meta,
        created if created is not None else now,
        times.get("updated_at", now),
        times.get("accessed_at"),
        size,
        created,
    )


_INSERT = (
    "INSERT INTO entries(project, namespace, path, content, meta, created_at, updated_at, "
    "accessed_at, bytes) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s) "
)
_UPSERT = (
    f"{_INSERT}ON CONFLICT (project, namespace, path) DO UPDATE SET content = excluded.content, "
    "meta = excluded.meta, created_at = coalesce(%s, entries.created_at), "
    "updated_at = excluded.updated_at, "
    "accessed_at = coalesce(excluded.accessed_at, entries.accessed_at), "
    "bytes = excluded.bytes, version = entries.version + 1"
)


def write(pid: str, ns: str, path: str, entry: StoredEntry) -> Plan:
    yield _only(_UPSERT, _values(pid, ns, path, entry))


def create(pid: str, ns: str, path: str, entry: StoredEntry) -> Plan:
    rows = yield _only(
        f"{_INSERT}ON CONFLICT DO NOTHING RETURNING 1", _values(pid, ns, path, entry)[:-1]
    )
    return bool(rows)


def read_versioned(pid: str, ns: str, path: str) -> Plan:
    rows = yield _only(f"SELECT version, {_ENTRY} FROM entries WHERE {_KEY}", (pid, ns, path))
    return (_entry(rows[0][1:]), str(rows[0][0])) if rows else None


def replace_if(pid: str, ns: str, path: str, entry: StoredEntry, expected: Version) -> Plan:
    """Compare and swap in one UPDATE: the row lock makes it exact against every writer."""
    if not expected.isdigit():
        return False
    values = _values(pid, ns, path, entry)
    rows = yield _only(
        "UPDATE entries SET content = %s, meta = %s, created_at = coalesce(%s, created_at), "
        "updated_at = %s, accessed_at = coalesce(%s, accessed_at), bytes = %s, "
        f"version = version + 1 WHERE {_KEY} AND version = %s RETURNING 1",
        (*values[3:5], values[9], values[6], values[7], values[8], pid, ns, path, int(expected)),
    )
    return bool(rows)


class Raced(Exception):
    """A `transact` found a path absent, and another writer created it before its insert: the
    transaction is rolled back and run again (the path then exists, and its row is locked)."""


def transact(pid: str, ns: str, paths: Sequence[str], change: Transaction) -> Plan:
    """Lock the rows of `paths` (`FOR UPDATE`, in path order, so two transactions never wait
    for each other), apply `change` and write its answer, in one transaction. Readers never
    wait: only writers of these rows queue behind it."""
    rows = yield Query(
        f"SELECT path, {_ENTRY} FROM entries WHERE {_SCOPE} AND path = ANY(%s::text[]) "
        "ORDER BY path FOR UPDATE",
        (pid, ns, sorted(set(paths))),
    )
    found = {str(row[0]): _entry(row[1:]) for row in rows}
    written = change({path: found.get(path) for path in paths})
    for path, entry in written.items():
        if entry is None:
            yield Query(f"DELETE FROM entries WHERE {_KEY}", (pid, ns, path))
        elif path in found:
            yield Query(_UPSERT, _values(pid, ns, path, entry))
        elif not (
            yield Query(
                f"{_INSERT}ON CONFLICT DO NOTHING RETURNING 1", _values(pid, ns, path, entry)[:-1]
            )
        ):
            raise Raced(path)
    return written


def delete(pid: str, ns: str, path: str) -> Plan:
    rows = yield _only(f"DELETE FROM entries WHERE {_KEY} RETURNING 1", (pid, ns, path))
    return bool(rows)


def append(pid: str, ns: str, path: str, content: str) -> Plan:
    """One upsert: concurrent appends serialise on the row, none is lost."""
    now = time.time()
    size = len(content.encode("utf-8"))
    yield _only(
        f"{_INSERT}ON CONFLICT (project, namespace, path) DO UPDATE SET "
        "content = entries.content || excluded.content, updated_at = excluded.updated_at, "
        "bytes = entries.bytes + excluded.bytes, version = entries.version + 1",
        (pid, ns, path, encode(content), "{}", now, now, None, size),
    )


def listing(pid: str, ns: str, prefix: str) -> Plan:
    rows = yield _only(
        f"SELECT path, {_META} FROM entries WHERE {_SCOPE} AND {_PREFIX} ORDER BY path",
        (pid, ns, prefix),
    )
    return [ListedEntry(row[0], row_meta(row)) for row in rows]


def read_all(pid: str, ns: str, prefix: str) -> Plan:
    rows = yield _only(
        f"SELECT path, {_ENTRY} FROM entries WHERE {_SCOPE} AND {_PREFIX} ORDER BY path",
        (pid, ns, prefix),
    )
    return {row[0]: _entry(row[1:]) for row in rows}


def read_last(pid: str, ns: str, prefix: str, count: int) -> Plan:
    """The last `count` entries under `prefix` by code point (`COLLATE "C"`, as the store sorts
    paths), in that order."""
    if count <= 0:
        return {}
    rows = yield _only(
        f"SELECT path, {_ENTRY} FROM entries WHERE {_SCOPE} AND {_PREFIX} "
        'ORDER BY path COLLATE "C" DESC LIMIT %s',
        (pid, ns, prefix, count),
    )
    return {row[0]: _entry(row[1:]) for row in reversed(rows)}


def read_recent(pid: str, ns: str, prefix: str, limit: int, offset: int) -> Plan:
    """A page of the entries under `prefix`, `updated_at` descending then path by code point."""
    if limit <= 0:
        return {}
    rows = yield _only(
        f"SELECT path, {_ENTRY} FROM entries WHERE {_SCOPE} AND {_PREFIX} "
        'ORDER BY updated_at DESC, path COLLATE "C" LIMIT %s OFFSET %s',
        (pid, ns, prefix, limit, offset),
    )
    return {row[0]: _entry(row[1:]) for row in rows}


def list_dirs(pid: str, ns: str, prefix: str) -> Plan:
    """The distinct directories (the path up to its last `/`, `""` at the root) under
    `prefix`, sorted by code point."""
    rows = yield _only(
        "SELECT DISTINCT coalesce(substring(path from '^(.*/)'), '') FROM entries "
        f"WHERE {_SCOPE} AND {_PREFIX}",
        (pid, ns, prefix),
    )
    return sorted(str(row[0]) for row in rows)


def search(pid: str, ns: str, query: str, prefix: str, limit: int | None) -> Plan:
    """`websearch_to_tsquery` over path and content, ranked by `ts_rank`, `ts_headline` snippets."""
    if limit is not None and limit <= 0:
        return []
    rows = yield _only(
        "SELECT path, ts_headline('simple', content, q, "
        '\'StartSel="",StopSel="",MaxWords=24,MinWords=8\'), ts_rank(tsv, q) AS rank, '
        f"{_META} FROM entries, websearch_to_tsquery('simple', %s) AS q "
        f"WHERE {_SCOPE} AND {_PREFIX} AND tsv @@ q "
        "ORDER BY rank DESC, updated_at DESC, path LIMIT %s",
        (encode(query), pid, ns, prefix, limit),
    )
    return [SearchHit(r[0], row_meta(r), decode(r[1]) or None, float(r[2])) for r in rows]


def versioned_namespaces(pid: str) -> Plan:
    """The namespaces the schema keeps versions of for project `pid` (see migration m004)."""
    rows = yield _only("SELECT namespace FROM versioned_namespaces WHERE project = %s", (pid,))
    return frozenset(str(row[0]) for row in rows)


def keep_versions(pid: str, ns: str) -> Plan:
    """Declare `ns` versioned for project `pid`. Its entries become the first version of their
    history; writers wait on a lock while that happens, so none of their writes goes
    unrecorded (once per project and namespace: a declared one returns at once)."""
    key = (pid, ns)
    rows = yield Query(
        "SELECT 1 FROM versioned_namespaces WHERE project = %s AND namespace = %s", key
    )
    if rows:
        return
    yield Query("LOCK TABLE entries IN SHARE MODE")
    rows = yield Query(
        "INSERT INTO versioned_namespaces (project, namespace, declared_at) "
        "VALUES (%s, %s, extract(epoch FROM clock_timestamp())) "
        "ON CONFLICT DO NOTHING RETURNING 1",
        key,
    )
    if rows:
        yield Query(
            "INSERT INTO memory_versions (project, namespace, path, version, content, meta, "
            "created_at, updated_at, accessed_at, bytes, recorded_at) "
            "SELECT project, namespace, path, version, content, meta, created_at, updated_at, "
            "accessed_at, bytes, extract(epoch FROM clock_timestamp()) FROM entries "
            f"WHERE {_SCOPE} ORDER BY path",
            key,
        )


def history(pid: str, ns: str, path: str) -> Plan:
    """Every recorded version of `ns/path`, oldest first (see migration m004), each with
    `recorded_at` and, when they apply, `superseded_at` and `deleted_at` in its meta."""
    rows = yield _only(
        f"SELECT recorded_at, superseded_at, deleted_at, {_ENTRY} FROM memory_versions "
        "WHERE project = %s AND namespace = %s AND path = %s ORDER BY id",
        (pid, ns, path),
    )
    versions = []
    for recorded, superseded, deleted, *entry in rows:
        version = _entry(tuple(entry))
        meta = dict(version.meta, recorded_at=recorded)
        if superseded is not None:
            meta["superseded_at"] = superseded
        if deleted is not None:
            meta["deleted_at"] = deleted
        versions.append(StoredEntry(version.content, meta))
    return versions


def inventory() -> Plan:
    """`(project, namespace)` of every namespace holding entries, in every project."""
    rows = yield _only("SELECT DISTINCT project, namespace FROM entries ORDER BY 1, 2")
    return [(str(r[0]), str(r[1])) for r in rows]


def touch(pid: str, ns: str, path: str, accessed_at: float) -> Plan:
    """Record a read time, unless a writer holds the row right now (`SKIP LOCKED`): a read
    never waits for a writer; the time is then lost, which eviction tolerates."""
    yield _only(
        f"UPDATE entries SET accessed_at = %s WHERE ({_KEY_COLUMNS}) IN "
        f"(SELECT {_KEY_COLUMNS} FROM entries WHERE {_KEY} FOR NO KEY UPDATE SKIP LOCKED)",
        (accessed_at, pid, ns, path),
    )


def restore(pid: str, ns: str, snapshot: Mapping[str, StoredEntry]) -> Plan:
    """Replace the namespace's entries by `snapshot` (one transaction: all or nothing)."""
    yield Query(
        f"DELETE FROM entries WHERE {_SCOPE} AND NOT (path = ANY(%s::text[]))",
        (pid, ns, list(snapshot)),
    )
    for path, entry in snapshot.items():
        yield Query(_UPSERT, _values(pid, ns, path, entry))


def write_many(pid: str, ns: str, entries: Mapping[str, StoredEntry]) -> Plan:
    """Every entry written by one pipelined `executemany` in one transaction."""
    if entries:
        values = [_values(pid, ns, path, entry) for path, entry in entries.items()]
        yield Query(_UPSERT, values, many=True)
