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

`validate_message` checks one message at the boundary and names the index and field at fault;
`group_turns` splits a history into turns (an assistant with tool calls and its results form one
turn); `ensure_valid_history` repairs what providers reject and reports every fix.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, NotRequired, Required, TypedDict, cast

from contextchef import prompts
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


@dataclass(frozen=True, slots=True)
class HistoryFix:
    """One repair `ensure_valid_history` made: what it did, and to which message."""

    kind: Literal[
        "dropped_orphan_result",
        "added_missing_result",
        "moved_system_message",
        "added_leading_user",
    ]
    index: int
    detail: str


def ensure_valid_history(history: Sequence[Message]) -> tuple[list[Message], list[HistoryFix]]:
    """Repair what providers reject and say what was repaired.

    - a tool result that answers no open call of the assistant just before it (no such call, a
      call already answered, or a call of an earlier turn) is dropped;
    - a tool call with no result before the next user or assistant message gets a placeholder
      result right after the results it does have;
    - a system message between tool calls and their results moves to just after the results;
    - a first non-system message that is not a user message gets a placeholder user turn.

    `index` in each fix refers to the input history. The input is never mutated.
    """
    fixes: list[HistoryFix] = []
    out: list[Message] = []
    open_calls: dict[str, str] = {}  # call id -> tool name, for the assistant being answered
    issued: set[str] = set()
    deferred: list[Message] = []  # system messages met while calls were still open

    def close_open_calls(at: int) -> None:
        for call_id, name in open_calls.items():
            out.append({"content": prompts.NO_TOOL_RESULT, "role": "tool", "tool_call_id": call_id})
            fixes.append(
                HistoryFix("added_missing_result", at, f"no result for call {call_id!r} ({name})")
            )
        open_calls.clear()
        out.extend(deferred)
        deferred.clear()

    for index, message in enumerate(history):
        role = message["role"]
        if role == "tool":
            call_id = message.get("tool_call_id", "")
            if call_id not in open_calls:
                why = "its call was already answered or closed" if call_id in issued else "no call"
                fixes.append(HistoryFix("dropped_orphan_result", index, f"{why}: {call_id!r}"))
                continue
            del open_calls[call_id]
            out.append(message)
            if not open_calls:
                close_open_calls(index)
            continue
        if role == "system" and open_calls:
            deferred.append(message)
            fixes.append(HistoryFix("moved_system_message", index, "moved after the tool results"))
            continue
        close_open_calls(index)
        out.append(message)
        if role == "assistant":
            for call in message.get("tool_calls") or ():
                issued.add(call["id"])
                open_calls[call["id"]] = call["function"]["name"]
    close_open_calls(len(history))

    first = next((i for i, m in enumerate(out) if m["role"] != "system"), None)
    if first is not None and out[first]["role"] != "user":
        out.insert(first, {"content": prompts.CONVERSATION_CONTINUES, "role": "user"})
        fixes.append(HistoryFix("added_leading_user", first, "first message was not a user's"))
    return out, fixes
