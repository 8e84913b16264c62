"""FTS5 search: user input is escaped, results are ranked by bm25, the index follows content."""

from __future__ import annotations

import pytest

from contextchef.store.backend import StoredEntry
from contextchef.store.backends.sqlite import SQLiteBackend
from contextchef.store.backends.sqlite.backend import fts_query


@pytest.mark.parametrize(
    "query",
    [
        "-",
        ":",
        "*",
        "(",
        '"',
        "a-b",
        "c:d",
        "e*",
        "(f",
        'g"h',
        "NOT",
        "AND OR",
        "NEAR(x y)",
        '"unterminated',
        "^start",
        "col:value",
        '-:*("',
        "",
        "   ",
        "'; DROP TABLE entries; --",
        "0\x00",
        "a\x00b",
    ],
)
def test_syntax_characters_never_raise(backend: SQLiteBackend, query: str) -> None:
    backend.write("notes", "n.md", StoredEntry('a-b c:d e* (f g"h NOT AND OR col value'))
    backend.search("notes", query)
    assert backend.exists("notes", "n.md")


def test_fts_query_quotes_every_word() -> None:
    assert fts_query('say "hi" -now') == '"say"* """hi"""* "-now"*'
    assert fts_query("-:*(") is None
    assert fts_query("a\x00b") == '"a"* "b"*'


def test_operators_are_plain_words(backend: SQLiteBackend) -> None:
    backend.write("notes", "ops.md", StoredEntry("use AND to join, NOT to negate"))
    backend.write("notes", "other.md", StoredEntry("nothing here"))
    assert [h.path for h in backend.search("notes", "AND")] == ["ops.md"]
    assert [h.path for h in backend.search("notes", "join -negate")] == ["ops.md"]


def test_every_word_must_match_as_a_prefix(backend: SQLiteBackend) -> None:
    backend.write("notes", "a.md", StoredEntry("the database migration failed"))
    backend.write("notes", "b.md", StoredEntry("the database is fine"))
    assert [h.path for h in backend.search("notes", "datab migr")] == ["a.md"]
    assert {h.path for h in backend.search("notes", "database")} == {"a.md", "b.md"}
    assert backend.search("notes", "absent") == []


def test_ranked_by_bm25(backend: SQLiteBackend) -> None:
    backend.write("notes", "once.md", StoredEntry("kettle " + "filler words here " * 30))
    backend.write("notes", "often.md", StoredEntry("kettle kettle kettle boils"))
    backend.write("notes", "none.md", StoredEntry("teapot"))
    hits = backend.search("notes", "kettle")
    assert [h.path for h in hits] == ["often.md", "once.md"]
    assert hits[0].score is not None and hits[1].score is not None
    assert hits[0].score > hits[1].score
    assert hits[0].snippet is not None and "kettle" in hits[0].snippet
    assert hits[0].meta["bytes"] == len("kettle kettle kettle boils")


def test_path_is_searchable_and_prefix_and_limit_apply(backend: SQLiteBackend) -> None:
    for i in range(5):
        backend.write("vfs", f"logs/run{i}.txt", StoredEntry(f"error number {i}"))
    backend.write("vfs", "other/run.txt", StoredEntry("error elsewhere"))
    assert len(backend.search("vfs", "error")) == 6
    assert {h.path for h in backend.search("vfs", "error", prefix="logs/")} == {
        f"logs/run{i}.txt" for i in range(5)
    }
    assert len(backend.search("vfs", "error", limit=2)) == 2
    assert backend.search("vfs", "error", limit=0) == []
    assert [h.path for h in backend.search("vfs", "elsewhere")] == ["other/run.txt"]
    assert {h.path for h in backend.search("vfs", "other")} == {"other/run.txt"}


def test_unicode_and_diacritics(backend: SQLiteBackend) -> None:
    backend.write("notes", "fr.md", StoredEntry("une idée naïve à Zürich"))
    assert [h.path for h in backend.search("notes", "idee naive zurich")] == ["fr.md"]


def test_index_follows_updates_and_deletes(backend: SQLiteBackend) -> None:
    backend.write("notes", "n.md", StoredEntry("old words"))
    backend.write("notes", "n.md", StoredEntry("new words"))
    assert backend.search("notes", "old") == []
    assert [h.path for h in backend.search("notes", "new")] == ["n.md"]
    backend.delete("notes", "n.md")
    assert backend.search("notes", "words") == []


def test_index_rewritten_only_when_content_changes(backend: SQLiteBackend) -> None:
    backend.write("notes", "n.md", StoredEntry("stable text", {"v": 1}))
    with backend.connection() as conn:

        def changes(action: str) -> int:
            before = conn.total_changes
            if action == "touch":
                backend.touch("notes", "n.md", 5.0)
            elif action == "meta":
                backend.write("notes", "n.md", StoredEntry("stable text", {"v": 2}))
            else:
                backend.write("notes", "n.md", StoredEntry("changed text"))
            return conn.total_changes - before

        assert changes("touch") == 1
        assert changes("meta") == 1
        assert changes("content") > 1
