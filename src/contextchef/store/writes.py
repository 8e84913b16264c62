"""The store's writes of one entry beside `put`: append, create-if-absent, compare-and-swap
and delete.

Flows that `StoreCore.append`, `create`, `read_versioned`, `replace_if` and `delete` run (`put`,
the hottest write, stays inline in `core`). Each opens like every write flow, with the pending
flush and the versioned namespaces declared since (`StoreCore._open_write`), and an entry it
writes or deletes is brought up to date in the semantic index where the store has one (see
`indexing`).

The conditional writes are exact where the backend offers the capability (`create`;
`read_versioned` with `replace_if`), as every built-in backend does. Without it, `create` falls
back to check-then-write (two creators may both succeed), `read_versioned` reads no version and
`replace_if` given no version is a plain write (see `edits`, whose compare-and-swap loop is
built on these two). An append with meta is one `transact` where the backend has it (see
`edits.append_flow`), else a read-then-write.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from contextchef.store import edits
from contextchef.store.backend import StoredEntry, Version
from contextchef.store.ops import Op
from contextchef.store.spellings import exists_flow
from contextchef.store.validation import check_content, prepare_meta
from contextchef.store.versioning import declare_flow

__all__ = [
    "append_entry_flow",
    "create_flow",
    "delete_flow",
    "read_versioned_flow",
    "replace_if_flow",
]


class StoreCore(edits.StoreCore, Protocol):
    """What these flows use of `contextchef.store.core.StoreCore` (which calls them; a protocol,
    so that this module does not import the one that imports it)."""

    def _open_write(self) -> Op[None]: ...
    def _note_read(self, ns: str, path: str) -> None: ...


def append_entry_flow(
    core: StoreCore, ns: str, path: str, content: str, meta: Mapping[str, Any] | None
) -> Op[str]:
    """See `StoreCore.append`; the path appended to, spelled as stored."""
    path = yield from core._spelled(ns, path)
    yield from core._open_write()
    check_content(content, ns=ns, path=path)
    if meta is None and core.supports("append", ns):
        yield from core.ops.append(ns, path, content)
    elif core.supports("transact", ns):
        yield from edits.append_flow(core, ns, path, content, meta)
    else:
        existing = yield from core.ops.read(ns, path)
        now = core.clock()
        merged: dict[str, Any] = dict(existing.meta) if existing is not None else {}
        merged.update(meta or {})
        merged["updated_at"] = (meta or {}).get("updated_at", now)
        combined = (existing.content if existing is not None else "") + content
        yield from core.ops.write(ns, path, StoredEntry(combined, prepare_meta(merged, now)))
    if core.index is not None:
        yield from core._index(ns, {path: (yield from core.ops.read(ns, path))})
    return path


def create_flow(
    core: StoreCore, ns: str, path: str, content: str, meta: Mapping[str, Any] | None
) -> Op[bool]:
    """See `StoreCore.create`."""
    path = yield from core._spelled(ns, path)
    check_content(content, ns=ns, path=path)
    yield from core._open_write()
    entry = StoredEntry(content, prepare_meta(meta, core.clock()))
    if core.supports("create", ns):
        created = yield from core.ops.create(ns, path, entry)
    else:  # the weaker fallback: check, then write
        created = not (yield from exists_flow(core.ops, ns, path, core.supports))
        if created:
            yield from core.ops.write(ns, path, entry)
    if created and core.index is not None:
        yield from core._index(ns, {path: entry})
    return created


def read_versioned_flow(
    core: StoreCore, ns: str, path: str
) -> Op[tuple[StoredEntry, Version | None] | None]:
    """See `StoreCore.read_versioned`."""
    path = yield from core._spelled(ns, path)
    if core._undeclared:
        yield from declare_flow(core.ops, core._undeclared)
    version: Version | None = None
    if core.supports("replace_if", ns) and core.supports("read_versioned", ns):
        found = yield from core.ops.read_versioned(ns, path)
        entry, version = (None, None) if found is None else found
    else:
        entry = yield from core.ops.read(ns, path)
    if entry is None:
        return None
    core._note_read(ns, path)
    return entry, version


def replace_if_flow(
    core: StoreCore,
    ns: str,
    path: str,
    content: str,
    meta: Mapping[str, Any] | None,
    expected: Version | None,
) -> Op[bool]:
    """See `StoreCore.replace_if`."""
    path = yield from core._spelled(ns, path)
    check_content(content, ns=ns, path=path)
    yield from core._open_write()
    entry = StoredEntry(content, prepare_meta(meta, core.clock()))
    if expected is None:
        yield from core.ops.write(ns, path, entry)
        written = True
    else:
        written = yield from core.ops.replace_if(ns, path, entry, expected)
    if written and core.index is not None:
        yield from core._index(ns, {path: entry})
    return written


def delete_flow(core: StoreCore, ns: str, path: str) -> Op[bool]:
    """See `StoreCore.delete`."""
    path = yield from core._spelled(ns, path)
    yield from core._open_write()
    deleted = yield from core.ops.delete(ns, path)
    core._pending.forget(ns, path)
    if deleted and core.index is not None:
        yield from core._index(ns, {path: None})
    return deleted
