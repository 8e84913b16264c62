"""The facade: setters validate before changing anything, snapshots are deep, events isolate."""

from __future__ import annotations

import json
import logging
import threading
import time
from typing import Any

import pytest
from pydantic import BaseModel

from contextchef import AsyncContextChef, ContextChef
from contextchef.adapters import AdapterInput, AdapterRegistry, OpenAIChatAdapter
from contextchef.errors import (
    CompileAbortedError,
    ConfigError,
    DynamicStateError,
    MessageError,
    ToolDefinitionError,
    UnknownTargetError,
)


class Task(BaseModel):
    goal: str


TOOL = {
    "name": "read_file",
    "description": "Read a file",
    "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
}


def dumps(payload: Any) -> str:
    return json.dumps(payload, ensure_ascii=False)


def make_chef(**config: Any) -> ContextChef:
    chef = (
        ContextChef(**config)
        .set_system_prompt("You are careful.")
        .set_history([{"role": "user", "content": "hi"}])
        .set_dynamic_state(Task, {"goal": "ship"})
    )
    chef.tools.register([TOOL])
    return chef


def test_default_target_is_openai_and_can_be_configured() -> None:
    assert make_chef().compile().meta.target == "openai"
    registry = AdapterRegistry()
    registry.register("echo", OpenAIChatAdapter())
    chef = make_chef(default_target="echo", adapters=registry)
    assert chef.compile().meta.target == "echo"


def test_unknown_target_lists_the_registered_ones() -> None:
    with pytest.raises(UnknownTargetError, match="'nope'; registered targets: openai"):
        make_chef().compile(target="nope")


def test_unknown_config_keys_are_refused() -> None:
    with pytest.raises(TypeError, match="janitr"):
        ContextChef(janitr={})  # type: ignore[call-arg]


@pytest.mark.parametrize(
    ("call", "error"),
    [
        (lambda c: c.set_history([{"role": "user", "content": "ok"}, {"role": "x"}]), MessageError),
        (lambda c: c.set_history({"role": "user", "content": "x"}), ConfigError),
        (lambda c: c.set_system_prompt([{"role": "user", "content": "x"}]), ConfigError),
        (lambda c: c.set_dynamic_state(Task, {"goal": 3.5j}), DynamicStateError),
        (lambda c: c.tools.register([{"name": "bad name"}]), ToolDefinitionError),
        (lambda c: c.tools.register([TOOL, TOOL]), ToolDefinitionError),
        (lambda c: c.with_guardrails(enforce_xml={"output_tag": "<x>"}), ConfigError),
    ],
)
def test_bad_input_raises_and_leaves_the_state_as_it_was(call: Any, error: type) -> None:
    chef = make_chef()
    before = dumps(chef.compile())
    with pytest.raises(error):
        call(chef)
    assert dumps(chef.compile()) == before


def test_tools_are_emitted_in_the_providers_own_schema() -> None:
    payload = make_chef().compile()
    assert [tool["function"]["name"] for tool in payload["tools"]] == ["read_file", "context"]
    assert payload["tools"][:1] == [
        {
            "function": {
                "description": "Read a file",
                "name": "read_file",
                "parameters": {"properties": {"path": {"type": "string"}}, "type": "object"},
            },
            "type": "function",
        }
    ]


def test_setter_order_never_matters() -> None:
    a = make_chef().with_guardrails(enforce_xml={"output_tag": "final"}, prefill="<final>")
    b = (
        ContextChef()
        .with_guardrails(enforce_xml={"output_tag": "final"}, prefill="<final>")
        .set_dynamic_state(Task, {"goal": "ship"})
        .set_history([{"role": "user", "content": "hi"}])
        .set_system_prompt("You are careful.")
    )
    b.tools.register([TOOL])
    assert dumps(a.compile()) == dumps(b.compile())


def test_with_guardrails_none_clears_them() -> None:
    plain = dumps(make_chef().compile())
    chef = make_chef().with_guardrails(enforce_xml={"output_tag": "final"})
    assert dumps(chef.compile()) != plain
    assert dumps(chef.with_guardrails(None).compile()) == plain
    chef.with_guardrails({"prefill": "x"})
    assert dumps(chef.with_guardrails().compile()) == plain


def test_user_mutation_after_set_history_does_not_reach_the_chef() -> None:
    history = [{"role": "user", "content": "hi"}]
    chef = ContextChef().set_history(history)
    history[0]["content"] = "changed"
    assert chef.compile()["messages"][-1]["content"] == "hi"
    chef.set_history(history)
    assert chef.compile()["messages"][-1]["content"] == "changed"


def test_snapshot_restore_returns_to_identical_bytes_and_snapshots_are_deep() -> None:
    chef = make_chef()
    before = dumps(chef.compile())
    snap = chef.snapshot("before")
    chef.set_history([{"role": "user", "content": "other"}]).set_dynamic_state(Task, {"goal": "z"})
    assert dumps(chef.compile()) != before
    snap.state.history[0]["content"] = "tampered"  # type: ignore[index]
    chef.restore(make_chef().snapshot())
    assert dumps(chef.compile()) == before
    assert snap.label == "before"
    history = chef.history
    history[0]["content"] = "mutated copy"
    assert dumps(chef.compile()) == before


def test_restore_refuses_something_that_is_not_a_snapshot() -> None:
    with pytest.raises(ConfigError):
        make_chef().restore({"history": []})  # type: ignore[arg-type]


