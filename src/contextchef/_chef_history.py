"""Setting the history: a mixin of `_ChefBase`.

The host passes its whole history every turn (`set_history`) or only what is new
(`append_history`, and the agent loop's `add_response` and `add_tool_result`, which append one
reply or one tool result); either way only new or changed messages are validated, copied and
repaired (`MessageIntake`, `HistoryRepair`), and compactions written back earlier are
re-applied.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Self, cast

from contextchef._chef_parts import Compaction, as_messages
from contextchef._memo import ContentDigests, MessageIntake
from contextchef._repair import HistoryRepair
from contextchef.adapters.reply import reply_messages
from contextchef.compiler.pipeline import CompileState
from contextchef.errors import ConfigError, MessageError
from contextchef.messages import DocumentPart, ImagePart, Message, TextPart, ToolCall

__all__ = ["HistorySetters"]


class HistorySetters:
    """`set_history`, `append_history` and what both do with the messages they take."""

    _state: CompileState
    _compactions: list[Compaction]
    _digests: ContentDigests
    _history_intake: MessageIntake
    _history_repair: HistoryRepair

    def set_history(self, messages: Iterable[object]) -> Self:
        """The rolling conversation, as IR messages (see `contextchef.messages`).

        What providers would reject is repaired now (`ensure_valid_history`), and every compile
        reports the repairs in `payload.meta.repairs`. An overflow result written back earlier is
        re-applied when the history starts with the messages it compacted, recognised by their
        content: the same dicts, or fresh ones reloaded from a database or JSON.
        """
        given = as_messages(messages, "history")
        self._hold_history(self._history_intake.take(given))
        return self

    def append_history(self, messages: Iterable[object]) -> Self:
        """Add messages at the end of the history: `set_history(previous + messages)`, where
        `previous` is the list the last `set_history` or `append_history` received, as it was
        then. The cheapest turn: earlier messages are not compared again, so edit one in place
        and `set_history` must see the whole list (which stays fast: it re-validates only
        what is new or changed)."""
        given = as_messages(messages, "history")
        self._hold_history(self._history_intake.extend(given))
        return self

    def add_response(self, response: object) -> Self:
        """Append the model's reply, exactly as the provider SDK returned it: a `ChatCompletion`,
        a Responses API `Response`, an Anthropic `Message`, a Gemini `GenerateContentResponse`,
        the dict form of any of them (`model_dump()`, or the JSON the API sent), or one message
        already taken out (see `contextchef.adapters.reply`). The shape is read from the fields.

        Nothing is invented: tool calls of the reply wait for `add_tool_result`. A compile in
        between answers them with placeholders in that payload only (providers refuse
        unanswered calls; `payload.meta.repairs` says so), and the real results replace them.
        Raises `ConfigError` for a value that is not a response, `MessageError` for one that
        holds no assistant message; the chef is then left as it was.
        """
        return self.append_history(reply_messages(response, self._history_intake.held))

    def add_tool_result(
        self,
        call_id: str | None,
        content: str | Sequence[TextPart | ImagePart | DocumentPart],
        *,
        name: str | None = None,
    ) -> Self:
        """Append the result of a tool call the last reply made: a `tool` message answering
        `call_id`, whose `content` is text or a list of IR content parts (text, image,
        document).

        `call_id` must name a call of the last assistant message that has no result yet: a
        result that answers nothing would be dropped at compile, so an unknown id, a call
        already answered, or a call of an earlier turn (a user or assistant message came after
        it) raises `MessageError` listing the calls still waiting. `name=` (the function name)
        is checked against the call; with `call_id=None` it picks the first waiting call of
        that function, for Gemini calls that came without an id (`function_call.id is None`).
        """
        parts = list(content) if isinstance(content, tuple) else content
        message: Message = {
            "content": cast("str | list[TextPart | ImagePart | DocumentPart]", parts),
            "role": "tool",
            "tool_call_id": _answered_call(self._history_intake.held, call_id, name),
        }
        return self.append_history([message])

    def _hold_history(self, taken: list[Message]) -> None:
        """Make `taken` (the host's history as private copies) the history: re-apply the
        compactions that landed, then repair (incrementally: see `HistoryRepair`)."""
        for compaction in self._compactions:
            taken = compaction.apply(taken, self._digests)
        self._digests.sweep()
        history, repairs = self._history_repair.run(taken)
        self._state = replace(self._state, history=tuple(history), repairs=tuple(repairs))


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
        raise ConfigError(f"a tool call id is a non-empty string, got {call_id!r}")
    if name is not None and (not isinstance(name, str) or not name):
        raise ConfigError(f"name= is the called function's name, got {name!r}")
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
