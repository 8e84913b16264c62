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

A drop-in for the SDK's `SQLiteSession(session_id, db_path, session_settings=...)`: pass the
database file as a `pathlib.Path` (`ContextChefSession(session_id, Path("agents.db"))`).
`session_settings` is normalised as the SDK does (None gives `SessionSettings()`, a dict
`SessionSettings(**d)`, an unknown key is a `TypeError`). `close()` (idempotent; also through
`with` and `async with`) closes the store the session opened itself (from a path, `"sqlite"`,
`"memory"` or a DSN) and leaves a store or backend it was given to its owner; any later use
raises `ClosedError` (a `RuntimeError`, as `SQLiteSession` raises), naming the class.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
import os
from types import TracebackType
from typing import Any, Self

from contextchef._jsonload import loads
from contextchef.chef import AsyncContextChef, ContextChef
from contextchef.chef.options import open_store
from contextchef.errors import ClosedError, EntryNotFoundError, MissingDependencyError
from contextchef.integrations._items_window import Window
from contextchef.integrations._keys import encode_segment
from contextchef.retrieval.definitions import get_context_tool_definition
from contextchef.store.aio import AsyncNamespaceView, AsyncStore
from contextchef.store.backend import AsyncStorageBackend, StorageBackend, StoredEntry
from contextchef.store.store import StoreBase, core_of

try:
    from agents import FunctionTool
    from agents.memory import SessionSettings
    from agents.memory.session_settings import coerce_session_settings, resolve_session_limit
    from agents.tool_context import ToolContext
except ImportError as exc:  # pragma: no cover - exercised by simulating the missing extra
    raise MissingDependencyError(exc.name or "openai-agents", "openai-agents") from exc

__all__ = ["ContextChefSession", "context_tool"]

logger = logging.getLogger("contextchef.integrations.openai_agents")

