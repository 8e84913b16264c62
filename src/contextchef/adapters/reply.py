"""`reply_messages`: a model's reply, as any provider's SDK returns it, as IR assistant messages.

What `add_response` appends to the chef's history. The shape is read from the data itself,
never from the SDK classes (which need not be installed), so an SDK object, its `model_dump()`
(Python or JSON mode, with or without `None` fields) and the JSON the API sent all convert to
the same messages:

- an OpenAI Chat Completions `ChatCompletion` (`choices`): the first choice's `message`;
- an OpenAI Responses `Response` (`output`): every output item — messages, function calls,
  reasoning (kept for the next request, which the API pairs with the item after it);
- an Anthropic `Message` (`type: "message"` with content blocks): its content;
- a Gemini `GenerateContentResponse` (`candidates`): the first candidate's `content`;
- one message already taken out of a response: a Chat Completions message, one Responses output
  item, an Anthropic assistant message (`{"role": "assistant", "content": [blocks]}`), a Gemini
  `model` content (`{"role": "model", "parts": [...]}`), or an IR assistant message (a plain
  dict holding IR keys only, kept as it is, flags included).

The conversion is the importers' (`from_openai`, `from_openai_responses`, `from_anthropic`,
`from_gemini`) without their repair pass: a reply whose tool calls are still unanswered is not a
broken history, the results come next. A Gemini call without an id gets the synthetic id
`from_gemini` would give it in the whole conversation, numbered after the calls of `earlier`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from contextchef.adapters.from_anthropic import from_anthropic
from contextchef.adapters.from_gemini import model_reply
from contextchef.adapters.from_openai import from_openai
from contextchef.adapters.from_openai_responses import from_openai_responses
from contextchef.errors import ConfigError, MessageError
from contextchef.messages import Message

__all__ = ["reply_messages"]

_IR_KEYS = frozenset(Message.__required_keys__ | Message.__optional_keys__)
_IR_PART_TYPES = frozenset(("text", "image", "document"))
_RESPONSES_PART_TYPES = frozenset(("output_text", "refusal"))
_RESPONSES_ITEM_TYPES = frozenset(("function_call", "reasoning"))


def reply_messages(response: object, earlier: Sequence[Message] = ()) -> list[Message]:
    """The assistant message(s) of `response` (see the module docstring for the shapes).

    `earlier` is the conversation the reply continues (for Gemini's id-less calls). Raises
    `ConfigError` for a value that is neither a dict nor an SDK object, and `MessageError` for
    one whose shape is not a reply, holds no message, or holds a message of another role.
    """
    data, from_sdk = _as_data(response)
    kind = _shape(data, from_sdk)
    if kind != "ir":
        data = _without_none(data)
    messages = _convert(kind, data, earlier)
    if not messages:
        raise MessageError(f"the {_NAMES[kind]} holds no message to add")
    for message in messages:
        if message["role"] != "assistant":
            raise MessageError(
                f"add_response takes the model's reply, but the {_NAMES[kind]} holds a "
                f"{message['role']!r} message: add a tool result with add_tool_result(), "
                "other messages with append_history()",
                field="role",
            )
    return messages


_NAMES = {
    "chat_completion": "ChatCompletion",
    "chat_message": "Chat Completions message",
    "responses": "Responses API response",
    "responses_item": "Responses output item",
    "anthropic": "Anthropic Message",
    "anthropic_param": "Anthropic message",
    "gemini_response": "Gemini GenerateContentResponse",
    "gemini_content": "Gemini content",
    "ir": "message",
}


def _as_data(response: object) -> tuple[dict[str, Any], bool]:
    """The response as a dict, and whether it was an SDK object (dumped without `None`s)."""
    if isinstance(response, Mapping):
        return dict(response), False
    dump = getattr(response, "model_dump", None)
    if callable(dump):
        data = dump(mode="json", exclude_none=True)
        if isinstance(data, dict):
            return data, True
    hint = (
        "; a text reply is {'role': 'assistant', 'content': text}"
        if isinstance(response, str)
        else ""
    )
    raise ConfigError(
        "add_response takes the response object a provider SDK returned (ChatCompletion, "
        "Responses Response, Anthropic Message, Gemini GenerateContentResponse), its dict form, "
        f"or one assistant message; got {type(response).__name__}{hint}"
    )


def _types(content: object) -> list[object]:
    if not isinstance(content, list):
        return []
    return [block.get("type") if isinstance(block, Mapping) else None for block in content]


def _shape(data: Mapping[str, Any], from_sdk: bool) -> str:
    """Which of the recognised shapes `data` has (`MessageError` for none of them)."""
    if isinstance(data.get("choices"), list):
        return "chat_completion"
    if isinstance(data.get("candidates"), list):
        return "gemini_response"
    if isinstance(data.get("output"), list) and "role" not in data:
        return "responses"
    kind = data.get("type")
    types = _types(data.get("content"))
    if kind == "message":
        if types and all(t in _RESPONSES_PART_TYPES for t in types):
            return "responses_item"
        return "anthropic"
    if kind in _RESPONSES_ITEM_TYPES:
        return "responses_item"
    if "parts" in data:
        return "gemini_content"
    if "role" in data:
        if any(t not in _IR_PART_TYPES and t != "refusal" for t in types):
            return "anthropic_param"
        if not from_sdk and _IR_KEYS.issuperset(data):
            return "ir"
        return "chat_message"
    raise MessageError(
        "not a reply contextchef recognises (a ChatCompletion, a Responses API response, an "
        "Anthropic Message, a Gemini GenerateContentResponse, or one assistant message); "
        f"its keys are {sorted(map(str, data))}"
    )


def _without_none(value: Any) -> Any:
    """`value` with every `None` field of its dicts left out, as the SDKs' own
    `model_dump(exclude_none=True)` gives it (so `model_dump()` converts the same)."""
    if isinstance(value, Mapping):
        return {key: _without_none(item) for key, item in value.items() if item is not None}
    if isinstance(value, list):
        return [_without_none(item) for item in value]
    return value


def _first(data: Mapping[str, Any], key: str, what: str) -> dict[str, Any]:
    items = data[key]
    if not items or not isinstance(items[0], Mapping):
        raise MessageError(f"the {what} has no {key} to add", field=key)
    return dict(items[0])


def _convert(kind: str, data: dict[str, Any], earlier: Sequence[Message]) -> list[Message]:
    if kind == "chat_completion":
        message = _first(data, "choices", "ChatCompletion").get("message")
        if not isinstance(message, Mapping):
            raise MessageError("the ChatCompletion's first choice has no message", field="choices")
        return _chat([message])
    if kind == "chat_message":
        return _chat([data])
    if kind == "responses":
        return _responses(data["output"])
    if kind == "responses_item":
        return _responses([data])
    if kind == "anthropic":
        role = data.get("role", "assistant")
        return from_anthropic([{"content": data.get("content", []), "role": role}]).history
    if kind == "anthropic_param":
        return from_anthropic([data]).history
    if kind == "gemini_response":
        candidate = _first(data, "candidates", "Gemini response")
        content = candidate.get("content")
        if not isinstance(content, Mapping):
            reason = candidate.get("finish_reason") or candidate.get("finishReason")
            why = f" (finish reason {reason})" if reason else ""
            raise MessageError(f"the Gemini response's candidate has no content{why}")
        return [model_reply(content, earlier)]
    if kind == "gemini_content":
        if data.get("role") != "model":
            raise MessageError(
                f"add_response takes the model's reply, a 'model' content; got role "
                f"{data.get('role')!r}",
                field="role",
            )
        return [model_reply(data, earlier)]
    return [data]  # type: ignore[list-item]  # an IR message: validated when it is taken


def _chat(messages: list[Mapping[str, Any]]) -> list[Message]:
    imported = from_openai(messages)
    return [*imported.system, *imported.history]


def _responses(items: list[Any]) -> list[Message]:
    imported = from_openai_responses(items)
    return [*imported.system, *imported.history]
