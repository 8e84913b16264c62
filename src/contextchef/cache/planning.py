"""The prompt-cache side of a compile: options, per-target state, memory layers, breakpoints and
the provider options passed through.

- `CacheOptions`: the chef's `cache=` mode (`"auto"`: automatic breakpoints where the target
  takes them, the default; `"explicit"`: only the host's own `_cache_breakpoint` marks; `"off"`:
  no breakpoint at all), `cache_audit=`, and the provider options passed through as they are:
  OpenAI's `prompt_cache_key` and Gemini's `cached_content`, to the adapters whose profile
  (`AdapterProfile`) takes them.
- `TargetCache`: what one chef remembers per target between compiles: the `CacheLedger` (the
  previous compile's parts), the memory baseline (`memory.delta`), the previous stable end
  (`placement.breakpoints`), and the window they belong to.
- `MemoryLayers`: the system message after the system prompt and the tail blocks, for the
  history the chef holds (the memory baseline kept, changes in the tail) and for any other
  history an overflow proposes (the prefix breaks anyway: memory folded into the block).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Literal, Protocol, get_args

from contextchef._effects import Emit, Flow
from contextchef.cache.audit import audit, volatile_start
from contextchef.cache.economics import CacheReport
from contextchef.cache.ledger import CacheLedger
from contextchef.errors import ConfigError
from contextchef.events import CacheFinding, PipelineInvariant
from contextchef.memory.core import MemoryCore
from contextchef.memory.delta import MemoryBaseline, MemoryView, memory_view
from contextchef.memory.entry import MemoryArtifacts
from contextchef.messages import Message
from contextchef.placement.state import DynamicState
from contextchef.prompts import Vocabulary

__all__ = [
    "CacheMode",
    "CacheOptions",
    "MemoryLayers",
    "TargetCache",
    "instruction_message",
    "measure_cache",
    "memory_layers",
    "report_violations",
    "with_provider_options",
]

logger = logging.getLogger("contextchef.cache")

CacheMode = Literal["auto", "explicit", "off"]


@dataclass(frozen=True, slots=True)
class CacheOptions:
    """The chef's prompt-cache options, validated once (see `ContextChef.__init__`)."""

    mode: CacheMode = "auto"
    audit: bool = False
    prompt_cache_key: str | None = None
    cached_content: str | None = None
    checks: bool = False

    @classmethod
    def of(
        cls,
        *,
        cache: object,
        cache_audit: object,
        prompt_cache_key: object,
        cached_content: object,
        pipeline_checks: object,
    ) -> CacheOptions:
        if cache not in get_args(CacheMode):
            raise ConfigError(f"cache must be 'auto', 'explicit' or 'off', got {cache!r}")
        for name, flag in (("cache_audit", cache_audit), ("pipeline_checks", pipeline_checks)):
            if type(flag) is not bool:
                raise ConfigError(f"{name} must be True or False, got {flag!r}")
        for name, value in (
            ("prompt_cache_key", prompt_cache_key),
            ("cached_content", cached_content),
        ):
            if value is not None and (not isinstance(value, str) or not value.strip()):
                raise ConfigError(f"{name} must be a non-empty string or None, got {value!r}")
        return cls(
            mode=cache,  # type: ignore[arg-type]  # checked above
            audit=cache_audit,  # type: ignore[arg-type]
            prompt_cache_key=prompt_cache_key,  # type: ignore[arg-type]
            cached_content=cached_content,  # type: ignore[arg-type]
            checks=pipeline_checks,  # type: ignore[arg-type]
        )


@dataclass
class TargetCache:
    """What one chef remembers for one target between compiles (see the module docstring)."""

    name: str
    ledger: CacheLedger
    baseline: MemoryBaseline | None = None
    stable_end: int | None = None
    window: str | None = None
    volatile_from: int | None = None
    """The index of the first part of the previous payload expected to change (its tail)."""
    reported: set[bytes] = field(default_factory=set)
    """Digests of parts a timestamp finding was already reported for."""


@lru_cache(maxsize=16)
def instruction_message(content: str) -> Message:
    """One message object per text after the system prompt: the conversion caches, keyed by
    identity, then keep it and every message after it across compiles (never mutated)."""
    return {"content": content, "role": "system"}


@dataclass(frozen=True, slots=True)
class MemoryLayers:
    """The layers memory adds for the history the chef holds (`kept`) and for a history an
    overflow made (`folded`): each the system messages after the system prompt, the tail
    blocks, and the memory view (None without memory)."""

    kept: tuple[tuple[Message, ...], tuple[str, ...], MemoryView | None]
    folded: tuple[tuple[Message, ...], tuple[str, ...], MemoryView | None]


def _layers(
    vocabulary: Vocabulary, placement: str, view: MemoryView | None
) -> tuple[tuple[Message, ...], tuple[str, ...], MemoryView | None]:
    if view is None:
        if (store_instruction := vocabulary.store_instruction) is not None:
            return (instruction_message(store_instruction),), (), None
        return (), (), None
    instruction = vocabulary.memory_instruction
    if placement == "before_history_tail":  # the tail is rendered anew every compile anyway
        tail = (view.block,) if view.block else ()
        return (instruction_message(instruction),), tail, None
    content = f"{instruction}\n\n{view.block}" if view.block else instruction
    changes = (view.changes,) if view.changes else ()
    return (instruction_message(content),), changes, view


