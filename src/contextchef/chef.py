"""`ContextChef` and `AsyncContextChef`: one chef, two drivers.

Both share their state, setters, options and every flow (see `_chef_base` and `pipeline`); this
module adds what differs — the lock, and `drive_sync` or `drive_async` for each flow: compile,
tool calls, snapshots. The async chef's store and memory are `AsyncStore` and `AsyncMemory`.

Concurrency: `compile()` calls on one instance are serialised — a second caller waits for the
first to finish (a lock per chef; a compile started from inside an event handler of the same
chef runs at once instead of deadlocking). For parallel agents, use one chef per agent.
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
from collections.abc import Mapping, Sequence
from contextlib import AbstractAsyncContextManager, AbstractContextManager
from typing import Any, Self

from contextchef._chef_base import _ChefBase
from contextchef._effects import drive_async, drive_sync
from contextchef.compiler.pipeline import Payload, Signal
from contextchef.memory.memory import AsyncMemory, Memory
from contextchef.skills.model import Skill
from contextchef.snapshot import Snapshot
from contextchef.store.aio import AsyncStore
from contextchef.store.store import Store

__all__ = ["AsyncContextChef", "ContextChef", "Snapshot"]

_inside_compile: contextvars.ContextVar[frozenset[int]] = contextvars.ContextVar(
    "contextchef_inside_compile", default=frozenset()
)


class ContextChef(_ChefBase):
    """Compiles the agent's state into a provider payload (synchronous API).

    Every option is described in `__init__` (see `help(ContextChef.__init__)`).
    """

    _lock: AbstractContextManager[Any]

    def _make_lock(self) -> AbstractContextManager[Any]:
        return threading.RLock()

    def get_store(self) -> Store:
        """The one store behind memory/, notes/, vfs/ and archive/ (see `store=`)."""
        if self._store is None:
            self._store = Store.over(self._core)
        return self._store

    _store_type = Store
    _store: Store | None

    def get_memory(self) -> Memory:
        """The chef's memory (`memory=` in the configuration)."""
        return Memory.over(self._require_memory())

    def next_turn(self) -> int:
        """Count one host turn for memory's turn-based TTLs and return the new count.

        With `memory={"turns": "explicit"}` this is the only thing that advances turns; with the
        default `"user_messages"` a compile over a new user message already counts one, so call
        it only for turns that have none. The count is written to the store.
        """
        return drive_sync(self._next_turn_flow())

    def handle_tool(self, name: str, arguments: str | Mapping[str, Any] | None = None) -> str:
        """Run a call of an owned tool and return its result text for the model.

        Model mistakes come back as `Error: …` text; only a name the chef does not own raises
        `UnknownToolError` (a routing bug in the host's loop).
        """
        return drive_sync(self._tool_flow(name, arguments))

    def activate_skill(
        self,
        skill: str | Skill | None,
        *,
        args: str | Sequence[str] | None = None,
        vars: Mapping[str, str] | None = None,
    ) -> Self:
        """Switch a skill on for every compile from now on; None switches it off.

        `skill` is a `Skill`, or a name: a registered skill (`skills=`, `register_skills`),
        else one stored at `context://skills/<name>/SKILL.md`; an unknown name raises
        `UnknownSkillError`. Its instructions are rendered once, now, with `args` and `vars`
        (see `render_skill`), and placed by `skill_placement`. A skill with `allowed_tools`
        keeps only those of your tools (and any tool a call in the window still refers to).
        """
        drive_sync(self._activate_skill_flow(skill, args, vars))
        return self

    def snapshot(self, label: str | None = None) -> Snapshot:
        """A deep copy of everything that decides the next compile (memory included); mutating
        anything afterwards never reaches it. `snapshot.to_json()` carries it to another
        process, where `restore(Snapshot.from_json(text))` continues byte for byte."""
        return drive_sync(self._snapshot_flow(label))

    def restore(self, snapshot: Snapshot) -> Self:
        """Return to a snapshot (which stays reusable: it is copied, not adopted)."""
        drive_sync(self._restore_flow(snapshot))
        return self

    def compile(self, *, target: str | None = None, signal: Signal | None = None) -> Payload:
        """Compile for `target` (default: `default_target`, else "openai")."""
        with self._lock:
            started, flow = self._flow(target, signal)
            return self._land(started, drive_sync(flow))


class AsyncContextChef(_ChefBase):
    """The same chef for async code: `await compile(...)`, `await handle_tool(...)`.

    An async-native backend is awaited with no thread hop (a synchronous one runs in a worker
    thread), and event handlers, slot handlers, summarizers and memory hooks may be coroutine
    functions. Every option is described in `__init__`.
    """

    _asynchronous = True
    _lock: AbstractAsyncContextManager[Any]

    def _make_lock(self) -> AbstractAsyncContextManager[Any]:
        return asyncio.Lock()

    def get_store(self) -> AsyncStore:
        """The one store behind memory/, notes/, vfs/ and archive/, with an async API."""
        if self._store is None:
            self._store = AsyncStore.over(self._core)
        return self._store

    _store_type = AsyncStore
    _store: AsyncStore | None

    def get_memory(self) -> AsyncMemory:
        """The chef's memory, with an async API (`memory=` in the configuration)."""
        return AsyncMemory.over(self._require_memory())

    async def next_turn(self) -> int:
        """See `ContextChef.next_turn`; the store write is awaited."""
        return await drive_async(self._next_turn_flow())

    async def handle_tool(self, name: str, arguments: str | Mapping[str, Any] | None = None) -> str:
        """See `ContextChef.handle_tool`; store work and hooks are awaited."""
        return await drive_async(self._tool_flow(name, arguments))

    async def activate_skill(
        self,
        skill: str | Skill | None,
        *,
        args: str | Sequence[str] | None = None,
        vars: Mapping[str, str] | None = None,
    ) -> Self:
        """See `ContextChef.activate_skill`; a stored skill is read with an await."""
        await drive_async(self._activate_skill_flow(skill, args, vars))
        return self

    async def snapshot(self, label: str | None = None) -> Snapshot:
        """See `ContextChef.snapshot`; the memory read is awaited."""
        return await drive_async(self._snapshot_flow(label))

    async def restore(self, snapshot: Snapshot) -> Self:
        """See `ContextChef.restore`; the memory write is awaited."""
        await drive_async(self._restore_flow(snapshot))
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
