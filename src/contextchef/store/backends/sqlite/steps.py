"""The schema steps of the SQLite store, oldest first: named functions, frozen once released.

Tables (the current shape is the sum of the migrations below):

- `projects` (one row per project; `identity` is the first identity ever computed for it, or
  the explicit identity it was opened with), `project_aliases` (every identity that maps to a
  project: each git root, each `dir:` hash) and `project_dirs` (the last identity resolved for
  each directory, reused when git fails transiently).
- `entries`: the store's text entries, unique per (project, namespace, path), with their times,
  byte size and free meta JSON. Its `accessed_at` column is unused since m005 (always NULL):
  the access time lives in `entry_access`, so recording a read never rewrites the entry's row
  (SQLite rewrites a whole record, 10 MiB of content included, for any UPDATE of it).
  `entries_fts` is an FTS5 external-content index over path and content, kept in sync by
  triggers; the update trigger fires only when path or content changed, so meta-only writes
  never rewrite the index (and `touch` never writes `entries` at all).
- `memories`: the entries of the *versioned namespaces* (named in `versioned_namespaces`, see
  `_versioned.py`), one *current* row per (project, namespace, key) (a partial unique index),
  older versions kept with `superseded_by` pointing at their successor; deletion is a
  `deleted_at` mark, never a destructive overwrite. `memory_log` is the append-only log of
  their mutations (updates are refused by a trigger), pruned by the retention policy of
  `_versioned.py`. (The names are historical: until m006 only one namespace kept versions.)
- `memories_fts`: FTS5 external-content index over the key and content of every version
  (versions are immutable, so rows are indexed on insert and removed on delete only); search
  keeps the current rows.
- `versioned_namespaces`: per project, the namespaces whose entries live in `memories`, as the
  store declared them (`keep_versions`); a namespace once declared stays versioned.
- `entry_vectors`: a semantic index's vector of an entry (m007), a float64 BLOB keyed by
  project, namespace and path, written and deleted by the store beside the entry; since m008
  also as float32 (`vector_f32`), what sqlite-vec scores in SQL where it loads (`_vec.py`).
- `entry_access`: the last read time of an entry, one small row per entry that was ever read
  (or written with an explicit `accessed_at`), deleted with the entry by its foreign key.
- `entry_dirs` (m009): the namespace index of `entries`: per (project, namespace, directory)
  the number of entries directly in it (`a/b/` for `a/b/c.md`, `""` for a top-level entry),
  kept by triggers in the writing statement's transaction; a directory's row goes with its
  last entry. `list_dirs` reads a key range of it instead of every entry path. The index
  `entries_recent` (m010) orders each namespace's entries by `updated_at`.

How the steps are applied (the fence, one transaction per step, races) is `migrations.py`.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from contextchef.store.backends.sqlite._vec import pack_f32
from contextchef.store.vectors import unpack

__all__ = ["MIGRATIONS", "Migration"]


@dataclass(frozen=True, slots=True)
class Migration:
    """One schema step: its version (position in the chain), name and body."""

    version: int
    name: str
    apply: Callable[[sqlite3.Connection], None]


_CHAIN: list[Migration] = []


def migration(fn: Callable[[sqlite3.Connection], None]) -> Callable[[sqlite3.Connection], None]:
    """Register `fn` as the next migration; its function name is its permanent id."""
    _CHAIN.append(Migration(len(_CHAIN) + 1, fn.__name__, fn))
    return fn


def _run(conn: sqlite3.Connection, statements: Iterable[str]) -> None:
    for statement in statements:
        conn.execute(statement)


@migration
def m001_create_projects_and_entries(conn: sqlite3.Connection) -> None:
    """The bookkeeping table, project identities and the entries of the context store."""
    _run(
        conn,
        (
            """CREATE TABLE schema_migrations (
        version INTEGER PRIMARY KEY,
        name TEXT NOT NULL,
        applied_at REAL NOT NULL
    )""",
            """CREATE TABLE projects (
        id INTEGER PRIMARY KEY,
        identity TEXT NOT NULL UNIQUE,
        created_at REAL NOT NULL
    )""",
            """CREATE TABLE project_aliases (
        alias TEXT PRIMARY KEY,
        project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        created_at REAL NOT NULL
    )""",
            "CREATE INDEX project_aliases_project ON project_aliases(project_id)",
            """CREATE TABLE project_dirs (
        path TEXT PRIMARY KEY,
        project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        identity TEXT NOT NULL,
        seen_at REAL NOT NULL
    )""",
            "CREATE INDEX project_dirs_project ON project_dirs(project_id)",
            """CREATE TABLE entries (
        id INTEGER PRIMARY KEY,
        project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        namespace TEXT NOT NULL,
        path TEXT NOT NULL,
        content TEXT NOT NULL,
        meta TEXT NOT NULL DEFAULT '{}',
        created_at REAL NOT NULL,
        updated_at REAL NOT NULL,
        accessed_at REAL,
        bytes INTEGER NOT NULL,
        UNIQUE (project_id, namespace, path)
    )""",
        ),
    )


@migration
def m002_add_entries_fts(conn: sqlite3.Connection) -> None:
    """Full-text search over entries; triggers skip updates that leave path and content alone."""
    _run(
        conn,
        (
            """CREATE VIRTUAL TABLE entries_fts USING fts5(
        path, content, content='entries', content_rowid='id',
        tokenize='unicode61 remove_diacritics 2'
    )""",
            """CREATE TRIGGER entries_fts_insert AFTER INSERT ON entries BEGIN
        INSERT INTO entries_fts(rowid, path, content) VALUES (new.id, new.path, new.content);
    END""",
            """CREATE TRIGGER entries_fts_delete AFTER DELETE ON entries BEGIN
        INSERT INTO entries_fts(entries_fts, rowid, path, content)
        VALUES ('delete', old.id, old.path, old.content);
    END""",
            """CREATE TRIGGER entries_fts_update AFTER UPDATE OF path, content ON entries
    WHEN old.content IS NOT new.content OR old.path IS NOT new.path BEGIN
        INSERT INTO entries_fts(entries_fts, rowid, path, content)
        VALUES ('delete', old.id, old.path, old.content);
        INSERT INTO entries_fts(rowid, path, content) VALUES (new.id, new.path, new.content);
    END""",
            # Entries written before this step are indexed from the content table.
            "INSERT INTO entries_fts(entries_fts) VALUES ('rebuild')",
        ),
    )


@migration
def m003_create_memories(conn: sqlite3.Connection) -> None:
    """Keyed memories with supersession history, and their append-only mutation log."""
    _run(
        conn,
        (
            """CREATE TABLE memories (
        id INTEGER PRIMARY KEY,
        project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        key TEXT NOT NULL,
        content TEXT NOT NULL,
        meta TEXT NOT NULL DEFAULT '{}',
        created_at REAL NOT NULL,
        superseded_by INTEGER REFERENCES memories(id) ON DELETE SET NULL
            DEFERRABLE INITIALLY DEFERRED,
        deleted_at REAL
    )""",
            """CREATE UNIQUE INDEX memories_current ON memories(project_id, key)
        WHERE superseded_by IS NULL AND deleted_at IS NULL""",
            "CREATE INDEX memories_history ON memories(project_id, key, id)",
            """CREATE TABLE memory_log (
        id INTEGER PRIMARY KEY,
        project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        memory_id INTEGER,
        key TEXT NOT NULL,
        op TEXT NOT NULL CHECK (op IN ('create', 'update', 'delete')),
        at REAL NOT NULL
    )""",
            "CREATE INDEX memory_log_project ON memory_log(project_id, id)",
            "CREATE INDEX memory_log_at ON memory_log(at)",
            """CREATE TRIGGER memory_log_append_only BEFORE UPDATE ON memory_log BEGIN
        SELECT RAISE(ABORT, 'memory_log is append-only');
    END""",
        ),
    )


@migration
def m004_add_memories_fts(conn: sqlite3.Connection) -> None:
    """Full-text search over memory versions, so the `memory` namespace searches like the rest."""
    _run(
        conn,
        (
            """CREATE VIRTUAL TABLE memories_fts USING fts5(
        key, content, content='memories', content_rowid='id',
        tokenize='unicode61 remove_diacritics 2'
    )""",
            """CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories BEGIN
        INSERT INTO memories_fts(rowid, key, content) VALUES (new.id, new.key, new.content);
    END""",
            """CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories BEGIN
        INSERT INTO memories_fts(memories_fts, rowid, key, content)
        VALUES ('delete', old.id, old.key, old.content);
    END""",
            """CREATE TRIGGER memories_fts_update AFTER UPDATE OF key, content ON memories
    WHEN old.content IS NOT new.content OR old.key IS NOT new.key BEGIN
        INSERT INTO memories_fts(memories_fts, rowid, key, content)
        VALUES ('delete', old.id, old.key, old.content);
        INSERT INTO memories_fts(rowid, key, content) VALUES (new.id, new.key, new.content);
    END""",
            # Versions recorded before this step are indexed from the content table.
            "INSERT INTO memories_fts(memories_fts) VALUES ('rebuild')",
        ),
    )


@migration
def m005_move_access_times_to_entry_access(conn: sqlite3.Connection) -> None:
    """Access times in a table of their own; existing ones move there, the column is emptied.

    The column stays (dropping one needs SQLite 3.35 and rewrites every row) but is never
    read or written again.
    """
    _run(
        conn,
        (
            """CREATE TABLE entry_access (
        entry_id INTEGER PRIMARY KEY REFERENCES entries(id) ON DELETE CASCADE,
        accessed_at REAL NOT NULL
    )""",
            """INSERT INTO entry_access(entry_id, accessed_at)
        SELECT id, accessed_at FROM entries WHERE accessed_at IS NOT NULL""",
            "UPDATE entries SET accessed_at = NULL WHERE accessed_at IS NOT NULL",
        ),
    )


@migration
def m006_add_versioned_namespaces(conn: sqlite3.Connection) -> None:
    """Versions for any namespace the store declares, not one fixed namespace.

    `memories` and `memory_log` rows name their namespace (every row already there belongs to
    the one namespace that kept versions before this step, which the column default records),
    the one-current-row index is per namespace, and `versioned_namespaces` lists each project's
    versioned namespaces, starting with those that already have versions.
    """
    _run(
        conn,
        (
            """CREATE TABLE versioned_namespaces (
        project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        namespace TEXT NOT NULL,
        declared_at REAL NOT NULL,
        PRIMARY KEY (project_id, namespace)
    )""",
            "ALTER TABLE memories ADD COLUMN namespace TEXT NOT NULL DEFAULT 'memory'",
            "ALTER TABLE memory_log ADD COLUMN namespace TEXT NOT NULL DEFAULT 'memory'",
            "DROP INDEX memories_current",
            """CREATE UNIQUE INDEX memories_current ON memories(project_id, namespace, key)
        WHERE superseded_by IS NULL AND deleted_at IS NULL""",
            "DROP INDEX memories_history",
            "CREATE INDEX memories_history ON memories(project_id, namespace, key, id)",
            """INSERT INTO versioned_namespaces(project_id, namespace, declared_at)
        SELECT project_id, namespace, (julianday('now') - 2440587.5) * 86400.0
        FROM (SELECT DISTINCT project_id, namespace FROM memories)""",
        ),
    )


@migration
def m007_add_entry_vectors(conn: sqlite3.Connection) -> None:
    """The vectors of a semantic index: one little-endian float64 BLOB per (project,
    namespace, path), beside the entry (versioned namespaces' entries included), written by the
    store after the entry and scored exactly in Python (see `_vectors.py`)."""
    _run(
        conn,
        (
            """CREATE TABLE entry_vectors (
        project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        namespace TEXT NOT NULL,
        path TEXT NOT NULL,
        dims INTEGER NOT NULL,
        vector BLOB NOT NULL,
        PRIMARY KEY (project_id, namespace, path)
    )""",
        ),
    )


@migration
def m008_add_entry_vectors_f32(conn: sqlite3.Connection) -> None:
    """Each vector also as little-endian float32 (`vector_f32`), filled in for the vectors
    already stored: sqlite-vec ranks by it in SQL, the float64 `vector` rescores exactly."""
    conn.execute("ALTER TABLE entry_vectors ADD COLUMN vector_f32 BLOB")
    rows = conn.execute("SELECT rowid, vector FROM entry_vectors").fetchall()
    conn.executemany(
        "UPDATE entry_vectors SET vector_f32 = ? WHERE rowid = ?",
        [(pack_f32(unpack(blob)), rowid) for rowid, blob in rows],
    )


@migration
def m009_add_entry_dirs(conn: sqlite3.Connection) -> None:
    """The namespace index: entries per directory, kept by triggers on `entries` and filled
    from the entries already there, so listing a namespace's directories reads only them."""
    new_dir = "rtrim(new.path, replace(new.path, '/', ''))"
    old_dir = "rtrim(old.path, replace(old.path, '/', ''))"
    # (`rtrim(path, <path without its slashes>)` strips back to the last `/`: the directory.)
    add_new = f"""INSERT INTO entry_dirs(project_id, namespace, dir, entries)
            VALUES (new.project_id, new.namespace, {new_dir}, 1)
            ON CONFLICT(project_id, namespace, dir) DO UPDATE SET entries = entries + 1;"""
    drop_old = f"""UPDATE entry_dirs SET entries = entries - 1 WHERE project_id = old.project_id
            AND namespace = old.namespace AND dir = {old_dir};
            DELETE FROM entry_dirs WHERE project_id = old.project_id AND namespace = old.namespace
            AND dir = {old_dir} AND entries <= 0;"""
    _run(
        conn,
        (
            """CREATE TABLE entry_dirs (
        project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        namespace TEXT NOT NULL,
        dir TEXT NOT NULL,
        entries INTEGER NOT NULL,
        PRIMARY KEY (project_id, namespace, dir)
    ) WITHOUT ROWID""",
            f"CREATE TRIGGER entry_dirs_insert AFTER INSERT ON entries BEGIN {add_new} END",
            f"CREATE TRIGGER entry_dirs_delete AFTER DELETE ON entries BEGIN {drop_old} END",
            # An upsert's update never names these columns, so a rewrite skips this trigger.
            f"""CREATE TRIGGER entry_dirs_update AFTER UPDATE OF project_id, namespace, path
    ON entries WHEN old.project_id IS NOT new.project_id OR old.namespace IS NOT new.namespace
        OR {old_dir} IS NOT {new_dir}
    BEGIN {drop_old} {add_new} END""",
            """INSERT INTO entry_dirs(project_id, namespace, dir, entries)
        SELECT project_id, namespace, rtrim(path, replace(path, '/', '')), count(*)
        FROM entries GROUP BY 1, 2, 3""",
        ),
    )


@migration
def m010_index_entries_by_recency(conn: sqlite3.Connection) -> None:
    """Entries in recency order per namespace, so a filtered page of a large prefix reads from
    the newest entry on and stops once the page is full (see `_where.py`)."""
    conn.execute("CREATE INDEX entries_recent ON entries(project_id, namespace, updated_at)")


MIGRATIONS: tuple[Migration, ...] = tuple(_CHAIN)
"""Every migration, oldest first; `MIGRATIONS[i].version == i + 1`."""
