"""How overflow is configured: the strategy, the archive, the handoff notice, write-back, hooks.

Both records accept plain dicts (see `contextchef._config.options`) and are validated when the
chef is built, so a bad option fails at construction, never mid-conversation.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from contextchef import prompts
from contextchef._config import options
from contextchef.errors import ConfigError, InvalidPathError
from contextchef.selection.strategies import Strategy, require_strategy, summarize
from contextchef.store.paths import validate_namespace

__all__ = ["MAX_HANDOFF_PROMPT_BYTES", "HandoffConfig", "OverflowConfig"]


def _new_window_id() -> str:
    return f"w_{uuid.uuid4().hex[:12]}"


@dataclass(frozen=True, slots=True)
class HandoffConfig:
    """One notice per window when the headroom to the trigger drops to `budget_tokens`.

    `prompt` replaces the default notice; `{n_remaining}` in it becomes the tokens left.
    """

    budget_tokens: int = 0
    prompt: str | None = None

    def __post_init__(self) -> None:
        budget = self.budget_tokens
        if not isinstance(budget, int) or isinstance(budget, bool) or budget <= 0:
            raise ConfigError(f"handoff budget_tokens must be a positive int, got {budget!r}")
        if self.prompt is not None:
            if not isinstance(self.prompt, str) or not self.prompt.strip():
                raise ConfigError("handoff prompt must be a non-empty string")
            if len(self.prompt.encode("utf-8")) > MAX_HANDOFF_PROMPT_BYTES:
                raise ConfigError(
                    f"handoff prompt must be at most {MAX_HANDOFF_PROMPT_BYTES} bytes of UTF-8"
                )

    @classmethod
    def of(cls, value: HandoffConfig | Mapping[str, Any] | None) -> HandoffConfig | None:
        return None if value is None else options(cls, value, "handoff")

    def notice(self, vocabulary: prompts.Vocabulary, remaining: float) -> str:
        text = self.prompt.strip() if self.prompt else vocabulary.handoff_notice()
        return text.replace(prompts.HANDOFF_REMAINING, str(max(0, round(remaining))))


MAX_HANDOFF_PROMPT_BYTES = 2000


@dataclass(frozen=True, slots=True)
class OverflowConfig:
    """How overflow behaves: the strategy, write-back, hooks, and where window ids come from."""

    strategy: Strategy = field(default_factory=summarize)
    archive: str | Callable[..., Any] | None = "archive"
    handoff: HandoffConfig | Mapping[str, Any] | None = None
    write_back: bool = True
    on_compress: Callable[..., Any] | None = None
    on_before_compress: Callable[..., Any] | None = None
    window_ids: Callable[[], str] = _new_window_id

    @classmethod
    def of(cls, value: OverflowConfig | Mapping[str, Any] | None) -> OverflowConfig:
        config = options(cls, value, "overflow")
        require_strategy(config.strategy)
        if config.handoff is not None and not isinstance(config.handoff, HandoffConfig):
            config = replace(config, handoff=HandoffConfig.of(config.handoff))
        archive = config.archive
        if archive is not None and not callable(archive):
            if not isinstance(archive, str):
                raise ConfigError("overflow archive must be a namespace name, a callable or None")
            try:
                validate_namespace(archive)
            except InvalidPathError as exc:
                raise ConfigError(f"overflow archive: {exc}") from exc
        return config
