"""Which bytes of a payload changed against another compile: what the prompt cache would miss.

A provider reads the prompt in a fixed order (tools, then the system prompt, then the
conversation) and its cache reuses the longest prefix it saw before. `prompt_parts` lays a
payload out in that order as named parts (`tools[0]`, `system[0]`, `messages[3]`…), each
serialised as compact JSON; `diff_payloads` compares two such layouts: the first differing byte,
the common prefix (bytes and share of the new prompt), and for every part that differs, where
in the part and what the differing region was and became.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any, Literal

from contextchef.cache.ledger import common_prefix

__all__ = ["PartChange", "PayloadDiff", "diff_payloads", "part_bytes", "prompt_parts"]

_SYSTEM_KEYS = ("system", "instructions", "system_instruction")
_SEQUENCE_KEYS = ("messages", "input", "contents")
REGION_LIMIT = 160
"""Most bytes of a differing region shown (each side)."""


def part_bytes(value: Any) -> bytes:
    """One part as the provider receives it: compact JSON, non-ASCII kept, UTF-8."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


def _scopes(payload: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    scopes: list[tuple[str, Mapping[str, Any]]] = [("", payload)]
    config = payload.get("config")
    if isinstance(config, Mapping):
        scopes.append(("config.", config))
    return scopes


def _spread(name: str, value: Any) -> list[tuple[str, Any]]:
    if isinstance(value, list):
        return [(f"{name}[{at}]", item) for at, item in enumerate(value)]
    return [(name, value)]


def prompt_parts(payload: Mapping[str, Any]) -> list[tuple[str, Any]]:
    """The payload's parts in the order the provider reads the prompt: tools, system,
    conversation, then every other field (sorted)."""
    parts: list[tuple[str, Any]] = []
    taken: set[tuple[str, str]] = set()
    for keys in (("tools",), _SYSTEM_KEYS, _SEQUENCE_KEYS):
        for prefix, scope in _scopes(payload):
            for key in keys:
                if key in scope:
                    parts.extend(_spread(prefix + key, scope[key]))
                    taken.add((prefix, key))
    for prefix, scope in _scopes(payload):
        for key in sorted(scope):
            if (prefix, key) not in taken and not (prefix == "" and key == "config"):
                parts.append((prefix + key, scope[key]))
    return parts


@dataclass(frozen=True, slots=True)
class PartChange:
    """One part that differs: where its bytes first differ, and the differing region."""

    part: str
    status: Literal["changed", "added", "removed"]
    offset: int
    """The first differing byte within the part (0 for an added or removed part)."""
    before: str
    after: str


@dataclass(frozen=True, slots=True)
class PayloadDiff:
    """Two payloads compared in prompt order."""

    bytes: int
    previous_bytes: int
    common_prefix: int
    """Bytes at the start of the prompt that both share: what a prefix cache can reuse."""
    first_difference: int | None
    """The offset of the first differing byte; None when the prompts are identical."""
    changes: tuple[PartChange, ...]

    @property
    def identical(self) -> bool:
        return self.first_difference is None

    @property
    def reusable(self) -> float:
        """The share of the new prompt's bytes in the common prefix."""
        return self.common_prefix / self.bytes if self.bytes else 1.0

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["identical"] = self.identical
        data["reusable"] = round(self.reusable, 4)
        return data


def _clip(region: bytes) -> str:
    text = region[:REGION_LIMIT].decode(errors="replace")
    return text + ("…" if len(region) > REGION_LIMIT else "")


def _change(name: str, old: bytes | None, new: bytes | None) -> PartChange:
    if old is None or new is None:
        status: Literal["added", "removed"] = "added" if old is None else "removed"
        return PartChange(name, status, 0, _clip(old or b""), _clip(new or b""))
    start = common_prefix(old, new)
    end = 0
    limit = min(len(old), len(new)) - start
    while end < limit and old[len(old) - 1 - end] == new[len(new) - 1 - end]:
        end += 1
    return PartChange(
        name,
        "changed",
        start,
        _clip(old[start : len(old) - end]),
        _clip(new[start : len(new) - end]),
    )


def diff_payloads(payload: Mapping[str, Any], previous: Mapping[str, Any]) -> PayloadDiff:
    """Compare `payload` with `previous` in prompt order."""
    new_parts = [(name, part_bytes(value)) for name, value in prompt_parts(payload)]
    old_parts = [(name, part_bytes(value)) for name, value in prompt_parts(previous)]
    new_stream = b"".join(data for _, data in new_parts)
    old_stream = b"".join(data for _, data in old_parts)
    common = common_prefix(new_stream, old_stream)
    identical = new_stream == old_stream and [n for n, _ in new_parts] == [n for n, _ in old_parts]
    old_by_name = dict(old_parts)
    new_names = {name for name, _ in new_parts}
    changes = [
        _change(name, old_by_name.get(name), data)
        for name, data in new_parts
        if old_by_name.get(name) != data
    ]
    changes.extend(_change(name, data, None) for name, data in old_parts if name not in new_names)
    return PayloadDiff(
        bytes=len(new_stream),
        previous_bytes=len(old_stream),
        common_prefix=common,
        first_difference=None if identical else common,
        changes=tuple(changes),
    )
