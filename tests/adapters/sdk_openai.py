"""Validate compiled payloads against the openai SDK's own request TypedDicts.

Two traps make a naive `TypeAdapter(...).validate_python(payload)` useless:

- fields typed `Iterable[...]` (chat `messages`, Responses `tools`, content lists…) are
  validated lazily: pydantic returns an iterator and checks nothing until it is consumed. We
  walk the validated value, materialising every iterator recursively, while the module-level
  adapter keeps the validators alive;
- TypedDicts ignore unknown keys, so a misspelt field passes. We compare the walked value with
  the payload: anything the SDK types dropped or coerced shows up as a difference.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from openai.types.chat.completion_create_params import CompletionCreateParamsNonStreaming
from openai.types.responses.response_create_params import ResponseCreateParamsNonStreaming
from pydantic import TypeAdapter

__all__ = ["PayloadMismatch", "materialise", "validate_chat", "validate_responses"]

MODEL = "test-model"

_CHAT: TypeAdapter[Any] = TypeAdapter(CompletionCreateParamsNonStreaming)
_RESPONSES: TypeAdapter[Any] = TypeAdapter(ResponseCreateParamsNonStreaming)


class PayloadMismatch(AssertionError):
    """The SDK types accepted the payload only by dropping or changing part of it."""


def materialise(value: Any) -> Any:
    """A deep copy of `value` with every lazy iterator consumed (which runs its validation)."""
    if isinstance(value, Mapping):
        return {key: materialise(item) for key, item in value.items()}
    if isinstance(value, str | bytes | int | float | bool) or value is None:
        return value
    if isinstance(value, Iterable):
        return [materialise(item) for item in value]
    return value


def first_difference(expected: Any, actual: Any, path: str = "$") -> str | None:
    """Where two JSON values first differ, or None when they are equal."""
    if isinstance(expected, Mapping) and isinstance(actual, Mapping):
        for key in sorted(expected.keys() | actual.keys()):
            if key not in actual:
                return f"{path}.{key} was dropped by the SDK types (unknown field?)"
            if key not in expected:
                return f"{path}.{key} was added by the SDK types"
            found = first_difference(expected[key], actual[key], f"{path}.{key}")
            if found:
                return found
        return None
    if isinstance(expected, list) and isinstance(actual, list):
        if len(expected) != len(actual):
            return f"{path}: {len(expected)} items became {len(actual)}"
        for at, (left, right) in enumerate(zip(expected, actual, strict=True)):
            found = first_difference(left, right, f"{path}[{at}]")
            if found:
                return found
        return None
    if expected != actual or type(expected) is not type(actual):
        return f"{path}: {expected!r} became {actual!r}"
    return None


def _validate(adapter: TypeAdapter[Any], payload: Mapping[str, Any]) -> dict[str, Any]:
    request = {"model": MODEL, **payload}
    walked: dict[str, Any] = materialise(adapter.validate_python(request))
    difference = first_difference(request, walked)
    if difference:
        raise PayloadMismatch(difference)
    return walked


def validate_chat(payload: Mapping[str, Any]) -> dict[str, Any]:
    """Check a Chat Completions payload; raises `ValidationError` or `PayloadMismatch`."""
    return _validate(_CHAT, payload)


def validate_responses(payload: Mapping[str, Any]) -> dict[str, Any]:
    """Check a Responses payload; raises `ValidationError` or `PayloadMismatch`."""
    return _validate(_RESPONSES, payload)
