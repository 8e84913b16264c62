"""`PostgresBackend` (and, in asynchronous.py, `AsyncPostgresBackend`): one context store shared
by many machines.

Both run the plans of `_sql.py` (the SQL lives there once) on a psycopg 3 connection pool, each
plan in one transaction; they differ only in the call style (the async one awaits
`AsyncConnectionPool` natively: no thread hop). Every capability but `get_physical_path`
(entries are rows), and `history` for the versioned namespaces (`keep_versions`: the store
declares them, the schema remembers them per project), whose versions a trigger
records in `memory_versions` (see migrations.py), like SQLite's. The set is read when the
backend opens; `history` of a namespace it does not know reads it again, so a declaration by
another worker is seen.

Concurrency: `append` is one upsert (`content = content || %s`), so concurrent appends from any
number of connections all land; `create` is `INSERT … ON CONFLICT DO NOTHING`, so of racing
creators exactly one wins; every rewrite bumps the row's `version` column (a `touch` does not)
and `replace_if` is one `UPDATE … WHERE version = %s`, so a lost update is reported, never
silent. `transact` (the store's edits and renames) locks the rows it edits with
`SELECT … FOR UPDATE` in one transaction, so concurrent edits queue instead of failing; reads
take no row lock (a `touch` skips a row a writer holds), so they never wait for a writer.
Search is PostgreSQL full-text search (see `_sql.search`). A lost connection raises
`StoreUnavailableError`; the backend then has the pool test its idle connections and replace
the dead ones, so the next call runs on a live connection (a write is never retried behind
the caller's back: whether an interrupted one landed is unknown, so the error says so).
"""

from __future__ import annotations

import builtins
import logging
from collections.abc import Mapping, Sequence
from typing import Any

from contextchef.errors import StoreError, StoreUnavailableError
from contextchef.store.backend import ListedEntry, SearchHit, StoredEntry, Transaction, Version
from contextchef.store.backends.postgres import _sql, _vectors
from contextchef.store.backends.postgres._base import RACES, Base, raced
from contextchef.store.backends.postgres._common import (
    NOT_ALONE,
    execute,
    redact,
    translate,
)
from contextchef.store.backends.postgres._pgvector import PgVector
from contextchef.store.backends.postgres._sql import Plan
from contextchef.store.backends.postgres.migrations import migrate_plan

__all__ = ["PostgresBackend"]

log = logging.getLogger("contextchef.store.backends.postgres.backend")


