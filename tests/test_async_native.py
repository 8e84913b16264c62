"""`AsyncContextChef` over an async-native backend: every store call awaited on the event loop.

The spy backend below records the thread each of its coroutines ran on; every test asserts
that all of them ran on the loop's own thread (no worker-thread hop, no private event loop),
and `asyncio.to_thread` is made to fail for the duration, so nothing the chef drives — store
operations, hooks, the summarizer — leaves the loop.
"""

from __future__ import annotations

import asyncio
import gc
import json
import logging
import threading
import warnings
from collections.abc import Iterator
from typing import Any

import pytest

from contextchef import AsyncContextChef, ContextChef, prompts
from contextchef.errors import ConfigError
from contextchef.memory.entry import MemoryChange
from contextchef.memory.memory import AsyncMemory
from contextchef.retrieval.paging import numbered
from contextchef.selection.offload import offload_uri
from contextchef.selection.strategies import summarize
from contextchef.store.backends.inmemory import AsyncInMemoryBackend, InMemoryBackend

SPIED = (
    "read",
    "write",
    "delete",
    "list",
    "read_all",
    "exists",
    "append",
    "search",
    "snapshot",
    "restore",
    "create",
    "read_versioned",
    "replace_if",
    "transact",
)


class SpyBackend(AsyncInMemoryBackend):
    """`AsyncInMemoryBackend` that records (method, thread id) for every call."""

    def __init__(self, inner: InMemoryBackend | None = None) -> None:
        super().__init__(inner)
        self.calls: list[tuple[str, int]] = []

    def methods(self) -> set[str]:
        return {method for method, _ in self.calls}

    def threads(self) -> set[int]:
        return {thread for _, thread in self.calls}


def _spied(name: str) -> Any:
    original = getattr(AsyncInMemoryBackend, name)

    async def method(self: SpyBackend, *args: Any, **kwargs: Any) -> Any:
        self.calls.append((name, threading.get_ident()))
        return await original(self, *args, **kwargs)

    method.__name__ = method.__qualname__ = name
    return method


for _name in SPIED:
    setattr(SpyBackend, _name, _spied(_name))


@pytest.fixture
def spy() -> SpyBackend:
    return SpyBackend()


