"""Overflow strategies: what to do with the history when it outgrows its budget.

The contract every strategy meets (`Strategy`, `OverflowInput`, `OverflowResult`, …) is in
`strategy_base` and re-exported here; the built-in ones call the user's compression model as an
effect, without caring whether it is sync or async. Every split falls on a turn boundary, so a
tool call is never separated from its result, and pinned turns survive verbatim, in order, right
after the summary.

- `summarize(...)`: the old turns become one summary message from the user's model (or are
  dropped when there is no model);
- `reset(...)`: every unpinned turn leaves, with no model call;
- `chain(a, b, ...)`: try each in turn until the history fits.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from contextchef import prompts
from contextchef._effects import Call
from contextchef.errors import ConfigError
from contextchef.messages import Message, Turn, content_text, group_turns
from contextchef.selection.compaction import Compressor, summary_flow, summary_message
from contextchef.selection.strategy_base import (
    OverflowInput,
    OverflowResult,
    Strategy,
    StrategyFlow,
    TargetProfile,
    require_strategy,
    run_strategy,
)

__all__ = [
    "OverflowInput",
    "OverflowResult",
    "Strategy",
    "StrategyFlow",
    "TargetProfile",
    "chain",
    "require_strategy",
    "reset",
    "run_strategy",
    "summarize",
]

logger = logging.getLogger("contextchef.selection.strategies")


def _unchanged(
    input: OverflowInput, name: str, reason: str, *, failed: bool = False
) -> OverflowResult:
    return OverflowResult(input.history, False, name, reason, failed=failed)


def _span_chars(messages: Sequence[Message]) -> int:
    total = 0
    for message in messages:
        total += len(content_text(message))
        thinking = message.get("thinking")
        if thinking:
            total += len(thinking["thinking"])
        for call in message.get("tool_calls") or ():
            total += len(call["function"]["arguments"])
    return total


def _flatten(turns: Sequence[Turn]) -> list[Message]:
    return [message for turn in turns for message in turn.messages]


@dataclass(frozen=True, slots=True)
class _Summarize(Strategy):
    compression_model: Compressor | None
    preserve_ratio: float | None
    preserve_recent_messages: int | None
    min_shrink_ratio: float
    validate_compression: Callable[..., Any] | None
    tool_result_stub_threshold: int | None
    compression_guidelines: tuple[str, ...]
    custom_compression_instructions: str | None
    name: str = "summarize"

    def split(self, turns: list[Turn], input: OverflowInput) -> int:
        """How many turns from the start leave the window (0: none)."""
        if input.forced:
            return len(turns) - 1
        if self.preserve_recent_messages is not None and self.preserve_ratio is None:
            return max(0, len(turns) - max(1, self.preserve_recent_messages))
        ratio = 0.8 if self.preserve_ratio is None else self.preserve_ratio
        target = math.floor(input.budget.trigger * ratio) - input.budget.fixed
        kept, used = 1, input.count(turns[-1].messages)
        for turn in reversed(turns[:-1]):
            cost = input.count(turn.messages)
            if used + cost > target:
                break
            used += cost
            kept += 1
        return len(turns) - kept

    def apply(self, input: OverflowInput) -> StrategyFlow:
        return (yield from self.run(input))

    def run(
        self, input: OverflowInput, *, instruction: str | None = None, previous: str = ""
    ) -> StrategyFlow:
        """Split, summarise and check. `previous` is a summary the new one extends: the shrink
        guard then measures only what the new one adds."""
        turns = group_turns(input.history)
        if input.forced and len(turns) < 2:
            return _unchanged(
                input, self.name, "a forced pass needs one turn to drop and one to answer in"
            )
        cut = self.split(turns, input)
        if cut <= 0:
            return _unchanged(input, self.name, "no turn boundary above the kept tail")
        old, kept = turns[:cut], _flatten(turns[cut:])
        pinned = _flatten([t for t in old if t.pinned])
        to_summarize = _flatten([t for t in old if not t.pinned])
        span = tuple(_flatten(old))
        if not to_summarize:
            return _unchanged(input, self.name, "every turn above the kept tail is pinned")
        if self.compression_model is None:
            history = (*pinned, *kept)
            opener = next((m for m in history if m["role"] != "system"), None)
            if opener is not None and opener["role"] != "user":
                # Providers want the dialogue to open with the user; say what happened (the
                # record then holds this notice, and a reloading host's history matches it).
                notice: Message = {"content": prompts.CONVERSATION_CONTINUES, "role": "user"}
                history = (notice, *history)
            return OverflowResult(history, True, self.name, "dropped", None, span)
        try:
            summary = yield from summary_flow(
                to_summarize,
                self.compression_model,
                instruction=instruction,
                guidelines=self.compression_guidelines,
                extra_instructions=self.custom_compression_instructions,
                tool_result_stub_threshold=self.tool_result_stub_threshold,
            )
        except Exception as exc:
            logger.warning("compression model failed: %r", exc)
            return _unchanged(input, self.name, f"compression model failed: {exc!r}", failed=True)
        if not summary.strip():
            return _unchanged(input, self.name, "the summary came back empty", failed=True)
        chars = _span_chars(to_summarize)
        if self.min_shrink_ratio > 0 and chars >= 2000:
            allowed = (1 - self.min_shrink_ratio) * chars
            added = len(summary) - len(previous)
            if added > allowed:
                reason = f"summary adding {added} chars did not shrink {chars} chars enough"
                return _unchanged(input, self.name, reason, failed=True)
        if self.validate_compression is not None:
            try:
                verdict = yield Call.of(
                    self.validate_compression,
                    summary,
                    {"compressed": list(to_summarize), "kept": list(kept)},
                    what="validate_compression",
                )
            except Exception as exc:
                logger.warning("validate_compression raised %r", exc)
                verdict = False
            if not verdict:
                return _unchanged(input, self.name, "validate_compression rejected it", failed=True)
        history = (summary_message(summary), *pinned, *kept)
        return OverflowResult(history, True, self.name, "summarized", summary, span)


def summarize(
    compression_model: Compressor | None = None,
    *,
    preserve_ratio: float | None = None,
    preserve_recent_messages: int | None = None,
    min_shrink_ratio: float = 0.5,
    validate_compression: Callable[..., Any] | None = None,
    tool_result_stub_threshold: int | None = None,
    compression_guidelines: Sequence[str] = (),
    custom_compression_instructions: str | None = None,
) -> _Summarize:
    """Summarise the old turns with `compression_model` (drop them if it is `None`).

    The kept tail is the newest turns worth `preserve_ratio` (default 0.8) of the trigger, or
    the last `preserve_recent_messages` turns when only that is given; at least the last turn.
    A summary must be shorter than `1 - min_shrink_ratio` of a span of 2000+ characters.
    """
    if preserve_ratio is not None and not 0 < preserve_ratio <= 1:
        raise ConfigError("preserve_ratio must be in (0, 1]")
    if preserve_recent_messages is not None and preserve_recent_messages < 1:
        raise ConfigError("preserve_recent_messages must be 1 or more")
    if not 0 <= min_shrink_ratio < 1:
        raise ConfigError("min_shrink_ratio must be in [0, 1)")
    if tool_result_stub_threshold is not None and tool_result_stub_threshold < 0:
        raise ConfigError("tool_result_stub_threshold must be 0 or more")
    return _Summarize(
        compression_model,
        preserve_ratio,
        preserve_recent_messages,
        min_shrink_ratio,
        validate_compression,
        tool_result_stub_threshold,
        tuple(compression_guidelines),
        custom_compression_instructions,
    )


@dataclass(frozen=True, slots=True)
class _Reset(Strategy):
    notice: str | None
    name: str = "reset"

    def apply(self, input: OverflowInput) -> OverflowResult:
        turns = group_turns(input.history)
        pinned = _flatten([t for t in turns if t.pinned])
        if len(pinned) == len(input.history):
            return _unchanged(input, self.name, "only pinned turns are left")
        text = self.notice or prompts.reset_notice(input.window or "?", None)
        notice: Message = {"content": text, "role": "user"}
        return OverflowResult((notice, *pinned), True, self.name, "reset", None, input.history)


def reset(*, notice: str | None = None) -> Strategy:
    """Clear every unpinned turn from the window, with no model call."""
    return _Reset(notice)


@dataclass(frozen=True, slots=True)
class _Chain(Strategy):
    strategies: tuple[Strategy, ...]
    name: str

    def apply(self, input: OverflowInput) -> StrategyFlow:
        current = input
        steps: list[OverflowResult] = []
        for strategy in self.strategies:
            result = yield from run_strategy(strategy, current)
            steps.append(result)
            if not result.changed:
                continue
            current = replace(current, history=result.history)
            fits = current.count(current.history) + current.budget.fixed <= current.budget.trigger
            if fits and not input.forced:
                break
        changed = [s for s in steps if s.changed]
        if not changed:
            reasons = "; ".join(f"{s.strategy}: {s.reason}" for s in steps)
            failed = all(s.failed for s in steps)
            return OverflowResult(
                input.history, False, self.name, reasons, failed=failed, steps=tuple(steps)
            )
        span: list[Message] = []
        seen: set[int] = set()
        for step in changed:
            for message in step.span:
                if id(message) not in seen:
                    seen.add(id(message))
                    span.append(message)
        summary = changed[-1].summary
        return OverflowResult(
            current.history,
            True,
            self.name,
            changed[-1].reason,
            summary,
            tuple(span),
            steps=tuple(steps),
        )

    def pending(self) -> bool:
        return any(strategy.pending() for strategy in self.strategies)

    def commit(self, result: OverflowResult, window: str) -> None:
        """Each member whose own step changed the history commits that step."""
        for strategy, step in zip(self.strategies, result.steps, strict=False):
            if step.changed:
                strategy.commit(step, window)

    def snapshot(self) -> Any:
        states = [strategy.snapshot() for strategy in self.strategies]
        return None if all(state is None for state in states) else states

    def restore(self, state: Any) -> None:
        states = state if isinstance(state, list) else []
        for index, strategy in enumerate(self.strategies):
            strategy.restore(states[index] if index < len(states) else None)


def chain(*strategies: Strategy) -> Strategy:
    """Run strategies in order until the history fits under the trigger."""
    if not strategies:
        raise ConfigError("chain() needs at least one strategy")
    for index, strategy in enumerate(strategies):
        require_strategy(strategy, f"chain() member {index}")
    return _Chain(strategies, f"chain({'>'.join(s.name for s in strategies)})")
