"""`read_recent_where` on SQLite: the SQL it renders keeps exactly the entries the Python
reference (`where.matches`) keeps, in a plain namespace and in a versioned one (tested in
Python there), whichever way the page is read (newest first, or the prefix's key range)."""

from __future__ import annotations

import json

import pytest

from contextchef.store.backend import StoredEntry
from contextchef.store.backends.sqlite import SQLiteBackend
from contextchef.store.backends.sqlite._where import _by_recency, page_where
from contextchef.store.where import (
    All,
    Compare,
    Condition,
    IfPresent,
    Is,
    Length,
    NameStarts,
    Not,
)

CONTENTS = [
    {"k": "b", "n": 1},
    {"k": "a", "n": 2.5, "t": True},
    {"k": {"x": "b"}, "n": None},
    {"k": ["b", 1], "n": "1"},
    {"t": False, "a.b": 3, "a": {"b": 4}},
    {"a": {"b": [1, 2, 3]}},
]

CONDITIONS: list[Condition] = [
    Compare(("k",), "=", "b"),
    Compare(("n",), ">=", 1),
    Compare(("n",), "<", "2"),
    Compare(("t",), "=", 1),
    Not(Compare(("k",), "=", "b")),
    Is(("n",), frozenset({"null"})),
    Is(("k",), frozenset({"object", "array"})),
    All((Is(("k",), frozenset({"array"})), Length(("k",), 2), Compare(("k", 1), "=", 1))),
    IfPresent(("a.b",), Compare(("a.b",), "=", 3), Compare(("a", "b"), "=", 4)),
    Compare(("a", "b", 2), ">", 2),
    Compare(("k", "x"), "=", "b"),
    NameStarts("="),
    All((NameStarts("="), Not(Is(("k",), frozenset({"string"}))))),
    All(()),
]


@pytest.fixture
def filled(backend: SQLiteBackend) -> SQLiteBackend:
    for ns in ("plain", "kept"):
        if ns == "kept":
            backend.keep_versions(ns)
        for n, content in enumerate(CONTENTS):
            meta = {"updated_at": 100.0 + n % 3}  # ties broken by path
            backend.write(ns, f"d{n % 2}/={n}", StoredEntry(json.dumps(content), meta))
        backend.write(ns, "d0/notes.md", StoredEntry("not JSON {", {"updated_at": 50.0}))
        backend.write(ns, "d1/=raw", StoredEntry('"a JSON string"', {"updated_at": 60.0}))
    return backend


@pytest.mark.parametrize("condition", CONDITIONS, ids=[str(i) for i in range(len(CONDITIONS))])
def test_sql_keeps_what_the_reference_keeps(filled: SQLiteBackend, condition: Condition) -> None:
    for prefix in ("", "d0/", "d1/"):
        expected = page_where(filled.read_all("plain", prefix), condition, 100, 0)
        found = filled.read_recent_where("plain", prefix, condition, 100, 0)
        assert list(found) == list(expected)
        assert list(filled.read_recent_where("kept", prefix, condition, 100, 0)) == list(found)
        for limit, offset in ((1, 0), (2, 1), (3, 2)):
            page = filled.read_recent_where("plain", prefix, condition, limit, offset)
            assert list(page) == list(expected)[offset : offset + limit]


def test_only_json_content_meets_a_condition_on_it(filled: SQLiteBackend) -> None:
    anything = Not(Is(("k",), frozenset()))  # holds for every JSON content
    assert "d0/notes.md" not in filled.read_recent_where("plain", "", anything, 100, 0)
    assert "d0/notes.md" in filled.read_recent_where("plain", "", All(()), 100, 0)
    assert filled.supports("read_recent_where", "plain")
    assert not filled.supports("read_recent_where", "kept")  # its rows are tested in Python


def test_a_large_prefix_is_read_newest_first_and_a_small_one_by_its_range(
    backend: SQLiteBackend,
) -> None:
    with backend.batch():
        for n in range(600):
            backend.write("many", f"u/{n % 200}/={n}", StoredEntry("{}"))
    pid = backend.project.id
    with backend.connection() as conn:
        assert _by_recency(conn, pid, "many", "", 10)
        assert _by_recency(conn, pid, "many", "u/", 10)  # the whole namespace
        assert not _by_recency(conn, pid, "many", "u/7/", 10)  # 3 of 600 entries
        assert not _by_recency(conn, pid, "many", "u/19", 10)  # 33 of 600 entries
    condition = Compare(("k",), "=", 1)
    assert backend.read_recent_where("many", "u/7/", condition, 10, 0) == {}
