"""The dispatcher: ownership, routing, the legacy memory tools and new_context."""

from __future__ import annotations

import json
from typing import Any

import pytest

from contextchef.errors import ConfigError, UnknownToolError
from contextchef.memory import Memory
from contextchef.retrieval import ContextTool, Dispatcher
from contextchef.store import Store

OWNED = ["context", "new_context", "create_memory", "modify_memory", "recall_context"]


def test_owns_the_five_library_tools(dispatcher: Dispatcher) -> None:
    assert all(dispatcher.owns(name) for name in OWNED)
    assert dispatcher.owned == tuple(OWNED)
    for other in ("bash", "Context", "", None, 3, "memory"):
        assert not dispatcher.owns(other)


def test_a_tool_it_does_not_own_raises(dispatcher: Dispatcher) -> None:
    with pytest.raises(UnknownToolError) as caught:
        dispatcher.handle("bash", "{}")
    assert caught.value.name == "bash"
    assert "context, new_context, create_memory, modify_memory, recall_context" in str(caught.value)
    assert isinstance(caught.value, ConfigError)


def test_context_calls_go_to_the_context_tool(dispatcher: Dispatcher) -> None:
    arguments = json.dumps({"command": "create", "path": "notes/a", "file_text": "x"})
    assert dispatcher.handle("context", arguments) == "Created context://notes/a."
    assert dispatcher.handle("context", {"command": "view", "path": "notes/a"}) == (
        "context://notes/a (1 line):\n     1\tx"
    )
    assert dispatcher.handle("context", "{bad").startswith("Error: the tool arguments are not")


def test_recall_context_reads_like_view(dispatcher: Dispatcher, store: Store) -> None:
    store.namespace("vfs").put("out.txt", "one\ntwo\nthree")
    assert dispatcher.handle("recall_context", {"uri": "context://vfs/out.txt"}) == (
        "context://vfs/out.txt (3 lines):\n     1\tone\n     2\ttwo\n     3\tthree"
    )
    assert dispatcher.handle(
        "recall_context", '{"uri": "context://vfs/out.txt", "view_range": [2, 2]}'
    ) == (
        "context://vfs/out.txt, lines 2-2 of 3:\n     2\ttwo\n"
        "[Showing lines 2-2 of 3. To read on, call again with view_range [3, 3].]"
    )
    assert dispatcher.handle("recall_context", {}) == (
        'Error: the "uri" argument is missing or empty. Call again with "uri" set.'
    )


def test_new_context(tool: ContextTool) -> None:
    calls: list[str] = []
    dispatcher = Dispatcher(tool, on_new_context=lambda: calls.append("new"))
    assert dispatcher.handle("new_context", None) == (
        "A fresh context window begins with your next turn; the earlier conversation will be "
        "replaced by a summary."
    )
    assert dispatcher.handle("new_context", "{not json") == dispatcher.handle("new_context", {})
    assert calls == ["new", "new", "new"]
    assert Dispatcher(tool).handle("new_context", {}) == (
        "Error: starting a new context window is not available in this session. Carry on in "
        "this one."
    )


def test_create_memory(dispatcher: Dispatcher, memory: Memory) -> None:
    assert (
        dispatcher.handle("create_memory", {"key": "user", "value": "Ann", "description": "name"})
        == 'Saved memory "user".'
    )
    entry = memory.get("user")
    assert entry is not None
    assert (entry.value, entry.description, entry.update_count) == ("Ann", "name", 1)
    # An existing key is refused, never overwritten; the error points at modify_memory.
    assert dispatcher.handle("create_memory", {"key": "user", "value": "Bob"}) == (
        'Error: memory "user" already exists. Change it with modify_memory (action "update"), '
        "or delete it first."
    )
    assert memory.get("user").value == "Ann"  # type: ignore[union-attr]
    assert dispatcher.handle("create_memory", {"key": "user"}) == (
        'Error: the "value" argument is missing or empty. Call again with "value" set.'
    )
    assert dispatcher.handle("create_memory", {"key": "../x", "value": "v"}).startswith(
        'Error: "../x" cannot be a memory key: '
    )


