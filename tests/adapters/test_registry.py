"""Targets are per chef: the default registry is read-only, and a chef's own registry (the
`adapters=` option) reaches that chef and no other, nor the default."""

from __future__ import annotations

from typing import Any

import pytest

from contextchef import ContextChef, UnknownTargetError
from contextchef.adapters import (
    AdapterRegistry,
    AnthropicAdapter,
    OpenAIChatAdapter,
    ReadOnlyAdapterRegistry,
    adapter_registry,
    builtin_registry,
    get_adapter,
)
from contextchef.adapters.base import AdapterInput
from contextchef.errors import ConfigError

BUILT_IN = ["openai", "openai-responses", "anthropic", "gemini"]
HISTORY = [{"role": "user", "content": "hi"}]


class Echo:
    """A user adapter: the messages, as they came."""

    name = "echo"

    def compile(self, request: AdapterInput) -> dict[str, Any]:
        return {"echoed": [message["content"] for message in request.messages]}


def test_the_default_registry_cannot_be_changed() -> None:
    assert isinstance(adapter_registry, ReadOnlyAdapterRegistry)
    with pytest.raises(ConfigError, match=r"read-only.*with_adapters"):
        adapter_registry.register("echo", Echo())
    with pytest.raises(ConfigError, match="read-only"):
        adapter_registry.register("openai", Echo())  # nor can a built-in be replaced
    with pytest.raises(ConfigError, match="read-only"):
        adapter_registry.unregister("openai")
    assert adapter_registry.names() == BUILT_IN
    assert isinstance(get_adapter("openai"), OpenAIChatAdapter)


def test_with_adapters_gives_a_registry_of_your_own() -> None:
    mine = adapter_registry.with_adapters({"echo": Echo(), "anthropic": AnthropicAdapter()})
    assert type(mine) is AdapterRegistry
    assert mine.names() == [*BUILT_IN, "echo"]
    assert mine.get("openai") is adapter_registry.get("openai")
    assert mine.get("anthropic") is not adapter_registry.get("anthropic")  # replaced in mine
    mine.register("other", Echo())  # yours to change
    assert mine.unregister("gemini")
    assert adapter_registry.names() == BUILT_IN
    assert adapter_registry.get("anthropic") is get_adapter("anthropic")


def test_copies_are_independent() -> None:
    first = builtin_registry()
    second = first.copy()
    first.register("echo", Echo())
    assert not second.has("echo") and first.has("echo")
    assert not adapter_registry.has("echo")
    assert builtin_registry().get("openai") is not adapter_registry.get("openai")  # fresh


def test_a_chefs_own_target_reaches_that_chef_only() -> None:
    mine = adapter_registry.with_adapters({"echo": Echo()})
    chef = ContextChef(adapters=mine).set_history(HISTORY)
    other = ContextChef().set_history(HISTORY)
    third = ContextChef(adapters=adapter_registry.copy()).set_history(HISTORY)
    assert chef.compile(target="echo") == {"echoed": ["hi"]}
    assert chef.compile(target="openai")["messages"] == other.compile(target="openai")["messages"]
    for chef_without in (other, third):
        with pytest.raises(UnknownTargetError, match="'echo'"):
            chef_without.compile(target="echo")
    with pytest.raises(UnknownTargetError):
        get_adapter("echo")

    mine.register("later", Echo())  # registering afterwards: still this chef's registry only
    assert chef.compile(target="later") == {"echoed": ["hi"]}
    with pytest.raises(UnknownTargetError):
        other.compile(target="later")
    assert adapter_registry.names() == BUILT_IN


def test_an_unknown_target_says_how_to_add_one() -> None:
    with pytest.raises(UnknownTargetError) as caught:
        ContextChef().set_history(HISTORY).compile(target="mine")
    message = str(caught.value)
    assert "registered targets: openai, openai-responses, anthropic, gemini" in message
    assert "ContextChef(adapters=adapter_registry.with_adapters({'mine': adapter}))" in message


def test_registries_refuse_what_is_not_an_adapter() -> None:
    with pytest.raises(TypeError, match="compile"):
        AdapterRegistry({"broken": object()})  # type: ignore[dict-item]
    with pytest.raises(TypeError, match="compile"):
        adapter_registry.with_adapters({"broken": object()})  # type: ignore[dict-item]
