"""`ContextChef` and `AsyncContextChef`: one chef, two drivers.

Both share their parts, setters, options and every flow (see `facade` and `pipeline`); this
module adds what differs — the lock, and `drive_sync` or `drive_async` for each flow: compile,
tool calls, snapshots, skill activation. The async chef's store and memory are `AsyncStore` and
`AsyncMemory`.

Concurrency: `compile()` calls on one instance are serialised — a second caller waits for the
first to finish (a lock per chef; a compile started from inside an event handler of the same
chef runs at once instead of deadlocking). For parallel agents, use one chef per agent.
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
from collections.abc import Iterable, Mapping
from contextlib import AbstractAsyncContextManager, AbstractContextManager
from typing import Any, Self

from contextchef._effects import drive_async, drive_sync
from contextchef.chef.cell import StateCell
from contextchef.chef.facade import ChefFacade
from contextchef.chef.skills import AsyncSkills, Skills
from contextchef.compiler.pipeline import Payload, Signal
from contextchef.memory.memory import AsyncMemory, Memory
from contextchef.skills.model import LoadedSkills, Skill
from contextchef.snapshot import Snapshot
from contextchef.store.aio import AsyncStore
from contextchef.store.core import StoreCore
from contextchef.store.store import Store

__all__ = ["AsyncContextChef", "ContextChef", "Snapshot"]

_inside_compile: contextvars.ContextVar[frozenset[int]] = contextvars.ContextVar(
    "contextchef_inside_compile", default=frozenset()
)


class ContextChef(ChefFacade):
    """Compiles the agent's state into a provider payload (synchronous API).

    Every option is described in `__init__` (see `help(ContextChef.__init__)`).
    """

    _lock: AbstractContextManager[Any]
    _skills: Skills
    _store: Store | None

    def _make_lock(self) -> AbstractContextManager[Any]:
        return threading.RLock()

    def _open_parts(
        self,
        cell: StateCell,
        core: StoreCore,
        skills: Iterable[Skill] | LoadedSkills | None,
        placement: str,
        store: object,
    ) -> None:
        self._skills = Skills(cell, core, skills, placement)
        self._store = store if isinstance(store, Store) else None

    @property
    def skills(self) -> Skills:
        """The skills: `register`, `activate`, `active`, `registered` (see `Skills`)."""
        return self._skills

    @property
    def store(self) -> Store:
        """The one store behind memory/, notes/, vfs/ and archive/ (see `store=`)."""
        if self._store is None:
            self._store = Store.over(self._core)
        return self._store

    @property
    def memory(self) -> Memory:
        """The chef's memory (`memory=` in the configuration); `ConfigError` without one.

        With `memory={"turns": "explicit"}`, `memory.advance_turn()` is the only thing that
        counts host turns for the turn-based TTLs; with the default `"user_messages"` a compile
        over a new user message already counts one.
        """
        return Memory.over(self._require_memory())

    def handle_tool(self, name: str, arguments: str | Mapping[str, Any] | None = None) -> str:
        """Run a call of an owned tool and return its result text for the model.

        Model mistakes come back as `Error: …` text; only a name the chef does not own raises
        `UnknownToolError` (a routing bug in the host's loop).
        """
        return drive_sync(self._tool_flow(name, arguments))

    def snapshot(self, label: str | None = None) -> Snapshot:
        """A deep copy of everything that decides the next compile (memory included); mutating
        anything afterwards never reaches it. `snapshot.to_json()` carries it to another
        process, where `restore(Snapshot.from_json(text))` continues byte for byte."""
        return drive_sync(self._snapshots.take(label))

    def restore(self, snapshot: Snapshot) -> Self:
        """Return to a snapshot (which stays reusable: it is copied, not adopted)."""
        drive_sync(self._snapshots.restore(snapshot))
        return self

    def compile(self, *, target: str | None = None, signal: Signal | None = None) -> Payload:
        """Compile for `target` (default: `default_target`, else "openai")."""
        with self._lock:
            started, flow = self._flow(target, signal)
            return self._land(started, drive_sync(flow))


class AsyncContextChef(ChefFacade):
    """The same chef for async code: `await compile(...)`, `await handle_tool(...)`.

    An async-native backend is awaited with no thread hop (a synchronous one runs in a worker
    thread), and event handlers, slot handlers, summarizers and memory hooks may be coroutine
    functions. Every option is described in `__init__`.
    """

    _asynchronous = True
    _lock: AbstractAsyncContextManager[Any]
    _skills: AsyncSkills
    _store: AsyncStore | None

    def _make_lock(self) -> AbstractAsyncContextManager[Any]:
        return asyncio.Lock()

    def _open_parts(
        self,
        cell: StateCell,
        core: StoreCore,
        skills: Iterable[Skill] | LoadedSkills | None,
        placement: str,
        store: object,
    ) -> None:
        self._skills = AsyncSkills(cell, core, skills, placement)
        self._store = store if isinstance(store, AsyncStore) else None

    @property
    def skills(self) -> AsyncSkills:
        """The skills, with `await skills.activate(...)` (see `AsyncSkills`)."""
        return self._skills

    @property
    def store(self) -> AsyncStore:
        """The one store behind memory/, notes/, vfs/ and archive/, with an async API."""
        if self._store is None:
            self._store = AsyncStore.over(self._core)
        return self._store

    @property
    def memory(self) -> AsyncMemory:
        """The chef's memory, with an async API; `ConfigError` without one."""
        return AsyncMemory.over(self._require_memory())

    async def handle_tool(self, name: str, arguments: str | Mapping[str, Any] | None = None) -> str:
        """See `ContextChef.handle_tool`; store work and hooks are awaited."""
        return await drive_async(self._tool_flow(name, arguments))

    async def snapshot(self, label: str | None = None) -> Snapshot:
        """See `ContextChef.snapshot`; the memory read is awaited."""
        return await drive_async(self._snapshots.take(label))

    async def restore(self, snapshot: Snapshot) -> Self:
        """See `ContextChef.restore`; the memory write is awaited."""
        await drive_async(self._snapshots.restore(snapshot))
        return self

    async def compile(self, *, target: str | None = None, signal: Signal | None = None) -> Payload:
        """Compile for `target` (default: `default_target`, else "openai")."""
        inside = _inside_compile.get()
        if id(self) in inside:
            started, flow = self._flow(target, signal)
            return self._land(started, await drive_async(flow))
        async with self._lock:
            token = _inside_compile.set(inside | {id(self)})
            try:
                started, flow = self._flow(target, signal)
                return self._land(started, await drive_async(flow))
            finally:
                _inside_compile.reset(token)
