"""`ensure_valid_history`: repair what providers reject in a history, and report every repair.

Kept apart from the IR (`messages`), which re-exports both names: validation says what a message
may hold, repair says how a valid sequence of messages is made acceptable to every provider.
`HistoryRepair` runs the same pass incrementally: a history that extends the previous one
resumes from where the pass stopped instead of starting over. `waiting_placeholders` tells the
placeholders that stand in for results still to come (the last turn's calls, whose results the
host adds next) from everything else, so that they never outlive those results.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from contextchef import prompts
from contextchef._sequences import Lineage, identical_prefix

if TYPE_CHECKING:
    from contextchef.messages import Message, ToolCall

__all__ = [
    "HistoryFix",
    "HistoryRepair",
    "ensure_valid_history",
    "waiting_placeholders",
    "waiting_turn",
]


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
    - a first non-system message that is not a user message gets a placeholder user turn: it
      says the conversation begins with the assistant, or, when results of calls the history
      does not hold came before (and were dropped), that earlier conversation is omitted.

    `index` in each fix refers to the input history. The input is never mutated: a renamed call
    or result is a new dict (keys in the same order as the one it replaces).
    """
    scan = _Scan()
    scan.feed(history, 0)
    out, fixes = scan.finish(len(history))
    return list(out), list(fixes)


class HistoryRepair:
    """`ensure_valid_history` for a history that grows turn after turn.

    It keeps the state of its pass after the last history it repaired. When the next history
    starts with that one (the very same message objects: the chef's copies, which are never
    mutated), only the new messages are scanned; anything else starts over. The results equal
    `ensure_valid_history(history)` in every case, also when threads call `run` at once: each
    call takes the saved state for itself (another one meanwhile starts over).
    """

    __slots__ = ("_input", "_lock", "_output", "_scan")

    def __init__(self) -> None:
        self._input: Sequence[Message] = ()
        self._output: tuple[Message, ...] = ()
        self._scan: _Scan | None = None
        self._lock = threading.Lock()

    def run(self, history: Sequence[Message]) -> tuple[list[Message], list[HistoryFix]]:
        repaired, fixes, _ = self.resume(history)
        return list(repaired), list(fixes)

    def resume(
        self, history: Sequence[Message], known: Lineage | None = None
    ) -> tuple[tuple[Message, ...], tuple[HistoryFix, ...], Lineage]:
        """`run`, for a caller that keeps what it gets: the repaired history and its fixes as
        tuples, and the lineage of the repaired history from the one the previous call
        returned. `known` is the lineage of `history` from the history of the previous call,
        when the caller has it: then that comparison costs nothing, and `history` (its maker's
        own sequence, never mutated) is kept as it is rather than copied."""
        with self._lock:  # a pass is resumed by one call only, and never half-way through
            seen, scan, before = self._input, self._scan, self._output
            self._scan = None
        shared = 0
        if (
            scan is None
            or len(history) < len(seen)
            or identical_prefix(history, seen, known) < len(seen)
        ):
            leading = scan.leading if scan is not None else None
            scan, start = _Scan(), 0
            if leading is not None:  # keep their identity: caches downstream key on it
                scan.leading = leading
        else:
            start = len(seen)
            # `out` only grows: what it held stays at its place (the leading turn, inserted
            # before the first non-system message, is inserted at the same place again)
            shared = len(scan.out)
        scan.feed(history, start)
        result, fixes = scan.finish(len(history))  # before another call can take it over
        kept = history if known is not None and known.sequence is history else tuple(history)
        with self._lock:
            self._input, self._scan, self._output = kept, scan, result
        return result, fixes, Lineage(before, result, shared)


