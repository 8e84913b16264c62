"""Where the `context` tool's commands land: a store namespace, or the Memory module.

The tool's commands are written once, against `Space`; each namespace keeps its own module's
semantics behind it. `StoreSpace` goes straight to a `NamespaceView` (notes/, vfs/, archive/ and
any other namespace). `MemorySpace` goes through `Memory`, so `allowed_keys`, the host's veto,
TTLs, change events and update counts apply exactly as through the Python API. Both raise
`ToolInputError` with the model-facing text for anything the model can correct.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any, NamedTuple, Protocol

from contextchef import prompts
from contextchef.errors import (
    EntryExistsError,
    EntryNotFoundError,
    MemoryKeyNotAllowedError,
    MemoryVetoedError,
)
from contextchef.memory.entry import MEMORY_NAMESPACE, UNSET
from contextchef.memory.memory import Memory
from contextchef.retrieval.arguments import Address, ToolInputError
from contextchef.store.backend import StoredEntry
from contextchef.store.paths import format_uri
from contextchef.store.search import scan
from contextchef.store.store import NamespaceView

__all__ = ["Found", "Hit", "MemorySpace", "Space", "StoreSpace"]


class Found(NamedTuple):
    """An entry's text and its description (None when it has none)."""

    text: str
    description: str | None


class Hit(NamedTuple):
    """A search result: the entry's path and a one-line snippet."""

    path: str
    snippet: str


class Space(Protocol):
    """The operations the `context` tool needs from one namespace."""

    def read(self, address: Address) -> Found | None: ...

    def listing(self, prefix: str) -> list[tuple[str, str | None]]: ...

    def create(self, address: Address, text: str, description: str | None) -> None: ...

    def replace(self, address: Address, text: str, description: str | None) -> None: ...

    def delete(self, address: Address) -> None: ...

    def rename(self, address: Address, new: Address) -> None: ...

    def search(self, prefix: str, query: str) -> list[Hit]: ...


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
    return [Hit(hit.path, " ".join((hit.snippet or "").split())) for hit in found]


class StoreSpace:
    """A namespace served straight from the store."""

    def __init__(self, view: NamespaceView) -> None:
        self.view = view

    def read(self, address: Address) -> Found | None:
        entry = self.view.get(address.path)
        return None if entry is None else Found(entry.content, _description(entry.meta))

    def listing(self, prefix: str) -> list[tuple[str, str | None]]:
        return [(item.path, _description(item.meta)) for item in self.view.list(prefix)]

    def create(self, address: Address, text: str, description: str | None) -> None:
        if self.view.exists(address.path):
            raise ToolInputError(prompts.entry_exists(address.uri))
        self.view.put(
            address.path, text, None if description is None else {"description": description}
        )

    def replace(self, address: Address, text: str, description: str | None) -> None:
        entry = self.view.get(address.path)
        if entry is None:
            raise _not_found(address)
        self.view.put(address.path, text, _kept_meta(entry, description))

    def delete(self, address: Address) -> None:
        if not self.view.delete(address.path):
            raise _not_found(address)

    def rename(self, address: Address, new: Address) -> None:
        entry = self.view.get(address.path)
        if entry is None:
            raise _not_found(address)
        if self.view.exists(new.path):
            raise ToolInputError(prompts.entry_exists(new.uri))
        self.view.put(new.path, entry.content, _kept_meta(entry, None))
        self.view.delete(address.path)

    def search(self, prefix: str, query: str) -> list[Hit]:
        if self.view.supports("search"):
            return _hits(self.view.search(query, prefix=prefix))
        return _hits(scan(self.view.entries(prefix).items(), query))


@contextmanager
def _memory_refusals(address: Address) -> Iterator[None]:
    """Memory's typed refusals as the texts the model reads."""
    try:
        yield
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

    def __init__(self, memory: Memory) -> None:
        self.memory = memory

    def read(self, address: Address) -> Found | None:
        entry = self.memory.get(address.path)
        return None if entry is None else Found(entry.value, entry.description)

    def listing(self, prefix: str) -> list[tuple[str, str | None]]:
        return [
            (entry.key, entry.description)
            for entry in self.memory.entries()
            if entry.key.startswith(prefix)
        ]

    def create(self, address: Address, text: str, description: str | None) -> None:
        with _memory_refusals(address):
            self.memory.create(address.path, text, description=description)

    def replace(self, address: Address, text: str, description: str | None) -> None:
        with _memory_refusals(address):
            self.memory.update(
                address.path, text, description=UNSET if description is None else description
            )

    def delete(self, address: Address) -> None:
        with _memory_refusals(address):
            self.memory.remove(address.path)

    def rename(self, address: Address, new: Address) -> None:
        with _memory_refusals(address):
            self.memory.rename(address.path, new.path)

    def search(self, prefix: str, query: str) -> list[Hit]:
        texts = [
            (entry.key, StoredEntry(f"{entry.value}\n{entry.description or ''}"))
            for entry in self.memory.entries()
            if entry.key.startswith(prefix)
        ]
        return _hits(scan(texts, query))