_WIDTH = 12
"""Digits of an entry's sequence number (zero-padded, so names sort in order and the last
entries by name are the most recent: `get_items(limit=n)` is one "last n" read of the store,
whose cost does not grow with the session)."""


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
        store: a backend, a `Store`/`AsyncStore`, a `pathlib.Path` (a SQLite database file, as
            `SQLiteSession`'s `db_path`), `"sqlite"` (the machine's database, the default),
            `"memory"` or a `postgresql://` DSN. With `chef=` and no store, the chef's store.
        chef: compact what `get_items` returns through this chef's overflow (optional).
        namespace: the store namespace holding the sessions.
        session_settings: the SDK's `SessionSettings` or a dict of its fields (`limit` for
            `get_items`); None gives `SessionSettings()`. An unknown key is a `TypeError`.
    """

    session_settings: SessionSettings

    def __init__(
        self,
        session_id: str,
        store: StoreBase[Any]
        | StorageBackend
        | AsyncStorageBackend
        | os.PathLike[str]
        | str
        | None = None,
        *,
        chef: ContextChef | AsyncContextChef | None = None,
        namespace: str = "sessions",
        session_settings: SessionSettings | dict[str, Any] | None = None,
    ) -> None:
        self.session_settings = (
            SessionSettings()
            if session_settings is None
            else coerce_session_settings(session_settings)
        )
        if store is None:
            store = chef.store if chef is not None else "sqlite"
        self.session_id = session_id
        self.chef = chef
        self._closed = False
        self._closing: asyncio.Future[Any] | None = None
        self._owned: object = None
        if isinstance(store, os.PathLike):
            from contextchef.store.backends.sqlite import SQLiteBackend

            core = core_of(SQLiteBackend(store))
        else:
            core = open_store(store, asynchronous=True)
        if isinstance(store, (str, os.PathLike)):
            self._owned = core.backend
        self._view: AsyncNamespaceView = AsyncStore.over(core).namespace(namespace)
        self._prefix = encode_segment(session_id, what="session id") + "/"
        self._window = Window(chef) if chef is not None else None

    # -- lifecycle --------------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise ClosedError(f"{type(self).__name__} is closed")

    def close(self) -> None:
        """Close the session (idempotent): the store it opened itself is closed, a store or
        backend it was given is left open. Any later use raises `ClosedError`. In async code
        with an async backend the session opened (a DSN), prefer `await session.aclose()`."""
        if self._closed:
            return
        self._closed = True
        owned, self._owned = self._owned, None
        if owned is None:
            return
        result = owned.close() if hasattr(owned, "close") else None
        if inspect.isawaitable(result):
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:
                asyncio.run(_awaited(result))
            else:
                self._closing = loop.create_task(_awaited(result))

    async def aclose(self) -> None:
        """`close()` for async code: an async backend the session opened is awaited closed."""
        if not self._closed:
            owned = self._owned
            self._owned = None
            self.close()
            result = owned.close() if owned is not None and hasattr(owned, "close") else None
            if inspect.isawaitable(result):
                await result
        if self._closing is not None:
            closing, self._closing = self._closing, None
            await closing

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()

    # -- items ------------------------------------------------------------------------------

    def _path(self, sequence: int) -> str:
        return f"{self._prefix}{sequence:0{_WIDTH}d}"

    async def _paths(self) -> list[str]:
        return [entry.path for entry in await self._view.list(self._prefix)]

    async def _last_entry(self) -> tuple[str, StoredEntry] | None:
        """The session's last entry (one "last N" read of the store), or None when empty."""
        found = await self._view.last(1, self._prefix)
        return next(iter(found.items())) if found else None

    async def get_items(self, limit: int | None = None) -> list[Any]:
        """The most recent `limit` items (all with None) in chronological order; 0 gives none
        and a negative limit all, as the SDK's `SQLiteSession` does. With a chef, the window
        it compiles from them."""
        self._check_open()
        wanted = resolve_session_limit(limit, self.session_settings)
        if wanted == 0:
            return []
        items: list[Any] = []
        if wanted is None or wanted < 0:
            for path, entry in (await self._view.entries(self._prefix)).items():
                items.extend(_decode(path, entry) or [])
        else:
            # Every entry holds at least one item, so the last `wanted` entries hold the last
            # `wanted` items: one read. Damaged or emptied entries hold none; then read further
            # back, twice as far each time (as `SQLiteSession` does for corrupt rows).
            window = wanted
            while True:
                found = await self._view.last(window, self._prefix)
                items = [i for p, e in found.items() for i in _decode(p, e) or []]
                if len(items) >= wanted or len(found) < window:
                    break
                window *= 2
            items = items[-wanted:]
        if self._window is not None and items:
            return await self._window.apply(items)
        return items

    async def add_items(self, items: list[Any]) -> None:
        """Append `items` as one entry (atomically: never interleaved with another call's)."""
        self._check_open()
        if not items:
            return
        _check(items)
        content = json.dumps(list(items), ensure_ascii=False, separators=(",", ":"))
        # The number after the store's last entry, created if absent: of racing writers one
        # gets it and the others read the end again. (Never the number after the last one this
        # object saw: another object's pops and clears leave gaps below the end.)
        while True:
            last = await self._last_entry()
            sequence = _sequence(last[0]) + 1 if last is not None else 1
            if await self._view.create(self._path(sequence), content):
                return

    async def pop_item(self) -> Any | None:
        """Remove and return the most recent item, or None when the session is empty."""
        self._check_open()
        while True:
            last = await self._last_entry()
            if last is None:
                return None
            path, entry = last
            items = _decode(path, entry)
            if items is None:
                await self._view.delete(path)
                continue
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
        self._check_open()
        for path in await self._paths():
            await self._view.delete(path)


def _sequence(path: str) -> int:
    return int(path.rsplit("/", 1)[1])


def _decode(path: str, entry: StoredEntry) -> list[Any] | None:
    """An entry's items, or None (with a warning) when it is not a JSON list: a damaged entry,
    skipped by `get_items` and dropped by `pop_item`, as `SQLiteSession` does a corrupt row."""
    try:
        items = loads(entry.content)
    except ValueError:
        items = None
    if not isinstance(items, list):
        logger.warning("session entry %s is not a JSON list of items; it is skipped", path)
        return None
    return items


async def _awaited(result: Any) -> None:
    await result


def _dropping_last(popped: list[Any]) -> Any:
    """The change `pop_item` applies to an entry: its last item goes to `popped`."""

    def drop_last(entry: StoredEntry) -> tuple[str, dict[str, Any]]:
        try:
            current = json.loads(entry.content)
        except ValueError:
            current = None
        if not isinstance(current, list) or len(current) <= 1:
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
