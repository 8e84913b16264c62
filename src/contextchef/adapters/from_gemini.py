"""`from_gemini`: google-genai contents as `ImportedHistory(system, history, fixes)` in the IR.

Accepts dicts (snake_case as google-genai writes them, or the REST API's camelCase) or the SDK's
`Content` objects. `model` contents become assistant messages: text parts joined into the
content (the text part's thought signature kept on the message), thought parts as `thinking`,
`function_call` parts as tool calls with their own signatures. A call without an id gets the
stable synthetic id `gemini-call-<name>-<n>` (`n` counts that function's id-less calls from 1
across the whole conversation), which the `gemini` target leaves out again on the way back.
A `function_response` with an id answers that call; one without answers the oldest unanswered
call of the same name anywhere earlier in the conversation (first in, first out). In a `user`
content the responses come first, as tool messages, then one user message with the rest.
Each system-instruction part becomes one system message.
"""

from __future__ import annotations

import base64
import json
import logging
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from contextchef.adapters.gemini import SYNTHETIC_CALL_ID_PREFIX
from contextchef.adapters.importing import ImportedHistory, as_dict, attachment, finish
from contextchef.errors import MessageError
from contextchef.messages import Message, ToolCall

__all__ = ["from_gemini", "model_reply"]

logger = logging.getLogger("contextchef.adapters.from_gemini")


def _get(mapping: Mapping[str, Any], snake: str) -> Any:
    """A field by its snake_case name or the REST API's camelCase one."""
    if snake in mapping:
        return mapping[snake]
    head, *rest = snake.split("_")
    return mapping.get(head + "".join(word.title() for word in rest))


def _b64(value: Any) -> str | None:
    if isinstance(value, bytes | bytearray):
        return base64.b64encode(value).decode("ascii")
    return value if isinstance(value, str) else None


def _media(part: Mapping[str, Any]) -> Any:
    """An inline_data or file_data part as an IR attachment, or None."""
    inline = _get(part, "inline_data")
    if isinstance(inline, Mapping):
        media_type = _get(inline, "mime_type") or "application/octet-stream"
        kind = "image" if media_type.startswith("image/") else "document"
        return attachment(kind, data=_b64(inline.get("data")) or "", media_type=media_type)
    file = _get(part, "file_data")
    if isinstance(file, Mapping):
        media_type = _get(file, "mime_type")
        kind = "image" if (media_type or "").startswith("image/") else "document"
        return attachment(kind, url=str(_get(file, "file_uri")), media_type=media_type)
    return None


def _content(parts: list[Any]) -> str | list[Any]:
    if all(part["type"] == "text" for part in parts):
        return "".join(part["text"] for part in parts)
    return parts


class _Calls:
    """Synthetic ids for id-less calls, and FIFO matching of responses to calls by name."""

    def __init__(self) -> None:
        self.counters: dict[str, int] = {}
        self.open: dict[str, deque[str]] = {}

    def issue(self, name: str, call_id: str | None) -> str:
        if not call_id:
            self.counters[name] = self.counters.get(name, 0) + 1
            call_id = f"{SYNTHETIC_CALL_ID_PREFIX}{name}-{self.counters[name]}"
        self.open.setdefault(name, deque()).append(call_id)
        return call_id

    def answer(self, name: str, call_id: str | None) -> str:
        waiting = self.open.get(name)
        if call_id:
            if waiting and call_id in waiting:
                waiting.remove(call_id)
            return call_id  # an unknown id stays an orphan, which the repair pass reports
        if waiting:
            return waiting.popleft()
        return f"{SYNTHETIC_CALL_ID_PREFIX}{name}-unanswerable"


def _model_message(parts: Sequence[Mapping[str, Any]], calls: _Calls, index: int) -> Message:
    content: list[Any] = []
    thoughts: list[str] = []
    tool_calls: list[ToolCall] = []
    message: Message = {"role": "assistant"}
    for part in parts:
        signature = _b64(_get(part, "thought_signature"))
        function_call = _get(part, "function_call")
        if isinstance(function_call, Mapping):
            name = function_call.get("name")
            if not isinstance(name, str) or not name:
                raise MessageError("a function_call part needs a name", index=index, field="parts")
            call: ToolCall = {
                "function": {
                    "arguments": json.dumps(
                        function_call.get("args") or {}, ensure_ascii=False, separators=(",", ":")
                    ),
                    "name": name,
                },
                "id": calls.issue(name, function_call.get("id")),
                "type": "function",
            }
            if signature:
                call["gemini_thought_signature"] = signature
            tool_calls.append(call)
        elif part.get("thought") and isinstance(part.get("text"), str):
            thoughts.append(part["text"])
        elif isinstance(part.get("text"), str):
            content.append({"text": part["text"], "type": "text"})
            if signature and "gemini_thought_signature" not in message:
                message["gemini_thought_signature"] = signature
        elif (media := _media(part)) is not None:
            content.append(media)
    message["content"] = _content(content) if content else None
    if thoughts:
        message["thinking"] = {"thinking": "".join(thoughts)}
    if tool_calls:
        message["tool_calls"] = tool_calls
    return message


