"""Size caps: one memory value and the memory block (`memory={...}`), one entry and one call's
arguments (`context_tool={...}`). A model write over a cap comes back as an `Error:` result that
names the limit; the host's own `Memory.set` is held only to the block cap."""

from __future__ import annotations

import json
from typing import Any

import pytest

from contextchef import ContextChef
from contextchef._limits import (
    DEFAULT_MAX_ARGUMENT_BYTES,
    DEFAULT_MAX_BLOCK_BYTES,
    DEFAULT_MAX_ENTRY_BYTES,
    DEFAULT_MAX_VALUE_BYTES,
)
from contextchef.errors import ConfigError, MemoryValueTooLargeError
from contextchef.memory import Memory
from contextchef.store import InMemoryBackend, Store


def create(chef: ContextChef, path: str, text: str) -> str:
    return chef.handle_tool("context", {"command": "create", "path": path, "file_text": text})


def system_text(chef: ContextChef) -> str:
    payload = chef.set_history([{"role": "user", "content": "hi"}]).compile(target="openai")
    return json.dumps(payload["messages"], ensure_ascii=False)


def test_the_defaults() -> None:
    assert DEFAULT_MAX_VALUE_BYTES == 8 * 1024
    assert DEFAULT_MAX_BLOCK_BYTES == 32 * 1024
    assert DEFAULT_MAX_ENTRY_BYTES == 256 * 1024
    assert DEFAULT_MAX_ARGUMENT_BYTES == 1024 * 1024
    memory = Memory(Store(InMemoryBackend()))
    assert (memory.core.max_value_bytes, memory.core.max_block_bytes) == (8192, 32768)


# -- one memory value -------------------------------------------------------------------------


def test_a_model_write_over_the_value_cap_is_refused_with_the_limit() -> None:
    chef = ContextChef(memory={"max_value_bytes": 100})
    result = create(chef, "context://memory/fact", "x" * 101)
    assert result.startswith("Error: the value for context://memory/fact would be 101 bytes")
    assert "limit of 100 bytes" in result
    assert "context://notes/" in result  # where longer text may go
    assert chef.memory.get("fact") is None
    assert create(chef, "context://memory/fact", "x" * 100) == "Created context://memory/fact."


def test_the_value_cap_counts_utf8_bytes() -> None:
    chef = ContextChef(memory={"max_value_bytes": 10})
    assert create(chef, "memory/fact", "é" * 6).startswith("Error: the value for")  # 12 bytes
    assert create(chef, "memory/fact", "é" * 5) == "Created context://memory/fact."


def test_edits_that_grow_a_value_past_the_cap_are_refused() -> None:
    chef = ContextChef(memory={"max_value_bytes": 20})
    create(chef, "memory/fact", "short")
    grown = chef.handle_tool(
        "context",
        {"command": "str_replace", "path": "memory/fact", "old_str": "short", "new_str": "y" * 30},
    )
    assert grown.startswith("Error: the value for context://memory/fact would be 30 bytes")
    inserted = chef.handle_tool(
        "context",
        {"command": "insert", "path": "memory/fact", "insert_line": 1, "insert_text": "z" * 30},
    )
    assert inserted.startswith("Error:")
    memory = chef.memory.get("fact")
    assert memory is not None and memory.value == "short"


def test_the_host_api_is_not_capped_but_the_model_may_only_shrink_it() -> None:
    chef = ContextChef(memory={"max_value_bytes": 20})
    chef.memory.set("long", "head " + "a" * 45)  # the host's own write: no cap
    edit = {"command": "str_replace", "path": "memory/long", "old_str": "head", "new_str": "h"}
    assert chef.handle_tool("context", edit) == "Edited context://memory/long."
    grow = {"command": "str_replace", "path": "memory/long", "old_str": "h ", "new_str": "b" * 9}
    assert chef.handle_tool("context", grow).startswith("Error: the value for")


def test_the_value_cap_without_writable_notes_does_not_point_at_notes() -> None:
    chef = ContextChef(memory={"max_value_bytes": 5}, context_tool={"writable": ["memory"]})
    result = create(chef, "memory/fact", "toolong")
    assert result.startswith("Error:") and "notes" not in result


