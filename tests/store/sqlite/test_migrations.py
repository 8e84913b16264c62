"""The schema fence and the migration chain: lockstep, each step, fresh == migrated, races."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import pytest

from contextchef.errors import MigrationError, SchemaTooNewError
from contextchef.store.backend import StoredEntry
from contextchef.store.backends.sqlite import LATEST_SCHEMA_VERSION, SQLiteBackend
from contextchef.store.backends.sqlite import migrations as mig
from contextchef.store.backends.sqlite.connection import connect, enable_wal

from .helpers import finish, schema_of, start_worker


def _at_version(path: Path, version: int) -> sqlite3.Connection:
    conn = connect(path)
    enable_wal(conn, str(path))
    mig.apply_migrations(conn, location=str(path), target=version)
    assert mig.schema_version(conn) == version
    return conn


def test_latest_version_in_lockstep_with_the_chain() -> None:
    assert LATEST_SCHEMA_VERSION == mig.MIGRATIONS[-1].version == len(mig.MIGRATIONS)
    for index, step in enumerate(mig.MIGRATIONS, start=1):
        assert step.version == index
        assert re.fullmatch(rf"m{index:03d}_[a-z0-9_]+", step.name), step.name


def test_fresh_install_records_every_step(db_path: Path) -> None:
    conn = mig.open_database(db_path)
    rows = conn.execute("SELECT version, name FROM schema_migrations ORDER BY version").fetchall()
    assert rows == [(m.version, m.name) for m in mig.MIGRATIONS]


def _seed(conn: sqlite3.Connection, version: int) -> None:
    """Rows as the schema at `version` allows, so later steps migrate a non-empty database."""
    if version >= 1:
        conn.execute("INSERT INTO projects(identity, created_at) VALUES ('test:seed', 0)")
        conn.execute(
            "INSERT INTO entries(project_id, namespace, path, content, created_at, updated_at, "
            "bytes) VALUES (1, 'notes', 'seed.md', 'seeded before the upgrade', 0, 0, 25)"
        )
    if version >= 3:
        conn.execute(
            "INSERT INTO memories(project_id, key, content, created_at) "
            "VALUES (1, 'k', 'remembered before the upgrade', 0)"
        )
    if version >= 6:  # from m006 on, a namespace keeps versions once it is declared
        conn.execute(
            "INSERT INTO versioned_namespaces(project_id, namespace, declared_at) "
            "VALUES (1, 'memory', 0)"
        )
    if version >= 7:
        conn.execute(
            "INSERT INTO entry_vectors(project_id, namespace, path, dims, vector) "
            "VALUES (1, 'notes', 'seed.md', 1, zeroblob(8))"
        )


@pytest.mark.parametrize("start", range(LATEST_SCHEMA_VERSION))
def test_migrated_schema_equals_fresh_schema(tmp_path: Path, start: int) -> None:
    fresh = mig.open_database(tmp_path / "fresh.db")
    old = _at_version(tmp_path / "old.db", start)
    _seed(old, start)
    applied = mig.apply_migrations(old, location="old")
    assert applied == [m.name for m in mig.MIGRATIONS[start:]]
    assert schema_of(old) == schema_of(fresh)
    names = "SELECT version, name FROM schema_migrations ORDER BY version"
    assert old.execute(names).fetchall() == fresh.execute(names).fetchall()
    old.close()
    with SQLiteBackend(tmp_path / "old.db", project="test:seed") as upgraded:
        expected = ["seed.md"] if start else []
        assert [h.path for h in upgraded.search("notes", "upgrade")] == expected
        remembered = ["k"] if start >= 3 else []
        assert [h.path for h in upgraded.search("memory", "upgrade")] == remembered


def test_m007_keeps_vectors_beside_entries(db_path: Path) -> None:
    conn = _at_version(db_path, 7)
    conn.execute("INSERT INTO projects(identity, created_at) VALUES ('p', 0)")
    row = "INSERT INTO entry_vectors(project_id, namespace, path, dims, vector) VALUES"
    conn.execute(f"{row} (1, 'notes', 'a', 2, x'00')")
    with pytest.raises(sqlite3.IntegrityError):  # one vector per entry
        conn.execute(f"{row} (1, 'notes', 'a', 2, x'01')")
    conn.execute("DELETE FROM projects")  # a project's vectors go with it
    assert conn.execute("SELECT count(*) FROM entry_vectors").fetchone() == (0,)


def test_m009_indexes_the_directories_of_entries_written_before_it(db_path: Path) -> None:
    conn = _at_version(db_path, 8)
    conn.execute("INSERT INTO projects(identity, created_at) VALUES ('test:m8', 0)")
    row = "INSERT INTO entries(project_id, namespace, path, content, created_at, updated_at, bytes)"
    for path in ("top.md", "a/x.md", "a/y.md", "a/b/z.md"):
        conn.execute(f"{row} VALUES (1, 'notes', ?, 'x', 0, 0, 1)", (path,))
    conn.execute(f"{row} VALUES (1, 'other', 'q/r.md', 'x', 0, 0, 1)")
    mig.apply_migrations(conn, location="x", target=9)
    rows = conn.execute("SELECT namespace, dir, entries FROM entry_dirs ORDER BY 1, 2").fetchall()
    assert rows == [("notes", "", 1), ("notes", "a/", 2), ("notes", "a/b/", 1), ("other", "q/", 1)]
    conn.close()
    with SQLiteBackend(db_path, project="test:m8") as backend:
        assert backend.list_dirs("notes", "") == ["", "a/", "a/b/"]
        backend.delete("notes", "a/b/z.md")
        assert backend.list_dirs("notes", "a/") == ["a/"]


def test_m001_creates_projects_and_entries(db_path: Path) -> None:
    conn = _at_version(db_path, 1)
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert {"schema_migrations", "projects", "project_aliases", "project_dirs", "entries"} <= tables
    conn.execute("INSERT INTO projects(identity, created_at) VALUES ('p', 0)")
    row = "INSERT INTO entries(project_id, namespace, path, content, created_at, updated_at, bytes)"
    conn.execute(f"{row} VALUES (1, 'notes', 'a', 'x', 0, 0, 1)")
    with pytest.raises(sqlite3.IntegrityError):
        conn.execute(f"{row} VALUES (1, 'notes', 'a', 'y', 0, 0, 1)")
    with pytest.raises(sqlite3.IntegrityError):
        conn.execute(f"{row} VALUES (99, 'notes', 'b', 'y', 0, 0, 1)")  # foreign key


def test_m002_indexes_entries_written_before_it(db_path: Path) -> None:
    conn = _at_version(db_path, 1)
    conn.execute("INSERT INTO projects(identity, created_at) VALUES ('test:m2', 0)")
    conn.execute(
        "INSERT INTO entries(project_id, namespace, path, content, created_at, updated_at, bytes) "
        "VALUES (1, 'notes', 'old.md', 'written before search existed', 0, 0, 29)"
    )
    conn.close()
    with SQLiteBackend(db_path, project="test:m2") as backend:
        assert [h.path for h in backend.search("notes", "existed")] == ["old.md"]


def test_m003_creates_memories_and_the_log(db_path: Path) -> None:
    conn = _at_version(db_path, 2)
    mig.apply_migrations(conn, location="x", target=3)
    conn.execute("INSERT INTO projects(identity, created_at) VALUES ('p', 0)")
    insert = "INSERT INTO memories(project_id, key, content, created_at) VALUES (1, 'k', ?, 0)"
    conn.execute(insert, ("a",))
    with pytest.raises(sqlite3.IntegrityError):
        conn.execute(insert, ("b",))  # a second current row for the key
    conn.execute("INSERT INTO memory_log(project_id, key, op, at) VALUES (1, 'k', 'create', 0)")
    with pytest.raises(sqlite3.IntegrityError):
        conn.execute("INSERT INTO memory_log(project_id, key, op, at) VALUES (1, 'k', 'bad', 0)")


def test_m004_indexes_memories_recorded_before_it(db_path: Path) -> None:
    conn = _at_version(db_path, 3)
    conn.execute("INSERT INTO projects(identity, created_at) VALUES ('test:m4', 0)")
    conn.execute("BEGIN")  # superseded_by is deferred: it may point at the row inserted next
    conn.execute(
        "INSERT INTO memories(id, project_id, key, content, created_at, superseded_by) "
        "VALUES (1, 1, 'goal', 'ship the old version', 0, 2)"
    )
    conn.execute(
        "INSERT INTO memories(id, project_id, key, content, created_at) "
        "VALUES (2, 1, 'goal', 'ship the new version', 1)"
    )
    conn.execute("COMMIT")
    conn.close()
    with SQLiteBackend(db_path, project="test:m4") as backend:
        assert [h.path for h in backend.search("memory", "new")] == ["goal"]
        assert backend.search("memory", "old") == []  # indexed, but not the current version
        assert [v.content for v in backend.history("memory", "goal")] == [
            "ship the old version",
            "ship the new version",
        ]


def test_too_new_database_is_refused_and_left_untouched(db_path: Path) -> None:
    conn = sqlite3.connect(db_path)
    conn.execute("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name, applied_at)")
    conn.execute("INSERT INTO schema_migrations VALUES (?, 'm999_future', 0)", (999,))
    conn.commit()
    conn.close()
    before = (db_path.read_bytes(), db_path.stat().st_mtime_ns)
    with pytest.raises(SchemaTooNewError) as caught:
        SQLiteBackend(db_path, project="test:fence")
    assert caught.value.found == 999 and caught.value.supported == LATEST_SCHEMA_VERSION
    assert "999" in str(caught.value) and "do not delete or reset" in str(caught.value)
    assert (db_path.read_bytes(), db_path.stat().st_mtime_ns) == before


def test_foreign_database_is_refused(db_path: Path) -> None:
    conn = sqlite3.connect(db_path)
    conn.execute("CREATE TABLE somebody_elses (x)")
    conn.commit()
    conn.close()
    before = db_path.read_bytes()
    with pytest.raises(MigrationError, match="not a contextchef database"):
        SQLiteBackend(db_path, project="test:foreign")
    assert db_path.read_bytes() == before


def test_failing_migration_leaves_nothing(db_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    conn = _at_version(db_path, LATEST_SCHEMA_VERSION)

    def m004_broken(c: sqlite3.Connection) -> None:
        c.execute("CREATE TABLE half_done (x)")
        c.execute("THIS IS NOT SQL")

    broken = mig.Migration(LATEST_SCHEMA_VERSION + 1, "m004_broken", m004_broken)
    monkeypatch.setattr(mig, "MIGRATIONS", (*mig.MIGRATIONS, broken))
    monkeypatch.setattr(mig, "LATEST_SCHEMA_VERSION", LATEST_SCHEMA_VERSION + 1)
    with pytest.raises(MigrationError, match="m004_broken"):
        mig.apply_migrations(conn, location="x", target=LATEST_SCHEMA_VERSION + 1)
    assert mig.schema_version(conn) == LATEST_SCHEMA_VERSION
    assert (
        conn.execute("SELECT name FROM sqlite_master WHERE name = 'half_done'").fetchone() is None
    )


def test_reopening_a_current_database_takes_no_write_lock(db_path: Path) -> None:
    with SQLiteBackend(db_path, project="test:lock") as backend:
        backend.write("notes", "n.md", StoredEntry("x"))
    holder = connect(db_path)
    holder.execute("BEGIN IMMEDIATE")
    holder.execute("DELETE FROM entries")  # uncommitted: readers still see the row
    try:
        with SQLiteBackend(db_path, project="test:lock") as again:
            assert again.read("notes", "n.md") is not None
    finally:
        holder.execute("ROLLBACK")
        holder.close()


def test_two_processes_racing_to_migrate_apply_each_step_once(tmp_path: Path) -> None:
    db = tmp_path / "race.db"
    _at_version(db, 1).close()
    go = tmp_path / "go"
    workers = [start_worker("migrate", str(db), str(go)) for _ in range(2)]
    go.touch()
    applied = [finish(w)[0]["applied"] for w in workers]
    assert sorted(applied[0] + applied[1]) == [m.name for m in mig.MIGRATIONS[1:]]
    conn = connect(db)
    rows = conn.execute("SELECT version FROM schema_migrations ORDER BY version").fetchall()
    assert [r[0] for r in rows] == list(range(1, LATEST_SCHEMA_VERSION + 1))
