"""The built-in adapters in the default registry are every chef's: their options cannot be
changed after construction, so no chef (or library) can change another's payloads through them.
A different option is a new adapter, given to one chef through a registry of its own."""

from __future__ import annotations

import pytest

from contextchef import ContextChef
from contextchef.adapters import AnthropicAdapter, adapter_registry, get_adapter

HISTORY = [{"role": "user", "content": "Hello"}]


@pytest.mark.parametrize(
    ("target", "option", "value"),
    [
        ("anthropic", "max_cache_breakpoints", 1),
        ("anthropic", "profile", None),
        ("gemini", "send_call_ids", False),
        ("gemini", "preserve_thinking_as_text", True),
        ("gemini", "profile", None),
        ("openai", "preserve_thinking_as_text", True),
        ("openai", "profile", None),
        ("openai-responses", "profile", None),
    ],
)
def test_a_shared_adapter_refuses_changes(target: str, option: str, value: object) -> None:
    adapter = get_adapter(target)
    before = getattr(adapter, option)
    with pytest.raises(AttributeError):
        setattr(adapter, option, value)
    with pytest.raises(AttributeError):
        adapter.surprise = 1  # type: ignore[attr-defined]
    assert getattr(adapter, option) == before


def test_an_option_of_ones_own_reaches_one_chef_only() -> None:
    system = "You are a careful agent. " * 40
    mine = ContextChef(
        adapters=adapter_registry.with_adapters(
            {"anthropic": AnthropicAdapter(max_cache_breakpoints=0)}
        )
    )
    theirs = ContextChef()
    ours = mine.set_system_prompt(system).set_history(HISTORY).compile(target="anthropic")
    other = theirs.set_system_prompt(system).set_history(HISTORY).compile(target="anthropic")
    assert "cache_control" not in repr(ours)
    assert "cache_control" in repr(other)
