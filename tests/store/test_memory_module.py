"""Memory: TTLs, allowed keys, the veto, events, the selector, rendering and snapshots."""

from __future__ import annotations

import logging
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from contextchef import prompts
from contextchef.errors import (
    ConfigError,
    EntryExistsError,
    EntryNotFoundError,
    InvalidPathError,
    MemoryKeyNotAllowedError,
    MemoryVetoedError,
)
from contextchef.memory import UNSET, Memory, MemoryChange, MemoryEntry
from contextchef.store import InMemoryBackend, Store, StoredEntry
from tests.contract.conftest import BACKENDS
from tests.contract.helpers import Clock, Minimal

T0 = 1_700_000_000.0  # 2023-11-14T22:13:20Z


@pytest.fixture
def clock() -> Clock:
    return Clock(T0)


@pytest.fixture
def store() -> Store:
    return Store(InMemoryBackend())


def make(store: Store, clock: Clock, **options: Any) -> Memory:
    return Memory(store, clock=clock, **options)


class Recorder:
    """Collects every callback Memory makes, in order."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []

    def changed(self, change: MemoryChange) -> None:
        self.calls.append(("changed", change))

    def expired(self, entry: MemoryEntry) -> None:
        self.calls.append(("expired", entry.key))


# -- the developer path ----------------------------------------------------------------------


def test_set_creates_then_updates_keeping_created_at(store: Store, clock: Clock) -> None:
    memory = make(store, clock)
    first = memory.set("user", "Ann", description="who the user is")
    assert (first.created_at, first.updated_at, first.update_count) == (T0, T0, 1)
    clock.advance(5)
    second = memory.set("user", "Ann Lee")
    assert second.created_at == T0
    assert second.updated_at == T0 + 5
    assert second.update_count == 2
    assert second.description == "who the user is"  # UNSET keeps it
    assert memory.set("user", "Ann", description=None).description is None
    assert memory.get("user") == memory.entries()[0]
    assert memory.get("missing") is None


def test_entry_is_stored_as_content_and_meta(store: Store, clock: Clock) -> None:
    memory = make(store, clock)
    memory.set("goal", "ship v2", description="objective", ttl={"turns": 3})
    stored = store.namespace("memory").get("goal")
    assert stored is not None
    assert stored.content == "ship v2"
    assert {key: stored.meta[key] for key in stored.meta if key != "bytes"} == {
        "created_at": T0,
        "description": "objective",
        "expires_at_turn": 3,
        "sequence": int(T0 * 1_000_000),
        "update_count": 1,
        "updated_at": T0,
    }


@pytest.mark.parametrize(
    ("order", "expected"),
    [
        ("insertion", ["b", "a/z", "10", "2", "a.md"]),
        ("key", ["10", "2", "a.md", "a/z", "b"]),
    ],
)
def test_entries_come_in_the_memory_order(
    store: Store, clock: Clock, order: str, expected: list[str]
) -> None:
    memory = make(store, clock, order=order)
    for key in ("b", "a/z", "10", "2", "a.md"):
        memory.set(key, key)
    memory.set("b", "updated")  # an update keeps the entry's place
    assert [entry.key for entry in memory.entries()] == expected


def test_delete(store: Store, clock: Clock) -> None:
    recorder = Recorder()
    memory = make(store, clock, on_memory_changed=recorder.changed)
    memory.set("a", "1")
    assert memory.delete("a") is True
    assert memory.delete("a") is False
    assert recorder.calls == [
        ("changed", MemoryChange("set", "a", "1", None)),
        ("changed", MemoryChange("delete", "a", None, "1")),
    ]


def test_an_entry_written_by_the_host_without_meta_reads_back(store: Store, clock: Clock) -> None:
    store.namespace("memory").put("raw", "value", {"created_at": T0, "updated_at": T0})
    entry = make(store, clock).get("raw")
    assert entry == MemoryEntry("raw", "value", None, T0, T0, 1)


def test_bad_keys_values_and_options_raise(store: Store, clock: Clock) -> None:
    memory = make(store, clock)
    with pytest.raises(InvalidPathError):
        memory.set("../x", "v")
    with pytest.raises(ConfigError, match="value must be a str"):
        memory.set("a", 3)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="description"):
        memory.set("a", "v", description=3)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="placement"):
        make(store, clock, placement="top")
    with pytest.raises(ConfigError, match="callable"):
        make(store, clock, selector="all")
    with pytest.raises(ConfigError, match="single string"):
        make(store, clock, allowed_keys="user")
    with pytest.raises(ConfigError, match="'legacy' or 'unified', got 'modern'"):
        memory.compile_artifacts("modern")


# -- TTL --------------------------------------------------------------------------------------


@pytest.mark.parametrize("ttl", [2, {"turns": 2}])
def test_turn_ttl_shows_an_entry_for_that_many_compiles(
    store: Store, clock: Clock, ttl: Any
) -> None:
    recorder = Recorder()
    memory = make(
        store, clock, on_memory_changed=recorder.changed, on_memory_expired=recorder.expired
    )
    memory.set("todo", "buy milk", ttl=ttl)
    recorder.calls.clear()
    shown = []
    for _ in range(3):
        artifacts = memory.compile_artifacts()
        shown.append((artifacts.keys, artifacts.expired))
        memory.advance_turn()
    assert shown == [(("todo",), ()), (("todo",), ()), ((), ("todo",))]
    assert recorder.calls == [
        ("expired", "todo"),
        ("changed", MemoryChange("expire", "todo", None, "buy milk")),
    ]
    assert store.namespace("memory").get("todo") is None
    assert memory.turn == 3


@pytest.mark.parametrize("ttl", [{"seconds": 60}, {"seconds": 60.0}, timedelta(minutes=1)])
def test_second_ttl_follows_the_clock(store: Store, clock: Clock, ttl: Any) -> None:
    memory = make(store, clock)
    memory.set("otp", "123456", ttl=ttl)
    assert memory.get("otp") is not None
    clock.advance(59.9)
    assert memory.compile_artifacts().keys == ("otp",)
    clock.advance(0.1)
    artifacts = memory.compile_artifacts()
    assert (artifacts.keys, artifacts.expired) == ((), ("otp",))


def test_ttl_none_on_update_clears_the_old_expiry(store: Store, clock: Clock) -> None:
    memory = make(store, clock)
    memory.set("a", "1", ttl=1)
    memory.set("b", "1", ttl={"seconds": 10})
    memory.set("a", "2", ttl=None)
    memory.set("b", "2", ttl=None)
    assert "expires_at_turn" not in store.namespace("memory").get("a").meta  # type: ignore[union-attr]
    assert "expires_at" not in store.namespace("memory").get("b").meta  # type: ignore[union-attr]
    clock.advance(100)
    for _ in range(3):
        memory.advance_turn()
    assert memory.compile_artifacts().keys == ("a", "b")


def test_update_without_ttl_keeps_the_expiry_and_default_ttl_applies_to_new_entries(
    store: Store, clock: Clock
) -> None:
    memory = make(store, clock, default_ttl=2)
    assert memory.set("a", "1").expires_at_turn == 2
    memory.advance_turn()
    assert memory.set("a", "2").expires_at_turn == 2  # not refreshed
    assert memory.set("b", "1", ttl=UNSET).expires_at_turn == 3
    assert memory.set("c", "1", ttl=None).expires_at_turn is None
    assert memory.create("d", "1").expires_at_turn == 3


@pytest.mark.parametrize(
    "ttl", [-1, True, 1.5, {"turns": -1}, {"turns": 1.5}, {"seconds": -1}, {"days": 1}, {}, "3"]
)
def test_invalid_ttls_are_refused(store: Store, clock: Clock, ttl: Any) -> None:
    with pytest.raises(ConfigError, match="ttl"):
        make(store, clock).set("a", "1", ttl=ttl)
    with pytest.raises(ConfigError, match="ttl"):
        make(store, clock, default_ttl=ttl)


def test_an_expired_entry_is_invisible_to_reads_and_writes(store: Store, clock: Clock) -> None:
    recorder = Recorder()
    memory = make(store, clock, on_memory_changed=recorder.changed)
    memory.set("a", "old", ttl=0)
    recorder.calls.clear()
    entry = memory.create("a", "new")  # the expired entry does not block a create
    assert entry.update_count == 1
    assert recorder.calls == [
        ("changed", MemoryChange("expire", "a", None, "old")),
        ("changed", MemoryChange("set", "a", "new", None, "model")),
    ]


# -- the model path ---------------------------------------------------------------------------


def test_allowed_keys_limit_the_model_path_only(store: Store, clock: Clock) -> None:
    memory = make(store, clock, allowed_keys=["user", "goal", "user"])
    assert memory.allowed_keys == ("goal", "user")
    with pytest.raises(MemoryKeyNotAllowedError) as caught:
        memory.create("secret", "x")
    assert (caught.value.key, caught.value.allowed) == ("secret", ("goal", "user"))
    memory.set("secret", "host may")  # the developer path bypasses the list
    for call in (
        lambda: memory.update("secret", "y"),
        lambda: memory.remove("secret"),
        lambda: memory.rename("secret", "user"),
        lambda: memory.rename("user", "secret"),
    ):
        with pytest.raises(MemoryKeyNotAllowedError):
            call()
    assert memory.create("user", "Ann").value == "Ann"
    assert make(store, clock, allowed_keys=[]).is_allowed("user") is False


def test_model_path_existence_rules(store: Store, clock: Clock) -> None:
    memory = make(store, clock)
    memory.create("a", "1", description="first")
    with pytest.raises(EntryExistsError):
        memory.create("a", "2")
    with pytest.raises(EntryNotFoundError):
        memory.update("b", "1")
    with pytest.raises(EntryNotFoundError):
        memory.remove("b")
    updated = memory.update("a", "2")
    assert (updated.value, updated.description, updated.update_count) == ("2", "first", 2)
    assert memory.update("a", "3", description="new").description == "new"
    memory.remove("a")
    assert memory.get("a") is None


def test_veto_sees_key_new_and_old_values(store: Store, clock: Clock) -> None:
    seen: list[tuple[str, str | None, str | None]] = []

    def veto(key: str, new: str | None, old: str | None) -> bool | None:
        seen.append((key, new, old))
        return None if key != "locked" else False

    memory = make(store, clock, on_memory_update=veto)
    memory.create("a", "1")
    memory.update("a", "2")
    memory.rename("a", "b")
    memory.remove("b")
    assert seen == [
        ("a", "1", None),
        ("a", "2", "1"),
        ("b", "2", None),
        ("a", None, "2"),
        ("b", None, "2"),
    ]
    with pytest.raises(MemoryVetoedError) as caught:
        memory.create("locked", "x")
    assert caught.value.key == "locked"
    assert memory.get("locked") is None
    memory.set("locked", "the host may")  # the developer path bypasses the veto


def test_a_raising_or_async_veto_hook_vetoes_and_is_logged(
    store: Store, clock: Clock, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(key: str, new: str | None, old: str | None) -> bool:
        raise RuntimeError("hook bug")

    async def asynchronous(key: str, new: str | None, old: str | None) -> bool:
        return True

    for hook in (broken, asynchronous):
        memory = make(store, clock, on_memory_update=hook)
        with (
            caplog.at_level(logging.WARNING, "contextchef.memory.memory"),
            pytest.raises(MemoryVetoedError),
        ):
            memory.create("a", "1")
        assert memory.get("a") is None
    assert len(caplog.records) == 2


def test_rename_checks_both_vetoes_before_changing_anything(store: Store, clock: Clock) -> None:
    memory = make(
        store, clock, on_memory_update=lambda key, new, old: not (key == "a" and new is None)
    )
    memory.set("a", "1", description="d", ttl={"seconds": 30})
    with pytest.raises(MemoryVetoedError):
        memory.rename("a", "b")
    assert [entry.key for entry in memory.entries()] == ["a"]
    memory = make(store, clock)
    moved = memory.rename("a", "b")
    assert (moved.key, moved.value, moved.description, moved.expires_at) == ("b", "1", "d", T0 + 30)
    memory.set("c", "x")
    with pytest.raises(EntryExistsError):
        memory.rename("b", "c")


# -- events -----------------------------------------------------------------------------------


def test_raising_callbacks_are_logged_and_never_propagate(
    store: Store, clock: Clock, caplog: pytest.LogCaptureFixture
) -> None:
    def boom(_: object) -> None:
        raise RuntimeError("callback bug")

    memory = make(store, clock, on_memory_changed=boom, on_memory_expired=boom)
    with caplog.at_level(logging.WARNING, "contextchef.memory.memory"):
        memory.set("a", "1", ttl=0)
        assert memory.compile_artifacts().expired == ("a",)
    assert store.namespace("memory").get("a") is not None  # a compile writes nothing
    store.flush()  # the deferred delete
    assert store.namespace("memory").get("a") is None
    assert [record.getMessage() for record in caplog.records] == [
        "on_memory_changed raised; the memory operation went ahead",
        "on_memory_expired raised; the memory operation went ahead",
        "on_memory_changed raised; the memory operation went ahead",
    ]


# -- compile artifacts and rendering ----------------------------------------------------------


def test_selector_chooses_what_is_shown(store: Store, clock: Clock) -> None:
    memory = make(store, clock, selector=lambda entries: [e for e in entries if e.key == "b"])
    for key in ("a", "b", "c"):
        memory.set(key, key.upper())
    artifacts = memory.compile_artifacts()
    assert artifacts.keys == ("b",)
    assert artifacts.block.endswith("\n\nMemory entries shown: context://memory/b.")
    assert '<entry key="a">' not in artifacts.block
    bad = make(store, clock, selector=lambda entries: ["a"])
    with pytest.raises(ConfigError, match="MemoryEntry"):
        bad.compile_artifacts()


def test_compile_reads_the_store_once(clock: Clock) -> None:
    """One pass over memory/, plus the one read of the persisted turn count."""
    calls: list[tuple[str, str]] = []

    class Counting(InMemoryBackend):
        def read(self, ns: str, path: str) -> StoredEntry | None:
            calls.append(("read", ns))
            return super().read(ns, path)

        def read_all(self, ns: str, prefix: str = "") -> dict[str, StoredEntry]:
            calls.append(("read_all", ns))
            return super().read_all(ns, prefix)

        def list(self, ns: str, prefix: str = "") -> list[Any]:
            calls.append(("list", ns))
            return super().list(ns, prefix)

    memory = Memory(Store(Counting()), clock=clock)
    for key in ("a", "b", "c"):
        memory.set(key, key, ttl=1 if key == "b" else None)
    memory.advance_turn()
    calls.clear()
    artifacts = memory.compile_artifacts()
    assert calls == [("read", "memory_state"), ("read_all", "memory")]
    assert (artifacts.keys, artifacts.expired) == (("a", "c"), ("b",))


def _hostile(store: Store, clock: Clock, **options: Any) -> Memory:
    memory = make(store, clock, **options)
    clock.now = T0
    memory.set('k"<&>', "a < b && c > 'd'\nsecond line", description='says "hi" <b>')
    clock.advance(3600)
    memory.set("plain", "value")
    memory.set("plain", "value 2")
    return memory


def test_legacy_block_is_exact_and_escaped(store: Store, clock: Clock) -> None:
    block = _hostile(store, clock).compile_artifacts("legacy").block
    assert block == (
        "Your memory from earlier turns and conversations:\n"
        "<memory>\n"
        '<entry key="k&quot;&lt;&amp;&gt;">\n'
        "<description>says &quot;hi&quot; &lt;b&gt;</description>\n"
        "<update_count>1</update_count>\n"
        "<value>a &lt; b &amp;&amp; c &gt; &apos;d&apos;\nsecond line</value>\n"
        "</entry>\n"
        '<entry key="plain">\n'
        "<update_count>2</update_count>\n"
        "<value>value 2</value>\n"
        "</entry>\n"
        "</memory>\n"
        "\n"
        'Existing memory keys: k"<&>, plain.'
    )


def test_unified_block_uses_context_addresses(store: Store, clock: Clock) -> None:
    memory = _hostile(store, clock, allowed_keys=["plain", 'k"<&>'])
    block = memory.compile_artifacts("unified").block
    header, _, rest = block.partition("\n")
    assert header == "Memory (context://memory/) currently holds:"
    assert rest.endswith(
        '\n\nWritable memory entries: context://memory/k"<&>, context://memory/plain. '
        "No other memory path may be written."
    )
    legacy = memory.compile_artifacts("legacy").block
    assert legacy.endswith(
        '\n\nAllowed memory keys: k"<&>, plain. create_memory and modify_memory accept only these.'
    )
    assert legacy.partition("\n")[2].partition("\n\n")[0] == rest.partition("\n\n")[0]


def test_each_vocabulary_names_only_its_own_tools(store: Store, clock: Clock) -> None:
    for allowed in (None, ["plain"], []):
        memory = _hostile(store, clock, allowed_keys=allowed)
        legacy = memory.compile_artifacts("legacy").block + prompts.MEMORY_INSTRUCTION
        unified = memory.compile_artifacts("unified").block + prompts.CONTEXT_STORE_INSTRUCTION
        assert "context tool" not in legacy
        assert "context://" not in legacy
        assert "create_memory" not in unified
        assert "modify_memory" not in unified


def test_rendering_is_deterministic_and_never_reads_the_clock(store: Store, clock: Clock) -> None:
    memory = _hostile(store, clock)
    first = memory.compile_artifacts().block
    clock.advance(86_400)
    assert memory.compile_artifacts().block == first
    assert memory.render(memory.entries()) == first


def test_empty_memory_renders_nothing_unless_keys_are_limited(store: Store, clock: Clock) -> None:
    assert make(store, clock).compile_artifacts().block == ""
    limited = make(store, clock, allowed_keys=["user"])
    assert limited.compile_artifacts("legacy").block == (
        "Allowed memory keys: user. create_memory and modify_memory accept only these."
    )
    assert make(store, clock, allowed_keys=[]).compile_artifacts("unified").block == (
        "Memory is read-only here: no memory entry may be written."
    )


# -- snapshot and restore ---------------------------------------------------------------------


@pytest.mark.parametrize("minimal", [False, True], ids=["native", "list-and-put"])
def test_snapshot_restore_round_trip(clock: Clock, minimal: bool) -> None:
    backend: Any = InMemoryBackend()
    store = Store(Minimal(backend) if minimal else backend)
    memory = make(store, clock, default_ttl=5)
    memory.set("a", "1", description="d")
    memory.set("b", "2")
    memory.advance_turn()
    snapshot = memory.snapshot()
    assert snapshot["turn"] == 1
    assert set(snapshot["entries"]) == {"a", "b"}
    memory.set("c", "3")
    memory.delete("a")
    memory.advance_turn()
    memory.restore(snapshot)
    assert memory.turn == 1
    assert [(e.key, e.value, e.description, e.expires_at_turn) for e in memory.entries()] == [
        ("a", "1", "d", 5),
        ("b", "2", None, 5),
    ]
    memory.restore(None)
    assert (memory.entries(), memory.turn) == ((), 0)
    with pytest.raises(ConfigError):
        memory.restore({"entries": {"a": {"content": 1}}, "turn": 0})
    with pytest.raises(ConfigError):
        memory.restore({"entries": [], "turn": 0})


@pytest.mark.parametrize("backend_name", sorted(BACKENDS))
def test_memory_on_every_backend(backend_name: str, tmp_path: Path, clock: Clock) -> None:
    memory = make(Store(BACKENDS[backend_name](tmp_path)), clock, allowed_keys=["a", "b/c"])
    memory.create("b/c", "nested <value>", description="d")
    memory.set("a", "1", ttl=1)
    memory.update("b/c", "changed")
    assert memory.compile_artifacts("unified").keys == ("b/c", "a")
    memory.advance_turn()
    artifacts = memory.compile_artifacts("unified")
    assert (artifacts.keys, artifacts.expired) == (("b/c",), ("a",))
    entry = artifacts.entries[0]
    assert (entry.value, entry.description, entry.update_count) == ("changed", "d", 2)
    snapshot = memory.snapshot()
    memory.remove("b/c")
    memory.restore(snapshot)
    assert memory.get("b/c") == entry
