"""The recall path: what the model reads when it opens something that left its window.

Overflow archives an evicted span as versioned JSON (`{"messages": [...], "version": 1}`, see
`contextchef.store.archive`). Read back raw, that is hard to follow, so
`render_recalled` turns it into a transcript: a header, then one block per message with the
speaker, its text, `[thinking]`, `[tool call] name(args)`, `[tool result for name]` and
`[attachment: …]` lines. Any other content (an offloaded tool output, a note) passes through
unchanged. Rendering never fails: anything unexpected inside the span is shown as JSON.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from contextchef import prompts
from contextchef.store.archive import archived_messages

__all__ = ["render_recalled", "render_transcript"]


def render_recalled(content: str) -> str:
    """An archived span as a readable transcript; anything else unchanged."""
    messages = archived_messages(content)
    return content if messages is None else render_transcript(messages)


def render_transcript(messages: Sequence[Any]) -> str:
    """The transcript of `messages` (IR message dicts)."""
    names: dict[str, str] = {}
    for message in messages:
        for call in _tool_calls(message):
            call_id, name = call.get("id"), _function(call).get("name")
            if isinstance(call_id, str) and isinstance(name, str):
                names[call_id] = name
    blocks = [prompts.archived_span_header(len(messages))]
    blocks.extend(_render_message(message, names) for message in messages)
    return "\n\n".join(blocks)


def _dump(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def _function(call: Mapping[str, Any]) -> Mapping[str, Any]:
    function = call.get("function")
    return function if isinstance(function, Mapping) else {}


def _tool_calls(message: object) -> list[Mapping[str, Any]]:
    if not isinstance(message, Mapping):
        return []
    calls = message.get("tool_calls")
    if not isinstance(calls, list):
        return []
    return [call for call in calls if isinstance(call, Mapping)]


def _render_message(message: object, names: Mapping[str, str]) -> str:
    if not isinstance(message, Mapping):
        return _dump(message)
    role = message.get("role")
    lines: list[str] = []
    if role == "tool":
        call_id = message.get("tool_call_id")
        name = message.get("name")
        if not isinstance(name, str):
            name = names.get(call_id) if isinstance(call_id, str) else None
        lines.append(prompts.transcript_tool_result(name))
    else:
        lines.append(prompts.transcript_speaker(role if isinstance(role, str) else "message"))
    thinking = message.get("thinking")
    if isinstance(thinking, Mapping) and isinstance(thinking.get("thinking"), str):
        lines.append(prompts.TRANSCRIPT_THINKING)
        lines.append(thinking["thinking"])
    lines.extend(_content_lines(message.get("content")))
    for call in _tool_calls(message):
        function = _function(call)
        name = function.get("name")
        arguments = function.get("arguments")
        lines.append(
            prompts.transcript_tool_call(
                name if isinstance(name, str) else "?",
                arguments if isinstance(arguments, str) else _dump(arguments),
            )
        )
    return "\n".join(lines)


def _content_lines(content: object) -> list[str]:
    if content is None:
        return []
    if isinstance(content, str):
        return [content] if content else []
    if not isinstance(content, list):
        return [_dump(content)]
    lines: list[str] = []
    for part in content:
        if not isinstance(part, Mapping):
            lines.append(_dump(part))
        elif part.get("type") == "text" and isinstance(part.get("text"), str):
            lines.append(part["text"])
        elif part.get("type") in ("image", "document"):
            lines.append(prompts.transcript_attachment(str(part["type"]), _label(part)))
        else:
            lines.append(_dump(part))
    return lines


def _label(part: Mapping[str, Any]) -> str | None:
    """The attachment's file name, else its URL (never inline `data:`), else its media type."""
    for key in ("filename", "url", "media_type"):
        value = part.get(key)
        if isinstance(value, str) and value and not value.startswith("data:"):
            return value
    return None
