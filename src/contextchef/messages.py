"""The message IR: OpenAI-chat-shaped dicts plus a few flags of ours.

A message is a plain dict, so users keep whatever history they already store::

    {"role": "user", "content": "hi"}
    {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function",
        "function": {"name": "ls", "arguments": "{}"}}]}
    {"role": "tool", "tool_call_id": "c1", "content": "a.txt"}

Our flags: `pinned` (survives every overflow strategy), `_cache_breakpoint` (a provider cache
breakpoint after this message), `thinking` (reasoning text with an optional signature),
`redacted_thinking` (opaque reasoning blobs), and provider passthrough slots named after their
provider. Attachments are content parts of type `image` or `document`.

Passthrough slots carry what a provider needs to see again, verbatim, and other targets ignore:

- `openai_reasoning` (assistant): the Responses API reasoning items (`{"type": "reasoning",
  "id", "summary", "encrypted_content"?…}`) that preceded this message's output; re-sent directly
  before it, because the API pairs each reasoning item with the item that follows it.
- `openai_phase` (assistant): the Responses API `phase` label (`"commentary"` or
  `"final_answer"`), which the API asks callers to resend on assistant messages.
- `gemini_thought_signature` (assistant, base64): the signature Gemini attached to the message's
  text part; a tool call carries its own `gemini_thought_signature` for its `function_call` part.
- `anthropic_compaction` (assistant): the server-side compaction block of an Anthropic reply,
  sent back first in its assistant turn by the Anthropic target.

`validate_message` checks one message at the boundary and names the index and field at fault
(the flags must be booleans; tool-call arguments, when they parse as JSON, must be strict JSON);
`group_turns` splits a history into turns (an assistant with tool calls and its results form one
turn); `ensure_valid_history` (in `_repair`) repairs what providers reject and reports every fix.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, NotRequired, Required, TypedDict, cast

from contextchef._jsonvalue import MAX_DEPTH, NotJson, strict_json
from contextchef._repair import HistoryFix, ensure_valid_history
from contextchef.errors import MessageError

__all__ = [
    "ROLES",
    "DocumentPart",
    "FunctionCall",
    "HistoryFix",
    "ImagePart",
    "Message",
    "RedactedThinking",
    "Role",
    "TextPart",
    "Thinking",
    "ToolCall",
    "Turn",
    "arguments_problem",
    "content_text",
    "ensure_valid_history",
    "group_turns",
    "validate_history",
    "validate_message",
]

Role = Literal["system", "user", "assistant", "tool"]
ROLES: frozenset[str] = frozenset(("system", "user", "assistant", "tool"))


class TextPart(TypedDict):
    """Plain text inside a list of content parts."""

    type: Literal["text"]
    text: str


class ImagePart(TypedDict, total=False):
    """An image attachment: base64 `data` with its `media_type`, or a `url`."""

    type: Required[Literal["image"]]
    media_type: str
    data: str
    url: str
    filename: str


class DocumentPart(TypedDict, total=False):
    """A document attachment: base64 `data`, a `url`, or inline `text`, with a `media_type`."""

    type: Required[Literal["document"]]
    media_type: str
    data: str
    url: str
    text: str
    filename: str


ContentPart = TextPart | ImagePart | DocumentPart


class FunctionCall(TypedDict):
    """The function a tool call invokes; `arguments` is a JSON object encoded as a string."""

    name: str
    arguments: str


class ToolCall(TypedDict, total=False):
    """One tool call of an assistant message, in OpenAI's shape."""

    id: Required[str]
    type: Literal["function"]
    function: Required[FunctionCall]
    gemini_thought_signature: str


class Thinking(TypedDict, total=False):
    """Reasoning text the provider returned, with the signature it needs to see it again."""

    thinking: Required[str]
    signature: str


class RedactedThinking(TypedDict):
    """Encrypted reasoning the provider returned; passed back verbatim where supported."""

    data: str


class Message(TypedDict, total=False):
    """One message of the IR. Only `role` is always required."""

    role: Required[Role]
    content: str | list[ContentPart] | None
    name: str
    tool_calls: list[ToolCall]
    tool_call_id: str
    pinned: bool
    _cache_breakpoint: bool
    thinking: Thinking
    redacted_thinking: list[RedactedThinking]
    openai_reasoning: list[dict[str, Any]]
    openai_phase: Literal["commentary", "final_answer"]
    gemini_thought_signature: str
    anthropic_compaction: dict[str, Any]
    refusal: NotRequired[str | None]


_PART_TYPES = frozenset(("text", "image", "document"))
_FOREIGN_PART_HINT = {
    "image_url": "an OpenAI image_url part; convert the history with from_openai()",
    "input_text": "an OpenAI Responses part; convert the history with from_openai_responses()",
    "tool_use": "an Anthropic block; convert the history with from_anthropic()",
    "tool_result": "an Anthropic block; convert the history with from_anthropic()",
    "file": "an OpenAI file part; convert the history with from_openai()",
}


