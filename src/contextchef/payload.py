"""What `compile()` returns: the SDK keyword arguments, and `meta` about how they were made.

Token figures count what is sent: `PayloadCounter` counts the payload the target receives, part
by part (its system blocks, its messages, its tools — in the target's own shapes), with the
chef's tokenizer applied to each part's compact JSON text. So the figures differ per target as
the payloads do, and with an exact tokenizer they are exact for that text.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from contextchef._memo import ConversionCache
from contextchef._repair import HistoryFix
from contextchef.cache.economics import CacheReport, described
from contextchef.memory.entry import MemoryArtifacts
from contextchef.selection.overflow import OverflowReport
from contextchef.tokens import Tokenizer

__all__ = [
    "CompileDone",
    "CompileMeta",
    "HistoryFix",
    "LayerTokens",
    "Payload",
    "PayloadCounter",
    "part_tokens",
]


@dataclass(frozen=True, slots=True)
class LayerTokens:
    """Tokens per layer of the payload as sent (with the chef's tokenizer): the system blocks,
    the history, the tail (the live state and blocks stitched at the end) and the tools."""

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
    reports the budget and what overflow did (with a budget configured); `tokens` is counted
    with the chef's tokenizer the first time it is read; `cache` tells how much of the payload
    is identical to the previous compile's (see `CacheReport`), measured the first time it is
    read (a host that never reads it pays nothing for it).
    """

    __slots__ = (
        "_cache",
        "_count",
        "_measure",
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
        cache: CacheReport | Callable[[], CacheReport] | None = None,
    ) -> None:
        self.target = target
        self._measure: Callable[[], CacheReport] | None = None
        self._cache: CacheReport | None = None
        if callable(cache):
            self._measure = cache
        else:
            self._cache = cache if cache is not None else CacheReport(0, 0)
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
    def counted(self) -> bool:
        """Whether `tokens` is counted already (with a budget it always is; otherwise reading
        it counts now): telemetry reads the figures only when they cost nothing more."""
        return self._tokens is not None

    @property
    def cache(self) -> CacheReport:
        if self._cache is None:
            assert self._measure is not None
            self._cache, self._measure = self._measure(), None
        return self._cache

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


_SYSTEM_KEYS = ("system", "instructions", "system_instruction")
_MESSAGE_KEYS = ("messages", "input", "contents")
_SYSTEM_ROLES = frozenset({"system", "developer"})


def part_tokens(tokenizer: Tokenizer, part: Any) -> int:
    """The tokens of one payload part exactly as `meta.tokens` counts it (see `PayloadCounter`).

    For views that break the figures down (`contextchef inspect`): counting the parts of a
    layer with this gives numbers that add up to the layer, where counting another text (the
    JSON with its `cache_control` markers, say) would not.
    """
    return tokenizer.count_text(part if isinstance(part, str) else described(part)[0])


class PayloadCounter:
    """Counts a target's payload by parts, never counting an unchanged part twice.

    The adapters hand out the same converted objects for unchanged messages compile after
    compile, so the memo (by identity, swept once per compile) makes an incremental compile
    count only what is new. Leading system messages (OpenAI's) count as system.

    The text a part is counted on is its canonical serialization (`cache.economics`), and the
    part's size and digest are left in `facts` (shared with the target's `CacheLedger`), so the
    cache figures of a compile that was counted serialize nothing again.
    """

    def __init__(self, tokenizer: Tokenizer, facts: ConversionCache | None = None) -> None:
        self.tokenizer = tokenizer
        self._memo = ConversionCache()
        self.facts = facts if facts is not None else ConversionCache()

    def _part(self, value: Any) -> int:
        text, known = described(value)
        self.facts.convert(value, lambda _: known)
        if isinstance(value, str):
            return self.tokenizer.count_text(value)
        return self.tokenizer.count_text(text)

    def _items(self, value: Any) -> int:
        if isinstance(value, list | tuple):
            return sum(self._memo.convert(item, self._part) for item in value)
        return self._part(value) if value else 0

    def count(self, data: Mapping[str, Any], tail: int = 0) -> LayerTokens:
        """The figures of `data`; `tail` (at most the history's share) is moved to the tail."""
        scopes = [data]
        config = data.get("config")
        if isinstance(config, Mapping):
            scopes.append(config)
        system = tools = 0
        for scope in scopes:
            for key in _SYSTEM_KEYS:
                system += self._items(scope.get(key))
            tools += self._items(scope.get("tools"))
        messages: Sequence[Any] = next(
            (data[key] for key in _MESSAGE_KEYS if isinstance(data.get(key), list)), []
        )
        costs = self._memo.convert_all(messages, self._part)
        lead = 0
        for message, cost in zip(messages, costs, strict=True):
            if not (isinstance(message, Mapping) and message.get("role") in _SYSTEM_ROLES):
                break
            lead += cost
        history = sum(costs) - lead
        tail = min(max(0, tail), history)
        return LayerTokens(system=system + lead, history=history - tail, tail=tail, tools=tools)

    def sweep(self) -> None:
        """Forget parts not counted since the previous sweep (call once per compile)."""
        self._memo.sweep()


@dataclass(frozen=True, slots=True)
class CompileDone:
    """The `compile:done` event: a compile finished; `payload` is what `compile()` returns.
    (It lives with `Payload`, which sits above `events`.)"""

    target: str
    payload: Payload