@pytest.fixture(autouse=True)
def no_thread_hop(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Any `asyncio.to_thread` (the async driver's way to run blocking work) fails the test."""

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError(f"asyncio.to_thread called with {args!r}")

    monkeypatch.setattr(asyncio, "to_thread", refuse)
    yield


def on_loop_only(spy: SpyBackend, *methods: str) -> None:
    """Every backend call ran on this (the loop's) thread; `methods` were among them."""
    assert spy.calls, "the backend was never called"
    assert spy.threads() == {threading.get_ident()}
    assert set(methods) <= spy.methods(), spy.methods()


class PerMessage:
    """A tokenizer that charges a fixed price per message and nothing for text: in a payload as
    sent (compact JSON), every object with a `role` is a message."""

    def count_text(self, text: str) -> int:
        return 10 * text.count('"role":')

    def count_message(self, message: Any) -> int:
        return 10


def dialogue(turns: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for i in range(turns):
        out.append({"role": "user", "content": f"question {i}"})
        out.append({"role": "assistant", "content": f"answer {i}"})
    return out


def tool_history(result: str) -> list[dict[str, Any]]:
    call = {"id": "c1", "type": "function", "function": {"name": "pytest", "arguments": "{}"}}
    return [
        {"role": "user", "content": "run the tests"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": result},
    ]


def test_the_sync_chef_refuses_an_async_native_backend() -> None:
    with pytest.raises(ConfigError, match=r"AsyncInMemoryBackend.*AsyncContextChef"):
        ContextChef(store=AsyncInMemoryBackend())


def test_the_sync_chef_refuses_an_async_memory_over_an_async_native_backend() -> None:
    """At construction, like `store=`: not at the first compile, with a misleading message."""
    with pytest.raises(ConfigError, match=r"AsyncInMemoryBackend.*AsyncContextChef"):
        ContextChef(memory=AsyncMemory(AsyncInMemoryBackend()))


async def test_the_async_chef_takes_an_async_memory_over_an_async_native_backend(
    spy: SpyBackend,
) -> None:
    memory = AsyncMemory(spy)
    await memory.set("goal", "ship")
    chef = AsyncContextChef(memory=memory).set_history([{"role": "user", "content": "Hi"}])
    payload = await chef.compile()
    assert payload.meta.memory_keys == ("goal",)
    assert "ship" in json.dumps(payload)
    on_loop_only(spy, "write", "read_all")


# -- compile -----------------------------------------------------------------------------------


async def test_memory_set_through_async_memory_appears_in_the_payload(spy: SpyBackend) -> None:
    chef = AsyncContextChef(store=spy, memory={})
    memory = chef.memory
    await memory.set("user_name", "Ada Lovelace", description="who the user is")
    await memory.set("goal", "ship the parser fix")
    chef.set_system_prompt("You are helpful.").set_history([{"role": "user", "content": "Hi"}])

    payload = await chef.compile()

    system = payload["messages"][1]
    assert system["role"] == "system"
    assert "Ada Lovelace" in system["content"] and "ship the parser fix" in system["content"]
    assert payload.meta.memory_keys == ("user_name", "goal")  # the order they were learned
    assert (await memory.get("goal")) is not None
    on_loop_only(spy, "write", "read", "read_all")


async def test_a_long_tool_result_is_offloaded_to_the_async_native_store(
    spy: SpyBackend,
) -> None:
    output = "\n".join(f"step {i}: ok" for i in range(400))  # longer than head + tail
    chef = AsyncContextChef(store=spy, tools="unified", offload={"threshold": 200})
    chef.set_history(tool_history(output))

    payload = await chef.compile()

    sent = payload["messages"][-1]["content"]
    uri = offload_uri("vfs", output)
    assert uri.startswith("context://vfs/") and uri in sent
    assert len(sent) < len(output) and sent.startswith("step 0: ok")
    address = chef.store.parse_uri(uri)
    assert address is not None and address.ns == "vfs"
    stored = await chef.store.namespace("vfs").get(address.path)
    assert stored is not None and stored.content == output
    assert chef.history[-1]["content"] == output  # the chef keeps the full result
    on_loop_only(spy, "write")


async def test_overflow_with_an_async_summarizer_archives_to_the_async_native_store(
    spy: SpyBackend,
) -> None:
    asked: list[int] = []
    threads: list[int] = []

    async def summarizer(messages: Any) -> str:
        threads.append(threading.get_ident())
        await asyncio.sleep(0)
        asked.append(len(messages))
        return "<summary>They asked six questions.</summary>"

    chef = AsyncContextChef(
        store=spy,
        tools="unified",
        tokenizer=PerMessage(),
        budget={"context_window": 100, "trigger_ratio": 1},
        overflow={"strategy": summarize(summarizer, preserve_recent_messages=1)},
    )
    history = [*dialogue(6), {"role": "user", "content": "what next?"}]
    chef.set_history(history)

    payload = await chef.compile()

    report = payload.meta.overflow
    assert report is not None and report.changed and len(asked) == 1
    assert threads == [threading.get_ident()]
    assert "They asked six questions." in json.dumps(payload)
    assert report.summary is not None and " archived in full at " in report.summary
    uri = report.summary.split(" archived in full at ")[1].split(";")[0]
    assert uri.startswith("context://archive/")

    address = chef.store.parse_uri(uri)
    assert address is not None
    stored = await chef.store.namespace("archive").get(address.path)
    assert stored is not None
    archived = json.loads(stored.content)["messages"]
    assert [m["content"] for m in archived] == [m["content"] for m in history[:12]]

    shown = await chef.handle_tool("context", {"command": "view", "path": uri})
    assert not shown.startswith("Error"), shown
    assert "question 0" in shown and "answer 5" in shown and '"version"' not in shown
    on_loop_only(spy, "write", "read")


# -- the context tool --------------------------------------------------------------------------


async def test_every_context_tool_command_runs_on_the_async_native_store(
    spy: SpyBackend,
) -> None:
    chef = AsyncContextChef(store=spy, tools="unified", memory={})
    notes = chef.store.namespace("notes")

    async def run(**arguments: Any) -> str:
        return await chef.handle_tool("context", arguments)

    plan = "context://notes/plan.md"
    assert await run(
        command="create", path=plan, file_text="1. read\n2. fix\n", description="the plan"
    ) == prompts.created(plan)
    stored = await notes.get("plan.md")
    assert stored is not None and stored.content == "1. read\n2. fix\n"
    assert stored.meta["description"] == "the plan"

    assert await run(command="view", path=plan) == "\n".join(
        [
            prompts.entry_header(plan, 1, 2, 2, whole=True),
            prompts.entry_description("the plan"),
            numbered(1, "1. read"),
            numbered(2, "2. fix"),
        ]
    )

    assert await run(
        command="str_replace", path=plan, old_str="2. fix", new_str="2. fix the parser"
    ) == prompts.edited(plan)
    assert (await notes.get("plan.md")).content == "1. read\n2. fix the parser\n"  # type: ignore[union-attr]

    assert await run(
        command="insert", path=plan, insert_line=1, insert_text="1b. write a test"
    ) == prompts.inserted(plan, 2, 1)
    assert (await notes.get("plan.md")).content == (  # type: ignore[union-attr]
        "1. read\n1b. write a test\n2. fix the parser\n"
    )

    await run(command="create", path="context://notes/log/today.md", file_text="parser broken")
    listing = await run(command="view", path="context://notes/")
    assert listing.splitlines()[0] == prompts.directory_header(
        "context://notes/", 1, 2, 2, whole=True
    )
    assert "context://notes/log/today.md" in listing and plan in listing
    assert "the plan" in listing

    found = await run(command="search", path="context://notes/", query="parser")
    assert found.splitlines()[0] == prompts.search_header(2, "parser", "context://notes/")
    assert "context://notes/log/today.md" in found and plan in found
    assert await run(command="search", path="context://notes/", query="zebra") == (
        prompts.no_matches("zebra", "context://notes/")
    )

    moved = "context://notes/done/plan.md"
    assert await run(command="rename", path=plan, new_path=moved) == prompts.renamed(plan, moved)
    assert await notes.get("plan.md") is None
    renamed = await notes.get("done/plan.md")
    assert renamed is not None and "1b. write a test" in renamed.content

    assert await run(command="delete", path=moved) == prompts.deleted(moved)
    assert await notes.get("done/plan.md") is None
    assert [entry.path for entry in await notes.list()] == ["log/today.md"]

    missing = await run(command="view", path=moved)
    assert missing.startswith("Error: ")
    on_loop_only(spy, "read", "create", "transact", "delete", "list", "search")


async def test_context_tool_memory_commands_go_through_async_memory(spy: SpyBackend) -> None:
    chef = AsyncContextChef(store=spy, tools="unified", memory={})

    async def run(**arguments: Any) -> str:
        return await chef.handle_tool("context", arguments)

    uri = "context://memory/goal"
    assert await run(command="create", path=uri, file_text="fix the parser") == prompts.created(uri)
    assert await run(command="str_replace", path=uri, old_str="parser", new_str="lexer") == (
        prompts.edited(uri)
    )
    entry = await chef.memory.get("goal")
    assert entry is not None and entry.value == "fix the lexer" and entry.update_count == 2
    assert "fix the lexer" in await run(command="view", path="context://memory/goal")
    assert uri in await run(command="view", path="context://memory/")
    assert uri in await run(command="search", path="context://memory/", query="lexer")
    moved = "context://memory/objective"
    assert await run(command="rename", path=uri, new_path=moved) == prompts.renamed(uri, moved)
    assert await run(command="delete", path=moved) == prompts.deleted(moved)
    assert await chef.memory.entries() == ()
    on_loop_only(spy, "read", "create", "transact", "delete", "read_all")


# -- async memory hooks ------------------------------------------------------------------------


async def test_async_memory_hooks_decide_and_hear_on_the_loop(spy: SpyBackend) -> None:
    asked: list[tuple[str, str | None, str | None]] = []
    changes: list[MemoryChange] = []
    threads: list[int] = []

    async def on_update(key: str, value: str | None, old: str | None) -> bool:
        threads.append(threading.get_ident())
        await asyncio.sleep(0)
        asked.append((key, value, old))
        return key != "secret"

    async def on_changed(change: MemoryChange) -> None:
        threads.append(threading.get_ident())
        await asyncio.sleep(0)
        changes.append(change)

    chef = AsyncContextChef(
        store=spy,
        tools="unified",
        memory={"on_memory_update": on_update, "on_memory_changed": on_changed},
    )

    refused = await chef.handle_tool(
        "context", {"command": "create", "path": "context://memory/secret", "file_text": "pw"}
    )
    assert refused == prompts.write_vetoed("context://memory/secret")
    assert await chef.memory.get("secret") is None
    assert not spy.inner.exists("memory", "secret")
    assert changes == []

    accepted = await chef.handle_tool(
        "context", {"command": "create", "path": "context://memory/goal", "file_text": "ship"}
    )
    assert accepted == prompts.created("context://memory/goal")
    entry = await chef.memory.get("goal")
    assert entry is not None and entry.value == "ship"

    assert asked == [("secret", "pw", None), ("goal", "ship", None)]
    assert changes == [MemoryChange("set", "goal", "ship", None, "model")]
    assert set(threads) == {threading.get_ident()}
    on_loop_only(spy, "read", "create")


async def test_snapshot_and_restore_round_trip_memory_on_the_async_native_store(
    spy: SpyBackend,
) -> None:
    chef = AsyncContextChef(store=spy, memory={})
    memory = chef.memory
    await memory.set("goal", "ship v2", description="the objective")
    await memory.set("user", "Ada")
    chef.set_history([{"role": "user", "content": "hello"}])
    before = await memory.entries()

    snap = await chef.snapshot("before")
    await memory.set("goal", "something else")
    await memory.delete("user")
    await memory.set("extra", "noise")
    chef.set_history([{"role": "user", "content": "changed"}])

    assert await chef.restore(snap) is chef
    after = await memory.entries()
    assert [(e.key, e.value, e.description) for e in after] == [
        (e.key, e.value, e.description) for e in before
    ]
    assert after == before
    assert chef.history == [{"role": "user", "content": "hello"}]
    assert snap.label == "before"
    on_loop_only(spy, "restore", "read_all")


# -- the sync chef and an async hook -----------------------------------------------------------


def test_the_sync_chef_cannot_await_an_async_veto_hook_so_the_write_is_refused(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def on_update(key: str, value: str | None, old: str | None) -> bool:
        return True  # would allow, but the synchronous chef cannot wait for the answer

    chef = ContextChef(tools="unified", memory={"on_memory_update": on_update})
    with (
        warnings.catch_warnings(record=True) as caught,
        caplog.at_level(logging.WARNING, logger="contextchef.memory"),
    ):
        warnings.simplefilter("always")
        result = chef.handle_tool(
            "context", {"command": "create", "path": "context://memory/goal", "file_text": "x"}
        )
        gc.collect()  # an un-awaited coroutine would warn when it is collected

    assert result == prompts.write_vetoed("context://memory/goal")
    assert chef.memory.get("goal") is None
    assert chef.store.namespace("memory").list() == []
    assert not [w for w in caught if "never awaited" in str(w.message)], caught
    assert any("vetoed" in record.getMessage() for record in caplog.records)
