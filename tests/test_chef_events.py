"""The five events a host subscribes to beside the compile ones (issue 26, item 2):
`offload:created`, `compress`, `memory:changed`, `memory:expired`, `pruner:tool-blocked`,
each with a typed payload, on both chefs."""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

import pytest

from contextchef import AsyncContextChef, ContextChef
from contextchef.errors import ConfigError
from contextchef.events import (
    EVENT_NAMES,
    Compressed,
    MemoryChanged,
    MemoryExpired,
    OffloadCreated,
    ToolBlocked,
)
from contextchef.selection.offload import offload_uri
from contextchef.selection.strategies import summarize

NEW_EVENTS = ("offload:created", "compress", "memory:changed", "memory:expired")


@pytest.mark.parametrize("event", [*NEW_EVENTS, "pruner:tool-blocked"])
def test_the_chef_accepts_every_new_event(event: str) -> None:
    assert event in EVENT_NAMES
    chef = ContextChef()
    unsubscribe = chef.on(event, print)
    assert unsubscribe() is True and chef.off(event, print) is False


def test_an_unknown_event_still_raises() -> None:
    with pytest.raises(ConfigError, match="unknown event 'offload'"):
        ContextChef().on("offload", print)


def long_log(lines: int = 2000) -> str:
    return "\n".join(f"step {i}: ok" for i in range(lines))


