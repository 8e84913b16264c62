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
files. `batch()` groups writes in one transaction.

Atomic commands, across threads and processes: `create` is create-if-absent, `replace_if` and
`transact` run inside one `BEGIN IMMEDIATE` (so concurrent edits queue on the write lock instead
of failing); see _atomic.py, and _versioned.py for `memories`. What the backend holds open (one
connection under a lock, a hold on `<db>.lock`, the project) is `OpenDatabase` (_database.py).
Reads never wait for the write lock: `touch` writes an access time only when the lock is free,
else with the next write transaction or at `close` (_access.py); a `Store` calls it only when it
flushes its read times (store/pending.py), so a `Store.get` is one SELECT. A semantic index's
vectors are `IndexVectors` (_vectors.py).
"""

from __future__ import annotations

import builtins
import os
import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from contextchef.errors import StoreCapabilityError
from contextchef.store.backend import (
    CAPABILITIES,
    ListedEntry,
    SearchHit,
    StoredEntry,
    Transaction,
    Version,
)
from contextchef.store.backends.sqlite._atomic import (
    insert_if_absent,
    read_with_version,
    replace_entry_if,
)
from contextchef.store.backends.sqlite._database import OpenDatabase
from contextchef.store.backends.sqlite._entries import (
    append_entry,
    delete_entry,
    restore_entries,
    upsert_entry,
)
from contextchef.store.backends.sqlite._query import (
    fts_query,
    prefix_bounds,
    row_meta,
    search_entries,
    split_meta,
)
from contextchef.store.backends.sqlite._reads import (
    READ_ENTRY,
    entry_dirs,
    entry_exists,
    list_entries,
    read_entries,
    read_entry,
    recent_entries,
)
from contextchef.store.backends.sqlite._vectors import IndexVectors
from contextchef.store.backends.sqlite._where import (
    has_json1,
    page_where,
    recent_entries_where,
)
from contextchef.store.backends.sqlite.identity import ProjectRef
from contextchef.store.datadir import default_database_path
from contextchef.store.recent import recent_page
from contextchef.store.where import Condition

__all__ = ["SQLiteBackend", "fts_query", "prefix_bounds"]

_FAILED: Any = object()


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
        spec: str | os.PathLike[str] = Path.cwd() if project is None else project
        self._db = OpenDatabase(self.path, spec, allow_home_project=allow_home_project)
        self._vectors = IndexVectors(self._db, lambda: self.project.id)  # see `_vectors`

    # -- plumbing ---------------------------------------------------------------------------

    def close(self) -> None:
        """Write pending access times if the lock is free, close; the backend is unusable after."""
        self._db.close()

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
        with self._db.connection(doing, ns=ns, path=path) as conn:
            yield conn

    @contextmanager
    def batch(self) -> Iterator[None]:
        """Group writes into one transaction: all commit together or none does.

        Other threads of this process wait for the batch; other processes can still read.
        A batch inside a batch joins the outer one.
        """
        with self._db.writing("running a batch"):
            yield

    @property
    def project(self) -> ProjectRef:
        """The project this backend's entries belong to (resolved on first use)."""
        project = self._db.project
        return project if project is not None else self._db.resolve_project()

    # -- required protocol ------------------------------------------------------------------

    def read(self, ns: str, path: str) -> StoredEntry | None:
        pid = self.project.id
        db = self._db
        if ns not in db.versioned and os.getpid() == db.pid:
            # The hottest read: one SELECT under the lock, no context managers; an error is
            # left to the path below, which runs the same read and translates it.
            with db.lock:
                try:
                    row = db.conn.execute(READ_ENTRY, (pid, ns, path)).fetchone()
                except (sqlite3.Error, UnicodeEncodeError):
                    row = _FAILED
            if row is not _FAILED:
                return None if row is None else StoredEntry(row[0], row_meta(row))
        with self.connection(f"reading {ns}/{path}", ns=ns, path=path) as conn:
            return self._read(conn, pid, ns, path)

    def _read(self, conn: sqlite3.Connection, pid: int, ns: str, path: str) -> StoredEntry | None:
        if ns in self._db.versioned:
            return self._db.versions.read(conn, pid, ns, path)
        return read_entry(conn, pid, ns, path)

    def write(self, ns: str, path: str, entry: StoredEntry) -> None:
        meta, times = split_meta(entry.meta, ns, path)
        pid = self.project.id
        with self._db.writing(f"writing {ns}/{path}", ns=ns, path=path) as conn:
            if ns in self._db.versioned:
                self._db.versions.write(conn, pid, ns, path, entry.content, entry.meta)
                return
            upsert_entry(conn, pid, ns, path, entry.content, meta, times)

    def create(self, ns: str, path: str, entry: StoredEntry) -> bool:
        """Write `path` only when absent, in one statement; True when this call created it."""
        meta, times = split_meta(entry.meta, ns, path)
        pid = self.project.id
        with self._db.writing(f"creating {ns}/{path}", ns=ns, path=path) as conn:
            if ns in self._db.versioned:
                return self._db.versions.create(conn, pid, ns, path, entry)
            return insert_if_absent(conn, pid, ns, path, entry.content, meta, times)

    def read_versioned(self, ns: str, path: str) -> tuple[StoredEntry, Version] | None:
        """The entry and its version token (see the module docstring), or None."""
        pid = self.project.id
        with self.connection(f"reading {ns}/{path}", ns=ns, path=path) as conn:
            if ns in self._db.versioned:
                return self._db.versions.read_versioned(conn, pid, ns, path)
            return read_with_version(conn, pid, ns, path)

    def replace_if(self, ns: str, path: str, entry: StoredEntry, expected: Version) -> bool:
        """Write `entry` only when `path` still has version `expected`, under the write lock."""
        split = split_meta(entry.meta, ns, path)
        pid = self.project.id
        with self._db.writing(f"writing {ns}/{path}", ns=ns, path=path) as conn:
            if ns in self._db.versioned:
                return self._db.versions.replace_if(conn, pid, ns, path, entry, expected)
            return replace_entry_if(conn, pid, ns, path, entry.content, split, expected)

    def transact(
        self, ns: str, paths: Sequence[str], change: Transaction
    ) -> Mapping[str, StoredEntry | None]:
        """Read `paths`, apply `change`, write its answer, inside one `BEGIN IMMEDIATE`."""
        pid = self.project.id
        with self._db.writing(f"editing {ns}/{paths[0]}", ns=ns, path=paths[0]) as conn:
            written = change({path: self._read(conn, pid, ns, path) for path in paths})
            for path, entry in written.items():
                if entry is None:
                    self._delete(conn, pid, ns, path)
                elif ns in self._db.versioned:
                    self._db.versions.write(conn, pid, ns, path, entry.content, entry.meta)
                else:
                    meta, times = split_meta(entry.meta, ns, path)
                    upsert_entry(conn, pid, ns, path, entry.content, meta, times)
        return written

    def delete(self, ns: str, path: str) -> bool:
        pid = self.project.id
        with self._db.writing(f"deleting {ns}/{path}", ns=ns, path=path) as conn:
            return self._delete(conn, pid, ns, path)

    def _delete(self, conn: sqlite3.Connection, pid: int, ns: str, path: str) -> bool:
        if ns in self._db.versioned:
            return self._db.versions.delete(conn, pid, ns, path)
        return delete_entry(conn, pid, ns, path)

    def list(self, ns: str, prefix: str = "") -> builtins.list[ListedEntry]:
        pid = self.project.id  # (resolving the project reads its versioned namespaces)
        with self.connection(f"listing {ns}/{prefix}", ns=ns) as conn:
            if ns in self._db.versioned:
                return self._db.versions.list(conn, pid, ns, prefix)
            return list_entries(conn, pid, ns, prefix)

    # -- capabilities -----------------------------------------------------------------------

    def supports(self, capability: str, ns: str) -> bool:
        """Every capability but `get_physical_path` (entries are rows, not files); `history`
        only for the versioned namespaces, `read_recent_where` only for the others (where
        SQLite has JSON1)."""
        if capability in ("history", "read_recent_where"):
            self.project.id  # noqa: B018 (resolving the project reads its versioned namespaces)
            versioned = ns in self._db.versioned
            return versioned if capability == "history" else not versioned and has_json1()
        return capability in CAPABILITIES and capability != "get_physical_path"

    def keep_versions(self, ns: str) -> None:
        """Keep every version of `ns` from now on, for every opener of this database: the name
        goes to `versioned_namespaces`, the namespace's entries move to `memories`."""
        pid = self.project.id
        if ns in self._db.versioned:
            return
        with self._db.writing(f"keeping versions of {ns}", ns=ns) as conn:
            self._db.versions.adopt(conn, pid, ns)
            self._db.versioned = self._db.versioned | {ns}

    def history(self, ns: str, path: str) -> builtins.list[StoredEntry]:
        """Every version of `ns/path`, oldest first, the current one (if any) last.

        Each version's meta is the entry's meta plus `recorded_at` (when the version was
        written) and, when they apply, `superseded_at` and `deleted_at`. Raises
        `StoreCapabilityError` for a namespace that is not versioned.
        """
        pid = self.project.id
        if ns not in self._db.versioned:
            raise StoreCapabilityError(ns, ["history"])
        with self.connection(f"reading the history of {ns}/{path}", ns=ns, path=path) as conn:
            return self._db.versions.history(conn, pid, ns, path)

    def read_all(self, ns: str, prefix: str = "") -> dict[str, StoredEntry]:
        pid = self.project.id
        with self.connection(f"reading {ns}/{prefix}*", ns=ns) as conn:
            if ns in self._db.versioned:
                return self._db.versions.read_all(conn, pid, ns, prefix)
            return read_entries(conn, pid, ns, prefix)

    def read_last(self, ns: str, prefix: str, count: int) -> dict[str, StoredEntry]:
        if count <= 0:
            return {}
        pid = self.project.id  # (resolving the project reads its versioned namespaces)
        if ns in self._db.versioned:  # rows of `memories`: the generic way, on one connection
            every = self.read_all(ns, prefix)
            return {path: every[path] for path in sorted(every)[-count:]}
        with self.connection(f"reading the last {count} of {ns}/{prefix}*", ns=ns) as conn:
            return read_entries(conn, pid, ns, prefix, last=count)

    def read_recent(self, ns: str, prefix: str, limit: int, offset: int) -> dict[str, StoredEntry]:
        if limit <= 0:
            return {}
        pid = self.project.id
        if ns in self._db.versioned:  # rows of `memories`: the prefix read, sorted
            return recent_page(self.read_all(ns, prefix).items(), limit, offset)
        with self.connection(f"reading a page of {ns}/{prefix}*", ns=ns) as conn:
            return recent_entries(conn, pid, ns, prefix, limit, offset)

    def read_recent_where(
        self, ns: str, prefix: str, where: Condition, limit: int, offset: int
    ) -> dict[str, StoredEntry]:
        """`read_recent` of the entries matching `where`, tested in SQL (see `_where`)."""
        if limit <= 0:
            return {}
        pid = self.project.id
        if ns in self._db.versioned or not has_json1():  # tested in Python
            return page_where(self.read_all(ns, prefix), where, limit, offset)
        with self.connection(f"reading a filtered page of {ns}/{prefix}*", ns=ns) as conn:
            return recent_entries_where(conn, pid, ns, prefix, where, limit, offset)

    def list_dirs(self, ns: str, prefix: str) -> builtins.list[str]:
        pid = self.project.id
        if ns in self._db.versioned:  # rows of `memories`: from the listing
            return sorted({p[: p.rfind("/") + 1] for p in (e.path for e in self.list(ns, prefix))})
        with self.connection(f"listing the directories of {ns}/{prefix}", ns=ns) as conn:
            return entry_dirs(conn, pid, ns, prefix)

    def exists(self, ns: str, path: str) -> bool:
        pid = self.project.id
        with self.connection(f"checking {ns}/{path}", ns=ns, path=path) as conn:
            if ns in self._db.versioned:
                return self._db.versions.exists(conn, pid, ns, path)
            return entry_exists(conn, pid, ns, path)

    def append(self, ns: str, path: str, content: str) -> None:
        pid = self.project.id
        with self._db.writing(f"appending to {ns}/{path}", ns=ns, path=path) as conn:
            if ns in self._db.versioned:
                self._db.versions.append(conn, pid, ns, path, content)
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
            if ns in self._db.versioned:
                return self._db.versions.search(conn, pid, ns, query, prefix, limit)
            return search_entries(conn, pid, ns, match, prefix, limit)

    def snapshot(self, ns: str) -> dict[str, StoredEntry]:
        return self.read_all(ns)

    def restore(self, ns: str, snapshot: Mapping[str, StoredEntry]) -> None:
        """Make namespace `ns` hold exactly `snapshot`, atomically."""
        pid = self.project.id
        for path, entry in snapshot.items():
            split_meta(entry.meta, ns, path)  # refuse unserialisable meta before writing
        with self._db.writing(f"restoring {ns}", ns=ns) as conn:
            if ns in self._db.versioned:
                self._db.versions.restore(conn, pid, ns, snapshot)
            else:
                restore_entries(conn, pid, ns, snapshot)

    def put_vectors(self, ns: str, vectors: Mapping[str, Sequence[float]]) -> None:
        """Store a semantic index's vectors of `ns` (see `_vectors`)."""
        self._vectors.put(ns, vectors)

    def delete_vectors(self, ns: str, paths: Sequence[str] | None = None) -> None:
        self._vectors.delete(ns, paths)

    def nearest(
        self,
        ns: str,
        vector: Sequence[float],
        *,
        metric: str = "cosine",
        prefix: str = "",
        limit: int | None = None,
    ) -> builtins.list[tuple[str, float]]:
        return self._vectors.nearest(ns, vector, metric, prefix, limit)

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
            self._db.access.touch(conn, pid, ns, path, float(accessed_at))
