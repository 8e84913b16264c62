"""`identical_prefix`: how far two sequences hold the very same objects.

Every memo keyed by identity (the chef's copies are never mutated) starts by asking this of the
last sequence it saw and the new one; it runs at C speed, so a long history costs no Python loop.
A stage that builds one sequence from another already knows most of the answer: it says so with
a `Lineage`, and the question then costs nothing but the items past what it vouches for.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import compress, count, islice
from operator import is_not

__all__ = ["Lineage", "identical_prefix"]

_TAIL = 8
"""Trailing items looked at one by one for a changed tail (a compile's stitched last message)."""


@dataclass(frozen=True, slots=True, eq=False)
class Lineage:
    """What the stage that made `sequence` knows: its first `shared` items are `base`'s first
    `shared` items, object for object (`base` is the sequence it made before, from which it
    carried them over). Both sequences are the stage's own and never mutated, so the claim
    holds for as long as both objects live; it is checked by identity, so a lineage handed
    along with any other pair of sequences is simply ignored."""

    base: Sequence[object]
    sequence: Sequence[object]
    shared: int


def identical_prefix(a: Sequence[object], b: Sequence[object], known: Lineage | None = None) -> int:
    """How many leading items `a` and `b` share, object for object (found at C speed: `map`
    of `is_not`, not a Python loop). With a `known` lineage of the two (in either order), only
    the items past its `shared` ones are compared. Otherwise the usual cases are checked first,
    each by one `any` pass (twice as fast as locating a difference): an appended turn (every
    common item shared) and a changed tail (the last few common items differ, every one before
    them is shared); anything else is located by a second pass."""
    limit = min(len(a), len(b))
    if known is not None and (
        (known.base is a and known.sequence is b) or (known.base is b and known.sequence is a)
    ):
        start = min(known.shared, limit)
        if start:  # slices: no walk over the start
            rest = map(is_not, a[start:limit], b[start:limit])
            return next(compress(count(start), rest), limit)
    end = limit
    while end and limit - end < _TAIL and a[end - 1] is not b[end - 1]:
        end -= 1  # a changed tail: the items from `end` on all differ
    if (not end or a[end - 1] is b[end - 1]) and not any(map(is_not, islice(a, end), b)):
        return end
    return next(compress(count(), map(is_not, a, b)), limit)
