"""pydantic-ai `ModelMessage`s to the message IR and back, with nothing lost.

One IR message per request part (a system prompt, a user prompt, a tool return, retry feedback)
and one per model response (its text, tool calls and thinking). Every IR message also carries a
`pydantic_ai` passthrough slot with the part (or the whole response) as pydantic-ai serialises it
(as JSON text),
so `from_ir` rebuilds the very messages `to_ir` was given — timestamps, usage, provider details,
part types contextchef does not know — and an archived span can be read back as pydantic-ai
messages. What the model sees lives in the IR fields; when those changed (an offloaded tool
result, a repaired call id), `from_ir` applies the change to the rebuilt part.

Part types the IR has no field for (provider-native tool calls, files, compaction items…) are kept
in the slot and passed through unchanged, with a warning logged once per type.
"""

from __future__ import annotations

import base64
import dataclasses
import json
import logging
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, cast

from contextchef.errors import MissingDependencyError
from contextchef.messages import Message, content_text

try:
    from pydantic import TypeAdapter
    from pydantic_ai import messages as pm
except ImportError as exc:  # pragma: no cover - exercised by simulating the missing extra
    raise MissingDependencyError(exc.name or "pydantic-ai", "pydantic-ai") from exc

__all__ = ["SLOT", "from_ir", "part_to_ir", "response_to_ir", "to_ir"]

logger = logging.getLogger("contextchef.integrations.pydantic_ai")

SLOT = "pydantic_ai"
"""The IR passthrough slot holding what pydantic-ai needs to rebuild a message exactly."""

_MESSAGES: TypeAdapter[list[pm.ModelMessage]] = pm.ModelMessagesTypeAdapter
_warned: set[str] = set()


def _warn_unknown(kind: str) -> None:
    if kind not in _warned:
        _warned.add(kind)
        logger.warning(
            "pydantic-ai part type %r has no contextchef IR form; it is kept and passed "
            "through unchanged",
            kind,
        )


def _dump(message: pm.ModelMessage) -> dict[str, Any]:
    dumped: dict[str, Any] = _MESSAGES.dump_python([message], mode="json")[0]
    return dumped


def _user_content(content: str | Sequence[pm.UserContent]) -> str | list[dict[str, Any]]:
    if isinstance(content, str):
        return content
    parts: list[dict[str, Any]] = []
    for item in content:
        if isinstance(item, str):
            parts.append({"type": "text", "text": item})
        elif isinstance(item, pm.TextContent):
            parts.append({"type": "text", "text": item.content})
        elif isinstance(item, pm.ImageUrl):
            parts.append({"type": "image", "url": item.url})
        elif isinstance(item, pm.DocumentUrl):
            parts.append({"type": "document", "url": item.url})
        elif isinstance(item, pm.BinaryContent) and (item.is_image or item.is_document):
            kind = "image" if item.is_image else "document"
            data = base64.b64encode(item.data).decode("ascii")
            parts.append({"type": kind, "media_type": item.media_type, "data": data})
        else:
            kind = getattr(item, "kind", type(item).__name__)
            _warn_unknown(f"user content {kind}")
            parts.append({"type": "text", "text": f"[{kind}]"})
    return parts


def part_to_ir(part: pm.ModelRequestPart) -> Message:
    """The IR message of one request part (without the slot)."""
    if isinstance(part, pm.SystemPromptPart):
        return {"role": "system", "content": part.content}
    if isinstance(part, pm.UserPromptPart):
        return cast(Message, {"role": "user", "content": _user_content(part.content)})
    if isinstance(part, pm.BaseToolReturnPart):
        return {"role": "tool", "tool_call_id": part.tool_call_id, "content": _tool_text(part)}
    if isinstance(part, pm.RetryFeedbackPart):
        return {"role": "user", "content": part.model_response()}
    legacy = getattr(pm, "RetryPromptPart", None)
    if legacy is not None and isinstance(part, legacy):
        if part.tool_name is not None:
            return {
                "role": "tool",
                "tool_call_id": part.tool_call_id,
                "content": part.model_response(),
            }
        return {"role": "user", "content": part.model_response()}
    kind = str(getattr(part, "part_kind", type(part).__name__))
    _warn_unknown(kind)
    return {"role": "user", "content": f"[{kind}]"}


