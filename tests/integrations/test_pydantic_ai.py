"""The pydantic-ai integration, driven by the real `Agent` on pydantic-ai's own `FunctionModel`.

A long scripted run through a small window: every request the model receives fits, every tool
return still answers a call in the same window, what left the window is in the archive (read
back through the store as the very pydantic-ai messages) or in `vfs/`, and the memory block and
tail reach the model without piling up in the history.
"""

from __future__ import annotations

import importlib
import json
import logging
import sys
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic_ai import Agent
from pydantic_ai import messages as pm
from pydantic_ai.capabilities import ProcessHistory
from pydantic_ai.models.function import AgentInfo, FunctionModel

from contextchef import AsyncContextChef, ContextChef, MissingDependencyError, summarize
from contextchef.integrations.pydantic_ai import (
    MARKER,
    ContextChefCapability,
    from_ir,
    history_processor,
    to_ir,
)
from contextchef.store.archive import archived_messages

WINDOW = 3_000
TA = pm.ModelMessagesTypeAdapter
LS_TOOL = {
    "name": "ls",
    "description": "List a directory.",
    "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
}


def dumped(messages: list[pm.ModelMessage]) -> Any:
    return json.loads(TA.dump_json(messages))


def listing(path: str) -> str:
    """A tool output; every fifth one is long enough to be offloaded."""
    lines = 700 if path.endswith("5") else 5
    return "\n".join(f"{path}/file_{i}.py" for i in range(lines))


class Script:
    """The fake model: two tool calls, then an answer; it records every window it receives."""

    def __init__(self) -> None:
        self.calls = 0
        self.windows: list[list[pm.ModelMessage]] = []
        self.tools: list[list[str]] = []

    def __call__(self, messages: list[pm.ModelMessage], info: AgentInfo) -> pm.ModelResponse:
        self.calls += 1
        self.windows.append(list(messages))
        self.tools.append([tool.name for tool in info.function_tools])
        if self.calls % 3:
            call = pm.ToolCallPart("ls", {"path": f"dir{self.calls}"}, f"call_{self.calls}")
            return pm.ModelResponse(parts=[pm.TextPart("Looking."), call])
        return pm.ModelResponse(parts=[pm.TextPart(f"Answer {self.calls}: " + "ok " * 40)])


def make_chef(**options: Any) -> ContextChef:
    chef = ContextChef(
        budget={"context_window": WINDOW, "trigger_ratio": 0.8},
        overflow={"strategy": summarize(lambda messages: "Earlier: listed directories.")},
        memory={},
        **options,
    )
    chef.tools.register([LS_TOOL])
    return chef


def make_agent(chef: ContextChef | AsyncContextChef, script: Script) -> Agent[None, str]:
    agent = Agent(
        FunctionModel(script),
        system_prompt="You list directories.",
        capabilities=[ContextChefCapability(chef)],
    )

    @agent.tool_plain
    def ls(path: str) -> str:
        return listing(path)

    return agent


def window_tokens(window: list[pm.ModelMessage]) -> int:
    """The messages' tokens, counted independently of the processor: a plain chef (no store
    instruction, no tools) compiles them and reports what they hold."""
    visible = [{k: v for k, v in m.items() if k != "pydantic_ai"} for m in to_ir(window)]
    system = [m for m in visible if m["role"] == "system"]
    rest = [m for m in visible if m["role"] != "system"]
    counter = ContextChef(tools="legacy").set_system_prompt(system).set_history(rest)
    tokens = counter.compile(target="openai").meta.tokens
    return tokens.system + tokens.history


def assert_pairs(window: list[pm.ModelMessage]) -> None:
    calls: set[str] = set()
    answered: set[str] = set()
    for message in window:
        for part in message.parts:
            if isinstance(part, pm.ToolCallPart):
                calls.add(part.tool_call_id)
            elif isinstance(part, pm.ToolReturnPart):
                assert part.tool_call_id in calls, f"orphan return {part.tool_call_id}"
                answered.add(part.tool_call_id)
    assert calls == answered


def archived(chef: ContextChef) -> list[pm.ModelMessage]:
    out: list[pm.ModelMessage] = []
    for entry in chef.store.namespace("archive").entries().values():
        messages = archived_messages(entry.content)
        assert messages is not None
        out.extend(from_ir(messages))
    return out


def parts_of(messages: list[pm.ModelMessage]) -> list[Any]:
    return [part for message in messages for part in message.parts]


