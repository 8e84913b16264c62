"""`OpenDatabase`: what one `SQLiteBackend` holds open, and how it reaches the connection.

One connection per backend, guarded by a re-entrant lock; a forked child sets the parent's
connection aside (never using nor closing it) and opens its own. While open, the backend holds
a shared lock on `<db>.lock` (locking.py), so `db repair`, `restore` and `migrate` refuse to
replace the file under it, and a newer build refuses to migrate it on open (guard.py): a
process that has the database open keeps the schema it opened.

The project is resolved on first use, and its versioned namespaces read then and again in
every write transaction, so a declaration made by another process is honoured by this one's
next write. Every write transaction also first writes the access times `touch` kept in memory
because the write lock was taken (see _access.py); `close` writes them if the lock is free.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from contextchef.errors import StoreError
from contextchef.store.backends.sqlite._access import AccessTimes
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

__all__ = ["OpenDatabase"]

log = logging.getLogger("contextchef.store.backends.sqlite._database")


class OpenDatabase:
    """The connection, its lock, the `<db>.lock` hold, the project and its versioned namespaces
    (`versioned`, served by `versions`), and the access times waiting to be written."""

    def __init__(
        self, path: Path, project: str | os.PathLike[str], *, allow_home_project: bool
    ) -> None:
        self.path = path
        self._project_spec = project
        self._allow_home = allow_home_project
        self.lock = threading.RLock()
        self.project: ProjectRef | None = None
        self.abandoned: list[sqlite3.Connection] = []
        try:
            make_private_dirs(path.parent)
        except OSError as exc:
            raise StoreError(f"cannot create the directory {path.parent}: {exc}") from exc
        self._hold, self.conn = open_for_use(path)  # migrates only if no one else uses it
        self.pid = os.getpid()
        self.versions = VersionedTable()
        self.versioned: frozenset[str] = frozenset()  # the project's, once it is resolved
        self.access = AccessTimes(self.versions, lambda ns: ns in self.versioned)

    def close(self) -> None:
        """Write pending access times if the lock is free, close; unusable after."""
        with self.lock:
            try:
                if self.access and os.getpid() == self.pid and self.project is not None:
                    with translate_errors("recording access times"):
                        self.access.flush_if_free(self.conn, self.project.id)
            except StoreError as exc:
                log.debug("access times not recorded at close: %s", exc)
            finally:
                self.conn.close()
                self._hold.release()

    @contextmanager
    def connection(
        self, doing: str, *, ns: str | None = None, path: str | None = None
    ) -> Iterator[sqlite3.Connection]:
        """The connection, held under the lock, with SQLite errors translated."""
        with self.lock:
            if os.getpid() != self.pid:
                # A forked child must not use (nor close) the parent's connection.
                self.abandoned.append(self.conn)
                self.conn = open_database(self.path)
                self.pid = os.getpid()
            try:
                with translate_errors(doing, namespace=ns, path=path):
                    yield self.conn
            except UnicodeEncodeError as exc:
                raise StoreError(f"{doing}: {exc}", namespace=ns, path=path) from exc

    @contextmanager
    def writing(
        self, doing: str, *, ns: str | None = None, path: str | None = None
    ) -> Iterator[sqlite3.Connection]:
        """`connection` inside `BEGIN IMMEDIATE`, caught up with other processes first."""
        with self.connection(doing, ns=ns, path=path) as conn, write_transaction(conn):
            if self.project is not None:  # another process may have declared one since
                self.versioned = versioned_namespaces(conn, self.project.id)
            if self.access and self.project is not None:
                self.access.flush(conn, self.project.id)
            yield conn

    def resolve_project(self) -> ProjectRef:
        """The project (resolved on first use, when its versioned namespaces are read)."""
        if self.project is None:
            with self.connection("resolving the project") as conn:
                spec = self._project_spec
                identity = explicit_identity(spec)
                if identity is not None:
                    self.project = project_for_identity(conn, identity)
                else:
                    self.project = resolve_project(conn, spec, allow_home=self._allow_home)
                self.versioned = versioned_namespaces(conn, self.project.id)
        return self.project
