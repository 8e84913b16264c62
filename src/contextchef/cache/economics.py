"""Cache economics of a compile: how many bytes of the payload, serialized in the provider's
request order, are identical to the previous compile's (`payload.meta.cache`).

**The serialized payload in request order** is the definition every figure uses. The payload is
cut into *parts*, in this order:

1. *settings*: every keyword that is none of the parts below (`betas`, `context_management`,
   `prompt_cache_key`, a Gemini `config`'s other keys such as `cached_content`), as one JSON
   object; absent when there is none;
2. *tools*: each item of `tools` (Gemini: of `config.tools`);
3. *system*: each block of `system` (Anthropic), `instructions` as one part (OpenAI Responses),
   each part of `config.system_instruction.parts` (Gemini);
4. *messages*: each item of `messages` (OpenAI Chat, Anthropic), `input` (OpenAI Responses) or
   `contents` (Gemini).

Each part, with its `cache_control` keys left out, is serialized as `json.dumps(part,
ensure_ascii=False, separators=(",", ":"), sort_keys=True)`, encoded in UTF-8 and followed by
one newline; the serialized payload is the concatenation. Tools → system → messages is the
order Anthropic documents for its cache prefix; OpenAI and Gemini also cache by prompt prefix
and render tools ahead of the conversation, so one order serves every target. Breakpoints are
left out because they are request metadata, not prompt content: the provider matches the
cached prefix on content, and a breakpoint that moves to a later block does not change it.
`prefix_bytes` is the length of the longest common prefix of this serialization and the
previous compile's (same chef, same target).

It is computed without serializing the payload again: every part's size is memoised by the
identity of the part object (the adapters hand out the same converted objects for unchanged
messages compile after compile, see `ConversionCache`), and the comparison with the previous
compile is the `CacheLedger`'s (`contextchef.cache.ledger`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple

from contextchef.events import CacheFinding

__all__ = [
    "SECTIONS",
    "CacheBreakpoint",
    "CacheReport",
    "Facts",
    "PartFacts",
    "canonical_part",
    "canonical_text",
    "described",
    "encoded_text",
    "facts_digest",
    "facts_marks",
    "facts_size",
    "part_facts",
    "request_parts",
    "section_lists",
    "text_digest",
]

Section = Literal["settings", "tools", "system", "messages"]
SECTIONS: tuple[Section, ...] = ("settings", "tools", "system", "messages")

_TOOLS_KEYS = ("tools",)
_SYSTEM_KEYS = ("system", "instructions", "system_instruction")
_MESSAGE_KEYS = ("messages", "input", "contents")
_PART_KEYS = frozenset((*_TOOLS_KEYS, *_SYSTEM_KEYS, *_MESSAGE_KEYS))
_MARK = '"cache_control":'


_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), sort_keys=True, default=str)
"""`json.dumps` with these options, without building an encoder per call."""
_dumps = _ENCODER.encode


def _unmarked(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _unmarked(item) for key, item in value.items() if key != "cache_control"}
    if isinstance(value, list):
        return [_unmarked(item) for item in value]
    return value


def described(part: object) -> tuple[str, Facts]:
    """A part's canonical text (breakpoints left out) and its facts, from one serialization
    (two for a part holding a breakpoint). `"cache_control":` can only appear unescaped as a
    key: inside a string its quotes are escaped. The digest is left to whoever needs one
    (`text_digest`): comparing parts needs their sizes first, and texts only when those agree."""
    text = _dumps(part)
    marks = text.count(_MARK) if "cache_control" in text else 0
    if marks:
        text = _dumps(_unmarked(part))
    size = len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))
    return text, PartFacts(size + 1, None, marks) if marks else size + 1


def canonical_text(part: object) -> str:
    """One part as the serialized payload holds it, without the newline: compact JSON with
    sorted keys, no ASCII escaping, `cache_control` keys left out."""
    return described(part)[0]


def canonical_part(part: object) -> bytes:
    """One part as the serialized payload holds it: `canonical_text`, UTF-8, and a newline."""
    return encoded_text(canonical_text(part))


def encoded_text(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass") + b"\n"


def text_digest(text: str) -> bytes:
    """A digest of a canonical text: SHA-256, cut to 128 bits."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()[:16]


