"""info, check, migrate --dry-run, vacuum, backup/restore and repair of a damaged file."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from contextchef.errors import SchemaTooNewError, StoreCorruptError, StoreError, StoreInUseError
from contextchef.store.backend import StoredEntry
from contextchef.store.backends.sqlite import LATEST_SCHEMA_VERSION, SQLiteBackend, upgrade
from contextchef.store.backends.sqlite import maintenance as mt
from contextchef.store.backends.sqlite.backup import backup, manifest_path, restore
from contextchef.store.backends.sqlite.connection import connect, enable_wal
from contextchef.store.backends.sqlite.migrations import MIGRATIONS, apply_migrations
from contextchef.store.backends.sqlite.repair import repair

CONTENT = "payload {i:04d} " + "filler text that takes room " * 10


def populate(path: Path, n: int = 300) -> dict[str, str]:
    expected = {f"e/{i:04d}": CONTENT.format(i=i) for i in range(n)}
    with SQLiteBackend(path, project="test:maint") as backend:
        backend.keep_versions("memory")  # as `Memory` declares it
        with backend.batch():
            for key, value in expected.items():
                backend.write("notes", key, StoredEntry(value, {"i": key}))
        backend.write("vfs", "one.txt", StoredEntry("vfs file"))
        backend.write("memory", "k", StoredEntry("v"))
    return expected


def test_info_counts_per_project_and_namespace(db_path: Path) -> None:
    populate(db_path, 10)
    with SQLiteBackend(db_path, project="test:other") as other:
        other.write("notes", "x", StoredEntry("abc"))
    report = mt.info(db_path)
    assert report.schema_version == report.supported_version == LATEST_SCHEMA_VERSION
    assert report.pending == [] and report.journal_mode == "wal"
    assert ("test:maint", "notes", 10, 10 * len(CONTENT.format(i=0))) in report.entries
    assert ("test:maint", "vfs", 1, 8) in report.entries
    assert ("test:other", "notes", 1, 3) in report.entries
    assert report.memories == [("test:maint", 1)]
    assert "context.db" in report.sizes


def test_info_on_a_missing_file_says_so(db_path: Path) -> None:
    with pytest.raises(StoreError, match="no database"):
        mt.info(db_path)


def test_check_passes_on_a_healthy_database(db_path: Path) -> None:
    populate(db_path, 20)
    assert mt.check(db_path).ok


def test_check_reports_a_stale_search_index(db_path: Path) -> None:
    populate(db_path, 5)
    conn = connect(db_path)
    conn.execute("DROP TRIGGER entries_fts_insert")
    conn.execute(
        "INSERT INTO entries(project_id, namespace, path, content, created_at, "
        "updated_at, bytes) VALUES (1, 'notes', 'unindexed', 'x', 0, 0, 1)"
    )
    conn.close()
    report = mt.check(db_path)
    assert report.problems == ["full-text index entries_fts: 1 entries are not indexed"]


def test_check_reports_a_stale_namespace_index_and_repair_rebuilds_it(db_path: Path) -> None:
    populate(db_path, 5)
    conn = connect(db_path)
    conn.execute("UPDATE entry_dirs SET entries = 9 WHERE dir = 'e/'")
    conn.close()
    report = mt.check(db_path)
    assert report.problems == [
        "namespace index entry_dirs: 2 directory counts disagree with entries"
    ]
    repair(db_path)
    assert mt.check(db_path).ok
    with SQLiteBackend(db_path, project="test:maint") as backend:
        assert backend.list_dirs("notes", "") == ["e/"]


def test_check_reports_a_stale_memory_search_index(db_path: Path) -> None:
    populate(db_path, 5)
    conn = connect(db_path)
    conn.execute("DROP TRIGGER memories_fts_insert")
    conn.execute(
        "INSERT INTO memories(project_id, key, content, created_at) VALUES (1, 'unindexed', 'x', 0)"
    )
    conn.close()
    report = mt.check(db_path)
    assert report.problems == ["full-text index memories_fts: 1 memory versions are not indexed"]


def test_migrate_dry_run_leaves_the_file_byte_identical(db_path: Path) -> None:
    conn = connect(db_path)
    enable_wal(conn, "x")
    apply_migrations(conn, location="x", target=1)
    conn.close()
    before = (db_path.read_bytes(), db_path.stat().st_mtime_ns)
    report = upgrade.migrate(db_path, dry_run=True)
    assert report.dry_run and report.from_version == 1
    assert report.steps == [m.name for m in MIGRATIONS[1:]]
    assert (db_path.read_bytes(), db_path.stat().st_mtime_ns) == before
    done = upgrade.migrate(db_path)
    assert (done.from_version, done.to_version) == (1, LATEST_SCHEMA_VERSION)
    assert upgrade.migrate(db_path).steps == []


def test_migrate_dry_run_of_a_missing_file_creates_nothing(db_path: Path) -> None:
    report = upgrade.migrate(db_path, dry_run=True)
    assert report.steps and not db_path.exists()


def test_vacuum_shrinks_and_prunes(db_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    populate(db_path, 300)
    with SQLiteBackend(db_path, project="test:maint") as backend:
        for i in range(300):
            backend.delete("notes", f"e/{i:04d}")
        for i in range(5):
            backend.write("memory", "k", StoredEntry(f"v{i}"))
    monkeypatch.setattr("contextchef.store.backends.sqlite._versioned.LOG_MAX_ROWS_PER_PROJECT", 2)
    steps: list[tuple[int, int]] = []
    report = mt.vacuum(db_path, progress=lambda d, t: steps.append((d, t)))
    assert report.bytes_after < report.bytes_before
    assert report.pruned_log_rows == 4
    assert steps[-1][0] == steps[-1][1]
    assert mt.check(db_path).ok


def test_vacuum_deletes_the_vectors_whose_entry_is_gone(db_path: Path) -> None:
    with SQLiteBackend(db_path, project="test:maint") as backend:
        backend.keep_versions("memory")
        for ns in ("notes", "memory"):
            for key in ("kept", "gone"):
                backend.write(ns, key, StoredEntry(f"{ns} {key}"))
            backend.put_vectors(ns, {"kept": [1.0, 0.0], "kept//title": [0.0, 1.0]})
            backend.put_vectors(ns, {"gone": [1.0, 1.0], "gone//title": [1.0, 0.5]})
            backend.delete(ns, "gone")  # behind the index's back: its vectors stay
            backend.put_vectors(ns, {"never//x": [0.5, 0.5]})
    report = mt.vacuum(db_path)
    assert report.orphaned_vectors == 6
    with SQLiteBackend(db_path, project="test:maint") as backend:
        for ns in ("notes", "memory"):
            found = backend.nearest(ns, [1.0, 0.0], prefix="", limit=None)
            assert sorted(path for path, _ in found) == ["kept", "kept//title"]


def test_backup_and_restore_round_trip(tmp_path: Path, db_path: Path) -> None:
    expected = populate(db_path, 50)
    result = backup(db_path, tmp_path / "copy.db")
    manifest = json.loads(manifest_path(result.path).read_text())
    assert manifest["schema_version"] == result.schema_version == LATEST_SCHEMA_VERSION
    assert manifest["integrity_check"] == "ok" and len(manifest["sha256"]) == 64
    assert mt.check(result.path).ok
    with pytest.raises(StoreError, match="already exists"):
        backup(db_path, result.path)
    in_dir = backup(db_path, tmp_path)
    assert in_dir.path.parent == tmp_path and in_dir.path.is_file()

    with SQLiteBackend(db_path, project="test:maint") as backend:
        backend.write("notes", "after-backup", StoredEntry("not in the backup"))
        backend.write("memory", "k", StoredEntry("v2 not in the backup"))
        with pytest.raises(StoreInUseError, match="this process"):
            restore(result.path, db_path)  # the open backend would write into the old file
    restored = restore(result.path, db_path)
    assert restored.moved_aside is not None
    assert {p.name for p in restored.moved_aside.iterdir()} >= {"context.db"}
    with SQLiteBackend(db_path, project="test:maint") as backend:
        assert backend.read("notes", "after-backup") is None
        assert {k: v.content for k, v in backend.read_all("notes").items()} == expected
        assert [v.content for v in backend.history("memory", "k")] == ["v"]
    with SQLiteBackend(restored.moved_aside / "context.db", project="test:maint") as old:
        assert old.read("notes", "after-backup") is not None


def test_restore_refuses_a_backup_newer_than_the_build(tmp_path: Path, db_path: Path) -> None:
    populate(db_path, 3)
    result = backup(db_path, tmp_path / "copy.db")
    manifest = json.loads(manifest_path(result.path).read_text())
    manifest_path(result.path).write_text(json.dumps({**manifest, "schema_version": 999}))
    before = db_path.read_bytes()
    with pytest.raises(SchemaTooNewError):
        restore(result.path, db_path)
    manifest_path(result.path).unlink()
    raw = sqlite3.connect(result.path)
    raw.execute("INSERT INTO schema_migrations VALUES (999, 'm999_future', 0)")
    raw.commit()
    raw.close()
    with pytest.raises(SchemaTooNewError):
        restore(result.path, db_path)
    assert db_path.read_bytes() == before


def test_restore_refuses_a_backup_that_does_not_match_its_manifest(
    tmp_path: Path, db_path: Path
) -> None:
    populate(db_path, 3)
    result = backup(db_path, tmp_path / "copy.db")
    with result.path.open("ab") as handle:
        handle.write(b"\0")
    with pytest.raises(StoreCorruptError, match="sha256"):
        restore(result.path, db_path)


def corrupt_one_leaf(path: Path, table: str) -> int:
    """Overwrite one leaf page of `table` in the middle of the file; returns the page number."""
    conn = sqlite3.connect(path)
    leaves = [
        r[0]
        for r in conn.execute(
            "SELECT pageno FROM dbstat WHERE name = ? AND pagetype = 'leaf' ORDER BY pageno",
            (table,),
        )
    ]
    page_size = conn.execute("PRAGMA page_size").fetchone()[0]
    conn.close()
    page = leaves[len(leaves) // 2]
    with path.open("r+b") as handle:
        handle.seek((page - 1) * page_size)
        handle.write(bytes([0xA5]) * page_size)
    return page


def test_corrupted_page_is_reported_and_repaired(db_path: Path) -> None:
    expected = populate(db_path, 300)
    corrupt_one_leaf(db_path, "entries")
    damaged = db_path.read_bytes()
    report = mt.check(db_path)
    assert not report.ok
    assert any(p.startswith(("integrity", "unreadable")) for p in report.problems)

    outcome = repair(db_path)
    assert (outcome.backup_dir / "context.db").read_bytes() == damaged
    assert mt.check(db_path).ok
    entries = next(t for t in outcome.tables if t.table == "entries")
    assert entries.unreadable and not outcome.lossless
    with SQLiteBackend(db_path, project="test:maint") as backend:
        salvaged = {k: v.content for k, v in backend.read_all("notes").items()}
        assert backend.read("memory", "k") is not None
        assert [h.path for h in backend.search("memory", "v")] == ["k"]
        assert backend.read("vfs", "one.txt") is not None
        hits = backend.search("notes", "payload 0001")
    assert len(salvaged) == entries.recovered - 1  # the vfs entry is the other one
    assert len(salvaged) >= 250
    assert all(expected[k] == v for k, v in salvaged.items())
    assert [h.path for h in hits] == (["e/0001"] if "e/0001" in salvaged else [])


def test_repair_of_a_healthy_database_loses_nothing(db_path: Path) -> None:
    expected = populate(db_path, 20)
    outcome = repair(db_path)
    assert outcome.lossless
    with SQLiteBackend(db_path, project="test:maint") as backend:
        assert {k: v.content for k, v in backend.read_all("notes").items()} == expected
        assert [m.content for m in backend.history("memory", "k")] == ["v"]
