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
from collections.abc import Sequence
from functools import partial
from typing import Any

from contextchef import prompts
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
    """The turns the pieces of a history merge into, resumable after a shared prefix.

    Turn `t` is sent as `wires[t]` and holds `sizes[t]` pieces (a turn of one piece is that
    piece itself), the first of them at index `firsts[t]` of the history. `own` and `auto` are
    the (turn, block) positions of the breakpoints the messages carry, the host's
    (`_cache_breakpoint`) and automatic ones (`_auto_cache_breakpoint`), in order (a request's
    marks by position are placed by `auto_mark`, never kept); `hoisted` the history's system
    pieces (at `hoisted_at`), which go to `system`.
    """

    __slots__ = ("auto", "generation", "own", "pieces")

    def __init__(self) -> None:
        super().__init__()
        self.generation = -1  # the `ConversionCache.generation` `pieces` came from
        self.pieces: list[Piece] = []
        self.own: list[tuple[int, int]] = []
        self.auto: list[tuple[int, int]] = []

    def update(
        self,
        pieces: list[Piece],
        messages: Sequence[Message],
        shared: int,
        cache: ConversionCache,
    ) -> None:
        """Merge `pieces` (of `messages`), whose first `shared` are the same objects as last
        time's first."""
        start, cut, reuse = self.rewind(shared)
        del self.own[bisect_left(self.own, (cut,)) :]
        del self.auto[bisect_left(self.auto, (cut,)) :]
        self.pieces = pieces
        sizes, firsts, wires = self.sizes, self.firsts, self.wires
        merge = partial(_merged, reuse=reuse, cache=cache)
        # The piece at `start` opens a turn: it opened one last time, after the same turns.
        role = ""
        group: list[Piece] = []  # the turn being merged (not yet in `sizes`)
        size = 0  # blocks in `group`
        for index in range(start, len(pieces)):
            piece = pieces[index]
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
                if group:
                    self.close(group, merge)
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
            size += len(blocks)
            mark = piece_mark(messages[index], piece)
            if mark is not None:
                marks = self.auto if mark[1] else self.own
                marks.append((len(firsts) - 1, size - len(blocks) + mark[0]))
        if group:
            self.close(group, merge)

    def automatic(self, messages: Sequence[Message], asked: list[int]) -> list[tuple[int, int]]:
        """The (turn, block) of every automatic breakpoint, ascending: those the messages carry
        (`auto`) and those a request asks for on `messages[at]` for each `at` in `asked`."""
        found = [mark for at in asked if (mark := self.auto_mark(messages, at)) is not None]
        return sorted({*self.auto, *found}) if found else self.auto

    def auto_mark(self, messages: Sequence[Message], index: int) -> tuple[int, int] | None:
        """The (turn, block) of an automatic breakpoint on `messages[index]`, asked for by
        position (not kept: the next request has its own); None when the message carries
        the host's own mark (already in `own`), is hoisted, or has no block that takes one."""
        piece = self.pieces[index]
        if piece["role"] == "system":
            return None
        mark = piece_mark(messages[index], piece, auto=True)
        if mark is None or not mark[1]:
            return None
        turn = bisect_right(self.firsts, index) - 1
        pieces = self.pieces
        before = sum(
            len(pieces[at]["content"])
            for at in range(self.firsts[turn], index)
            if pieces[at]["role"] != "system"
        )
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
