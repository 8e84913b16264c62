"""The `server` strategy: let the provider compact the context server-side.

On a target whose adapter can ask its provider to compact (its profile's `server_compaction`:
the built-in `anthropic`, or any adapter that forwards or declares it) the overflow phase is
skipped and the compile hands the adapter a provider-neutral `ServerCompaction` request, which
the adapter renders in its own wire form (on Anthropic the payload is then for
`client.beta.messages.create(**payload)`). On every other target the `fallback` strategy runs
(or nothing, if there is none).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from contextchef.errors import ConfigError
from contextchef.selection.server_compaction import ServerCompaction
from contextchef.selection.strategies import (
    OverflowInput,
    OverflowResult,
    Strategy,
    StrategyFlow,
    TargetProfile,
    require_strategy,
    run_strategy,
)

__all__ = ["Server", "ServerCompaction", "server"]


class Server(Strategy):
    """Server-side compaction where the target supports it, `fallback` elsewhere."""

    def __init__(self, request: ServerCompaction, fallback: Strategy | None) -> None:
        self.request = request
        self.fallback = fallback

    @property
    def name(self) -> str:
        return f"server({self.fallback.name})" if self.fallback else "server"

    def server_compaction(self, profile: TargetProfile) -> ServerCompaction | None:
        """The request, or None when the target's adapter cannot send it (its profile)."""
        return self.request if profile.server_compaction else None

    def apply(self, input: OverflowInput) -> StrategyFlow:
        if self.fallback is None:
            reason = (
                "server-side compaction needs a target whose adapter supports it "
                "(AdapterProfile.server_compaction); no fallback is set"
            )
            return OverflowResult(input.history, False, self.name, reason)
        return (yield from run_strategy(self.fallback, input))

    def pending(self) -> bool:
        return self.fallback is not None and self.fallback.pending()

    def commit(self, result: OverflowResult, window: str) -> None:
        if self.fallback is not None:
            self.fallback.commit(result, window)

    def snapshot(self) -> Any:
        return None if self.fallback is None else self.fallback.snapshot()

    def restore(self, state: Any) -> None:
        if self.fallback is not None:
            self.fallback.restore(state)


def server(
    config: ServerCompaction | Mapping[str, Any] | None = None,
    *,
    trigger_tokens: int | None = None,
    instructions: str | None = None,
    pause_after_compaction: bool = False,
    fallback: Strategy | None = None,
) -> Server:
    """Provider-side compaction, with `fallback` on targets without it.

    Describe the compaction with the keyword options, or pass a ready `ServerCompaction`; a
    plain dict `config` is the provider's own configuration, sent verbatim (`native`).
    """
    if config is not None and (trigger_tokens, instructions, pause_after_compaction) != (
        None,
        None,
        False,
    ):
        raise ConfigError("server(): pass either a config or the keyword options, not both")
    if config is None:
        request = ServerCompaction(trigger_tokens, instructions, pause_after_compaction)
    elif isinstance(config, ServerCompaction):
        request = config
    elif isinstance(config, Mapping):
        request = ServerCompaction(native=config)
    else:
        raise ConfigError("server config must be a ServerCompaction, a dict or None")
    if fallback is not None:
        require_strategy(fallback, "server fallback")
    return Server(request, fallback)
