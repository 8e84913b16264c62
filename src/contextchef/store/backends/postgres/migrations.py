"""The PostgreSQL schema and its migrations, applied under a transaction-scoped advisory lock.

The discipline is SQLite's (see `backends/sqlite/migrations.py`): a migration is a named step
in `MIGRATIONS`, its position is its version, `LATEST_SCHEMA_VERSION` moves in lockstep, and a
released step is never edited. `migrate_plan` runs in one transaction that first takes
`pg_advisory_xact_lock` on a key derived from the schema name, so when many workers open a
fresh schema at once exactly one migrates and the others wait, then find every step done. A
schema whose version is newer than this build's is refused with `SchemaTooNewError` before
anything is written.

Tables: `schema_migrations(version, name, applied_at)` and `entries`, one row per
(project, namespace, path) with the content, free meta (JSON text), times, byte length, a
`version` counter bumped by every rewrite (never by `touch`) and a generated `tsv` column
(`simple` configuration over path and content) under a GIN index for full-text search.
"""

from __future__ import annotations

import time
from collections.abc import Generator

from contextchef.errors import SchemaTooNewError
from contextchef.store.backends.postgres._sql import Query

__all__ = ["LATEST_SCHEMA_VERSION", "MIGRATIONS", "migrate_plan"]

MIGRATIONS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "m001_create_entries",
        (
            """CREATE TABLE entries (
        project TEXT NOT NULL,
        namespace TEXT NOT NULL,
        path TEXT NOT NULL,
        content TEXT NOT NULL,
        meta TEXT NOT NULL DEFAULT '{}',
        created_at DOUBLE PRECISION NOT NULL,
        updated_at DOUBLE PRECISION NOT NULL,
        accessed_at DOUBLE PRECISION,
        bytes BIGINT NOT NULL,
        version BIGINT NOT NULL DEFAULT 1,
        tsv TSVECTOR GENERATED ALWAYS AS
            (to_tsvector('simple', path || ' ' || content)) STORED,
        PRIMARY KEY (project, namespace, path)
    )""",
            "CREATE INDEX entries_tsv ON entries USING GIN (tsv)",
        ),
    ),
)
"""`(name, statements)` per step, oldest first; the position (from 1) is the version."""

LATEST_SCHEMA_VERSION = 1
"""The newest schema version this build writes; a test keeps it equal to len(MIGRATIONS)."""


def migrate_plan(schema: str) -> Generator[Query, list[tuple[object, ...]], int]:
    """Bring `schema` (a validated identifier) up to date; returns the steps applied here.

    Runs inside the caller's transaction: the advisory lock is released at its commit.
    """
    yield Query("SELECT pg_advisory_xact_lock(hashtext(%s))", (f"contextchef:{schema}",))
    yield Query(f'CREATE SCHEMA IF NOT EXISTS "{schema}"')
    yield Query(
        f'CREATE TABLE IF NOT EXISTS "{schema}".schema_migrations ('
        "version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at DOUBLE PRECISION NOT NULL)"
    )
    rows = yield Query(f'SELECT coalesce(max(version), 0) FROM "{schema}".schema_migrations')
    found = int(str(rows[0][0]))
    if found > LATEST_SCHEMA_VERSION:
        raise SchemaTooNewError(found, LATEST_SCHEMA_VERSION, location=f"schema {schema!r}")
    applied = 0
    for version, (name, statements) in enumerate(MIGRATIONS, start=1):
        if version <= found:
            continue
        for statement in statements:
            yield Query(statement)  # the connection's search_path is the schema
        yield Query(
            f'INSERT INTO "{schema}".schema_migrations VALUES (%s, %s, %s)',
            (version, name, time.time()),
        )
        applied += 1
    return applied
