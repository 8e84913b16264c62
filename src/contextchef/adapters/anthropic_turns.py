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

from bisect import bisect_left
from typing import Any, NamedTuple

from contextchef import prompts
from contextchef.adapters.base import ConversionCache
from contextchef.adapters.merged_groups import MergedGroups

__all__ = ["Piece", "Turns", "text_block"]

Block = dict[str, Any]


class Piece(NamedTuple):
    """One IR message converted: its wire role, blocks, and the block a breakpoint marks."""

    role: str
    blocks: list[Block]
    mark: int  # index in `blocks` of the block that carries the breakpoint, -1 for none
    wire: dict[str, Any]  # the message as sent when it forms a turn on its own
    auto: bool = False  # the breakpoint is an automatic one (the host's own take precedence)


def text_block(text: str) -> Block:
    return {"text": text, "type": "text"}


def lead_piece(text: str) -> Piece:
    """A placeholder user turn holding `text`."""
    blocks = [text_block(text)]
    return Piece("user", blocks, -1, {"content": blocks, "role": "user"})


class _Merge:
    """The wire form of a turn merged from several pieces, and the pieces it was built from."""

    __slots__ = ("pieces", "wire")

    def __init__(self, _: object = None) -> None:
        self.pieces: tuple[Piece, ...] = ()
        self.wire: dict[str, Any] = {}


class Turns(MergedGroups[Piece, dict[str, Any]]):
    """The turns the pieces of a history merge into, resumable after a shared prefix.

    Turn `t` holds the pieces `groups[t]` (the first of them at index `firsts[t]` of the
    history) and is sent as `wires[t]`. `own` and `auto` are the
    (turn, block) positions of the host's and the automatic breakpoints, in order; `hoisted`
    the history's system pieces (at `hoisted_at`), which go to `system`.
    """

    __slots__ = ("auto", "generation", "own", "pieces")

    def __init__(self) -> None:
        super().__init__()
        self.generation = -1  # the `ConversionCache.generation` `pieces` came from
        self.pieces: list[Piece] = []
        self.own: list[tuple[int, int]] = []
        self.auto: list[tuple[int, int]] = []

    def update(self, pieces: list[Piece], shared: int, cache: ConversionCache) -> None:
        """Merge `pieces`, whose first `shared` are the same objects as last time's first."""
        start, cut, reuse = self.rewind(shared)
        del self.own[bisect_left(self.own, (cut,)) :]
        del self.auto[bisect_left(self.auto, (cut,)) :]
        self.pieces = pieces
        groups, firsts, wires = self.groups, self.firsts, self.wires
        group = groups[-1] if groups else []
        role = group[0].role if group else ""
        opened = False  # whether `group` was opened by this call (its wire is still to come)
        for index in range(start, len(pieces)):
            piece = pieces[index]
            if piece.role == "system":
                self.hoisted.append(piece)
                self.hoisted_at.append(index)
                continue
            if not piece.blocks:
                continue
            if piece.role == role:
                group.append(piece)
            else:
                if opened:
                    wires.append(group[0].wire if len(group) == 1 else _merged(group, reuse, cache))
                elif not groups and piece.role == "assistant":
                    # Anthropic wants the user to speak first: the placeholder user turn of
                    # `ensure_valid_history` opens.
                    lead = lead_piece(prompts.CONVERSATION_CONTINUES)
                    groups.append([lead])
                    firsts.append(index)
                    wires.append(lead.wire)
                role = piece.role
                group = [piece]
                groups.append(group)
                firsts.append(index)
                opened = True
            if piece.mark >= 0:
                offset = sum(len(earlier.blocks) for earlier in group) - len(piece.blocks)
                marks = self.auto if piece.auto else self.own
                marks.append((len(groups) - 1, offset + piece.mark))
        if opened:
            wires.append(group[0].wire if len(group) == 1 else _merged(group, reuse, cache))


def _merged(
    group: list[Piece], reuse: dict[int, tuple[list[Piece], dict[str, Any]]], cache: ConversionCache
) -> dict[str, Any]:
    """The wire form of a turn of several pieces, the same object as before while its pieces
    are the same (what memoises by identity, token counts and the cache ledger, then skips it):
    the turn dropped by this update (`reuse`, by its first piece), else the cache's memo."""
    first = group[0]
    prior = reuse.get(id(first))
    if prior is not None and _same(prior[0], group):
        return prior[1]
    merge: _Merge = cache.convert(first.blocks, _Merge)
    if not _same(merge.pieces, group):
        merge.pieces = tuple(group)
        content = [block for piece in group for block in piece.blocks]
        merge.wire = {"content": content, "role": first.role}
    return merge.wire


def _same(a: tuple[Piece, ...] | list[Piece], b: list[Piece]) -> bool:
    return len(a) == len(b) and all(x is y for x, y in zip(a, b, strict=True))


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
