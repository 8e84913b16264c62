"""A merged turn (Anthropic) or content (Gemini) is the same object compile after compile while
the messages it merges are: what memoises by identity (token counts, the cache ledger) then
skips it, so an agent turn costs what its new messages cost."""

from __future__ import annotations

from typing import Any

import pytest

from contextchef.adapters import AdapterInput, AnthropicAdapter, ConversionCache, GeminiAdapter
from contextchef.messages import Message

ADAPTERS = {"anthropic": (AnthropicAdapter, "messages"), "gemini": (GeminiAdapter, "contents")}


def _turn(n: int) -> list[Message]:
    calls = [
        {"function": {"arguments": "{}", "name": "ls"}, "id": f"c{n}{k}", "type": "function"}
        for k in (1, 2)
    ]
    return [
        {"content": f"question {n}", "role": "user"},
        {"content": None, "role": "assistant", "tool_calls": calls},  # type: ignore[list-item]
        {"content": f"one {n}", "role": "tool", "tool_call_id": f"c{n}1"},
        {"content": f"two {n}", "role": "tool", "tool_call_id": f"c{n}2"},
        {"content": f"answer {n}", "role": "assistant"},
    ]


class _Chef:
    """One adapter and its cache, compiling history after history as a chef does."""

    def __init__(self, target: str) -> None:
        adapter_type, self.key = ADAPTERS[target]
        self.adapter, self.cache = adapter_type(), ConversionCache()

    def compile(self, history: list[Message]) -> list[Any]:
        payload = self.adapter.compile(AdapterInput((), history, cache=self.cache))
        self.cache.sweep()
        wires: list[Any] = payload[self.key]
        return wires


RESULTS = (2, 6)
"""Where each turn's two tool results, merged, are sent (after the question, the calls and, for
the second turn, the first turn's answer and the second question)."""


def _sources(wire: Any) -> list[str]:
    items = wire.get("content", wire.get("parts"))
    return [item.get("type", next(iter(item))) for item in items]


@pytest.mark.parametrize("target", sorted(ADAPTERS))
def test_a_merged_turn_is_the_same_object_after_a_turn_is_appended(target: str) -> None:
    history = [*_turn(1), *_turn(2)[:4]]  # ends with the second turn's two results
    chef = _Chef(target)
    before = chef.compile(history)
    assert all(len(_sources(before[at])) == 2 for at in RESULTS)
    assert {_sources(before[at])[0] for at in RESULTS} in ({"tool_result"}, {"function_response"})
    after = chef.compile([*history, _turn(2)[4], _turn(3)[0]])  # the answer, a new question
    assert all(after[at] is before[at] for at in RESULTS)


@pytest.mark.parametrize("target", sorted(ADAPTERS))
def test_a_merged_turn_with_a_changed_member_is_a_new_object(target: str) -> None:
    history = [*_turn(1)]
    chef = _Chef(target)
    before = chef.compile(history)
    changed = [*history[:3], {**history[3], "content": "two, again"}, history[4]]
    after = chef.compile(changed)
    assert after[2] is not before[2] and after[2] != before[2]
