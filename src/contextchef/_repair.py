"""`ensure_valid_history`: repair what providers reject in a history, and report every repair.

Kept apart from the IR (`messages`), which re-exports both names: validation says what a message
may hold, repair says how a valid sequence of messages is made acceptable to every provider.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from contextchef import prompts

if TYPE_CHECKING:
    from contextchef.messages import Message, ToolCall

__all__ = ["HistoryFix", "ensure_valid_history"]


@dataclass(frozen=True, slots=True)
class HistoryFix:
    """One repair `ensure_valid_history` made: what it did, and to which message."""

    kind: Literal[
        "dropped_orphan_result",
        "added_missing_result",
        "moved_system_message",
        "added_leading_user",
        "renamed_duplicate_call_id",
    ]
    index: int
    detail: str


def ensure_valid_history(history: Sequence[Message]) -> tuple[list[Message], list[HistoryFix]]:
    """Repair what providers reject and say what was repaired.

    - a tool call whose id an earlier call of the history (or of the same message) already has
      is renamed `<id>_2` (`_3`… if that is taken too), and so is the first result after it that
      answers the old id while the original is already answered: every provider pairs calls and
      results by id, and refuses a history where one id names two calls;
    - a tool result that answers no open call of the assistant just before it (no such call, a
      call already answered, or a call of an earlier turn) is dropped;
    - a tool call with no result before the next user or assistant message gets a placeholder
      result right after the results it does have;
    - a system message between tool calls and their results moves to just after the results;
    - a first non-system message that is not a user message gets a placeholder user turn.

    `index` in each fix refers to the input history. The input is never mutated: a renamed call
    or result is a new dict (keys in the same order as the one it replaces).
    """
    fixes: list[HistoryFix] = []
    out: list[Message] = []
    open_calls: dict[str, str] = {}  # call id -> tool name, for the assistant being answered
    renamed: dict[str, list[str]] = {}  # original id -> new ids of its open renamed calls
    issued: set[str] = set()
    deferred: list[Message] = []  # system messages met while calls were still open

    def close_open_calls(at: int) -> None:
        for call_id, name in open_calls.items():
            out.append({"content": prompts.NO_TOOL_RESULT, "role": "tool", "tool_call_id": call_id})
            fixes.append(
                HistoryFix("added_missing_result", at, f"no result for call {call_id!r} ({name})")
            )
        open_calls.clear()
        renamed.clear()
        out.extend(deferred)
        deferred.clear()

    for index, message in enumerate(history):
        role = message["role"]
        if role == "tool":
            call_id = message.get("tool_call_id", "")
            if call_id not in open_calls and renamed.get(call_id):
                new_id = renamed[call_id].pop(0)
                message = {**message, "tool_call_id": new_id}
                detail = f"result for the renamed call {call_id!r} -> {new_id!r}"
                fixes.append(HistoryFix("renamed_duplicate_call_id", index, detail))
                call_id = new_id
            if call_id not in open_calls:
                why = "its call was already answered or closed" if call_id in issued else "no call"
                fixes.append(HistoryFix("dropped_orphan_result", index, f"{why}: {call_id!r}"))
                continue
            del open_calls[call_id]
            out.append(message)
            if not open_calls:
                close_open_calls(index)
            continue
        if role == "system" and open_calls:
            deferred.append(message)
            fixes.append(HistoryFix("moved_system_message", index, "moved after the tool results"))
            continue
        close_open_calls(index)
        if role == "assistant" and message.get("tool_calls"):
            message = _rename_duplicates(message, index, issued, renamed, fixes)
            for call in message.get("tool_calls") or ():
                open_calls[call["id"]] = call["function"]["name"]
        out.append(message)
    close_open_calls(len(history))

    first = next((i for i, m in enumerate(out) if m["role"] != "system"), None)
    if first is not None and out[first]["role"] != "user":
        out.insert(first, {"content": prompts.CONVERSATION_CONTINUES, "role": "user"})
        fixes.append(HistoryFix("added_leading_user", first, "first message was not a user's"))
    return out, fixes


def _rename_duplicates(
    message: Message,
    index: int,
    issued: set[str],
    renamed: dict[str, list[str]],
    fixes: list[HistoryFix],
) -> Message:
    """`message` with every call id already issued (earlier, or by a call before it in the same
    message) renamed to the first free `<id>_<n>`, n ≥ 2; the message itself if none is. Adds
    the message's (final) call ids to `issued`."""
    calls = message.get("tool_calls") or []
    new_calls: list[ToolCall] | None = None
    for at, call in enumerate(calls):
        call_id = call["id"]
        if call_id not in issued:
            issued.add(call_id)
            continue
        n = 2
        while f"{call_id}_{n}" in issued:
            n += 1
        new_id = f"{call_id}_{n}"
        issued.add(new_id)
        if new_calls is None:
            new_calls = list(calls)
        new_calls[at] = {**call, "id": new_id}
        renamed.setdefault(call_id, []).append(new_id)
        detail = f"tool_calls[{at}]: the call id {call_id!r} was already used; now {new_id!r}"
        fixes.append(HistoryFix("renamed_duplicate_call_id", index, detail))
    if new_calls is None:
        return message
    return {**message, "tool_calls": new_calls}
