"""`ContextChefStore` against LangGraph's own `InMemoryStore`, and as the store of a real graph.

Random batches of gets, puts (and deletes), filtered searches and namespace listings run on both
stores and must give the same results (timestamps aside; search order without a query is a
store's choice, so those results are compared as sets), through `batch` and `abatch`, over the
in-memory and SQLite backends.
"""

from __future__ import annotations

import asyncio
import importlib
import sys
from pathlib import Path
from typing import Any, TypedDict

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from langgraph.config import get_store
from langgraph.graph import END, START, StateGraph
from langgraph.store.base import GetOp, ListNamespacesOp, MatchCondition, PutOp, SearchOp
from langgraph.store.memory import InMemoryStore

from contextchef import InMemoryBackend, MissingDependencyError, SQLiteBackend, Store
from contextchef.integrations.langgraph import ContextChefStore

_labels = st.sampled_from(["users", "u/1", "é x", "=k", "%2F", "docs", "a"])
_namespaces = st.lists(_labels, min_size=1, max_size=3).map(tuple)
_keys = st.sampled_from(["", "k", "k/1", ".hidden", "=", "ключ"])
_values = st.fixed_dictionaries(
    {"n": st.integers(0, 5)},
    optional={"tag": st.sampled_from(["red", "blue"]), "meta": st.just({"deep": [1, 2]})},
)
_filters = st.none() | st.sampled_from(
    [{"tag": "red"}, {"n": {"$gt": 2}}, {"n": {"$lte": 1}}, {"meta": {"deep": [1, 2]}}]
)
_conditions = st.lists(
    st.builds(
        MatchCondition,
        match_type=st.sampled_from(["prefix", "suffix"]),
        path=st.lists(_labels | st.just("*"), min_size=1, max_size=2).map(tuple),
    ),
    max_size=2,
)
_ops = st.one_of(
    st.builds(GetOp, namespace=_namespaces, key=_keys),
    st.builds(PutOp, namespace=_namespaces, key=_keys, value=_values | st.none()),
    st.builds(
        SearchOp,
        namespace_prefix=st.lists(_labels, max_size=2).map(tuple),
        filter=_filters,
        limit=st.just(1000),
        query=st.none(),  # without an index InMemoryStore ignores a query; see the test below
    ),
    st.builds(
        ListNamespacesOp,
        match_conditions=_conditions.map(tuple),
        max_depth=st.none() | st.integers(1, 3),
        limit=st.integers(1, 10),
        offset=st.integers(0, 3),
    ),
)


def _comparable(result: Any) -> Any:
    if isinstance(result, list) and result and hasattr(result[0], "key"):
        return sorted((item.namespace, item.key, repr(item.value)) for item in result)
    if hasattr(result, "key"):
        return (result.namespace, result.key, result.value)
    return result


class Reference(InMemoryStore):
    """LangGraph's `InMemoryStore`, listing only namespaces that hold items: it keeps a
    namespace it was merely asked about (a get or a delete creates its empty dict) and lists
    it, even within the batch that asked; a store lists the namespaces holding items."""

    def _handle_list_namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        for namespace in [ns for ns, items in self._data.items() if not items]:
            del self._data[namespace]
        return super()._handle_list_namespaces(op)


@settings(max_examples=50, deadline=None)
@given(
    st.lists(st.lists(_ops, min_size=1, max_size=4), max_size=12),
    st.sampled_from(["memory", "sqlite"]),
    st.booleans(),
)
def test_random_batches_give_what_in_memory_store_gives(
    tmp_path_factory: pytest.TempPathFactory,
    batches: list[list[Any]],
    backend: str,
    asynchronous: bool,
) -> None:
    source: Any = InMemoryBackend()
    if backend == "sqlite":
        source = SQLiteBackend(tmp_path_factory.mktemp("g") / "db.sqlite")
    ours, reference = ContextChefStore(source), Reference()
    try:
        for ops in batches:
            if asynchronous:
                got = asyncio.run(ours.abatch(ops))
            else:
                got = ours.batch(ops)
            expected = reference.batch(ops)
            assert [_comparable(r) for r in got] == [_comparable(r) for r in expected]
        everything = SearchOp((), limit=1000)
        assert _comparable(ours.batch([everything])[0]) == _comparable(
            reference.batch([everything])[0]
        )
    finally:
        if backend == "sqlite":
            source.close()


