"""Snapshots of a chef: taking one and restoring one, as flows each chef drives.

`restore` checks everything before it changes anything: a snapshot whose memory or pruner
section this chef cannot hold raises `SnapshotError`, and the chef stays as it was. Old snapshot
dicts still load (`Snapshot.from_dict` reads every earlier layout).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from contextchef._effects import Flow
from contextchef.chef.cell import StateCell
from contextchef.chef.history import History
from contextchef.compiler._cache_snapshot import (
    cache_section,
    read_cache_section,
    restore_cache_section,
)
from contextchef.compiler.pipeline import CompileRuntime
from contextchef.errors import ConfigError, SnapshotError, ToolDefinitionError
from contextchef.memory.core import MemoryCore
from contextchef.messages import validate_history
from contextchef.selection.pruner import PrunerState
from contextchef.snapshot import Snapshot, copy_state

__all__ = ["Snapshots"]


def _pruner_section(data: Mapping[str, Any]) -> PrunerState:
    """The pruner section of a snapshot, loaded; `SnapshotError` when it does not load."""
    try:
        return PrunerState.from_dict(dict(data))
    except (ConfigError, ToolDefinitionError) as exc:
        raise SnapshotError(str(exc), field="pruner") from exc


class Snapshots:
    """The `snapshot()` and `restore()` flows of one chef.

    Args:
        cell: the chef's compile state.
        runtime: the compile memo (the overflow runner's state, the prompt-cache section).
        memory: the chef's memory flows, or None.
        history: the history part (its intake and compaction records).
    """

    def __init__(
        self,
        cell: StateCell,
        runtime: CompileRuntime,
        memory: MemoryCore | None,
        history: History,
    ) -> None:
        self._cell = cell
        self._runtime = runtime
        self._memory = memory
        self._history = history

    def take(self, label: str | None) -> Flow[Snapshot]:
        """A deep copy of everything that decides the next compile (memory read as a flow)."""
        overflow_runner = self._runtime.overflow_runner
        runner = overflow_runner.snapshot() if overflow_runner else None
        memory = (yield from self._memory.snapshot()) if self._memory is not None else None
        state = self._cell.state
        return Snapshot(
            copy_state(state),
            label,
            runner,
            memory,
            compactions=self._history.compactions,
            pruner=state.pruner.to_dict(),
            prompt_cache=cache_section(self._runtime),
            pending_new_context=self._cell.pending_new_context,
        )

    def restore(self, snapshot: Snapshot) -> Flow[None]:
        """Return to `snapshot` (copied, so it stays reusable)."""
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
        pruner = _pruner_section(snapshot.pruner)
        generation, remembered = read_cache_section(snapshot.prompt_cache)
        if self._memory is not None and snapshot.memory is not None:
            yield from self._memory.restore(snapshot.memory)
        overflow_runner = self._runtime.overflow_runner
        self._cell.state = replace(state, pruner=pruner)
        self._history.restore(state.history, state.repairs, snapshot.compactions)
        self._cell.pending_new_context = (
            snapshot.pending_new_context and overflow_runner is not None
        )
        restore_cache_section(self._runtime, generation, remembered)
        if overflow_runner is not None:
            overflow_runner.restore(snapshot.runner)