class PartFacts(NamedTuple):
    """What is known of one part: its serialized size in bytes (newline included), the digest
    of its canonical text once someone asked for it (`LedgerEntry.digest`; None before), and
    how many breakpoints (`cache_control` keys) it holds."""

    nbytes: int
    digest: bytes | None
    marks: int


Facts = int | PartFacts
"""The facts of a part: its size alone (an `int`) while that is all there is to know (no
breakpoint, no digest asked for yet), else `PartFacts`. Most parts are the first kind, and an
int is no container: a cold compile of 10k messages keeps 10k facts alive, and every container
alive counts towards the collector's next pass."""


def facts_size(known: Facts) -> int:
    """The serialized size of a part, newline included."""
    return known.nbytes if isinstance(known, PartFacts) else known


def facts_marks(known: Facts) -> int:
    """How many breakpoints a part holds."""
    return known.marks if isinstance(known, PartFacts) else 0


def facts_digest(known: Facts) -> bytes | None:
    """The digest of a part's canonical text, if it was asked for already."""
    return known.digest if isinstance(known, PartFacts) else None


def part_facts(part: object) -> Facts:
    """The facts of `part` (see `described`)."""
    return described(part)[1]


def section_lists(data: Mapping[str, Any]) -> tuple[list[Any], ...]:
    """The four sections of a payload as lists of parts (see the module docstring). A section
    held by one list of the payload is that very list (read, never changed): the messages are
    not copied."""
    config = data.get("config")
    settings: dict[str, Any] = {
        key: value for key, value in data.items() if key not in _PART_KEYS and key != "config"
    }
    scopes: tuple[Mapping[str, Any], ...] = (data,)
    if isinstance(config, Mapping):
        scopes = (data, config)
        rest = {key: value for key, value in config.items() if key not in _PART_KEYS}
        if rest:
            settings["config"] = rest
    elif config is not None:
        settings["config"] = config
    lists: list[list[Any]] = [[settings] if settings else []]
    for keys in (_TOOLS_KEYS, _SYSTEM_KEYS, _MESSAGE_KEYS):
        values = []
        for scope in scopes:
            for key in keys:
                value = scope.get(key)
                if value is None:
                    continue
                if key == "system_instruction" and isinstance(value, Mapping):
                    value = value.get("parts", [value])
                values.append(value)
        if len(values) == 1 and type(values[0]) is list:
            lists.append(values[0])
            continue
        parts: list[Any] = []
        for value in values:
            if isinstance(value, list | tuple):
                parts.extend(value)
            else:
                parts.append(value)
        lists.append(parts)
    return tuple(lists)


def request_parts(data: Mapping[str, Any]) -> tuple[list[Any], tuple[int, int, int, int]]:
    """The parts of a payload in request order, and how many each section holds."""
    parts: list[Any] = []
    for section in (lists := section_lists(data)):
        parts.extend(section)
    settings, tools, system, messages = (len(section) for section in lists)
    return parts, (settings, tools, system, messages)


@dataclass(frozen=True, slots=True)
class CacheBreakpoint:
    """A cache breakpoint of the payload: the part that holds it (`section` and `index` in that
    section, as `request_parts` orders them) and `offset`, the byte where that part ends in the
    serialized payload (the prefix it caches ends inside it)."""

    section: Section
    index: int
    offset: int


@dataclass(frozen=True, slots=True)
class CacheReport:
    """`payload.meta.cache`: how much of this payload the provider can serve from its prompt
    cache, by the previous compile of the same chef and target.

    `prefix_bytes` of the `total_bytes` of the serialized payload (see this module) are
    identical to the previous compile's; `reuse_ratio` is their quotient (0.0 on a first
    compile). `breakpoints` are where the payload's cache breakpoints sit; `findings` are what
    `cache_audit=True` found (empty otherwise); `changed` names the part where this payload
    first differs from the previous one (None when nothing differs or nothing came before).
    """

    prefix_bytes: int
    total_bytes: int
    breakpoints: tuple[CacheBreakpoint, ...] = ()
    findings: tuple[CacheFinding, ...] = ()
    changed: tuple[Section, int] | None = None

    @property
    def reuse_ratio(self) -> float:
        return self.prefix_bytes / self.total_bytes if self.total_bytes else 0.0
