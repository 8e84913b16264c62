"""`ContextChefSession` against the Agents SDK's own `SQLiteSession`, and under the real `Runner`.

The same random operation sequences run on both sessions and must give the same results; the
`Runner` drives a multi-turn run with tool calls on a fake `Model` (the SDK's own interface,
answering from a script), with the session on SQLite, then compacted through a chef.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import logging
import random
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from agents import Agent, FunctionTool, RunConfig, Runner, function_tool
from agents.items import ModelResponse
from agents.memory import SessionSettings, SQLiteSession
from agents.models.interface import Model
from agents.usage import Usage
from hypothesis import given, settings
from hypothesis import strategies as st
from openai.types.responses import (
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
)

from contextchef import (
    ContextChef,
    InMemoryBackend,
    MissingDependencyError,
    SQLiteBackend,
    summarize,
)
from contextchef.errors import ClosedError
from contextchef.integrations.openai_agents import ContextChefSession, context_tool
from contextchef.store import Store

RUN = RunConfig(tracing_disabled=True)

_text = st.text(max_size=12)
_items = st.one_of(
    st.fixed_dictionaries({"role": st.sampled_from(["user", "assistant"]), "content": _text}),
    st.fixed_dictionaries(
        {
            "type": st.just("function_call"),
            "call_id": st.text("abc123", min_size=1, max_size=4),
            "name": st.just("ls"),
            "arguments": st.just('{"path": "."}'),
        }
    ),
    st.fixed_dictionaries(
        {"type": st.just("function_call_output"), "call_id": _text, "output": _text}
    ),
    st.fixed_dictionaries({"type": st.just("reasoning"), "id": _text, "summary": st.just([])}),
)
_ops = st.lists(
    st.one_of(
        st.tuples(st.just("add"), st.lists(_items, max_size=4)),
        st.tuples(st.just("get"), st.none() | st.integers(-2, 6)),
        st.tuples(st.just("pop"), st.none()),
        st.tuples(st.just("clear"), st.none()),
    ),
    max_size=25,
)


async def _apply(session: Any, op: str, argument: Any) -> Any:
    if op == "add":
        return await session.add_items(json.loads(json.dumps(argument)))
    if op == "get":
        return await session.get_items(argument)
    if op == "pop":
        return await session.pop_item()
    return await session.clear_session()


@settings(max_examples=40, deadline=None)
@given(_ops, st.sampled_from(["memory", "sqlite"]))
def test_the_same_operations_give_what_sqlite_session_gives(
    tmp_path_factory: pytest.TempPathFactory, ops: list[tuple[str, Any]], backend: str
) -> None:
    async def run() -> None:
        store: Any = InMemoryBackend()
        if backend == "sqlite":
            store = SQLiteBackend(tmp_path_factory.mktemp("s") / "db.sqlite")
        ours = ContextChefSession("user/42 é", store)
        theirs = SQLiteSession("user/42 é")
        try:
            for op, argument in ops:
                assert await _apply(ours, op, argument) == await _apply(theirs, op, argument)
            assert await ours.get_items() == await theirs.get_items()
        finally:
            theirs.close()
            if backend == "sqlite":
                store.close()

    asyncio.run(run())


async def test_session_settings_limit_applies_like_the_sdk() -> None:
    ours = ContextChefSession("s", InMemoryBackend(), session_settings=SessionSettings(limit=2))
    theirs = SQLiteSession("s", session_settings=SessionSettings(limit=2))
    items = [{"role": "user", "content": str(i)} for i in range(5)]
    for session in (ours, theirs):
        await session.add_items(items)
    assert await ours.get_items() == await theirs.get_items() == items[-2:]
    assert await ours.get_items(4) == await theirs.get_items(4)
    theirs.close()


async def test_two_session_objects_on_one_store_agree_with_sqlite_session() -> None:
    # Each object remembers where the session ended; the other one's appends, pops and clears
    # (several hundred entries, across the blocks they are read by) must never fool it.
    backend = InMemoryBackend()
    ours = [ContextChefSession("s", backend), ContextChefSession("s", backend)]
    theirs = SQLiteSession("s")
    rng = random.Random(25)
    for step in range(700):
        session = rng.choice(ours)
        op = rng.choices(["add", "get", "pop", "clear"], weights=[60, 25, 14, 0.3])[0]
        argument: Any = None
        if op == "add":
            argument = [
                {"role": "user", "content": f"{step}.{i}"} for i in range(rng.randint(1, 3))
            ]
        elif op == "get":
            argument = rng.choice([None, 1, 20, 150, 400])
        assert await _apply(session, op, argument) == await _apply(theirs, op, argument), step
    assert await ours[0].get_items() == await ours[1].get_items() == await theirs.get_items()
    theirs.close()


async def test_concurrent_appends_are_atomic_and_all_kept(tmp_path: Path) -> None:
    backend = SQLiteBackend(tmp_path / "db.sqlite")
    sessions = [ContextChefSession("shared", backend) for _ in range(3)]
    batches = [
        [{"role": "user", "content": f"{writer}-{n}-{i}"} for i in range(3)]
        for writer in range(3)
        for n in range(6)
    ]
    await asyncio.gather(*(sessions[i % 3].add_items(b) for i, b in enumerate(batches)))
    stored = await ContextChefSession("shared", backend).get_items()
    assert len(stored) == 54
    runs = [stored[i : i + 3] for i in range(0, 54, 3)]  # every call's items stay together
    assert sorted(map(json.dumps, runs)) == sorted(map(json.dumps, batches))
    popped = await asyncio.gather(*(sessions[i % 3].pop_item() for i in range(10)))
    assert len({json.dumps(p) for p in popped}) == 10  # no item popped twice
    assert await sessions[0].get_items() == stored[:44]
    backend.close()


async def test_close_closes_what_the_session_opened_and_only_that(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    closed: list[Path] = []
    real_close = SQLiteBackend.close

    def spy(backend: SQLiteBackend) -> None:
        closed.append(backend.path)
        real_close(backend)

    monkeypatch.setattr(SQLiteBackend, "close", spy)
    item = {"role": "user", "content": "hi"}
    given = SQLiteBackend(tmp_path / "given.db")
    with ContextChefSession("a", given) as first:
        await first.add_items([item])
    async with ContextChefSession("b", tmp_path / "own.db") as second:
        await second.add_items([item])
    assert closed == [tmp_path / "own.db"]  # the given backend is its owner's to close
    assert await ContextChefSession("a", given).get_items() == [item]
    for session in (first, second):
        session.close()  # idempotent
        for call in (session.get_items(), session.add_items([]), session.pop_item()):
            with pytest.raises(ClosedError, match="ContextChefSession is closed"):
                await call
        with pytest.raises(RuntimeError):  # what SQLiteSession raises
            await session.clear_session()
    with ContextChefSession("b", tmp_path / "own.db") as reopened:
        assert await reopened.get_items() == [item]
    given.close()


async def test_session_settings_are_normalised_as_the_sdk_does() -> None:
    assert ContextChefSession("s", "memory").session_settings == SessionSettings()
    session = ContextChefSession("s", "memory", session_settings={"limit": 1})
    assert session.session_settings == SessionSettings(limit=1)
    await session.add_items([{"role": "user", "content": "1"}, {"role": "user", "content": "2"}])
    assert await session.get_items() == [{"role": "user", "content": "2"}]
    with pytest.raises(TypeError, match="Unknown session settings: limitt"):
        ContextChefSession("s", "memory", session_settings={"limitt": 1})


async def test_an_item_that_is_not_json_is_refused_and_nothing_is_written() -> None:
    session = ContextChefSession("s", InMemoryBackend())
    with pytest.raises(TypeError):
        await session.add_items([{"role": "user", "content": object()}])
    assert await session.get_items() == []
    await session.add_items([{"role": "user", "content": "after"}])
    assert await session.get_items() == [{"role": "user", "content": "after"}]


async def test_a_damaged_entry_is_skipped_and_popped_away(
    caplog: pytest.LogCaptureFixture,
) -> None:
    backend = InMemoryBackend()
    session = ContextChefSession("s", backend)
    first, second = {"role": "user", "content": "1"}, {"role": "user", "content": "2"}
    await session.add_items([first])
    await session.add_items([second])
    view = Store(backend).namespace("sessions")
    newest = view.list()[-1].path
    view.put(newest, "not valid json {{{")
    with caplog.at_level(logging.WARNING, "contextchef.integrations.openai_agents"):
        assert await session.get_items() == [first]
        assert await session.get_items(1) == [first]
    assert "not a JSON list" in caplog.text
    assert await session.pop_item() == first  # the damaged entry is dropped on the way
    assert await session.pop_item() is None
    assert view.list() == []


async def test_items_without_a_type_pass_through_with_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    session = ContextChefSession("s", InMemoryBackend())
    odd = {"payload": {"x": 1}}
    with caplog.at_level(logging.WARNING, "contextchef.integrations.openai_agents"):
        await session.add_items([{"role": "user", "content": "hi"}, odd])
    assert "neither 'type' nor 'role'" in caplog.text
    assert await session.get_items() == [{"role": "user", "content": "hi"}, odd]


def _message(text: str) -> ResponseOutputMessage:
    content = [ResponseOutputText(text=text, type="output_text", annotations=[])]
    return ResponseOutputMessage(
        id="m", content=content, role="assistant", status="completed", type="message"
    )


class ScriptedModel(Model):
    """A `Model` answering from a script: a tool call, then text, for every user turn."""

    def __init__(self) -> None:
        self.calls = 0
        self.inputs: list[list[Any]] = []

    async def get_response(
        self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any
    ) -> ModelResponse:
        self.calls += 1
        self.inputs.append(list(input) if isinstance(input, list) else [input])
        last = self.inputs[-1][-1]
        if isinstance(last, dict) and last.get("type") == "function_call_output":
            output: list[Any] = [_message(f"Done ({self.calls}). " + "fine " * 30)]
        else:
            arguments = json.dumps({"path": f"dir{self.calls}"})
            call = ResponseFunctionToolCall(
                arguments=arguments, call_id=f"call_{self.calls}", name="ls", type="function_call"
            )
            output = [call]
        return ModelResponse(output=output, usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        raise NotImplementedError


@function_tool
def ls(path: str) -> str:
    """List a directory."""
    return "\n".join(f"{path}/file_{i}.py" for i in range(30))


async def test_a_multi_turn_run_keeps_its_history_in_the_store(tmp_path: Path) -> None:
    backend = SQLiteBackend(tmp_path / "db.sqlite")
    model = ScriptedModel()
    agent = Agent(name="lister", instructions="List things.", model=model, tools=[ls])
    session = ContextChefSession("conversation-1", backend)
    for turn in range(4):
        result = await Runner.run(agent, f"turn {turn}", session=session, run_config=RUN)
        assert result.final_output.startswith("Done")
    # a fresh session object on the same database sees the whole conversation
    items = await ContextChefSession("conversation-1", backend).get_items()
    kinds = [item.get("type") or item.get("role") for item in items]
    assert kinds == ["user", "function_call", "function_call_output", "message"] * 4
    assert model.inputs[-1][: len(items) - 4] == items[:-4]  # the model got the history back
    backend.close()


async def test_get_items_compacts_through_the_chef_and_the_model_reads_back() -> None:
    chef = ContextChef(
        budget={"context_window": 1_500, "trigger_ratio": 0.8},
        overflow={"strategy": summarize(lambda messages: "Earlier: listed dirs.")},
        memory={},
    )
    chef.memory.set("owner", "ada")
    model = ScriptedModel()
    agent = Agent(name="lister", model=model, tools=[ls, context_tool(chef)])
    session = ContextChefSession("c", chef=chef)
    for turn in range(12):
        await Runner.run(agent, f"turn {turn} " + "please " * 20, session=session, run_config=RUN)
    stored = await ContextChefSession("c", chef.store.backend).get_items()
    assert len(stored) == 48  # the store keeps everything
    window = await session.get_items()
    assert len(window) < len(stored)
    assert window[0]["role"] == "system" and '<entry key="owner">' in window[0]["content"]
    assert any("Earlier: listed dirs." in str(item.get("content")) for item in window)
    calls = {i["call_id"] for i in window if i.get("type") == "function_call"}
    outputs = {i["call_id"] for i in window if i.get("type") == "function_call_output"}
    assert calls == outputs  # every output still follows its call
    assert model.inputs[-1][0]["role"] == "system"  # what the model got was the window
    assert all(item in stored for item in window[1:] if "summary" not in str(item))
    archive = chef.store.namespace("archive").list()
    assert archive
    text = chef.handle_tool("context", {"command": "view", "path": f"archive/{archive[0].path}"})
    assert "turn " in text


async def test_the_context_tool_is_an_sdk_function_tool() -> None:
    chef = ContextChef()
    chef.store.namespace("notes").put("plan.md", "1. list")
    tool = context_tool(chef)
    assert isinstance(tool, FunctionTool) and tool.name == "context"
    result = await tool.on_invoke_tool(
        None, json.dumps({"command": "view", "path": "notes/plan.md"})
    )  # type: ignore[arg-type]
    assert "1. list" in result


def test_a_missing_extra_names_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(sys.modules, "contextchef.integrations.openai_agents", raising=False)
    monkeypatch.setitem(sys.modules, "agents", None)
    with pytest.raises(MissingDependencyError) as caught:
        importlib.import_module("contextchef.integrations.openai_agents")
    assert caught.value.extra == "openai-agents"
