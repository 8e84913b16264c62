"""The store's hot paths (put, get) behave exactly like the plain code they replaced.

`prepare_meta` skips its recursive check for plain scalars and the in-memory backend freezes
meta with one C-level copy; both are compared here with the straightforward versions they
replaced (kept below as oracles) over generated meta, bad values included. `Store`, `AsyncStore`
over the same sync backend and `AsyncStore` over an async-native one must agree call for call
(results, errors with their type and message, stored entries), and no caller object may reach
into a stored entry.
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import math
import pickle
import re
import time
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from contextchef._effects import StoreOp
from contextchef.errors import ConfigError
from contextchef.store import AsyncStore, InMemoryBackend, StorageBackend, Store, StoredEntry
from contextchef.store.backends.inmemory import AsyncInMemoryBackend
from contextchef.store.entries import utf8_length
from contextchef.store.paths import _check_path, _valid_entry_path, validate_entry_path
from contextchef.store.validation import (
    DERIVED_META_KEYS,
    _check_json,
    _check_text,
    prepare_meta,
)
from tests.fuzz import examples

# -- oracles: the code before the fast paths, verbatim --------------------------------------


def oracle_prepare_meta(meta: Mapping[str, Any] | None, now: float) -> dict[str, Any]:
    if meta is None:
        return {"created_at": now, "updated_at": now}
    if not isinstance(meta, Mapping):
        raise ConfigError(f"meta must be a mapping, not {type(meta).__name__}")
    out: dict[str, Any] = {}
    for key, value in meta.items():
        if not isinstance(key, str):
            raise ConfigError(f"meta keys must be str, got {key!r}")
        _check_text(key, f"meta key {key!r}")
        if key in DERIVED_META_KEYS:
            continue
        _check_json(value, repr(key))
        out[key] = value
    for key in ("created_at", "updated_at"):
        if key not in out:
            out[key] = now
        elif isinstance(out[key], bool) or not isinstance(out[key], int | float):
            raise ConfigError(f"meta {key!r} must be seconds since the epoch, got {out[key]!r}")
    return out


_IMMUTABLE = frozenset({str, int, float, bool, type(None)})


def oracle_freeze(content: str, meta: Mapping[str, Any]) -> dict[str, Any]:
    now = time.time()
    stored: dict[str, Any] = {
        key: value if type(value) in _IMMUTABLE else copy.deepcopy(value)
        for key, value in meta.items()
        if key != "accessed_at"
    }
    stored.setdefault("created_at", now)
    stored.setdefault("updated_at", now)
    stored["bytes"] = utf8_length(content)
    return stored


# -- generated input ---------------------------------------------------------------------------

TRICKY = [
    float("nan"),
    float("inf"),
    -float("inf"),
    2**2000,
    2**1999,
    True,
    None,
    0.5,
    "a\ud800b",
    "héllo",
    "日本",
]
"""Scalars at the edges of the fast path: each must be decided exactly as the full check does."""

texts = st.one_of(
    st.text(max_size=8),
    st.sampled_from(["a\ud800b", "\udfff", "héllo", "日本", "created_at", "bytes", "accessed_at"]),
)
huge_ints = st.sampled_from([20000, 4000]).map(lambda bits: 2**bits)  # past str()'s limit, or not
scalars = st.one_of(
    st.sampled_from(TRICKY),
    huge_ints,
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=True, allow_infinity=True),
    texts,
)
json_values = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(texts, inner, max_size=3)),
    max_leaves=8,
)
bad_values = st.one_of(
    st.sets(st.integers(), max_size=2),
    st.binary(max_size=3),
    st.tuples(st.integers()),
    st.dictionaries(st.integers(), st.integers(), min_size=1, max_size=2),
)
meta_keys = st.one_of(
    texts, st.sampled_from(["created_at", "updated_at", "kind", "h\u00e9", "\ud800"])
)
metas = st.one_of(
    st.none(),
    st.dictionaries(meta_keys, st.one_of(scalars, json_values, bad_values), max_size=5),
    st.dictionaries(st.one_of(meta_keys, st.integers()), scalars, min_size=1, max_size=3),
    st.sampled_from([[("a", 1)], "meta", 3, MappingProxyType({"a": [1]})]),
)


def outcome(action: Any, *args: Any, **kwargs: Any) -> tuple[str, Any]:
    """("ok", result) or ("error", (type, message))."""
    try:
        return "ok", action(*args, **kwargs)
    except Exception as exc:
        return "error", (type(exc), str(exc))


def same(left: Any, right: Any) -> bool:
    """Equality where NaN equals NaN, and dict order counts (it is what callers see)."""
    if isinstance(left, Mapping) and isinstance(right, Mapping):
        return list(left) == list(right) and all(same(left[k], right[k]) for k in left)
    if isinstance(left, list | tuple) and isinstance(right, list | tuple):
        return type(left) is type(right) and len(left) == len(right) and all(map(same, left, right))
    if isinstance(left, float) and isinstance(right, float) and math.isnan(left):
        return math.isnan(right)
    return type(left) is type(right) and bool(left == right)


@settings(max_examples=examples(200), deadline=None)
@given(meta=metas)
def test_prepare_meta_matches_the_plain_check(meta: Any) -> None:
    ours, theirs = outcome(prepare_meta, meta, 123.0), outcome(oracle_prepare_meta, meta, 123.0)
    assert ours[0] == theirs[0]
    assert same(ours[1], theirs[1]) if ours[0] == "ok" else ours[1] == theirs[1]


@settings(max_examples=examples(150), deadline=None)
@given(
    content=st.text(max_size=20),
    meta=st.dictionaries(texts, json_values, max_size=5),
    stamped=st.booleans(),
)
def test_in_memory_freeze_matches_the_plain_copy(
    content: str, meta: dict[str, Any], stamped: bool
) -> None:
    if stamped:
        meta = {**meta, "created_at": 1.0, "updated_at": 2.0}
    before = time.time()
    backend = InMemoryBackend()
    backend.write("notes", "a.md", StoredEntry(content, meta))
    stored = backend.read("notes", "a.md")
    assert stored is not None
    ours = dict(stored.meta)
    theirs = oracle_freeze(content, meta)
    if not stamped:  # each side stamps its own clock reading: compare where they land
        for key in ("created_at", "updated_at"):
            if key not in meta:
                assert before <= ours[key] <= theirs[key]
                ours[key] = theirs[key]
    assert same(ours, theirs)
    for key, value in ours.items():  # containers are copies, never the caller's objects
        if isinstance(value, list | dict):
            assert value is not meta[key]


# -- entry paths: the one-match fast path decides exactly as the full check ---------------------

segments = st.one_of(
    st.text(alphabet="ab.:-_ \\\x00\x1f\x7fé．／", max_size=6),
    st.sampled_from(["", ".", "..", ".git", "a" * 255, "a" * 256, "é" * 128, "x."]),
)
entry_paths = st.one_of(
    st.lists(segments, min_size=1, max_size=5).map("/".join),
    st.sampled_from(
        [
            "a/" * 511 + "b",
            "a/" * 512 + "b",
            "/".join(["x" * 255] * 4) + "/y",
            "a" * 256 + "/b",
            "a" * 255 + "/b",
            ".x/b",
            "b/.x/c",
            "b/../c",
        ]
    ),
    st.text(max_size=12),
)


@settings(max_examples=examples(250), deadline=None)
@given(path=entry_paths)
def test_entry_paths_are_decided_as_the_full_check_decides(path: str) -> None:
    _valid_entry_path.cache_clear()  # a cached answer would hide the fast path
    full = outcome(_check_path, path, directory_ok=False, empty_ok=False, what="path")
    fast = outcome(validate_entry_path, path)
    assert fast == (full if full[0] == "error" else ("ok", path))


# -- the three drivers agree -------------------------------------------------------------------

PATHS = ["a.md", "dir/b.md", "dir", "dir/b.md/c", "", "../x", "a//b", "dir/", ".hidden", 7]
CONTENTS = ["hello", "", "héllo wörld", "bad \ud800 surrogate", None]
METAS: list[Any] = [
    None,
    {"kind": "note", "turn": 3},
    {"tags": ["a", {"b": 1}], "created_at": 5, "bytes": 99, "accessed_at": 1},
    {"created_at": "yesterday"},
    {"x": float("nan")},
    {1: "non-str key"},
    {"x": {1, 2}},
    "not a mapping",
]
calls = st.lists(
    st.tuples(
        st.sampled_from(["put", "put_content", "get", "append", "create", "exists", "delete"]),
        st.sampled_from(PATHS),
        st.sampled_from(CONTENTS),
        st.sampled_from(range(len(METAS))),
    ),
    max_size=12,
)


def arguments(name: str, path: Any, content: Any, meta: Any) -> tuple[Any, ...]:
    if name in ("get", "exists", "delete"):
        return (path,)
    if name == "put_content":
        return (content, meta)
    return (path, content, meta)


def comparable(value: Any) -> Any:
    """What a call returned, with entries' meta made plain dicts (a native append stamps the
    backend's own clock, not the store's: such a reading becomes "now")."""
    if isinstance(value, StoredEntry):
        meta = {
            key: "now" if isinstance(item, float) and item > 1e9 else item
            for key, item in value.meta.items()
        }
        return (value.content, meta)
    return value


def run_sync(script: list[tuple[str, Any, Any, int]]) -> tuple[list[Any], dict[str, Any]]:
    notes = Store(InMemoryBackend(), clock=lambda: 1000.0).namespace("notes")
    seen = []
    for name, path, content, meta in script:
        kind, value = outcome(getattr(notes, name), *arguments(name, path, content, METAS[meta]))
        seen.append((kind, comparable(value)))
    return seen, {path: comparable(entry) for path, entry in notes.entries().items()}


def run_async(
    script: list[tuple[str, Any, Any, int]], native: bool
) -> tuple[list[Any], dict[str, Any]]:
    backend = AsyncInMemoryBackend() if native else InMemoryBackend()

    async def run() -> tuple[list[Any], dict[str, Any]]:
        notes = AsyncStore(backend, clock=lambda: 1000.0).namespace("notes")
        seen = []
        for name, path, content, meta in script:
            call = getattr(notes, name)(*arguments(name, path, content, METAS[meta]))
            try:
                kind, value = "ok", await call
            except Exception as exc:
                kind, value = "error", (type(exc), str(exc))
            seen.append((kind, comparable(value)))
        entries = await notes.entries()
        return seen, {path: comparable(entry) for path, entry in entries.items()}

    return asyncio.run(run())


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(script=calls)
def test_sync_and_async_stores_agree_call_for_call(script: list[Any]) -> None:
    """Results, errors (type and message) and what ends up stored: the same through `Store`,
    `AsyncStore` over the sync backend (worker threads) and over an async-native one."""
    expected = run_sync(script)
    assert same(run_async(script, native=False), expected)
    assert same(run_async(script, native=True), expected)


def test_bad_paths_fail_before_the_backend_with_the_same_error() -> None:
    backend = InMemoryBackend()
    notes = Store(backend).namespace("notes")
    for path in ("", "../x", "dir/", ".hidden", "a\x00b"):
        with pytest.raises(Exception) as caught:
            notes.put(path, "x")
        with pytest.raises(type(caught.value), match=f"^{re.escape(str(caught.value))}$"):
            notes.get(path)
    with pytest.raises(Exception, match="a path must be a str, not int"):
        notes.put(7, "x")  # type: ignore[arg-type]
    assert backend.list("notes") == []


# -- isolation ---------------------------------------------------------------------------------


def test_mutating_what_was_put_or_got_leaves_the_stored_entry_alone() -> None:
    notes = Store(InMemoryBackend(), clock=lambda: 50.0).namespace("notes")
    meta: dict[str, Any] = {"kind": "note", "tags": ["a"], "nested": {"k": 1}}
    notes.put("a.md", "x", meta)
    meta["kind"] = "changed"
    meta["tags"].append("b")
    meta["nested"]["k"] = 2
    meta["new"] = True
    got = notes.get("a.md")
    assert got is not None
    expected = {
        "kind": "note",
        "tags": ["a"],
        "nested": {"k": 1},
        "created_at": 50.0,
        "updated_at": 50.0,
        "bytes": 1,
    }
    assert dict(got.meta) == expected
    with pytest.raises(TypeError):
        got.meta["kind"] = "x"  # type: ignore[index]
    assert dict(notes.get("a.md").meta) == expected  # type: ignore[union-attr]


def test_put_without_meta_stores_fresh_timestamps_and_size() -> None:
    notes = Store(InMemoryBackend(), clock=lambda: 7.0).namespace("notes")
    notes.put("a.md", "héllo")
    notes.put("b.md", "hi", {"accessed_at": 3, "bytes": 1000})
    assert dict(notes.get("a.md").meta) == {  # type: ignore[union-attr]
        "created_at": 7.0,
        "updated_at": 7.0,
        "bytes": 6,
    }
    assert dict(notes.get("b.md").meta) == {  # type: ignore[union-attr]
        "created_at": 7.0,
        "updated_at": 7.0,
        "bytes": 2,
    }


# -- the effect and entry records keep their dataclass behaviour --------------------------------


@pytest.mark.parametrize(
    ("record", "changed"),
    [
        (StoredEntry("x", {"a": [1]}), {"content": "y"}),
        (
            StoreOp("backend", StorageBackend.write, ("notes", "a"), {"k": 1}, True),
            {"method": StorageBackend.read},
        ),
    ],
)
def test_fast_constructors_keep_frozen_dataclass_behaviour(record: Any, changed: Any) -> None:
    kind = type(record)
    fields = {field.name: getattr(record, field.name) for field in dataclasses.fields(record)}
    assert kind(**fields) == record and kind(*fields.values()) == record
    assert pickle.loads(pickle.dumps(record)) == record
    assert copy.deepcopy(record) == record
    replaced = dataclasses.replace(record, **changed)
    assert {**fields, **changed} == {f: getattr(replaced, f) for f in fields}
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(record, next(iter(changed)), "z")
    assert repr(record).startswith(f"{kind.__name__}(")


def test_defaults_are_fresh_empty_dicts() -> None:
    first, second = StoredEntry("x"), StoredEntry("y")
    assert first.meta == {} and type(first.meta) is dict and first.meta is not second.meta
    op, other = StoreOp("b", StorageBackend.read), StoreOp("b", StorageBackend.read)
    assert op.args == () and op.kwargs == {} and op.kwargs is not other.kwargs
    assert op.native is False


# -- the hot lane (`contextchef.store.lanes`) --------------------------------------------------


class Clock:
    def __init__(self) -> None:
        self.now = 1.0

    def __call__(self) -> float:
        return self.now


def test_a_get_after_a_restore_reads_what_the_restore_left() -> None:
    """The in-memory backend hands the lane its live entry table: a restore refills that
    table, it never swaps in another one behind the lane's back."""
    store = Store(InMemoryBackend())
    notes = store.namespace("notes")
    notes.put("a.md", "old")
    assert notes.get("a.md") is not None  # the lane now reads the table
    notes.restore({"b.md": StoredEntry("new")})
    assert notes.get("a.md") is None
    assert notes.get("b.md").content == "new"  # type: ignore[union-attr]
    notes.put("a.md", "again")
    assert store.namespace("notes").get("a.md").content == "again"  # type: ignore[union-attr]


