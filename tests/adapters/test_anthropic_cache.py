"""The `anthropic` target and the prompt cache: breakpoints, their budget, conversion reuse."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from contextchef.adapters import AdapterInput, AnthropicAdapter, ConversionCache
from contextchef.errors import ConfigError
from contextchef.messages import Message
from tests.adapters.sdk_anthropic import compile_anthropic, tool_call

EPHEMERAL = {"type": "ephemeral"}


def _cached(payload: dict[str, Any]) -> list[tuple[str, int, int]]:
    """(where, message, block) of every block carrying cache_control."""
    found = [
        ("system", 0, i) for i, b in enumerate(payload.get("system", [])) if "cache_control" in b
    ]
    for m, message in enumerate(payload["messages"]):
        for b, block in enumerate(message["content"]):
            if "cache_control" in block:
                found.append(("messages", m, b))
    return found


def test_breakpoints_on_system_user_tool_use_and_tool_result_blocks() -> None:
    payload = compile_anthropic(
        [
            {
                "role": "user",
                "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}],
                "_cache_breakpoint": True,
            },
            {
                "role": "assistant",
                "content": "x",
                "tool_calls": [tool_call("c1")],
                "_cache_breakpoint": True,
            },
            {"role": "tool", "tool_call_id": "c1", "content": "r", "_cache_breakpoint": True},
            {"role": "user", "content": "next"},
        ],
        system=[{"role": "system", "content": "sys", "_cache_breakpoint": True}],
    )
    assert payload["system"] == [{"cache_control": EPHEMERAL, "text": "sys", "type": "text"}]
    assert payload["messages"][0]["content"] == [
        {"text": "a", "type": "text"},
        {"cache_control": EPHEMERAL, "text": "b", "type": "text"},
    ]
    assert payload["messages"][1]["content"][1] == {
        "cache_control": EPHEMERAL,
        "id": "c1",
        "input": {},
        "name": "f",
        "type": "tool_use",
    }
    assert payload["messages"][2]["content"] == [
        {"cache_control": EPHEMERAL, "content": "r", "tool_use_id": "c1", "type": "tool_result"},
        {"text": "next", "type": "text"},
    ]


def test_breakpoint_skips_thinking_blocks() -> None:
    payload = compile_anthropic(
        [
            {"role": "user", "content": "q"},
            {
                "role": "assistant",
                "content": "",
                "thinking": {"thinking": "t", "signature": "s"},
                "_cache_breakpoint": True,
            },
            {"role": "user", "content": "more"},
        ]
    )
    assert _cached(payload) == []


def test_more_than_four_breakpoints_drop_the_oldest_with_one_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    history: list[Message] = []
    for turn in range(4):
        history.append({"role": "user", "content": f"u{turn}", "_cache_breakpoint": True})
        history.append({"role": "assistant", "content": f"a{turn}"})
    system: list[Message] = [{"role": "system", "content": "sys", "_cache_breakpoint": True}]
    with caplog.at_level(logging.WARNING, logger="contextchef.adapters.anthropic"):
        payload = compile_anthropic(history, system=system)
    assert _cached(payload) == [("messages", m, 0) for m in (0, 2, 4, 6)]
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1
    assert "dropped the 1 oldest" in warnings[0].getMessage()


def test_budget_can_be_lowered_and_is_checked() -> None:
    history: list[Message] = [
        {"role": "user", "content": "a", "_cache_breakpoint": True},
        {"role": "assistant", "content": "b", "_cache_breakpoint": True},
    ]
    payload = compile_anthropic(history, adapter=AnthropicAdapter(max_cache_breakpoints=1))
    assert _cached(payload) == [("messages", 1, 0)]
    assert (
        _cached(compile_anthropic(history, adapter=AnthropicAdapter(max_cache_breakpoints=0))) == []
    )
    with pytest.raises(ConfigError, match="between 0 and 4"):
        AnthropicAdapter(max_cache_breakpoints=5)


def test_breakpoints_never_touch_cached_conversions() -> None:
    adapter = AnthropicAdapter()
    cache = ConversionCache()
    history: list[Message] = [
        {"role": "user", "content": "a", "_cache_breakpoint": True},
        {"role": "assistant", "content": "b"},
    ]
    marked = adapter.compile(AdapterInput([], history, cache=cache))
    assert _cached(marked) == [("messages", 0, 0)]
    clean = adapter.compile(
        AdapterInput([], [{"role": "user", "content": "a"}, history[1]], cache=cache)
    )
    assert _cached(clean) == []
    again = adapter.compile(AdapterInput([], history, cache=cache))
    assert again == marked


def test_second_compile_converts_only_the_new_message(
    anthropic_conversions: list[Message],
) -> None:
    converted = anthropic_conversions
    adapter = AnthropicAdapter()
    cache = ConversionCache()
    system: list[Message] = [{"role": "system", "content": "sys"}]
    history: list[Message] = [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": None, "tool_calls": [tool_call("c1")]},
        {"role": "tool", "tool_call_id": "c1", "content": "r"},
    ]
    adapter.compile(AdapterInput(system, history, cache=cache))
    assert len(converted) == 4
    converted.clear()
    cache.sweep()
    grown = [*history, {"role": "user", "content": "next"}]
    second = adapter.compile(AdapterInput(system, grown, cache=cache))
    assert converted == [grown[-1]]
    converted.clear()
    assert adapter.compile(AdapterInput(system, grown, cache=cache)) == second
    assert converted == []
    assert second == AnthropicAdapter().compile(AdapterInput(system, grown))
