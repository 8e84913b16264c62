"""`compile --validate`: check a payload against the official SDK's own request types.

The SDKs are optional (`contextchef[openai]`, `[anthropic]`, `[gemini]`); without the one a
target needs, `MissingDependencyError` names the extra. Two traps make a plain
`TypeAdapter.validate_python` useless, so both are handled: fields typed `Iterable[...]` are
validated lazily (the result is walked, consuming every iterator, while the adapter is alive),
and TypedDicts ignore unknown keys (the walked result is compared with the request, so a key
the SDK does not know shows up as a difference). Gemini's models forbid unknown keys themselves.
"""

from __future__ import annotations

import base64
import functools
from collections.abc import Iterable, Mapping
from typing import Any

from contextchef.errors import MissingDependencyError

__all__ = ["PayloadRejected", "validate_payload"]

MODEL = "model-name"
MAX_TOKENS = 1024


class PayloadRejected(ValueError):
    """The SDK's request types refuse the payload (or accept it only by changing it)."""


def _first_error(exc: Any, path: str) -> PayloadRejected:
    errors = exc.errors()
    first = errors[0]
    where = ".".join(str(part) for part in first["loc"])
    more = f" ({len(errors)} problems; the first)" if len(errors) > 1 else ""
    return PayloadRejected(f"{path}{'.' + where if where else ''}: {first['msg']}{more}")


def _walk(value: Any, path: str = "$") -> Any:
    """A plain copy of a validated value, consuming (and so validating) every lazy iterator."""
    from pydantic import ValidationError

    if isinstance(value, Mapping):
        return {key: _walk(item, f"{path}.{key}") for key, item in value.items()}
    if isinstance(value, str | bytes | int | float | bool) or value is None:
        return value
    if isinstance(value, Iterable):
        items: list[Any] = []
        iterator = iter(value)
        while True:
            where = f"{path}[{len(items)}]"
            try:
                item = next(iterator)
            except StopIteration:
                return items
            except ValidationError as exc:
                raise _first_error(exc, where) from exc
            items.append(_walk(item, where))
    return value


def _difference(expected: Any, actual: Any, path: str = "$") -> str | None:
    """Where two JSON values first differ, or None when they are equal."""
    if isinstance(expected, Mapping) and isinstance(actual, Mapping):
        for key in sorted(expected.keys() | actual.keys()):
            if key not in actual:
                return f"{path}.{key} is not a field the SDK knows"
            if key not in expected:
                return f"{path}.{key} was added by the SDK types"
            found = _difference(expected[key], actual[key], f"{path}.{key}")
            if found:
                return found
        return None
    if isinstance(expected, list) and isinstance(actual, list):
        if len(expected) != len(actual):
            return f"{path}: {len(expected)} items became {len(actual)}"
        for at, (left, right) in enumerate(zip(expected, actual, strict=True)):
            found = _difference(left, right, f"{path}[{at}]")
            if found:
                return found
        return None
    if expected != actual:
        return f"{path}: {expected!r} became {actual!r}"
    return None


def _request_type(target: str) -> Any:
    """The SDK's TypedDict for one non-streaming request of `target`."""
    if target == "anthropic":
        try:
            from anthropic.types import message_create_params
        except ImportError as exc:
            raise MissingDependencyError("anthropic", "anthropic") from exc
        return message_create_params.MessageCreateParamsNonStreaming
    try:
        from openai.types.chat import completion_create_params
        from openai.types.responses import response_create_params
    except ImportError as exc:
        raise MissingDependencyError("openai", "openai") from exc
    if target == "openai":
        return completion_create_params.CompletionCreateParamsNonStreaming
    return response_create_params.ResponseCreateParamsNonStreaming


@functools.cache
def _adapter(request_type: Any) -> Any:
    """One adapter per target, kept for the process: building one takes seconds, and it must
    outlive the lazy iterators it hands out."""
    from pydantic import TypeAdapter

    return TypeAdapter(request_type)


def _check_typed_dict(target: str, payload: Mapping[str, Any]) -> None:
    from pydantic import ValidationError

    request: dict[str, Any] = {"model": MODEL, **payload}
    if target == "anthropic":
        request.setdefault("max_tokens", MAX_TOKENS)
    adapter = _adapter(_request_type(target))
    try:
        validated = adapter.validate_python(request)
    except ValidationError as exc:
        raise _first_error(exc, "$") from exc
    walked = _walk(validated)
    difference = _difference(request, walked)
    if difference:
        raise PayloadRejected(difference)


def _standard_base64(value: Any) -> Any:
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, dict):
        return {key: _standard_base64(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_standard_base64(item) for item in value]
    return value


def _check_gemini(payload: Mapping[str, Any]) -> None:
    try:
        from google.genai import types
    except ImportError as exc:
        raise MissingDependencyError("google-genai", "gemini") from exc
    from pydantic import BaseModel, ValidationError

    def same(raw: Any, model: BaseModel, where: str) -> None:
        dumped = _standard_base64(model.model_dump(exclude_unset=True))
        difference = _difference(raw, dumped, where)
        if difference:
            raise PayloadRejected(difference)

    checks: list[tuple[str, Any, type[BaseModel]]] = [
        (f"$.contents[{at}]", raw, types.Content)
        for at, raw in enumerate(payload.get("contents") or [])
    ]
    if "config" in payload:
        checks.append(("$.config", payload["config"], types.GenerateContentConfig))
    for where, raw, model in checks:
        try:
            validated = model.model_validate(raw)
        except ValidationError as exc:
            raise _first_error(exc, where) from exc
        same(raw, validated, where)
    unknown = sorted(set(payload) - {"contents", "config"})
    if unknown:
        raise PayloadRejected(f"generate_content takes no {', '.join(unknown)}")


def validate_payload(target: str, payload: Mapping[str, Any]) -> str:
    """Check `payload` for `target`; returns what it was checked against.

    Raises `PayloadRejected` naming the first problem, `MissingDependencyError` without the SDK.
    """
    if target == "gemini":
        _check_gemini(payload)
        return "google.genai.types (Content, GenerateContentConfig)"
    if target not in ("openai", "openai-responses", "anthropic"):
        raise PayloadRejected(f"no SDK request type is known for the target {target!r}")
    _check_typed_dict(target, payload)
    kind = _request_type(target)
    return f"{kind.__module__}.{kind.__name__}"
