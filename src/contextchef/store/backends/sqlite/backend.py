"""`SQLiteBackend`: the embedded default store, one shared database file per machine.

Every entry is scoped to the backend's project, so two projects never see each other's entries
while a clone of the same repository shares them. Entries are rows of `entries`, overwritten
and deleted in place, except in the *versioned namespaces* the store declares
(`keep_versions`): the database records each one in `versioned_namespaces` and serves it from
the `memories` table (see _versioned.py): the same protocol, but every change is a new version
(the old one kept through `superseded_by`), a delete is a soft delete, every mutation is logged
in `memory_log`, and `history` returns a key's versions. Declarations are per project. The
project's versioned namespaces are read when the project is resolved and again in every write
transaction, so a declaration made by another process is honoured by this one's next write
(its reads follow from then on).

Meta: `created_at`, `updated_at`, `accessed_at` and `bytes` are columns (`bytes` is always the
UTF-8 length of the content; `accessed_at` lives in the small `entry_access` table, so a read
never rewrites the entry's row); every other key is kept as JSON and round-trips. A write that
gives no `created_at` keeps the existing one; `accessed_at` only changes through `touch` or an
explicit value. Search is FTS5 over path and content: each word of the query is quoted (so
`- : * ( "` are plain text) and matched as a prefix, all words must match, ranked by bm25 (the
hit's `score` is `-bm25`, higher is better). `get_physical_path` returns None: entries are not
files. One connection per backend, guarded by a lock; `batch()` groups writes in one transaction.

Atomic commands, across threads and processes (see _atomic.py): `create` is create-if-absent,
`replace_if` re-reads the version inside `BEGIN IMMEDIATE` and `transact` reads, computes and
writes inside one (so concurrent edits queue on the write lock instead of failing); in
`memories` the version is the current row's id and `create` checks and inserts inside one write
transaction.

While open, a backend holds a shared lock on `<db>.lock` (locking.py), so `db repair`, `restore`
and `migrate` refuse to replace the file under it, and a newer build refuses to migrate it on
open (guard.py): a process that has the database open keeps the schema it opened. Reads never
wait for the write lock: `touch` (the access time a `get` records for eviction) writes only if
the lock is free right now, and otherwise keeps the time in memory and writes it with the
backend's next write transaction (or at `close`; see _access.py). A `Store` calls `touch` only
when it flushes the read times it keeps (store/pending.py), so a `Store.get` is one SELECT.
"""

from __future__ import annotations

import builtins
import logging
import os
import sqlite3
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from contextchef.errors import StoreCapabilityError, StoreError
from contextchef.store.backend import (
    CAPABILITIES,
    ListedEntry,
    SearchHit,
    StoredEntry,
    Transaction,
    Version,
)
from contextchef.store.backends.sqlite._access import AccessTimes
from contextchef.store.backends.sqlite._atomic import (
    ENTRY_FROM,
    insert_if_absent,
    row_version,
    versioned_row,
)
from contextchef.store.backends.sqlite._entries import append_entry, restore_entries, upsert_entry
from contextchef.store.backends.sqlite._query import (
    fts_query,
    prefix_bounds,
    row_meta,
    search_entries,
    split_meta,
)
from contextchef.store.backends.sqlite._vectors import (
    VectorCache,
    delete_vectors,
    nearest_vectors,
    put_vectors,
)
from contextchef.store.backends.sqlite._versioned import VersionedTable, versioned_namespaces
from contextchef.store.backends.sqlite.connection import translate_errors, write_transaction
from contextchef.store.backends.sqlite.guard import open_for_use
from contextchef.store.backends.sqlite.identity import (
    ProjectRef,
    explicit_identity,
    project_for_identity,
    resolve_project,
)
from contextchef.store.backends.sqlite.migrations import open_database
from contextchef.store.backends.sqlite.private import make_private_dirs
from contextchef.store.datadir import default_database_path
from contextchef.store.recent import recency_key

__all__ = ["SQLiteBackend", "fts_query", "prefix_bounds"]

log = logging.getLogger("contextchef.store.backends.sqlite.backend")

_ENTRY = "e.content, e.meta, e.created_at, e.updated_at, a.accessed_at, e.bytes"
_LISTED = "e.path, e.meta, e.created_at, e.updated_at, a.accessed_at, e.bytes"
_SCOPE = "project_id = ? AND namespace = ?"
_SCOPE_E = "e.project_id = ? AND e.namespace = ?"
_FAILED: Any = object()
_READ = f"SELECT {_ENTRY} FROM {ENTRY_FROM} WHERE {_SCOPE_E} AND e.path = ?"


