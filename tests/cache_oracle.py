"""An independent serialization of a payload in request order, written from the definition in
docs/concepts/caching.md, for tests of `payload.meta.cache` and the cache ledger."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any


def oracle_serialization(payload: Mapping[str, Any]) -> bytes:
    """The payload in request order, written from the definition in the docs, independently of
    the library: settings (other keywords) as one object, tools, system blocks, messages; each
    as canonical JSON plus a newline, breakpoints (`cache_control`) left out."""
    data = dict(payload)
    config = data.pop("config", None)
    config = dict(config) if isinstance(config, Mapping) else {}
    tools = data.pop("tools", None) or config.pop("tools", None) or []
    system: list[Any] = []
    if "system" in data:
        system = list(data.pop("system"))
    elif "instructions" in data:
        system = [data.pop("instructions")]
    elif "system_instruction" in config:
        system = list(config.pop("system_instruction")["parts"])
    messages = data.pop("messages", None) or data.pop("input", None) or data.pop("contents")
    settings = dict(data)
    if config:
        settings["config"] = config
    parts = ([settings] if settings else []) + list(tools) + system + list(messages)
    return b"".join(
        json.dumps(
            unmarked(part), ensure_ascii=False, separators=(",", ":"), sort_keys=True
        ).encode()
        + b"\n"
        for part in parts
    )


def unmarked(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: unmarked(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [unmarked(v) for v in value]
    return value


def common_prefix(a: bytes, b: bytes) -> int:
    size = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        size += 1
    return size