@dataclass(slots=True)
class _Scan:
    """The repair pass as a resumable state: what it produced so far and what is still open."""

    out: list[Message] = field(default_factory=list)
    fixes: list[HistoryFix] = field(default_factory=list)
    open_calls: dict[str, str] = field(default_factory=dict)  # call id -> tool name
    renamed: dict[str, list[str]] = field(default_factory=dict)  # old id -> open renamed ids
    issued: set[str] = field(default_factory=set)
    deferred: list[Message] = field(default_factory=list)  # system messages met mid-calls
    leading: tuple[Message, Message] = field(default_factory=lambda: _leading_users())
    """The placeholder user turns (the assistant opens; earlier conversation omitted), one
    object each for every finish, so a repaired history keeps its identity turn to turn."""
    opened: bool = False  # a non-system message is in `out`
    omitted: bool = False  # results were dropped before it: the history opened mid-conversation

    def feed(self, history: Sequence[Message], start: int) -> None:
        """Scan `history[start:]` (the messages before `start` were fed earlier)."""
        out, fixes, open_calls, renamed = self.out, self.fixes, self.open_calls, self.renamed
        deferred = self.deferred
        for index in range(start, len(history)):
            message = history[index]
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
                    why = "its call was already answered or closed"
                    why = why if call_id in self.issued else "no call"
                    fixes.append(HistoryFix("dropped_orphan_result", index, f"{why}: {call_id!r}"))
                    self.omitted = self.omitted or not self.opened
                    continue
                del open_calls[call_id]
                out.append(message)
                if not open_calls and (renamed or deferred):  # else closing changes nothing
                    self._close(index, out, fixes)
                continue
            if role == "system" and open_calls:
                deferred.append(message)
                fixes.append(
                    HistoryFix("moved_system_message", index, "moved after the tool results")
                )
                continue
            if open_calls or deferred or renamed:
                self._close(index, out, fixes)
            if role == "assistant" and message.get("tool_calls"):
                message = _rename_duplicates(message, index, self.issued, renamed, fixes)
                for call in message.get("tool_calls") or ():
                    open_calls[call["id"]] = call["function"]["name"]
            self.opened = self.opened or role != "system"
            out.append(message)

    def _close(self, at: int, out: list[Message], fixes: list[HistoryFix]) -> None:
        """Answer the calls still open with placeholders and place the deferred messages."""
        _answer_open_calls(self.open_calls, at, out, fixes)
        self.open_calls.clear()
        self.renamed.clear()
        out.extend(self.deferred)
        self.deferred.clear()

    def finish(self, length: int) -> tuple[tuple[Message, ...], tuple[HistoryFix, ...]]:
        """The repaired history and its fixes as if the history ended here; the state is left
        as it was, so a longer history can resume from it."""
        out: list[Message] = self.out
        fixes: list[HistoryFix] = self.fixes
        if self.open_calls or self.deferred:
            out, fixes = list(out), list(fixes)
            _answer_open_calls(self.open_calls, length, out, fixes)
            out.extend(self.deferred)
        first = next((i for i, m in enumerate(out) if m["role"] != "system"), None)
        if first is not None and out[first]["role"] != "user":
            fix = HistoryFix("added_leading_user", first, "first message was not a user's")
            return (*out[:first], self.leading[self.omitted], *out[first:]), (*fixes, fix)
        return tuple(out), tuple(fixes)


def _leading_users() -> tuple[Message, Message]:
    return (
        {"content": prompts.CONVERSATION_OPENS_WITH_ASSISTANT, "role": "user"},
        {"content": prompts.CONVERSATION_CONTINUES, "role": "user"},
    )


def _answer_open_calls(
    open_calls: dict[str, str], at: int, out: list[Message], fixes: list[HistoryFix]
) -> None:
    """Append a placeholder result for each call in `open_calls`, with its fix."""
    for call_id, name in open_calls.items():
        out.append({"content": prompts.NO_TOOL_RESULT, "role": "tool", "tool_call_id": call_id})
        fixes.append(HistoryFix("added_missing_result", at, _missing_detail(call_id, name)))


def _missing_detail(call_id: str, name: str) -> str:
    return f"no result for call {call_id!r} ({name})"


def waiting_placeholders(
    history: Sequence[Message], repairs: Sequence[HistoryFix]
) -> dict[int, HistoryFix]:
    """The placeholder results the repair pass gave the calls of the history's last turn,
    calls whose real results the host has not added yet, by index, with the fix that added
    each: the tool messages after the last assistant message (only results and system
    messages follow it) that are placeholders an `added_missing_result` fix of `repairs`
    names. They stand in for results still to come, so the chef never takes them for the
    host's own (`history`, `restore`, the write-back of an overflow). Read from the history
    and its fixes alone, so a snapshot read back tells them too."""
    if not repairs:  # the common case, at every compile with a budget
        return {}
    start = len(history)
    while start and history[start - 1]["role"] in ("tool", "system"):
        start -= 1
    if not start or start == len(history):
        return {}
    calls = history[start - 1].get("tool_calls") or ()
    names = {call["id"]: call["function"]["name"] for call in calls}
    fixes = {fix.detail: fix for fix in repairs if fix.kind == "added_missing_result"}
    if not names or not fixes:
        return {}
    found = {}
    for index in range(start, len(history)):
        message = history[index]
        call_id = message.get("tool_call_id", "")
        if message.get("content") == prompts.NO_TOOL_RESULT and call_id in names:
            fix = fixes.get(_missing_detail(call_id, names[call_id]))
            if fix is not None:
                found[index] = fix
    return found


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


def waiting_turn(history: Sequence[Message], repairs: Sequence[HistoryFix]) -> int | None:
    """The index of the assistant message whose calls wait for results still to come (see
    `waiting_placeholders`), or None when no placeholder stands in for one."""
    waiting = waiting_placeholders(history, repairs)
    if not waiting:
        return None
    start = min(waiting)
    while history[start]["role"] != "assistant":
        start -= 1
    return start
