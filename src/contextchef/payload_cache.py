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

It is computed without serializing the payload again: every part's size and digest is memoised
by the identity of the part object (the adapters hand out the same converted objects for
unchanged messages compile after compile, see `ConversionCache`), the run of parts shared with
the previous compile is found by a binary search confirmed with one list comparison in C (equal
JSON values count as shared, so a host that reloads its history as fresh dicts is matched
without serializing it), the other parts are compared by digest, and only the first differing
pair is serialized once more to find the exact byte where they part.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import islice
from typing import Any, Literal, NamedTuple

from contextchef._memo import ConversionCache
from contextchef.events import CacheFinding

__all__ = [
    "SECTIONS",
    "CacheBreakpoint",
    "CacheLedger",
    "CacheReport",
    "LedgerEntry",
    "PartFacts",
    "canonical_part",
    "canonical_text",
    "described",
    "part_facts",
    "request_parts",
]

Section = Literal["settings", "tools", "system", "messages"]
SECTIONS: tuple[Section, ...] = ("settings", "tools", "system", "messages")

_TOOLS_KEYS = ("tools",)
_SYSTEM_KEYS = ("system", "instructions", "system_instruction")
_MESSAGE_KEYS = ("messages", "input", "contents")
_PART_KEYS = frozenset((*_TOOLS_KEYS, *_SYSTEM_KEYS, *_MESSAGE_KEYS))
_MARK = '"cache_control":'


def _dumps(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True, default=str)


def _unmarked(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _unmarked(item) for key, item in value.items() if key != "cache_control"}
    if isinstance(value, list):
        return [_unmarked(item) for item in value]
    return value


def described(part: object) -> tuple[str, PartFacts]:
    """A part's canonical text (breakpoints left out) and its facts, from one serialization
    (two for a part holding a breakpoint). `"cache_control":` can only appear unescaped as a
    key: inside a string its quotes are escaped."""
    text = _dumps(part)
    marks = text.count(_MARK) if "cache_control" in text else 0
    if marks:
        text = _dumps(_unmarked(part))
    data = text.encode("utf-8", "surrogatepass")
    return text, PartFacts(len(data) + 1, hashlib.sha256(data).digest()[:16], marks)


def canonical_text(part: object) -> str:
    """One part as the serialized payload holds it, without the newline: compact JSON with
    sorted keys, no ASCII escaping, `cache_control` keys left out."""
    return described(part)[0]


def canonical_part(part: object) -> bytes:
    """One part as the serialized payload holds it: `canonical_text`, UTF-8, and a newline."""
    return canonical_text(part).encode("utf-8", "surrogatepass") + b"\n"


class PartFacts(NamedTuple):
    """What is known of one part: its serialized size in bytes (newline included), a digest of
    its canonical text, and how many breakpoints (`cache_control` keys) it holds."""

    nbytes: int
    digest: bytes
    marks: int


def part_facts(part: object) -> PartFacts:
    """The facts of `part` (see `described`)."""
    return described(part)[1]


def request_parts(data: Mapping[str, Any]) -> tuple[list[Any], tuple[int, int, int, int]]:
    """The parts of a payload in request order, and how many each section holds."""
    config = data.get("config")
    scopes: list[Mapping[str, Any]] = [data]
    if isinstance(config, Mapping):
        scopes.append(config)
    settings: dict[str, Any] = {
        key: value for key, value in data.items() if key not in _PART_KEYS and key != "config"
    }
    if isinstance(config, Mapping):
        rest = {key: value for key, value in config.items() if key not in _PART_KEYS}
        if rest:
            settings["config"] = rest
    elif config is not None:
        settings["config"] = config
    parts: list[Any] = [settings] if settings else []
    counts = [len(parts)]
    for keys in (_TOOLS_KEYS, _SYSTEM_KEYS, _MESSAGE_KEYS):
        before = len(parts)
        for scope in scopes:
            for key in keys:
                value = scope.get(key)
                if value is None:
                    continue
                if key == "system_instruction" and isinstance(value, Mapping):
                    value = value.get("parts", [value])
                if isinstance(value, list | tuple):
                    parts.extend(value)
                else:
                    parts.append(value)
        counts.append(len(parts) - before)
    return parts, (counts[0], counts[1], counts[2], counts[3])


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

    `prefix_bytes` of the `total_bytes` of the serialized payload (see `contextchef.payload_cache`)
    are identical to the previous compile's; `reuse_ratio` is their quotient (0.0 on a first
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


