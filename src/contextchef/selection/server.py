"""The `server` strategy: let Anthropic compact the context server-side.

On the `anthropic` target the overflow phase is skipped and the payload asks the API to compact
(`context_management` plus its beta flag); such a payload is for
`client.beta.messages.create(**payload)`. On every other target the `fallback` strategy runs
(or nothing, if there is none).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from contextchef._jsonvalue import sorted_keys
from contextchef.selection.strategies import (
    OverflowInput,
    OverflowResult,
    Strategy,
    StrategyFlow,
    run_strategy,
)

__all__ = ["SERVER_TARGETS", "Server", "server"]

SERVER_TARGETS = frozenset(("anthropic",))
_COMPACT_EDIT = "compact_20260112"
_BETA_FOR_EDIT = {_COMPACT_EDIT: "compact-2026-01-12"}
_CONTEXT_MANAGEMENT_BETA = "context-management-2025-06-27"


class Server:
    """Server-side compaction on Anthropic, `fallback` elsewhere."""

    def __init__(self, config: Mapping[str, Any] | None, fallback: Strategy | None) -> None:
        self.config: dict[str, Any] = sorted_keys(config or {"edits": [{"type": _COMPACT_EDIT}]})
        self.fallback = fallback
        self.name = f"server({fallback.name})" if fallback else "server"

    def server_payload(self, target: str) -> dict[str, Any] | None:
        """Extra request keys for `target`, or None when the target cannot compact itself."""
        if target not in SERVER_TARGETS:
            return None
        edits = [edit.get("type") for edit in self.config.get("edits", [])]
        betas = sorted({_BETA_FOR_EDIT.get(str(e), _CONTEXT_MANAGEMENT_BETA) for e in edits})
        return {"betas": betas, "context_management": self.config}

    def apply(self, input: OverflowInput) -> StrategyFlow:
        if self.fallback is None:
            reason = "server-side compaction needs the anthropic target; no fallback is set"
            return OverflowResult(input.history, False, self.name, reason)
        return (yield from run_strategy(self.fallback, input))


def server(config: Mapping[str, Any] | None = None, *, fallback: Strategy | None = None) -> Server:
    """Anthropic server-side compaction (`config` is its `context_management`)."""
    return Server(config, fallback)
