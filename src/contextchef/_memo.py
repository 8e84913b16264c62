"""Per-message memoisation: private copies of incoming messages, and converted forms of them.

Both rest on one invariant: the chef's copies of messages are never mutated, so an object's
identity stands for its content for as long as the object is held.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar

from contextchef._jsonvalue import sorted_keys
from contextchef.messages import Message, validate_message

__all__ = ["ConversionCache", "MessageIntake"]

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
                copy = sorted_keys(validate_message(message, index))
            fresh[key] = (message, copy)
            out.append(copy)
        self._seen = fresh
        return out