def test_the_legacy_tools_refuse_a_long_value_in_their_own_words() -> None:
    chef = ContextChef(tools="legacy", memory={"max_value_bytes": 10})
    result = chef.handle_tool("create_memory", {"key": "fact", "value": "v" * 11})
    assert result.startswith('Error: the value for memory "fact" is 11 bytes')
    assert "context" not in result
    chef.handle_tool("create_memory", {"key": "fact", "value": "ok"})
    update = {"action": "update", "key": "fact", "value": "v" * 11}
    assert chef.handle_tool("modify_memory", update).startswith("Error: the value for memory")


def test_memory_create_raises_the_typed_error() -> None:
    memory = Memory(Store(InMemoryBackend()), max_value_bytes=4)
    with pytest.raises(MemoryValueTooLargeError) as caught:
        memory.create("k", "12345")
    assert (caught.value.key, caught.value.size, caught.value.limit) == ("k", 5, 4)
    memory.set("k", "12345")  # the host path is not capped


@pytest.mark.parametrize("value", [0, -1, 1.5, "8k", True])
def test_a_cap_must_be_a_positive_int_or_none(value: Any) -> None:
    with pytest.raises(ConfigError, match="max_value_bytes"):
        Memory(Store(InMemoryBackend()), max_value_bytes=value)
    with pytest.raises(ConfigError, match="max_block_bytes"):
        ContextChef(memory={"max_block_bytes": value})
    with pytest.raises(ConfigError, match="max_entry_bytes"):
        ContextChef(context_tool={"max_entry_bytes": value})
    with pytest.raises(ConfigError, match="max_argument_bytes"):
        ContextChef(context_tool={"max_argument_bytes": value})


def test_none_lifts_a_cap() -> None:
    chef = ContextChef(memory={"max_value_bytes": None}, context_tool={"max_entry_bytes": None})
    assert create(chef, "memory/big", "x" * 300_000) == "Created context://memory/big."


# -- the memory block -------------------------------------------------------------------------


def test_the_block_leaves_out_what_does_not_fit_and_says_how_to_read_it() -> None:
    chef = ContextChef(memory={"max_block_bytes": 2000})
    memory = chef.memory
    for index in range(10):
        memory.set(f"fact{index}", f"{index}" * 300)
    artifacts = memory.compile_artifacts()
    assert len(artifacts.block.encode()) <= 2000
    assert 0 < len(artifacts.entries) < 10
    assert len(artifacts.omitted) == 10 - len(artifacts.entries)
    count = len(artifacts.omitted)
    assert f"[{count} more memory entries are stored but not shown" in artifacts.block
    assert "under 2000 bytes. View context://memory/ to list every entry" in artifacts.block
    shown = ", ".join(f"context://memory/{key}" for key in artifacts.keys)
    assert artifacts.block.endswith(f"Memory entries shown: {shown}.")
    text = system_text(chef)
    assert "more memory entries are stored but not shown" in text
    assert "fact9" not in text


def test_a_host_written_giant_entry_never_reaches_the_payload() -> None:
    chef = ContextChef(memory={})
    chef.memory.set("dump", "x" * 1_000_000)  # the host's API: not capped itself
    chef.memory.set("name", "Ada")
    text = system_text(chef)
    assert len(text.encode()) < DEFAULT_MAX_BLOCK_BYTES + 10_000
    assert "Ada" in text and "1 more memory entry is stored but not shown" in text


def test_a_block_under_the_cap_is_unchanged() -> None:
    store = Store(InMemoryBackend())
    capped = Memory(store, max_block_bytes=10_000)
    uncapped = Memory(store, max_block_bytes=None)
    capped.set("a", "one")
    capped.set("b", "two")
    assert capped.compile_artifacts().block == uncapped.compile_artifacts().block
    assert capped.compile_artifacts().omitted == ()


