"""Access times live in `entry_access`: a read never rewrites the entry's row, the m005 migration
and `db repair` carry existing times over, and they go away with their entry."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from contextchef.store import Store
from contextchef.store.backend import StoredEntry
from contextchef.store.backends.sqlite import SQLiteBackend
from contextchef.store.backends.sqlite import migrations as mig
from contextchef.store.backends.sqlite.connection import connect, enable_wal
from contextchef.store.backends.sqlite.repair import repair

BIG = "x" * (2 * 1024 * 1024)


def _statements(backend: SQLiteBackend) -> list[str]:
    """Every SQL statement the backend's connection runs from now on (appended as it runs)."""
    seen: list[str] = []
    with backend.connection() as conn:
        conn.set_trace_callback(seen.append)
    return seen


def _access_rows(path: Path) -> dict[str, float]:
    conn = sqlite3.connect(path)
    try:
        rows = conn.execute(
            "SELECT e.path, a.accessed_at FROM entry_access AS a JOIN entries AS e "
            "ON e.id = a.entry_id"
        ).fetchall()
    finally:
        conn.close()
    return dict(rows)


def test_get_writes_nothing_and_the_access_time_goes_to_entry_access_only(
    db_path: Path,
) -> None:
    clock = iter([100.0, 200.0, 300.0])
    backend = SQLiteBackend(db_path, project="test:access")
    store = Store(backend, clock=lambda: next(clock))
    notes = store.namespace("notes")
    notes.put("big.md", BIG)  # clock 100: created/updated
    statements = _statements(backend)
    entry = notes.get("big.md")  # clock 200: the access time, kept in memory
    assert entry is not None and entry.content == BIG
    assert [s for s in statements if not s.lstrip().upper().startswith("SELECT")] == []
    stored = backend.read("notes", "big.md")
    assert stored is not None and stored.meta.get("accessed_at") is None
    store.flush()
    writes = [s for s in statements if not s.lstrip().upper().startswith(("SELECT", "BEGIN"))]
    assert writes and all("entries(" not in s and "UPDATE entries" not in s for s in writes)
    assert any("entry_access" in s for s in writes)
    stored = backend.read("notes", "big.md")
    assert stored is not None and stored.meta["accessed_at"] == 200.0
    assert stored.updated_at == 100.0
    backend.close()
    conn = sqlite3.connect(db_path)
    assert conn.execute("SELECT accessed_at FROM entries").fetchall() == [(None,)]
    conn.close()


def test_a_pending_access_time_is_flushed_into_entry_access_only(db_path: Path) -> None:
    backend = SQLiteBackend(db_path, project="test:access")
    backend.write("notes", "a.md", StoredEntry(BIG))
    other = sqlite3.connect(db_path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    try:
        backend.touch("notes", "a.md", 42.0)  # the lock is taken: kept in memory
    finally:
        other.execute("COMMIT")
        other.close()
    statements = _statements(backend)
    backend.close()  # the pending time is written at close
    assert [s for s in statements if "entries" in s and "entry_access" not in s] == []
    assert _access_rows(db_path) == {"a.md": 42.0}


def test_access_rows_follow_their_entry(db_path: Path) -> None:
    with SQLiteBackend(db_path, project="test:access") as backend:
        backend.write("notes", "kept.md", StoredEntry("v1", {"accessed_at": 5.0}))
        assert backend.create("notes", "new.md", StoredEntry("n", {"accessed_at": 6.0}))
        backend.write("notes", "gone.md", StoredEntry("g"))
        backend.touch("notes", "gone.md", 7.0)
        backend.write("notes", "kept.md", StoredEntry("v2"))  # no accessed_at: keeps it
        assert _access_rows(db_path) == {"kept.md": 5.0, "new.md": 6.0, "gone.md": 7.0}
        backend.delete("notes", "gone.md")
        assert _access_rows(db_path) == {"kept.md": 5.0, "new.md": 6.0}
        backend.restore("notes", {"kept.md": StoredEntry("v3")})
        assert _access_rows(db_path) == {"kept.md": 5.0}
        listed = {e.path: e.meta.get("accessed_at") for e in backend.list("notes")}
        assert listed == {"kept.md": 5.0}
        assert [h.meta["accessed_at"] for h in backend.search("notes", "v3")] == [5.0]
        conn = sqlite3.connect(db_path)
        count = "SELECT count(*) FROM entry_access"
        assert conn.execute(count).fetchone() == (1,)
        conn.close()


def _at_version(path: Path, version: int) -> sqlite3.Connection:
    conn = connect(path)
    enable_wal(conn, str(path))
    mig.apply_migrations(conn, location=str(path), target=version)
    return conn


def _seed_v4_with_access_times(path: Path) -> None:
    conn = _at_version(path, 4)
    conn.execute("INSERT INTO projects(identity, created_at) VALUES ('test:m5', 0)")
    insert = (
        "INSERT INTO entries(project_id, namespace, path, content, created_at, updated_at, "
        "accessed_at, bytes) VALUES (1, 'notes', ?, 'text', 1, 2, ?, 4)"
    )
    conn.executemany(insert, [("read.md", 50.0), ("never-read.md", None), ("also.md", 60.0)])
    conn.close()


def test_m005_moves_existing_access_times_into_entry_access(db_path: Path) -> None:
    _seed_v4_with_access_times(db_path)
    with SQLiteBackend(db_path, project="test:m5") as backend:
        times = {e.path: e.meta.get("accessed_at") for e in backend.list("notes")}
        assert times == {"also.md": 60.0, "never-read.md": None, "read.md": 50.0}
        versioned = backend.read_versioned("notes", "read.md")
        assert versioned is not None
        backend.touch("notes", "read.md", 70.0)
        again = backend.read_versioned("notes", "read.md")
        assert again is not None and again[1] == versioned[1]  # a read is not a new version
        assert again[0].meta["accessed_at"] == 70.0
    assert _access_rows(db_path) == {"read.md": 70.0, "also.md": 60.0}
    conn = sqlite3.connect(db_path)
    assert conn.execute("SELECT DISTINCT accessed_at FROM entries").fetchall() == [(None,)]
    conn.close()


def test_repair_keeps_access_times(db_path: Path) -> None:
    with SQLiteBackend(db_path, project="test:repair") as backend:
        backend.write("notes", "a.md", StoredEntry("a"))
        backend.write("notes", "b.md", StoredEntry("b"))
        backend.touch("notes", "a.md", 11.0)
    outcome = repair(db_path)
    assert outcome.lossless
    assert {t.table: t.recovered for t in outcome.tables}["entry_access"] == 1
    assert _access_rows(db_path) == {"a.md": 11.0}


def test_repair_of_a_file_older_than_m005_moves_its_access_times(db_path: Path) -> None:
    _seed_v4_with_access_times(db_path)
    outcome = repair(db_path)
    assert outcome.lossless
    salvaged = {t.table: t for t in outcome.tables}["entry_access"]
    assert (salvaged.recovered, salvaged.source_rows, salvaged.final_rows) == (2, 2, 2)
    assert _access_rows(db_path) == {"read.md": 50.0, "also.md": 60.0}
    with SQLiteBackend(db_path, project="test:m5") as backend:
        assert backend.read("notes", "read.md").meta["accessed_at"] == 50.0  # type: ignore[union-attr]
