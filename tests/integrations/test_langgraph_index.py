"""`ContextChefStore(index=...)`: LangGraph's semantic search on our store, scored exactly."""

from __future__ import annotations

import asyncio
import math
from pathlib import Path

import pytest

pytest.importorskip("langgraph.store.base")

from contextchef.errors import ConfigError, StoreCapabilityError
from contextchef.integrations.langgraph import ContextChefStore
from contextchef.store import InMemoryBackend, Store
from contextchef.store.backends.sqlite import SQLiteBackend
from tests.contract.helpers import Minimal
from tests.semantic_embedding import DIMS, Embedding, cosine, embed, embed_one

DOCS = {
    "auth": {"text": "retry on 401 in auth.py", "owner": "ana"},
    "ci": {"text": "the login spec is flaky on CI", "owner": "bo"},
    "food": {"text": "lunch at noon", "owner": "ana"},
}


@pytest.fixture(params=["memory", "sqlite"])
def source(request: pytest.FixtureRequest, tmp_path: Path) -> object:
    if request.param == "memory":
        return "memory"
    return SQLiteBackend(tmp_path / "graph.db", project="test:graph")


def test_search_ranks_by_meaning_with_the_score_set(source: object) -> None:
    store = ContextChefStore(source, index={"embed": embed, "dims": DIMS, "fields": ["text"]})
    for key, value in DOCS.items():
        store.put(("docs",), key, value)
    query = "flaky login test"
    got = [(item.key, item.score) for item in store.search(("docs",), query=query)]
    expected = sorted(
        ((key, cosine(embed_one(query), embed_one(v["text"]))) for key, v in DOCS.items()),
        key=lambda pair: -pair[1],
    )
    assert [key for key, _ in got] == [key for key, _ in expected]
    assert [score for _, score in got] == pytest.approx([s for _, s in expected], abs=1e-8)

    store.put(("docs",), "ci", None)  # a delete takes its vectors along
    store.put(("docs",), "auth", {"text": "lunch menu"})  # a rewrite re-embeds
    got = [(item.key, item.score) for item in store.search(("docs",), query="lunch")]
    assert [key for key, _ in got] == ["auth", "food"]
    assert got[0][1] == pytest.approx(cosine(embed_one("lunch"), embed_one("lunch menu")))
    filtered = store.search(("docs",), query="lunch", filter={"owner": "ana"}, limit=1)
    assert [(item.key, item.value["owner"]) for item in filtered] == [("food", "ana")]


def test_items_put_without_an_index_come_last_without_a_score(source: object) -> None:
    store = ContextChefStore(source, index={"embed": embed, "dims": DIMS, "fields": ["text"]})
    store.put(("docs",), "plain", {"text": "retry on 401"}, index=False)
    store.put(("docs",), "owner", {"text": "lunch", "owner": "retry on 401"}, index=["owner"])
    got = [(item.key, item.score) for item in store.search(("docs",), query="retry on 401")]
    assert got[0] == ("owner", pytest.approx(1.0))
    assert got[1] == ("plain", None)


def test_l2_reports_the_negative_distance_and_async_embeds_asynchronously() -> None:
    calls: list[str] = []

    async def aembed(texts: list[str]) -> list[list[float]]:
        calls.append("async")
        return embed(texts)

    index = {"embed": aembed, "dims": DIMS, "fields": ["text"], "distance_type": "l2"}

    async def scenario() -> list[tuple[str, float | None]]:
        store = ContextChefStore("memory", index=index)
        for key, value in DOCS.items():
            await store.aput(("docs",), key, value)
        return [(item.key, item.score) for item in await store.asearch(("docs",), query="lunch")]

    got = asyncio.run(scenario())
    distance = math.dist(embed_one("lunch"), embed_one(DOCS["food"]["text"]))
    assert got[0] == ("food", pytest.approx(-distance))
    assert calls == ["async"] * 4  # three puts and the query, none through a worker thread


def test_a_backend_without_vectors_is_refused_when_indexing() -> None:
    store = ContextChefStore(Store(Minimal(InMemoryBackend())), index={"embed": embed, "dims": 4})
    with pytest.raises(StoreCapabilityError, match="vectors"):
        store.put(("docs",), "a", {"text": "x"})


def test_a_ttl_sweep_takes_the_vectors_along() -> None:
    store = ContextChefStore(
        "memory", index={"embed": embed, "dims": DIMS, "fields": ["a", "b"]}, ttl={}
    )
    store.put(("docs",), "x", {"a": "lunch", "b": "login"}, ttl=1)
    core = store._sync_core()
    backend = core.backend
    assert len(backend.nearest(store._ns, embed_one("lunch"))) == 2
    core.clock = lambda: 10**12  # far past the expiry
    assert store.sweep_ttl() == 1
    store.put(("docs",), "x", {"a": "weather"})  # the same item again, one field only
    assert [path.split("//")[1] for path, _ in backend.nearest(store._ns, embed_one("x"))] == ["a"]


def test_an_item_over_a_store_with_its_own_index_is_embedded_once(source: object) -> None:
    recorder = Embedding()
    backend = InMemoryBackend() if source == "memory" else source
    shared = Store(backend, index={"embed": recorder, "dims": DIMS})  # type: ignore[arg-type]
    graph = ContextChefStore(shared, index={"embed": recorder, "dims": DIMS, "fields": ["text"]})
    graph.put(("docs",), "auth", DOCS["auth"])
    graph.put(("docs",), "food", DOCS["food"], ttl=None)
    assert recorder.batches == [[DOCS["auth"]["text"]], [DOCS["food"]["text"]]]
    # the store's own search scores the item by the vectors the LangGraph layer wrote
    hits = shared.namespace("langgraph").search("flaky login test", mode="semantic")
    assert hits[0].path.endswith("auth")
    assert hits[0].score == pytest.approx(
        cosine(embed_one("flaky login test"), embed_one(DOCS["auth"]["text"]))
    )
    assert graph.search(("docs",), query="flaky login test")[0].key == "auth"


def test_a_langgraph_index_embedding_otherwise_than_the_store_is_refused() -> None:
    shared = Store(InMemoryBackend(), index={"embed": Embedding(), "dims": DIMS})
    with pytest.raises(ConfigError, match="same embed"):
        ContextChefStore(shared, index={"embed": embed, "dims": DIMS, "fields": ["text"]})


def test_min_score_leaves_out_items_scoring_below_it() -> None:
    index = {"embed": embed, "dims": DIMS, "fields": ["text"], "min_score": 0.5}
    store = ContextChefStore("memory", index=index)
    for key, value in DOCS.items():
        store.put(("docs",), key, value)
    query = "lunch menu"
    scores = {key: cosine(embed_one(query), embed_one(v["text"])) for key, v in DOCS.items()}
    got = [item.key for item in store.search(("docs",), query=query)]
    assert got == [key for key in sorted(scores, key=lambda k: -scores[k]) if scores[key] >= 0.5]
    assert "food" in got and len(got) < len(DOCS)