def test_items_keep_created_at_and_order_by_update() -> None:
    store = ContextChefStore(Store(InMemoryBackend(), clock=iter(range(100, 200)).__next__))
    store.put(("docs",), "a", {"n": 1})
    first = store.get(("docs",), "a")
    store.put(("docs",), "b", {"n": 2})
    store.put(("docs",), "a", {"n": 3})
    item = store.get(("docs",), "a")
    assert first is not None and item is not None and item.value == {"n": 3}
    assert item.created_at == first.created_at and item.updated_at > first.updated_at
    assert [hit.key for hit in store.search(("docs",))] == ["a", "b"]  # latest update first
    assert [hit.key for hit in store.search(("docs",), limit=1, offset=1)] == ["b"]


@pytest.mark.parametrize("backend", ["memory", "sqlite"])
def test_a_text_query_goes_through_the_backend_search(backend: str, tmp_path: Path) -> None:
    source: Any = InMemoryBackend()
    if backend == "sqlite":
        source = SQLiteBackend(tmp_path / "db.sqlite")
    store = ContextChefStore(source)
    store.put(("notes", "u1"), "1", {"text": "apples are red", "n": 1})
    store.put(("notes", "u1"), "2", {"text": "bananas are yellow", "n": 2})
    store.put(("notes", "u2"), "3", {"text": "green apples", "n": 3})
    hits = store.search(("notes",), query="apples")
    assert sorted(hit.key for hit in hits) == ["1", "3"]
    assert all(hit.score is not None and hit.score > 0 for hit in hits)
    assert [h.key for h in store.search(("notes",), query="apples", filter={"n": 3})] == ["3"]
    assert [h.key for h in store.search(("notes", "u1"), query="apples")] == ["1"]
    if backend == "sqlite":
        source.close()


class State(TypedDict):
    user: str
    said: str
    remembered: list[str]


def remember(state: State) -> dict[str, Any]:
    store = get_store()
    namespace = ("memories", state["user"])
    store.put(namespace, f"m{len(store.search(namespace))}", {"text": state["said"]})
    return {}


def recall(state: State) -> dict[str, Any]:
    hits = get_store().search(("memories", state["user"]), limit=100)
    return {"remembered": sorted(hit.value["text"] for hit in hits)}


def test_a_compiled_graph_uses_it_as_its_store(tmp_path: Path) -> None:
    builder = StateGraph(State)
    builder.add_node("remember", remember)
    builder.add_node("recall", recall)
    builder.add_edge(START, "remember")
    builder.add_edge("remember", "recall")
    builder.add_edge("recall", END)
    backend = SQLiteBackend(tmp_path / "graph.db")
    graph = builder.compile(store=ContextChefStore(backend))
    graph.invoke({"user": "ada", "said": "likes tea", "remembered": []})
    out = graph.invoke({"user": "ada", "said": "works on parsers", "remembered": []})
    assert out["remembered"] == ["likes tea", "works on parsers"]
    # the items are ordinary store entries: another process or store sees them
    reopened = ContextChefStore(SQLiteBackend(tmp_path / "graph.db"))
    assert reopened.list_namespaces() == [("memories", "ada")]
    assert Store(backend).namespace("langgraph").list("memories/ada/")
    backend.close()


async def test_async_graph_run() -> None:
    builder = StateGraph(State)
    builder.add_node("remember", remember)
    builder.add_edge(START, "remember")
    builder.add_edge("remember", END)
    store = ContextChefStore()
    graph = builder.compile(store=store)
    await graph.ainvoke({"user": "bo", "said": "hi", "remembered": []})
    assert [item.value for item in await store.asearch(("memories",))] == [{"text": "hi"}]


def test_a_missing_extra_names_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(sys.modules, "contextchef.integrations.langgraph", raising=False)
    monkeypatch.setitem(sys.modules, "langgraph.store.base", None)
    with pytest.raises(MissingDependencyError) as caught:
        importlib.import_module("contextchef.integrations.langgraph")
    assert caught.value.extra == "langgraph"


