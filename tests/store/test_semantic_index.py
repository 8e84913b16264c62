"""The semantic index's configuration, embedding calls and scoring (the store side; every
backend's ranking is in tests/contract/test_vectors_contract.py)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from contextchef._effects import drive_sync
from contextchef.errors import ConfigError, StoreCapabilityError, StoreError
from contextchef.store import AsyncStore, IndexConfig, InMemoryBackend, Store, StoredEntry
from contextchef.store.indexing import RRF_K, fuse, text_of
from contextchef.store.vectors import pack, rank, unpack
from tests.contract.helpers import Minimal
from tests.semantic_embedding import DIMS, AsyncEmbedding, Embedding, cosine, embed, embed_one


def _store(**index: Any) -> Store:
    return Store(InMemoryBackend(), index={"embed": embed, "dims": DIMS, **index})


@pytest.mark.parametrize(
    ("index", "message"),
    [
        ({"dims": 3}, "at least 'embed' and 'dims'"),
        ({"embed": embed, "dims": 0}, "dims must be a positive int"),
        ({"embed": "model", "dims": 3}, "must be a callable"),
        ({"embed": embed, "dims": 3, "fields": "content"}, "lists of names"),
        ({"embed": embed, "dims": 3, "metric": "manhattan"}, "metric must be one of"),
        ({"embed": embed, "dims": 3, "model": "x"}, "unknown index option"),
    ],
)
def test_a_bad_index_is_refused_with_its_reason(index: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        Store(InMemoryBackend(), index=index)


def test_a_backend_without_vectors_is_refused() -> None:
    with pytest.raises(StoreCapabilityError, match="vectors"):
        Store(Minimal(InMemoryBackend()), index={"embed": embed, "dims": DIMS})


def test_without_an_index_search_is_lexical_and_semantic_modes_are_refused() -> None:
    notes = Store(InMemoryBackend()).namespace("notes")
    notes.put("a.md", "retry on 401")
    assert [(hit.path, hit.matched) for hit in notes.search("401")] == [("a.md", ())]
    with pytest.raises(ConfigError, match="needs a semantic index"):
        notes.search("401", mode="semantic")
    with pytest.raises(ConfigError, match="search mode must be one of"):
        _store().namespace("notes").search("401", mode="fuzzy")  # type: ignore[arg-type]


def test_only_the_configured_namespaces_are_indexed() -> None:
    embedding = Embedding()
    store = Store(
        InMemoryBackend(), index={"embed": embedding, "dims": DIMS, "namespaces": ["notes"]}
    )
    store.namespace("vfs").put("big.txt", "a long tool output about logins")
    assert embedding.batches == []
    store.namespace("notes").put("a.md", "login")
    assert embedding.batches == [["login"]]
    assert store.namespace("vfs").search("login")[0].matched == ()


def test_fields_choose_what_is_embedded() -> None:
    embedding = Embedding()
    store = Store(
        InMemoryBackend(),
        index={"embed": embedding, "dims": DIMS, "fields": ["title", "content"]},
    )
    notes = store.namespace("notes")
    notes.put("a.md", "body text", {"title": "Login bug"})
    notes.put("b.md", "only a body")
    notes.put("c.md", "", {"tags": ["x"]})  # nothing to embed: no vector, no call
    assert embedding.batches == [["Login bug\nbody text"], ["only a body"]]
    assert [hit.path for hit in notes.search("auth", mode="semantic")] == ["a.md", "b.md"]


def test_text_of_renders_non_string_meta_as_json() -> None:
    entry = StoredEntry("x", {"tags": ["b", "a"], "n": 2})
    assert text_of(entry, ["tags", "n", "missing"]) == '["b", "a"]\n2'
    assert text_of(entry, ["missing"]) is None


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        (lambda texts: [[1.0] * (DIMS - 1) for _ in texts], "configured with dims"),
        (lambda texts: [], "returned 0 vectors for 1 texts"),
        (lambda texts: [[float("nan")] * DIMS for _ in texts], "NaN"),
        (lambda texts: [None for _ in texts], "something else than vectors"),
    ],
)
def test_a_wrong_embedding_answer_is_a_store_error(answer: Any, message: str) -> None:
    notes = Store(InMemoryBackend(), index={"embed": answer, "dims": DIMS}).namespace("notes")
    with pytest.raises(StoreError, match=message):
        notes.put("a.md", "text")


def test_an_async_embedding_needs_the_async_store() -> None:
    embedding = AsyncEmbedding()
    sync = Store(InMemoryBackend(), index={"embed": embedding, "dims": DIMS})
    with pytest.raises(ConfigError):
        sync.namespace("notes").put("a.md", "login")

    async def scenario() -> list[str]:
        store = AsyncStore(InMemoryBackend(), index={"embed": embedding, "dims": DIMS})
        notes = store.namespace("notes")
        await notes.put("a.md", "retry on 401 in auth.py")
        await notes.put("b.md", "sunny weather")
        return [hit.path for hit in await notes.search("login", mode="semantic")]

    assert asyncio.run(scenario()) == ["a.md", "b.md"]
    assert embedding.recorder.batches[-1] == ["login"]  # the query, through aembed_query


def test_rename_and_update_move_and_refresh_the_vector() -> None:
    store = _store()
    notes = store.namespace("notes")
    notes.put("a.md", "sunny weather")
    notes.update("a.md", lambda entry: ("login is flaky", dict(entry.meta)))
    assert notes.search("auth", mode="semantic")[0].score == pytest.approx(
        cosine(embed_one("auth"), embed_one("login is flaky")), abs=1e-8
    )
    assert drive_sync(store.core.rename("notes", "a.md", "b.md", lambda e: (e.content, {})))
    assert [hit.path for hit in notes.search("auth", mode="semantic")] == ["b.md"]


def test_fusion_adds_reciprocal_ranks() -> None:
    fused = fuse([("lexical", ["a", "b"]), ("semantic", ["b", "c"])])
    assert fused == [
        ("b", round(1 / (RRF_K + 2) + 1 / (RRF_K + 1), 9), ("lexical", "semantic")),
        ("a", round(1 / (RRF_K + 1), 9), ("lexical",)),
        ("c", round(1 / (RRF_K + 2), 9), ("semantic",)),
    ]


def test_blobs_round_trip_exactly() -> None:
    vector = [0.1, -2.5, 1e-300, 3.0]
    assert unpack(pack(vector)) == tuple(vector)


def test_numpy_and_pure_python_rank_alike() -> None:
    numpy = pytest.importorskip("numpy")
    items = [(f"p{i}", embed_one(f"note {i} about login {i * 7}")) for i in range(40)]
    items += [(f"twin{i}", embed_one("login note")) for i in range(5)]  # ties across the cut
    query = embed_one("login note")
    for metric in ("cosine", "l2", "inner_product"):
        for limit in (None, 3, 10):
            expected = rank(query, items, metric=metric, limit=limit)
            assert rank(query, items, metric=metric, limit=limit, numpy=numpy) == expected
    assert [path for path, _ in rank(query, items, limit=3, numpy=numpy)] == [
        "twin0",
        "twin1",
        "twin2",
    ]


def test_index_config_is_accepted_as_an_object() -> None:
    config = IndexConfig(embed=embed, dims=DIMS, fields=("content",))
    store = Store(InMemoryBackend(), index=config)
    assert store.index is config


def test_sqlite_sees_the_vectors_another_connection_writes(tmp_path: Path) -> None:
    from contextchef.store.backends.sqlite import SQLiteBackend

    first = SQLiteBackend(tmp_path / "shared.db", project="test:shared")
    second = SQLiteBackend(tmp_path / "shared.db", project="test:shared")
    query = embed_one("login")
    first.put_vectors("notes", {"a.md": embed_one("lunch")})
    assert [path for path, _ in second.nearest("notes", query)] == ["a.md"]  # read, kept
    first.put_vectors("notes", {"b.md": embed_one("login")})
    assert [path for path, _ in second.nearest("notes", query)] == ["b.md", "a.md"]
    second.delete_vectors("notes", ["b.md"])  # its own write
    assert [path for path, _ in second.nearest("notes", query)] == ["a.md"]
    assert [path for path, _ in first.nearest("notes", query)] == ["a.md"]
    first.close()
    second.close()


def test_a_kept_vector_set_follows_every_change_in_place() -> None:
    """Once queried, a `VectorSet` keeps its vectors as NumPy rows and takes every later change
    in place (new rows past the first capacity, rewritten ones, a vector of another length,
    deletions): after each change it answers exactly what a set made afresh from the same
    vectors answers, for every metric, prefix and limit."""
    pytest.importorskip("numpy")
    import random

    from contextchef.store.vectors import VectorSet

    rng = random.Random(5)
    kept = VectorSet()
    current: dict[str, list[float]] = {}
    query8, query4 = embed_one("login note"), [0.5, -1.0, 2.0, 0.25]

    def check() -> None:
        fresh = VectorSet(current)
        for query in (query8, query4):
            for metric in ("cosine", "l2", "inner_product"):
                for prefix, limit in (("", None), ("a/", 5), ("", 3)):
                    got = kept.nearest(query, metric=metric, prefix=prefix, limit=limit)
                    assert got == fresh.nearest(query, metric=metric, prefix=prefix, limit=limit)

    check()  # the rows are made here, empty
    for step in range(150):
        path = f"{rng.choice('ab')}/{rng.randrange(60)}.md"
        roll = rng.random()
        if roll < 0.6:
            vector = embed_one(f"note {step}") if rng.random() < 0.85 else query4[::-1]
            kept.put({path: vector})
            current[path] = list(vector)
        elif roll < 0.95:
            kept.delete([path, "missing.md"])
            current.pop(path, None)
        else:
            kept.delete(None)
            current.clear()
        if step % 5 == 0:
            check()
    check()


def test_sqlite_takes_its_own_vector_writes_without_reading_every_vector_again(
    tmp_path: Path,
) -> None:
    """After the first search reads a namespace's vectors, this backend's own writes update
    what it keeps, so a search after a write reads nothing again; a write in a batch that rolls
    back leaves no trace in what it finds."""
    from contextchef.store.backends.sqlite import SQLiteBackend

    backend = SQLiteBackend(tmp_path / "own.db", project="test:own-writes")
    backend.put_vectors("notes", {f"n{i}.md": embed_one(f"note {i}") for i in range(50)})
    query = embed_one("login")
    backend.nearest("notes", query)  # the set is read here
    statements: list[str] = []
    with backend.connection("tracing") as conn:
        conn.set_trace_callback(statements.append)
    try:
        backend.put_vectors("notes", {"login.md": embed_one("login")})
        assert backend.nearest("notes", query, limit=1)[0][0] == "login.md"
        backend.delete_vectors("notes", ["login.md"])
        assert "login.md" not in [path for path, _ in backend.nearest("notes", query)]
        assert not [s for s in statements if "SELECT path, vector FROM entry_vectors" in s]
        with pytest.raises(RuntimeError), backend.batch():
            backend.put_vectors("notes", {"undone.md": embed_one("login")})
            raise RuntimeError("the batch fails")
        assert "undone.md" not in [path for path, _ in backend.nearest("notes", query)]
        assert len(backend.nearest("notes", query)) == 50
    finally:
        with backend.connection("tracing") as conn:
            conn.set_trace_callback(None)
        backend.close()