def test_modify_memory(dispatcher: Dispatcher, memory: Memory) -> None:
    memory.set("user", "Ann", description="name")
    assert dispatcher.handle(
        "modify_memory", {"action": "update", "key": "user", "value": "Bo"}
    ) == ('Updated memory "user".')
    entry = memory.get("user")
    assert entry is not None
    assert (entry.value, entry.description, entry.update_count) == ("Bo", "name", 2)
    assert (
        dispatcher.handle(
            "modify_memory", {"action": "update", "key": "user", "value": "Cy", "description": "d"}
        )
        == 'Updated memory "user".'
    )
    assert memory.get("user").description == "d"  # type: ignore[union-attr]
    assert dispatcher.handle("modify_memory", {"action": "update", "key": "user"}) == (
        'Error: the "value" argument is missing or empty. Call again with "value" set.'
    )
    assert dispatcher.handle("modify_memory", {"action": "nuke", "key": "user"}) == (
        'Error: action must be "update" or "delete", got "nuke".'
    )
    assert dispatcher.handle("modify_memory", {"action": "delete", "key": "user"}) == (
        'Deleted memory "user".'
    )
    assert dispatcher.handle("modify_memory", {"action": "delete", "key": "user"}) == (
        'Error: there is no memory "user". Save it with create_memory first.'
    )


def test_legacy_memory_refusals(store: Store, clock: Any) -> None:
    memory = Memory(
        store, clock=clock, allowed_keys=["user"], on_memory_update=lambda k, n, o: n != "no"
    )
    dispatcher = Dispatcher(ContextTool(store, memory=memory))
    assert dispatcher.handle("create_memory", {"key": "pin", "value": "1"}) == (
        'Error: "pin" is not an allowed memory key. Allowed keys: user.'
    )
    assert dispatcher.handle("create_memory", {"key": "user", "value": "no"}) == (
        'Error: the host rejected the change to memory "user". Do not retry it; carry on '
        "without it or ask the user."
    )
    closed = Dispatcher(ContextTool(store, memory=Memory(store, allowed_keys=[])))
    assert closed.handle("create_memory", {"key": "user", "value": "1"}) == (
        'Error: "user" is not an allowed memory key: none may be written.'
    )
    read_only = Dispatcher(ContextTool(store, memory=memory, writable=["notes"]))
    assert read_only.handle("modify_memory", {"action": "delete", "key": "user"}) == (
        "Error: memory is read-only in this session; memories cannot be saved, changed or deleted."
    )
    without = Dispatcher(ContextTool(store))
    assert without.handle("create_memory", {"key": "user", "value": "1"}) == (
        "Error: memory is not available in this session; carry on without it."
    )


def test_legacy_texts_never_name_the_context_tool(dispatcher: Dispatcher) -> None:
    calls = [
        ("create_memory", {"key": "a", "value": "1"}),
        ("create_memory", {"key": "a", "value": "1"}),
        ("modify_memory", {"action": "update", "key": "a", "value": "2"}),
        ("modify_memory", {"action": "x", "key": "a"}),
        ("modify_memory", {"action": "delete", "key": "a"}),
        ("modify_memory", {"action": "delete", "key": "a"}),
        ("create_memory", {"key": "a/../b", "value": "1"}),
    ]
    for name, arguments in calls:
        result = dispatcher.handle(name, arguments)
        assert "context" not in result


def test_a_memory_given_to_the_dispatcher_wins(store: Store, tool: ContextTool) -> None:
    other = Memory(Store(store.backend))  # type: ignore[arg-type]
    dispatcher = Dispatcher(tool, memory=other)
    dispatcher.handle("create_memory", {"key": "k", "value": "v"})
    assert other.get("k") is not None
    with pytest.raises(ConfigError):
        Dispatcher("tool")  # type: ignore[arg-type]
    with pytest.raises(ConfigError):
        Dispatcher(tool, on_new_context="go")  # type: ignore[arg-type]
