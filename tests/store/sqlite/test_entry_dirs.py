"""The namespace index `entry_dirs` (m009): whatever writes, deletes or moves entries, it holds
exactly the number of entries in each directory, and listing directories reads only it."""

from __future__ import annotations

import random
import sqlite3
from collections import Counter
from collections.abc import Mapping
from pathlib import Path

from contextchef.store.backend import StoredEntry, Transaction
from contextchef.store.backends.sqlite import SQLiteBackend


def _index(backend: SQLiteBackend) -> dict[tuple[str, str], int]:
    with backend.connection() as conn:
        rows = conn.execute("SELECT namespace, dir, entries FROM entry_dirs").fetchall()
    return {(ns, d): n for ns, d, n in rows}


def _counted(backend: SQLiteBackend) -> dict[tuple[str, str], int]:
    with backend.connection() as conn:
        rows = conn.execute("SELECT namespace, path FROM entries").fetchall()
    return dict(Counter((ns, p[: p.rfind("/") + 1]) for ns, p in rows))


def _move(old: str, new: str) -> Transaction:
    def change(found: Mapping[str, StoredEntry | None]) -> Mapping[str, StoredEntry | None]:
        entry = found[old]
        return {} if entry is None or found[new] is not None else {old: None, new: entry}

    return change


def test_the_index_follows_every_kind_of_write(backend: SQLiteBackend) -> None:
    rng = random.Random(8)
    paths = [f"{d}{n}.md" for d in ("", "a/", "a/b/", "c/d/e/") for n in range(4)]
    for _ in range(300):
        ns, path, other = rng.choice(("notes", "docs")), rng.choice(paths), rng.choice(paths)
        action = rng.randrange(6)
        if action < 2:
            backend.write(ns, path, StoredEntry("text"))
        elif action == 2:
            backend.delete(ns, path)
        elif action == 3:
            backend.append(ns, path, " more")
        elif action == 4 and path != other:  # a rename, as the store's edits make it
            backend.transact(ns, (path, other), _move(path, other))
        else:
            backend.create(ns, path, StoredEntry("created"))
        assert _index(backend) == _counted(backend)
    with backend.connection() as conn:  # no flow moves a row, but the index would follow
        conn.execute("UPDATE entries SET path = 'moved/' || path WHERE path LIKE 'a/%'")
    assert _index(backend) == _counted(backend)
    kept = {p: e for p, e in backend.snapshot("notes").items() if p.startswith("c/")}
    backend.restore("notes", kept)
    assert _index(backend) == _counted(backend)
    backend.keep_versions("docs")  # its entries move to the versioned table
    assert _index(backend) == _counted(backend)
    assert not any(ns == "docs" for ns, _ in _index(backend))


def test_a_directory_goes_with_its_last_entry_and_a_project_with_its_rows(db_path: Path) -> None:
    with SQLiteBackend(db_path, project="test:gone") as backend:
        backend.write("notes", "a/x.md", StoredEntry("x"))
        backend.write("notes", "a/y.md", StoredEntry("y"))
        backend.delete("notes", "a/x.md")
        assert backend.list_dirs("notes", "") == ["a/"]
        backend.delete("notes", "a/y.md")
        assert backend.list_dirs("notes", "") == []
        backend.write("notes", "b/z.md", StoredEntry("z"))
    conn = sqlite3.connect(db_path)
    conn.execute("PRAGMA foreign_keys = ON")
    conn.execute("DELETE FROM projects")
    assert conn.execute("SELECT count(*) FROM entry_dirs").fetchone() == (0,)
    conn.close()


def test_listing_directories_reads_the_index_not_the_entries(backend: SQLiteBackend) -> None:
    for n in range(50):
        backend.write("notes", f"d{n % 5}/{n}.md", StoredEntry("x"))
    with backend.connection() as conn:
        conn.execute("DELETE FROM entry_dirs WHERE dir = 'd3/'")  # now only the index knows
    assert backend.list_dirs("notes", "") == ["d0/", "d1/", "d2/", "d4/"]
    assert backend.list_dirs("notes", "d1/") == ["d1/"]
