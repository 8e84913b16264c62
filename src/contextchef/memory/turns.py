"""The turn counter of turn-based TTLs: what a turn is, and where the count lives.

A turn is a *host* turn, not a compile. With `turns="user_messages"` (the default) a compile
counts a turn when the history it compiles ends its user messages with a new one: the last user
message's digest differs from the one that last counted, or there are more user messages than
then. Compiling the same history again — for another target, or as a retry — counts nothing,
and neither does a compaction that drops older messages (fewer user messages, same last one).
The first user message a store ever sees opens turn 0 without counting, so an entry written
before the first compile with `ttl=2` is shown for exactly two host turns. With
`turns="explicit"` compiles never count; only `advance_turn()` (`chef.memory.advance_turn()`) does.
Either way the rule reads nothing but the history: no clock.

A compile never writes: the turn it counts is written with the store's next write, or by
`Store.flush()` / `Store.close()` (see `TurnCounter`); close the store before the process ends
and the count survives a restart.

The count persists in the same store as the memory, in a namespace of its own
(`memory_state/turn`): its content is the turn number as text, its meta the marker of the last
user message that counted (`user_messages`, `last_user`). Keeping it beside `memory/` rather than
inside it means no memory listing, search, block, snapshot entry, SQLite version history or the
TypeScript reference's own `Memory` ever mistakes it for a fact, and no key is taken from the
host. Every read and write is a store flow, so it works on async-native backends too.
"""

from __future__ import annotations

import hashlib
import json
import logging
from bisect import bisect_left
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal, get_args

from contextchef._effects import Flow
from contextchef._sequences import identical_prefix
from contextchef.errors import ConfigError
from contextchef.messages import Message
from contextchef.store.backend import StoredEntry
from contextchef.store.core import StoreCore
from contextchef.store.ops import Op

__all__ = [
    "TURN_NAMESPACE",
    "TURN_PATH",
    "Marker",
    "TurnCounter",
    "TurnMode",
    "UserMessages",
    "check_mode",
    "last_user_marker",
    "marker_data",
    "parse_marker",
]

logger = logging.getLogger("contextchef.memory")

TURN_NAMESPACE: Final = "memory_state"
TURN_PATH: Final = "turn"
TurnMode = Literal["user_messages", "explicit"]


@dataclass(frozen=True, slots=True)
class Marker:
    """Where the history's user messages stood: how many there were and the last one's digest."""

    user_messages: int
    last_user: str

    def is_new_turn(self, seen: Marker | None) -> bool:
        """Whether this history holds a user message `seen` did not (see the module docstring)."""
        if seen is None:
            return False
        return self.last_user != seen.last_user or self.user_messages > seen.user_messages


def _digest(message: Message) -> str:
    text = json.dumps(
        message, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str
    )
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def last_user_marker(history: Sequence[Message]) -> Marker | None:
    """The marker of `history`, or None when it holds no user message."""
    return UserMessages().marker(history)


class UserMessages:
    """`last_user_marker` for successive histories of one chef: the positions of the user
    messages are kept, so a history sharing a prefix with the last one (the very same objects:
    the chef's copies) is scanned from where they part only."""

    __slots__ = ("_digest", "_history", "_positions")

    def __init__(self) -> None:
        self._history: Sequence[Message] = ()
        self._positions: list[int] = []
        self._digest: tuple[Message | None, str] = (None, "")

    def marker(self, history: Sequence[Message]) -> Marker | None:
        shared = identical_prefix(self._history, history)
        positions = self._positions
        del positions[bisect_left(positions, shared) :]
        positions.extend(
            at for at in range(shared, len(history)) if history[at].get("role") == "user"
        )
        self._history = history
        if not positions:
            return None
        last = history[positions[-1]]
        if self._digest[0] is not last:
            self._digest = (last, _digest(last))
        return Marker(len(positions), self._digest[1])


def _marker_of(meta: Mapping[str, Any]) -> Marker | None:
    count, last = meta.get("user_messages"), meta.get("last_user")
    if isinstance(count, int) and not isinstance(count, bool) and isinstance(last, str):
        return Marker(count, last)
    return None