def test_reads_through_the_lane_keep_an_entry_from_eviction_even_after_a_restore() -> None:
    clock = Clock()
    store = Store(InMemoryBackend(), clock=clock)
    notes = store.namespace("notes")
    for number, path in enumerate(("a.md", "b.md"), start=1):
        clock.now = float(number)
        notes.put(path, path)
    clock.now = 3.0
    notes.get("a.md")  # read last: b.md is the least recently used
    assert [e.path for e in notes.cleanup(max_files=1).evicted] == ["b.md"]
    notes.restore({"a.md": StoredEntry("a", {"created_at": 1.0, "updated_at": 1.0})})
    notes.put("c.md", "c")  # written at 3.0
    clock.now = 4.0
    notes.get("a.md")  # read after the restore: a.md stays, c.md goes
    assert [e.path for e in notes.cleanup(max_files=1).evicted] == ["c.md"]


def test_the_lane_remembers_a_bounded_number_of_paths() -> None:
    from contextchef.store.lanes import KNOWN_PATHS

    notes = Store(InMemoryBackend()).namespace("notes")
    lane = notes._lane  # type: ignore[attr-defined]
    for number in range(KNOWN_PATHS + 10):
        notes.get(f"p{number}.md")
    assert 0 < len(lane._known) <= KNOWN_PATHS


