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
messages compile after compile, see `ConversionCache`). The ledger keeps the previous compile's
parts, section by section, in lists of its own; the run of parts shared with the previous
compile is found by a binary search and confirmed by one list comparison in C over the ledger's
list turned into this compile's in place (identical objects are skipped without being touched,
equal JSON values count as shared, so a host that reloads its history as fresh dicts is matched
without serializing it), so the long shared run is neither copied nor walked in Python. Other
parts are compared by size, then by canonical text, and only the first differing pair is
serialized to find the exact byte where they part. Byte offsets are kept as running sums.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import accumulate, islice
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
    "SectionEntry",
    "canonical_part",
    "canonical_text",
    "described",
    "part_facts",
    "request_parts",
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


def described(part: object) -> tuple[str, PartFacts]:
    """A part's canonical text (breakpoints left out) and its facts, from one serialization
    (two for a part holding a breakpoint). `"cache_control":` can only appear unescaped as a
    key: inside a string its quotes are escaped. The digest is left to whoever needs one
    (`text_digest`): comparing parts needs their sizes first, and texts only when those agree."""
    text = _dumps(part)
    marks = text.count(_MARK) if "cache_control" in text else 0
    if marks:
        text = _dumps(_unmarked(part))
    size = len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))
    return text, PartFacts(size + 1, None, marks)


def canonical_text(part: object) -> str:
    """One part as the serialized payload holds it, without the newline: compact JSON with
    sorted keys, no ASCII escaping, `cache_control` keys left out."""
    return described(part)[0]


def canonical_part(part: object) -> bytes:
    """One part as the serialized payload holds it: `canonical_text`, UTF-8, and a newline."""
    return _encoded(canonical_text(part))


def _encoded(text: str) -> bytes:
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


def part_facts(part: object) -> PartFacts:
    """The facts of `part` (see `described`)."""
    return described(part)[1]


def _section_lists(data: Mapping[str, Any]) -> tuple[list[Any], ...]:
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
    for section in (lists := _section_lists(data)):
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
class SectionEntry:
    """One section of a compile as the ledger keeps it: its parts (a list of the ledger's own),
    their facts, `offsets` (where each part starts within the section, then the section's size
    in bytes) and the indices of the parts holding breakpoints."""

    parts: list[Any]
    facts: list[PartFacts]
    offsets: list[int]
    marked: list[int]

    @classmethod
    def first(cls, parts: Sequence[Any], facts_of: Convert) -> SectionEntry:
        """The entry of a section with nothing to compare against: every part's facts."""
        facts = [facts_of(part, part_facts) for part in parts]
        offsets = [0, *accumulate(known.nbytes for known in facts)]
        marked = [index for index, known in enumerate(facts) if known.marks]
        return cls(list(parts), facts, offsets, marked)


