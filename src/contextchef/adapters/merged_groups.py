"""`MergedGroups`: runs of converted messages merged into one wire object each, kept between
compiles so that the next compile restarts merging where the history changed.

Anthropic merges consecutive pieces of one role into a turn, Gemini consecutive contents into a
content; both keep, per merged group, the index of its first message, its members and its wire
object, plus the system messages they hoist out of the conversation. `rewind` drops what the
messages from the restart point on made and hands back the merged groups it dropped, so a
group rebuilt from the very same members keeps its wire object.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar, cast

__all__ = ["ALONE", "MergedGroups"]

M = TypeVar("M")  # a member of a group: a converted message
W = TypeVar("W")  # the wire object a group is sent as

ALONE: tuple[()] = ()
"""The members kept for a group of one, which is sent as that member."""


class MergedGroups(Generic[M, W]):
    """Group `g` holds `groups[g]` (the first from message `firsts[g]`; `ALONE` for a group of
    one, which is then `wires[g]` itself) and is sent as `wires[g]`; `hoisted[h]` came from
    message `hoisted_at[h]`."""

    __slots__ = ("firsts", "groups", "hoisted", "hoisted_at", "wires")

    def __init__(self) -> None:
        self.firsts: list[int] = []
        self.groups: list[Sequence[M]] = []
        self.wires: list[W] = []
        self.hoisted: list[Any] = []
        self.hoisted_at: list[int] = []

    def rewind(self, shared: int) -> tuple[int, int, dict[int, tuple[Sequence[M], W]]]:
        """Forget the groups from the one holding message `shared - 1` on (it may absorb new
        messages) and the hoisted messages from its first on: (the message to restart at, the
        first group dropped, the dropped merged groups by the identity of their first member)."""
        cut = bisect_left(self.firsts, shared) - 1 if shared else -1
        start = self.firsts[cut] if cut >= 0 else 0
        cut = max(cut, 0)
        old = zip(self.groups[cut:], self.wires[cut:], strict=True)
        reuse = {id(group[0]): (group, wire) for group, wire in old if len(group) > 1}
        del self.firsts[cut:], self.groups[cut:], self.wires[cut:]
        kept = bisect_left(self.hoisted_at, start)
        del self.hoisted[kept:], self.hoisted_at[kept:]
        return start, cut, reuse

    def close(self, group: list[M], merge: Callable[[list[M]], W]) -> None:
        """Keep `group`, the one being merged (its `firsts` entry is already there), and its
        wire: its member for a group of one, else `merge(group)`."""
        if len(group) == 1:
            self.groups.append(ALONE)
            self.wires.append(cast(W, group[0]))
        else:
            self.groups.append(group)
            self.wires.append(merge(group))
