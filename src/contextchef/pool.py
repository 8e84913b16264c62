"""Many conversations in one process: one chef per session key, the least recently used evicted.

    store = SQLiteBackend("agents.db")
    pool = ChefPool(lambda key: ContextChef(store=store, memory={}), max_size=256)
    chef = pool.get(request.session_id)      # the same chef for the same conversation

A chef holds per-conversation state in memory (the last compile's caches, the overflow window,
the record of compactions it applies to a growing history); everything durable — memory,
notes, offloaded tool outputs, archived spans — is in the store. So a pool keeps memory bounded
by evicting whole chefs, and an evicted conversation comes back through the factory with its
store intact (its next compile re-runs what only the old chef remembered, such as overflow on a
long history). Every chef of a pool must share one store: the pool checks it.

Keys are normalised: None and "" are `DEFAULT_KEY`, other strings are NFC-normalised and
stripped, integers and UUIDs become their text; anything else is a `ConfigError`.
`ChefPool` is thread-safe and `AsyncChefPool` task-safe: concurrent `get`s of one new key build
one chef.
"""

from __future__ import annotations

import asyncio
import inspect
import threading
import unicodedata
import uuid
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import Any, Final, Generic, TypeVar

from contextchef.chef import AsyncContextChef, ContextChef
from contextchef.errors import ConfigError

__all__ = ["DEFAULT_KEY", "AsyncChefPool", "ChefPool", "session_key"]

DEFAULT_KEY: Final = "default"
"""The key of a conversation given no key (None or "")."""

C = TypeVar("C", ContextChef, AsyncContextChef)


def session_key(key: object) -> str:
    """The normalised form of a session key (see the module docstring)."""
    if key is None:
        return DEFAULT_KEY
    if isinstance(key, bool) or not isinstance(key, str | int | uuid.UUID):
        raise ConfigError(
            f"a session key must be a string, an integer or a UUID, got {type(key).__name__}"
        )
    text = unicodedata.normalize("NFC", str(key)).strip()
    return text or DEFAULT_KEY


def _max_size(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(f"max_size must be a positive integer, got {value!r}")
    return value


class _Entries(Generic[C]):
    """The pool's bookkeeping, without locks: chefs by key in recency order, one store."""

    def __init__(self, max_size: int, on_evict: Callable[[str, C], object] | None) -> None:
        if on_evict is not None and not callable(on_evict):
            raise ConfigError("on_evict must be callable(key, chef)")
        self.max_size = _max_size(max_size)
        self.on_evict: Callable[[str, C], object] | None = on_evict
        self.chefs: OrderedDict[str, C] = OrderedDict()
        self.backend: object | None = None

    def hit(self, key: str) -> C | None:
        chef = self.chefs.get(key)
        if chef is not None:
            self.chefs.move_to_end(key)
        return chef

    def add(self, key: str, chef: object, kind: type[C]) -> list[tuple[str, C]]:
        """Adopt a new chef; the chefs evicted to make room for it, oldest first."""
        if not isinstance(chef, kind):
            raise ConfigError(f"the pool's factory must return a {kind.__name__}, got {chef!r}")
        backend = chef.store.backend
        if self.backend is None:
            self.backend = backend
        elif backend is not self.backend:
            raise ConfigError(
                "every chef of a pool must share one store: pass the same store (or backend) "
                "to each chef the factory builds"
            )
        self.chefs[key] = chef
        evicted = []
        while len(self.chefs) > self.max_size:
            evicted.append(self.chefs.popitem(last=False))
        return evicted


class ChefPool:
    """One `ContextChef` per session key, at most `max_size` of them (thread-safe).

    Args:
        factory: `factory(key) -> ContextChef` builds the chef of a new (or evicted) session;
            every chef it builds must use the same store.
        max_size: how many chefs the pool keeps; the least recently used goes first.
        on_evict: `on_evict(key, chef)`, called after a chef left the pool (to snapshot it,
            say); its errors propagate to the `get` that caused the eviction.
    """

    def __init__(
        self,
        factory: Callable[[str], ContextChef],
        *,
        max_size: int = 256,
        on_evict: Callable[[str, ContextChef], object] | None = None,
    ) -> None:
        if not callable(factory):
            raise ConfigError("factory must be callable(key) -> ContextChef")
        self._factory = factory
        self._entries: _Entries[ContextChef] = _Entries(max_size, on_evict)
        self._lock = threading.Lock()

    @property
    def max_size(self) -> int:
        return self._entries.max_size

    def get(self, key: object = None) -> ContextChef:
        """The chef of session `key`, built by the factory if the pool has none."""
        name = session_key(key)
        with self._lock:
            chef = self._entries.hit(name)
            if chef is not None:
                return chef
            chef = self._factory(name)
            evicted = self._entries.add(name, chef, ContextChef)
        for item in evicted:
            if self._entries.on_evict is not None:
                self._entries.on_evict(*item)
        return chef

    def evict(self, key: object = None) -> bool:
        """Drop the chef of `key` (its store entries stay); whether there was one."""
        with self._lock:
            chef = self._entries.chefs.pop(session_key(key), None)
        if chef is not None and self._entries.on_evict is not None:
            self._entries.on_evict(session_key(key), chef)
        return chef is not None

    def keys(self) -> list[str]:
        """The session keys held, least recently used first."""
        with self._lock:
            return list(self._entries.chefs)

    def __contains__(self, key: object) -> bool:
        return session_key(key) in self._entries.chefs

    def __len__(self) -> int:
        return len(self._entries.chefs)


class AsyncChefPool:
    """`ChefPool` for `AsyncContextChef`s (task-safe): `await pool.get(key)`.

    The factory may be a plain function or a coroutine function; so may `on_evict`.
    """

    def __init__(
        self,
        factory: Callable[[str], AsyncContextChef | Awaitable[AsyncContextChef]],
        *,
        max_size: int = 256,
        on_evict: Callable[[str, AsyncContextChef], object] | None = None,
    ) -> None:
        if not callable(factory):
            raise ConfigError("factory must be callable(key) -> AsyncContextChef")
        self._factory = factory
        self._entries: _Entries[AsyncContextChef] = _Entries(max_size, on_evict)
        self._lock = asyncio.Lock()

    @property
    def max_size(self) -> int:
        return self._entries.max_size

    async def get(self, key: object = None) -> AsyncContextChef:
        """The chef of session `key`, built by the factory if the pool has none."""
        name = session_key(key)
        async with self._lock:
            chef = self._entries.hit(name)
            if chef is not None:
                return chef
            built: Any = self._factory(name)
            if inspect.isawaitable(built):
                built = await built
            evicted = self._entries.add(name, built, AsyncContextChef)
        for item in evicted:
            await self._evicted(*item)
        return built  # type: ignore[no-any-return]

    async def _evicted(self, key: str, chef: AsyncContextChef) -> None:
        if self._entries.on_evict is not None:
            outcome = self._entries.on_evict(key, chef)
            if inspect.isawaitable(outcome):
                await outcome

    async def evict(self, key: object = None) -> bool:
        """Drop the chef of `key` (its store entries stay); whether there was one."""
        name = session_key(key)
        async with self._lock:
            chef = self._entries.chefs.pop(name, None)
        if chef is not None:
            await self._evicted(name, chef)
        return chef is not None

    def keys(self) -> list[str]:
        """The session keys held, least recently used first."""
        return list(self._entries.chefs)

    def __contains__(self, key: object) -> bool:
        return session_key(key) in self._entries.chefs

    def __len__(self) -> int:
        return len(self._entries.chefs)
