"""The current schema, as a fresh install creates it in one transaction.

Tables:

- `projects` (one row per project, `identity` is the first identity ever computed for it, or
  `@user` for the user scope), `project_aliases` (every identity that maps to a project:
  each git root, each `dir:` hash) and `project_dirs` (the last identity resolved for each
  directory, reused when git fails transiently).
- `entries`: the store's text entries, unique per (project, namespace, path), with their times,
  byte size and free meta JSON. `entries_fts` is an FTS5 external-content index over path and
  content, kept in sync by triggers; the update trigger fires only when path or content changed,
  so `touch` and meta-only writes never rewrite the index.
- `memories`: keyed facts, one *current* row per (project, key) (a partial unique index), older
  versions kept with `superseded_by` pointing at their successor; deletion is a `deleted_at`
  mark, never a destructive overwrite. `memory_log` is the append-only log of memory mutations
  (updates are refused by a trigger), pruned by the retention policy of `memories.py`.

`migrations.py` holds the same history as frozen steps. This module is the current shape written
out once, so a fresh install does not replay history; a test checks that every migration path
ends with the same `sqlite_master` as this one.
"""

from __future__ import annotations

__all__ = ["FRESH_SCHEMA", "USER_SCOPE_IDENTITY"]

USER_SCOPE_IDENTITY = "@user"
"""The identity of the user scope: memories shared by every project on the machine."""

FRESH_SCHEMA: tuple[str, ...] = (
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
)
