"""Snapshots of a chef: taking one, restoring one, and the pruner's section of it.

A mixin of `_ChefBase`. `restore` checks everything before it changes anything: a snapshot whose
memory or pruner section this chef cannot hold raises `SnapshotError`, and the chef stays as it
was. The pruner keeps its state in `pruner` (JSON data) through the three `_pruner_*` hooks.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from contextchef._chef_parts import Compaction
from contextchef._effects import Flow
from contextchef._memo import MessageIntake
from contextchef._repair import waiting_placeholders
from contextchef.compiler._cache_snapshot import (
    cache_section,
    read_cache_section,
    restore_cache_section,
)
from contextchef.compiler.pipeline import CompileRuntime, CompileState
from contextchef.errors import ConfigError, SnapshotError
from contextchef.memory.core import MemoryCore
from contextchef.messages import validate_history
from contextchef.snapshot import Snapshot, copy_state

__all__ = ["SnapshotsMixin"]


class SnapshotsMixin:
    """`snapshot()` and `restore()` flows, driven by each chef."""

    _state: CompileState
    _runtime: CompileRuntime
    _memory: MemoryCore | None
    _compactions: list[Compaction]
    _history_intake: MessageIntake
    _force_next: bool
    _forget_compactions: Callable[[], None]

    def _snapshot_flow(self, label: str | None) -> Flow[Snapshot]:
        runner = self._runtime.janitor.snapshot() if self._runtime.janitor else None
        memory = (yield from self._memory.snapshot()) if self._memory is not None else None
        return Snapshot(
            copy_state(self._state),
            label,
            runner,
            memory,
            compactions=tuple(self._compactions),
            pruner=self._pruner_state(),
            prompt_cache=cache_section(self._runtime),
            pending_new_context=self._force_next,
        )

    def _restore_flow(self, snapshot: Snapshot) -> Flow[None]:
        if not isinstance(snapshot, Snapshot):
            raise ConfigError(
                "restore() takes a Snapshot returned by snapshot() (or Snapshot.from_dict(data))"
            )
        snapshot = snapshot.copy()
        state = snapshot.state
        validate_history(state.system_prompt + state.history)
        if snapshot.memory is not None and self._memory is None:
            raise SnapshotError(
                "the snapshot holds memory but this chef has none: build it with memory={...}",
                field="memory",
            )
        self._check_pruner_state(snapshot.pruner)
        generation, remembered = read_cache_section(snapshot.prompt_cache)
        if self._memory is not None and snapshot.memory is not None:
            yield from self._memory.restore(snapshot.memory)
        self._state = state
        invented = waiting_placeholders(state.history, state.repairs)  # results still to come
        self._history_intake.rebase([m for i, m in enumerate(state.history) if i not in invented])
        self._forget_compactions()
        self._compactions = list(snapshot.compactions)
        self._force_next = snapshot.pending_new_context and self._runtime.janitor is not None
        self._restore_pruner_state(snapshot.pruner)
        restore_cache_section(self._runtime, generation, remembered)
        if self._runtime.janitor is not None:
            self._runtime.janitor.restore(snapshot.runner)

    def _pruner_state(self) -> dict[str, Any]:
        """The pruner's section of a snapshot (JSON data); empty until a pruner keeps state."""
        return {}

    def _check_pruner_state(self, data: Mapping[str, Any]) -> None:
        """Refuse a pruner section this chef cannot restore (before anything changes)."""
        if data:
            raise SnapshotError(
                "this chef keeps no pruner state; the snapshot holds some", field="pruner"
            )

    def _restore_pruner_state(self, data: Mapping[str, Any]) -> None:
        """Restore the pruner's section (checked by `_check_pruner_state`)."""
