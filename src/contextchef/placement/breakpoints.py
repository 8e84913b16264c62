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

Marks are positions, not message copies: `Sandwich.auto_marks` holds the index of each marked
message in `(*system, *messages)`, and the adapter puts its marker there while it serialises.
No message is copied or changed, so every message the adapter sees is the very object it
converted last compile (its conversion cache keeps it), however the marks move. A message
carrying the host's own `_cache_breakpoint` gets no automatic mark: the host's mark stands, and
an adapter gives the host's marks precedence over these within its budget.
"""

from __future__ import annotations

import dataclasses

from contextchef.messages import Message
from contextchef.placement.assembler import Sandwich

__all__ = ["AUTO_MARK", "LOOKBACK", "mark_stable_prefix", "stable_end"]

AUTO_MARK = "_auto_cache_breakpoint"
"""The IR key that asks an adapter for a breakpoint on a message it is given by hand (in an
`AdapterInput` that does not come from a chef). The chef passes its own marks as positions
(`AdapterInput.auto_marks`) and never adds this key to a message."""

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


def _markable(message: Message) -> bool:
    """Whether an automatic mark goes on `message` (the host's own mark stands instead)."""
    return not message.get("_cache_breakpoint")


def mark_stable_prefix(
    sandwich: Sandwich, *, previous_end: int | None
) -> tuple[Sandwich, int | None]:
    """`sandwich` with the automatic marks of the module docstring (`auto_marks`), and its
    stable end."""
    system, messages = sandwich.system, sandwich.messages
    head = len(system)
    marks: list[int] = []
    if system and _markable(system[-1]):
        marks.append(head - 1)
    end = stable_end(sandwich)
    if end is not None:
        if (
            previous_end is not None
            and 0 <= previous_end <= end - LOOKBACK
            and messages[previous_end]["role"] != "system"
            and _markable(messages[previous_end])
        ):
            marks.append(head + previous_end)
        if _markable(messages[end]):
            marks.append(head + end)
    return dataclasses.replace(sandwich, auto_marks=tuple(marks)), end