@dataclass(frozen=True, slots=True)
class LedgerEntry:
    """One compile as the ledger keeps it: its parts, their facts and serialized sizes, the
    section sizes and the indices of the parts holding breakpoints."""

    parts: list[Any]
    facts: list[PartFacts]
    sizes: list[int]
    sections: tuple[int, int, int, int]
    marked: tuple[int, ...]
    total: int
    """The size of the whole serialized payload in bytes."""

    def locate(self, index: int) -> tuple[Section, int]:
        """The section of part `index` and its index in that section."""
        start = 0
        for name, size in zip(SECTIONS, self.sections, strict=True):
            if index < start + size:
                return name, index - start
            start += size
        return "messages", index - sum(self.sections[:3])  # pragma: no cover

    def start(self, index: int) -> int:
        """The byte offset where part `index` starts (summed from the end: the parts asked about
        are near it)."""
        return self.total - sum(self.sizes[index:])


def _common_prefix(a: bytes, b: bytes) -> int:
    """The length of the common prefix of two byte strings (binary search over C compares)."""
    low, high = 0, min(len(a), len(b))
    while low < high:
        middle = (low + high + 1) // 2
        if a[:middle] == b[:middle]:
            low = middle
        else:
            high = middle - 1
    return low


def _same(a: object, b: object) -> bool:
    return a is b or a == b


def _shared(old: list[Any], start: int, new: list[Any], new_start: int, limit: int) -> int:
    """How many of the first `limit` parts from `new[new_start]` equal those from
    `old[start]`: the very objects, or equal JSON values (a host that reloads its history).

    A binary search finds where the shared run ends, as long as runs are what they usually are
    (shared, then different), and one list comparison in C, which skips identical objects,
    confirms it; otherwise a scan. (Python's equality takes `1`, `1.0` and `True` for one
    another: a part whose only change is such a number's spelling counts as unchanged.)"""
    if not limit or not _same(old[start], new[new_start]):
        return 0
    low, high = 1, limit
    while low < high:
        middle = (low + high) // 2
        if _same(old[start + middle], new[new_start + middle]):
            low = middle + 1
        else:
            high = middle
    if old[start : start + low] == new[new_start : new_start + low]:
        return low
    shared = 0  # pragma: no cover - a changed part inside an otherwise shared run
    while shared < limit and _same(old[start + shared], new[new_start + shared]):
        shared += 1
    return shared