def _fail(message: str, index: int | None, field: str) -> MessageError:
    return MessageError(message, index=index, field=field)


def _validate_part(part: object, index: int | None, at: int) -> None:
    field = f"content[{at}]"
    if not isinstance(part, Mapping):
        raise _fail(f"a content part must be a dict, got {type(part).__name__}", index, field)
    kind = part.get("type")
    if kind not in _PART_TYPES:
        hint = _FOREIGN_PART_HINT.get(str(kind))
        detail = f" ({hint})" if hint else ""
        raise _fail(
            f"unknown content part type {kind!r}{detail}; use 'text', 'image' or 'document'",
            index,
            field,
        )
    if kind == "text":
        if not isinstance(part.get("text"), str):
            raise _fail("a text part needs a string 'text'", index, field)
        return
    sources = [key for key in ("data", "url", "text") if isinstance(part.get(key), str)]
    if kind == "image" and "text" in sources:
        sources.remove("text")
    if len(sources) != 1:
        allowed = "'data' or 'url'" if kind == "image" else "'data', 'url' or 'text'"
        raise _fail(f"an {kind} part needs exactly one of {allowed}", index, field)
    if sources[0] == "data" and not isinstance(part.get("media_type"), str):
        raise _fail(f"an {kind} part with base64 'data' needs a 'media_type'", index, field)


def _validate_tool_calls(calls: object, index: int | None) -> None:
    if not isinstance(calls, list):
        raise _fail("tool_calls must be a list", index, "tool_calls")
    for at, call in enumerate(calls):
        field = f"tool_calls[{at}]"
        if not isinstance(call, Mapping):
            raise _fail("a tool call must be a dict", index, field)
        if not isinstance(call.get("id"), str) or not call["id"]:
            raise _fail("a tool call needs a non-empty string 'id'", index, field + ".id")
        function = call.get("function")
        if not isinstance(function, Mapping):
            raise _fail("a tool call needs a 'function' dict", index, field + ".function")
        if not isinstance(function.get("name"), str) or not function["name"]:
            raise _fail("a tool call needs a function name", index, field + ".function.name")
        if not isinstance(function.get("arguments"), str):
            raise _fail(
                "function arguments must be a JSON string (json.dumps the dict)",
                index,
                field + ".function.arguments",
            )
        _check_arguments(function["arguments"], index, field + ".function.arguments")


_EXPONENT = re.compile(r"[eE]\+?\d\d\d")
"""An exponent of three digits or more: the only way a JSON number overflows to infinity."""


class _NotFinite(ValueError):
    """A NaN or infinity met while parsing arguments."""


def _refuse_constant(name: str) -> float:
    raise _NotFinite(name)


def _finite_float(text: str) -> float:
    value = float(text)
    if value - value != 0.0:
        raise _NotFinite(text)
    return value


_STRICT_DECODER = json.JSONDecoder(parse_constant=_refuse_constant, parse_float=_finite_float)


def _check_arguments(raw: str, index: int | None, field: str) -> None:
    problem = arguments_problem(raw)
    if problem is not None:
        raise _fail(problem, index, field)


def arguments_problem(raw: str) -> str | None:
    """Why tool-call arguments that parse as JSON are not strict JSON (NaN, Infinity, 1e999, an
    integer beyond Python's int-to-str limit, nesting beyond `MAX_DEPTH`), else None: the
    Anthropic and Gemini targets parse them and would emit what `json.dumps(allow_nan=False)`
    rejects.

    A short string is parsed only when it could hold such a value (two substring tests and a
    regex); a long one is parsed outright, which costs less than scanning it with a regex.
    Arguments that are not JSON at all are left to the targets, which report them at compile."""
    short = len(raw) <= 2 * MAX_DEPTH  # too short to nest deeper, or to hold a 640-digit int
    if short and "NaN" not in raw and "Infinity" not in raw and not _EXPONENT.search(raw):
        return None
    try:
        value = _STRICT_DECODER.decode(raw)
        if raw.count("[") + raw.count("{") > MAX_DEPTH:
            strict_json(value)
    except json.JSONDecodeError:
        return None
    except _NotFinite as exc:
        return f"the arguments JSON holds {exc}, a number strict JSON does not have"
    except NotJson as exc:
        return exc.describe("the arguments JSON", "the arguments JSON")
    except RecursionError:
        return f"the arguments JSON is nested more than {MAX_DEPTH} levels deep"
    except ValueError as exc:  # int(): an integer longer than the int-to-str limit
        return f"the arguments JSON holds a number Python cannot read: {exc}"
    return None


