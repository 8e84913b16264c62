"""LangGraph store peers: `ContextChefStore` against `InMemoryStore` and `SqliteStore`.

Each workload is timed on ours and on the peer interleaved (ours, peer, ours, …) over the same
items, in one process; per-op wall-clock min and median of each, and their ratio three ways: of
the medians, the median of each round's (the two back to back, so a change of load between
rounds cancels out) and of the minima.
The in-memory backend is compared with `InMemoryStore`, the SQLite backend (a file) with
`SqliteStore` (a file; needs `langgraph-checkpoint-sqlite`, else that half is skipped).

Items: `--items` of them over 50 namespaces `("users", "u<k>")`, values
`{"kind": one of three, "n": i, "text": ...}`. Workloads (µs per call):
- `put`: replacing an item (`store.put`), cycling through the items;
- `get`: `store.get` of an existing item;
- `search_filter`: `store.search(("users",), filter={"kind": "b"}, limit=10)`;
- `search_ns_filter`: the same within one namespace `("users", "u7")`;
- `list_namespaces`: `store.list_namespaces(prefix=("users",), limit=100)`.
The issue's target is a ratio of at most 2 for each.

Run: python benchmarks/peers.py --langgraph [--items 2000] [--repeats 7]
"""

from __future__ import annotations

import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from langgraph.store.memory import InMemoryStore

from contextchef.integrations.langgraph import ContextChefStore
from contextchef.store.backends.sqlite import SQLiteBackend

NAMESPACES = 50
KINDS = ("a", "b", "c")


def _value(i: int) -> dict[str, Any]:
    return {"kind": KINDS[i % 3], "n": i, "text": f"note number {i} about the parser"}


def _address(i: int) -> tuple[tuple[str, ...], str]:
    return ("users", f"u{i % NAMESPACES}"), f"k{i}"


def _fill(store: Any, items: int) -> None:
    for i in range(items):
        namespace, key = _address(i)
        store.put(namespace, key, _value(i))


def _workloads(items: int) -> dict[str, tuple[int, Callable[[Any], None]]]:
    """name -> (calls per run, run(store))."""
    sample = range(0, items, max(items // 200, 1))

    def put(store: Any) -> None:
        for i in sample:
            namespace, key = _address(i)
            store.put(namespace, key, _value(i))

    def get(store: Any) -> None:
        for i in sample:
            namespace, key = _address(i)
            assert store.get(namespace, key) is not None

    def search_filter(store: Any) -> None:
        for _ in range(20):
            assert len(store.search(("users",), filter={"kind": "b"}, limit=10)) == 10

    def search_ns_filter(store: Any) -> None:
        for _ in range(20):
            assert store.search(("users", "u7"), filter={"kind": "b"}, limit=10)

    def list_namespaces(store: Any) -> None:
        for _ in range(20):
            assert len(store.list_namespaces(prefix=("users",), limit=100)) == NAMESPACES

    return {
        "put": (len(sample), put),
        "get": (len(sample), get),
        "search_filter": (20, search_filter),
        "search_ns_filter": (20, search_ns_filter),
        "list_namespaces": (20, list_namespaces),
    }


def _compare(ours: Any, peer: Any, items: int, repeats: int) -> dict[str, dict[str, list[float]]]:
    _fill(ours, items)
    _fill(peer, items)
    out: dict[str, dict[str, list[float]]] = {}
    for name, (calls, run) in _workloads(items).items():
        run(ours), run(peer)  # warm
        times: dict[str, list[float]] = {"ours": [], "peer": []}
        for _ in range(repeats):
            for side, store in (("ours", ours), ("peer", peer)):
                start = time.perf_counter()
                run(store)
                times[side].append((time.perf_counter() - start) / calls)
        out[name] = times
    return out


def memory(items: int, repeats: int) -> dict[str, dict[str, list[float]]]:
    return _compare(ContextChefStore("memory"), InMemoryStore(), items, repeats)


def sqlite(items: int, repeats: int) -> dict[str, dict[str, list[float]]] | None:
    try:
        from langgraph.store.sqlite import SqliteStore
    except ImportError:
        print("SqliteStore not installed (pip install langgraph-checkpoint-sqlite): skipped")
        return None
    with tempfile.TemporaryDirectory() as tmp:
        backend = SQLiteBackend(Path(tmp) / "ours.db", project="bench:langgraph")
        ours = ContextChefStore(backend)
        with SqliteStore.from_conn_string(str(Path(tmp) / "theirs.db")) as peer:
            peer.setup()
            try:
                return _compare(ours, peer, items, repeats)
            finally:
                ours.close()
                backend.close()


def report(label: str, results: dict[str, dict[str, list[float]]] | None) -> None:
    if results is None:
        return
    for name, times in results.items():
        ours, peer = statistics.median(times["ours"]), statistics.median(times["peer"])
        paired = [a / b for a, b in zip(times["ours"], times["peer"], strict=True)]
        print(
            f"{label + ' ' + name:28} ours min {min(times['ours']) * 1e6:9.1f} µs  median "
            f"{ours * 1e6:9.1f} µs | peer min {min(times['peer']) * 1e6:9.1f} µs  median "
            f"{peer * 1e6:9.1f} µs | ratio {ours / peer:5.2f} (of the medians), "
            f"{statistics.median(paired):5.2f} (median of each round's), "
            f"{min(times['ours']) / min(times['peer']):5.2f} (of the minima)"
        )
