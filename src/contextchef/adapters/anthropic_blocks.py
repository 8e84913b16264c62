"""One IR message as Anthropic content blocks: `convert(message)` is its piece,
`{"content": blocks, "role": role}` (see `anthropic_turns`, which merges pieces into turns).

A cold compile converts every message of the history once, so the common shapes (text content,
a tool result holding a string, an assistant turn of text and tool calls) are read inline, with
no helper call per block; the rarer ones (attachments, thinking, compaction) take the general
helpers. Tool-call arguments are parsed by `json_args.loads_sorted_fast` (orjson when exact).
What Anthropic cannot take raises `Unsupported`, which the adapter re-raises as `CompileError`
naming the message.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import re
from typing import Any

from contextchef._jsonvalue import loads_sorted
from contextchef.adapters.anthropic_turns import Piece, text_block
from contextchef.adapters.base import sorted_keys
from contextchef.adapters.json_args import loads_sorted_fast
from contextchef.messages import Message

__all__ = ["Block", "Unsupported", "convert", "has_text", "parts", "wire_id"]

Block = dict[str, Any]
_IMAGE_TYPES = frozenset(("image/jpeg", "image/png", "image/gif", "image/webp"))


class Unsupported(Exception):
    """Raised by a conversion; `compile` re-raises it as `CompileError` with the index."""


def has_text(text: str) -> bool:
    return bool(text) and not text.isspace()


def _taken(call_id: str) -> bool:
    """Whether Anthropic takes `call_id` as it is (`^[A-Za-z0-9_-]+$`), without a regex: an
    ASCII identifier once `-` is `_` and a letter leads."""
    return call_id != "" and call_id.isascii() and ("a" + call_id.replace("-", "_")).isidentifier()


def wire_id(call_id: str) -> str:
    """`call_id` as Anthropic accepts it: itself when it matches `^[A-Za-z0-9_-]+$`, else with
    every other character made `_` and a short hash against clashes."""
    if _taken(call_id):
        return call_id
    digest = hashlib.blake2s(call_id.encode(), digest_size=4).hexdigest()
    return f"{re.sub(r'[^A-Za-z0-9_-]', '_', call_id)}_{digest}"


def _image(part: Any) -> Block:
    if "url" in part:
        return {"source": {"type": "url", "url": part["url"]}, "type": "image"}
    media_type = part["media_type"]
    if media_type not in _IMAGE_TYPES:
        raise Unsupported(
            f"Anthropic reads JPEG, PNG, GIF and WebP images, not {media_type!r}; convert the "
            "image first"
        )
    source = {"data": part["data"], "media_type": media_type, "type": "base64"}
    return {"source": source, "type": "image"}


def _document_source(part: Any) -> dict[str, Any]:
    if "url" in part:
        return {"type": "url", "url": part["url"]}
    if "text" in part:
        return {"data": part["text"], "media_type": "text/plain", "type": "text"}
    media_type = part["media_type"]
    if media_type == "application/pdf":
        return {"data": part["data"], "media_type": media_type, "type": "base64"}
    if media_type.startswith("text/"):
        try:
            text = base64.b64decode(part["data"], validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError) as exc:
            raise Unsupported(f"a {media_type} document is not base64 UTF-8 text: {exc}") from None
        return {"data": text, "media_type": "text/plain", "type": "text"}
    raise Unsupported(
        f"Anthropic reads PDF and plain-text documents, not {media_type!r}; extract its text first"
    )


def _document(part: Any) -> Block:
    block: Block = {"source": _document_source(part)}
    if "filename" in part:
        block["title"] = part["filename"]
    block["type"] = "document"
    return block


def parts(content: Any) -> list[Block]:
    """Text and attachment blocks of a content value; empty text is left out."""
    if content is None:
        return []
    if isinstance(content, str):
        return [text_block(content)] if has_text(content) else []
    blocks: list[Block] = []
    for part in content:
        kind = part["type"]
        if kind == "text":
            if has_text(part["text"]):
                blocks.append(text_block(part["text"]))
        elif kind == "image":
            blocks.append(_image(part))
        else:
            blocks.append(_document(part))
    return blocks


def _arguments(call: Any) -> dict[str, Any]:
    """A tool call's arguments as a JSON object, keys sorted; `Unsupported` otherwise."""
    function = call["function"]
    raw = function["arguments"]
    try:
        arguments = {} if not raw or raw.isspace() else loads_sorted_fast(raw, loads_sorted)
    except json.JSONDecodeError as exc:
        problem = f"arguments are not valid JSON ({exc.msg} at character {exc.pos})"
        raise Unsupported(f"tool call {call['id']!r} ({function['name']}): {problem}") from None
    if type(arguments) is not dict:
        problem = f"arguments must be a JSON object, got {type(arguments).__name__}"
        raise Unsupported(f"tool call {call['id']!r} ({function['name']}): {problem}")
    return arguments