def test_the_legacy_block_note_names_no_tool_that_reads() -> None:
    chef = ContextChef(tools="legacy", memory={"max_block_bytes": 600})
    memory = chef.memory
    for index in range(5):
        memory.set(f"k{index}", "v" * 200)
    block = memory.compile_artifacts(chef.tools.vocabulary).block
    assert "more memories are stored but not shown" in block
    assert "modify_memory" in block  # memory is writable: make room
    assert "context" not in block and "recall_context" not in block
    read_only = ContextChef(
        tools="legacy", memory={"max_block_bytes": 600}, context_tool={"writable": []}
    )
    for index in range(5):
        read_only.memory.set(f"k{index}", "v" * 200)
    note = read_only.memory.compile_artifacts(read_only.tools.vocabulary).block
    assert "more memories are stored but not shown" in note and "modify_memory" not in note


# -- one entry and one call -------------------------------------------------------------------


def test_an_entry_over_the_cap_is_refused_in_any_namespace() -> None:
    chef = ContextChef(context_tool={"max_entry_bytes": 1000})
    result = create(chef, "context://notes/plan.md", "n" * 1001)
    assert result == (
        "Error: context://notes/plan.md would be 1001 bytes, over the limit of 1000 bytes for one "
        "entry, so nothing was written. Keep only what you need, or split it over several entries."
    )
    assert create(chef, "notes/plan.md", "n" * 1000) == "Created context://notes/plan.md."
    insert = {"command": "insert", "path": "notes/plan.md", "insert_line": 0, "insert_text": "m"}
    assert chef.handle_tool("context", insert).startswith("Error: context://notes/plan.md would")
    assert not chef.store.namespace("notes").get("plan.md").content.startswith("m")


def test_the_default_entry_cap_stops_a_huge_note() -> None:
    chef = ContextChef()
    result = create(chef, "notes/huge", "x" * (DEFAULT_MAX_ENTRY_BYTES + 1))
    assert result.startswith("Error:") and f"limit of {DEFAULT_MAX_ENTRY_BYTES} bytes" in result


def test_arguments_over_the_cap_are_refused_before_parsing() -> None:
    chef = ContextChef(context_tool={"max_argument_bytes": 500})
    arguments = json.dumps({"command": "create", "path": "notes/a", "file_text": "x" * 600})
    result = chef.handle_tool("context", arguments)
    assert result.startswith("Error: the tool arguments are ")
    assert "over the limit of 500 bytes for one call" in result
    as_dict = {"command": "create", "path": "notes/a", "file_text": "x" * 600}
    assert chef.handle_tool("context", as_dict).startswith("Error: the tool arguments are")
    assert chef.handle_tool("context", "{" + " " * 600 + "}").startswith("Error: the tool arg")
    assert create(chef, "notes/a", "small") == "Created context://notes/a."


def test_the_argument_cap_covers_the_legacy_tools() -> None:
    chef = ContextChef(tools="legacy", memory={}, context_tool={"max_argument_bytes": 200})
    result = chef.handle_tool("create_memory", {"key": "k", "value": "v" * 300})
    assert result.startswith("Error: the tool arguments are")
    assert "context" not in result.replace("tool arguments", "")


def test_unknown_context_tool_options_are_refused() -> None:
    with pytest.raises(ConfigError, match="known: \\['max_argument_bytes', 'max_entry_bytes'"):
        ContextChef(context_tool={"max_bytes": 1})


@pytest.mark.parametrize("tools", ["unified", "legacy"])
@pytest.mark.parametrize("allowed", [None, ["k1", "k3", "k5"]])
@pytest.mark.parametrize("cap", [700, 1500, 4000])
def test_the_block_stays_under_its_cap(tools: str, allowed: list[str] | None, cap: int) -> None:
    options: dict[str, Any] = {"max_block_bytes": cap}
    if allowed is not None:
        options["allowed_keys"] = allowed
    chef = ContextChef(tools=tools, memory=options)
    memory = chef.memory
    for index in range(12):
        memory.set(f"k{index}", "é" * (index * 40), description=f"fact {index}")
    artifacts = memory.compile_artifacts(chef.tools.vocabulary)
    assert len(artifacts.block.encode()) <= cap
    assert artifacts.entries  # the small ones still fit
    assert set(artifacts.keys) | set(artifacts.omitted) == {f"k{index}" for index in range(12)}