def _tool_text(part: pm.BaseToolReturnPart[Any]) -> str:
    if isinstance(part.content, str):
        return part.content
    return part.model_response_str()


def response_to_ir(response: pm.ModelResponse) -> Message:
    """The IR assistant message of a model response (without the slot)."""
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    thoughts: list[str] = []
    signature: str | None = None
    for part in response.parts:
        if isinstance(part, pm.TextPart):
            texts.append(part.content)
        elif isinstance(part, pm.ToolCallPart):
            arguments = part.args_as_json_str()
            function = {"name": part.tool_name, "arguments": arguments}
            calls.append({"id": part.tool_call_id, "type": "function", "function": function})
        elif isinstance(part, pm.ThinkingPart):
            thoughts.append(part.content)
            signature = signature or part.signature
        else:
            _warn_unknown(str(getattr(part, "part_kind", type(part).__name__)))
    message: dict[str, Any] = {"role": "assistant", "content": "".join(texts) if texts else None}
    if calls:
        message["tool_calls"] = calls
    if thoughts:
        thinking: dict[str, Any] = {"thinking": "\n\n".join(thoughts)}
        if signature is not None:
            thinking["signature"] = signature
        message["thinking"] = thinking
    return cast(Message, message)


def to_ir(messages: Iterable[pm.ModelMessage]) -> list[Message]:
    """The IR of pydantic-ai messages: one message per request part, one per response, each
    with the `pydantic_ai` slot that lets `from_ir` rebuild the original exactly."""
    out: list[Message] = []
    for message in messages:
        out.extend(message_to_ir(message))
    return out


def message_to_ir(message: pm.ModelMessage) -> list[Message]:
    """The IR messages of one pydantic-ai message (see `to_ir`)."""
    dumped = _dump(message)
    if isinstance(message, pm.ModelResponse):
        ir: dict[str, Any] = dict(response_to_ir(message))
        ir[SLOT] = _slot({"response": dumped})
        return [cast(Message, ir)]
    parts = dumped.pop("parts")
    out: list[Message] = []
    for index, part in enumerate(message.parts):
        item: dict[str, Any] = dict(part_to_ir(part))
        item[SLOT] = _slot({"request": dumped, "part": parts[index], "index": index})
        out.append(cast(Message, item))
    return out


def _slot(data: dict[str, Any]) -> str:
    """The slot's value: compact JSON text, so the chef compares and copies one string."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


def _read_slot(value: Any) -> Mapping[str, Any] | None:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return None
    return value if isinstance(value, Mapping) else None


def _visible(message: Mapping[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in message.items() if key != SLOT and key != "pinned"}


def _patched_request_part(part: pm.ModelRequestPart, ir: Mapping[str, Any]) -> pm.ModelRequestPart:
    """`part` with what the model sees replaced by the IR's (content, call id)."""
    if isinstance(part, pm.BaseToolReturnPart):
        call_id = ir.get("tool_call_id", part.tool_call_id)
        fields: dict[str, Any] = {"content": content_text(ir), "tool_call_id": call_id}
        changed: Any = dataclasses.replace(part, **fields)
        return cast(pm.ModelRequestPart, changed)
    if isinstance(part, pm.SystemPromptPart | pm.UserPromptPart) and isinstance(
        ir.get("content"), str
    ):
        return dataclasses.replace(part, content=ir["content"])
    return fresh_request_part(ir)


