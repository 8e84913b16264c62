"""The `background` strategy: compress off the critical path, swap the result in later.

The first over-budget compile starts the inner strategy in the background (a worker thread on
`ContextChef`, a task on `AsyncContextChef`) and goes on with the history unchanged. A later
compile swaps the finished result in — but only if the history it was computed from is still
the head of the current one; messages appended meanwhile are kept after it. A stale result is
discarded, and a new job starts if the history is still over budget.

The job counts tokens with its own `MessageCounter` (over the compile's tokenizer): the
compile's counter memoises without a lock and is swept by every compile, so it must not be
shared with a worker thread.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from typing import Any

from contextchef._effects import Handle, Spawn
from contextchef.messages import Message
from contextchef.selection.strategies import (
    OverflowInput,
    OverflowResult,
    Strategy,
    StrategyFlow,
    require_strategy,
    run_strategy,
)
from contextchef.tokens import MessageCounter

__all__ = ["Background", "background"]

logger = logging.getLogger("contextchef.selection.background")


@dataclass(frozen=True, slots=True)
class _Job:
    source: tuple[Message, ...]
    handle: Handle


def _is_prefix(source: tuple[Message, ...], history: tuple[Message, ...]) -> bool:
    if len(history) < len(source):
        return False
    return all(a is b for a, b in zip(source, history[: len(source)], strict=True))


class Background(Strategy):
    """Runs `inner` in the background; see the module docstring."""

    def __init__(self, inner: Strategy) -> None:
        self.inner = inner
        self._job: _Job | None = None

    @property
    def name(self) -> str:
        return f"background({self.inner.name})"

    def pending(self) -> bool:
        """Whether a finished job waits to be swapped in (the runner then skips its gates)."""
        return self._job is not None and self._job.handle.done()

    def _unchanged(self, input: OverflowInput, reason: str) -> OverflowResult:
        return OverflowResult(input.history, False, self.name, reason)

    def apply(self, input: OverflowInput) -> StrategyFlow:
        job = self._job
        if job is not None:
            if not job.handle.done():
                return self._unchanged(input, "background compression in flight")
            self._job = None
            try:
                result: OverflowResult = job.handle.result()
            except Exception as exc:
                logger.warning("background compression raised %r", exc)
                result = OverflowResult(job.source, False, self.name, repr(exc), failed=True)
            if result.changed and _is_prefix(job.source, input.history):
                swapped = (*result.history, *input.history[len(job.source) :])
                return replace(result, history=swapped, strategy=self.name)
            if result.failed:
                return replace(result, history=input.history, strategy=self.name)
            logger.info("discarded a background compression: the history moved on")
        if not (input.budget.over or input.forced):
            return self._unchanged(input, "within budget")
        own = input
        if input.tokenizer is not None:
            own = replace(input, count=MessageCounter(input.tokenizer).count_all)
        handle = yield Spawn(run_strategy(self.inner, own))
        self._job = _Job(input.history, handle)
        return self._unchanged(input, "background compression started")

    def commit(self, result: OverflowResult, window: str) -> None:
        self.inner.commit(result, window)

    def snapshot(self) -> Any:
        return self.inner.snapshot()

    def restore(self, state: Any) -> None:
        self.inner.restore(state)


def background(inner: Strategy) -> Background:
    """Run `inner` off the critical path."""
    return Background(require_strategy(inner, "background inner strategy"))