def validate_message(message: object, index: int | None = None) -> Message:
    """Check one message against the IR and return it typed; raise `MessageError` if malformed."""
    if not isinstance(message, Mapping):
        hint = (
            "; convert SDK objects with from_openai(), from_anthropic(), from_gemini() or "
            "from_openai_responses()"
            if callable(getattr(message, "model_dump", None))
            else ""
        )
        raise MessageError(
            f"a message must be a dict, got {type(message).__name__}{hint}", index=index
        )
    role = message.get("role")
    if role not in ROLES:
        raise _fail(
            f"unknown role {role!r}; use 'system', 'user', 'assistant' or 'tool'", index, "role"
        )
    content = message.get("content")
    if isinstance(content, list):
        for at, part in enumerate(content):
            _validate_part(part, index, at)
    elif content is not None and not isinstance(content, str):
        raise _fail(
            f"content must be a string, a list of parts or None, got {type(content).__name__}",
            index,
            "content",
        )
    if role == "tool":
        call_id = message.get("tool_call_id")
        if not isinstance(call_id, str) or not call_id:
            raise _fail("a tool result needs a non-empty 'tool_call_id'", index, "tool_call_id")
    if "tool_calls" in message and message["tool_calls"] is not None:
        if role != "assistant":
            raise _fail("only assistant messages carry tool_calls", index, "tool_calls")
        _validate_tool_calls(message["tool_calls"], index)
    thinking = message.get("thinking")
    if thinking is not None and (
        not isinstance(thinking, Mapping) or not isinstance(thinking.get("thinking"), str)
    ):
        raise _fail("thinking must be a dict with a string 'thinking'", index, "thinking")
    redacted = message.get("redacted_thinking")
    if redacted is not None and (
        not isinstance(redacted, list)
        or not all(isinstance(r, Mapping) and isinstance(r.get("data"), str) for r in redacted)
    ):
        raise _fail("redacted_thinking must be a list of {'data': str}", index, "redacted_thinking")
    for flag in ("pinned", "_cache_breakpoint"):
        if flag in message and type(message[flag]) is not bool:
            raise _fail(f"{flag} must be True or False, got {message[flag]!r}", index, flag)
    _validate_passthrough(message, index)
    return cast(Message, message)


def _validate_passthrough(message: Mapping[str, Any], index: int | None) -> None:
    reasoning = message.get("openai_reasoning")
    if reasoning is not None and (
        not isinstance(reasoning, list) or not all(isinstance(r, Mapping) for r in reasoning)
    ):
        raise _fail("openai_reasoning must be a list of item dicts", index, "openai_reasoning")
    phase = message.get("openai_phase")
    if phase is not None and phase not in ("commentary", "final_answer"):
        raise _fail("openai_phase must be 'commentary' or 'final_answer'", index, "openai_phase")
    signature = message.get("gemini_thought_signature")
    if signature is not None and not isinstance(signature, str):
        raise _fail(
            "gemini_thought_signature must be a base64 string", index, "gemini_thought_signature"
        )
    compaction = message.get("anthropic_compaction")
    if compaction is not None and (
        not isinstance(compaction, Mapping) or compaction.get("type") != "compaction"
    ):
        raise _fail(
            "anthropic_compaction must be an Anthropic block dict with type 'compaction'",
            index,
            "anthropic_compaction",
        )
    for at, call in enumerate(message.get("tool_calls") or ()):
        signature = call.get("gemini_thought_signature")
        if signature is not None and not isinstance(signature, str):
            field = f"tool_calls[{at}].gemini_thought_signature"
            raise _fail("gemini_thought_signature must be a base64 string", index, field)


def validate_history(messages: Iterable[object]) -> list[Message]:
    """Validate every message; the error names the first bad message's index and field."""
    return [validate_message(message, index) for index, message in enumerate(messages)]


def content_text(message: Mapping[str, Any]) -> str:
    """The text of a message's content, with attachment parts left out."""
    content = message.get("content")
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return "".join(part["text"] for part in content if part.get("type") == "text")


@dataclass(frozen=True, slots=True)
class Turn:
    """A run of messages that must stay together: `start` and `stop` index the history."""

    start: int
    stop: int
    messages: tuple[Message, ...]

    @property
    def pinned(self) -> bool:
        return any(message.get("pinned") for message in self.messages)


def group_turns(history: Sequence[Message]) -> list[Turn]:
    """Split a history into turns: an assistant with tool calls owns the results that follow it.

    Every other message is a turn of its own, so a split between two turns never orphans a
    tool result from its call.
    """
    turns: list[Turn] = []
    index = 0
    count = len(history)
    while index < count:
        start = index
        message = history[index]
        index += 1
        if message["role"] == "assistant" and message.get("tool_calls"):
            while index < count and history[index]["role"] == "tool":
                index += 1
        turns.append(Turn(start, index, tuple(history[start:index])))
    return turns