def fresh_request_part(ir: Mapping[str, Any]) -> pm.ModelRequestPart:
    """A new request part for an IR message contextchef wrote (a summary, a notice)."""
    role = ir["role"]
    if role == "tool":
        return pm.ToolReturnPart(
            tool_name=str(ir.get("name") or "tool"),
            content=content_text(ir),
            tool_call_id=ir["tool_call_id"],
        )
    if role == "system":
        return pm.SystemPromptPart(content_text(ir))
    return pm.UserPromptPart(_from_user_content(ir.get("content")))


def _from_user_content(content: Any) -> str | list[pm.UserContent]:
    if not isinstance(content, list):
        return content if isinstance(content, str) else ""
    items: list[pm.UserContent] = []
    for part in content:
        if part["type"] == "text":
            items.append(part["text"])
        elif "url" in part:
            url_type = pm.ImageUrl if part["type"] == "image" else pm.DocumentUrl
            items.append(url_type(url=part["url"]))
        elif "data" in part:
            data = base64.b64decode(part["data"])
            items.append(pm.BinaryContent(data=data, media_type=part["media_type"]))
        else:
            items.append(str(part.get("text", "")))
    return items


def fresh_response(ir: Mapping[str, Any], base: pm.ModelResponse | None = None) -> pm.ModelResponse:
    """A response holding the IR assistant message's thinking, text and tool calls (keeping the
    rest of `base`, when given)."""
    parts: list[pm.ModelResponsePart] = []
    thinking = ir.get("thinking")
    if isinstance(thinking, Mapping):
        parts.append(pm.ThinkingPart(thinking["thinking"], signature=thinking.get("signature")))
    text = content_text(ir)
    if text:
        parts.append(pm.TextPart(text))
    for call in ir.get("tool_calls") or ():
        function = call["function"]
        parts.append(pm.ToolCallPart(function["name"], function["arguments"], call["id"]))
    if base is None:
        return pm.ModelResponse(parts=parts)
    return dataclasses.replace(base, parts=parts)


def _load(dumped: Mapping[str, Any]) -> pm.ModelMessage:
    return _MESSAGES.validate_python([dumped])[0]


def from_ir(messages: Iterable[Mapping[str, Any]]) -> list[pm.ModelMessage]:
    """pydantic-ai messages for IR messages: those `to_ir` made come back exactly (with the
    IR's changes applied: an offloaded tool result, a repaired call id), consecutive parts of
    one request back in one `ModelRequest`; others (summaries, notices) become new parts."""
    out: list[pm.ModelMessage] = []
    group: list[pm.ModelRequestPart] = []
    envelope: Mapping[str, Any] | None = None
    last_index = -1

    def flush() -> None:
        nonlocal group, envelope
        if group:
            if envelope is None:
                out.append(pm.ModelRequest(parts=group))
            else:
                base = cast(pm.ModelRequest, _load({**envelope, "parts": []}))
                out.append(dataclasses.replace(base, parts=group))
        group, envelope = [], None

    for ir in messages:
        slot = _read_slot(ir.get(SLOT))
        if ir["role"] == "assistant":
            flush()
            base = _load(slot["response"]) if isinstance(slot, Mapping) else None
            if isinstance(base, pm.ModelResponse) and _visible(response_to_ir(base)) == _visible(
                ir
            ):
                out.append(base)
            else:
                out.append(fresh_response(ir, base if isinstance(base, pm.ModelResponse) else None))
            continue
        if isinstance(slot, Mapping) and "part" in slot:
            index = int(slot["index"])
            if slot["request"] != envelope or index <= last_index:
                flush()
                envelope = slot["request"]
            last_index = index
            loaded = _load({**slot["request"], "parts": [slot["part"]]})
            part = cast(pm.ModelRequest, loaded).parts[0]
            if _visible(part_to_ir(part)) != _visible(ir):
                part = _patched_request_part(part, ir)
            group.append(part)
            continue
        if envelope is not None:
            flush()
        last_index = -1
        group.append(fresh_request_part(ir))
    flush()
    return out