def marker_data(marker: Marker | None) -> dict[str, Any] | None:
    """A marker as JSON data (for snapshots), or None."""
    if marker is None:
        return None
    return {"last_user": marker.last_user, "user_messages": marker.user_messages}


def parse_marker(data: object) -> Marker | None:
    """`marker_data`'s output back (anything else: None)."""
    return _marker_of(data) if isinstance(data, Mapping) else None


def check_mode(turns: object) -> TurnMode:
    if turns not in get_args(TurnMode):
        raise ConfigError(f"memory turns must be 'user_messages' or 'explicit', got {turns!r}")
    return turns  # type: ignore[return-value]


class TurnCounter:
    """The persisted turn count of one store's memory, and the last values read or written.

    `load()` re-reads the store on every memory operation, so two `Memory` objects (or two
    chefs) over one store agree on the count. A turn counted by a compile is not written by it
    (a compile never writes, so it never waits for a writer): `observe(..., defer=True)` keeps
    it here and asks the store to write it with its next write, `flush()` or `close()`; until
    then `load()` prefers it to an older stored count.
    """

    def __init__(self, store: StoreCore, mode: TurnMode) -> None:
        self.store = store
        self.mode = check_mode(mode)
        self.turn = 0
        self.marker: Marker | None = None
        self._users = UserMessages()
        self._unsaved: tuple[int, Marker | None] | None = None

    def load(self) -> Op[int]:
        stored = yield from self.store.get(TURN_NAMESPACE, TURN_PATH)
        turn, marker = self._parse(stored)
        unsaved = self._unsaved
        if unsaved is not None:
            if unsaved[0] >= turn:
                turn, marker = unsaved
            else:  # another writer counted further: ours is stale, never write it
                self._unsaved = None
        self.turn, self.marker = turn, marker
        return self.turn

    def save(self, turn: int, marker: Marker | None) -> Op[int]:
        meta = marker_data(marker)
        self._unsaved = None
        yield from self.store.put(TURN_NAMESPACE, TURN_PATH, str(turn), meta)
        self.turn, self.marker = turn, marker
        return turn

    def advance(self) -> Flow[int]:
        """Count one turn explicitly (the marker is kept); the new count."""
        yield from self.load()
        return (yield from self.save(self.turn + 1, self.marker))

    def observe(
        self, history: Sequence[Message], *, frozen: bool = False, defer: bool = False
    ) -> Flow[int]:
        """Load the count and, with `turns="user_messages"`, count a turn when `history` holds
        a new user message (recording its marker); the current count. A `frozen` history (its
        messages are never mutated) is read from where it parts from the last frozen one. With
        `defer`, the new count is written with the store's next write (see the class)."""
        yield from self.load()
        if self.mode != "user_messages":
            return self.turn
        marker = self._users.marker(history) if frozen else last_user_marker(history)
        if marker is None or marker == self.marker:
            return self.turn
        turn = self.turn + 1 if marker.is_new_turn(self.marker) else self.turn
        if not defer:
            return (yield from self.save(turn, marker))
        self.turn, self.marker = turn, marker
        self._unsaved = (turn, marker)
        self.store.defer((TURN_NAMESPACE, TURN_PATH, id(self)), self._write_unsaved)
        return turn

    def _write_unsaved(self) -> Op[None]:
        """The deferred write of a counted turn, unless another writer counted further."""
        unsaved = self._unsaved
        if unsaved is None:
            return
        stored = yield from self.store.ops.read(TURN_NAMESPACE, TURN_PATH)
        if self._unsaved is unsaved and self._parse(stored)[0] <= unsaved[0]:
            yield from self.save(*unsaved)
        elif self._unsaved is unsaved:
            self._unsaved = None

    @staticmethod
    def _parse(stored: StoredEntry | None) -> tuple[int, Marker | None]:
        if stored is None:
            return 0, None
        text = stored.content.strip()
        if not (text.isascii() and text.isdigit()):
            logger.warning(
                "%s/%s holds %r, not a turn count; counting from 0",
                TURN_NAMESPACE,
                TURN_PATH,
                stored.content[:40],
            )
            return 0, None
        return int(text), _marker_of(stored.meta)
