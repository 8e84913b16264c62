"""What `compile()` returns: the SDK keyword arguments, and `meta` about how they were made."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from contextchef.memory.entry import MemoryArtifacts
from contextchef.messages import HistoryFix
from contextchef.selection.janitor import OverflowReport

__all__ = ["CompileMeta", "LayerTokens", "Payload"]


@dataclass(frozen=True, slots=True)
class LayerTokens:
    """Estimated tokens per sandwich layer (with the chef's tokenizer)."""

    system: int
    history: int
    tail: int
    tools: int

    @property
    def total(self) -> int:
        return self.system + self.history + self.tail + self.tools


class CompileMeta:
    """What a compile did, beside the payload: target, token figures, repairs made.

    `repairs` lists what `ensure_valid_history` changed in the history the chef holds;
    `tail_index` is where the tail landed among the sandwich's messages; `memory_keys` and
    `expired_memory_keys` name the memory entries shown and those that expired; `overflow`
    reports the budget and what overflow did (with a janitor configured); `tokens` is counted
    with the chef's tokenizer the first time it is read.
    """

    __slots__ = (
        "_count",
        "_tokens",
        "expired_memory_keys",
        "memory_keys",
        "overflow",
        "repairs",
        "tail_index",
        "target",
    )

    def __init__(
        self,
        target: str,
        count: Callable[[], LayerTokens],
        repairs: tuple[HistoryFix, ...] = (),
        tail_index: int | None = None,
        overflow: OverflowReport | None = None,
        memory: MemoryArtifacts | None = None,
    ) -> None:
        self.target = target
        self.repairs = repairs
        self.tail_index = tail_index
        self.overflow = overflow
        self.memory_keys = memory.keys if memory is not None else ()
        self.expired_memory_keys = memory.expired if memory is not None else ()
        self._count: Callable[[], LayerTokens] | None = count
        self._tokens: LayerTokens | None = None

    @property
    def window_id(self) -> str | None:
        """The context window this payload belongs to (with overflow configured)."""
        return self.overflow.window_id if self.overflow is not None else None

    @property
    def tokens(self) -> LayerTokens:
        if self._tokens is None:
            assert self._count is not None
            self._tokens, self._count = self._count(), None
        return self._tokens

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, CompileMeta):
            return NotImplemented
        mine = (self.target, self.repairs, self.tail_index, self.overflow, self.memory_keys)
        theirs = (other.target, other.repairs, other.tail_index, other.overflow, other.memory_keys)
        return mine == theirs and self.tokens == other.tokens

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (
            f"CompileMeta(target={self.target!r}, tokens={self.tokens!r}, "
            f"repairs={self.repairs!r}, tail_index={self.tail_index!r})"
        )


class Payload(dict[str, Any]):
    """Exactly the keyword arguments of the provider SDK call, plus `.meta`.

    `client.chat.completions.create(model=..., **payload)`. The payload shares unchanged message
    dicts with the chef's conversion cache between compiles: copy it before mutating it in place.
    """

    meta: CompileMeta

    def __init__(self, data: dict[str, Any], meta: CompileMeta) -> None:
        super().__init__(data)
        self.meta = meta
