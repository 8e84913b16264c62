"""The token budget: how full the window is, and when overflow fires.

Overflow fires when usage is *strictly* above `context_window × trigger_ratio`. Usage is every
token of the payload the target receives — system blocks, history, tail, the user's and the
library's tools — counted with the chef's tokenizer on the payload itself, and calibrated by a
reported usage (see `usage`). `fixed` is the part of it that is not the history: what no
strategy can shrink.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from contextchef._config import options
from contextchef.errors import ConfigError

__all__ = ["Budget", "BudgetConfig", "UsagePreference"]

UsagePreference = Literal["max", "feed_first", "tokenizer_first"]


@dataclass(frozen=True, slots=True)
class BudgetConfig:
    """`context_window` tokens, overflow past `trigger_ratio` of it; how to weigh reported usage."""

    context_window: float = float("inf")
    trigger_ratio: float = 0.7
    usage_preference: UsagePreference = "max"

    def __post_init__(self) -> None:
        if not (isinstance(self.context_window, int | float) and self.context_window > 0):
            raise ConfigError(
                f"context_window must be a positive number, got {self.context_window!r}"
            )
        if not (isinstance(self.trigger_ratio, int | float) and 0 < self.trigger_ratio <= 1):
            raise ConfigError(f"trigger_ratio must be in (0, 1], got {self.trigger_ratio!r}")
        if self.usage_preference not in ("max", "feed_first", "tokenizer_first"):
            raise ConfigError(
                "usage_preference must be 'max', 'feed_first' or 'tokenizer_first', "
                f"got {self.usage_preference!r}"
            )

    @classmethod
    def of(cls, value: BudgetConfig | Mapping[str, Any] | None) -> BudgetConfig:
        if isinstance(value, Mapping) and "tokenizer" in value:
            raise ConfigError(
                "the tokenizer is one setting of the chef: pass ContextChef(tokenizer=...), "
                "not budget={'tokenizer': ...}"
            )
        return options(cls, value, "budget")

    @property
    def trigger(self) -> float:
        return self.context_window * self.trigger_ratio


@dataclass(frozen=True, slots=True)
class Budget:
    """The window's limit, current usage and trigger; `remaining` is headroom to the trigger;
    `fixed` is the usage outside the history (system, tools, tail)."""

    limit: float
    current: int
    trigger: float
    fixed: int = 0

    @property
    def remaining(self) -> float:
        return self.trigger - self.current

    @property
    def over(self) -> bool:
        return self.current > self.trigger
