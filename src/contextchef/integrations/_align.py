"""Which messages of the chef's history came from which IR message the integration gave it.

The history a compile starts from is the IR the integration set, except that the chef may have
re-applied an overflow result it wrote back earlier (a summary in place of a prefix it already
compacted: the host handed the full list again) and shortened long tool results (offloading).
So the two are matched from the end: a message stands for the IR message at the same distance
from the end while both have the same role and content, or are results of the same tool call
(the offloaded one has a preview for content). What precedes the first mismatch is the chef's.
"""

from __future__ import annotations

from collections.abc import Sequence

from contextchef.messages import Message

__all__ = ["align"]


def _same(chef: Message, given: Message) -> bool:
    if chef["role"] != given["role"]:
        return False
    if chef["role"] == "tool":
        return chef.get("tool_call_id") == given.get("tool_call_id")
    return chef.get("content") == given.get("content") and chef.get("tool_calls") == given.get(
        "tool_calls"
    )


def align(history: Sequence[Message], given: Sequence[Message]) -> dict[int, int]:
    """`{id(history message): index in given}` for the messages that came from `given`."""
    matched: dict[int, int] = {}
    offset = len(given) - len(history)
    for at in range(len(history) - 1, -1, -1):
        source = at + offset
        if source < 0 or not _same(history[at], given[source]):
            break
        matched[id(history[at])] = source
    return matched