@dataclass
class CacheLedger:
    """The previous compile of one chef for one target, and the measure of the next against it.

    `memo` holds the facts of parts by identity (shared with the target's `PayloadCounter`, so a
    part is serialized once whichever asks first); `entry` describes a payload, `measure` finds
    its common prefix with the previous compile, `commit` makes it the previous compile.
    """

    memo: ConversionCache
    previous: LedgerEntry | None = None

    def advance(self, data: Mapping[str, Any]) -> tuple[LedgerEntry, int, int | None]:
        """The ledger entry of a payload, its common-prefix bytes with the previous compile and
        the first part that differs (None when the payloads are equal or nothing came before).

        Section by section, the leading parts shared with the previous compile keep its facts
        (see `_shared`); the others are looked up, or serialized, by identity, and compared by
        digest. The long run of reused messages is not copied: the
        previous entry's lists are taken over (it is never read again once replaced).
        """
        parts, sections = request_parts(data)
        previous = self.previous
        convert = self.memo.convert
        if previous is None:
            facts = [convert(part, part_facts) for part in parts]
            sizes = [known.nbytes for known in facts]
            marked = tuple(index for index, known in enumerate(facts) if known.marks)
            return LedgerEntry(parts, facts, sizes, sections, marked, sum(sizes)), 0, None
        pieces: list[tuple[list[PartFacts], int]] = []  # per section: new facts, reused count
        at = old_at = 0
        changed: int | None = None
        for size, old_size in zip(sections, previous.sections, strict=True):
            reused = 0
            if old_size and size:
                reused = _shared(previous.parts, old_at, parts, at, min(size, old_size))
            fresh = [convert(part, part_facts) for part in islice(parts, at + reused, at + size)]
            if changed is None:
                limit = min(size, old_size)
                for offset in range(reused, limit):
                    if previous.facts[old_at + offset].digest != fresh[offset - reused].digest:
                        changed = at + offset
                        break
                else:
                    if size != old_size:
                        changed = at + limit
            pieces.append((fresh, reused))
            at, old_at = at + size, old_at + old_size
        old_parts_list = previous.parts
        entry = self._rebuild(previous, parts, sections, pieces)
        if changed is None:
            return entry, entry.total, None
        prefix = entry.start(changed)
        if changed < len(old_parts_list) and changed < len(parts):
            old_bytes = canonical_part(old_parts_list[changed])
            prefix += _common_prefix(old_bytes, canonical_part(parts[changed]))
        return entry, prefix, changed

    @staticmethod
    def _rebuild(
        previous: LedgerEntry,
        parts: list[Any],
        sections: tuple[int, int, int, int],
        pieces: list[tuple[list[PartFacts], int]],
    ) -> LedgerEntry:
        """The new entry from the previous one's lists: per section, its reused run, then the
        new facts. The messages' run is kept in place (a truncation, not a copy)."""
        facts, sizes = previous.facts, previous.sizes
        starts = [sum(previous.sections[:index]) for index in range(4)]
        message_start, (message_fresh, message_reused) = starts[3], pieces[3]
        head_facts: list[PartFacts] = []
        for index in range(3):
            fresh, reused = pieces[index]
            head_facts += facts[starts[index] : starts[index] + reused]
            head_facts += fresh
        head_sizes = [known.nbytes for known in head_facts]
        fresh_sizes = [known.nbytes for known in message_fresh]
        total = previous.total - sum(sizes[message_start + message_reused :])
        total += sum(head_sizes) + sum(fresh_sizes) - sum(sizes[:message_start])
        del facts[message_start + message_reused :]
        del sizes[message_start + message_reused :]
        facts[:message_start] = head_facts
        sizes[:message_start] = head_sizes
        facts += message_fresh
        sizes += fresh_sizes
        shift = len(head_facts) - message_start
        kept = [
            index + shift
            for index in previous.marked
            if message_start <= index < message_start + message_reused
        ]
        marked = [index for index, known in enumerate(head_facts) if known.marks] + kept
        base = len(head_facts) + message_reused
        marked += [base + offset for offset, known in enumerate(message_fresh) if known.marks]
        return LedgerEntry(parts, facts, sizes, sections, tuple(marked), total)

    def report(
        self,
        entry: LedgerEntry,
        prefix: int,
        at: int | None,
        findings: Sequence[CacheFinding] = (),
    ) -> CacheReport:
        """The `CacheReport` of `entry`, given what `advance` found for it."""
        breakpoints: list[CacheBreakpoint] = []
        for index in entry.marked:
            section, position = entry.locate(index)
            point = CacheBreakpoint(section, position, entry.start(index + 1))
            breakpoints.extend([point] * entry.facts[index].marks)
        return CacheReport(
            prefix_bytes=prefix,
            total_bytes=entry.total,
            breakpoints=tuple(breakpoints),
            findings=tuple(findings),
            changed=entry.locate(at) if at is not None else None,
        )

    def commit(self, entry: LedgerEntry) -> None:
        """Record `entry` as the previous compile, and sweep the memo (once per compile)."""
        self.previous = entry
        self.memo.sweep()
