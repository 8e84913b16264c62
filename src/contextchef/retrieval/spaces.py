"""Where the `context` tool's commands land: a store namespace, or the Memory module.

The tool's commands are written once, against `Space`; each namespace keeps its own module's
semantics behind it. `StoreSpace` goes straight to the store's flows (notes/, vfs/, archive/ and
any other namespace). `MemorySpace` goes through Memory's flows, so `allowed_keys`, the host's
veto, TTLs, change events and update counts apply exactly as through the Python API. Every
operation is a flow of effects (see `contextchef._effects`), driven sync or async by the caller.
Both raise `ToolInputError` with the model-facing text for anything the model can correct.

Writes are atomic where the backend allows (see `StoreCore.create` and `contextchef.store.edits`):
`create` is create-if-absent, `edit` applies the model's edit to the current text inside one
backend transaction (concurrent edits queue; none is refused for contention), `rename` moves
the entry in one transaction, so an edit landing meanwhile is never lost. On a backend without
`transact`, an edit that keeps losing compare-and-swap races raises `StoreConflictError`, which
the tool reports to the model.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple, Protocol

from contextchef import prompts
from contextchef._effects import Flow
from contextchef.errors import (
    EntryExistsError,
    EntryNotFoundError,
    MemoryKeyNotAllowedError,
    MemoryVetoedError,
)
from contextchef.memory.core import MemoryCore
from contextchef.memory.entry import MEMORY_NAMESPACE, UNSET
from contextchef.retrieval.arguments import Address, ToolInputError
from contextchef.store.backend import StoredEntry
from contextchef.store.core import StoreCore
from contextchef.store.indexing import hybrid_hits
from contextchef.store.paths import format_uri
from contextchef.store.search import scan

__all__ = ["Found", "Hit", "MemorySpace", "Space", "StoreSpace"]


class Found(NamedTuple):
    """An entry's text and its description (None when it has none)."""

    text: str
    description: str | None


class Hit(NamedTuple):
    """A search result: the entry's path, a one-line snippet, and whether only its meaning
    matched (a semantic index found it; its text does not hold the query)."""

    path: str
    snippet: str
    by_meaning: bool = False


class Space(Protocol):
    """The operations the `context` tool needs from one namespace."""

    def read(self, address: Address) -> Flow[Found | None]: ...

    def listing(self, prefix: str) -> Flow[list[tuple[str, str | None]]]: ...

    def create(self, address: Address, text: str, description: str | None) -> Flow[None]: ...

    def edit(
        self, address: Address, change: Callable[[str], str], description: str | None
    ) -> Flow[None]: ...

    def delete(self, address: Address) -> Flow[None]: ...

    def rename(self, address: Address, new: Address) -> Flow[None]: ...

    def search(self, prefix: str, query: str, limit: int | None) -> Flow[list[Hit]]:
        """The best `limit` hits (all with None), best first."""
        ...


def _description(meta: Any) -> str | None:
    value = meta.get("description")
    return value if isinstance(value, str) and value else None


def _not_found(address: Address) -> ToolInputError:
    return ToolInputError(prompts.nothing_stored(address.uri, address.parent))


def _kept_meta(entry: StoredEntry, description: str | None) -> dict[str, Any]:
    """An edited entry's meta: the old one with a new `updated_at` (filled in by the store)."""
    meta = {key: value for key, value in entry.meta.items() if key != "updated_at"}
    if description is not None:
        meta["description"] = description
    return meta


def _hits(found: Sequence[Any]) -> list[Hit]:
    return [
        Hit(
            hit.path,
            " ".join((hit.snippet or "").split()),
            getattr(hit, "matched", ()) == ("semantic",),
        )
        for hit in found
    ]