@settings(max_examples=examples(100), deadline=None)
@given(content=st.text(max_size=20), meta=st.dictionaries(texts, json_values, max_size=4))
def test_write_fresh_stores_what_write_stores(content: str, meta: dict[str, Any]) -> None:
    """The lane's `write_fresh` keeps the meta it prepared; the entry is the one `write` makes
    of a copy, and the caller's containers are copies there too."""
    try:
        prepared = prepare_meta(meta, 5.0)
    except Exception:
        return  # refused before any backend: nothing to compare
    backend = InMemoryBackend()
    backend.write("notes", "plain.md", StoredEntry(content, dict(prepared)))
    backend.write_fresh("notes", "fresh.md", content, prepared)
    plain, fresh = backend.read("notes", "plain.md"), backend.read("notes", "fresh.md")
    assert plain is not None and fresh is not None
    assert fresh.content == plain.content and same(dict(fresh.meta), dict(plain.meta))
    for key, value in fresh.meta.items():
        if isinstance(value, list | dict):
            assert value is not meta.get(key)
    with pytest.raises(TypeError):
        fresh.meta["bytes"] = 0  # type: ignore[index]


class _Sealed(InMemoryBackend):
    """A subclass that changes what is stored and what is read (an encrypting backend, say),
    and inherits the in-memory backend's hot-path hooks."""

    def write(self, ns: str, path: str, entry: StoredEntry) -> None:
        super().write(ns, path, StoredEntry(entry.content[::-1], dict(entry.meta)))

    def read(self, ns: str, path: str) -> StoredEntry | None:
        found = super().read(ns, path)
        return None if found is None else StoredEntry(found.content[::-1], dict(found.meta))


