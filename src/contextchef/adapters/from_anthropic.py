"""Import a native Anthropic Messages history (`MessageParam` dicts) into the message IR.

Accepted: `messages` as the Messages API takes them (string or block content), including the
SDK's pydantic objects (a `Message` response, or its `content` blocks appended as they came);
`system` as a string or a list of text blocks. The result comes back as
`ImportedHistory(system, history, fixes)`, converted as it was given: a lone reply whose tool
results come later is not completed with placeholders (the chef repairs the whole history it
holds, and reports it). `repair=True` runs `ensure_valid_history` here too, each fix returned in
`fixes` and logged as a warning, so the repairs are never silent.

Mapping:

- `tool_result` blocks become `tool` messages, in order, before the rest of their user turn;
- `tool_use` blocks become `tool_calls` whose `arguments` are the canonical JSON of `input`:
  `json.dumps(input, ensure_ascii=False, separators=(",", ":"), sort_keys=True)`;
- `thinking`, `redacted_thinking` and the beta `compaction` block (kept verbatim in
  `anthropic_compaction`; the message is pinned, since it stands for the history it replaced)
  are captured. An assistant message the IR cannot hold as one message (two thinking blocks,
  thinking after text) is split in two; the Anthropic target merges them back into one turn;
- images and documents become attachment parts (a `content` document becomes a text document);
- `cache_control` on any block of a message sets `_cache_breakpoint` on the IR message holding
  it (the Anthropic target puts it back on that message's last block);
- system blocks become one system message each; a `system`-role message stays in the history.

Lost on the way: `is_error` on tool results, citations, document `context`. Blocks with no IR
equivalent (server tools, search results, file-id sources) raise `MessageError` naming the
message and block.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Mapping
from typing import Any, cast

from contextchef.adapters.base import sorted_keys
from contextchef.adapters.importing import ImportedHistory, finish
from contextchef.errors import MessageError
from contextchef.messages import Message

logger = logging.getLogger("contextchef.adapters.from_anthropic")

__all__ = ["from_anthropic"]

# The order the Anthropic target emits an assistant's blocks in; a block of a lower rank than
# one already placed starts a new IR message.
_RANK = {"compaction": 0, "thinking": 1, "redacted_thinking": 2, "tool_use": 4}
_CONTENT_RANK = 3
_SINGLE = (0, 1)  # ranks an IR message holds at most once


def _plain(value: Any) -> Any:
    """A dict for an SDK pydantic object, the value itself otherwise."""
    dump = getattr(value, "model_dump", None)
    return dump(exclude_none=True) if callable(dump) else value


def _field(block: Mapping[str, Any], key: str, index: int | None, field: str) -> Any:
    if key not in block:
        raise MessageError(f"a {block.get('type')!r} block needs {key!r}", index=index, field=field)
    return block[key]


def _blocks(content: Any, index: int | None, field: str) -> list[dict[str, Any]]:
    if isinstance(content, Mapping) or not isinstance(content, Iterable):
        raise MessageError("content must be a string or a list of blocks", index=index, field=field)
    blocks = [_plain(block) for block in content]
    for at, block in enumerate(blocks):
        if not isinstance(block, Mapping):
            where = f"{field}[{at}]"
            raise MessageError("a content block must be a dict", index=index, field=where)
    return blocks


def _source_part(
    kind: str, block: Mapping[str, Any], index: int | None, field: str
) -> dict[str, Any]:
    source = _field(block, "source", index, field)
    source_type = source.get("type")
    part: dict[str, Any] = {"type": kind}
    if source_type == "base64":
        part["media_type"] = source.get("media_type")
        part["data"] = source.get("data")
    elif source_type == "url":
        part["url"] = source.get("url")
    elif source_type == "text" and kind == "document":
        part["media_type"] = "text/plain"
        part["text"] = source.get("data")
    elif source_type == "content" and kind == "document":
        inner = source.get("content")
        if isinstance(inner, str):
            part["text"] = inner
        else:
            blocks = _blocks(inner, index, field + ".source.content")
            part["text"] = "\n\n".join(b["text"] for b in blocks if b.get("type") == "text")
        part["media_type"] = "text/plain"
    else:
        raise MessageError(
            f"{kind} source type {source_type!r} has no equivalent in the message IR",
            index=index,
            field=field,
        )
    if kind == "document" and isinstance(block.get("title"), str):
        part["filename"] = block["title"]
    return part


def _part(block: Mapping[str, Any], index: int | None, field: str) -> dict[str, Any]:
    kind = block.get("type")
    if kind == "text":
        return {"type": "text", "text": _field(block, "text", index, field)}
    if kind in ("image", "document"):
        return _source_part(kind, block, index, field)
    raise MessageError(
        f"Anthropic block type {kind!r} has no equivalent in the message IR",
        index=index,
        field=field,
    )


def _parts(content: Any, index: int | None, field: str) -> list[dict[str, Any]]:
    blocks = _blocks(content, index, field)
    return [_part(block, index, f"{field}[{at}]") for at, block in enumerate(blocks)]


def _content(parts: list[dict[str, Any]], empty: str | None) -> Any:
    """Parts as IR content: a lone text part becomes a plain string."""
    if not parts:
        return empty
    if len(parts) == 1 and parts[0]["type"] == "text":
        return parts[0]["text"]
    return parts


def _user(content: Any, index: int) -> list[Message]:
    if isinstance(content, str):
        return [{"role": "user", "content": content}]
    out: list[Message] = []
    parts: list[dict[str, Any]] = []
    marked = False
    for at, block in enumerate(_blocks(content, index, "content")):
        field = f"content[{at}]"
        if block.get("type") != "tool_result":
            parts.append(_part(block, index, field))
            marked = marked or bool(block.get("cache_control"))
            continue
        result = block.get("content", "")
        if not isinstance(result, str):
            result = _parts(result, index, field + ".content")  # a list stays a list
        message: Message = {
            "role": "tool",
            "tool_call_id": _field(block, "tool_use_id", index, field),
            "content": result,
        }
        if block.get("cache_control"):
            message["_cache_breakpoint"] = True
        out.append(message)
    if parts or not out:
        user: Message = {"role": "user", "content": _content(parts, "")}
        if marked:
            user["_cache_breakpoint"] = True
        out.append(user)
    return out


def _arguments(value: Any) -> str:
    return json.dumps(
        {} if value is None else value, ensure_ascii=False, separators=(",", ":"), sort_keys=True
    )


def _assistant(content: Any, index: int) -> list[Message]:
    if isinstance(content, str):
        return [{"role": "assistant", "content": content}]
    out: list[dict[str, Any]] = []
    message: dict[str, Any] = {}
    parts: list[dict[str, Any]] = []
    level = -1
    for at, block in enumerate(_blocks(content, index, "content")):
        field = f"content[{at}]"
        kind = block.get("type")
        rank = _RANK.get(str(kind), _CONTENT_RANK)
        split = not out or rank < level or (rank == level and rank in _SINGLE)
        if split and "tool_calls" in message:
            if rank != _CONTENT_RANK:
                raise MessageError(
                    f"a {kind!r} block after a tool_use block in one assistant message cannot "
                    "be imported: an IR assistant message keeps its tool calls last",
                    index=index,
                    field=field,
                )
            split = False  # text after a tool call: kept, ahead of the calls
        if split:
            message, parts = {"role": "assistant"}, []
            out.append(message)
            message["content"] = parts
        level = max(level, rank) if not split else rank
        if block.get("cache_control"):
            message["_cache_breakpoint"] = True
        if kind == "compaction":
            message["anthropic_compaction"] = sorted_keys(
                {k: v for k, v in block.items() if k != "cache_control"}
            )
            message["pinned"] = True
        elif kind == "thinking":
            thinking = {"thinking": _field(block, "thinking", index, field)}
            if isinstance(block.get("signature"), str):
                thinking["signature"] = block["signature"]
            message["thinking"] = thinking
        elif kind == "redacted_thinking":
            data = _field(block, "data", index, field)
            message.setdefault("redacted_thinking", []).append({"data": data})
        elif kind == "tool_use":
            function = {
                "name": _field(block, "name", index, field),
                "arguments": _arguments(block.get("input")),
            }
            call = {"id": _field(block, "id", index, field), "type": "function"}
            message.setdefault("tool_calls", []).append({**call, "function": function})
        else:
            parts.append(_part(block, index, field))
    for message in out:
        message["content"] = _content(message["content"], None if "tool_calls" in message else "")
    return cast(list[Message], out) if out else [{"role": "assistant", "content": ""}]


def _system_text(content: Any, index: int | None, field: str) -> tuple[Any, bool]:
    """System content as IR content, and whether any block carried `cache_control`."""
    if isinstance(content, str):
        return content, False
    blocks = _blocks(content, index, field)
    if any(block.get("type") != "text" for block in blocks):
        raise MessageError("system content holds text blocks only", index=index, field=field)
    parts = [{"type": "text", "text": _field(b, "text", index, field)} for b in blocks]
    return _content(parts, ""), any(b.get("cache_control") for b in blocks)


def _system_messages(system: Any) -> list[Message]:
    if system is None:
        return []
    if isinstance(system, str):
        return [{"role": "system", "content": system}] if system else []
    out: list[Message] = []
    for at, block in enumerate(_blocks(system, None, "system")):
        content, marked = _system_text([block], None, f"system[{at}]")
        message: Message = {"role": "system", "content": content}
        if marked:
            message["_cache_breakpoint"] = True
        out.append(message)
    return out


def from_anthropic(
    messages: Iterable[Any], system: str | Iterable[Any] | None = None, *, repair: bool = False
) -> ImportedHistory:
    """Convert an Anthropic `messages` list (and `system`) into IR system messages and history.

    Raises `MessageError` naming the message index and block for content the IR cannot hold.
    `repair=True` also runs `ensure_valid_history` (each fix in `fixes`, logged as a warning).
    """
    history: list[Message] = []
    for index, raw in enumerate(messages):
        message = _plain(raw)
        if not isinstance(message, Mapping):
            raise MessageError(f"a message must be a dict, got {type(raw).__name__}", index=index)
        role = message.get("role")
        content = message.get("content", "")
        if role == "user":
            history.extend(_user(content, index))
        elif role == "assistant":
            history.extend(_assistant(content, index))
        elif role == "system":
            text, marked = _system_text(content, index, "content")
            imported: Message = {"role": "system", "content": text}
            if marked:
                imported["_cache_breakpoint"] = True
            history.append(imported)
        else:
            raise MessageError(
                f"unknown role {role!r}; Anthropic messages are 'user' or 'assistant'",
                index=index,
                field="role",
            )
    return finish(_system_messages(system), history, repair=repair, logger=logger)
