"""Building the pydantic-ai window from what the chef's compile kept (see `pydantic_ai`).

Two ways: when overflow changed nothing (the steady state of an agent loop), the window is the
messages as given — the same objects — with offloaded tool returns patched and the marked parts
replaced (`same_window`); otherwise every kept IR message is mapped back to its part and runs of
parts are regrouped into requests (`assemble`).
"""

from __future__ import annotations

import dataclasses
import operator
from collections.abc import Sequence
from typing import Any, cast

from contextchef.errors import MissingDependencyError
from contextchef.integrations._pydantic_ai_ir import from_ir
from contextchef.messages import Message, content_text

try:
    from pydantic_ai import messages as pm
except ImportError as exc:  # pragma: no cover - exercised by simulating the missing extra
    raise MissingDependencyError(exc.name or "pydantic-ai", "pydantic-ai") from exc

__all__ = [
    "MARKER",
    "Entry",
    "assemble",
    "fresh_parts",
    "is_marked",
    "marked",
    "rebuilt_part",
    "same_window",
    "tail_text",
]

MARKER = "contextchef"
"""The `SystemPromptPart.metadata` key marking the parts the processor added."""

Entry = tuple[pm.ModelMessage | None, int, object]
"""`(origin message, part index, part or message)`: one piece of the window being built."""


def is_marked(part: object) -> bool:
    """Whether `part` is one the processor added (and replaces on the next request)."""
    metadata = getattr(part, "metadata", None)
    return (
        isinstance(part, pm.SystemPromptPart) and isinstance(metadata, dict) and MARKER in metadata
    )


def marked(
    text: str, role: str, previous: dict[str, pm.SystemPromptPart], *, scope: str = "conversation"
) -> pm.SystemPromptPart:
    """A part carrying what the chef added; the one sent last time when its text is the same
    (so an unchanged history stays byte-identical, timestamps included)."""
    old = previous.get(role)
    if old is not None and old.content == text and old.scope == scope:
        return old
    return pm.SystemPromptPart(text, metadata={MARKER: role}, scope=scope)  # type: ignore[arg-type]


def rebuilt_part(message: Message) -> pm.ModelRequestPart:
    rebuilt = from_ir([message])[0]
    return cast(pm.ModelRequest, rebuilt).parts[0]


def fresh_parts(message: Message) -> list[object]:
    """Parts for a message the chef wrote (a summary, a notice): a response for an assistant
    message, request parts otherwise."""
    return list(from_ir([{key: value for key, value in message.items() if key != "pydantic_ai"}]))


def tail_text(history: Sequence[Message], assembled: Sequence[Message], index: int | None) -> str:
    """The text the chef stitched at the end (live state, tail memory, notices), or ""."""
    if index is None or index >= len(assembled):
        return ""
    stitched = assembled[index]
    if len(assembled) > len(history):
        return content_text(stitched)
    content = stitched.get("content")
    if isinstance(content, list):
        last: Any = content[-1]
        return str(last["text"]) if last.get("type") == "text" else ""
    before = content_text(history[index])
    text = content or ""
    return text[len(before) + 2 :] if before else text


def assemble(entries: list[Entry]) -> list[pm.ModelMessage]:
    """Group `(origin, part index, part or message)` entries back into messages: runs of request
    parts form one request (the original object when all its parts are there, unchanged)."""
    out: list[pm.ModelMessage] = []
    parts: list[pm.ModelRequestPart] = []
    sources: list[tuple[pm.ModelMessage | None, int]] = []

    def flush() -> None:
        if not parts:
            return
        origin = next((o for o, _ in sources if o is not None), None)
        if isinstance(origin, pm.ModelRequest) and intact(origin, parts, sources):
            out.append(origin)
        elif isinstance(origin, pm.ModelRequest):
            out.append(dataclasses.replace(origin, parts=list(parts)))
        else:
            out.append(pm.ModelRequest(parts=list(parts)))
        parts.clear()
        sources.clear()

    for origin, index, item in entries:
        if isinstance(item, pm.ModelResponse | pm.ModelRequest):
            flush()
            if isinstance(item, pm.ModelRequest):
                parts.extend(item.parts)
                sources.extend((None, -1) for _ in item.parts)
            else:
                out.append(item)
            continue
        known = next((o for o, _ in sources if o is not None), None)
        if origin is not None and known is not None and origin is not known:
            flush()
        parts.append(cast(pm.ModelRequestPart, item))
        sources.append((origin, index))
    flush()
    return out


def intact(
    origin: pm.ModelRequest,
    parts: Sequence[object],
    sources: Sequence[tuple[pm.ModelMessage | None, int]],
) -> bool:
    return len(parts) == len(origin.parts) and all(
        source is origin and part is origin.parts[index]
        for part, (source, index) in zip(parts, sources, strict=True)
    )


def same_window(
    messages: Sequence[pm.ModelMessage],
    patches: dict[int, dict[int, Any]],
    top: pm.SystemPromptPart | None,
    tail: pm.SystemPromptPart | None,
) -> list[pm.ModelMessage]:
    """The window when overflow kept every message: `messages` themselves, except those holding
    a patched part (`patches`: id(message) → part index → new part or response), an old marked
    part, or the place of a new one."""
    out: list[pm.ModelMessage] = []
    for at, message in enumerate(messages):
        changes = patches.get(id(message))
        if isinstance(message, pm.ModelResponse):
            out.append(changes[0] if changes else message)
            continue
        first = top if at == 0 else None
        if changes is None and first is None and not any(map(is_marked, message.parts)):
            out.append(message)
            continue
        parts: list[pm.ModelRequestPart] = []
        leading = True
        for index, part in enumerate(message.parts):
            if is_marked(part):
                continue
            if leading and first is not None and not isinstance(part, pm.SystemPromptPart):
                parts.append(first)
                leading = False
            parts.append(changes.get(index, part) if changes else part)
        if leading and first is not None:
            parts.append(first)
        if len(parts) == len(message.parts) and all(map(operator.is_, parts, message.parts)):
            out.append(message)  # the same parts as last time: the same message
        else:
            out.append(dataclasses.replace(message, parts=parts))
    if top is not None and not (messages and isinstance(messages[0], pm.ModelRequest)):
        out.insert(0, pm.ModelRequest(parts=[top]))
    if tail is not None:
        if out and isinstance(out[-1], pm.ModelRequest):
            out[-1] = dataclasses.replace(out[-1], parts=[*out[-1].parts, tail])
        else:
            out.append(pm.ModelRequest(parts=[tail]))
    return out
