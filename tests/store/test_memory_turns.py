"""A turn is a host turn: TTLs in turns count user messages (or `memory.advance_turn()`), not
compiles, and the count lives in the store beside the memory."""

from __future__ import annotations

import asyncio
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import hypothesis.strategies as st
import pytest
from hypothesis import given

from contextchef import AsyncContextChef, ContextChef
from contextchef.errors import ConfigError
from contextchef.memory import Memory
from contextchef.memory.entry import read_entry
from contextchef.memory.turns import UserMessages, last_user_marker
from contextchef.store import FileSystemBackend, InMemoryBackend, Store, StoredEntry
from contextchef.store.backends.inmemory import AsyncInMemoryBackend
from contextchef.store.backends.sqlite import SQLiteBackend

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "ts_fs"
TARGETS = ("openai", "anthropic")


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def reply(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": text}


class Conversation:
    """A host loop: each `turn()` appends a user message and compiles for every target."""

    def __init__(self, chef: ContextChef, history: list[dict[str, Any]] | None = None) -> None:
        self.chef = chef
        self.history = list(history or [])

    def turn(self, text: str) -> list[tuple[str, ...]]:
        self.history.append(user(text))
        self.chef.set_history(self.history)
        shown = [self.chef.compile(target=target).meta.memory_keys for target in TARGETS]
        self.history.append(reply(f"re: {text}"))
        return shown


def test_a_turn_ttl_survives_that_many_host_turns_across_two_targets() -> None:
    chef = ContextChef(memory={})
    chef.memory.set("todo", "buy milk", ttl={"turns": 2})
    talk = Conversation(chef)
    assert talk.turn("one") == [("todo",), ("todo",)]
    assert talk.turn("two") == [("todo",), ("todo",)]
    assert talk.turn("three") == [(), ()]
    assert chef.memory.turn == 2


def test_a_retry_or_a_tool_loop_does_not_age_memory() -> None:
    chef = ContextChef(memory={})
    chef.memory.set("todo", "buy milk", ttl=1)
    history = [user("hi")]
    for _ in range(4):  # retries of the same history
        assert chef.set_history(history).compile().meta.memory_keys == ("todo",)
    history += [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "a b"},
    ]
    assert chef.set_history(history).compile().meta.memory_keys == ("todo",)
    assert chef.memory.turn == 0
    chef.set_history([*history, reply("done"), user("next")])
    assert chef.compile().meta.expired_memory_keys == ("todo",)


def test_a_repeated_user_message_is_a_new_turn_and_a_compaction_is_not() -> None:
    memory = Memory(Store(InMemoryBackend()))
    history = [user("yes")]
    memory.compile_artifacts(history=history)
    history += [reply("sure?"), user("yes")]
    memory.compile_artifacts(history=history)
    assert memory.turn == 1
    memory.compile_artifacts(history=history[-1:])  # older messages summarised away
    assert memory.turn == 1
    memory.compile_artifacts(history=[*history[-1:], reply("ok"), user("yes")])
    assert memory.turn == 2


def test_explicit_turns_only_advance_with_next_turn() -> None:
    chef = ContextChef(memory={"turns": "explicit"})
    memory = chef.memory
    assert memory.turns == "explicit"
    memory.set("todo", "buy milk", ttl=1)
    talk = Conversation(chef)
    assert talk.turn("one") == [("todo",), ("todo",)]
    assert talk.turn("two") == [("todo",), ("todo",)]
    assert chef.memory.advance_turn() == 1
    assert talk.turn("three") == [(), ()]
    assert chef.memory.advance_turn() == 2


def test_next_turn_needs_memory_and_turns_must_be_known() -> None:
    with pytest.raises(ConfigError):
        ContextChef().memory.advance_turn()
    with pytest.raises(ConfigError, match="turns"):
        ContextChef(memory={"turns": "compiles"})


