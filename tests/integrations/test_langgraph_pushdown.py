"""Filters pushed into SQLite (`read_recent_where`) find exactly what the Python filter finds.

Random item values (numbers of every size, booleans, null, strings, nested objects and arrays,
keys with dots) and random LangGraph filters (values, nested dicts, lists, every operator):
`ContextChefStore.search` over a SQLite backend, whose page is filtered and paged in SQL, must
return the items `matches_filter` keeps, in recency order, for every page. The conditions
themselves are checked against their Python reference (`where.matches`) too.
"""

from __future__ import annotations

import json
import random
import struct
from pathlib import Path
from typing import Any

from contextchef.integrations._langgraph_filter import matches_filter, pushdown
from contextchef.integrations.langgraph import ContextChefStore
from contextchef.store.backend import StoredEntry
from contextchef.store.backends.sqlite import SQLiteBackend
from contextchef.store.where import matches
from tests.fuzz import examples
from tests.integrations.langgraph_search_check import searches_agree

KEYS = ("a", "b", "n", "a.b", "x-y")
NESTED = ("b", "c", "a.b")
OPERATORS = ("$eq", "$ne", "$gt", "$gte", "$lt", "$lte")


def _scalar(rng: random.Random) -> Any:
    kind = rng.randrange(12)
    if kind == 0:
        return rng.choice((2**63 - 1, -(2**63), 2**63, 2**70, -(2**64), 1e19, 9.2e18, 1e300))
    if kind == 1:  # any finite double
        bits = struct.unpack("d", struct.pack("Q", rng.getrandbits(64)))[0]
        return bits if bits - bits == 0 else 0.25
    if kind == 2:
        return rng.choice((0.0, -0.0, 0.5, 1.0, 2.5, -1.5))
    if kind == 3:
        return rng.choice((True, False))
    if kind == 4:
        return None
    if kind < 8:
        return rng.choice(("", "a", "b", "ab", "1", "true", "null", "é", "\U0001f600", "a\nb"))
    return rng.randint(-2, 2)


def _value(rng: random.Random, depth: int = 0) -> Any:
    kind = rng.randrange(10)
    if depth < 2 and kind == 0:
        return {k: _value(rng, depth + 1) for k in rng.sample(NESTED, rng.randint(0, 3))}
    if depth < 2 and kind == 1:
        return [_value(rng, depth + 1) for _ in range(rng.randint(0, 2))]
    return _scalar(rng)


def _item(rng: random.Random) -> dict[str, Any]:
    item = {k: _value(rng) for k in rng.sample(KEYS, rng.randint(1, len(KEYS)))}
    if rng.random() < 0.4:  # a nested field that the dotted key "a.b" reaches
        item["a"] = {"b": _scalar(rng)}
    return item


def _wanted(rng: random.Random) -> Any:
    if rng.random() < 0.5:
        operators = rng.sample(OPERATORS, rng.randint(1, 2))
        return {
            op: _value(rng, depth=1) if rng.random() < 0.1 else _scalar(rng) for op in operators
        }
    return _value(rng)


def _filter(rng: random.Random) -> dict[str, Any]:
    return {k: _wanted(rng) for k in rng.sample(KEYS, rng.choice((1, 1, 2)))}


def test_pushed_filters_find_what_the_python_filter_finds(tmp_path: Path) -> None:
    rng = random.Random(24)
    backend = SQLiteBackend(tmp_path / "context.db", project="test:pushdown")
    store = ContextChefStore(backend)
    values = [_item(rng) for _ in range(40)]
    for n, value in enumerate(values):
        store.put(("users", f"u{n % 3}"), f"k{n}", value)
    everything = store.search(("users",), limit=1000)
    assert len(everything) == len(values)
    pushed = 0
    for _ in range(examples(150)):
        filter = _filter(rng)
        where, rest = pushdown(filter)
        pushed += not rest
        expected = searches_agree(store, everything, filter, rng)
        reference = [
            (i.namespace, i.key)
            for i in everything
            if matches(where, f"users/{i.namespace[1]}/={i.key}", StoredEntry(json.dumps(i.value)))
            and matches_filter(i.value, rest)
        ]
        assert reference == expected, filter
    assert pushed > examples(150) * 0.6  # most filters go to SQL whole
    store.close()
    backend.close()


def test_expired_items_and_the_keys_left_to_python_page_alike(tmp_path: Path) -> None:
    backend = SQLiteBackend(tmp_path / "context.db", project="test:expiry")
    store = ContextChefStore(backend, ttl={"omit_expired": True})
    values = {}
    for n in range(30):
        values[f"k{n}"] = {"n": n % 3, "tags": {"é": n % 2}}
        meta: dict[str, Any] = {"updated_at": 1000.0 + n}
        if n % 4 == 0:
            meta["expires_at"] = 1.0  # expired long ago, not swept
        backend.write("langgraph", f"users/=k{n}", StoredEntry(json.dumps(values[f"k{n}"]), meta))
    # {"n": 1} goes to SQL whole; a nested key outside [A-Za-z0-9_.-] stays in Python
    for filter in ({"n": 1}, {"tags": {"é": 1}}, {"n": 1, "tags": {"é": 1}}):
        live = [f"k{n}" for n in reversed(range(30)) if n % 4]
        expected = [key for key in live if matches_filter(values[key], filter)]
        for offset, limit in ((0, 100), (2, 3), (5, 4)):
            page = store.search(("users",), filter=filter, limit=limit, offset=offset)
            assert [item.key for item in page] == expected[offset : offset + limit]
    store.close()
    backend.close()
