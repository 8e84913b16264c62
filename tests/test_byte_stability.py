"""Byte stability: the same logical state compiles to the same bytes, and the cached prefix
survives the next turn."""

from __future__ import annotations

import json
from typing import Any

import pytest

from contextchef import ContextChef
from contextchef.adapters import adapter_registry
from tests.golden.scenarios import SCENARIOS, STATE, SYSTEM, TOOLS, TaskState, build, tool_turn

TARGETS = adapter_registry.names()
SEQUENCE_KEY = {
    "openai": "messages",
    "anthropic": "messages",
    "openai-responses": "input",
    "gemini": "contents",
}


def reversed_keys(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: reversed_keys(value[key]) for key in reversed(list(value))}
    if isinstance(value, list):
        return [reversed_keys(item) for item in value]
    return value


class ReversingChef(ContextChef):
    """Hands every setter its argument with all dict keys in reverse order."""

    def set_history(self, messages: Any) -> Any:
        return super().set_history(reversed_keys(list(messages)))

    def set_system_prompt(self, messages: Any) -> Any:
        return super().set_system_prompt(
            messages if isinstance(messages, str) else reversed_keys(list(messages))
        )

    def set_dynamic_state(self, model_or_schema: Any, data: Any = None, **kw: Any) -> Any:
        return super().set_dynamic_state(model_or_schema, reversed_keys(data), **kw)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_key_order_of_the_input_never_changes_the_bytes(target: str, scenario: str) -> None:
    plain = build(scenario, ContextChef).compile(target=target)
    permuted = build(scenario, ReversingChef).compile(target=target)
    assert json.dumps(permuted, ensure_ascii=False) == json.dumps(plain, ensure_ascii=False)


def _has_state(element: Any) -> bool:
    return "<dynamic_state>" in json.dumps(element, ensure_ascii=False)


@pytest.mark.parametrize("target", TARGETS)
def test_the_next_turn_leaves_everything_before_the_tail_unchanged(target: str) -> None:
    history = tool_turn()
    chef = ContextChef().set_system_prompt(SYSTEM)
    chef.tools.register(TOOLS)
    chef.set_dynamic_state(TaskState, STATE)
    before = chef.set_history(history).compile(target=target)
    history = [*history, {"role": "assistant", "content": "Found it."}]
    history.append({"role": "user", "content": "Patch it then."})
    chef.set_dynamic_state(TaskState, {**STATE, "step": 3})
    after = chef.set_history(history).compile(target=target)

    for key in before:
        if key != SEQUENCE_KEY[target]:
            assert json.dumps(after[key]) == json.dumps(before[key]), key
    old, new = before[SEQUENCE_KEY[target]], after[SEQUENCE_KEY[target]]
    tail = next(i for i, element in enumerate(old) if _has_state(element))
    assert tail > 0
    assert json.dumps(new[:tail]) == json.dumps(old[:tail])
    assert _has_state(new[-1]) and not _has_state(new[:-1])


@pytest.mark.parametrize("target", TARGETS)
def test_compiling_twice_gives_the_same_bytes(target: str) -> None:
    chef = build("parallel_tool_calls", ContextChef)
    first = json.dumps(chef.compile(target=target))
    assert json.dumps(chef.compile(target=target)) == first
