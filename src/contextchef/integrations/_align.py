"""Which messages of the chef's history came from which IR message the integration gave it.

The history a compile starts from is the IR the integration set, except that the chef may have
re-applied an overflow result it wrote back earlier (a summary in place of a prefix it already
compacted: the host handed the full list again) and shortened long tool results (offloading).
So the two are matched from the end: a message stands for an IR message when both have the same
role and content, or are results of the same tool call (the offloaded one has a preview for
content); what matches nothing is the chef's own.
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
    """`{id(history message): index in given}` for the messages that came from `given`,
    matched from the end; a history message matching nothing (a summary, a result the chef
    added to close a dangling call) is skipped, and so is a given message the chef dropped."""
    matched: dict[int, int] = {}
    at, source = len(history) - 1, len(given) - 1
    while at >= 0 and source >= 0:
        if _same(history[at], given[source]):
            matched[id(history[at])] = source
            source -= 1
        elif source > 0 and _same(history[at], given[source - 1]):
            source -= 1  # the chef dropped given[source]; history[at] is looked at again
            continue
        at -= 1
    return matched
