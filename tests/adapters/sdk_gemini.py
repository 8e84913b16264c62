"""Validate compiled `gemini` payloads against google-genai's own pydantic models.

The SDK's models forbid unknown fields (`extra="forbid"`) and check base64 bytes, but they type
`role` as any string and accept empty parts, so the rules the API enforces beyond the types are
checked here too. A dump of the validated models must equal the payload, so nothing was coerced.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import Any

from google.genai import types

from tests.adapters.sdk_openai import PayloadMismatch, first_difference

__all__ = ["validate_gemini"]

_DATA_FIELDS = ("file_data", "function_call", "function_response", "inline_data", "text")


def _check_part(part: types.Part, where: str) -> None:
    present = [name for name in _DATA_FIELDS if getattr(part, name) is not None]
    if len(present) != 1:
        raise PayloadMismatch(f"{where}: a part needs exactly one of {_DATA_FIELDS}, has {present}")
    if part.text == "" and part.thought_signature is None:
        raise PayloadMismatch(f"{where}: empty text part")
    if part.function_call is not None and not part.function_call.name:
        raise PayloadMismatch(f"{where}: function_call without a name")
    if part.function_response is not None and not part.function_response.name:
        raise PayloadMismatch(f"{where}: function_response without a name")


def _check_content(content: types.Content, where: str, *, system: bool = False) -> None:
    if not system and content.role not in ("user", "model"):
        raise PayloadMismatch(f"{where}: role {content.role!r} is not 'user' or 'model'")
    if not content.parts:
        raise PayloadMismatch(f"{where}: a content needs at least one part")
    for at, part in enumerate(content.parts):
        _check_part(part, f"{where}.parts[{at}]")


def _standard_base64(value: Any) -> Any:
    """Bytes fields as standard base64 (the SDK's own JSON dump uses the URL-safe alphabet)."""
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, dict):
        return {key: _standard_base64(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_standard_base64(item) for item in value]
    return value


def _same(expected: Any, model: Any, where: str) -> None:
    dumped = _standard_base64(model.model_dump(exclude_unset=True))
    difference = first_difference(expected, dumped, where)
    if difference:
        raise PayloadMismatch(difference)


def validate_gemini(payload: Mapping[str, Any]) -> None:
    """Raise `ValidationError` or `PayloadMismatch` unless the payload is a valid request."""
    if set(payload) != {"config", "contents"}:
        raise PayloadMismatch(f"top-level keys {sorted(payload)} are not config and contents")
    contents = payload["contents"]
    if not contents:
        raise PayloadMismatch("contents is empty")
    for at, raw in enumerate(contents):
        content = types.Content.model_validate(raw)
        _check_content(content, f"$.contents[{at}]")
        _same(raw, content, f"$.contents[{at}]")
    for at in range(1, len(contents)):
        if contents[at]["role"] == contents[at - 1]["role"]:
            raise PayloadMismatch(f"$.contents[{at}] has the same role as the one before it")
    config = types.GenerateContentConfig.model_validate(payload["config"])
    _same(payload["config"], config, "$.config")
    if config.system_instruction is not None:
        assert isinstance(config.system_instruction, types.Content)
        _check_content(config.system_instruction, "$.config.system_instruction", system=True)