def _filesystem(tmp_path: Path) -> FileSystemBackend:
    return FileSystemBackend(tmp_path / ".context")


def _sqlite(tmp_path: Path) -> SQLiteBackend:
    return SQLiteBackend(tmp_path / "context.db", project="test:turns")


@pytest.mark.parametrize("backend", [_filesystem, _sqlite], ids=["filesystem", "sqlite"])
def test_a_new_chef_on_the_same_store_continues_the_count(
    tmp_path: Path, backend: Callable[[Path], Any]
) -> None:
    old = ContextChef(store=backend(tmp_path), memory={})
    talk = Conversation(old)
    talk.turn("one")
    talk.turn("two")
    old.memory.set("todo", "buy milk", ttl=2)  # written at turn 1: expires at turn 3
    assert old.memory.get("todo").expires_at_turn == 3  # type: ignore[union-attr]

    new = ContextChef(store=backend(tmp_path), memory={})
    resumed = Conversation(new, talk.history[:-1])  # the same history: the same turn
    new.set_history(resumed.history)
    assert new.compile().meta.memory_keys == ("todo",)
    assert new.memory.turn == 1
    resumed.history.append(reply("re: two"))
    assert resumed.turn("three") == [("todo",), ("todo",)]
    assert new.memory.turn == 2
    assert resumed.turn("four") == [(), ()]
    assert new.memory.turn == 3
    assert [entry.key for entry in new.memory.entries()] == []


def test_the_turn_count_is_no_memory_entry(tmp_path: Path) -> None:
    chef = ContextChef(store=_filesystem(tmp_path), memory={})
    chef.memory.set("fact", "x")
    Conversation(chef).turn("one")
    assert chef.memory.advance_turn() == 1
    assert [entry.key for entry in chef.memory.entries()] == ["fact"]
    assert [item.path for item in chef.store.namespace("memory").list()] == ["fact"]
    listing = chef.handle_tool("context", {"command": "view", "path": "context://memory/"})
    assert "fact" in listing and "turn" not in listing
    assert chef.memory.snapshot()["entries"].keys() == {"fact"}
    assert (tmp_path / ".context" / "memory_state" / "turn").is_file()


def test_snapshot_and_restore_carry_the_turn_and_its_user_message() -> None:
    chef = ContextChef(memory={})
    talk = Conversation(chef)
    talk.turn("one")
    talk.turn("two")
    snapshot = chef.snapshot()
    assert snapshot.memory is not None and snapshot.memory["turn"] == 1
    talk.turn("three")
    talk.turn("four")
    chef.restore(snapshot)
    assert chef.memory.turn == 1
    chef.compile()  # the restored history ends with the same user message: no new turn
    assert chef.memory.turn == 1


# -- the TypeScript reference's meta ------------------------------------------------------------


@pytest.fixture
def reference_copy(tmp_path: Path) -> Path:
    shutil.copytree(FIXTURE / "root", tmp_path / ".context")
    return tmp_path / ".context"


def test_reads_the_reference_memory_meta(reference_copy: Path) -> None:
    memory = Memory(FileSystemBackend(reference_copy))
    lang, name = memory.entries()
    assert (name.key, name.value) == ("user_name", "Ada Lovelace")
    assert name.description == "preferred name"
    assert (name.update_count, name.created_at, name.updated_at) == (2, 1767225600.0, 1767225600.0)
    assert (name.expires_at, name.expires_at_turn) == (None, None)
    assert (lang.key, lang.update_count, lang.expires_at_turn) == ("lang", 1, 3)
    assert lang.importance == 0.5 and lang.extra_meta == {} and lang.meta_style == "typescript"