async def test_a_long_run_fits_keeps_pairs_and_loses_nothing() -> None:
    chef = make_chef()
    chef.memory.set("style", "terse")
    script = Script()
    agent = make_agent(chef, script)
    history: list[pm.ModelMessage] | None = None
    prompts = []
    for turn in range(25):
        prompt = f"Turn {turn}: list the next directories. " + "Please be thorough. " * 8
        prompts.append(prompt)
        history = (await agent.run(prompt, message_history=history)).all_messages()
        history = TA.validate_json(TA.dump_json(history))  # the host reloads it from its DB

    assert script.calls == 75
    for window, tools in zip(script.windows, script.tools, strict=True):
        assert window_tokens(window) <= WINDOW
        assert_pairs(window[:-1] if isinstance(window[-1], pm.ModelResponse) else window)
        assert tools == ["ls", "context"]
        marked = [p for p in parts_of(window) if getattr(p, "metadata", None)]
        assert [p.metadata[MARKER] for p in marked] == ["context"]  # fresh, never piled up
        assert '<entry key="style">' in marked[0].content  # the memory block reaches the model
    assert chef.store.namespace("archive").list(), "overflow never ran"

    # Nothing was lost: every prompt and tool return is in the final window or the archive.
    kept = parts_of(history or []) + parts_of(archived(chef))
    texts = {p.content for p in kept if isinstance(p, pm.UserPromptPart)}
    assert set(prompts) <= texts
    returns = {p.tool_call_id: p.content for p in kept if isinstance(p, pm.ToolReturnPart)}
    vfs = chef.store.namespace("vfs")
    for number in range(1, 76):
        if number % 3:
            content = returns[f"call_{number}"]
            full = listing(f"dir{number}")
            if content != full:  # offloaded: the preview names the entry holding it whole
                uri = next(w for w in content.split() if w.startswith("context://vfs/"))
                assert vfs.get(uri.removeprefix("context://vfs/")).content == full


async def test_the_archive_reads_back_as_the_evicted_pydantic_ai_messages() -> None:
    chef = make_chef()
    script = Script()
    agent = make_agent(chef, script)
    history: list[pm.ModelMessage] | None = None
    every: dict[str, Any] = {}
    for turn in range(12):
        result = await agent.run(f"Turn {turn}. " + "Details. " * 30, message_history=history)
        history = result.all_messages()
    for part in parts_of([message for window in script.windows for message in window]):
        every[json.dumps(dumped([pm.ModelRequest(parts=[part])])[0]["parts"][0])] = 1
    back = archived(chef)
    assert back
    for part in parts_of(back):
        if isinstance(part, pm.SystemPromptPart) or "<conversation_summary>" in str(part):
            continue  # the chef's own summaries, archived again when a later overflow ran
        key = json.dumps(dumped([pm.ModelRequest(parts=[part])])[0]["parts"][0])
        if isinstance(part, pm.UserPromptPart | pm.ToolReturnPart):
            assert key in every  # timestamps, names and ids exactly as pydantic-ai made them


def test_messages_the_chef_kept_come_back_as_the_same_objects() -> None:
    chef = ContextChef()
    processor = history_processor(chef)
    first = pm.ModelRequest(parts=[pm.SystemPromptPart("sys"), pm.UserPromptPart("hi")])
    call = pm.ModelResponse(parts=[pm.ToolCallPart("ls", {"path": "."}, "c1")])
    ret = pm.ModelRequest(parts=[pm.ToolReturnPart("ls", "a.txt", "c1")])
    window = processor([first, call, ret])
    assert window[1] is call and window[2] is ret
    assert window[0].parts[0] is first.parts[0] and window[0].parts[-1] is first.parts[1]
    assert window[0].parts[1].metadata == {MARKER: "context"}  # the store instruction
    again = processor(window)
    assert dumped(again) == dumped(window)  # byte-stable, the old instruction replaced


def test_the_tail_is_sent_for_one_request_and_never_piles_up() -> None:
    from pydantic import BaseModel

    class Task(BaseModel):
        step: int

    chef = ContextChef().set_dynamic_state(Task, {"step": 3})
    processor = history_processor(chef)
    messages: list[pm.ModelMessage] = [pm.ModelRequest(parts=[pm.UserPromptPart("go")])]
    for step in range(3):
        window = processor(messages)
        tails = [p for p in parts_of(window) if getattr(p, "metadata", None) == {MARKER: "tail"}]
        assert len(tails) == 1 and "<step>3</step>" in tails[0].content
        assert tails[0].scope == "request" and window[-1].parts[-1] is tails[0]
        messages = [
            *window,
            pm.ModelResponse(parts=[pm.TextPart(f"step {step}")]),
            pm.ModelRequest(parts=[pm.UserPromptPart("next")]),
        ]


