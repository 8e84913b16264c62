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

`MESSAGE_SCHEMA` says, per role, which keys a message carries, the rule each value follows and
the sentence a user reads when it does not; `validate_message` checks one message against it at
the boundary and names the index and field at fault (the flags must be booleans; tool-call
arguments a strict-JSON object, or blank), and the chef's intake (`_intake`) checks the same
rules while it copies, and refuses a lone surrogate in any string (`_hosttext`);
`group_turns` splits a history into turns (an assistant with tool calls and its results form one
turn); `ensure_valid_history` (in `_repair`) repairs what providers reject and reports every fix.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, NotRequired, Required, TypedDict, cast

from contextchef._hosttext import find_surrogate
from contextchef._jsonload import flat_object, loads
from contextchef._jsonvalue import json_text_problem
from contextchef._schema import (
    AnyOf,
    Attachment,
    Field,
    Flag,
    Forbidden,
    Json,
    ListOf,
    MessageSchema,
    Nullable,
    OneOf,
    Record,
    Str,
    Tagged,
)
from contextchef._validator import validator_for

__all__ = [
    "MESSAGE_SCHEMA",
    "ROLES",
    "DocumentPart",
    "FunctionCall",
    "ImagePart",
    "Message",
    "RedactedThinking",
    "Role",
    "TextPart",
    "Thinking",
    "ToolCall",
    "ToolDefinition",
    "Turn",
    "arguments_problem",
    "content_text",
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


class ToolDefinition(TypedDict, total=False):
    """A tool in the IR: a name, what it does, and a JSON schema of its arguments (the adapters
    render it; selection reads it).

    `tags` help the pruner match a task (never sent to a provider); `defer_loading` is passed
    to Anthropic as is (its tool search loads such a tool on demand), ignored elsewhere.
    """

    name: Required[str]
    description: str
    parameters: dict[str, Any]
    strict: bool
    tags: list[str]
    defer_loading: bool


def arguments_problem(raw: str) -> str | None:
    """Why tool-call arguments are not a strict-JSON object, else None ("" or blanks mean no
    arguments): not JSON at all, JSON that is not an object, a NaN, Infinity, 1e999, an integer
    beyond Python's int-to-str limit, nesting beyond `MAX_DEPTH`, or an escaped lone surrogate.
    The Anthropic and Gemini targets parse the arguments into an object, so any of these would
    fail every compile (or emit what `json.dumps(allow_nan=False)` and UTF-8 reject); refused at
    intake, they name the message and the call instead. Parsed once, by orjson when installed."""
    if not raw or raw.isspace() or flat_object(raw):  # flat_object: the common case, in C
        return None
    problem = json_text_problem(raw, "the arguments JSON")
    if problem is not None:
        return problem
    try:
        value = _parse_arguments(raw)
    except json.JSONDecodeError as exc:
        return (
            f"the arguments are not valid JSON ({exc.msg} at character {exc.pos}); send one "
            "JSON object as a string (json.dumps the dict)"
        )
    if type(value) is not dict:
        kind = _JSON_KIND.get(type(value), "null")
        return f"the arguments must be a JSON object, got a JSON {kind}"
    if "\\u" in raw:  # only an escape makes a lone surrogate in an ASCII text
        found = find_surrogate(value)
        if found is not None:
            return f"the arguments JSON {found[1]}"
    return None


_JSON_KIND = {list: "array", str: "string", int: "number", float: "number", bool: "boolean"}


def _parse_arguments(raw: str) -> Any:
    """`json.loads(raw)`, by orjson where it gives the same (see `_jsonload`)."""
    return loads(raw)


_SIGNATURE = Nullable(Str(error="gemini_thought_signature must be a base64 string"))

_TOOL_CALL = Record(
    error="a tool call must be a dict",
    fields=(
        Field("id", Str("a tool call needs a non-empty string 'id'", nonempty=True), required=True),
        Field("type", Json()),
        Field(
            "function",
            Record(
                error="a tool call needs a 'function' dict",
                fields=(
                    Field("name", Str("a tool call needs a function name", nonempty=True), True),
                    Field(
                        "arguments",
                        Str(
                            "function arguments must be a JSON string (json.dumps the dict)",
                            problem=arguments_problem,
                        ),
                        required=True,
                    ),
                ),
            ),
            required=True,
        ),
        Field("gemini_thought_signature", _SIGNATURE, deferred=True),
    ),
)

_PART = Tagged(
    tag="type",
    error="a content part must be a dict, got {type}",
    unknown="unknown content part type {tag!r}{hint}; use 'text', 'image' or 'document'",
    hints={
        "image_url": "an OpenAI image_url part; convert the history with from_openai()",
        "input_text": "an OpenAI Responses part; convert the history with from_openai_responses()",
        "tool_use": "an Anthropic block; convert the history with from_anthropic()",
        "tool_result": "an Anthropic block; convert the history with from_anthropic()",
        "file": "an OpenAI file part; convert the history with from_openai()",
    },
    variants={
        "text": Record(
            error="a text part needs a string 'text'", fields=(Field("text", Str(), True),)
        ),
        "image": Attachment(
            sources=("data", "url"),
            error="an image part needs exactly one of 'data' or 'url'",
            media_type_error="an image part with base64 'data' needs a 'media_type'",
        ),
        "document": Attachment(  # "an document": the words users have always read
            sources=("data", "url", "text"),
            error="an document part needs exactly one of 'data', 'url' or 'text'",
            media_type_error="an document part with base64 'data' needs a 'media_type'",
        ),
    },
)

_CONTENT = Field(
    "content",
    Nullable(
        AnyOf(
            (Str(), ListOf(_PART)),
            error="content must be a string, a list of parts or None, got {type}",
        )
    ),
)
_TOOL_CALLS = Field("tool_calls", Nullable(ListOf(_TOOL_CALL, "tool_calls must be a list")))
_NO_TOOL_CALLS = Field("tool_calls", Forbidden("only assistant messages carry tool_calls"))
_TOOL_CALL_ID = Field(
    "tool_call_id", Str("a tool result needs a non-empty 'tool_call_id'", nonempty=True), True
)
_SHARED = (
    Field("name", Json()),
    Field(
        "thinking",
        Nullable(
            Record(
                (Field("thinking", Str(), required=True), Field("signature", Json())),
                error="thinking must be a dict with a string 'thinking'",
            )
        ),
    ),
    Field(
        "redacted_thinking",
        Nullable(
            ListOf(
                Record((Field("data", Str(), required=True),)),
                error="redacted_thinking must be a list of {{'data': str}}",
            )
        ),
    ),
    Field("pinned", Flag("pinned must be True or False, got {value!r}")),
    Field("_cache_breakpoint", Flag("_cache_breakpoint must be True or False, got {value!r}")),
    Field(
        "openai_reasoning",
        Nullable(ListOf(Record(), error="openai_reasoning must be a list of item dicts")),
    ),
    Field(
        "openai_phase",
        Nullable(
            OneOf(
                ("commentary", "final_answer"),
                error="openai_phase must be 'commentary' or 'final_answer'",
            )
        ),
    ),
    Field("gemini_thought_signature", _SIGNATURE),
    Field(
        "anthropic_compaction",
        Nullable(
            Record(
                (Field("type", OneOf(("compaction",)), required=True),),
                error="anthropic_compaction must be an Anthropic block dict with type 'compaction'",
            )
        ),
    ),
    Field("refusal", Json()),
)

MESSAGE_SCHEMA = MessageSchema(
    roles={
        "system": Record((_CONTENT, _NO_TOOL_CALLS, *_SHARED)),
        "user": Record((_CONTENT, _NO_TOOL_CALLS, *_SHARED)),
        "assistant": Record((_CONTENT, _TOOL_CALLS, *_SHARED)),
        "tool": Record((_CONTENT, _TOOL_CALL_ID, _NO_TOOL_CALLS, *_SHARED)),
    },
    role_error="unknown role {value!r}; use 'system', 'user', 'assistant' or 'tool'",
    not_a_dict="a message must be a dict, got {type}{hint}",
    sdk_hint=(
        "; convert SDK objects with from_openai(), from_anthropic(), from_gemini() or "
        "from_openai_responses()"
    ),
)
"""The message IR, per role: the keys a message carries (besides `role`), the rule each value
follows (checked in this order; `deferred` ones last), and the sentence a user reads when it does
not. `validate_message` and the fast intake (`_intake`) are both built from it; `_schema` says
what each rule means and how a value it accepts is copied."""

_validate = validator_for(MESSAGE_SCHEMA)


def validate_message(message: object, index: int | None = None) -> Message:
    """Check one message against the IR and return it typed; raise `MessageError` if malformed."""
    _validate(message, index)
    return cast(Message, message)


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