def _tool_result(response: Mapping[str, Any], calls: _Calls, index: int) -> Message:
    name = response.get("name")
    if not isinstance(name, str) or not name:
        raise MessageError("a function_response part needs a name", index=index, field="parts")
    value = response.get("response")
    if (
        isinstance(value, Mapping)
        and list(value) == ["result"]
        and isinstance(value["result"], str)
    ):
        text = value["result"]
    else:
        text = json.dumps(value or {}, ensure_ascii=False, separators=(",", ":"))
    return {"content": text, "role": "tool", "tool_call_id": calls.answer(name, response.get("id"))}


def _user_messages(parts: Sequence[Mapping[str, Any]], calls: _Calls, index: int) -> list[Message]:
    results: list[Message] = []
    content: list[Any] = []
    for part in parts:
        response = _get(part, "function_response")
        if isinstance(response, Mapping):
            results.append(_tool_result(response, calls, index))
        elif isinstance(part.get("text"), str):
            content.append({"text": part["text"], "type": "text"})
        elif (media := _media(part)) is not None:
            content.append(media)
    if content:
        results.append({"content": _content(content), "role": "user"})
    return results


def _system(instruction: Any) -> list[Message]:
    if instruction is None:
        return []
    if isinstance(instruction, str):
        return [{"content": instruction, "role": "system"}]
    if not isinstance(instruction, list):
        instruction = as_dict(instruction, None, "system instruction").get("parts") or []
    texts = [p if isinstance(p, str) else as_dict(p, None, "part").get("text") for p in instruction]
    return [{"content": text, "role": "system"} for text in texts if isinstance(text, str)]


def _last_number(earlier: Sequence[Message], name: str) -> int:
    """The `n` of the newest synthetic id `gemini-call-<name>-<n>` in `earlier`, else 0."""
    prefix = f"{SYNTHETIC_CALL_ID_PREFIX}{name}-"
    for message in reversed(earlier):
        for call in reversed(message.get("tool_calls") or ()):
            number = call["id"].removeprefix(prefix)
            if number != call["id"] and number.isdigit():
                return int(number)
    return 0


def model_reply(content: Any, earlier: Sequence[Message] = ()) -> Message:
    """One `model` content (a reply) as an assistant message, its id-less calls numbered after
    those of `earlier`: adding a conversation's replies one at a time gives the ids
    `from_gemini` gives the whole conversation. Not repaired: the responses come next."""
    parts = [as_dict(part, 0, "part") for part in as_dict(content, 0, "content").get("parts") or ()]
    calls = _Calls()
    for part in parts:
        function_call = _get(part, "function_call")
        if isinstance(function_call, Mapping) and not function_call.get("id"):
            name = function_call.get("name")
            if isinstance(name, str) and name not in calls.counters:
                calls.counters[name] = _last_number(earlier, name)
    return _model_message(parts, calls, 0)


def from_gemini(
    contents: Iterable[Any], system_instruction: Any = None, *, repair: bool = False
) -> ImportedHistory:
    """Gemini contents (dicts or `types.Content`) as `ImportedHistory(system, history, fixes)`.

    `system_instruction` may be a string, a `Content` (or its dict), or a list of parts.
    The contents are converted as they are, even a lone reply whose function responses come
    later (the chef repairs the whole history it holds). With `repair=True` the history also
    goes through `ensure_valid_history`, each fix returned in `fixes` and logged as a warning.
    """
    calls = _Calls()
    history: list[Message] = []
    for index, raw in enumerate(contents):
        content = as_dict(raw, index, "content")
        parts = [as_dict(part, index, "part") for part in content.get("parts") or ()]
        role = content.get("role") or "user"
        if role == "model":
            history.append(_model_message(parts, calls, index))
        elif role in ("user", "function"):
            history.extend(_user_messages(parts, calls, index))
        else:
            raise MessageError(f"unknown content role {role!r}", index=index, field="role")
    return finish(_system(system_instruction), history, repair=repair, logger=logger)
