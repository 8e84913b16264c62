"""The `anchored` strategy: one running summary per conversation, extended at every overflow.

Where `summarize` writes a fresh summary of each evicted span, `anchored` hands the model the
previous summary (the *anchor*) and asks for an updated one, so facts from the first window
survive the tenth. The anchor is only adopted once the result lands (a discarded background
result never moves it); the last few windows' anchors are kept and travel with snapshots.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from contextchef import prompts
from contextchef.selection.strategies import (
    OverflowInput,
    OverflowResult,
    Strategy,
    StrategyFlow,
    summarize,
)

__all__ = ["Anchored", "anchored"]

KEPT_ANCHORS = 8


class Anchored(Strategy):
    """Summarises like `summarize`, but each summary extends the previous one."""

    name = "anchored"

    def __init__(self, **options: Any) -> None:
        self._summarize = summarize(**options)
        self._anchors: OrderedDict[str, str] = OrderedDict()

    @property
    def anchor(self) -> str:
        """The latest anchor document (empty before the first overflow)."""
        return next(reversed(self._anchors.values()), "")

    def apply(self, input: OverflowInput) -> StrategyFlow:
        previous = self.anchor
        instruction = prompts.ANCHORED_INSTRUCTION.format(anchor=previous) if previous else None
        result = yield from self._summarize.run(input, instruction=instruction, previous=previous)
        return replace(result, strategy=self.name)

    def commit(self, result: OverflowResult, window: str) -> None:
        """Adopt the landed summary as the anchor of `window`."""
        if result.summary:
            self._anchors[window] = result.summary
            while len(self._anchors) > KEPT_ANCHORS:
                self._anchors.popitem(last=False)

    def snapshot(self) -> dict[str, str]:
        return dict(self._anchors)

    def restore(self, state: Mapping[str, str] | None) -> None:
        self._anchors = OrderedDict(state or {})


def anchored(**options: Any) -> Anchored:
    """`summarize`'s options; see the module docstring."""
    return Anchored(**options)
