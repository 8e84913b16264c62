"""Memory that does not break the cached prefix: the block in the instructions is rendered only
when the prefix changes anyway, and later changes travel in the tail as deltas.

A memory write used to re-render the memory block, which sits in the system part near the top
of the payload, so the next request could reuse only the bytes before it (a few percent). Now
each target keeps a `MemoryBaseline`: the block as it was last rendered into the prefix and the
entries it shows. Until the next *fold* (the first compile, an overflow that changes the
history, a new window, an explicit `refresh_memory()`, a block over its byte cap), the prefix
keeps the baseline block byte for byte, and the tail carries `<memory_changes>`: every entry
whose rendering differs from the baseline's (new or changed, with its current value) and every
baseline key no longer in memory (deleted or expired), marked removed. Baseline plus changes is
always the current memory, so the model sees the current value of every key.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from contextchef._limits import byte_size
from contextchef.memory.block import render_entry
from contextchef.memory.entry import MemoryArtifacts
from contextchef.placement.xml import escape_xml
from contextchef.prompts import MEMORY_CHANGES_HEADER, MEMORY_IMPORTANCE_NOTE

__all__ = ["MemoryBaseline", "MemoryView", "memory_view", "render_memory_changes"]


@dataclass(frozen=True, slots=True)
class MemoryBaseline:
    """The memory block as last rendered into a target's prefix, the `<entry>` rendering of
    each key it shows, and the refresh generation it was rendered in."""

    block: str
    entries: Mapping[str, str]
    generation: int = 0

    @classmethod
    def of(cls, artifacts: MemoryArtifacts, generation: int) -> MemoryBaseline:
        entries = {entry.key: render_entry(entry) for entry in artifacts.entries}
        return cls(artifacts.block, entries, generation)


@dataclass(frozen=True, slots=True)
class MemoryView:
    """What one compile shows of memory: `block` in the prefix, `changes` in the tail (`""`
    when none), and the `baseline` a compile that lands with it leaves behind."""

    block: str
    changes: str
    baseline: MemoryBaseline
    folded: bool


def render_memory_changes(changed: list[str], removed: list[str], *, rated: bool = False) -> str:
    """The `<memory_changes>` block: the changed entries as rendered, then the removed keys;
    with `rated`, the line on what `<importance>` means (the prefix block does not say it)."""
    if not changed and not removed:
        return ""
    lines = [*changed, *(f'<entry key="{escape_xml(key)}" removed="true"/>' for key in removed)]
    body = "\n".join(lines)
    note = f"\n{MEMORY_IMPORTANCE_NOTE}" if rated else ""
    return f"{MEMORY_CHANGES_HEADER}\n<memory_changes>\n{body}\n</memory_changes>{note}"


def memory_view(
    artifacts: MemoryArtifacts,
    baseline: MemoryBaseline | None,
    *,
    generation: int,
    fold: bool,
    max_bytes: int | None,
) -> MemoryView:
    """The view of `artifacts` against `baseline`: folded into a new baseline when `fold`, when
    there is no baseline yet or one from an older refresh `generation`, when the block left
    entries out for its byte cap (a left-out entry could not be told apart from a removed one),
    or when the changes would pass `max_bytes`; else the baseline block and the changes."""
    if fold or baseline is None or baseline.generation != generation or artifacts.omitted:
        fresh = MemoryBaseline.of(artifacts, generation)
        return MemoryView(artifacts.block, "", fresh, True)
    current = {entry.key: render_entry(entry) for entry in artifacts.entries}
    old = baseline.entries
    changed = [text for key, text in current.items() if old.get(key) != text]
    removed = sorted(key for key in old if key not in current)
    rated = MEMORY_IMPORTANCE_NOTE not in baseline.block and any(
        entry.importance is not None and old.get(entry.key) != current[entry.key]
        for entry in artifacts.entries
    )
    changes = render_memory_changes(changed, removed, rated=rated)
    if max_bytes is not None and byte_size(changes) > max_bytes:
        fresh = MemoryBaseline.of(artifacts, generation)
        return MemoryView(artifacts.block, "", fresh, True)
    return MemoryView(baseline.block, changes, baseline, False)