def tool_turn(result: str) -> list[dict[str, Any]]:
    call = {"id": "c1", "type": "function", "function": {"name": "pytest", "arguments": "{}"}}
    return [
        {"role": "user", "content": "run the tests"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": result},
    ]


def test_offload_created_says_what_was_offloaded_and_where() -> None:
    seen: list[OffloadCreated] = []
    chef = ContextChef().set_history(tool_turn(long_log()))
    chef.on("offload:created", seen.append)
    chef.compile()
    chef.compile()  # the second compile reuses the preview: nothing is offloaded again
    uri = offload_uri("vfs", long_log())
    path = uri.removeprefix("context://vfs/")
    assert seen == [
        OffloadCreated(uri, "vfs", path, len(long_log()), "tool_result", "pytest", "c1")
    ]
    manual = chef.store.offload("a file the host read\n" * 400, name="notes.txt")
    assert seen[-1] == OffloadCreated(
        manual.uri, "vfs", manual.path, manual.chars, "manual", "notes.txt"
    )


def test_a_short_result_emits_nothing() -> None:
    seen: list[object] = []
    chef = ContextChef().set_history(tool_turn("3 passed"))
    chef.on("offload:created", seen.append)
    chef.compile()
    assert seen == []


class PerMessage:
    def count_text(self, text: str) -> int:
        return 10 * text.count('"role":')

    def count_message(self, message: Any) -> int:
        return 10


def overflowing_chef(archive: object = "archive") -> ContextChef:
    counter = itertools.count(1)
    return ContextChef(
        tools="legacy",
        tokenizer=PerMessage(),
        budget={"context_window": 100, "trigger_ratio": 1.0},
        overflow={
            "strategy": summarize(lambda _: "<summary>S</summary>", preserve_recent_messages=1),
            "window_ids": lambda: f"w{next(counter)}",
            "archive": archive,
        },
    )


def dialogue(turns: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for i in range(turns):
        out += [
            {"role": "user", "content": f"question {i}"},
            {"role": "assistant", "content": f"answer {i}"},
        ]
    return [*out, {"role": "user", "content": "q"}]


@pytest.mark.parametrize(
    ("archive", "archived"), [("archive", True), (None, False)], ids=["archived", "unarchived"]
)
def test_compress_says_what_was_compressed_and_where_it_went(
    archive: object, archived: bool
) -> None:
    seen: list[Compressed] = []
    chef = overflowing_chef(archive)
    chef.on("compress", seen.append)
    chef.set_history(dialogue(6))
    report = chef.compile().meta.overflow
    assert report is not None and report.changed
    [event] = seen
    assert event.target == "openai" and event.strategy == report.strategy
    assert event.messages == len(report.span) == 12
    assert event.summarized and not event.forced and event.window_id == report.window_id
    if archived:
        assert event.archive_uri is not None and event.archive_uri.startswith("context://archive/")
        assert "question 0" in (chef.store.resolve(event.archive_uri) or "")
    else:
        assert event.archive_uri is None
    chef.compile()  # within budget now: no second event
    assert len(seen) == 1


def test_memory_changed_says_who_changed_what() -> None:
    seen: list[MemoryChanged] = []
    chef = ContextChef(memory={}, tools="unified")
    chef.on("memory:changed", seen.append)
    chef.memory.set("goal", "ship v1")
    chef.handle_tool("context", {"command": "create", "path": "memory/city", "file_text": "Oslo"})
    chef.handle_tool(
        "context",
        {"command": "str_replace", "path": "memory/city", "old_str": "Oslo", "new_str": "Bergen"},
    )
    chef.memory.set("goal", "ship v2")
    chef.memory.delete("goal")
    chef.handle_tool("context", {"command": "delete", "path": "memory/city"})
    assert seen == [
        MemoryChanged("goal", "set", "ship v1", None, "host"),
        MemoryChanged("city", "set", "Oslo", None, "model"),
        MemoryChanged("city", "set", "Bergen", "Oslo", "model"),
        MemoryChanged("goal", "set", "ship v2", "ship v1", "host"),
        MemoryChanged("goal", "delete", None, "ship v2", "host"),
        MemoryChanged("city", "delete", None, "Bergen", "model"),
    ]


def test_memory_expired_names_the_key() -> None:
    expired: list[MemoryExpired] = []
    changed: list[MemoryChanged] = []
    chef = ContextChef(memory={"turns": "explicit"})
    chef.on("memory:expired", expired.append)
    chef.on("memory:changed", changed.append)
    chef.memory.set("otp", "123", ttl={"turns": 1})
    chef.set_history([{"role": "user", "content": "hi"}])
    chef.memory.advance_turn()
    payload = chef.compile()
    assert "otp" in payload.meta.expired_memory_keys
    assert expired == [MemoryExpired("otp", "123")]
    assert [event.kind for event in changed] == ["set"]  # an expiry is not a change


def test_tool_blocked_names_the_tool_and_the_reason() -> None:
    seen: list[ToolBlocked] = []
    git = {"git": {"tools": ["git_log", "git_commit"], "description": "git"}}
    chef = ContextChef(pruner={"namespaces": git, "blocked": ["send_email", "git_commit"]})
    chef.tools.register(
        [
            {"name": name, "description": name, "parameters": {"type": "object"}}
            for name in ("send_email", "git_log", "git_commit", "read_file")
        ]
    )
    chef.on("pruner:tool-blocked", seen.append)
    refused = chef.tools.check_tool_call("send_email", {})
    chef.tools.check_tool_call("read_file", {})
    chef.tools.check_tool_call("git", {"action": "git_commit", "args": {}})
    assert refused.reason is not None
    assert seen[0] == ToolBlocked("send_email", refused.reason, None)
    assert [(event.tool, event.namespace) for event in seen] == [
        ("send_email", None),
        ("git_commit", "git"),
    ]


async def test_the_async_chef_awaits_its_handlers() -> None:
    seen: list[object] = []

    async def record(event: object) -> None:
        seen.append(event)

    chef = AsyncContextChef(memory={}, pruner={"blocked": ["click"]})
    chef.tools.register([{"name": "click", "description": "c", "parameters": {"type": "object"}}])
    for event in (*NEW_EVENTS, "pruner:tool-blocked"):
        chef.on(event, record)
    await chef.memory.set("goal", "x")
    await chef.store.offload(long_log())
    chef.set_history(tool_turn(long_log(3000)))
    await chef.compile()
    chef.tools.check_tool_call("click")  # sync: the coroutine handler is scheduled
    await asyncio.sleep(0)
    kinds = [type(event).__name__ for event in seen]
    assert kinds == ["MemoryChanged", "OffloadCreated", "OffloadCreated", "ToolBlocked"]


def test_a_raising_handler_never_fails_the_operation(caplog: pytest.LogCaptureFixture) -> None:
    def boom(event: object) -> None:
        raise RuntimeError("handler bug")

    chef = ContextChef(memory={}, pruner={"blocked": ["click"]})
    chef.tools.register([{"name": "click", "description": "c", "parameters": {"type": "object"}}])
    for event in (*NEW_EVENTS, "pruner:tool-blocked"):
        chef.on(event, boom)
    chef.memory.set("goal", "x")
    assert chef.memory.get("goal") is not None
    assert not chef.tools.check_tool_call("click").allowed
    assert chef.store.offload(long_log()).marker
    assert caplog.text.count("handler bug") == 3
