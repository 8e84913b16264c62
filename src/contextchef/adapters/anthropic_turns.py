"""Anthropic's alternating turns, merged from converted messages and kept between compiles.

Anthropic wants alternating user/assistant turns, so consecutive pieces of one role merge into
one turn. An agent loop compiles the same history plus a turn or two, again and again: `Turns`
keeps the merge of the previous compile and, given how many leading pieces are unchanged,
restarts merging at the turn holding the last unchanged piece (which may absorb the new ones).
Every earlier turn keeps its wire object, so a compile after an appended turn costs what the
new pieces cost. Wire objects handed out are never mutated afterwards: a turn that grows gets a
new dict, and whatever a compile changes for one request only (breakpoints, a prefill, trimmed
whitespace) is done by the adapter on copies.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

from contextchef import prompts
from contextchef._sequences import Lineage, identical_prefix
from contextchef.adapters.base import ConversionCache
from contextchef.adapters.merged_groups import MergedGroups, same_items
from contextchef.messages import Message
from contextchef.placement.breakpoints import AUTO_MARK

__all__ = ["Piece", "Turns", "lead_piece", "piece_mark", "text_block"]

Block = dict[str, Any]
Piece = dict[str, Any]
"""One IR message converted: `{"content": blocks, "role": role}`, the very dict sent when it
forms a turn on its own (a system piece is hoisted into `system` instead). Only the dict: one
container per message the collector has to count, not a record beside it."""

_UNCACHEABLE = frozenset(("thinking", "redacted_thinking"))


def text_block(text: str) -> Block:
    return {"text": text, "type": "text"}


def lead_piece(text: str) -> Piece:
    """A placeholder user turn holding `text`."""
    return {"content": [text_block(text)], "role": "user"}


def piece_mark(message: Message, piece: Piece, auto: bool = False) -> tuple[int, bool] | None:
    """Where `message`'s breakpoint goes in its piece: (the index of the last block that can
    carry one, whether the mark is an automatic one), or None when it has none (or no such
    block). `auto`: the request marks it by position. The host's own mark
    (`_cache_breakpoint`) wins over an automatic one."""
    user = bool(message.get("_cache_breakpoint"))
    if not user and not auto and not message.get(AUTO_MARK):
        return None
    blocks = piece["content"]
    for index in range(len(blocks) - 1, -1, -1):
        if blocks[index]["type"] not in _UNCACHEABLE:
            return index, not user
    return None


class Turns(MergedGroups[Piece, dict[str, Any]]):
    """The turns the messages of a history merge into, resumable after a shared prefix.

    Turn `t` is sent as `wires[t]` and holds `sizes[t]` pieces (a turn of one piece is that
    piece itself), the first of them at index `firsts[t]` of the history. `own` and `auto` are
    the (turn, block) positions of the breakpoints the messages carry, the host's
    (`_cache_breakpoint`) and automatic ones (`_auto_cache_breakpoint`), in order (a request's
    marks by position are placed by `auto_mark`, never kept); `hoisted` the history's system
    pieces (at `hoisted_at`), which go to `system`.

    No piece is kept beside the wires: a piece merged into a turn lives on in the cache's memo
    only while it is one of the last turn's (where the next update restarts), not as a
    container per message for the collector to count.
    """

    __slots__ = ("auto", "messages", "own", "runs")

    def __init__(self) -> None:
        super().__init__()
        self.messages: Sequence[Message] = ()  # the history of the last complete update
        self.runs = 0  # updates completed
        self.own: list[tuple[int, int]] = []
        self.auto: list[tuple[int, int]] = []

    def update(
        self,
        messages: Sequence[Message],
        convert: Callable[[Message], Piece],
        cache: ConversionCache,
        known: Lineage | None = None,
    ) -> None:
        """Convert (`convert`, memoised in `cache`) and merge `messages`, resuming from the
        previous update's merge after the prefix they share with its messages, object for
        object. What `convert` raises propagates, and the next update starts over. `known`:
        the lineage of `messages` from the previous update's (see `Lineage`); then `messages`
        (its maker's own, never mutated) is kept as it is rather than copied."""
        sequence = messages if known is not None and known.sequence is messages else tuple(messages)
        start, cut, reuse = self.rewind(identical_prefix(self.messages, sequence, known))
        self.messages = ()  # until the update is complete
        del self.own[bisect_left(self.own, (cut,)) :]
        del self.auto[bisect_left(self.auto, (cut,)) :]
        # A first update converts without the memo (nothing to reuse yet) and then memoises
        # only the messages of its last turn, which the next update starts from.
        memo = bool(self.runs)
        remembered = cache.convert
        values: list[Piece] = []  # a first update's pieces, from message `kept` on
        kept = start
        sizes, firsts, wires = self.sizes, self.firsts, self.wires
        # A merged turn is memoised by its first piece's blocks for a later update that
        # converts through the memo; a first update's pieces are not memoised (but for the
        # last turn's, which `rewind` hands back anyway), so no later piece could find it.
        merge = partial(_merged, reuse=reuse, cache=cache) if memo else _joined
        # The message at `start` opens a turn: it opened one last time, after the same turns.
        role = ""
        group: list[Piece] = []  # the turn being merged (not yet in `sizes`)
        size = 0  # blocks in `group`
        for index in range(start, len(sequence)):
            message = sequence[index]
            try:
                piece = remembered(message, convert) if memo else convert(message)
            except Exception:
                self.forget()  # start over next time
                del self.own[:], self.auto[:]
                raise
            if not memo:
                values.append(piece)
            blocks = piece["content"]
            if piece["role"] == "system":
                self.hoisted.append(piece)
                self.hoisted_at.append(index)
                continue
            if not blocks:
                continue
            if piece["role"] == role:
                group.append(piece)
            else:
                if group:  # `close`, inline: once per turn
                    sizes.append(len(group))
                    wires.append(group[0] if len(group) == 1 else merge(group, firsts[-1]))
                elif not sizes and piece["role"] == "assistant":
                    # Anthropic wants the user to speak first: the placeholder user turn of
                    # `ensure_valid_history` for a history the assistant opens.
                    sizes.append(1)
                    firsts.append(index)
                    wires.append(lead_piece(prompts.CONVERSATION_OPENS_WITH_ASSISTANT))
                role = piece["role"]
                group = [piece]
                firsts.append(index)
                size = 0
                if not memo:
                    del values[: index - kept]
                    kept = index
            size += len(blocks)
            if "_cache_breakpoint" in message or AUTO_MARK in message:
                mark = piece_mark(message, piece)
                if mark is not None:
                    marks = self.auto if mark[1] else self.own
                    marks.append((len(firsts) - 1, size - len(blocks) + mark[0]))
        if group:
            self.close(group, merge)
        if values and firsts:  # memoise the messages the next update starts from
            at = firsts[-1]
            for message, piece in zip(sequence[at:], values[at - kept :], strict=True):
                cache.remember(message, piece)
        self.messages = sequence
        self.runs += 1

    def automatic(
        self, messages: Sequence[Message], asked: list[int], piece: Callable[[Message], Piece]
    ) -> list[tuple[int, int]]:
        """The (turn, block) of every automatic breakpoint, ascending: those the messages carry
        (`auto`) and those a request asks for on `messages[at]` for each `at` in `asked`
        (`piece` converts a message, as the update did)."""
        found = [m for at in asked if (m := self.auto_mark(messages, at, piece)) is not None]
        return sorted({*self.auto, *found}) if found else self.auto

    def auto_mark(
        self, messages: Sequence[Message], index: int, piece_of: Callable[[Message], Piece]
    ) -> tuple[int, int] | None:
        """The (turn, block) of an automatic breakpoint on `messages[index]`, asked for by
        position (not kept: the next request has its own); None when the message carries
        the host's own mark (already in `own`), is hoisted, or has no block that takes one."""
        piece = piece_of(messages[index])
        if piece["role"] == "system":
            return None
        mark = piece_mark(messages[index], piece, auto=True)
        if mark is None or not mark[1]:
            return None
        turn = bisect_right(self.firsts, index) - 1
        before = 0
        for at in range(self.firsts[turn], index):
            earlier = piece_of(messages[at])
            if earlier["role"] != "system":
                before += len(earlier["content"])
        return turn, before + mark[0]


def _merged(
    group: list[Piece], first: int, reuse: dict[int, dict[str, Any]], cache: ConversionCache
) -> dict[str, Any]:
    """The wire form of a turn of several pieces (the first from message `first`), the same
    object as before while its blocks are the same objects (what memoises by identity, token
    counts and the cache ledger, then skips it): the turn this update dropped there (`reuse`),
    else the cache's memo (by the first piece's blocks)."""
    prior = reuse.get(first)
    if prior is not None and same_items(prior, group, "content"):
        return prior
    key = group[0]["content"]
    wire: dict[str, Any] = cache.convert(key, _unmerged)
    if wire is _NO_WIRE or not same_items(wire, group, "content"):
        content = [block for piece in group for block in piece["content"]]
        wire = {"content": content, "role": group[0]["role"]}
        cache.remember(key, wire)
    return wire


def _joined(group: list[Piece], first: int) -> dict[str, Any]:
    """The wire form of a turn of several pieces, made anew."""
    return {
        "content": [block for piece in group for block in piece["content"]],
        "role": group[0]["role"],
    }


_NO_WIRE: dict[str, Any] = {}
"""The memo's answer for a first piece no merged turn starts with yet (never handed out)."""


def _unmerged(_: object) -> dict[str, Any]:
    return _NO_WIRE


def last_marks(
    system: list[tuple[int, int]], messages: list[tuple[int, int]], count: int
) -> list[tuple[int, int]]:
    """The last `count` positions of `system + messages`, without joining the two lists."""
    if count <= 0:
        return []
    tail = messages[-count:]
    if len(tail) < count and system:
        tail = system[-(count - len(tail)) :] + tail
    return tail
