"""Token counting that works offline: a heuristic estimate, exact tokenizers, per-message memo.

Nothing here downloads a vocabulary. `estimate` is a deliberately conservative heuristic (it
over-counts a little, which is the safe side for a budget); users with an exact tokenizer wrap
it with `TokenizerAdapter` (e.g. `TokenizerAdapter(tiktoken.get_encoding("o200k_base").encode)`
with the encoding file already on disk).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from contextchef._memo import ConversionCache
from contextchef.messages import Message

__all__ = [
    "ATTACHMENT_TOKENS",
    "EstimateTokenizer",
    "MessageCounter",
    "Tokenizer",
    "TokenizerAdapter",
    "count_tools",
    "estimate",
    "estimate_object",
]

# Ideographs, kana and hangul: roughly one token or more per character in common vocabularies.
_CJK = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")
_ASCII_RATE = 0.3
_CJK_RATE = 1.5
_OTHER_RATE = 0.6

# What one image or document attachment is assumed to cost when its size is unknown.
ATTACHMENT_TOKENS = 1600
PER_MESSAGE_OVERHEAD = 4


def estimate(text: str) -> int:
    """A conservative offline token estimate of `text` (CJK-aware); 0 for empty text."""
    if not text:
        return 0
    if text.isascii():
        return math.ceil(len(text) * _ASCII_RATE)
    cjk = len(_CJK.findall(text))
    rest = text if not cjk else _CJK.sub("", text)
    ascii_count = len(rest.encode("ascii", "ignore"))
    other = len(rest) - ascii_count
    return math.ceil(cjk * _CJK_RATE + ascii_count * _ASCII_RATE + other * _OTHER_RATE)


def estimate_object(value: Any) -> int:
    """`estimate` of a string, or of the compact JSON text of any other JSON value."""
    if isinstance(value, str):
        return estimate(value)
    return estimate(json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str))


@runtime_checkable
class Tokenizer(Protocol):
    """Counts the tokens of a text and of a whole message."""

    def count_text(self, text: str) -> int: ...

    def count_message(self, message: Message) -> int: ...


def _message_cost(message: Message, count_text: Callable[[str], int], overhead: int) -> int:
    total = overhead
    content = message.get("content")
    if isinstance(content, str):
        total += count_text(content)
    elif content:
        for part in content:
            if part["type"] == "text" or (part["type"] == "document" and "text" in part):
                total += count_text(part["text"])
            else:
                total += ATTACHMENT_TOKENS
    thinking = message.get("thinking")
    if thinking:
        total += count_text(thinking["thinking"])
    for blob in message.get("redacted_thinking") or ():
        total += count_text(blob["data"])
    for call in message.get("tool_calls") or ():
        total += count_text(call["function"]["name"]) + count_text(call["function"]["arguments"])
    return total


class EstimateTokenizer:
    """The default tokenizer: `estimate` per text plus a small per-message overhead."""

    def __init__(self, *, per_message_overhead: int = PER_MESSAGE_OVERHEAD) -> None:
        self.per_message_overhead = per_message_overhead

    def count_text(self, text: str) -> int:
        return estimate(text)

    def count_message(self, message: Message) -> int:
        return _message_cost(message, estimate, self.per_message_overhead)


class TokenizerAdapter:
    """Wraps an exact tokenizer: an `encode(text) -> sequence of ids` or a `count(text) -> int`."""

    def __init__(
        self,
        encode: Callable[[str], Sequence[int] | int],
        *,
        per_message_overhead: int = PER_MESSAGE_OVERHEAD,
    ) -> None:
        self._encode = encode
        self.per_message_overhead = per_message_overhead

    def count_text(self, text: str) -> int:
        if not text:
            return 0
        result = self._encode(text)
        return result if isinstance(result, int) else len(result)

    def count_message(self, message: Message) -> int:
        return _message_cost(message, self.count_text, self.per_message_overhead)


class MessageCounter:
    """Counts messages through a tokenizer, never counting an unchanged message twice."""

    def __init__(self, tokenizer: Tokenizer | None = None) -> None:
        self.tokenizer: Tokenizer = tokenizer or EstimateTokenizer()
        self._memo = ConversionCache()

    def count(self, message: Message) -> int:
        return self._memo.convert(message, self.tokenizer.count_message)

    def count_all(self, messages: Sequence[Message]) -> int:
        convert, count = self._memo.convert, self.tokenizer.count_message
        return sum(convert(message, count) for message in messages)

    def count_text(self, text: str) -> int:
        return self.tokenizer.count_text(text)

    def sweep(self) -> None:
        """Forget messages not counted since the previous sweep (call once per compile)."""
        self._memo.sweep()


def count_tools(tools: Sequence[Mapping[str, Any]], tokenizer: Tokenizer) -> int:
    """Tokens the tool definitions take, counted on their compact JSON text."""
    if not tools:
        return 0
    return tokenizer.count_text(json.dumps(list(tools), ensure_ascii=False, separators=(",", ":")))
