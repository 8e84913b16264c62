"""Automatic cache breakpoints: where the stable prefix of a sandwich ends.

A provider that caches at explicit breakpoints (Anthropic) serves a request from its cache up to
the longest marked prefix it has seen. A steady agent loop hits that cache every turn when the
marks sit at the end of what will not change next turn:

1. the last message of the top layer (system prompt, store instruction, memory block): tools
   and system are cached together, whatever happens to the history;
2. the *stable end*: the last message before the tail that is not a system message (system
   messages of the history are hoisted into the system part by such providers). The tail
   changes every turn; everything before it is sent again unchanged next turn;
3. the previous compile's stable end, when at least `LOOKBACK` messages came after it: the
   provider looks back only a bounded number of blocks (Anthropic: 20) from a breakpoint for
   a prefix it cached, so a long step keeps the previous mark for the request to read the
   prefix the previous one wrote. A short step lets it go: a mark that leaves changes the
   bytes of its message, so the fewer marks move, the longer the identical prefix.

Marks are `_auto_cache_breakpoint` on a copy of the message (the history is never mutated); the
copies are memoised per message object, so an unchanged marked message is the same object next
compile and the adapters' conversion caches keep it. An adapter gives the host's own
`_cache_breakpoint` marks precedence over these within its budget.
"""

from __future__ import annotations

import dataclasses

from contextchef._memo import ConversionCache
from contextchef.messages import Message
from contextchef.placement.assembler import Sandwich

__all__ = ["AUTO_MARK", "LOOKBACK", "mark_stable_prefix", "stable_end"]

AUTO_MARK = "_auto_cache_breakpoint"
"""The key of an automatic breakpoint on an assembled message (never in the chef's history)."""

LOOKBACK = 8
"""Messages after the previous stable end from which its mark is kept (each message is at least
one block; a provider looking back 20 blocks finds the previous mark within 8 messages unless
they hold many blocks each)."""


def stable_end(sandwich: Sandwich) -> int | None:
    """The index of the last message before the tail that is not a system message; without a
    tail, of the last user or tool message (trailing assistant messages are a prefill the reply
    continues, replaced next turn). None when there is none."""
    messages = sandwich.messages
    limit = sandwich.tail_index
    if limit is None:
        limit = len(messages)
        while limit and messages[limit - 1]["role"] in ("assistant", "system"):
            limit -= 1
    for index in range(min(limit, len(messages)) - 1, -1, -1):
        if messages[index]["role"] != "system":
            return index
    return None


def _marked(message: Message) -> Message:
    # "_auto_cache_breakpoint" sorts before every other key a message has: the order stays sorted.
    marked: dict[str, object] = {AUTO_MARK: True, **message}
    return marked  # type: ignore[return-value]


def _mark(messages: list[Message], index: int, memo: ConversionCache) -> None:
    if not messages[index].get("_cache_breakpoint"):
        messages[index] = memo.convert(messages[index], _marked)


def mark_stable_prefix(
    sandwich: Sandwich, *, previous_end: int | None, memo: ConversionCache
) -> tuple[Sandwich, int | None]:
    """`sandwich` with the automatic marks of the module docstring, and its stable end."""
    system, messages = list(sandwich.system), list(sandwich.messages)
    if system:
        _mark(system, len(system) - 1, memo)
    end = stable_end(sandwich)
    if end is not None:
        if (
            previous_end is not None
            and 0 <= previous_end <= end - LOOKBACK
            and messages[previous_end]["role"] != "system"
        ):
            _mark(messages, previous_end, memo)
        _mark(messages, end, memo)
    return dataclasses.replace(sandwich, system=system, messages=messages), end
