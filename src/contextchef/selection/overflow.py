"""The overflow runner: measures the budget, runs the strategy, guards against a broken model.

It never fails a compile: a strategy that raises, a summary that does not shrink, a rejected
summary — each leaves the history as it was and counts a failure; after three failures in a row
the circuit breaker stops calling the strategy until `reset()` (or `clear_history()`).

Each context *window* has an id; the id changes exactly when an overflow result lands, and the
lineage `{first, previous, current}` travels with snapshots.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from contextchef import prompts
from contextchef._effects import Call, Emit, Flow
from contextchef._jsonvalue import copy_json
from contextchef.messages import Message
from contextchef.selection.budget import Budget, BudgetConfig
from contextchef.selection.compaction import summary_message
from contextchef.selection.fit import fit
from contextchef.selection.overflow_config import HandoffConfig, OverflowConfig
from contextchef.selection.server_compaction import ServerCompaction
from contextchef.selection.strategies import (
    OverflowInput,
    OverflowResult,
    TargetProfile,
    run_strategy,
)
from contextchef.selection.usage import Reported, Usage
from contextchef.store.archive import archive_document
from contextchef.store.core import StoreCore
from contextchef.tokens import MessageCounter

__all__ = [
    "BREAKER_LIMIT",
    "CompressEnd",
    "CompressStart",
    "HandoffConfig",
    "Lineage",
    "OverflowConfig",
    "OverflowReport",
    "OverflowRunner",
]

logger = logging.getLogger("contextchef.selection.overflow")

BREAKER_LIMIT = 3


@dataclass(frozen=True, slots=True)
class Lineage:
    """The window ids: the first of this conversation, the one before, the current one."""

    first: str
    previous: str | None
    current: str

    def advance(self, new: str) -> Lineage:
        return Lineage(self.first, self.current, new)


@dataclass(frozen=True, slots=True)
class CompressStart:
    """Overflow is about to run the strategy on a history of `history_length` messages."""

    history_length: int
    budget: Budget
    forced: bool


@dataclass(frozen=True, slots=True)
class CompressEnd:
    """Overflow finished; `changed` says whether a result landed."""

    report: OverflowReport

    @property
    def changed(self) -> bool:
        return self.report.changed


@dataclass(frozen=True, slots=True, kw_only=True)
class OverflowReport:
    """What the overflow phase of one compile did (in `payload.meta.overflow`).

    `server` is the server-side compaction asked of the provider instead (the strategy's
    `server_compaction(profile)`, given the target adapter's profile); the compile hands it to
    the adapter.
    """

    history: tuple[Message, ...]
    changed: bool
    budget: Budget
    window_id: str
    strategy: str = ""
    reason: str = ""
    summary: str | None = None
    span: tuple[Message, ...] = ()
    forced: bool = False
    failures: int = 0
    server: ServerCompaction | None = None
    notice: str | None = None
    archive_uri: str | None = None
    """Where the messages that left the window were archived (None: not archived)."""


class OverflowRunner:
    """Runner state shared by the compiles of one chef."""

    def __init__(
        self,
        budget: BudgetConfig | Mapping[str, Any] | None = None,
        overflow: OverflowConfig | Mapping[str, Any] | None = None,
    ) -> None:
        self.config = BudgetConfig.of(budget)
        self.overflow = OverflowConfig.of(overflow)
        self.usage = Usage(self.config.usage_preference)
        self.failures = 0
        self.noticed_window: str | None = None
        first = self.overflow.window_ids()
        self.lineage = Lineage(first, None, first)

    def report_usage(self, tokens: int) -> None:
        """The provider's input tokens for the last compile's payload (see `usage`)."""
        self.usage.report(tokens)

    def compiled(self, target: str, total: int) -> None:
        """Record what the compile that just finished counted, for a report about it."""
        self.usage.compiled(target, total, self.lineage.current)

    def reset(self) -> None:
        """Forget reported usage and failures, and start a new lineage."""
        self.usage.reset()
        self.failures = 0
        self.noticed_window = None
        first = self.overflow.window_ids()
        self.lineage = Lineage(first, None, first)

    def _notice(self, budget: Budget, vocabulary: prompts.Vocabulary) -> str | None:
        """The handoff notice, once per window, when the headroom is down to its budget."""
        handoff = self.overflow.handoff
        if not isinstance(handoff, HandoffConfig) or budget.remaining > handoff.budget_tokens:
            return None
        if self.noticed_window == self.lineage.current:
            return None
        self.noticed_window = self.lineage.current
        return handoff.notice(vocabulary, budget.remaining)

    def flow(
        self,
        history: tuple[Message, ...],
        *,
        measure: Callable[[tuple[Message, ...]], int],
        counter: MessageCounter,
        target: str = "",
        profile: TargetProfile,
        forced: bool = False,
        store: StoreCore | None = None,
        vocabulary: prompts.Vocabulary = prompts.DEFAULT_VOCABULARY,
        on_start: tuple[Callable[[Any], Any], ...] = (),
        on_end: tuple[Callable[[Any], Any], ...] = (),
    ) -> Flow[OverflowReport]:
        """The overflow phase of a compile. `measure(history)` counts the whole payload the
        target would receive with that history (system blocks, tools, tail included);
        `profile` is what the target's adapter supports (its `AdapterProfile`), which the
        strategy asks about server-side compaction; `target` keys the reported usage."""
        window = self.lineage.current
        total = measure(history)
        current = self.usage.current(total, target, window)
        budget = Budget(self.config.context_window, current, self.config.trigger)
        strategy = self.overflow.strategy
        server = strategy.server_compaction(profile)
        if server is not None:
            reason = "compacted server-side by the provider"
            return OverflowReport(
                history=history,
                changed=False,
                budget=budget,
                window_id=window,
                reason=reason,
                server=server,
            )
        pending = strategy.pending()
        if not history:
            return OverflowReport(
                history=history,
                changed=False,
                budget=budget,
                window_id=window,
                reason="the history is empty",
            )
        if not (forced or budget.over or pending):
            notice = self._notice(budget, vocabulary)
            return OverflowReport(
                history=history,
                changed=False,
                budget=budget,
                window_id=window,
                reason="within budget",
                notice=notice,
            )
        fixed = measure(())
        budget = replace(budget, fixed=fixed)
        count = _scaled(counter, history, total - fixed)
        if self.failures >= BREAKER_LIMIT and not pending:
            reason = f"circuit breaker open after {self.failures} failed compressions"
            broken = OverflowResult(history, False, strategy.name, reason)
            return (yield from self._land(broken, history, budget, measure, count, store, forced))

        hook = self.overflow.on_before_compress
        if hook is not None:
            try:
                replacement = yield Call.of(hook, list(history), budget, what="on_before_compress")
            except Exception as exc:
                logger.warning("on_before_compress raised %r; ignoring it", exc)
                replacement = None
            if replacement is not None:
                history = tuple(replacement)
                budget = replace(budget, current=measure(history))

        if on_start:
            yield Emit(on_start, CompressStart(len(history), budget, forced))
        request = OverflowInput(history, budget, count, forced, window, counter.tokenizer)
        try:
            result: OverflowResult = yield from run_strategy(strategy, request)
        except Exception as exc:
            logger.warning("overflow strategy %r raised %r", strategy.name, exc)
            result = OverflowResult(history, False, strategy.name, f"raised {exc!r}", failed=True)

        report = yield from self._land(
            result, history, budget, measure, count, store, forced, vocabulary=vocabulary
        )
        if report.changed and self.overflow.on_compress is not None:
            try:
                yield Call.of(self.overflow.on_compress, report.summary, report, what="on_compress")
            except Exception as exc:
                logger.warning("on_compress raised %r; the compression is kept", exc)
        if on_end:
            yield Emit(on_end, CompressEnd(report))
        return report

    def _land(
        self,
        result: OverflowResult,
        history: tuple[Message, ...],
        budget: Budget,
        measure: Callable[[tuple[Message, ...]], int],
        count: Callable[[Sequence[Message]], int],
        store: StoreCore | None,
        forced: bool,
        *,
        vocabulary: prompts.Vocabulary = prompts.DEFAULT_VOCABULARY,
    ) -> Flow[OverflowReport]:
        """Fit the strategy's result into the window, archive what left, and start a new window
        when anything changed (see `fit`: only the oldest unpinned turns are dropped)."""
        if result.failed:
            self.failures += 1
            logger.warning(
                "compression failed (%d/%d toward the circuit breaker): %s",
                self.failures,
                BREAKER_LIMIT,
                result.reason,
            )
        elif result.changed:
            self.failures = 0
        start = result.history if result.changed else history
        kept, dropped, _ = fit(
            start,
            measure=measure,
            count=count,
            limit=budget.limit,
            keep_first=result.changed and result.summary is not None,
        )
        if dropped:
            reason = f"{result.reason}; dropped {len(dropped)} more messages to fit the window"
            result = replace(
                result, history=kept, changed=True, reason=reason, span=(*result.span, *dropped)
            )
        archived: str | None = None
        if result.changed:
            self.lineage = self.lineage.advance(self.overflow.window_ids())
            self.overflow.strategy.commit(result, self.lineage.current)
            if result.span:
                archived = yield from self._archive(result.span, store)
            if result.summary is not None and result.history:
                summary = result.summary
                if archived is not None:
                    summary += "\n\n" + vocabulary.archive_citation(len(result.span), archived)
                named = vocabulary.summary_window(self.lineage.current)
                head = summary_message(summary, window=named)
                result = replace(result, history=(head, *result.history[1:]), summary=summary)
        return OverflowReport(
            history=result.history if result.changed else history,
            changed=result.changed,
            budget=budget,
            window_id=self.lineage.current,
            strategy=result.strategy,
            reason=result.reason,
            summary=result.summary,
            span=result.span,
            forced=forced,
            failures=self.failures,
            archive_uri=archived,
        )

    def _archive(self, span: tuple[Message, ...], store: StoreCore | None) -> Flow[str | None]:
        """Store the evicted span; its URI, or None (best-effort: a failure only logs)."""
        target = self.overflow.archive
        if target is None:
            return None
        document = archive_document(span)
        try:
            if callable(target):
                uri = yield Call.of(target, document, len(span), what="overflow archive")
                return str(uri) if uri else None
            if store is None:
                return None
            put = yield from store.put(target, None, document, None)
            return str(put.uri)
        except Exception as exc:
            logger.warning("archiving %d evicted messages failed: %r", len(span), exc)
            return None

    def snapshot(self) -> dict[str, Any]:
        """The runner's state for `ContextChef.snapshot` (a strategy's own state included)."""
        return {
            "failures": self.failures,
            "lineage": self.lineage,
            "noticed_window": self.noticed_window,
            "reported": self.usage.reported,
            "strategy": copy_json(self.overflow.strategy.snapshot()),
        }

    def restore(self, state: Mapping[str, Any] | None) -> None:
        restore = self.overflow.strategy.restore
        if not state:
            self.reset()
            restore(None)
            return
        self.failures = int(state.get("failures", 0))
        reported = state.get("reported")
        self.usage.reported = reported if isinstance(reported, Reported) else None
        self.noticed_window = state.get("noticed_window")
        lineage = state.get("lineage")
        self.lineage = lineage if isinstance(lineage, Lineage) else replace(self.lineage)
        restore(copy_json(state.get("strategy")))


def _scaled(
    counter: MessageCounter, history: Sequence[Message], history_tokens: int
) -> Callable[[Sequence[Message]], int]:
    """The per-message counter in the payload's units: the chef's tokenizer counts messages in
    our form, the budget counts what is sent; the history's two figures give the scale."""
    counted = counter.count_all(history)
    scale = history_tokens / counted if counted > 0 and history_tokens > 0 else 1.0
    if scale == 1.0:
        return counter.count_all
    return lambda messages: math.ceil(counter.count_all(messages) * scale)