class PostgresBackend(Base):
    """The sync protocol over `psycopg_pool.ConnectionPool` (options: see `__init__`)."""

    def _start(self) -> None:
        from psycopg_pool import ConnectionPool

        self._pool: Any = ConnectionPool(self._dsn, **self._pool_options())
        try:
            self._pool.open(wait=True, timeout=self._connect_timeout)
        except Exception as exc:
            self._pool.close()
            raise self._unreachable() from exc
        try:
            self._run(migrate_plan(self.schema), "migrating the schema")
            self._versioned = self._run(*self._versioned_plan())
            self.pgvector = self._find_pgvector()
        except BaseException:
            self._pool.close()
            raise

    def _find_pgvector(self) -> PgVector | None:
        """Run `_pgvector_steps`; a failure (not a lost connection) only leaves it unused."""
        steps = self._pgvector_steps()
        try:
            plan, doing = next(steps)
            while True:
                plan, doing = steps.send(self._run(plan, doing))
        except StopIteration as done:
            return done.value  # type: ignore[no-any-return]
        except StoreUnavailableError:
            raise
        except StoreError as exc:
            self._without_pgvector(exc)
            return None

    def close(self) -> None:
        """Close every pooled connection; the backend is unusable after."""
        self._pool.close()

    def __enter__(self) -> PostgresBackend:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _run(self, plan: Plan, doing: str, ns: str | None = None, path: str | None = None) -> Any:
        try:
            with translate(doing, ns, path), self._pool.connection() as conn:
                try:
                    query = next(plan)
                except StopIteration as done:
                    return done.value  # nothing to ask the server
                if query.alone:
                    try:
                        plan.send(execute(conn, query))
                    except StopIteration as done:
                        return done.value
                    raise RuntimeError(NOT_ALONE)
                with conn.transaction():  # committed only when the plan returns
                    try:
                        while True:
                            query = plan.send(execute(conn, query))
                    except StopIteration as done:
                        return done.value
        except StoreUnavailableError:
            self._recover()
            raise

    def _recover(self) -> None:
        """After a lost connection, test the idle ones and replace the dead (a server restart
        or `pg_terminate_backend` kills them all), so the next call gets a live connection."""
        try:
            self._pool.check()
        except Exception as exc:  # never mask the error being raised
            log.debug("checking the pool after a lost connection failed: %s", redact(str(exc)))

    def read(self, ns: str, path: str) -> StoredEntry | None:
        return self._run(_sql.read(self.project, ns, path), f"reading {ns}/{path}", ns, path)  # type: ignore[no-any-return]

    def write(self, ns: str, path: str, entry: StoredEntry) -> None:
        self._run(_sql.write(self.project, ns, path, entry), f"writing {ns}/{path}", ns, path)

    def write_many(self, ns: str, entries: Mapping[str, StoredEntry]) -> None:
        """Write every `path -> entry` of `entries` in one transaction, pipelined (no round
        trip per entry): all land or none. The fast path for bulk loads."""
        self._run(_sql.write_many(self.project, ns, entries), f"writing {len(entries)} in {ns}", ns)

    def delete(self, ns: str, path: str) -> bool:
        return bool(self._run(_sql.delete(self.project, ns, path), f"deleting {ns}/{path}", ns))

    def list(self, ns: str, prefix: str = "") -> builtins.list[ListedEntry]:
        return self._run(_sql.listing(self.project, ns, prefix), f"listing {ns}/{prefix}", ns)  # type: ignore[no-any-return]

    def read_all(self, ns: str, prefix: str = "") -> dict[str, StoredEntry]:
        return self._run(_sql.read_all(self.project, ns, prefix), f"reading {ns}/{prefix}*", ns)  # type: ignore[no-any-return]

    def read_recent(self, ns: str, prefix: str, limit: int, offset: int) -> dict[str, StoredEntry]:
        plan = _sql.read_recent(self.project, ns, prefix, limit, offset)
        return self._run(plan, f"reading a page of {ns}/{prefix}*", ns)  # type: ignore[no-any-return]

    def list_dirs(self, ns: str, prefix: str) -> builtins.list[str]:
        plan = _sql.list_dirs(self.project, ns, prefix)
        return self._run(plan, f"listing the directories of {ns}/{prefix}", ns)  # type: ignore[no-any-return]

    def read_last(self, ns: str, prefix: str, count: int) -> dict[str, StoredEntry]:
        plan = _sql.read_last(self.project, ns, prefix, count)
        return self._run(plan, f"reading the last {count} of {ns}/{prefix}*", ns)  # type: ignore[no-any-return]

    def exists(self, ns: str, path: str) -> bool:
        return bool(self._run(_sql.exists(self.project, ns, path), f"checking {ns}/{path}", ns))

    def append(self, ns: str, path: str, content: str) -> None:
        self._run(_sql.append(self.project, ns, path, content), f"appending to {ns}/{path}", ns)

    def create(self, ns: str, path: str, entry: StoredEntry) -> bool:
        return bool(self._run(_sql.create(self.project, ns, path, entry), f"creating {ns}/{path}"))

    def read_versioned(self, ns: str, path: str) -> tuple[StoredEntry, Version] | None:
        plan = _sql.read_versioned(self.project, ns, path)
        return self._run(plan, f"reading {ns}/{path}", ns, path)  # type: ignore[no-any-return]

    def replace_if(self, ns: str, path: str, entry: StoredEntry, expected: Version) -> bool:
        plan = _sql.replace_if(self.project, ns, path, entry, expected)
        return bool(self._run(plan, f"writing {ns}/{path}", ns, path))

    def transact(
        self, ns: str, paths: Sequence[str], change: Transaction
    ) -> Mapping[str, StoredEntry | None]:
        """Read `paths` with their rows locked, apply `change`, write its answer: one
        transaction (see `_sql.transact`)."""
        for _ in range(RACES):
            try:
                plan = _sql.transact(self.project, ns, paths, change)
                return self._run(plan, f"editing {ns}/{paths[0]}", ns, paths[0])  # type: ignore[no-any-return]
            except _sql.Raced:
                continue
        raise raced(ns, paths)

    def search(
        self, ns: str, query: str, *, prefix: str = "", limit: int | None = None
    ) -> builtins.list[SearchHit]:
        plan = _sql.search(self.project, ns, query, prefix, limit)
        return self._run(plan, f"searching {ns}", ns)  # type: ignore[no-any-return]

    def snapshot(self, ns: str) -> dict[str, StoredEntry]:
        return self.read_all(ns)

    def restore(self, ns: str, snapshot: Mapping[str, StoredEntry]) -> None:
        self._run(_sql.restore(self.project, ns, snapshot), f"restoring {ns}", ns)

    def get_physical_path(self, ns: str, path: str) -> str | None:
        """None: an entry is a database row, not a file."""
        del ns, path
        return None

    def put_vectors(self, ns: str, vectors: Mapping[str, Sequence[float]]) -> None:
        self._run(
            _vectors.put_vectors(self.project, ns, vectors, self.pgvector), f"indexing {ns}", ns
        )

    def delete_vectors(self, ns: str, paths: Sequence[str] | None = None) -> None:
        self._run(_vectors.delete_vectors(self.project, ns, paths), f"unindexing {ns}", ns)

    def nearest(
        self,
        ns: str,
        vector: Sequence[float],
        *,
        metric: str = "cosine",
        prefix: str = "",
        limit: int | None = None,
    ) -> builtins.list[tuple[str, float]]:
        plan = _vectors.nearest(self.project, ns, vector, metric, prefix, limit, self.pgvector)
        return self._run(plan, f"searching the vectors of {ns}", ns)  # type: ignore[no-any-return]

    def build_vector_index(self, dims: int, metric: str = "cosine") -> str:
        """Build an HNSW index over the `dims`-long vectors for `metric` (its name is
        returned): approximate answers in ~1 ms instead of an exact scan (see `_vectors.py`
        for when that pays). Needs pgvector (`StoreCapabilityError` without)."""
        plan = self._hnsw_plan(dims, metric)
        return self._run(plan, f"building the HNSW index of {dims}-long vectors")  # type: ignore[no-any-return]

    def touch(self, ns: str, path: str, accessed_at: float) -> None:
        plan = _sql.touch(self.project, ns, path, float(accessed_at))
        self._run(plan, f"touching {ns}/{path}", ns, path)

    def keep_versions(self, ns: str) -> None:
        """Keep every version of `ns` from now on, for every backend over this schema."""
        if ns not in self._versioned:
            self._run(_sql.keep_versions(self.project, ns), f"versioning {ns}", ns)
            self._versioned |= {ns}

    def history(self, ns: str, path: str) -> builtins.list[StoredEntry]:
        """Every version of `ns/path`, oldest first (a versioned namespace only)."""
        if ns not in self._versioned:
            self._versioned = self._run(*self._versioned_plan())
        plan = self._history_plan(ns, path)
        return self._run(plan, f"reading the history of {ns}/{path}", ns, path)  # type: ignore[no-any-return]

    def inventory(self) -> builtins.list[tuple[str, str]]:
        """`(project, namespace)` for every namespace holding entries, across all projects of
        the schema (what `contextchef db copy` copies)."""
        return self._run(_sql.inventory(), "listing the projects")  # type: ignore[no-any-return]