@dataclass(frozen=True, slots=True)
class LedgerEntry:
    """One compile as the ledger keeps it: its four sections, how many parts each holds, the
    flat indices (in request order) of the parts holding breakpoints, and the size in bytes of
    the whole serialized payload."""

    blocks: tuple[SectionEntry, ...]
    sections: tuple[int, int, int, int]
    marked: tuple[int, ...]
    total: int

    @classmethod
    def of(cls, blocks: Sequence[SectionEntry]) -> LedgerEntry:
        sizes = [len(block.parts) for block in blocks]
        marked: list[int] = []
        at = 0
        for block, size in zip(blocks, sizes, strict=True):
            marked += [at + index for index in block.marked]
            at += size
        total = sum(block.offsets[-1] for block in blocks)
        return cls(tuple(blocks), (sizes[0], sizes[1], sizes[2], sizes[3]), tuple(marked), total)

    @property
    def count(self) -> int:
        """How many parts the payload has."""
        return sum(self.sections)

    def _find(self, index: int) -> tuple[int, int]:
        start = 0
        for number, size in enumerate(self.sections):
            if index < start + size:
                return number, index - start
            start += size
        return 3, index - sum(self.sections[:3])

    def locate(self, index: int) -> tuple[Section, int]:
        """The section of part `index` and its index in that section."""
        number, position = self._find(index)
        return SECTIONS[number], position

    def part(self, index: int) -> Any:
        """Part `index` in request order."""
        number, position = self._find(index)
        return self.blocks[number].parts[position]

    def fact(self, index: int) -> PartFacts:
        """The facts of part `index`."""
        number, position = self._find(index)
        return self.blocks[number].facts[position]

    def digest(self, index: int) -> bytes:
        """The digest of part `index`'s canonical text, computed once: it stays in the facts,
        which the next compile's entry keeps for the parts it shares with this one."""
        number, position = self._find(index)
        facts = self.blocks[number].facts
        known = facts[position]
        if known.digest is None:
            digest = text_digest(canonical_text(self.blocks[number].parts[position]))
            known = facts[position] = known._replace(digest=digest)
        return known.digest  # type: ignore[return-value]  # set just above

    def start(self, index: int) -> int:
        """The byte offset where part `index` starts (`total` past the last part)."""
        number, position = self._find(index)
        before = sum(block.offsets[-1] for block in self.blocks[:number])
        return before + self.blocks[number].offsets[position]


Convert = Callable[[Any, Callable[[Any], PartFacts]], PartFacts]
"""`ConversionCache.convert`: the facts of a part, memoised by identity."""

_MISSING: Any = object()
_BACKOFF = 64
"""How far before a refuted shared-run boundary the next one is tried (see `_take_over`)."""


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


def _boundary(old: list[Any], new: list[Any], limit: int) -> int:
    """Where the run of leading parts shared by `old` and `new` (the very objects, or equal
    values) ends, if runs are what they usually are (shared, then different): a binary search."""
    if not limit:
        return 0
    last = limit - 1
    if old[last] is new[last] or old[last] == new[last]:
        return limit
    low, high = 0, last
    while low < high:
        middle = (low + high) // 2
        if old[middle] is new[middle] or old[middle] == new[middle]:
            low = middle + 1
        else:
            high = middle
    return low


def _take_over(old: list[Any], new: list[Any], limit: int) -> tuple[int, list[Any]]:
    """Turn the ledger's list `old` into this compile's list of the section, in place: its first
    `kept` parts stay (each is `new`'s part or equal to it), the rest are `new`'s. Returns
    `kept` and the parts of `old` it displaced.

    `kept` is a boundary from `_boundary`, confirmed by one list comparison in C over the whole
    section (its first `kept` items are compared, identical objects skipped without being
    touched; the rest are `new`'s very objects); refuted, it is retried `_BACKOFF` parts
    earlier, then at 0. Nothing of the long shared run is copied. (Python's equality takes `1`,
    `1.0` and `True` for one another: a part whose only change is such a number's spelling
    counts as unchanged.)"""
    candidate = _boundary(old, new, limit)
    for kept in dict.fromkeys((candidate, max(0, candidate - _BACKOFF), 0)):
        displaced = old[kept:]
        old[kept:] = new[kept:]
        if not kept or old == new:
            return kept, displaced
        old[kept:] = displaced
    raise AssertionError("unreachable")  # pragma: no cover - kept == 0 always confirms


class _Change(NamedTuple):
    """Where a section first differs from the previous compile's: the index `at`, the previous
    compile's part there (`_MISSING` when its section ended before) and, when they were
    compared, the canonical texts of both parts."""

    at: int
    before: Any
    texts: tuple[str, str] | None = None