@pytest.mark.parametrize("seed", range(5))
def test_paging_maps_to_in_memory_store_by_latest_write(seed: int) -> None:
    """The documented mapping: the same items as `InMemoryStore`, paged most recently written
    first (`SqliteStore`'s and `PostgresStore`'s order) where `InMemoryStore` pages in insertion
    order; `list_namespaces` pages identically."""
    import itertools
    import random

    rng = random.Random(seed)
    ours = ContextChefStore(Store(InMemoryBackend(), clock=itertools.count(1000).__next__))
    reference = Reference()
    written: dict[tuple[tuple[str, ...], str], int] = {}
    for step in range(200):
        namespace = tuple(rng.sample(["a", "b", "c"], rng.randint(1, 2)))
        key = f"k{rng.randint(0, 15)}"
        value = None if rng.random() < 0.2 else {"n": rng.randint(0, 5)}
        op = PutOp(namespace, key, value)
        ours.batch([op])
        reference.batch([op])
        if value is None:
            written.pop((namespace, key), None)
        else:
            written[namespace, key] = step
    for prefix in [(), ("a",), ("b", "c")]:
        everything = reference.search(prefix, limit=1000)
        order = sorted(everything, key=lambda i: -written[tuple(i.namespace), i.key])
        for offset, limit in [(0, 5), (3, 4), (10, 100), (50, 10)]:
            page = ours.search(prefix, limit=limit, offset=offset)
            expected = order[offset : offset + limit]
            assert [(i.namespace, i.key, i.value) for i in page] == [
                (i.namespace, i.key, i.value) for i in expected
            ]
    for offset, limit in [(0, 3), (2, 2), (5, 10)]:
        assert ours.list_namespaces(limit=limit, offset=offset) == reference.list_namespaces(
            limit=limit, offset=offset
        )


_method_namespaces = st.sampled_from(
    [("a",), ("a", "b"), ("langgraph", "x"), (), ("a.b",), ("",), ("a", "b/c"), ("é", "%")]
)
_method_calls = st.lists(
    st.one_of(
        st.tuples(st.just("put"), _method_namespaces, _keys, _values),
        st.tuples(st.just("get"), _method_namespaces, _keys),
        st.tuples(st.just("delete"), _method_namespaces, _keys),
    ),
    max_size=16,
)


def _call(store: Any, call: tuple[Any, ...]) -> Any:
    name, *args = call
    try:
        return _comparable(getattr(store, name)(*args))
    except Exception as exc:
        return type(exc).__name__


@settings(max_examples=60, deadline=None)
@given(_method_calls)
@example(  # a namespace a get accepted, refused for a put
    [
        ("get", ("langgraph", "x"), "k"),
        ("put", ("langgraph", "x"), "k", {"n": 1}),
        ("get", (), "k"),
        ("put", (), "k", {"n": 1}),
        ("get", ("a",), "k"),
        ("put", ("a",), "k", {"n": 1}),
        ("get", ("a",), "k"),
    ]
)
def test_get_put_and_delete_calls_give_what_in_memory_store_gives(calls: list[Any]) -> None:
    """`get` and `put` skip building an operation for a namespace accepted before: the rules
    `BaseStore` applies (a `langgraph` root or an empty namespace refused for a put, a bad
    label for any call) hold all the same, whatever was called first."""
    ours, reference = ContextChefStore("memory"), Reference()
    for call in calls:
        assert _call(ours, call) == _call(reference, call)


def test_a_value_read_is_the_callers_own() -> None:
    store = ContextChefStore("memory")
    store.put(("docs",), "a", {"tags": ["x"], "n": 1})
    first = store.get(("docs",), "a")
    assert first is not None
    first.value["tags"].append("changed")
    first.value["n"] = 2
    again = store.get(("docs",), "a")
    assert again is not None and again.value == {"tags": ["x"], "n": 1}
    assert store.search(("docs",))[0].value == {"tags": ["x"], "n": 1}
