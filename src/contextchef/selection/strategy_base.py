"""The contract of an overflow strategy: what it sees, what it returns, the base class.

A strategy subclasses `Strategy`: a `name` and `apply(input) -> OverflowResult`; `apply` may also
be a generator of effects (see `contextchef._effects`), which `run_strategy` drives whether it
is sync or async. The optional hooks (`pending`, `commit`, `snapshot`, `restore`,
`server_compaction`) have no-op defaults, and the runner calls them by name, so a misspelt
override is just an unused method. The built-in strategies are in `strategies`.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from contextchef._effects import Effect
from contextchef.errors import ConfigError
from contextchef.messages import Message
from contextchef.selection.budget import Budget
from contextchef.tokens import Tokenizer

if TYPE_CHECKING:
    from contextchef.selection.server_compaction import ServerCompaction

__all__ = [
    "OverflowInput",
    "OverflowResult",
    "Strategy",
    "StrategyFlow",
    "TargetProfile",
    "require_strategy",
    "run_strategy",
]


class TargetProfile(Protocol):
    """What a strategy may ask of the compile's target: the part of its adapter's profile
    (`contextchef.adapters.AdapterProfile`, which is one) that selection reads. Selection sits
    below the adapters, so it names the field rather than import the class; it never sees the
    adapter or its target name."""

    @property
    def server_compaction(self) -> bool:
        """Whether the target's adapter can ask its provider to compact the context itself."""
        ...


@dataclass(frozen=True, slots=True)
class OverflowInput:
    """What a strategy sees: the history, the budget, a counter, and whether the pass is forced.

    `tokenizer` is the one behind `count` (when the runner knows it): work that leaves the
    compile's thread, such as `background`, counts with its own `MessageCounter` over it rather
    than share the compile's unlocked memo.
    """

    history: tuple[Message, ...]
    budget: Budget
    count: Callable[[Sequence[Message]], int]
    forced: bool = False
    window: str = ""
    tokenizer: Tokenizer | None = None


@dataclass(frozen=True, slots=True)
class OverflowResult:
    """What a strategy did. Unchanged results carry the input history and an empty span.

    `span` is every message that left the window (pinned ones included); `summary` is the text
    that stands in for them, if any — and then `history[0]` is the message carrying it, which
    the runner may re-render (archive citation, window lineage); `failed` counts toward the
    circuit breaker.
    """

    history: tuple[Message, ...]
    changed: bool
    strategy: str
    reason: str = ""
    summary: str | None = None
    span: tuple[Message, ...] = ()
    failed: bool = False
    steps: tuple[OverflowResult, ...] = field(default=())


class Strategy(abc.ABC):
    """The base class of every overflow strategy, built-in or user-defined.

    Subclasses provide `name` (a class attribute, a dataclass field or a property) and `apply`,
    which returns an `OverflowResult` or is a generator of effects returning one. The hooks
    below are optional: the runner always calls them, by these exact names, and the defaults
    do nothing — override the ones the strategy needs.
    """

    __slots__ = ()

    @property
    @abc.abstractmethod
    def name(self) -> str:
        """The strategy's name, as reported in `payload.meta.overflow.strategy`."""

    @abc.abstractmethod
    def apply(self, input: OverflowInput) -> Any:
        """Shrink `input.history`: an `OverflowResult`, or a generator of effects returning one."""

    def server_compaction(self, profile: TargetProfile) -> ServerCompaction | None:
        """The server-side compaction to ask of a target whose adapter has `profile`, or None
        (the default) to run `apply`.

        When this returns a request, the overflow phase is skipped for that compile and the
        request travels to the target's adapter (`AdapterInput.server_compaction`); return one
        only where `profile.server_compaction` says the adapter can send it.
        """
        return None

    def pending(self) -> bool:
        """Whether a finished result waits to land; True makes the runner call `apply` even
        within budget or with the circuit breaker open. Default: False."""
        return False

    def commit(self, result: OverflowResult, window: str) -> None:  # noqa: B027 (a no-op hook)
        """Called once `result` has landed and `window` is the new window's id. Default: nothing."""

    def snapshot(self) -> Any:
        """The strategy's own state as a JSON value for `ContextChef.snapshot`. Default: None."""
        return None

    def restore(self, state: Any) -> None:  # noqa: B027 (a no-op hook)
        """Take back what `snapshot` returned (None: start afresh). Default: nothing."""


StrategyFlow = Generator[Effect, Any, OverflowResult]


def require_strategy(value: Any, what: str = "overflow strategy") -> Strategy:
    """`value` if it is a `Strategy`; a `ConfigError` that says how to make one otherwise."""
    if isinstance(value, Strategy):
        return value
    raise ConfigError(
        f"{what} must subclass contextchef.Strategy (give it a `name` and an `apply(input)`; "
        f"the optional hooks default to no-ops), got {type(value).__name__}"
    )


def run_strategy(strategy: Strategy, input: OverflowInput) -> StrategyFlow:
    """Drive any strategy as a flow: generators are delegated to, plain results returned."""
    outcome = strategy.apply(input)
    if isinstance(outcome, Generator):
        result = yield from outcome
    else:
        result = outcome
    if not isinstance(result, OverflowResult):
        raise ConfigError(f"strategy {strategy.name!r} returned {type(result).__name__}")
    return result
