"""Unchanged messages are converted once: the conversion cache behind every adapter."""

from __future__ import annotations

from typing import Any

from contextchef import ContextChef
from contextchef._memo import ConversionCache


def test_convert_all_reuses_the_shared_prefix_and_converts_the_rest() -> None:
    cache = ConversionCache()
    calls: list[Any] = []

    def convert(message: Any) -> str:
        calls.append(message)
        return f"<{message['n']}>"

    a, b, c = {"n": 1}, {"n": 2}, {"n": 3}
    assert cache.convert_all([a, b], convert) == ["<1>", "<2>"]
    assert cache.convert_all([a, b, c], convert) == ["<1>", "<2>", "<3>"]
    assert calls == [a, b, c]
    replaced = {"n": 9}
    assert cache.convert_all([a, replaced, c], convert) == ["<1>", "<9>", "<3>"]
    assert calls == [a, b, c, replaced]  # c was memoised by identity


def test_the_returned_list_is_the_callers_to_change() -> None:
    cache = ConversionCache()
    first = cache.convert_all([{"n": 1}], str)
    first.append("mine")
    message = {"n": 1}
    assert cache.convert_all([message], str) == [str(message)]


def test_a_new_turn_converts_only_what_changed(monkeypatch: Any) -> None:
    from contextchef.adapters import openai_chat

    converted: list[Any] = []
    original = openai_chat.OpenAIChatAdapter._convert

    def spy(self: Any, message: Any) -> Any:
        converted.append(message)
        return original(self, message)

    monkeypatch.setattr(openai_chat.OpenAIChatAdapter, "_convert", spy)
    history: list[Any] = [
        {"role": "user", "pinned": True, "content": f"question {i}"} for i in range(50)
    ]
    chef = ContextChef().set_history(history)
    chef.compile()
    assert len(converted) == 50
    chef.set_history([*history, {"role": "user", "pinned": True, "content": "one more"}])
    chef.compile()
    assert len(converted) == 51
