"""`ServerCompaction`: a request for server-side compaction in no provider's terms.

Strategies return it (`Strategy.server_compaction`), the `server` strategy builds it, and the
target's adapter renders it; it sits below all three.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from contextchef._jsonvalue import sorted_keys
from contextchef.errors import ConfigError

__all__ = ["ServerCompaction"]


@dataclass(frozen=True, slots=True)
class ServerCompaction:
    """A request for server-side compaction, in no provider's terms (adapters render it).

    `trigger_tokens`: compact once the input reaches this many tokens (None: the provider's
    default). `instructions`: extra guidance for the provider's summary. `pause_after_compaction`:
    ask the provider to stop after compacting and return the compaction to the caller.
    `native`: the provider's own configuration object, sent verbatim in place of the fields above
    by the adapter that understands it (an escape hatch for settings with no neutral form).
    """

    trigger_tokens: int | None = None
    instructions: str | None = None
    pause_after_compaction: bool = False
    native: Mapping[str, Any] | None = None

    def __post_init__(self) -> None:
        tokens = self.trigger_tokens
        if tokens is not None and (
            not isinstance(tokens, int) or isinstance(tokens, bool) or tokens <= 0
        ):
            raise ConfigError(f"server trigger_tokens must be a positive int, got {tokens!r}")
        if self.instructions is not None and not isinstance(self.instructions, str):
            raise ConfigError("server instructions must be a string")
        if self.native is not None:
            if not isinstance(self.native, Mapping):
                raise ConfigError("server native config must be a dict")
            object.__setattr__(self, "native", sorted_keys(self.native))
