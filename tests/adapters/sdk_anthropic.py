"""Check compiled Anthropic payloads against the official SDK's own request types.

`messages` and `system` are typed `Iterable[...]`, which pydantic validates lazily: the
validated value holds iterators that check their items only when consumed. `validate_request`
therefore walks the whole result, and the `TypeAdapter`s live at module level so they outlive
every iterator they hand out. TypedDicts ignore unknown keys, so the walked result is also
compared with the request: a key the SDK does not know shows up as a difference.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from anthropic.types import message_create_params
from anthropic.types.beta import message_create_params as beta_message_create_params
from pydantic import TypeAdapter

from contextchef.adapters import AdapterInput, AnthropicAdapter, ToolDefinition
from contextchef.messages import Message

MODEL = "claude-contextchef-test"
MAX_TOKENS = 1024

_REQUEST: TypeAdapter[Any] = TypeAdapter(message_create_params.MessageCreateParamsNonStreaming)
_BETA_REQUEST: TypeAdapter[Any] = TypeAdapter(
    beta_message_create_params.MessageCreateParamsNonStreaming
)


def materialise(value: Any) -> Any:
    """A plain copy of a validated value, consuming (and so validating) every lazy iterator."""
    if isinstance(value, Mapping):
        return {key: materialise(item) for key, item in value.items()}
    if isinstance(value, str | bytes):
        return value
    if isinstance(value, Iterable):
        return [materialise(item) for item in value]
    return value


def validate_request(payload: Mapping[str, Any], *, beta: bool = False) -> dict[str, Any]:
    """The full `messages.create` request for `payload`; raises `ValueError` if the SDK rejects it.

    `beta=True` checks against `client.beta.messages.create`, which also takes compaction blocks.
    """
    request = {"max_tokens": MAX_TOKENS, "model": MODEL, **payload}
    adapter = _BETA_REQUEST if beta else _REQUEST
    validated = materialise(adapter.validate_python(request))
    if validated != request:
        raise ValueError(f"the SDK types do not know part of the payload: {validated!r}")
    return request


def tool_call(call_id: str, name: str = "f", arguments: str = "{}") -> Any:
    """An IR tool call."""
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def compile_anthropic(
    messages: list[Message],
    *,
    system: list[Message] | None = None,
    tools: list[ToolDefinition] | None = None,
    prefill: str | None = None,
    adapter: AnthropicAdapter | None = None,
) -> dict[str, Any]:
    """Compile with the Anthropic adapter and check the result against the SDK types."""
    request = AdapterInput(system or [], messages, tools or [], prefill)
    payload = (adapter or AnthropicAdapter()).compile(request)
    validate_request(payload)
    return payload