class StoreSpace:
    """A namespace served straight from the store."""

    def __init__(self, store: StoreCore, ns: str) -> None:
        self.store = store
        self.ns = ns

    def read(self, address: Address) -> Flow[Found | None]:
        entry = yield from self.store.get(self.ns, address.path)
        return None if entry is None else Found(entry.content, _description(entry.meta))

    def listing(self, prefix: str) -> Flow[list[tuple[str, str | None]]]:
        listed = yield from self.store.list(self.ns, prefix)
        return [(item.path, _description(item.meta)) for item in listed]

    def create(self, address: Address, text: str, description: str | None) -> Flow[None]:
        meta = None if description is None else {"description": description}
        if not (yield from self.store.create(self.ns, address.path, text, meta)):
            raise ToolInputError(prompts.entry_exists(address.uri))

    def edit(
        self, address: Address, change: Callable[[str], str], description: str | None
    ) -> Flow[None]:
        def apply(entry: StoredEntry) -> tuple[str, dict[str, Any]]:
            return change(entry.content), _kept_meta(entry, description)

        if (yield from self.store.update(self.ns, address.path, apply)) is None:
            raise _not_found(address)

    def delete(self, address: Address) -> Flow[None]:
        if not (yield from self.store.delete(self.ns, address.path)):
            raise _not_found(address)

    def rename(self, address: Address, new: Address) -> Flow[None]:
        def moved(entry: StoredEntry) -> tuple[str, dict[str, Any]]:
            return entry.content, _kept_meta(entry, None)

        outcome = yield from self.store.rename(self.ns, address.path, new.path, moved)
        if outcome is None:
            raise _not_found(address)
        if not outcome:
            raise ToolInputError(prompts.entry_exists(new.uri))

    def search(self, prefix: str, query: str, limit: int | None) -> Flow[list[Hit]]:
        if self.store.supports("search", self.ns):
            return _hits((yield from self.store.search(self.ns, query, prefix, limit)))
        found = yield from self.store.entries(self.ns, prefix)
        return _hits(scan(found.items(), query, limit))


def _memory_refusals(address: Address, flow: Flow[Any]) -> Flow[Any]:
    """Run `flow`, turning Memory's typed refusals into the texts the model reads."""
    try:
        return (yield from flow)
    except MemoryKeyNotAllowedError as exc:
        allowed = [format_uri(MEMORY_NAMESPACE, key) for key in exc.allowed]
        uri = format_uri(MEMORY_NAMESPACE, exc.key)
        raise ToolInputError(prompts.memory_key_not_allowed(uri, allowed)) from None
    except MemoryVetoedError as exc:
        raise ToolInputError(prompts.write_vetoed(format_uri(MEMORY_NAMESPACE, exc.key))) from None
    except EntryExistsError as exc:
        raise ToolInputError(
            prompts.entry_exists(format_uri(MEMORY_NAMESPACE, exc.path or ""))
        ) from None
    except EntryNotFoundError:
        raise _not_found(address) from None


class MemorySpace:
    """`memory/`, through the Memory module's model path."""

    def __init__(self, memory: MemoryCore) -> None:
        self.memory = memory

    def read(self, address: Address) -> Flow[Found | None]:
        entry = yield from self.memory.get(address.path)
        return None if entry is None else Found(entry.value, entry.description)

    def listing(self, prefix: str) -> Flow[list[tuple[str, str | None]]]:
        entries = yield from self.memory.entries()
        return [(entry.key, entry.description) for entry in entries if entry.key.startswith(prefix)]

    def create(self, address: Address, text: str, description: str | None) -> Flow[None]:
        yield from _memory_refusals(address, self.memory.create(address.path, text, description))

    def edit(
        self, address: Address, change: Callable[[str], str], description: str | None
    ) -> Flow[None]:
        kept = UNSET if description is None else description
        yield from _memory_refusals(address, self.memory.edit(address.path, change, kept))

    def delete(self, address: Address) -> Flow[None]:
        yield from _memory_refusals(address, self.memory.remove(address.path))

    def rename(self, address: Address, new: Address) -> Flow[None]:
        yield from _memory_refusals(address, self.memory.rename(address.path, new.path))

    def search(self, prefix: str, query: str, limit: int | None) -> Flow[list[Hit]]:
        """The live entries whose value or description holds `query`; where the store's
        semantic index covers memory, fused with those close in meaning (see `indexing`)."""
        entries = yield from self.memory.entries()
        texts = [
            (entry.key, StoredEntry(f"{entry.value}\n{entry.description or ''}"))
            for entry in entries
            if entry.key.startswith(prefix)
        ]
        store = self.memory.store
        if store.index is None or not store.index.covers(MEMORY_NAMESPACE):
            return _hits(scan(texts, query, limit))
        live = {key for key, _ in texts}  # expired entries stay stored until swept
        near = yield from store.search(MEMORY_NAMESPACE, query, prefix, None, "semantic")
        semantic = [hit for hit in near if hit.path in live]
        return _hits(hybrid_hits(scan(texts, query), semantic, limit))
