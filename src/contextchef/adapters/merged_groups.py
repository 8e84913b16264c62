"""`MergedGroups`: runs of converted messages merged into one wire object each, kept between
compiles so that the next compile restarts merging where the history changed.

Anthropic merges consecutive pieces of one role into a turn, Gemini consecutive contents into a
content; both keep, per merged group, the index of its first message, how many members it has
and its wire object, plus the system messages they hoist out of the conversation. `rewind` drops
what the messages from the restart point on made and hands back the merged wires it dropped, so
a group rebuilt from the very same items keeps its wire object (`same_items` tells).

Only the wire of a merged group is kept, never a record of its members beside it: a long history
merges thousands of groups, and every container kept counts towards the collector's next full
pass. A wire is fully given by its role and the items it concatenates, so it is reused exactly
when those items are the very objects its members carry now.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Generic, TypeVar, cast

__all__ = ["MergedGroups", "same_items"]

M = TypeVar("M")  # a member of a group: a converted message
W = TypeVar("W")  # the wire object a group is sent as


class MergedGroups(Generic[M, W]):
    """Group `g` has `sizes[g]` members, the first from message `firsts[g]`, and is sent as
    `wires[g]` (a group of one as that member itself); `hoisted[h]` came from message
    `hoisted_at[h]`."""

    __slots__ = ("firsts", "hoisted", "hoisted_at", "sizes", "wires")

    def __init__(self) -> None:
        self.firsts: list[int] = []
        self.sizes: list[int] = []
        self.wires: list[W] = []
        self.hoisted: list[Any] = []
        self.hoisted_at: list[int] = []

    def rewind(self, shared: int) -> tuple[int, int, dict[int, W]]:
        """Forget the groups from the one holding message `shared - 1` on (it may absorb new
        messages) and the hoisted messages from its first on: (the message to restart at, the
        first group dropped, the dropped merged wires by the index of their first message)."""
        cut = bisect_left(self.firsts, shared) - 1 if shared else -1
        start = self.firsts[cut] if cut >= 0 else 0
        cut = max(cut, 0)
        old = zip(self.firsts[cut:], self.sizes[cut:], self.wires[cut:], strict=True)
        reuse = {first: wire for first, size, wire in old if size > 1}
        del self.firsts[cut:], self.sizes[cut:], self.wires[cut:]
        kept = bisect_left(self.hoisted_at, start)
        del self.hoisted[kept:], self.hoisted_at[kept:]
        return start, cut, reuse

    def forget(self) -> None:
        """Drop every group and hoisted message (after a failed update: start over)."""
        del self.firsts[:], self.sizes[:], self.wires[:], self.hoisted[:], self.hoisted_at[:]

    def close(self, group: list[M], merge: Callable[[list[M], int], W]) -> None:
        """Keep the group being merged (its `firsts` entry is already there) as its wire: its
        member for a group of one, else `merge(group, index of its first message)`."""
        self.sizes.append(len(group))
        if len(group) == 1:
            self.wires.append(cast(W, group[0]))
        else:
            self.wires.append(merge(group, self.firsts[-1]))


def same_items(wire: Mapping[str, Any], group: Sequence[Mapping[str, Any]], key: str) -> bool:
    """Whether `wire` is the merge of `group`: the same role, and `wire[key]` the very objects
    of the members' `key` lists, in order."""
    items = wire[key]
    if wire["role"] != group[0]["role"]:
        return False
    at, count = 0, len(items)
    for member in group:
        for item in member[key]:
            if at == count or items[at] is not item:
                return False
            at += 1
    return at == count
