"""What one compile reads and what a chef keeps between compiles: `CompileState` (the chef's
layers, read at the start of a compile), `CompileRuntime` (the per-chef memo: conversion caches,
counters, cache state per target, the configured parts) and the abort `Signal`.

`pipeline` runs the flow over them and `_payload_builder` builds payloads from them; both read
this module, neither the other.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from contextchef._memo import ConversionCache
from contextchef._repair import HistoryFix
from contextchef._sequences import Lineage
from contextchef.adapters.base import AdapterRegistry, ToolDefinition
from contextchef.cache.ledger import CacheLedger
from contextchef.cache.planning import CacheOptions, TargetCache
from contextchef.memory.core import MemoryCore
from contextchef.messages import Message
from contextchef.payload import PayloadCounter
from contextchef.placement.announcements import Announcement
from contextchef.placement.guardrail import Guardrails
from contextchef.placement.state import DynamicState
from contextchef.prompts import UnifiedVocabulary, Vocabulary
from contextchef.selection.offload import OffloadConfig
from contextchef.selection.overflow import OverflowRunner
from contextchef.selection.pruner import PrunerState
from contextchef.selection.tool_plan import PlanMemo
from contextchef.selection.tool_results import ToolResultMemo, TransformHook
from contextchef.skills.active import ActiveSkill
from contextchef.store.core import StoreCore
from contextchef.tokens import MessageCounter

__all__ = ["CompileRuntime", "CompileState", "Signal"]


class Signal(Protocol):
    """Anything with `is_set()`: a `threading.Event`, an `asyncio.Event`, or your own."""

    def is_set(self) -> bool: ...


@dataclass(frozen=True, slots=True, kw_only=True)
class CompileState:
    """The chef's layers, as read at the start of one compile."""

    system_prompt: tuple[Message, ...]
    history: tuple[Message, ...]
    repairs: tuple[HistoryFix, ...]
    state: DynamicState | None
    guardrails: Guardrails | None
    tools: tuple[ToolDefinition, ...]
    skill: ActiveSkill | None = None
    announcements: tuple[Announcement, ...] = ()
    pruner: PrunerState = field(default_factory=PrunerState)
    lineage: Lineage | None = None
    """How `history` continues the history set before it, when the setter knows (see
    `Lineage`): the compile's memos then skip comparing the two."""


@dataclass(kw_only=True)
class CompileRuntime:
    """Per-chef memo shared by compiles: a conversion cache per target, the token counter."""

    registry: AdapterRegistry
    counter: MessageCounter = field(default_factory=MessageCounter)
    overflow_runner: OverflowRunner | None = None
    store: StoreCore | None = None
    vocabulary: Vocabulary = field(default_factory=UnifiedVocabulary)
    offload: OffloadConfig = field(default_factory=OffloadConfig)
    transform: TransformHook | None = None
    memory: MemoryCore | None = None
    library_tools: tuple[ToolDefinition, ...] = ()
    skill_placement: str = "after_system"
    tool_plans: PlanMemo = field(default_factory=PlanMemo)
    tool_results: ToolResultMemo = field(default_factory=ToolResultMemo)
    caches: dict[str, ConversionCache] = field(default_factory=dict)
    payload_counters: dict[str, PayloadCounter] = field(default_factory=dict)
    cache: CacheOptions = field(default_factory=CacheOptions)
    targets: dict[str, TargetCache] = field(default_factory=dict)
    memory_generation: int = 0
    """Bumped by `refresh_memory()`, `clear_history()` and `restore()`: memory is rendered
    into the prefix again at the next compile of every target."""
    logged: set[tuple[str, str, str]] = field(default_factory=set)

    def cache_for(self, target: str) -> ConversionCache:
        cache = self.caches.get(target)
        if cache is None:
            cache = self.caches[target] = ConversionCache()
        return cache

    def payload_counter(self, target: str) -> PayloadCounter:
        counter = self.payload_counters.get(target)
        if counter is None:
            counter = self.payload_counters[target] = PayloadCounter(self.counter.tokenizer)
        return counter

    def target_cache(self, target: str) -> TargetCache:
        """What the chef remembers of its previous compile for `target` (the ledger shares the
        part facts of the target's payload counter)."""
        remembered = self.targets.get(target)
        if remembered is None:
            facts = self.payload_counter(target).facts
            remembered = self.targets[target] = TargetCache(target, CacheLedger(facts))
        return remembered

    def window(self) -> str | None:
        return self.overflow_runner.lineage.current if self.overflow_runner is not None else None
