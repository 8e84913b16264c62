"""Histories, requests and canned provider responses the adapter tests share."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import openai

from contextchef.adapters import AdapterInput, ConversionCache, TargetAdapter, normalize_tools
from contextchef.messages import Message
from tests.loopback import Recorded, loopback_server

T = TypeVar("T")

PNG = "iVBORw0KGgo="  # base64 of the PNG magic bytes
PDF = "JVBERi0xLjQK"  # base64 of "%PDF-1.4\n"

IMAGE_DATA = {"data": PNG, "media_type": "image/png", "type": "image"}
IMAGE_URL = {"media_type": "image/jpeg", "type": "image", "url": "https://example.com/cat.jpg"}
DOC_DATA = {
    "data": PDF,
    "filename": "spec.pdf",
    "media_type": "application/pdf",
    "type": "document",
}
DOC_URL = {"media_type": "application/pdf", "type": "document", "url": "https://example.com/a.pdf"}

TOOLS = normalize_tools(
    [
        {
            "description": "Read a file.",
            "name": "read",
            "parameters": {
                "properties": {"path": {"type": "string"}},
                "required": ["path"],
                "type": "object",
            },
        },
        {"description": "List a folder.", "name": "ls"},
    ]
)


def call(call_id: str, name: str, args: dict[str, Any] | None = None, **extra: Any) -> Any:
    return {
        "function": {"arguments": json.dumps(args or {}), "name": name},
        "id": call_id,
        "type": "function",
        **extra,
    }


def parallel_history() -> list[Message]:
    """[user, assistant with two calls, tool, tool]."""
    return [
        {"content": "Read both files.", "role": "user"},
        {
            "content": None,
            "role": "assistant",
            "tool_calls": [call("c1", "read", {"path": "a"}), call("c2", "read", {"path": "b"})],
        },
        {"content": "A", "role": "tool", "tool_call_id": "c1"},
        {"content": '{"lines": 2, "body": "B"}', "role": "tool", "tool_call_id": "c2"},
    ]


def attachment_history() -> list[Message]:
    """One user message holding text and all four kinds of attachment."""
    return [
        {
            "content": [
                {"text": "Compare these.", "type": "text"},
                IMAGE_DATA,
                IMAGE_URL,
                DOC_DATA,
                DOC_URL,
            ],
            "role": "user",
        }
    ]


def request(
    messages: Sequence[Message],
    *,
    system: Sequence[Message] = ({"content": "You are terse.", "role": "system"},),
    tools: Any = (),
    prefill: str | None = None,
    cache: ConversionCache | None = None,
) -> AdapterInput:
    return AdapterInput(
        system=list(system), messages=list(messages), tools=tools, prefill=prefill, cache=cache
    )


class CountingCache(ConversionCache):
    """A ConversionCache that counts how many conversions actually ran."""

    def __init__(self) -> None:
        super().__init__()
        self.misses = 0
        self._wrappers: set[Callable[[Any], Any]] = set()

    def _counted(self, convert: Callable[[Any], Any]) -> Callable[[Any], Any]:
        if convert in self._wrappers:  # `convert_all` converting through `convert`
            return convert

        def counted(value: Any) -> Any:
            self.misses += 1
            return convert(value)

        self._wrappers.add(counted)
        return counted

    def convert(self, message: object, convert: Callable[[Any], Any]) -> Any:
        return super().convert(message, self._counted(convert))

    def convert_all(
        self, messages: Sequence[object], convert: Callable[[Any], Any], known: Any = None
    ) -> list[Any]:
        return super().convert_all(messages, self._counted(convert), known)


def is_key_sorted(payload: Any) -> bool:
    return json.dumps(payload) == json.dumps(payload, sort_keys=True)


def compile_checked(
    adapter: TargetAdapter,
    validate: Callable[[dict[str, Any]], object],
    messages: Sequence[Message],
    **kwargs: Any,
) -> dict[str, Any]:
    """Compile, check the payload against the SDK and its key order, and return it."""
    payload = adapter.compile(request(messages, **kwargs))
    validate(payload)
    assert is_key_sorted(payload)
    return payload


DELETE = object()


def altered(payload: Any, path: Sequence[str | int], value: Any) -> Any:
    """A deep copy of `payload` with `value` set at `path` (`DELETE` removes the key)."""
    copy = json.loads(json.dumps(payload))
    target = copy
    for step in path[:-1]:
        target = target[step]
    if value is DELETE:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return copy


def through_openai(canned: Any, send: Callable[[openai.OpenAI], T]) -> tuple[T, Recorded]:
    """Make one call with a real OpenAI client against a loopback server answering `canned`."""
    with loopback_server(canned) as server:
        result = send(openai.OpenAI(base_url=server.url + "/v1", api_key="test"))
        return result, server.requests[-1]


CHAT_RESPONSE = {
    "choices": [
        {"finish_reason": "stop", "index": 0, "message": {"content": "ok", "role": "assistant"}}
    ],
    "created": 0,
    "id": "chatcmpl-1",
    "model": "test-model",
    "object": "chat.completion",
}

RESPONSES_RESPONSE = {
    "created_at": 0,
    "id": "resp_1",
    "model": "test-model",
    "object": "response",
    "output": [
        {
            "content": [{"annotations": [], "text": "ok", "type": "output_text"}],
            "id": "msg_1",
            "role": "assistant",
            "status": "completed",
            "type": "message",
        }
    ],
    "parallel_tool_calls": True,
    "status": "completed",
    "tool_choice": "auto",
    "tools": [],
}

GEMINI_RESPONSE = {
    "candidates": [
        {
            "content": {"parts": [{"text": "ok"}], "role": "model"},
            "finishReason": "STOP",
            "index": 0,
        }
    ],
    "usageMetadata": {"promptTokenCount": 1, "totalTokenCount": 2},
}
