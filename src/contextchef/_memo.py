"""Per-message memoisation: private copies of incoming messages, converted forms of them, and
their content digests.

Both rest on one invariant: the chef's copies of messages are never mutated, so an object's
identity stands for its content for as long as the object is held.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar, cast

from contextchef._intake import Unusual, fast_intake
from contextchef._jsonvalue import NotJson, strict_json
from contextchef.errors import MessageError
from contextchef.messages import Message, validate_message

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
    - `convert` memoises single messages; each `sweep()` forgets the ones not used since the
      previous sweep, so it never holds more than about one compile's worth of entries.
    """

    __slots__ = ("_current", "_previous", "_sequence")

    def __init__(self) -> None:
        self._previous: dict[int, tuple[object, Any]] = {}
        self._current: dict[int, tuple[object, Any]] = {}
        self._sequence: tuple[tuple[object, ...], list[Any]] = ((), [])

    def convert(self, message: object, convert: Callable[[Any], T]) -> T:
        key = id(message)
        entry = self._current.get(key) or self._previous.get(key)
        if entry is not None and entry[0] is message:
            self._current[key] = entry
            value: T = entry[1]
            return value
        value = convert(message)
        self._current[key] = (message, value)
        return value

    def convert_all(self, messages: Sequence[object], convert: Callable[[Any], T]) -> list[T]:
        """`[convert(m) for m in messages]`, reusing what the previous call already converted."""
        previous, outputs = self._sequence
        shared, limit = 0, min(len(previous), len(messages))
        while shared < limit and previous[shared] is messages[shared]:
            shared += 1
        result: list[T] = outputs[:shared]
        if previous:
            memo = self.convert
            result.extend(memo(message, convert) for message in messages[shared:])
        else:  # first call: nothing to reuse, so skip the per-message bookkeeping
            result.extend(convert(message) for message in messages[shared:])
        self._sequence = (tuple(messages), result)
        return list(result)

    def sweep(self) -> None:
        self._previous, self._current = self._current, {}


class MessageIntake:
    """Validates incoming messages and keeps private copies of them, reusing unchanged ones.

    A message object passed again unchanged (equal to the copy taken last time) maps to the same
    private copy, so everything memoised on that copy (conversions, token counts) stays valid.
    A message changed in place gets a fresh copy. Nothing is kept if validation fails.
    Each copy is made by `intake_message`, so every message the chef holds is strict JSON.
    """

    __slots__ = ("_seen",)

    def __init__(self) -> None:
        self._seen: dict[int, tuple[object, Message]] = {}

    def take(self, messages: Iterable[object]) -> list[Message]:
        seen = self._seen
        fresh: dict[int, tuple[object, Message]] = {}
        out: list[Message] = []
        for index, message in enumerate(messages):
            key = id(message)
            entry = seen.get(key)
            if entry is not None and entry[0] is message and entry[1] == message:
                copy = entry[1]
            else:
                copy = intake_message(message, index)
            fresh[key] = (message, copy)
            out.append(copy)
        self._seen = fresh
        return out


def intake_message(message: object, index: int | None = None) -> Message:
    """A private copy of a host message: validated (`validate_message`), keys sorted, and strict
    JSON all through (`strict_json`: no cycle, no nesting beyond `MAX_DEPTH`, string keys, no
    NaN or infinity, no unprintable integer, no set or foreign object), else `MessageError`
    naming the index and the field. The copy and the checks are one walk: `fast_intake` for
    messages of plain built-in types, else (and for every fault, to name it exactly) the
    reference path below."""
    try:
        return cast(Message, fast_intake(message))
    except (Unusual, RecursionError):
        pass
    checked = validate_message(message, index)
    try:
        copy: Message = strict_json(checked)
    except NotJson as exc:
        problem, field = exc.describe("the message"), exc.where() or None
        raise MessageError(problem, index=index, field=field) from None
    return copy


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
