"""sqlite-vec (`contextchef[vec]`), where this interpreter can load it: the SQLite backend ranks
in SQL and rescores exactly, so it answers exactly as without it (see `sqlite/_vec.py`)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from contextchef.store.backends.sqlite import SQLiteBackend
from contextchef.store.backends.sqlite._vec import load
from contextchef.store.backends.sqlite._vectors import READ_AFTER
from contextchef.store.vectors import rank
from tests.semantic_embedding import embed_one


def _loadable() -> bool:
    conn = sqlite3.connect(":memory:")
    try:
        return load(conn)
    finally:
        conn.close()


LOADABLE = _loadable()

WORDS = ["login", "retry", "lunch", "weather", "flaky", "auth", "spec", "noon", "rain", "fix"]
TEXTS = {f"n/{i:03d}.md": f"{WORDS[i % 10]} {WORDS[i * 7 % 10]} {i}" for i in range(120)}


def test_without_sqlite_vec_nothing_is_loaded() -> None:
    if LOADABLE:
        pytest.skip("sqlite-vec loads here: see the test below")
    assert load(sqlite3.connect(":memory:")) is False  # the exact scorer answers, as before


@pytest.mark.skipif(
    not LOADABLE,
    reason="sqlite-vec is not installed (contextchef[vec]) or this interpreter's sqlite3 "
    "cannot load extensions (no enable_load_extension, e.g. a pyenv build)",
)
@pytest.mark.parametrize("metric", ["cosine", "l2", "inner_product"])
def test_sqlite_vec_ranks_in_sql_and_scores_exactly(tmp_path: Path, metric: str) -> None:
    backend = SQLiteBackend(tmp_path / "vec.db", project="test:vec")
    vectors = {path: embed_one(text) for path, text in TEXTS.items()}
    backend.put_vectors("notes", vectors)
    backend.put_vectors("notes", {"n/zero.md": [0.0] * len(vectors["n/000.md"])})
    vectors["n/zero.md"] = [0.0] * len(vectors["n/000.md"])
    query = embed_one("flaky login retry")
    for limit, prefix in ((5, ""), (1, "n/01"), (40, "")):
        items = [(p, v) for p, v in vectors.items() if p.startswith(prefix)]
        expected = rank(query, items, metric=metric, limit=limit)
        got = backend.nearest("notes", query, metric=metric, prefix=prefix, limit=limit)
        assert got == expected
    cache = backend._vectors.cache
    assert cache.vec is not None and cache.vec[1]  # loaded into the backend's connection
    assert bool(cache._sets) == (metric == "inner_product")  # read into Python only then
    expected = rank(query, list(vectors.items()), metric=metric, limit=3)
    for _ in range(READ_AFTER):  # searched on without a change: then read, answering alike
        assert backend.nearest("notes", query, metric=metric, limit=3) == expected
    assert cache._sets
    backend.put_vectors("notes", {"n/000.md": query})  # a change: sqlite-vec answers again
    vectors["n/000.md"] = query
    expected = rank(query, list(vectors.items()), metric=metric, limit=3)
    assert backend.nearest("notes", query, metric=metric, limit=3) == expected
    assert bool(cache._sets) == (metric == "inner_product")
