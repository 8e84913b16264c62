"""Offline token counting: the heuristic, exact tokenizers, and the per-message memo."""

from __future__ import annotations

from typing import Any

from contextchef.tokens import (
    ATTACHMENT_TOKENS,
    EstimateTokenizer,
    MessageCounter,
    TokenizerAdapter,
    estimate,
    estimate_object,
)


def test_estimate_is_zero_for_empty_text_and_grows_with_length() -> None:
    assert estimate("") == 0
    assert 0 < estimate("hello") < estimate("hello world, how are you today?")


def test_cjk_text_costs_more_per_character_than_ascii() -> None:
    assert estimate("你好世界你好世界") > estimate("abcdefgh")
    assert estimate("こんにちは") > estimate("hello")
    assert estimate("안녕하세요") > estimate("hello")
    mixed = estimate("résumé naïve café")
    assert mixed > estimate("resume naive cafe")


def test_estimate_object_counts_compact_json() -> None:
    assert estimate_object("abc") == estimate("abc")
    assert estimate_object({"a": [1, 2]}) == estimate('{"a":[1,2]}')


def test_exact_tokenizer_counts_every_part_of_a_message() -> None:
    words = TokenizerAdapter(lambda text: text.split(), per_message_overhead=1)
    message: Any = {
        "role": "assistant",
        "content": "one two",
        "thinking": {"thinking": "three four five"},
        "tool_calls": [
            {"id": "c", "type": "function", "function": {"name": "ls", "arguments": "{} x"}}
        ],
    }
    assert words.count_message(message) == 1 + 2 + 3 + 1 + 2
    image: Any = {"role": "user", "content": [{"type": "image", "url": "u"}]}
    assert words.count_message(image) == 1 + ATTACHMENT_TOKENS
    assert TokenizerAdapter(len).count_text("abcd") == 4


def test_an_unchanged_message_is_counted_once() -> None:
    calls = []

    class Spy(EstimateTokenizer):
        def count_message(self, message: Any) -> int:
            calls.append(message)
            return super().count_message(message)

    counter = MessageCounter(Spy())
    message: Any = {"role": "user", "content": "hello"}
    first = counter.count(message)
    counter.sweep()
    assert counter.count(message) == first
    assert len(calls) == 1
    counter.sweep()
    counter.sweep()
    counter.count(message)
    assert len(calls) == 2
