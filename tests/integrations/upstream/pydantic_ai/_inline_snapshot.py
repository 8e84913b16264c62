"""`snapshot(value)` as the vendored pydantic-ai tests use it: compares with `==` against the
expected value, as pydantic-ai's own stub does without `--inline-snapshot`.

One adaptation for the version gap: the vendored file is from pydantic-ai's newest stored
commit (v2.33.0-11), older than the installed pydantic-ai-slim 2.68, whose `ModelResponse` has
since gained `model_id` (set by the model, after the history processor has run). A field the
vendored expectations predate (`NEWER_FIELDS`) is left out of the comparison; every other field
is compared as written.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from pydantic_ai.messages import ModelResponse

NEWER_FIELDS = frozenset({"model_id"})


def _without_newer_fields(value: Any) -> Any:
    if isinstance(value, list):
        return [_without_newer_fields(item) for item in value]
    if isinstance(value, ModelResponse):
        kept = {f.name for f in dataclasses.fields(value) if f.init} - NEWER_FIELDS
        return {name: getattr(value, name) for name in kept}
    return value


class _Snapshot:
    def __init__(self, value: Any) -> None:
        self._value = value

    def __eq__(self, other: object) -> bool:
        return bool(_without_newer_fields(other) == _without_newer_fields(self._value))

    def __ne__(self, other: object) -> bool:
        return not self == other

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return repr(self._value)


def snapshot(value: Any) -> Any:
    return _Snapshot(value)
