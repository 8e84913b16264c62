"""`from_openai_responses`: Responses API items in, an `ImportedHistory` in the IR out.

`instructions` and the leading `system` / `developer` messages form the system prompt; later
ones stay in the history. An item with a `role` and no `type` is a message. Consecutive
`function_call` items become one assistant message's tool calls (joined to a preceding
assistant text when nothing came between); each `function_call_output` is joined to its call by
`call_id` and placed right after the assistant message holding that call, so outputs that came
out of order, or late, still pair up. Reasoning items attach, verbatim, to the assistant message
that follows them (an assistant message after reasoning always starts a new IR message, so each
reasoning item keeps its following item); reasoning left at the end becomes an assistant stub.
Item types the IR has no room for (built-in tool calls, item references) are skipped with a
logged warning.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Iterable
from typing import Any

from contextchef.adapters.importing import ImportedHistory, as_dict, attachment, finish
from contextchef.errors import MessageError
from contextchef.messages import Message

__all__ = ["from_openai_responses"]

logger = logging.getLogger("contextchef.adapters.from_openai_responses")


def _input_part(part: dict[str, Any], index: int, at: int) -> Any:
    kind = part.get("type")
    if kind in ("input_text", "output_text", "text"):
        return {"text": str(part.get("text", "")), "type": "text"}
    if kind == "input_image" and isinstance(part.get("image_url"), str):
        return attachment("image", url=part["image_url"])
    if kind == "input_file" and isinstance(part.get("file_data"), str):
        data: str = part["file_data"]
        filename = part.get("filename")
        if data.startswith("data:"):
            return attachment("document", url=data, filename=filename)
        return attachment("document", data=data, filename=filename)
    if kind == "input_file" and isinstance(part.get("file_url"), str):
        return attachment("document", url=part["file_url"], filename=part.get("filename"))
    raise MessageError(
        f"a {kind!r} part without inline data or a URL (an uploaded file_id, audio…) has no "
        "equivalent in the message model",
        index=index,
        field=f"content[{at}]",
    )


def _content(content: Any, index: int) -> tuple[str | list[Any], str]:
    """IR content (a string when it is all text) and any refusal text."""
    if content is None or isinstance(content, str):
        return content or "", ""
    parts: list[Any] = []
    refusal = ""
    for at, raw in enumerate(content):
        part = as_dict(raw, index, "content part")
        if part.get("type") == "refusal":
            refusal += str(part.get("refusal", ""))
        else:
            parts.append(_input_part(part, index, at))
    if all(part["type"] == "text" for part in parts):
        return "".join(part["text"] for part in parts), refusal
    return parts, refusal


def _text(content: Any, index: int) -> str:
    converted, _ = _content(content, index)
    if isinstance(converted, str):
        return converted
    return "".join(part["text"] for part in converted if part["type"] == "text")


class _Importer:
    """One pass over the items; outputs are stitched in after their calls in `result`."""

    def __init__(self) -> None:
        self.system: list[Message] = []
        self.entries: list[Message | str] = []  # messages, and call ids where outputs stood
        self.outputs: dict[str, Message] = {}
        self.calls: set[str] = set()
        self.reasoning: list[dict[str, Any]] = []
        self.current: Message | None = None  # the assistant message open for more calls
        self.started = False  # a user or assistant message has been seen

    def _assistant(self) -> Message:
        message: Message = {"content": None, "role": "assistant"}
        if self.reasoning:
            message["openai_reasoning"] = self.reasoning
            self.reasoning = []
        self.entries.append(message)
        self.current = message
        self.started = True
        return message

    def message(self, item: dict[str, Any], index: int) -> None:
        role = item.get("role")
        if role == "assistant":
            content, refusal = _content(item.get("content"), index)
            message = self._assistant()
            message["content"] = content
            if refusal:
                message["refusal"] = refusal
            if item.get("phase") in ("commentary", "final_answer"):
                message["openai_phase"] = item["phase"]
            return
        self.current = None
        if role in ("system", "developer"):
            message = {"content": _text(item.get("content"), index), "role": "system"}
            if self.started:
                self.entries.append(message)
            else:
                self.system.append(message)
        elif role == "user":
            self.entries.append(
                {"content": _content(item.get("content"), index)[0], "role": "user"}
            )
            self.started = True
        else:
            raise MessageError(f"unknown message role {role!r}", index=index, field="role")

    def function_call(self, item: dict[str, Any], index: int) -> None:
        call_id = item.get("call_id")
        name = item.get("name")
        if not isinstance(call_id, str) or not call_id or not isinstance(name, str) or not name:
            raise MessageError("a function_call needs a call_id and a name", index=index)
        current = self.current
        if current is None or self.reasoning:
            current = self._assistant()
        arguments = item.get("arguments")
        current.setdefault("tool_calls", []).append(
            {
                "function": {"arguments": arguments or "{}", "name": name},
                "id": call_id,
                "type": "function",
            }
        )
        self.calls.add(call_id)

    def function_call_output(self, item: dict[str, Any], index: int) -> None:
        call_id = item.get("call_id")
        if not isinstance(call_id, str) or not call_id:
            raise MessageError("a function_call_output needs a call_id", index=index)
        self.current = None
        if call_id in self.outputs:
            logger.warning("skipped a second output for call %r (item %d)", call_id, index)
            return
        output = item.get("output")
        self.outputs[call_id] = {
            "content": _content(output, index)[0] if output is not None else "",
            "role": "tool",
            "tool_call_id": call_id,
        }
        self.entries.append(call_id)

    def result(self) -> list[Message]:
        if self.reasoning:
            self._assistant()
        history: list[Message] = []
        for entry in self.entries:
            if isinstance(entry, str):
                if entry not in self.calls:  # an orphan stays put; the repair pass reports it
                    history.append(self.outputs[entry])
                continue
            history.append(entry)
            for call in entry.get("tool_calls") or ():
                output = self.outputs.get(call["id"])
                if output is not None:
                    history.append(output)
        return history


def from_openai_responses(
    items: str | Iterable[Any], instructions: str | None = None, *, repair: bool = False
) -> ImportedHistory:
    """Responses input or output items (dicts or SDK objects) as an `ImportedHistory`.

    `items` may also be the plain string form of `input`. The items are converted as they are,
    even a lone response's output whose tool results come later (the chef repairs the whole
    history it holds). With `repair=True` the history also goes through
    `ensure_valid_history`, each fix returned in `fixes` and logged as a warning.
    """
    if isinstance(items, str):
        items = [{"content": items, "role": "user"}]
    importer = _Importer()
    if instructions:
        importer.system.append({"content": instructions, "role": "system"})
    for index, raw in enumerate(items):
        item = as_dict(raw, index, "item")
        kind = item.get("type") or ("message" if "role" in item else None)
        if kind == "message":
            importer.message(item, index)
        elif kind == "function_call":
            importer.function_call(item, index)
        elif kind == "function_call_output":
            importer.function_call_output(item, index)
        elif kind == "reasoning":
            importer.reasoning.append(copy.deepcopy(item))
        else:
            logger.warning(
                "skipped item %d of type %r: the message model cannot carry it", index, kind
            )
    return finish(importer.system, importer.result(), repair=repair, logger=logger)
