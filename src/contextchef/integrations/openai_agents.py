"""OpenAI Agents SDK: `ContextChefSession`, a `Session` on any contextchef store, and the
chef's `context` tool as an SDK `FunctionTool`.

    session = ContextChefSession("user-42", store=SQLiteBackend("agents.db"))
    await Runner.run(agent, "Hi", session=session)

Where the items live: namespace `sessions` (by default) of the store, one directory per session
(its id percent-encoded, so any id is a valid path), one entry per `add_items` call holding that
call's items as a JSON list, named by a zero-padded sequence number. An append is one
create-if-absent of the next number — of two writers racing for a number exactly one wins and
the other takes the next — so a call's items are never interleaved with another's, on SQLite
across processes and on PostgreSQL across machines. `pop_item` takes the last item of the last
entry with a compare-and-swap (or deletes an entry whose only item it is). Items are stored as
given, in JSON; an item with neither a `type` nor a `role` is kept and passed through unchanged,
with a warning.

With `chef=`, `get_items` returns the window the chef compiles from the stored items: overflow
(summaries, evictions to `archive/`), offloaded tool outputs, the memory block. The stored items
are never changed; only what the model is given is. Give the agent `context_tool(chef)` so it
can read back what left the window. Requires the `openai-agents` extra.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from contextchef.chef import AsyncContextChef, ContextChef
from contextchef.chef.options import open_store
from contextchef.errors import EntryNotFoundError, MissingDependencyError
from contextchef.integrations._items_window import Window
from contextchef.integrations._keys import encode_segment
from contextchef.retrieval.definitions import get_context_tool_definition
from contextchef.store.aio import AsyncNamespaceView, AsyncStore
from contextchef.store.backend import AsyncStorageBackend, StorageBackend, StoredEntry
from contextchef.store.store import StoreBase

try:
    from agents import FunctionTool
    from agents.memory import SessionSettings
    from agents.memory.session_settings import resolve_session_limit
    from agents.tool_context import ToolContext
except ImportError as exc:  # pragma: no cover - exercised by simulating the missing extra
    raise MissingDependencyError(exc.name or "openai-agents", "openai-agents") from exc

__all__ = ["ContextChefSession", "context_tool"]

logger = logging.getLogger("contextchef.integrations.openai_agents")

_WIDTH = 12
"""Digits of an entry's sequence number (zero-padded, so names sort in order)."""


def _check(items: list[Any]) -> None:
    for item in items:
        if not isinstance(item, dict) or ("type" not in item and "role" not in item):
            logger.warning(
                "an Agents SDK item has neither 'type' nor 'role'; it is stored and passed "
                "through unchanged"
            )


class ContextChefSession:
    """The Agents SDK `Session` protocol over a contextchef store (see the module docstring).

    Args:
        session_id: any string; two sessions with one id on one store share their items.
        store: a backend, a `Store`/`AsyncStore`, `"sqlite"` (the machine's database, the
            default), `"memory"` or a `postgresql://` DSN. With `chef=` and no store, the
            chef's store.
        chef: compact what `get_items` returns through this chef's overflow (optional).
        namespace: the store namespace holding the sessions.
        session_settings: the SDK's `SessionSettings` (`limit` for `get_items`).
    """

    def __init__(
        self,
        session_id: str,
        store: StoreBase[Any] | StorageBackend | AsyncStorageBackend | str | None = None,
        *,
        chef: ContextChef | AsyncContextChef | None = None,
        namespace: str = "sessions",
        session_settings: SessionSettings | None = None,
    ) -> None:
        if store is None:
            store = chef.store if chef is not None else "sqlite"
        self.session_id = session_id
        self.session_settings = session_settings
        self.chef = chef
        core = open_store(store, asynchronous=True)
        self._view: AsyncNamespaceView = AsyncStore.over(core).namespace(namespace)
        self._prefix = encode_segment(session_id, what="session id") + "/"
        self._window = Window(chef) if chef is not None else None

    def _path(self, sequence: int) -> str:
        return f"{self._prefix}{sequence:0{_WIDTH}d}"

    async def _paths(self) -> list[str]:
        return [entry.path for entry in await self._view.list(self._prefix)]

    async def _read(self, path: str) -> list[Any]:
        entry = await self._view.get(path)
        if entry is None:
            return []
        items: list[Any] = json.loads(entry.content)
        return items

    async def get_items(self, limit: int | None = None) -> list[Any]:
        """The most recent `limit` items (all with None) in chronological order; 0 gives none
        and a negative limit all, as the SDK's `SQLiteSession` does. With a chef, the window
        it compiles from them."""
        wanted = resolve_session_limit(limit, self.session_settings)
        if wanted == 0:
            return []
        paths = await self._paths()
        if wanted is None or wanted < 0:
            items = [item for path in paths for item in await self._read(path)]
        else:
            items = []
            for path in reversed(paths):
                items[:0] = await self._read(path)
                if len(items) >= wanted:
                    break
            items = items[-wanted:]
        if self._window is not None and items:
            return await self._window.apply(items)
        return items

    async def add_items(self, items: list[Any]) -> None:
        """Append `items` as one entry (atomically: never interleaved with another call's)."""
        if not items:
            return
        _check(items)
        content = json.dumps(list(items), ensure_ascii=False, separators=(",", ":"))
        paths = await self._paths()
        sequence = int(paths[-1].rsplit("/", 1)[1]) + 1 if paths else 1
        while not await self._view.create(self._path(sequence), content):
            sequence += 1

    async def pop_item(self) -> Any | None:
        """Remove and return the most recent item, or None when the session is empty."""
        while True:
            paths = await self._paths()
            if not paths:
                return None
            path = paths[-1]
            items = await self._read(path)
            if len(items) <= 1:
                if await self._view.delete(path) and items:
                    return items[0]
                continue
            popped: list[Any] = []
            try:
                if await self._view.update(path, _dropping_last(popped)) is not None and popped:
                    return popped[0]
            except EntryNotFoundError:
                continue

    async def clear_session(self) -> None:
        """Delete every item of this session."""
        for path in await self._paths():
            await self._view.delete(path)


def _dropping_last(popped: list[Any]) -> Any:
    """The change `pop_item` applies to an entry: its last item goes to `popped`."""

    def drop_last(entry: StoredEntry) -> tuple[str, dict[str, Any]]:
        current = json.loads(entry.content)
        if len(current) <= 1:
            raise EntryNotFoundError("the entry was emptied meanwhile")
        popped[:] = [current.pop()]
        text = json.dumps(current, ensure_ascii=False, separators=(",", ":"))
        return text, dict(entry.meta)

    return drop_last


def context_tool(chef: ContextChef | AsyncContextChef) -> FunctionTool:
    """The chef's `context` tool for an SDK `Agent(tools=[...])`: the model reads the archive,
    offloaded outputs, notes and memory through it; calls go to `chef.handle_tool`."""
    definition = get_context_tool_definition()
    name = definition["name"]

    async def invoke(_context: ToolContext[Any], arguments: str) -> str:
        if isinstance(chef, AsyncContextChef):
            return await chef.handle_tool(name, arguments)
        return chef.handle_tool(name, arguments)

    return FunctionTool(
        name=name,
        description=definition["description"],
        params_json_schema=dict(definition["parameters"]),
        on_invoke_tool=invoke,
        strict_json_schema=False,
    )