def test_an_updated_reference_entry_stays_in_the_reference_format(reference_copy: Path) -> None:
    clock = lambda: 1767225700.5  # noqa: E731
    memory = Memory(Store(FileSystemBackend(reference_copy), clock=clock), clock=clock)
    memory.update("lang", "Python 3.12")
    memory.rename("user_name", "name")
    lang = json.loads((reference_copy / "memory" / "lang").read_text(encoding="utf-8"))
    assert lang == {
        "content": "Python 3.12",
        "meta": {
            "createdAt": 1767225600000,
            "updatedAt": 1767225700500,
            "updateCount": 2,
            "importance": 0.5,
            "expiresAtTurn": 3,
        },
    }
    assert list(lang["meta"]) == [  # the reference's own key order
        "createdAt",
        "updatedAt",
        "updateCount",
        "importance",
        "expiresAtTurn",
    ]
    moved = json.loads((reference_copy / "memory" / "name").read_text(encoding="utf-8"))
    assert moved["meta"]["description"] == "preferred name"
    assert moved["meta"]["updateCount"] == 1 and "update_count" not in moved["meta"]
    memory.set("new", "fresh")  # a new entry is written in Python's own style
    fresh = json.loads((reference_copy / "memory" / "new").read_text(encoding="utf-8"))
    assert fresh["meta"]["update_count"] == 1


def test_the_reference_entry_expires_at_its_turn(reference_copy: Path) -> None:
    chef = ContextChef(store=FileSystemBackend(reference_copy), memory={})
    talk = Conversation(chef)
    for turn in range(3):
        assert talk.turn(f"turn {turn}") == [("lang", "user_name")] * 2
    assert talk.turn("turn 3") == [("user_name",)] * 2
    chef.store.flush()  # a compile writes nothing: the deletion waits for the next write
    assert not (reference_copy / "memory" / "lang").exists()


def test_reference_times_in_milliseconds_are_read_on_any_backend() -> None:
    stored = StoredEntry(
        "v", {"createdAt": 1_000_000, "updatedAt": 2_000_500, "expiresAt": 3_000_000}
    )
    entry = read_entry("k", stored)
    assert (entry.created_at, entry.updated_at, entry.expires_at) == (1000.0, 2000.5, 3000.0)
    assert entry.meta_style == "typescript"


# -- the async chef -----------------------------------------------------------------------------


def test_async_chef_over_an_async_native_backend_counts_host_turns() -> None:
    async def main() -> None:
        backend = AsyncInMemoryBackend()
        chef = AsyncContextChef(store=backend, memory={})
        await chef.memory.set("todo", "buy milk", ttl={"turns": 2})
        history: list[dict[str, Any]] = []
        shown = []
        for text in ("one", "two", "three"):
            history.append(user(text))
            chef.set_history(history)
            for target in TARGETS:
                shown.append((await chef.compile(target=target)).meta.memory_keys)
            history.append(reply("ok"))
        assert shown == [("todo",)] * 4 + [()] * 2
        assert await chef.memory.advance_turn() == 3

        again = AsyncContextChef(store=backend, memory={"turns": "explicit"})
        memory = again.memory
        await memory.set("soon", "gone", ttl=1)
        assert (await memory.get("soon")).expires_at_turn == 4  # type: ignore[union-attr]
        assert (await again.compile()).meta.memory_keys == ("soon",)
        assert await again.memory.advance_turn() == 4
        assert (await again.compile()).meta.expired_memory_keys == ("soon",)

    asyncio.run(main())


_ROLES = st.sampled_from(["user", "assistant", "system", "tool"])


@given(st.lists(st.tuples(st.integers(0, 30), st.lists(_ROLES, max_size=6)), max_size=8))
def test_the_incremental_marker_equals_a_full_scan(steps: list[tuple[int, list[str]]]) -> None:
    """A chef's successive histories (sharing prefixes object for object, then truncated or
    extended) get the marker a full scan of each gives."""
    users = UserMessages()
    history: list[dict[str, str]] = []
    for keep, roles in steps:
        history = history[:keep] + [{"role": r, "content": f"{r}{len(history)}"} for r in roles]
        frozen = tuple(history)
        assert users.marker(frozen) == last_user_marker(frozen)
