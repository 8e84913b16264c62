"""`from_openai`: a Chat Completions message list in, an `ImportedHistory` in the IR out.

Leading `system` and `developer` messages form the system prompt; those that come after the
conversation has started stay in the history, where they stood. `image_url` parts become image
parts (a base64 data URL is split into media type and data), `file` parts with inline
`file_data` become document parts. What the IR cannot carry (audio input, uploaded-file ids,
custom tool calls, the legacy `function` role) raises `MessageError` naming the message, rather
than disappearing.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from typing import Any

from contextchef.adapters.importing import ImportedHistory, as_dict, attachment, finish
from contextchef.errors import MessageError
from contextchef.messages import Message, ToolCall

__all__ = ["from_openai"]

logger = logging.getLogger("contextchef.adapters.from_openai")


def _string(value: Any, index: int, field: str) -> str:
    if not isinstance(value, str) or not value:
        raise MessageError("a non-empty string is required", index=index, field=field)
    return value


def _text(content: Any, index: int, allowed: tuple[str, ...] = ("text",)) -> tuple[str, str]:
    """(text, refusal) of content that may hold only text-like parts."""
    if content is None or isinstance(content, str):
        return content or "", ""
    texts: list[str] = []
    refusals: list[str] = []
    for at, raw in enumerate(content):
        part = as_dict(raw, index, "content part")
        kind = part.get("type")
        if kind not in allowed:
            raise MessageError(
                f"a {kind!r} part cannot appear here; only {', '.join(allowed)} parts",
                index=index,
                field=f"content[{at}]",
            )
        if kind == "refusal":
            refusals.append(str(part.get("refusal", "")))
        else:
            texts.append(str(part.get("text", "")))
    return "".join(texts), "".join(refusals)


def _user_part(raw: Any, index: int, at: int) -> Any:
    part = as_dict(raw, index, "content part")
    kind = part.get("type")
    field = f"content[{at}]"
    if kind == "text":
        return {"text": str(part.get("text", "")), "type": "text"}
    if kind == "image_url":
        image = part.get("image_url")
        url = image.get("url") if isinstance(image, Mapping) else image
        return attachment("image", url=_string(url, index, field + ".image_url.url"))
    if kind == "file":
        file = part.get("file")
        file = file if isinstance(file, Mapping) else {}
        data = file.get("file_data")
        if not isinstance(data, str):
            raise MessageError(
                "a file part that refers to an uploaded file_id cannot be carried over; "
                "send the file inline as file_data",
                index=index,
                field=field,
            )
        filename = file.get("filename")
        if data.startswith("data:"):
            return attachment("document", url=data, filename=filename)
        return attachment("document", data=data, filename=filename)
    raise MessageError(
        f"content part type {kind!r} has no equivalent in the message model",
        index=index,
        field=field,
    )


def _tool_calls(calls: Any, index: int) -> list[ToolCall]:
    result: list[ToolCall] = []
    for at, raw in enumerate(calls):
        call = as_dict(raw, index, "tool call")
        field = f"tool_calls[{at}]"
        if call.get("type", "function") != "function" or not isinstance(
            call.get("function"), Mapping
        ):
            raise MessageError("only function tool calls can be imported", index=index, field=field)
        function = call["function"]
        arguments = function.get("arguments")
        result.append(
            {
                "function": {
                    "arguments": arguments if isinstance(arguments, str) and arguments else "{}",
                    "name": _string(function.get("name"), index, field + ".function.name"),
                },
                "id": _string(call.get("id"), index, field + ".id"),
                "type": "function",
            }
        )
    return result


def _message(message: dict[str, Any], index: int) -> Message:
    role = message.get("role")
    content = message.get("content")
    if role in ("system", "developer"):
        converted: Message = {"content": _text(content, index)[0], "role": "system"}
    elif role == "user":
        converted = {"role": "user"}
        if isinstance(content, str) or content is None:
            converted["content"] = content or ""
        else:
            converted["content"] = [_user_part(p, index, at) for at, p in enumerate(content)]
    elif role == "assistant":
        text, refusal = _text(content, index, ("text", "refusal"))
        converted = {"content": text if content is not None else None, "role": "assistant"}
        refusal = message.get("refusal") or refusal
        if refusal:
            converted["refusal"] = refusal
        if message.get("tool_calls"):
            converted["tool_calls"] = _tool_calls(message["tool_calls"], index)
        elif message.get("function_call"):
            raise MessageError(
                "legacy function_call messages cannot be imported; use tool_calls",
                index=index,
                field="function_call",
            )
    elif role == "tool":
        converted = {
            "content": _text(content, index)[0],
            "role": "tool",
            "tool_call_id": _string(message.get("tool_call_id"), index, "tool_call_id"),
        }
    else:
        raise MessageError(
            f"unknown role {role!r}; Chat Completions roles are system, developer, user, "
            "assistant and tool",
            index=index,
            field="role",
        )
    if isinstance(message.get("name"), str) and role != "tool":
        converted["name"] = message["name"]
    return converted


def from_openai(messages: Iterable[Any], *, repair: bool = False) -> ImportedHistory:
    """Chat Completions messages (dicts or SDK objects) as an `ImportedHistory`.

    The messages are converted as they are, even a lone reply whose tool results come later
    (the chef repairs the whole history it holds). With `repair=True` the history also goes
    through `ensure_valid_history`, each fix returned in `fixes` and logged as a warning.
    """
    system: list[Message] = []
    history: list[Message] = []
    for index, raw in enumerate(messages):
        message = _message(as_dict(raw, index), index)
        (history if history or message["role"] != "system" else system).append(message)
    return finish(system, history, repair=repair, logger=logger)