def test_unknown_part_types_pass_through_unchanged_with_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    native = pm.NativeToolCallPart("web_search", {"q": "x"}, "n1", provider_name="anthropic")
    file = pm.FilePart(pm.BinaryContent(b"\x89PNG", media_type="image/png"))
    response = pm.ModelResponse(parts=[native, file, pm.TextPart("found it")])
    compaction = pm.CompactionPart(content="summary")
    request = pm.ModelRequest(parts=[pm.UserPromptPart("search"), compaction])
    with caplog.at_level(logging.WARNING, "contextchef.integrations.pydantic_ai"):
        window = history_processor(ContextChef(tools="legacy"))([request, response])
    assert window == [request, response]
    assert window[0] is request and window[1] is response
    assert "passed through unchanged" in caplog.text
    assert "builtin-tool-call" in caplog.text or "native" in caplog.text.lower()
    back = from_ir(to_ir([request, response]))
    assert dumped(back) == dumped([request, response])


_ids = st.text("abcdef0123456789", min_size=1, max_size=8)
_text = st.text(min_size=0, max_size=30)


@st.composite
def conversations(draw: st.DrawFn) -> list[pm.ModelMessage]:
    out: list[pm.ModelMessage] = []
    for turn in range(draw(st.integers(1, 4))):
        content: list[pm.UserContent] = [draw(_text)]
        if draw(st.booleans()):
            content.append(pm.ImageUrl(url=f"https://example.com/{turn}.png"))
        if draw(st.booleans()):
            content.append(pm.BinaryContent(draw(st.binary(max_size=16)), media_type="image/png"))
        out.append(pm.ModelRequest(parts=[pm.UserPromptPart(content)]))
        ids = draw(st.lists(_ids, max_size=3, unique=True))
        parts: list[pm.ModelResponsePart] = []
        if draw(st.booleans()):
            signature = draw(st.none() | _ids)
            provider = "anthropic" if signature else None
            parts.append(pm.ThinkingPart(draw(_text), signature=signature, provider_name=provider))
        parts.append(pm.TextPart(draw(_text)))
        parts.extend(pm.ToolCallPart("tool", {"n": i}, f"{turn}_{c}") for i, c in enumerate(ids))
        out.append(pm.ModelResponse(parts=parts))
        if ids:
            returns = [pm.ToolReturnPart("tool", draw(_text), f"{turn}_{c}") for c in ids]
            out.append(pm.ModelRequest(parts=returns))
    return out


@settings(max_examples=40, deadline=None)
@given(conversations())
def test_to_ir_and_back_is_lossless(messages: list[pm.ModelMessage]) -> None:
    ir = to_ir(messages)
    assert dumped(from_ir(ir)) == dumped(messages)
    assert dumped(from_ir(json.loads(json.dumps(ir)))) == dumped(messages)  # via JSON, too
    calls = [c["id"] for m in ir for c in m.get("tool_calls", ())]
    results = [m["tool_call_id"] for m in ir if m["role"] == "tool"]
    assert calls == results  # call ids and returns carried into the IR, in order
    responses = [m for m in messages if isinstance(m, pm.ModelResponse)]
    assistants = [m for m in ir if m["role"] == "assistant"]
    for response, assistant in zip(responses, assistants, strict=True):
        thoughts = [p for p in response.parts if isinstance(p, pm.ThinkingPart)]
        if thoughts:  # thinking text and signature carried into the IR
            assert assistant["thinking"]["thinking"] == thoughts[0].content
            assert assistant["thinking"].get("signature") == thoughts[0].signature


def test_an_offloaded_tool_return_keeps_its_call_id_and_name() -> None:
    chef = ContextChef(offload={"threshold": 5000})
    call = pm.ModelResponse(parts=[pm.ToolCallPart("cat", {"path": "log"}, "c9")])
    ret = pm.ModelRequest(parts=[pm.ToolReturnPart("cat", "a log line\n" * 2000, "c9")])
    window = history_processor(chef)([pm.ModelRequest(parts=[pm.UserPromptPart("x")]), call, ret])
    (part,) = window[-1].parts
    assert isinstance(part, pm.ToolReturnPart)
    assert (part.tool_name, part.tool_call_id, part.timestamp) == (
        "cat",
        "c9",
        ret.parts[0].timestamp,
    )
    assert "context://vfs/" in part.content and len(part.content) < 6000


async def test_an_async_chef_drives_the_agent() -> None:
    chef = AsyncContextChef(
        budget={"context_window": WINDOW, "trigger_ratio": 0.8},
        overflow={"strategy": summarize(None)},
    )
    script = Script()
    agent = make_agent(chef, script)
    history = None
    for turn in range(8):
        result = await agent.run(f"Turn {turn}. " + "words " * 60, message_history=history)
        history = result.all_messages()
    assert all(window_tokens(w) <= WINDOW for w in script.windows)
    assert await chef.store.namespace("archive").list()


