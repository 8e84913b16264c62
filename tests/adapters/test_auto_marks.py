"""Automatic cache breakpoints reach the Anthropic adapter as positions (`AdapterInput.auto_marks`).

The adapter puts `cache_control` where a position says while it serialises the turns, exactly
where the `_auto_cache_breakpoint` key on the same message would put it; no message is copied to
carry a mark, so a chef's turn hands the adapter its history objects themselves and converts
only what is new, however the marks move.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from contextchef import ContextChef
from contextchef.adapters import AdapterInput, AnthropicAdapter, ConversionCache, builtin_registry
from contextchef.messages import Message
from contextchef.placement.breakpoints import AUTO_MARK
from tests.adapters.test_incremental_compile import messages, systems


def _unmarked(message: Message) -> Message:
    return {k: v for k, v in message.items() if k != AUTO_MARK}  # type: ignore[return-value]


def _keyed(message: Message) -> Message:
    return dict(sorted({**message, AUTO_MARK: True}.items()))  # type: ignore[return-value]


def _dumped(adapter: AnthropicAdapter, request: AdapterInput) -> str:
    try:
        return json.dumps(adapter.compile(request))
    except Exception as exc:  # the same error either way is what is compared
        return f"{type(exc).__name__}: {exc}"


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    system=systems,
    history=st.lists(messages(), max_size=8),
    data=st.data(),
    budget=st.one_of(st.none(), st.integers(0, 4)),
)
def test_a_position_marks_what_the_key_on_that_message_marks(
    system: list[Message], history: list[Message], data: st.DataObject, budget: int | None
) -> None:
    adapter = AnthropicAdapter()
    system = [_unmarked(m) for m in system]
    history = [_unmarked(m) for m in history]
    everything = len(system) + len(history)
    positions = sorted(data.draw(st.sets(st.integers(0, max(everything - 1, 0)), max_size=3)))
    positions = [at for at in positions if at < everything]
    keyed_system = [_keyed(m) if at in positions else m for at, m in enumerate(system)]
    head = len(system)
    keyed_history = [_keyed(m) if head + at in positions else m for at, m in enumerate(history)]
    by_key = AdapterInput(system=keyed_system, messages=keyed_history, max_breakpoints=budget)
    by_position = AdapterInput(
        system=system, messages=history, max_breakpoints=budget, auto_marks=tuple(positions)
    )
    expected = _dumped(adapter, by_key)
    assert _dumped(adapter, by_position) == expected
    # A cache that compiled the same messages with other marks before gives the same bytes:
    # positions belong to one request, nothing of them is kept.
    cache = ConversionCache()
    other = AdapterInput(system=system, messages=history, cache=cache, auto_marks=(0,))
    _dumped(adapter, other)
    again = AdapterInput(
        system=system,
        messages=history,
        cache=cache,
        max_breakpoints=budget,
        auto_marks=tuple(positions),
    )
    assert _dumped(adapter, again) == expected


class Recording(AnthropicAdapter):
    """The built-in adapter, keeping each request it compiles."""

    def __init__(self) -> None:
        super().__init__()
        self.requests: list[AdapterInput] = []

    def compile(self, request: AdapterInput) -> dict[str, Any]:
        self.requests.append(request)
        return super().compile(request)


def test_a_turn_hands_over_the_history_itself_and_converts_only_what_is_new(
    anthropic_conversions: list[Message],
) -> None:
    converted = anthropic_conversions
    registry = builtin_registry()
    adapter = Recording()
    registry.register("recording", adapter)
    chef = ContextChef(adapters=registry, default_target="recording").set_system_prompt("Be brief.")
    history: list[dict[str, Any]] = []
    for turn in range(12):
        history.append({"role": "user", "content": f"question {turn}"})
        chef.set_history(history)
        converted.clear()
        payload = chef.compile()
        request = adapter.requests[-1]
        held = chef._cell.state.history
        tail = len(held) - 1  # the last user message carries no tail here: nothing is stitched
        assert all(request.messages[at] is held[at] for at in range(tail + 1))
        assert not any(AUTO_MARK in message for message in request.messages)
        if turn:  # only the new message is converted; every older one, marked or not, is kept
            assert converted == [held[-1]]
        marked = [
            at
            for at, turn_wire in enumerate(payload["messages"])
            if any("cache_control" in block for block in turn_wire["content"])
        ]
        assert marked and marked[-1] == len(payload["messages"]) - 1  # the stable end
        assert "cache_control" in payload["system"][-1]
        history.append({"role": "assistant", "content": f"answer {turn}"})
        chef.set_history(history).compile()
