"""`payload.meta.cache`: the reusable prefix measured against an independent oracle, memory that
keeps the prefix, automatic Anthropic breakpoints, and the provider options passed through."""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterator, Mapping
from typing import Any

import pytest
from pydantic import BaseModel

from contextchef import ContextChef, summarize
from contextchef.errors import ConfigError
from tests.adapters.sdk_anthropic import validate_request
from tests.adapters.sdk_gemini import validate_gemini
from tests.adapters.sdk_openai import validate_chat, validate_responses
from tests.cache_oracle import common_prefix, oracle_serialization

TARGETS = ("openai", "openai-responses", "anthropic", "gemini")
TOOLS = [
    {
        "name": "read_file",
        "description": "Read a file of the repository.",
        "parameters": {
            "type": "object",
            "properties": {"path": {"type": "string"}},
            "required": ["path"],
        },
    }
]


class Step(BaseModel):
    step: int
    goal: str


def fresh(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The history as a host reloads it from its database: fresh dicts every turn."""
    return json.loads(json.dumps(messages))  # type: ignore[no-any-return]


def agent_turns(turns: int) -> Iterator[list[dict[str, Any]]]:
    """A growing tool-calling conversation, one step per yield."""
    history: list[dict[str, Any]] = []
    for turn in range(turns):
        if turn % 3 == 0:
            history.append({"role": "user", "content": f"Task {turn}: fix module {turn}."})
        call = {
            "id": f"call_{turn}",
            "type": "function",
            "function": {"name": "read_file", "arguments": json.dumps({"path": f"m{turn}.py"})},
        }
        history.append({"role": "assistant", "content": f"Reading {turn}.", "tool_calls": [call]})
        history.append({"role": "tool", "tool_call_id": f"call_{turn}", "content": "x = 1\n" * 5})
        yield history
        history.append({"role": "assistant", "content": f"Step {turn} done. ✓"})


@pytest.mark.parametrize("target", TARGETS)
def test_prefix_bytes_is_the_common_prefix_of_the_serialized_payloads(target: str) -> None:
    chef = ContextChef(memory={}).set_system_prompt("You are a careful agent.")
    chef.tools.register(TOOLS)
    memory = chef.memory
    previous: bytes | None = None
    for turn, history in enumerate(agent_turns(14)):
        if turn % 4 == 1:
            memory.set(f"fact{turn}", f"value {turn} \u00e9")
        if turn == 9:
            memory.delete("fact1")
        chef.set_dynamic_state(Step(step=turn, goal="ship"))
        if turn == 11:
            chef.prompt.refresh_memory()
        source = fresh(history) if turn % 2 else history  # both kinds of host
        payload = chef.set_history(source).compile(target=target)
        text = oracle_serialization(payload)
        cache = payload.meta.cache
        assert cache.total_bytes == len(text)
        expected = common_prefix(previous, text) if previous is not None else 0
        assert cache.prefix_bytes == expected, turn
        assert cache.reuse_ratio == pytest.approx(expected / len(text))
        previous = text


def test_a_payload_compiled_twice_is_reused_whole_and_other_targets_do_not_interfere() -> None:
    chef = ContextChef().set_system_prompt("S").set_history([{"role": "user", "content": "hi"}])
    first = chef.compile(target="anthropic").meta.cache
    assert (first.prefix_bytes, first.reuse_ratio, first.changed) == (0, 0.0, None)
    chef.compile(target="openai")
    again = chef.compile(target="anthropic").meta.cache
    assert again.prefix_bytes == again.total_bytes > 0
    assert again.reuse_ratio == 1.0 and again.changed is None


# -- memory keeps the prefix -------------------------------------------------------------------

_ENTRY = re.compile(
    r'<entry key="([^"]*)"(?: removed="true"/>|>.*?<value>(.*?)</value>\s*</entry>)', re.S
)


def strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)


def visible_memory(payload: Mapping[str, Any]) -> dict[str, str]:
    """Memory as the model reads the payload: the block, then the changes listed at the tail."""
    text = "\n".join(strings(dict(payload)))
    seen: dict[str, str] = {}
    for block in re.findall(r"<memory>\n.*?\n</memory>", text, re.S):
        for key, value in _ENTRY.findall(block):
            seen[html.unescape(key)] = html.unescape(value)
    for block in re.findall(r"<memory_changes>\n.*?\n</memory_changes>", text, re.S):
        for match in _ENTRY.finditer(block):
            key = html.unescape(match.group(1))
            if match.group(2) is None:
                seen.pop(key, None)
            else:
                seen[key] = html.unescape(match.group(2))
    return seen


@pytest.mark.parametrize("target", TARGETS)
def test_the_model_sees_the_current_value_of_every_key_at_every_turn(target: str) -> None:
    chef = ContextChef(
        memory={},
        budget={"context_window": 2500, "trigger_ratio": 0.8},
        overflow={"strategy": summarize(lambda messages: "Earlier work summarized.")},
    ).set_system_prompt("You are a careful agent.")
    memory = chef.memory
    history: list[dict[str, Any]] = []
    overflows = 0
    for turn in range(40):
        history.append({"role": "user", "content": f"turn {turn} " + "words " * 30})
        if turn % 5 == 0:
            memory.set(f"goal{turn}", f"reach <{turn}> & more")
        if turn % 7 == 3:
            memory.set("short", f"lives 2 turns ({turn})", ttl=2)  # expires by turn count
        if turn % 6 == 4:
            memory.set(f"goal{turn - 4}", f"changed at {turn}")
        if turn == 21:
            memory.delete("goal20")
        if turn == 30:
            chef.prompt.refresh_memory()
        payload = chef.set_history(fresh(history)).compile(target=target)
        if payload.meta.overflow is not None and payload.meta.overflow.changed:
            overflows += 1
        history = chef.history
        live = {entry.key: entry.value for entry in memory.entries()}
        assert visible_memory(payload) == live, turn
        history.append({"role": "assistant", "content": f"ok {turn}"})
    assert overflows >= 1


def test_a_memory_write_leaves_the_system_part_and_the_history_prefix_alone() -> None:
    chef = ContextChef(memory={}).set_system_prompt("You are a careful agent.")
    memory = chef.memory
    memory.set("project", "shop")
    history: list[dict[str, Any]] = []
    for turn in range(30):
        history += [
            {"role": "user", "content": f"question {turn} " + "about the code " * 20},
            {"role": "assistant", "content": f"answer {turn} " + "with details " * 20},
        ]
        if turn % 2:
            memory.set(f"fact{turn}", f"learned at {turn}")
        payload = chef.set_history(fresh(history)).compile(target="anthropic")
        if turn >= 2:  # turn 1 has memory changes and the tail for the first time
            # the first change is the previous turn's user message, which held the tail (the
            # memory changes among it): tools, system and every message before it are reused
            assert payload.meta.cache.changed == ("messages", 2 * (turn - 1))
            assert "<memory_changes>" in json.dumps(payload["messages"][-2])


# -- automatic breakpoints ---------------------------------------------------------------------


def _marked_history(marks: int) -> list[dict[str, Any]]:
    history: list[dict[str, Any]] = []
    for turn in range(8):
        user: dict[str, Any] = {"role": "user", "content": f"q{turn}"}
        if turn < marks:
            user["_cache_breakpoint"] = True
        history += [user, {"role": "assistant", "content": f"a{turn}"}]
    history.append({"role": "user", "content": "last"})
    return history


@pytest.mark.parametrize("own", [0, 1, 2, 3, 4, 5])
def test_automatic_breakpoints_fill_what_the_hosts_own_leave(own: int) -> None:
    chef = ContextChef().set_system_prompt("S").set_dynamic_state(Step(step=1, goal="g"))
    payload = chef.set_history(_marked_history(own)).compile(target="anthropic")
    validate_request(payload)
    points = payload.meta.cache.breakpoints
    assert len(points) == min(4, own + 2)  # the system's end and the stable end are automatic
    text = json.dumps(payload)
    assert text.count('"cache_control"') == len(points)
    kept_own = min(own, 4)
    # the host's own marks are kept first: the newest of them when more than 4
    marked_users = [
        index
        for index, message in enumerate(payload["messages"])
        if message["role"] == "user"
        and "cache_control" in message["content"][0]
        and message["content"][0]["text"].startswith("q")
    ]
    assert len(marked_users) == kept_own
    assert (points[0].section == "system") == (own <= 2)  # autos go oldest first when short
    if own < 4:  # the stable end (the assistant message before the tail) is marked
        assert "cache_control" in payload["messages"][-2]["content"][-1]


def test_breakpoints_sit_at_the_end_of_the_stable_prefix() -> None:
    chef = ContextChef(memory={}).set_system_prompt("S")
    chef.set_dynamic_state(Step(step=1, goal="g"))
    history = [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": "a"},
        {"role": "user", "content": "now"},
    ]
    payload = chef.set_history(history).compile(target="anthropic")
    validate_request(payload)
    system_marked = [block for block in payload["system"] if "cache_control" in block]
    assert system_marked == [payload["system"][-1]]  # the memory/instruction block closes it
    # the assistant message before the tail holds the message breakpoint, not the tail
    assert "cache_control" in payload["messages"][1]["content"][-1]
    assert all("cache_control" not in block for block in payload["messages"][2]["content"])


@pytest.mark.parametrize(("mode", "count"), [("explicit", 2), ("off", 0)])
def test_explicit_and_off_modes(mode: str, count: int) -> None:
    chef = ContextChef(cache=mode).set_system_prompt("S")
    payload = chef.set_history(_marked_history(2)).compile(target="anthropic")
    validate_request(payload)
    assert len(payload.meta.cache.breakpoints) == count
    assert json.dumps(payload).count('"cache_control"') == count


def test_other_targets_get_no_breakpoints_and_no_marks() -> None:
    chef = ContextChef(memory={}).set_system_prompt("S").set_history(_marked_history(0))
    for target, validate in (("openai", validate_chat), ("openai-responses", validate_responses)):
        payload = chef.compile(target=target)
        validate(payload)
        assert "_auto_cache_breakpoint" not in json.dumps(payload)
        assert payload.meta.cache.breakpoints == ()


# -- provider options --------------------------------------------------------------------------


def test_prompt_cache_key_reaches_both_openai_targets() -> None:
    chef = ContextChef(prompt_cache_key="agent-7").set_system_prompt("S")
    chef.set_history([{"role": "user", "content": "hi"}]).tools.register(TOOLS)
    chat = chef.compile(target="openai")
    responses = chef.compile(target="openai-responses")
    assert chat["prompt_cache_key"] == responses["prompt_cache_key"] == "agent-7"
    assert list(chat) == sorted(chat)
    validate_chat(chat)
    validate_responses(responses)
    assert "prompt_cache_key" not in chef.compile(target="anthropic")


def test_cached_content_reaches_gemini_without_what_the_cache_holds() -> None:
    chef = ContextChef(cached_content="cachedContents/abc123").set_system_prompt("S")
    chef.set_history([{"role": "user", "content": "hi"}]).tools.register(TOOLS)
    payload = chef.compile(target="gemini")
    validate_gemini(payload)
    assert payload["config"] == {"cached_content": "cachedContents/abc123"}
    assert payload["contents"][-1]["parts"] == [{"text": "hi"}]
    plain = ContextChef().set_system_prompt("S").set_history([{"role": "user", "content": "hi"}])
    assert "cached_content" not in plain.compile(target="gemini")["config"]


@pytest.mark.parametrize(
    ("options", "fragment"),
    [
        ({"cache": "always"}, "cache must be"),
        ({"cache_audit": "yes"}, "cache_audit must be True or False"),
        ({"pipeline_checks": 1}, "pipeline_checks must be True or False"),
        ({"prompt_cache_key": ""}, "prompt_cache_key must be a non-empty string"),
        ({"cached_content": 5}, "cached_content must be a non-empty string"),
    ],
)
def test_bad_cache_options_are_refused_by_name(options: dict[str, Any], fragment: str) -> None:
    with pytest.raises(ConfigError, match=fragment):
        ContextChef(**options)


def test_refresh_memory_folds_the_changes_into_the_block_once() -> None:
    chef = ContextChef(memory={}).set_system_prompt("S")
    memory = chef.memory
    memory.set("a", "1")
    history = [{"role": "user", "content": "hi"}]
    chef.set_history(history).compile(target="anthropic")
    memory.set("b", "2")
    changed = chef.compile(target="anthropic")
    assert "<memory_changes>" in json.dumps(changed) and changed.meta.cache.changed[0] == "messages"
    chef.prompt.refresh_memory()
    folded = chef.compile(target="anthropic")
    assert "<memory_changes>" not in json.dumps(folded)
    assert folded.meta.cache.changed == ("system", 1)  # the block, rendered again
    assert visible_memory(folded) == {"a": "1", "b": "2"}
    again = chef.compile(target="anthropic").meta.cache
    assert again.prefix_bytes == again.total_bytes  # and then it holds


async def _async_figures() -> list[tuple[int, int]]:
    from contextchef import AsyncContextChef

    chef = AsyncContextChef(memory={}).set_system_prompt("S")
    figures = []
    for turn, history in enumerate(agent_turns(6)):
        await chef.memory.set(f"k{turn}", "v")
        payload = await chef.set_history(history).compile(target="anthropic")
        figures.append((payload.meta.cache.prefix_bytes, payload.meta.cache.total_bytes))
    return figures


def test_the_async_chef_reports_the_same_figures() -> None:
    import asyncio

    chef = ContextChef(memory={}).set_system_prompt("S")
    figures = []
    for turn, history in enumerate(agent_turns(6)):
        chef.memory.set(f"k{turn}", "v")
        payload = chef.set_history(history).compile(target="anthropic")
        figures.append((payload.meta.cache.prefix_bytes, payload.meta.cache.total_bytes))
    assert asyncio.run(_async_figures()) == figures