def test_events_fire_in_order_and_a_raising_handler_never_fails_compile(
    caplog: pytest.LogCaptureFixture,
) -> None:
    seen: list[str] = []
    chef = make_chef()

    def boom(event: Any) -> None:
        raise RuntimeError("handler bug")

    chef.on("compile:start", lambda e: seen.append(f"start:{e.target}"))
    chef.on("compile:start", boom)
    chef.on("compile:done", lambda e: seen.append(f"done:{len(e.payload['messages'])}"))
    with caplog.at_level(logging.WARNING, logger="contextchef.compiler.pipeline"):
        payload = chef.compile()
    assert seen == ["start:openai", "done:3"]  # system prompt, store instruction, "hi"
    assert "handler bug" in caplog.text
    assert payload["messages"]


def test_off_and_unsubscribe_remove_handlers_and_duplicates_register_once() -> None:
    seen: list[int] = []
    chef = make_chef()

    def handler(event: Any) -> None:
        seen.append(1)

    unsubscribe = chef.on("compile:done", handler)
    chef.on("compile:done", handler)
    chef.compile()
    assert seen == [1]
    assert unsubscribe() is True
    chef.compile()
    assert seen == [1]
    with pytest.raises(ConfigError, match="unknown event"):
        chef.on("compile:middle", handler)


def test_a_coroutine_handler_on_the_sync_chef_is_reported_not_awaited(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def handler(event: Any) -> None:
        return None

    chef = make_chef()
    chef.on("compile:done", handler)
    with caplog.at_level(logging.WARNING):
        chef.compile()
    assert "AsyncContextChef" in caplog.text


def test_a_set_signal_aborts_after_compile_start_and_done_never_fires() -> None:
    seen: list[str] = []
    chef = make_chef()
    chef.on("compile:start", lambda e: seen.append("start"))
    chef.on("compile:done", lambda e: seen.append("done"))
    signal = threading.Event()
    signal.set()
    with pytest.raises(CompileAbortedError):
        chef.compile(signal=signal)
    assert seen == ["start"]


class SlowAdapter(OpenAIChatAdapter):
    def __init__(self) -> None:
        super().__init__()
        self.active = 0
        self.overlaps = 0

    def compile(self, request: AdapterInput) -> dict[str, Any]:
        self.active += 1
        if self.active > 1:
            self.overlaps += 1
        time.sleep(0.01)
        self.active -= 1
        return super().compile(request)


def test_concurrent_compiles_on_one_chef_are_serialised() -> None:
    registry = AdapterRegistry()
    adapter = SlowAdapter()
    registry.register("slow", adapter)
    chef = make_chef(adapters=registry, default_target="slow")
    threads = [threading.Thread(target=chef.compile) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert adapter.overlaps == 0


def test_a_compile_from_inside_a_handler_does_not_deadlock() -> None:
    chef = make_chef()
    inner: list[Any] = []
    calls: list[int] = []

    def handler(event: Any) -> None:
        calls.append(1)
        if len(calls) == 1:
            inner.append(chef.compile())

    chef.on("compile:done", handler)
    chef.compile()
    assert len(calls) == 2
    assert inner and inner[0]["messages"]


async def test_async_chef_awaits_coroutine_handlers_and_reenters() -> None:
    chef = (
        AsyncContextChef()
        .set_system_prompt("You are careful.")
        .set_history([{"role": "user", "content": "hi"}])
    )
    seen: list[str] = []
    inner: list[Any] = []

    async def handler(event: Any) -> None:
        seen.append(event.target)
        if len(seen) == 1:
            inner.append(await chef.compile())

    chef.on("compile:done", handler)
    payload = await chef.compile()
    assert seen == ["openai", "openai"]
    assert dumps(inner[0]) == dumps(payload)


def test_the_chef_has_one_store_an_in_memory_one_by_default(tmp_path: Any) -> None:
    from contextchef import FileSystemBackend, InMemoryBackend, Store

    chef = ContextChef()
    assert isinstance(chef.store.backend, InMemoryBackend)
    assert chef.store is chef.store
    backend = FileSystemBackend(tmp_path / ".context")
    assert ContextChef(store=backend).store.backend is backend
    store = Store(InMemoryBackend())
    assert ContextChef(store=store).store is store
    with pytest.raises(ConfigError, match="'memory' or 'sqlite'"):
        ContextChef(store="mysql://nope")  # postgresql:// opens PostgresBackend
    with pytest.raises(ConfigError, match="not a storage backend"):
        ContextChef(store=object())  # type: ignore[arg-type]


def test_store_sqlite_opens_the_machine_database_under_contextchef_home() -> None:
    import os
    from pathlib import Path

    chef = ContextChef(store="sqlite")
    chef.store.namespace("notes").put("plan.md", "1. test")
    assert (Path(os.environ["CONTEXTCHEF_HOME"]) / "context.db").is_file()
    again = ContextChef(store="sqlite").store.namespace("notes").get("plan.md")
    assert again is not None and again.content == "1. test"


def test_compiles_whose_figures_nobody_reads_keep_no_memo_of_them() -> None:
    from pydantic import BaseModel

    class Step(BaseModel):
        step: int

    chef = ContextChef()
    history: list[dict[str, Any]] = []
    for turn in range(50):
        history += [
            {"role": "user", "content": f"question {turn}"},
            {"role": "assistant", "content": f"answer {turn}"},
        ]
        chef.set_dynamic_state(Step(step=turn))  # a tail every compile
        chef.set_history(history).compile()
    memo = chef._runtime.counter._memo
    assert len(memo._current) + len(memo._previous) == 0  # nothing counted, nothing held