def memory_layers(
    vocabulary: Vocabulary,
    artifacts: MemoryArtifacts | None,
    memory: MemoryCore | None,
    target: TargetCache,
    generation: int,
    window: str | None,
) -> MemoryLayers:
    """The memory layers of one compile. The memory block at the tail
    (`placement="before_history_tail"`) is volatile anyway and always current; in the system
    part it keeps the target's baseline until the prefix breaks: a first compile, a new window,
    a new refresh `generation`, or a history an overflow made (`MemoryLayers.folded`)."""
    if artifacts is None or memory is None:
        plain = _layers(vocabulary, "after_system", None)
        return MemoryLayers(plain, plain)
    limit = memory.max_block_bytes
    if memory.placement == "before_history_tail":
        view = memory_view(artifacts, None, generation=generation, fold=True, max_bytes=None)
        tail = _layers(vocabulary, memory.placement, view)
        return MemoryLayers(tail, tail)
    fold = target.baseline is None or target.window != window
    kept = memory_view(
        artifacts, target.baseline, generation=generation, fold=fold, max_bytes=limit
    )
    folded = (
        kept
        if kept.folded
        else memory_view(artifacts, None, generation=generation, fold=True, max_bytes=limit)
    )
    return MemoryLayers(
        _layers(vocabulary, memory.placement, kept), _layers(vocabulary, memory.placement, folded)
    )


class OptionsProfile(Protocol):
    """What passing the provider options asks of the target's adapter profile
    (`contextchef.adapters.AdapterProfile`, which is one): the cache sits below the adapters,
    so it names the fields rather than import the class."""

    @property
    def prompt_cache_key(self) -> bool:
        """Whether the payload takes OpenAI's top-level `prompt_cache_key`."""

    @property
    def cached_content(self) -> bool:
        """Whether the payload takes google-genai's `config.cached_content`."""


def with_provider_options(
    data: dict[str, Any], profile: OptionsProfile, options: CacheOptions
) -> None:
    """Pass the provider's own cache options through, in place, keys kept sorted, where the
    adapter's `profile` takes them: OpenAI's `prompt_cache_key` (a routing hint that groups
    requests sharing a prefix) and Gemini's `cached_content` (the name of a context cache made
    with `client.caches.create`; the API refuses `system_instruction`, `tools` and `tool_config`
    beside it, since the cache holds them, so those leave the config)."""
    key = options.prompt_cache_key
    if key is not None and profile.prompt_cache_key:
        items = sorted({**data, "prompt_cache_key": key}.items())
        data.clear()
        data.update(items)
    cached = options.cached_content
    if cached is not None and profile.cached_content:
        config: Mapping[str, Any] = data.get("config") or {}
        kept = {k: v for k, v in config.items() if k not in _CACHED_BY_GEMINI}
        data["config"] = dict(sorted({**kept, "cached_content": cached}.items()))


_CACHED_BY_GEMINI = frozenset(("system_instruction", "tool_config", "tools"))


def measure_cache(
    remembered: TargetCache,
    data: Mapping[str, Any],
    *,
    options: CacheOptions,
    deliberate: bool,
    layout: tuple[str, DynamicState | None, int | None, str | None],
    baseline: MemoryBaseline | None,
    handlers: tuple[Callable[[Any], Any], ...],
) -> Flow[CacheReport | Callable[[], CacheReport]]:
    """`payload.meta.cache` of `data` against the target's previous compile, with the audit's
    findings (`cache_audit=True`) emitted as `cache:finding` events; then this compile becomes
    the target's previous one. Without the audit, the report is measured when first read: a
    function that measures it is returned. `layout` is the tail text, the dynamic state, the
    stable end the breakpoints marked and the window after the compile."""
    tail, state, stable_end, window = layout
    ledger = remembered.ledger
    if not options.audit:  # nothing to emit: sized only when `meta.cache` is read
        measured = ledger.defer(data)
        remembered.volatile_from, remembered.baseline = None, baseline
        remembered.stable_end, remembered.window = stable_end, window
        return measured
    previous = ledger.previous
    previous_length = previous.count if previous is not None else None
    entry, prefix, changed = ledger.advance(data)
    volatile: int | None = None
    findings: list[CacheFinding] = []
    if options.audit:
        volatile = volatile_start(entry, tail)
        findings = audit(
            remembered.name,
            entry,
            previous_length,
            changed=changed,
            deliberate=deliberate or previous is None,
            previous_volatile=remembered.volatile_from,
            volatile=volatile,
            state_text=state.xml if state is not None else None,
            reported=remembered.reported,
        )
    report = ledger.report(entry, prefix, changed, findings)
    ledger.commit(entry)  # before any yield: `advance` took the previous entry's lists over
    remembered.volatile_from, remembered.baseline = volatile, baseline
    remembered.stable_end, remembered.window = stable_end, window
    for finding in findings:
        logger.info("cache audit (%s): %s", remembered.name, finding.message)
        if handlers:
            yield Emit(handlers, finding)
    return report


def report_violations(
    found: Iterable[PipelineInvariant],
    *,
    logged: set[tuple[str, str, str]],
    handlers: tuple[Callable[[Any], Any], ...],
) -> Flow[None]:
    """Log each violation the first time it is seen (per chef) and emit every one as a
    `pipeline:invariant` event."""
    for violation in found:
        key = (violation.target, violation.check, violation.message)
        if key not in logged:
            logged.add(key)
            logger.warning(
                "pipeline check %s failed (%s): %s",
                violation.check,
                violation.target,
                violation.message,
            )
        if handlers:
            yield Emit(handlers, violation)
