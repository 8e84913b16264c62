"""The collector pause around a conversion: only our own code, never a user's, and a collector
the user turned off stays off."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from typing import Any

import pytest

from contextchef import AdapterRegistry, ContextChef, get_adapter


@pytest.fixture
def collector() -> Iterator[None]:
    was = gc.isenabled()
    yield
    if was:
        gc.enable()
    else:
        gc.disable()


class Recording:
    """A user adapter that records whether the collector ran while it converted."""

    def __init__(self) -> None:
        self.enabled: list[bool] = []

    def compile(self, request: Any) -> dict[str, Any]:
        self.enabled.append(gc.isenabled())
        return {"messages": list(request.messages)}


def test_a_user_adapter_runs_with_the_collector_as_it_is(collector: None) -> None:
    gc.enable()
    adapter = Recording()
    registry = AdapterRegistry()
    registry.register("mine", adapter)
    ContextChef(adapters=registry).set_history([{"role": "user", "content": "hi"}]).compile(
        target="mine"
    )
    assert adapter.enabled == [True]


def test_a_builtin_conversion_pauses_and_restores_the_collector(collector: None) -> None:
    gc.enable()
    seen: list[bool] = []
    original = get_adapter("openai").compile

    def spy(request: Any) -> Any:
        seen.append(gc.isenabled())
        return original(request)

    chef = ContextChef().set_history([{"role": "user", "content": "hi"}])
    adapter = get_adapter("openai")
    adapter.compile = spy  # type: ignore[method-assign]
    try:
        chef.compile()
    finally:
        del adapter.compile
    assert seen == [False]
    assert gc.isenabled()


def test_a_collector_the_user_disabled_stays_disabled(collector: None) -> None:
    gc.disable()
    ContextChef().set_history([{"role": "user", "content": "hi"}]).compile(target="anthropic")
    assert not gc.isenabled()


class SwitchingOff:
    """An event handler that turns the collector off, as a user might between two steps."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, event: Any) -> None:
        self.calls += 1
        gc.disable()


def test_a_collector_turned_off_by_a_handler_mid_compile_stays_off(collector: None) -> None:
    gc.enable()
    handler = SwitchingOff()
    chef = ContextChef().set_history([{"role": "user", "content": "hi"}])
    chef.on("compile:start", handler)
    chef.compile(target="gemini")
    assert handler.calls == 1
    assert not gc.isenabled()


def test_handlers_and_hooks_run_with_the_collector_on(collector: None) -> None:
    """Effects run between the paused steps: every user callback sees the collector as is."""
    gc.enable()
    seen: list[bool] = []
    chef = ContextChef(
        vfs={"threshold": 10},
        transform_tool_result=lambda text, info: seen.append(gc.isenabled()) or text,
    )
    chef.on("compile:start", lambda event: seen.append(gc.isenabled()))
    chef.on("compile:done", lambda event: seen.append(gc.isenabled()))
    history = [
        {"role": "user", "content": "go"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"function": {"arguments": "{}", "name": "ls"}, "id": "a", "type": "function"}
            ],
        },
        {"role": "tool", "tool_call_id": "a", "content": "a long listing " * 5},
    ]
    chef.set_history(history).compile(target="anthropic")
    assert seen == [True, True, True]
    assert gc.isenabled()


def test_a_user_tokenizer_runs_with_the_collector_as_it_is(collector: None) -> None:
    gc.enable()
    seen: list[bool] = []

    class Counting:
        def count_text(self, text: str) -> int:
            seen.append(gc.isenabled())
            return len(text)

        def count_message(self, message: Any) -> int:
            seen.append(gc.isenabled())
            return len(str(message.get("content")))

    chef = ContextChef(tokenizer=Counting(), janitor={"context_window": 100_000})
    chef.set_history([{"role": "user", "content": "hi"}]).compile(target="openai")
    assert seen  # the budget counted during the compile
    assert all(seen)


def test_set_history_restores_the_collector(collector: None) -> None:
    gc.enable()
    ContextChef().set_history([{"role": "user", "content": "hi"}] * 3)
    assert gc.isenabled()
    gc.disable()
    ContextChef().set_history([{"role": "user", "content": "hi"}] * 3)
    assert not gc.isenabled()