class _Forwarding:
    """A wrapper that changes what is stored and read, and forwards every other attribute to
    the backend it wraps (`__getattr__`): the hooks it forwards are the inner backend's."""

    def __init__(self, inner: InMemoryBackend) -> None:
        self.inner = inner

    def write(self, ns: str, path: str, entry: StoredEntry) -> None:
        self.inner.write(ns, path, StoredEntry(entry.content[::-1], dict(entry.meta)))

    def read(self, ns: str, path: str) -> StoredEntry | None:
        found = self.inner.read(ns, path)
        return None if found is None else StoredEntry(found.content[::-1], dict(found.meta))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


@pytest.mark.parametrize("kind", ["subclass", "forwarding wrapper"])
def test_a_backend_that_changes_read_and_write_is_never_bypassed(kind: str) -> None:
    """The in-memory backend's hot-path hooks stand for its own `read` and `write`: a subclass
    overriding them, or a wrapper forwarding unknown attributes to one, is read and written
    through its own methods on every get and put."""
    inner = InMemoryBackend()
    backend: Any = _Sealed() if kind == "subclass" else _Forwarding(inner)
    stored = backend if kind == "subclass" else inner
    notes = Store(backend).namespace("notes")
    for round_ in range(3):  # a lane binds at the first call, then keeps its choice
        notes.put("a.md", f"plain text {round_}")
        assert InMemoryBackend.read(stored, "notes", "a.md").content == f"{round_} txet nialp"
        got = notes.get("a.md")
        assert got is not None and got.content == f"plain text {round_}"
