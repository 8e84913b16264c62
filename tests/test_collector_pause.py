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