def _advance_section(
    previous: SectionEntry, new: list[Any], facts_of: Convert
) -> tuple[SectionEntry, _Change | None]:
    """The entry of a section against the previous compile's (whose lists it takes over), and
    where the two first differ (None when they do not).

    The shared run keeps its facts (see `_take_over`); after it, a part identical to the one it
    replaces keeps its facts too, the others are looked up, or serialized, by identity and
    compared by size, then, sizes equal, by canonical text."""
    old, facts, offsets, marked = previous.parts, previous.facts, previous.offsets, previous.marked
    size, old_size = len(new), len(old)
    limit = min(size, old_size)
    kept, displaced = _take_over(old, new, limit)
    fresh: list[PartFacts] = []
    change: _Change | None = None
    in_run = True
    for index in range(kept, limit):
        before, part = displaced[index - kept], new[index]
        known = facts[index]
        if before is part:
            pass
        elif in_run and before == part:
            old[index] = before  # the part whose facts are kept
        else:
            in_run = False
            now = facts_of(part, part_facts)
            if change is None:
                if now.nbytes != known.nbytes:
                    change = _Change(index, before)
                elif (texts := (canonical_text(before), canonical_text(part)))[0] != texts[1]:
                    change = _Change(index, before, texts)
            known = now
        fresh.append(known)
    fresh += [facts_of(part, part_facts) for part in new[limit:]]
    if change is None and size != old_size:
        change = _Change(limit, displaced[limit - kept] if limit < old_size else _MISSING)
    del facts[kept:], offsets[kept + 1 :]
    facts += fresh
    offsets += islice(accumulate((known.nbytes for known in fresh), initial=offsets[-1]), 1, None)
    kept_marks = [index for index in marked if index < kept]
    kept_marks += [kept + offset for offset, known in enumerate(fresh) if known.marks]
    return SectionEntry(old, facts, offsets, kept_marks), change


@dataclass
class CacheLedger:
    """The previous compile of one chef for one target, and the measure of the next against it.

    `memo` holds the facts of parts by identity (shared with the target's `PayloadCounter`, so a
    part is serialized once whichever asks first); `advance` describes a payload and finds its
    common prefix with the previous compile, `commit` makes it the previous compile.
    """

    memo: ConversionCache
    previous: LedgerEntry | None = None

    def advance(self, data: Mapping[str, Any]) -> tuple[LedgerEntry, int, int | None]:
        """The ledger entry of a payload, its common-prefix bytes with the previous compile and
        the first part that differs (None when the payloads are equal or nothing came before).

        Section by section (see `_advance_section`); only the first differing pair of parts is
        serialized again, to find the exact byte where they part. The previous entry's lists
        are taken over (it is never read again): should this fail halfway, the ledger forgets
        the previous compile rather than measure against a half-updated one."""
        lists = _section_lists(data)
        previous, facts_of = self.previous, self.memo.convert
        if previous is None:
            return LedgerEntry.of([SectionEntry.first(parts, facts_of) for parts in lists]), 0, None
        try:
            return self._measure(previous, lists, facts_of)
        except BaseException:
            self.previous = None
            raise

    @staticmethod
    def _measure(
        previous: LedgerEntry, lists: Sequence[list[Any]], facts_of: Convert
    ) -> tuple[LedgerEntry, int, int | None]:
        blocks: list[SectionEntry] = []
        first: _Change | None = None
        at = 0
        for number, parts in enumerate(lists):
            block, change = _advance_section(previous.blocks[number], parts, facts_of)
            if first is None and change is not None:
                first = change._replace(at=at + change.at)
                if change.before is _MISSING:  # the previous compile's next part, if any
                    later = [
                        part for old in previous.blocks[number + 1 :] for part in old.parts[:1]
                    ]
                    first = first._replace(before=later[0] if later else _MISSING)
            blocks.append(block)
            at += len(parts)
        entry = LedgerEntry.of(blocks)
        if first is None:
            return entry, entry.total, None
        changed, before, texts = first
        prefix = entry.start(changed)
        if before is not _MISSING and changed < entry.count:
            if texts is None:
                texts = canonical_text(before), canonical_text(entry.part(changed))
            prefix += _common_prefix(_encoded(texts[0]), _encoded(texts[1]))
        return entry, prefix, changed

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
            breakpoints.extend([point] * entry.fact(index).marks)
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
