"""The chef's history: intake of the host's messages, and write-back of landed overflows.

The host passes its whole history every turn (`set`) or only what is new (`append`, and the
agent loop's `add_response` and `add_tool_result`, which append one reply or one tool result);
either way only new or changed messages are validated, copied and repaired (`MessageIntake`,
`HistoryRepair`). A compile whose overflow changed the history replaces the chef's history with
the compacted one (`land`) and records the replacement (`Compaction`), so that `set` re-applies
it to a host that reloads its full history, recognised by content digests.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import cast

from contextchef._compaction import Compaction, landed, record
from contextchef._hosttext import shown
from contextchef._jsonvalue import copy_json
from contextchef._memo import ContentDigests, MessageIntake
from contextchef._repair import HistoryFix, HistoryRepair, waiting_placeholders
from contextchef._sequences import Lineage
from contextchef.adapters.reply import reply_messages
from contextchef.chef.cell import StateCell
from contextchef.chef.options import as_messages
from contextchef.compiler.pipeline import CompileRuntime, CompileState, Payload
from contextchef.errors import ConfigError, MessageError
from contextchef.messages import DocumentPart, ImagePart, Message, TextPart, ToolCall

__all__ = ["History"]


class History:
    """The history a chef holds, and the compactions it re-applies (the facade's history
    verbs delegate here).

    Args:
        cell: the chef's compile state (where the history and its repairs live).
        runtime: the compile memo: its overflow runner says whether overflow results are written
            back, and a cleared history starts a new window there.
    """

    def __init__(self, cell: StateCell, runtime: CompileRuntime) -> None:
        self._cell = cell
        self._runtime = runtime
        self._intake = MessageIntake()
        self._repair = HistoryRepair()
        self._compactions: list[Compaction] = []
        self._digests = ContentDigests()

    # -- taking messages ---------------------------------------------------------------------

    def set(self, messages: Iterable[object]) -> None:
        """See `ContextChef.set_history`."""
        given = as_messages(messages, "history")
        self._hold(self._intake.take(given))

    def append(self, messages: Iterable[object]) -> None:
        """See `ContextChef.append_history`."""
        given = as_messages(messages, "history")
        self._hold(self._intake.extend(given))

    def add_response(self, response: object) -> None:
        """See `ContextChef.add_response`."""
        self.append(reply_messages(response, self._intake.held))

    def add_tool_result(
        self,
        call_id: str | None,
        content: str | Sequence[TextPart | ImagePart | DocumentPart],
        name: str | None,
    ) -> None:
        """See `ContextChef.add_tool_result`."""
        parts = list(content) if isinstance(content, tuple) else content
        message: Message = {
            "content": cast("str | list[TextPart | ImagePart | DocumentPart]", parts),
            "role": "tool",
            "tool_call_id": _answered_call(self._intake.held, call_id, name),
        }
        self.append([message])

    def clear(self) -> None:
        """Empty the history and start a new context window (overflow state is reset too)."""
        self._cell.state = replace(self._cell.state, history=(), repairs=(), lineage=None)
        self._intake.rebase(())
        self._forget_compactions()
        self._runtime.memory_generation += 1
        if self._runtime.overflow_runner is not None:
            self._runtime.overflow_runner.reset()

    def messages(self) -> list[Message]:
        """A copy of the history (after repairs), without placeholders for results to come."""
        state = self._cell.state
        invented = waiting_placeholders(state.history, state.repairs)
        return [copy_json(m) for i, m in enumerate(state.history) if i not in invented]

    def _hold(self, taken: list[Message]) -> None:
        """Make `taken` (the host's history as private copies) the history: re-apply the
        compactions that landed, then repair (incrementally: see `HistoryRepair`). What the
        intake knows of the list it gave (the copies it kept from the last one) goes along with
        it, and the repaired history's lineage into the state for the compile's memos."""
        known: Lineage | None = self._intake.lineage
        for compaction in self._compactions:
            taken = compaction.apply(taken, self._digests)
        self._digests.sweep()
        history, repairs, lineage = self._repair.resume(taken, known)
        self._cell.state = replace(
            self._cell.state, history=history, repairs=repairs, lineage=lineage
        )

    # -- snapshots ---------------------------------------------------------------------------

    @property
    def compactions(self) -> tuple[Compaction, ...]:
        """The compaction records `set` re-applies (a snapshot carries them)."""
        return tuple(self._compactions)

    def restore(
        self,
        history: tuple[Message, ...],
        repairs: tuple[HistoryFix, ...],
        compactions: Iterable[Compaction],
    ) -> None:
        """Continue from a restored history: intake rebased on it, `compactions` the records."""
        invented = waiting_placeholders(history, repairs)  # results still to come
        self._intake.rebase([m for i, m in enumerate(history) if i not in invented])
        self._forget_compactions()
        self._compactions = list(compactions)

    # -- write-back --------------------------------------------------------------------------

    def land(self, started: CompileState, payload: Payload) -> Payload:
        """Write a landed overflow result back into the chef's history, and record it for
        `set` to re-apply (unless opted out, or the history set while the compile ran is not
        the one it started from: same content, as a retry's `set_history` gives, is)."""
        report = payload.meta.overflow
        runner = self._runtime.overflow_runner
        if report is None or not report.changed or runner is None:
            return payload
        if not runner.overflow.write_back or not self._same(
            self._cell.state.history, started.history
        ):
            return payload
        prefix, replacement = landed(started.history, report.history)
        if prefix:  # an empty prefix would match every history: nothing to re-apply
            digest = self._digests.of
            self._compactions = record(
                self._compactions,
                [digest(message) for message in prefix],
                replacement,
                tuple(digest(message) for message in replacement),
            )
        waiting = waiting_placeholders(started.history, started.repairs)
        placeholders = {id(started.history[index]): fix for index, fix in waiting.items()}
        repairs = tuple(fix for m in report.history if (fix := placeholders.get(id(m))) is not None)
        self._cell.state = replace(
            self._cell.state, history=report.history, repairs=repairs, lineage=None
        )
        return payload

    def _same(self, history: tuple[Message, ...], other: tuple[Message, ...]) -> bool:
        """Whether two histories have the same messages: the same objects, or equal content."""
        if history is other:
            return True
        digest = self._digests.of
        return len(history) == len(other) and all(
            a is b or digest(a) == digest(b) for a, b in zip(history, other, strict=True)
        )

    def _forget_compactions(self) -> None:
        """Drop the compaction records (and the digests memoised for them): a new window."""
        self._compactions = []
        self._digests = ContentDigests()


def _waiting_calls(history: Sequence[Message]) -> tuple[list[ToolCall], Message | None]:
    """The calls of the history's last assistant message that have no result yet (in call
    order), and that message; ([], None) when the history does not end in its tool-call turn
    (only its results, and system messages, may follow it)."""
    start = len(history)
    while start and history[start - 1]["role"] in ("tool", "system"):
        start -= 1
    assistant = history[start - 1] if start else None
    if assistant is None or assistant["role"] != "assistant" or not assistant.get("tool_calls"):
        return [], None
    waiting = list(assistant.get("tool_calls") or ())
    for message in history[start:]:
        answered = message.get("tool_call_id")
        at = next((i for i, call in enumerate(waiting) if call["id"] == answered), None)
        if at is not None:
            del waiting[at]
    return waiting, assistant


def _answered_call(history: Sequence[Message], call_id: object, name: object) -> str:
    """The id of the waiting call that `call_id` (or, without one, `name`) answers; else
    `MessageError` saying why none is, and which calls are waiting."""
    if call_id is None and name is None:
        raise ConfigError(
            "add_tool_result needs the call's id (or, for a Gemini call without one, name=)"
        )
    if call_id is not None and (not isinstance(call_id, str) or not call_id):
        raise ConfigError(f"a tool call id is a non-empty string, got {shown(call_id)}")
    if name is not None and (not isinstance(name, str) or not name):
        raise ConfigError(f"name= is the called function's name, got {shown(name)}")
    waiting, assistant = _waiting_calls(history)
    called = next((c for c in waiting if c["id"] == call_id), None)
    if call_id is None:
        called = next((c for c in waiting if c["function"]["name"] == name), None)
    if called is not None and name in (None, called["function"]["name"]):
        return called["id"]
    if called is not None:
        problem = f"call {call_id!r} is a call of {called['function']['name']!r}, not {name!r}"
    elif call_id is None:
        problem = f"no call of {name!r} is waiting for a result"
    elif assistant is not None and any(c["id"] == call_id for c in assistant["tool_calls"]):
        problem = f"call {call_id!r} already has a result"
    elif any(call["id"] == call_id for m in history for call in m.get("tool_calls") or ()):
        problem = (
            f"call {call_id!r} belongs to an earlier turn, closed by the messages after it (a "
            "result must follow its call, before the next user or assistant message)"
        )
    else:
        problem = f"no tool call in the history has the id {call_id!r}"
    if waiting:
        listing = ", ".join(f"{c['id']!r} ({c['function']['name']})" for c in waiting)
        state = f"waiting for a result: {listing}"
    else:
        state = "no call is waiting for a result"
    raise MessageError(f"{problem}; {state}", index=len(history), field="tool_call_id")
