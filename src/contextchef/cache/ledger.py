"""The cache ledger: what one chef remembers of its previous compile for one target, and the
measure of the next compile against it (`payload.meta.cache`, defined in `cache.economics`).

The ledger keeps the previous compile's parts, section by section, in lists of its own, with
their facts and running byte offsets. The run of parts shared with the previous compile is found
by a binary search and confirmed by one list comparison in C over the ledger's list turned into
this compile's in place: identical objects are skipped without being touched, equal JSON values
count as shared (a host that reloads its history as fresh dicts is matched without serializing
it), and the long shared run is neither copied nor walked in Python. Other parts are compared by
size, then by canonical text; only the first differing pair is serialized to find the exact
byte where they part.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import accumulate
from typing import Any, NamedTuple

from contextchef._memo import ConversionCache
from contextchef.cache._part_sizes import message_facts
from contextchef.cache.economics import (
    SECTIONS,
    CacheBreakpoint,
    CacheReport,
    Facts,
    PartFacts,
    Section,
    canonical_text,
    encoded_text,
    facts_digest,
    facts_marks,
    facts_size,
    part_facts,
    section_lists,
    text_digest,
)
from contextchef.events import CacheFinding

__all__ = ["CacheLedger", "LedgerEntry", "SectionEntry", "common_prefix"]


@dataclass(slots=True)
class SectionEntry:
    """One section of a compile as the ledger keeps it: its parts (a list of the ledger's own),
    their facts, `offsets` (where each part starts within the section, then the section's size
    in bytes) and the indices of the parts holding breakpoints."""

    parts: list[Any]
    facts: list[Facts]
    offsets: list[int]
    marked: list[int]

    @classmethod
    def first(
        cls, parts: Sequence[Any], facts_of: Convert, describe: Describe = part_facts
    ) -> SectionEntry:
        """The entry of a section with nothing to compare against: every part's facts."""
        facts = [facts_of(part, describe) for part in parts]
        offsets = [0, *accumulate(map(facts_size, facts))]
        marked = [index for index, known in enumerate(facts) if facts_marks(known)]
        return cls(list(parts), facts, offsets, marked)


@dataclass(slots=True)
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
        settings, tools, system, messages = blocks
        head = len(settings.parts) + len(tools.parts) + len(system.parts)
        marked = [*settings.marked]
        if tools.marked or system.marked:
            marked += [len(settings.parts) + index for index in tools.marked]
            marked += [head - len(system.parts) + index for index in system.marked]
        marked += [head + index for index in messages.marked]
        sections = (len(settings.parts), len(tools.parts), len(system.parts), len(messages.parts))
        total = sum([block.offsets[-1] for block in blocks])
        return cls(tuple(blocks), sections, tuple(marked), total)

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

    def fact(self, index: int) -> Facts:
        """The facts of part `index`."""
        number, position = self._find(index)
        return self.blocks[number].facts[position]

    def digest(self, index: int) -> bytes:
        """The digest of part `index`'s canonical text, computed once: it stays in the facts,
        which the next compile's entry keeps for the parts it shares with this one."""
        number, position = self._find(index)
        facts = self.blocks[number].facts
        known = facts[position]
        digest = facts_digest(known)
        if digest is None:
            digest = text_digest(canonical_text(self.blocks[number].parts[position]))
            facts[position] = PartFacts(facts_size(known), digest, facts_marks(known))
        return digest

    def start(self, index: int) -> int:
        """The byte offset where part `index` starts (`total` past the last part)."""
        number, position = self._find(index)
        before = sum(block.offsets[-1] for block in self.blocks[:number])
        return before + self.blocks[number].offsets[position]


Describe = Callable[[Any], Facts]
Convert = Callable[[Any, Describe], Facts]
"""`ConversionCache.convert`: the facts of a part, memoised by identity."""

_MISSING: Any = object()
_BACKOFF = 64
"""How far before a refuted shared-run boundary the next one is tried (see `_take_over`)."""


def common_prefix(a: bytes, b: bytes) -> int:
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
    fresh: list[Facts] = []
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
                if facts_size(now) != facts_size(known):
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
    kept_marks = [index for index in marked if index < kept]
    end = offsets[-1]
    for index, known in enumerate(fresh, kept):
        end += facts_size(known)
        offsets.append(end)
        if facts_marks(known):
            kept_marks.append(index)
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
    latest: _Pending | None = None
    """The last compile while it is measured lazily (`defer`) and not yet read: then
    `previous` is None (the pending compile holds it)."""

    def advance(self, data: Mapping[str, Any]) -> tuple[LedgerEntry, int, int | None]:
        """The ledger entry of a payload, its common-prefix bytes with the previous compile and
        the first part that differs (None when the payloads are equal or nothing came before).

        Section by section (see `_advance_section`); only the first differing pair of parts is
        serialized again, to find the exact byte where they part. The previous entry's lists
        are taken over (it is never read again): should this fail halfway, the ledger forgets
        the previous compile rather than measure against a half-updated one."""
        if self.latest is not None:  # the compile before was measured lazily: measure it now
            self.latest.report()
        lists = section_lists(data)
        previous, facts_of = self.previous, self.memo.convert
        if previous is None:  # every part is new: message parts are sized by `message_facts`
            return _entry_of(lists, facts_of), 0, None
        try:
            return self._measure(previous, lists, facts_of)
        except BaseException:
            self.previous = None
            raise

    def defer(self, data: Mapping[str, Any]) -> Callable[[], CacheReport]:
        """What `advance`, `report` and `commit` would give for `data`, measured only when first
        called (then remembered); this compile becomes the previous one now. A host that never
        reads `meta.cache` never pays for sizing the parts: the ledger keeps the compile's lists
        of parts (their copies: a list, not the parts) and the previous compile's, or its
        measured entry when it has one (the cheap way to measure against)."""
        lists = tuple(list(parts) for parts in section_lists(data))
        previous, latest = self.previous, self.latest
        if previous is not None:
            before: tuple[list[Any], ...] | None = tuple(b.parts for b in previous.blocks)
        else:
            before = latest.lists if latest is not None else None
        pending = _Pending(self, lists, before, previous)
        self.previous, self.latest = None, pending
        self.memo.sweep()
        return pending.report

    @staticmethod
    def _measure(
        previous: LedgerEntry, lists: Sequence[list[Any]], facts_of: Convert
    ) -> tuple[LedgerEntry, int, int | None]:
        blocks: list[SectionEntry] = []
        changed: int | None = None
        before: Any = _MISSING
        texts: tuple[str, str] | None = None
        at = 0
        for number, parts in enumerate(lists):
            block = previous.blocks[number]
            if number < 3 and parts == block.parts:  # tools and system: usually unchanged
                blocks.append(block)
                at += len(parts)
                continue
            block, change = _advance_section(block, parts, facts_of)
            if changed is None and change is not None:
                changed, before, texts = at + change.at, change.before, change.texts
                if before is _MISSING:  # the previous compile's next part, if any
                    for old in previous.blocks[number + 1 :]:
                        if old.parts:
                            before = old.parts[0]
                            break
            blocks.append(block)
            at += len(parts)
        entry = LedgerEntry.of(blocks)
        if changed is None:
            return entry, entry.total, None
        prefix = entry.start(changed)
        if before is not _MISSING and changed < entry.count:
            if texts is None:
                texts = canonical_text(before), canonical_text(entry.part(changed))
            prefix += common_prefix(encoded_text(texts[0]), encoded_text(texts[1]))
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
            breakpoints.extend([point] * facts_marks(entry.fact(index)))
        return CacheReport(
            prefix_bytes=prefix,
            total_bytes=entry.total,
            breakpoints=tuple(breakpoints),
            findings=tuple(findings),
            changed=entry.locate(at) if at is not None else None,
        )

    def commit(self, entry: LedgerEntry) -> None:
        """Record `entry` as the previous compile, and sweep the memo (once per compile)."""
        self.previous, self.latest = entry, None
        self.memo.sweep()


def _entry_of(lists: Sequence[list[Any]], facts_of: Convert) -> LedgerEntry:
    """The entry of a compile with nothing to compare against (message parts sized by
    `message_facts`)."""
    describe = (part_facts, part_facts, part_facts, message_facts)
    blocks = [
        SectionEntry.first(parts, facts_of, how) for parts, how in zip(lists, describe, strict=True)
    ]
    return LedgerEntry.of(blocks)


class _Pending:
    """A compile measured lazily: its lists of parts, the previous compile's (None for the
    first) and, when the ledger had measured it, the previous compile's entry."""

    __slots__ = ("_report", "base", "before", "ledger", "lists")

    def __init__(
        self,
        ledger: CacheLedger,
        lists: tuple[list[Any], ...],
        before: tuple[list[Any], ...] | None,
        base: LedgerEntry | None,
    ) -> None:
        self.ledger, self.lists, self.before, self.base = ledger, lists, before, base
        self._report: CacheReport | None = None

    def report(self) -> CacheReport:
        """The compile's `CacheReport`, measured the first time (as `advance` would have)."""
        if self._report is not None:
            return self._report
        ledger, facts_of = self.ledger, self.ledger.memo.convert
        base, before = self.base, self.before
        self.base = self.before = None  # a base's lists are taken over: never measure twice
        if before is None:
            entry, prefix, changed = _entry_of(self.lists, facts_of), 0, None
        else:
            if base is None:  # the previous compile was never measured: size it now
                base = _entry_of(before, facts_of)
            entry, prefix, changed = CacheLedger._measure(base, self.lists, facts_of)
        self._report = ledger.report(entry, prefix, changed)
        if ledger.latest is self:  # the next compile measures against this one's entry
            ledger.previous, ledger.latest = entry, None
        return self._report