def _leading_blocks(message: Message) -> list[Block]:
    """An assistant message's blocks before its content: compaction, thinking, redacted."""
    blocks: list[Block] = []
    compaction = message.get("anthropic_compaction")
    if compaction is not None:
        blocks.append(sorted_keys(compaction))
    thinking = message.get("thinking")
    if thinking is not None and thinking.get("signature"):
        signature, text = thinking["signature"], thinking["thinking"]
        blocks.append({"signature": signature, "thinking": text, "type": "thinking"})
    for redacted in message.get("redacted_thinking") or ():
        blocks.append({"data": redacted["data"], "type": "redacted_thinking"})
    return blocks


def _assistant_blocks(message: Message) -> list[Block]:
    if "anthropic_compaction" in message or "thinking" in message or "redacted_thinking" in message:
        blocks = _leading_blocks(message)
    else:
        blocks = []
    content = message.get("content")
    if isinstance(content, str):
        if content and not content.isspace():
            blocks.append({"text": content, "type": "text"})
    elif content:
        blocks.extend(parts(content))
    calls = message.get("tool_calls")
    if calls:
        append = blocks.append
        for call in calls:
            function, call_id = call["function"], call["id"]
            raw = function["arguments"]
            # the common case inline: an object parsed exactly, an id Anthropic takes as it is
            try:
                arguments = loads_sorted_fast(raw, loads_sorted) if raw[:1] == "{" else None
            except json.JSONDecodeError:
                arguments = None
            if type(arguments) is not dict:
                arguments = _arguments(call)
            if not _taken(call_id):
                call_id = wire_id(call_id)
            append(
                {"id": call_id, "input": arguments, "name": function["name"], "type": "tool_use"}
            )
    return blocks


def _tool_result(message: Message) -> Block:
    content: Any = message.get("content")
    if isinstance(content, str):
        content = content if content and not content.isspace() else None
    elif content:
        content = parts(content)
    call_id = wire_id(message["tool_call_id"])
    if content:
        return {"content": content, "tool_use_id": call_id, "type": "tool_result"}
    return {"tool_use_id": call_id, "type": "tool_result"}


def _system_blocks(message: Message) -> list[Block]:
    content = message.get("content")
    if isinstance(content, list):
        for part in content:
            if part["type"] != "text":
                raise Unsupported(
                    f"Anthropic's system prompt holds text only; move the {part['type']} "
                    "attachment into a user message"
                )
    return parts(content)


def convert(message: Message) -> Piece:
    """The piece of `message`: its blocks and the role of the turn it belongs to (a tool
    result speaks in a user turn; a system piece is hoisted into `system`)."""
    role = message["role"]
    if role == "tool":
        content = message.get("content")
        call_id = message["tool_call_id"]
        if type(content) is str and content and not content.isspace() and _taken(call_id):
            result = {"content": content, "tool_use_id": call_id, "type": "tool_result"}
            return {"content": [result], "role": "user"}  # the commonest piece, inline
        return {"content": [_tool_result(message)], "role": "user"}
    if role == "assistant":
        return {"content": _assistant_blocks(message), "role": role}
    if role == "user":
        content = message.get("content")
        if isinstance(content, str):
            if content and not content.isspace():
                return {"content": [{"text": content, "type": "text"}], "role": role}
            return {"content": [], "role": role}
        return {"content": parts(content), "role": role}
    return {"content": _system_blocks(message), "role": role}