class SQLiteBackend:
    """The full `StorageBackend` protocol over one SQLite file: every capability except
    `get_physical_path`, and `history` for the versioned namespaces.

    Args:
        path: the database file; default: `context.db` in the data directory
            (`CONTEXTCHEF_HOME`, else the platform's user data directory).
        project: a directory whose project identity is resolved (see identity.py), or an explicit
            identity string such as `"git:abc123"` or `"team:docs"` (a scheme of 2 or more
            characters: one letter is a Windows drive); default: the project of the working
            directory at construction, resolved on first use.
        allow_home_project: let the home directory count as a project.
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        project: str | os.PathLike[str] | None = None,
        allow_home_project: bool = False,
    ) -> None:
        self.path = Path(path).expanduser() if path is not None else default_database_path()
        self._project_spec: str | os.PathLike[str] = Path.cwd() if project is None else project
        self._allow_home = allow_home_project
        self._lock = threading.RLock()
        self._project: ProjectRef | None = None
        self._abandoned: list[sqlite3.Connection] = []
        try:
            make_private_dirs(self.path.parent)
        except OSError as exc:
            raise StoreError(f"cannot create the directory {self.path.parent}: {exc}") from exc
        self._hold, self._conn = open_for_use(self.path)  # migrates only if no one else uses it
        self._pid = os.getpid()
        self._versions = VersionedTable()
        self._versioned: frozenset[str] = frozenset()  # the project's, once it is resolved
        self._access = AccessTimes(self._versions, lambda ns: ns in self._versioned)
        self._vectors = VectorCache()  # a semantic index's vectors, read once per change

    # -- plumbing ---------------------------------------------------------------------------

    def close(self) -> None:
        """Write pending access times if the lock is free, close; the backend is unusable after."""
        with self._lock:
            try:
                if self._access and os.getpid() == self._pid and self._project is not None:
                    with translate_errors("recording access times"):
                        self._access.flush_if_free(self._conn, self._project.id)
            except StoreError as exc:
                log.debug("access times not recorded at close: %s", exc)
            finally:
                self._conn.close()
                self._hold.release()

    def __enter__(self) -> SQLiteBackend:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"SQLiteBackend({str(self.path)!r})"

    @contextmanager
    def connection(
        self, doing: str = "using the store", *, ns: str | None = None, path: str | None = None
    ) -> Iterator[sqlite3.Connection]:
        """The connection, held under the backend's lock, with SQLite errors translated."""
        with self._lock:
            if os.getpid() != self._pid:
                # A forked child must not use (nor close) the parent's connection.
                self._abandoned.append(self._conn)
                self._conn = open_database(self.path)
                self._pid = os.getpid()
            try:
                with translate_errors(doing, namespace=ns, path=path):
                    yield self._conn
            except UnicodeEncodeError as exc:
                raise StoreError(f"{doing}: {exc}", namespace=ns, path=path) from exc

    @contextmanager
    def _writing(
        self, doing: str, *, ns: str | None = None, path: str | None = None
    ) -> Iterator[sqlite3.Connection]:
        with self.connection(doing, ns=ns, path=path) as conn, write_transaction(conn):
            if self._project is not None:  # another process may have declared one since
                self._versioned = versioned_namespaces(conn, self._project.id)
            if self._access and self._project is not None:
                self._access.flush(conn, self._project.id)
            yield conn

    @contextmanager
    def batch(self) -> Iterator[None]:
        """Group writes into one transaction: all commit together or none does.

        Other threads of this process wait for the batch; other processes can still read.
        A batch inside a batch joins the outer one.
        """
        with self._writing("running a batch"):
            yield

    @property
    def project(self) -> ProjectRef:
        """The project this backend's entries belong to (resolved on first use)."""
        if self._project is None:
            with self.connection("resolving the project") as conn:
                spec = self._project_spec
                identity = explicit_identity(spec)
                if identity is not None:
                    self._project = project_for_identity(conn, identity)
                else:
                    self._project = resolve_project(conn, spec, allow_home=self._allow_home)
                self._versioned = versioned_namespaces(conn, self._project.id)
        return self._project

    # -- required protocol ------------------------------------------------------------------

    def read(self, ns: str, path: str) -> StoredEntry | None:
        pid = self.project.id
        if ns not in self._versioned and os.getpid() == self._pid:
            # The hottest read: one SELECT under the lock, no context managers; an error is
            # left to the path below, which runs the same read and translates it.
            with self._lock:
                try:
                    row = self._conn.execute(_READ, (pid, ns, path)).fetchone()
                except (sqlite3.Error, UnicodeEncodeError):
                    row = _FAILED
            if row is not _FAILED:
                return None if row is None else StoredEntry(row[0], row_meta(row))
        with self.connection(f"reading {ns}/{path}", ns=ns, path=path) as conn:
            return self._read(conn, pid, ns, path)

    def _read(self, conn: sqlite3.Connection, pid: int, ns: str, path: str) -> StoredEntry | None:
        if ns in self._versioned:
            return self._versions.read(conn, pid, ns, path)
        row = conn.execute(_READ, (pid, ns, path)).fetchone()
        return None if row is None else StoredEntry(row[0], row_meta(row))

    def write(self, ns: str, path: str, entry: StoredEntry) -> None:
        meta, times = split_meta(entry.meta, ns, path)
        pid = self.project.id
        with self._writing(f"writing {ns}/{path}", ns=ns, path=path) as conn:
            if ns in self._versioned:
                self._versions.write(conn, pid, ns, path, entry.content, entry.meta)
                return
            upsert_entry(conn, pid, ns, path, entry.content, meta, times)

    def create(self, ns: str, path: str, entry: StoredEntry) -> bool:
        """Write `path` only when absent, in one statement; True when this call created it."""
        meta, times = split_meta(entry.meta, ns, path)
        pid = self.project.id
        with self._writing(f"creating {ns}/{path}", ns=ns, path=path) as conn:
            if ns in self._versioned:
                if self._versions.exists(conn, pid, ns, path):
                    return False
                self._versions.write(conn, pid, ns, path, entry.content, entry.meta)
                return True
            return insert_if_absent(conn, pid, ns, path, entry.content, meta, times)

    def read_versioned(self, ns: str, path: str) -> tuple[StoredEntry, Version] | None:
        """The entry and its version token (see the module docstring), or None."""
        pid = self.project.id
        with self.connection(f"reading {ns}/{path}", ns=ns, path=path) as conn:
            if ns in self._versioned:
                return self._versions.read_versioned(conn, pid, ns, path)
            row = versioned_row(conn, pid, ns, path)
        return None if row is None else (StoredEntry(row[1], row_meta(row)), row_version(row))

    def replace_if(self, ns: str, path: str, entry: StoredEntry, expected: Version) -> bool:
        """Write `entry` only when `path` still has version `expected`, under the write lock."""
        meta, times = split_meta(entry.meta, ns, path)
        pid = self.project.id
        with self._writing(f"writing {ns}/{path}", ns=ns, path=path) as conn:
            if ns in self._versioned:
                return self._versions.replace_if(conn, pid, ns, path, entry, expected)
            row = versioned_row(conn, pid, ns, path)
            if row is None or row_version(row) != expected:
                return False
            upsert_entry(conn, pid, ns, path, entry.content, meta, times)
        return True

    def transact(
        self, ns: str, paths: Sequence[str], change: Transaction
    ) -> Mapping[str, StoredEntry | None]:
        """Read `paths`, apply `change`, write its answer, inside one `BEGIN IMMEDIATE`."""
        pid = self.project.id
        with self._writing(f"editing {ns}/{paths[0]}", ns=ns, path=paths[0]) as conn:
            written = change({path: self._read(conn, pid, ns, path) for path in paths})
            for path, entry in written.items():
                if entry is None:
                    self._delete(conn, pid, ns, path)
                elif ns in self._versioned:
                    self._versions.write(conn, pid, ns, path, entry.content, entry.meta)
                else:
                    meta, times = split_meta(entry.meta, ns, path)
                    upsert_entry(conn, pid, ns, path, entry.content, meta, times)
        return written

    def delete(self, ns: str, path: str) -> bool:
        pid = self.project.id
        with self._writing(f"deleting {ns}/{path}", ns=ns, path=path) as conn:
            return self._delete(conn, pid, ns, path)

    def _delete(self, conn: sqlite3.Connection, pid: int, ns: str, path: str) -> bool:
        if ns in self._versioned:
            return self._versions.delete(conn, pid, ns, path)
        cursor = conn.execute(f"DELETE FROM entries WHERE {_SCOPE} AND path = ?", (pid, ns, path))
        return cursor.rowcount > 0

    def _rows(
        self, ns: str, prefix: str, columns: str, doing: str, last: int | None = None
    ) -> builtins.list[Any]:
        """The rows under `prefix` in path order; with `last`, only the last `last` of them
        (read backwards along the primary key, so the cost is theirs alone)."""
        pid = self.project.id
        low, high = prefix_bounds(prefix)
        bound = "" if high is None else " AND e.path < ?"
        params: tuple[Any, ...] = (pid, ns, low) if high is None else (pid, ns, low, high)
        order = "ORDER BY e.path" if last is None else "ORDER BY e.path DESC LIMIT ?"
        sql = f"SELECT {columns} FROM {ENTRY_FROM} WHERE {_SCOPE_E} AND e.path >= ?{bound} {order}"
        if last is not None:
            params = (*params, last)
        with self.connection(doing, ns=ns) as conn:
            rows = conn.execute(sql, params).fetchall()
        return rows if last is None else rows[::-1]

    def list(self, ns: str, prefix: str = "") -> builtins.list[ListedEntry]:
        pid = self.project.id  # (resolving the project reads its versioned namespaces)
        if ns in self._versioned:
            with self.connection(f"listing {ns}/{prefix}", ns=ns) as conn:
                return self._versions.list(conn, pid, ns, prefix)
        rows = self._rows(ns, prefix, _LISTED, f"listing {ns}/{prefix}")
        return [ListedEntry(row[0], row_meta(row)) for row in rows]

    # -- capabilities -----------------------------------------------------------------------

    def supports(self, capability: str, ns: str) -> bool:
        """Every capability but `get_physical_path` (entries are rows, not files); `history`
        only for the versioned namespaces."""
        if capability == "history":
            self.project.id  # noqa: B018 (resolving the project reads its versioned namespaces)
            return ns in self._versioned
        return capability in CAPABILITIES and capability != "get_physical_path"

    def keep_versions(self, ns: str) -> None:
        """Keep every version of `ns` from now on, for every opener of this database: the name
        goes to `versioned_namespaces`, the namespace's entries move to `memories`."""
        pid = self.project.id
        if ns in self._versioned:
            return
        with self._writing(f"keeping versions of {ns}", ns=ns) as conn:
            self._versions.adopt(conn, pid, ns)
            self._versioned = self._versioned | {ns}

    def history(self, ns: str, path: str) -> builtins.list[StoredEntry]:
        """Every version of `ns/path`, oldest first, the current one (if any) last.

        Each version's meta is the entry's meta plus `recorded_at` (when the version was
        written) and, when they apply, `superseded_at` and `deleted_at`. Raises
        `StoreCapabilityError` for a namespace that is not versioned.
        """
        pid = self.project.id
        if ns not in self._versioned:
            raise StoreCapabilityError(ns, ["history"])
        with self.connection(f"reading the history of {ns}/{path}", ns=ns, path=path) as conn:
            return self._versions.history(conn, pid, ns, path)

    def read_all(self, ns: str, prefix: str = "") -> dict[str, StoredEntry]:
        pid = self.project.id
        if ns in self._versioned:
            with self.connection(f"reading {ns}/{prefix}*", ns=ns) as conn:
                return self._versions.read_all(conn, pid, ns, prefix)
        rows = self._rows(ns, prefix, f"e.path, {_ENTRY}", f"reading {ns}/{prefix}*")
        return {row[0]: StoredEntry(row[1], row_meta(row)) for row in rows}

    def read_last(self, ns: str, prefix: str, count: int) -> dict[str, StoredEntry]:
        if count <= 0:
            return {}
        self.project.id  # noqa: B018 (resolving the project reads its versioned namespaces)
        if ns in self._versioned:  # rows of `memories`: the generic way, on one connection
            every = self.read_all(ns, prefix)
            return {path: every[path] for path in sorted(every)[-count:]}
        doing = f"reading the last {count} of {ns}/{prefix}*"
        rows = self._rows(ns, prefix, f"e.path, {_ENTRY}", doing, last=count)
        return {row[0]: StoredEntry(row[1], row_meta(row)) for row in rows}

    def read_recent(self, ns: str, prefix: str, limit: int, offset: int) -> dict[str, StoredEntry]:
        if limit <= 0:
            return {}
        pid = self.project.id
        if ns in self._versioned:  # rows of `memories`: the prefix read, sorted
            ordered = sorted(self.read_all(ns, prefix).items(), key=recency_key)
            return dict(ordered[offset : offset + limit])
        low, high = prefix_bounds(prefix)
        bound = "" if high is None else " AND e.path < ?"
        params = (pid, ns, low) if high is None else (pid, ns, low, high)
        sql = (
            f"SELECT e.path, {_ENTRY} FROM {ENTRY_FROM} WHERE {_SCOPE_E} AND e.path >= ?{bound} "
            "ORDER BY e.updated_at DESC, e.path LIMIT ? OFFSET ?"
        )
        with self.connection(f"reading a page of {ns}/{prefix}*", ns=ns) as conn:
            rows = conn.execute(sql, (*params, limit, offset)).fetchall()
        return {row[0]: StoredEntry(row[1], row_meta(row)) for row in rows}

    def list_dirs(self, ns: str, prefix: str) -> builtins.list[str]:
        pid = self.project.id
        if ns in self._versioned:  # rows of `memories`: from the listing
            return sorted({p[: p.rfind("/") + 1] for p in (e.path for e in self.list(ns, prefix))})
        low, high = prefix_bounds(prefix)
        bound = "" if high is None else " AND path < ?"
        params = (pid, ns, low) if high is None else (pid, ns, low, high)
        # `rtrim(path, <path without its slashes>)` strips back to the last `/`: the directory.
        sql = (
            "SELECT DISTINCT rtrim(path, replace(path, '/', '')) FROM entries "
            f"WHERE {_SCOPE} AND path >= ?{bound}"
        )
        with self.connection(f"listing the directories of {ns}/{prefix}", ns=ns) as conn:
            return sorted(row[0] for row in conn.execute(sql, params))

    def exists(self, ns: str, path: str) -> bool:
        pid = self.project.id
        with self.connection(f"checking {ns}/{path}", ns=ns, path=path) as conn:
            if ns in self._versioned:
                return self._versions.exists(conn, pid, ns, path)
            row = conn.execute(
                f"SELECT 1 FROM entries WHERE {_SCOPE} AND path = ?", (pid, ns, path)
            ).fetchone()
        return row is not None

    def append(self, ns: str, path: str, content: str) -> None:
        pid = self.project.id
        with self._writing(f"appending to {ns}/{path}", ns=ns, path=path) as conn:
            if ns in self._versioned:
                self._versions.append(conn, pid, ns, path, content)
                return
            append_entry(conn, pid, ns, path, content)

    def search(
        self, ns: str, query: str, *, prefix: str = "", limit: int | None = None
    ) -> builtins.list[SearchHit]:
        match = fts_query(query)
        if match is None or (limit is not None and limit <= 0):
            return []
        pid = self.project.id
        with self.connection(f"searching {ns} for {query!r}", ns=ns) as conn:
            if ns in self._versioned:
                return self._versions.search(conn, pid, ns, query, prefix, limit)
            return search_entries(conn, pid, ns, match, prefix, limit)

    def snapshot(self, ns: str) -> dict[str, StoredEntry]:
        return self.read_all(ns)

    def restore(self, ns: str, snapshot: Mapping[str, StoredEntry]) -> None:
        """Make namespace `ns` hold exactly `snapshot`, atomically."""
        pid = self.project.id
        for path, entry in snapshot.items():
            split_meta(entry.meta, ns, path)  # refuse unserialisable meta before writing
        with self._writing(f"restoring {ns}", ns=ns) as conn:
            if ns in self._versioned:
                self._versions.restore(conn, pid, ns, snapshot)
            else:
                restore_entries(conn, pid, ns, snapshot)

    def put_vectors(self, ns: str, vectors: Mapping[str, Sequence[float]]) -> None:
        """Store a semantic index's vectors of `ns` (see `_vectors`)."""
        pid = self.project.id
        with self._writing(f"indexing {ns}", ns=ns) as conn:
            self._vectors.writes += 1
            put_vectors(conn, pid, ns, vectors)

    def delete_vectors(self, ns: str, paths: Sequence[str] | None = None) -> None:
        pid = self.project.id
        with self._writing(f"unindexing {ns}", ns=ns) as conn:
            self._vectors.writes += 1
            delete_vectors(conn, pid, ns, paths)

    def nearest(
        self,
        ns: str,
        vector: Sequence[float],
        *,
        metric: str = "cosine",
        prefix: str = "",
        limit: int | None = None,
    ) -> builtins.list[tuple[str, float]]:
        pid = self.project.id
        with self.connection(f"searching the vectors of {ns}", ns=ns) as conn:
            return nearest_vectors(conn, self._vectors, pid, ns, vector, metric, prefix, limit)

    def get_physical_path(self, ns: str, path: str) -> str | None:
        """None: an entry is a database row, not a file a tool could open."""
        del ns, path
        return None

    def touch(self, ns: str, path: str, accessed_at: float) -> None:
        """Record the last read time; a missing entry is ignored. Never touches the FTS index.

        Never waits for the write lock (see _access.py): when another writer holds it, the time
        is written with this backend's next write transaction, or at `close`.
        """
        pid = self.project.id
        with self.connection(f"touching {ns}/{path}", ns=ns, path=path) as conn:
            self._access.touch(conn, pid, ns, path, float(accessed_at))
