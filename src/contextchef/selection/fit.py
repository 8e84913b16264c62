"""The last resort that keeps a payload inside its window: drop the oldest turns until it fits.

A strategy decides what an overflow does; this makes sure the result fits. After the strategy
(or when it could not run: the circuit breaker is open, or it failed), `fit` measures the whole
payload and, while it is over the window, drops the oldest unpinned turns — never a leading
summary, never a pinned turn, never the last turn. The dropped messages join the evicted span,
so they are archived like any other: nothing the model saw is lost.

Measuring means building the payload, so `fit` first estimates how many turns must go with the
cheap per-message `count`, scaled to the payload's own units, and then verifies with `measure`;
a few rounds at most.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from contextchef.messages import Message, Turn, group_turns

__all__ = ["MAX_ROUNDS", "fit"]

MAX_ROUNDS = 8
"""Verification rounds before `fit` gives up (each round drops at least one more turn)."""


def _flatten(turns: Sequence[Turn]) -> tuple[Message, ...]:
    return tuple(message for turn in turns for message in turn.messages)


def fit(
    history: tuple[Message, ...],
    *,
    measure: Callable[[tuple[Message, ...]], int],
    count: Callable[[Sequence[Message]], int],
    limit: float,
    keep_first: bool = False,
) -> tuple[tuple[Message, ...], tuple[Message, ...], int]:
    """`(kept, dropped, total)`: `history` without its oldest droppable turns, so that
    `measure(kept) <= limit` when that is possible at all; `total` is `measure(kept)`."""
    total = measure(history)
    if total <= limit:
        return history, (), total
    turns = group_turns(history)
    first = 1 if keep_first and turns else 0
    droppable = [i for i in range(first, len(turns) - 1) if not turns[i].pinned]
    dropped: set[int] = set()
    kept = history
    for _ in range(MAX_ROUNDS):
        remaining = [i for i in droppable if i not in dropped]
        if total <= limit or not remaining:
            break
        scale = total / max(1, count(kept))
        need, freed = total - limit, 0.0
        for index in remaining:
            dropped.add(index)
            freed += math.ceil(count(turns[index].messages) * scale)
            if freed >= need:
                break
        kept = _flatten([turn for i, turn in enumerate(turns) if i not in dropped])
        total = measure(kept)
    gone = _flatten([turn for i, turn in enumerate(turns) if i in dropped])
    return kept, gone, total
