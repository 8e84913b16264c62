"""Per-message memoisation: private copies of incoming messages, converted forms of them, and
their content digests.

Both rest on one invariant: the chef's copies of messages are never mutated, so an object's
identity stands for its content for as long as the object is held.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Sequence
from itertools import compress, count, islice
from operator import ne
from typing import Any, TypeVar, cast

from contextchef._intake import (  # intake_message re-exported: the pipeline takes it from here
    intake_message,
    intake_messages,
)
from contextchef._sequences import Lineage, identical_prefix
from contextchef.messages import Message

__all__ = [
    "DIGEST_SIZE",
    "ContentDigests",
    "ConversionCache",
    "MessageIntake",
    "intake_message",
    "message_digest",
]

T = TypeVar("T")


class ConversionCache:
    """Remembers converted forms of messages, keyed by the identity of the message objects.

    Valid only for objects that are never mutated (the chef's own copies of the history).

    - `convert_all` converts a whole sequence and reuses the outputs of the longest prefix it
      shares with the previous sequence (a new turn leaves everything before the tail alone);
      `shared` then says how long that prefix was and `generation` counts the calls, so a
      caller keeping state derived from the previous outputs knows how much of it still holds;
    - `convert` memoises single messages; each `sweep()` forgets the ones not used since the
      previous sweep, so it never holds more than about one compile's worth of entries;
    - `state` holds what an adapter keeps between compiles of this cache (its merge state),
      under a key of the adapter's choosing.
    """

    __slots__ = (
        "_current",
        "_current_held",
        "_previous",
        "_previous_held",
        "_sequence",
        "generation",
        "shared",
        "state",
    )

    def __init__(self) -> None:
        # Conversions by `id(message)`, beside the messages themselves (an id is reused once its
        # object is gone, so a hit must be the very object). Two dicts rather than one of
        # `(message, value)` pairs: no tuple per entry, which counts towards the collector's
        # next pass like any container (a cold 10k-message history makes ~10k entries).
        self._current: dict[int, Any] = {}
        self._current_held: dict[int, object] = {}
        self._previous: dict[int, Any] = {}
        self._previous_held: dict[int, object] = {}
        self._sequence: tuple[Sequence[object], list[Any]] = ((), [])
        self.generation = 0
        self.shared = 0
        self.state: dict[object, Any] = {}

    def convert(self, message: object, convert: Callable[[Any], T]) -> T:
        key = id(message)
        value: T
        if self._current_held.get(key) is message:
            value = self._current[key]
            return value
        if self._previous_held.get(key) is message:
            value = self._previous[key]
        else:
            value = convert(message)
        self._current_held[key] = message
        self._current[key] = value
        return value

    def remember(self, message: object, value: object) -> None:
        """Memoise `value` as `message`'s conversion (one converted without the memo)."""
        key = id(message)
        self._current_held[key] = message
        self._current[key] = value

    def convert_all(
        self, messages: Sequence[object], convert: Callable[[Any], T], known: Lineage | None = None
    ) -> list[T]:
        """`[convert(m) for m in messages]`, reusing what the previous call already converted.
        `known`: the lineage of `messages` from the previous call's (see `Lineage`); then
        `messages` (its maker's own, never mutated) is kept as it is rather than copied."""
        previous, outputs = self._sequence
        owned = known is not None and known.sequence is messages
        sequence = messages if owned else tuple(messages)
        shared = identical_prefix(previous, sequence, known)
        result: list[T] = outputs[:shared]
        if previous:
            memo = self.convert
            result.extend([memo(message, convert) for message in sequence[shared:]])
        else:  # first call: nothing to reuse, so skip the per-message bookkeeping
            result.extend([convert(message) for message in sequence])
        self._sequence = (sequence, result)
        self.shared = shared
        self.generation += 1
        return list(result)

    def sweep(self) -> None:
        self._previous, self._current = self._current, {}
        self._previous_held, self._current_held = self._current_held, {}


class MessageIntake:
    """Validates incoming messages and keeps private copies of them, reusing unchanged ones.

    A list that starts and ends like the previous one (message for message equal to the copies
    taken then, compared in C: the same dicts, a rebuilt list, or fresh dicts reloaded from a
    database) keeps those copies, and only the part in between is looked at: a message there
    equal to the copy at its place, counted from the start or from the end (an insertion or a
    deletion before it), keeps that copy too; the others are validated and copied. Everything
    memoised on a copy (conversions, token counts, digests) stays valid that way. A message
    changed in place gets a fresh copy. Nothing is kept if validation fails, and nothing of the
    host's is held: a host that reloads its history can free the old one.
    Each copy is made by `_intake.intake_message` (or `intake_messages`, for a whole history or
    an appended batch: the same copies, validated against the message schema), so every message
    the chef holds is strict JSON.
    "Equal" is Python's `==`, under which `1`, `1.0` and `True` are one value: a message whose
    only change is between those keeps its earlier copy.
    """

    __slots__ = ("_copies", "lineage")

    def __init__(self) -> None:
        self._copies: list[Message] = []
        self.lineage = Lineage((), self._copies, 0)
        """How the list taken last continues the one taken before (see `Lineage`)."""

    def take(self, messages: Iterable[object]) -> list[Message]:
        """The private copies of `messages`: the intake's own list, so never mutate it."""
        given = messages if type(messages) is list else list(messages)  # only read
        copies = self._copies
        if not copies:  # a first history: nothing to match
            self._copies = out = intake_messages(given)
            self.lineage = Lineage(copies, out, 0)
            return out
        held = len(copies)
        if len(given) >= held:  # the usual turn: the same messages, and maybe new ones after
            # compared as the list that becomes the result: the copies, then the host's new
            # messages (the very objects, so comparing them costs nothing; no slice of the
            # host's list), which their copies then replace
            probe = cast("list[object]", copies) + given[held:]
            if _equal(given, probe):  # host first: its dicts looked up in the copies, faster
                if len(given) > held:
                    probe[held:] = intake_messages(given[held:], held)
                self._copies = out = cast("list[Message]", probe)
                self.lineage = Lineage(copies, out, held)
                return out
        shared, tail = _equal_ends(given, copies)
        out = copies[:shared]
        shift = len(copies) - len(given)
        for index in range(shared, len(given) - tail):
            message = given[index]
            copy = _equal_copy(message, copies, index)
            if copy is None:
                copy = _equal_copy(message, copies, index + shift)
            out.append(copy if copy is not None else intake_message(message, index))
        if tail:
            out.extend(copies[len(copies) - tail :])
        self._copies = out
        self.lineage = Lineage(copies, out, shared)
        return out

    @property
    def held(self) -> Sequence[Message]:
        """The copies taken last (the list `extend` appends to); never mutate them."""
        return self._copies

    def rebase(self, copies: Sequence[Message]) -> None:
        """Take `copies` (private copies already: a cleared or restored history) as the list
        taken last, so the next `extend` appends to them."""
        self._copies = out = list(copies)
        self.lineage = Lineage((), out, 0)

    def extend(self, messages: Iterable[object]) -> list[Message]:
        """`take(previous + messages)`, where `previous` is the list taken last, as it was
        then: only `messages` are looked at (an in-place edit of an earlier one goes unseen).
        The intake's own list, like `take`'s."""
        copies = self._copies  # read once: another thread may set a history meanwhile
        new = intake_messages(list(messages), len(copies))
        self._copies = out = [*copies, *new]
        self.lineage = Lineage(copies, out, len(copies))
        return out


def _equal_copy(message: object, copies: list[Message], at: int) -> Message | None:
    """`copies[at]` if there is one and it equals `message`, else None."""
    if not 0 <= at < len(copies):
        return None
    copy = copies[at]
    try:
        return copy if copy == message else None
    except Exception:  # a foreign object whose `==` raises: validation will say what it is
        return None


def _equal(a: list[object], b: list[object]) -> bool:
    """`a == b`, compared in C; False when an item's `==` raises (validation will say why)."""
    try:
        return a == b
    except Exception:
        return False


def _equal_ends(given: list[object], copies: list[Message]) -> tuple[int, int]:
    """How many leading and (past those) trailing messages of `given` equal `copies`' there,
    compared at C speed. A foreign object whose `!=` raises counts as different: validation
    will say what it is."""
    limit = min(len(given), len(copies))
    try:
        shared = limit
        # one comparison in the common case, an append (a whole list is compared as it is)
        if (given if limit == len(given) else given[:limit]) != (
            copies if limit == len(copies) else copies[:limit]
        ):
            shared = next(compress(count(), map(ne, given, copies)))
        room = limit - shared
        if not room or len(given) == len(copies) == shared:
            return shared, 0
        backwards = map(ne, islice(reversed(given), room), reversed(copies))
        return shared, next(compress(count(), backwards), room)
    except Exception:
        return 0, 0


DIGEST_SIZE = 16
"""Bytes of a message digest: SHA-256 cut to 128 bits, far beyond any accidental collision."""


def message_digest(message: object) -> bytes:
    """A stable digest of a message's content: SHA-256 of its canonical JSON (sorted keys,
    compact separators, UTF-8 as it is). Equal content gives equal digests whatever the dict
    order or the object, so a history reloaded from JSON is recognised as the same history.
    (SHA-256 rather than BLAKE2b: with the CPU's SHA extensions it hashes twice as fast; the
    JSON encoding costs more than either.)"""
    text = json.dumps(message, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    data = text.encode("utf-8", "surrogatepass")  # a lone surrogate is content, not an error
    return hashlib.sha256(data).digest()[:DIGEST_SIZE]


class ContentDigests:
    """`message_digest` of the chef's message copies, memoised per object identity.

    Valid because the copies are never mutated. `all` reuses the digests of the longest prefix
    a sequence shares (object for object) with the previous one, so a host passing the same
    dicts every turn pays an identity check per message, not a dictionary lookup. Each `sweep()`
    forgets the digests not asked for since the previous sweep (once per `set_history`), so it
    holds about one history's worth and never keeps a message the chef let go of for long.
    """

    __slots__ = ("_cache",)

    def __init__(self) -> None:
        self._cache = ConversionCache()

    def of(self, message: Message) -> bytes:
        return self._cache.convert(message, message_digest)

    def all(self, messages: Sequence[Message]) -> list[bytes]:
        return self._cache.convert_all(messages, message_digest)

    def sweep(self) -> None:
        self._cache.sweep()
