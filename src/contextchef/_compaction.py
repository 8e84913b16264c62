"""The record of an overflow that landed, which `set_history` re-applies to a host's
ever-growing history (recognised by content, so a history reloaded as fresh dicts each turn
matches too). It lives below the chef because a snapshot carries these records."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field

from contextchef._memo import DIGEST_SIZE, ContentDigests
from contextchef.messages import Message

__all__ = ["MAX_COMPACTIONS", "Compaction", "landed", "record"]


MAX_COMPACTIONS = 4
"""Unrelated compaction records a chef keeps (the oldest goes first). One conversation that
keeps growing folds every overflow into a single record; more appear only when a host switches
the chef between conversations or rewinds one below a summary. A few cover a host alternating
between branches (retry, regenerate) without the records, each holding its replacement
messages, growing with every conversation the chef has ever seen."""


def _prefix_hash(digests: Sequence[bytes]) -> hashlib.blake2b:
    """The running hash of a prefix: BLAKE2b over its messages' fixed-size digests in order."""
    return hashlib.blake2b(b"".join(digests), digest_size=DIGEST_SIZE)


@dataclass(frozen=True, slots=True)
class Compaction:
    """An overflow result that landed: the first `count` messages of the history became
    `replacement`.

    The prefix is known by content only (`digest`, a hash of its messages' `message_digest`s),
    so a host that reloads its history as fresh dicts every turn still matches it, and the
    record holds the replacement messages, never the (long) prefix they replaced. `marks` are
    the replacement's own digests, which a later compaction's prefix starts with when it was
    made on this one's result; `running` is the prefix hash, kept open to extend it then;
    `head` is the first message's digest, which rejects another conversation at once.
    A record read back from a portable snapshot has no `running` hash (it cannot be carried):
    it still applies, and a later compaction becomes a record of its own instead of folding.
    """

    count: int
    digest: bytes
    head: bytes
    replacement: tuple[Message, ...]
    marks: tuple[bytes, ...]
    running: hashlib.blake2b | None = field(compare=False, repr=False)

    @classmethod
    def of(
        cls, prefix: Sequence[bytes], replacement: tuple[Message, ...], marks: tuple[bytes, ...]
    ) -> Compaction:
        """The record of `prefix` (its messages' digests, one at least) becoming `replacement`."""
        running = _prefix_hash(prefix)
        return cls(len(prefix), running.digest(), prefix[0], replacement, marks, running)

    def apply(self, history: list[Message], digests: ContentDigests) -> list[Message]:
        """`history` with its first `count` messages replaced, when they are the compacted
        prefix (same digests); `history` itself otherwise."""
        count = self.count
        if len(history) < count or digests.of(history[0]) != self.head:
            return history
        if _prefix_hash(digests.all(history[:count])).digest() != self.digest:
            return history
        return [*self.replacement, *history[count:]]

    def then(
        self, prefix: Sequence[bytes], replacement: tuple[Message, ...], marks: tuple[bytes, ...]
    ) -> Compaction | None:
        """This compaction followed by a later one (`prefix` digests became `replacement`), as
        one, when the later was made on this one's result (its prefix starts with this
        replacement); None when they are unrelated."""
        count = len(self.marks)
        if self.running is None or len(prefix) < count or tuple(prefix[:count]) != self.marks:
            return None
        running = self.running.copy()
        running.update(b"".join(prefix[count:]))
        return Compaction(
            self.count + len(prefix) - count,
            running.digest(),
            self.head,
            replacement,
            marks,
            running,
        )


def record(
    compactions: list[Compaction],
    prefix: Sequence[bytes],
    replacement: tuple[Message, ...],
    marks: tuple[bytes, ...],
) -> list[Compaction]:
    """`compactions` with a new one (`prefix` digests became `replacement`, whose digests are
    `marks`) added. A compaction made on an earlier one's result is folded into it, in place, so
    an ever-growing history keeps one record, not one per overflow; an unrelated one is appended
    and the oldest dropped beyond `MAX_COMPACTIONS`."""
    for index in range(len(compactions) - 1, -1, -1):
        folded = compactions[index].then(prefix, replacement, marks)
        if folded is not None:
            return [*compactions[:index], folded, *compactions[index + 1 :]]
    return [*compactions, Compaction.of(prefix, replacement, marks)][-MAX_COMPACTIONS:]


def landed(
    before: tuple[Message, ...], after: tuple[Message, ...]
) -> tuple[tuple[Message, ...], tuple[Message, ...]]:
    """What an overflow changed: the prefix of `before` and the messages of `after` that
    replaced it (the common tail, the very same objects in one compile, is left out)."""
    kept = 0
    while kept < min(len(before), len(after)) and before[-1 - kept] is after[-1 - kept]:
        kept += 1
    return before[: len(before) - kept], after[: len(after) - kept]
