"""The chef's own tools in the loop: tools modes, memory placement, dispatch, vocabulary."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from contextchef import AsyncContextChef, ContextChef, prompts, summarize
from contextchef.errors import ToolDefinitionError, UnknownToolError

OWNED = ("context", "new_context", "create_memory", "modify_memory", "recall_context")


def tool_names(payload: Any) -> list[str]:
    return [tool["function"]["name"] for tool in payload.get("tools", [])]


def test_legacy_mode_emits_the_memory_tools_only_with_memory() -> None:
    assert "tools" not in ContextChef(tools="legacy").compile()
    chef = ContextChef(tools="legacy", memory={})
    first, second = chef.compile(), chef.compile()
    assert tool_names(first) == ["create_memory", "modify_memory"]
    assert json.dumps(first["tools"]) == json.dumps(second["tools"])


def test_unified_mode_emits_context_and_new_context_only_with_a_handoff() -> None:
    assert tool_names(ContextChef(tools="unified", memory={}).compile()) == ["context"]
    chef = ContextChef(tools="unified", budget={}, overflow={"handoff": {"budget_tokens": 10}})
    assert tool_names(chef.compile()) == ["context", "new_context"]
    anthropic = chef.compile(target="anthropic")["tools"]
    assert [t["name"] for t in anthropic] == ["context", "new_context"]
    assert "input_schema" in anthropic[0]


@pytest.mark.parametrize("mode", ["legacy", "unified"])
@pytest.mark.parametrize(
    "name", ["context", "new_context", "create_memory", "modify_memory", "recall_context"]
)
def test_a_user_tool_may_not_take_any_library_name(mode: str, name: str) -> None:
    """Even one the vocabulary does not emit: `owns_tool` would route its calls to the library."""
    chef = ContextChef(tools=mode)
    with pytest.raises(ToolDefinitionError, match="reserved for contextchef's own tools"):
        chef.tools.register([{"name": name}])
    assert chef.tools.definitions == []


def payload_text(payload: Any) -> str:
    return json.dumps({k: v for k, v in payload.items() if k != "tools"}, ensure_ascii=False)


@pytest.mark.parametrize("mode", ["legacy", "unified"])
def test_no_sentence_mentions_a_tool_the_payload_does_not_carry(mode: str) -> None:
    call = {"id": "c1", "type": "function", "function": {"name": "run", "arguments": "{}"}}
    chef = ContextChef(
        tools=mode,
        memory={},
        budget={"context_window": 3000},
        overflow={
            "strategy": summarize(lambda m: "<summary>done so far</summary>"),
            "handoff": {"budget_tokens": 2000},
        },
    )
    chef.memory.set("style", "terse")
    history: list[Any] = []
    for turn in range(12):
        history += [
            {"role": "user", "content": f"step {turn} " + "words " * 150},
            {"role": "assistant", "content": None, "tool_calls": [{**call, "id": f"c{turn}"}]},
            {"role": "tool", "tool_call_id": f"c{turn}", "content": "line\n" * 1500},
        ]
        for target in ("openai", "anthropic"):
            payload = chef.set_history(history).compile(target=target)
            names = (
                tool_names(payload)
                if target == "openai"
                else [t["name"] for t in payload.get("tools", [])]
            )
            text = payload_text(payload)
            for tool in OWNED:
                if tool not in names:
                    # `context` is also an ordinary word ("context window"): look for the tool
                    mention = r"context tool" if tool == "context" else rf"\b{tool}\b"
                    assert not re.search(mention, text), (mode, target, tool)
    assert chef.store.namespace("vfs").list()
    assert chef.store.namespace("archive").list()


def test_memory_after_the_system_prompt_or_at_the_tail() -> None:
    top = (
        ContextChef(memory={})
        .set_system_prompt("S")
        .set_history([{"role": "user", "content": "q"}])
    )
    top.memory.set("lang", "Python <3.11>")
    messages = top.compile()["messages"]
    assert messages[0]["content"] == "S"
    assert messages[1]["role"] == "system"
    assert messages[1]["content"].startswith(prompts.CONTEXT_STORE_INSTRUCTION)
    assert "Python &lt;3.11&gt;" in messages[1]["content"]
    assert top.compile().meta.memory_keys == ("lang",)

    tail = ContextChef(memory={"placement": "before_history_tail"}).set_system_prompt("S")
    tail.set_history([{"role": "user", "content": "q"}]).memory.set("lang", "Python")
    messages = tail.compile()["messages"]
    assert messages[1] == {"content": prompts.CONTEXT_STORE_INSTRUCTION, "role": "system"}
    assert messages[2]["content"].startswith("q\n\n") and "Python" in messages[2]["content"]


def test_memory_ttl_counts_host_turns_and_meta_reports_expiry() -> None:
    chef = ContextChef(memory={})
    chef.memory.set("temp", "soon gone", ttl=2)
    history: list[dict[str, Any]] = []
    for turn in range(2):
        history.append({"role": "user", "content": f"question {turn}"})
        chef.set_history(history)
        assert chef.compile().meta.memory_keys == ("temp",)
        assert chef.compile().meta.memory_keys == ("temp",)  # a recompile is the same turn
        history.append({"role": "assistant", "content": "answer"})
    chef.set_history([*history, {"role": "user", "content": "question 2"}])
    third = chef.compile().meta
    assert third.memory_keys == () and third.expired_memory_keys == ("temp",)


def test_handle_tool_routes_owned_tools_and_refuses_others() -> None:
    chef = ContextChef(tools="unified", memory={})
    assert all(chef.owns_tool(name) for name in OWNED) and not chef.owns_tool("bash")
    created = chef.handle_tool(
        "context", '{"command": "create", "path": "notes/plan.md", "file_text": "1. test"}'
    )
    assert not created.startswith("Error")
    view = chef.handle_tool("context", {"command": "view", "path": "context://notes/plan.md"})
    assert "1. test" in view
    assert chef.handle_tool("context", "{bad").startswith("Error: ")
    assert chef.handle_tool("create_memory", {"key": "k", "value": "v"}) == 'Saved memory "k".'
    assert chef.memory.get("k") is not None
    with pytest.raises(UnknownToolError):
        chef.handle_tool("bash", "{}")


def test_new_context_forces_the_next_compile() -> None:
    calls: list[int] = []

    def model(messages: Any) -> str:
        calls.append(1)
        return "<summary>s</summary>"

    chef = ContextChef(budget={}, overflow={"strategy": summarize(model)}, tools="unified")
    chef.set_history(
        [
            {"role": "user", "content": "a"},
            {"role": "assistant", "content": "b"},
            {"role": "user", "content": "c"},
        ]
    )
    result = chef.handle_tool("new_context", "{}")
    assert result == prompts.NEW_CONTEXT_STARTED
    assert chef.compile().meta.overflow.changed and calls == [1]
    assert ContextChef().handle_tool("new_context", "{}").startswith("Error: ")


async def test_async_chef_handles_tools_off_the_event_loop() -> None:
    chef = AsyncContextChef(tools="unified")
    out = await chef.handle_tool(
        "context", {"command": "create", "path": "notes/a.md", "file_text": "x"}
    )
    assert not out.startswith("Error")
    assert await chef.store.namespace("notes").get("a.md") is not None
    with pytest.raises(UnknownToolError):
        await chef.handle_tool("bash", {})


def test_snapshots_carry_memory() -> None:
    chef = ContextChef(memory={})
    chef.memory.set("a", "1")
    snap = chef.snapshot()
    chef.memory.set("a", "2")
    chef.restore(snap)
    entry = chef.memory.get("a")
    assert entry is not None and entry.value == "1"
