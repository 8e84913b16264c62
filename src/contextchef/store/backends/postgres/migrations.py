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
`memory_versions` keeps every version of the entries of the *versioned namespaces*, as SQLite's
`memories` table does: triggers on `entries` record each new `version` of a row whose namespace
`versioned_namespaces` names for its project (in the writing transaction, whichever statement
wrote it), mark the one it supersedes (`superseded_at`) and mark the current one `deleted_at`
when the row is deleted; a `touch` records nothing. `history` reads them. Until m004 one fixed
namespace was versioned (m002); since, the store declares which (`keep_versions`), and the
table's name is historical. The search index keeps no pending list (m003), so a search never
scans unindexed writes. `entry_vectors` (m005) holds a semantic index's vectors, one
little-endian float64 `BYTEA` per (project, namespace, path), the exact value. m006 adds, where
the `vector` extension (pgvector) is installed, an `embedding vector` column beside it (float32:
what the database ranks by, see `_pgvector.py`); on a database without the extension it only
creates the function that adds the column, which a backend calls once it finds the extension.
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
    (
        "m002_add_memory_versions",
        (
            """CREATE TABLE memory_versions (
        id BIGSERIAL PRIMARY KEY,
        project TEXT NOT NULL,
        path TEXT NOT NULL,
        version BIGINT NOT NULL,
        content TEXT NOT NULL,
        meta TEXT NOT NULL,
        created_at DOUBLE PRECISION NOT NULL,
        updated_at DOUBLE PRECISION NOT NULL,
        accessed_at DOUBLE PRECISION,
        bytes BIGINT NOT NULL,
        recorded_at DOUBLE PRECISION NOT NULL,
        superseded_at DOUBLE PRECISION,
        deleted_at DOUBLE PRECISION
    )""",
            "CREATE INDEX memory_versions_key ON memory_versions (project, path, id)",
            """CREATE FUNCTION memory_versions_record() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
        stamp DOUBLE PRECISION := extract(epoch FROM clock_timestamp());
    BEGIN
        IF TG_OP = 'DELETE' THEN
            UPDATE memory_versions SET deleted_at = stamp
            WHERE project = OLD.project AND path = OLD.path
                AND superseded_at IS NULL AND deleted_at IS NULL;
            RETURN OLD;
        END IF;
        IF TG_OP = 'UPDATE' AND NEW.version = OLD.version THEN
            RETURN NEW;
        END IF;
        UPDATE memory_versions SET superseded_at = stamp
        WHERE project = NEW.project AND path = NEW.path
            AND superseded_at IS NULL AND deleted_at IS NULL;
        INSERT INTO memory_versions (project, path, version, content, meta, created_at,
            updated_at, accessed_at, bytes, recorded_at)
        VALUES (NEW.project, NEW.path, NEW.version, NEW.content, NEW.meta, NEW.created_at,
            NEW.updated_at, NEW.accessed_at, NEW.bytes, stamp);
        RETURN NEW;
    END
    $$""",
            """CREATE TRIGGER memory_versions_write AFTER INSERT OR UPDATE ON entries
        FOR EACH ROW WHEN (NEW.namespace = 'memory') EXECUTE FUNCTION memory_versions_record()""",
            """CREATE TRIGGER memory_versions_delete AFTER DELETE ON entries
        FOR EACH ROW WHEN (OLD.namespace = 'memory') EXECUTE FUNCTION memory_versions_record()""",
            # Memories written before this step start their history with their current version.
            """INSERT INTO memory_versions (project, path, version, content, meta, created_at,
        updated_at, accessed_at, bytes, recorded_at)
        SELECT project, path, version, content, meta, created_at, updated_at, accessed_at,
            bytes, updated_at FROM entries WHERE namespace = 'memory' ORDER BY project, path""",
        ),
    ),
    (
        "m003_search_index_without_pending_list",
        (
            # A GIN pending list makes every search scan it linearly (up to 4 MB by default:
            # hundreds of milliseconds after a bulk load); index each write directly instead.
            "ALTER INDEX entries_tsv SET (fastupdate = off)",
            "SELECT gin_clean_pending_list('entries_tsv'::regclass)",
        ),
    ),
    (
        "m004_versioned_namespaces",
        (
            # The namespaces whose versions are kept, as the store declares them; the rows
            # already in memory_versions are the one namespace m002 versioned.
            """CREATE TABLE versioned_namespaces (
        project TEXT NOT NULL,
        namespace TEXT NOT NULL,
        declared_at DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (project, namespace)
    )""",
            "ALTER TABLE memory_versions ADD COLUMN namespace TEXT NOT NULL DEFAULT 'memory'",
            "ALTER TABLE memory_versions ALTER COLUMN namespace DROP DEFAULT",
            "DROP INDEX memory_versions_key",
            "CREATE INDEX memory_versions_key ON memory_versions (project, namespace, path, id)",
            "DROP TRIGGER memory_versions_write ON entries",
            "DROP TRIGGER memory_versions_delete ON entries",
            "DROP FUNCTION memory_versions_record()",
            """CREATE FUNCTION entry_versions_record() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
        stamp DOUBLE PRECISION := extract(epoch FROM clock_timestamp());
        row_project TEXT := CASE WHEN TG_OP = 'DELETE' THEN OLD.project ELSE NEW.project END;
        row_ns TEXT := CASE WHEN TG_OP = 'DELETE' THEN OLD.namespace ELSE NEW.namespace END;
    BEGIN
        IF NOT EXISTS (SELECT 1 FROM versioned_namespaces
                       WHERE project = row_project AND namespace = row_ns) THEN
            RETURN NULL;
        END IF;
        IF TG_OP = 'DELETE' THEN
            UPDATE memory_versions SET deleted_at = stamp
            WHERE project = OLD.project AND namespace = OLD.namespace AND path = OLD.path
                AND superseded_at IS NULL AND deleted_at IS NULL;
            RETURN NULL;
        END IF;
        IF TG_OP = 'UPDATE' AND NEW.version = OLD.version THEN
            RETURN NULL;
        END IF;
        UPDATE memory_versions SET superseded_at = stamp
        WHERE project = NEW.project AND namespace = NEW.namespace AND path = NEW.path
            AND superseded_at IS NULL AND deleted_at IS NULL;
        INSERT INTO memory_versions (project, namespace, path, version, content, meta,
            created_at, updated_at, accessed_at, bytes, recorded_at)
        VALUES (NEW.project, NEW.namespace, NEW.path, NEW.version, NEW.content, NEW.meta,
            NEW.created_at, NEW.updated_at, NEW.accessed_at, NEW.bytes, stamp);
        RETURN NULL;
    END
    $$""",
            """CREATE TRIGGER entry_versions_write AFTER INSERT OR UPDATE ON entries
        FOR EACH ROW EXECUTE FUNCTION entry_versions_record()""",
            """CREATE TRIGGER entry_versions_delete AFTER DELETE ON entries
        FOR EACH ROW EXECUTE FUNCTION entry_versions_record()""",
            """INSERT INTO versioned_namespaces (project, namespace, declared_at)
        SELECT project, namespace, extract(epoch FROM clock_timestamp())
        FROM (SELECT DISTINCT project, namespace FROM memory_versions) AS versioned""",
        ),
    ),
    (
        "m005_add_entry_vectors",
        (
            """CREATE TABLE entry_vectors (
        project TEXT NOT NULL,
        namespace TEXT NOT NULL,
        path TEXT NOT NULL,
        dims INTEGER NOT NULL,
        vector BYTEA NOT NULL,
        PRIMARY KEY (project, namespace, path)
    )""",
        ),
    ),
    (
        "m006_entry_vectors_pgvector",
        (
            # An UPDATE that changes a vector without giving its `embedding` (a writer not
            # using pgvector) clears the embedding, so no stale one is ever scored.
            """CREATE FUNCTION entry_vectors_unembed() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        NEW.embedding := NULL;
        RETURN NEW;
    END
    $$""",
            # Called here and whenever a backend finds `vector` installed (it may come later):
            # adds the pgvector column, its trigger and an index of the rows without an
            # embedding, once; true when the column exists. Without the extension: nothing.
            """CREATE FUNCTION entry_vectors_enable_pgvector() RETURNS boolean
    LANGUAGE plpgsql AS $$
    DECLARE
        ext TEXT := (SELECT quote_ident(n.nspname) FROM pg_extension AS e
                     JOIN pg_namespace AS n ON n.oid = e.extnamespace
                     WHERE e.extname = 'vector');
    BEGIN
        IF ext IS NULL THEN
            RETURN FALSE;
        END IF;
        IF EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = 'entry_vectors'::regclass
                   AND attname = 'embedding' AND NOT attisdropped) THEN
            RETURN TRUE;
        END IF;
        EXECUTE 'ALTER TABLE entry_vectors ADD COLUMN embedding ' || ext || '.vector';
        CREATE INDEX entry_vectors_unembedded ON entry_vectors (project, namespace, path)
            WHERE embedding IS NULL;
        EXECUTE 'CREATE TRIGGER entry_vectors_stale BEFORE UPDATE ON entry_vectors '
            'FOR EACH ROW WHEN (NEW.vector IS DISTINCT FROM OLD.vector AND NEW.embedding IS '
            'NOT NULL AND NEW.embedding OPERATOR(' || ext || '.=) OLD.embedding) '
            'EXECUTE FUNCTION entry_vectors_unembed()';
        RETURN TRUE;
    END
    $$""",
            "SELECT entry_vectors_enable_pgvector()",
        ),
    ),
)
"""`(name, statements)` per step, oldest first; the position (from 1) is the version."""

LATEST_SCHEMA_VERSION = 6
"""The newest schema version this build writes; a test keeps it equal to len(MIGRATIONS)."""


def migrate_plan(
    schema: str, *, target: int = LATEST_SCHEMA_VERSION
) -> Generator[Query, list[tuple[object, ...]], int]:
    """Bring `schema` (a validated identifier) up to version `target` (default: the latest);
    returns the steps applied here.

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
        if version <= found or version > target:
            continue
        for statement in statements:
            yield Query(statement)  # the connection's search_path is the schema
        yield Query(
            f'INSERT INTO "{schema}".schema_migrations VALUES (%s, %s, %s)',
            (version, name, time.time()),
        )
        applied += 1
    return applied