async def test_the_context_tool_reads_the_archive_back_for_the_model() -> None:
    chef = make_chef()
    script = Script()
    agent = make_agent(chef, script)
    history = None
    for turn in range(10):
        history = await agent.run(f"Turn {turn}. " + "x " * 100, message_history=history)
        history = history.all_messages()
    (path, *_) = [e.path for e in chef.store.namespace("archive").list()]
    seen: list[str] = []

    def reader(messages: list[pm.ModelMessage], info: AgentInfo) -> pm.ModelResponse:
        last = messages[-1].parts[-1]
        if isinstance(last, pm.ToolReturnPart):
            seen.append(str(last.content))
            return pm.ModelResponse(parts=[pm.TextPart("read")])
        arguments = {"command": "view", "path": f"archive/{path}"}
        return pm.ModelResponse(parts=[pm.ToolCallPart("context", arguments, "r1")])

    agent2 = Agent(FunctionModel(reader), capabilities=[ContextChefCapability(chef)])
    await agent2.run("What happened before?", message_history=history)
    assert seen and "Archived conversation" in seen[0]


async def test_processor_plugs_into_process_history() -> None:
    chef = ContextChef(tools="legacy")
    agent = Agent(
        FunctionModel(lambda messages, info: pm.ModelResponse(parts=[pm.TextPart("hi")])),
        capabilities=[ProcessHistory(history_processor(chef))],
    )
    assert (await agent.run("hello")).output == "hi"
    assert chef.history[0]["content"] == "hello"


def test_a_missing_extra_names_it(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [n for n in sys.modules if n.startswith("contextchef.integrations.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "pydantic_ai", None)
    with pytest.raises(MissingDependencyError) as caught:
        importlib.import_module("contextchef.integrations.pydantic_ai")
    assert caught.value.extra == "pydantic-ai"
    assert "pip install 'contextchef[pydantic-ai]'" in str(caught.value)
    with pytest.raises(ImportError):
        from contextchef.integrations.pydantic_ai import history_processor as reimported

        reimported(ContextChef())


def _shape(window: list[pm.ModelMessage]) -> list[Any]:
    """What a window holds, without the timestamps of the parts the processor adds."""
    return [
        (type(m).__name__, [(p.part_kind, str(getattr(p, "content", ""))) for p in m.parts])
        for m in window
    ]


@settings(max_examples=20, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 40)), min_size=1, max_size=6))
def test_an_incremental_processor_gives_what_a_fresh_one_gives(
    edits: list[tuple[int, int]],
) -> None:
    """Whatever the host does between calls (append, drop the end, reload from JSON, splice),
    the long-lived processor's window is the one a brand-new processor computes."""
    chef = ContextChef(offload={"threshold": 300}, memory={})
    chef.memory.set("k", "v")
    long_lived = history_processor(chef)
    messages: list[pm.ModelMessage] = [pm.ModelRequest(parts=[pm.SystemPromptPart("sys")])]
    for n, (edit, size) in enumerate(edits):
        call = pm.ToolCallPart("ls", {"n": n}, f"c{n}")
        step = [
            pm.ModelRequest(parts=[pm.UserPromptPart(f"ask {n}")]),
            pm.ModelResponse(parts=[call]),
            pm.ModelRequest(parts=[pm.ToolReturnPart("ls", "line\n" * size * 4, f"c{n}")]),
        ]
        if edit == 1 and len(messages) > 3:
            messages = messages[:-3]  # the host dropped the last step
        elif edit == 2:
            messages = TA.validate_json(TA.dump_json(messages))  # reloaded: all new objects
        elif edit == 3 and len(messages) > 2:
            messages[1] = pm.ModelRequest(parts=[pm.UserPromptPart(f"edited {n}")])
        window = long_lived([*messages, *step])
        fresh_chef = ContextChef(offload={"threshold": 300}, memory={}, store=chef.store)
        assert _shape(window) == _shape(history_processor(fresh_chef)([*messages, *step]))
        messages = window


async def test_an_async_chef_as_a_plain_process_history() -> None:
    chef = AsyncContextChef(tools="legacy")
    seen: list[list[pm.ModelMessage]] = []

    def model(messages: list[pm.ModelMessage], info: AgentInfo) -> pm.ModelResponse:
        seen.append(messages)
        return pm.ModelResponse(parts=[pm.TextPart("hi")])

    processor = history_processor(chef)
    agent = Agent(FunctionModel(model), capabilities=[ProcessHistory(processor)])
    result = await agent.run("hello")
    result = await agent.run("again", message_history=result.all_messages())
    assert result.output == "hi" and len(seen) == 2
    assert [m["content"] for m in chef.history] == ["hello", "hi", "again"]
    assert processor.last_payload is not None


def test_anything_but_a_chef_is_refused() -> None:
    from contextchef import ConfigError

    with pytest.raises(ConfigError, match="not dict"):
        history_processor({})  # type: ignore[arg-type]
