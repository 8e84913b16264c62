"""The context store as MCP resources: every entry is `context://<namespace>/<path>`.

Listing walks the namespaces the server names (memory/ through the chef's memory, so expired
facts are never listed; the others straight from the store), in pages of `PAGE_SIZE`. Reading
returns the entry's text as stored, with a MIME type guessed from its path (`text/plain` when
nothing better is known; archive/ entries are JSON documents). A URI that is not a valid entry
address, or names nothing, raises `ResourceMissing` with a message saying which.
"""

from __future__ import annotations

import mimetypes
from dataclasses import dataclass
from typing import Final

from contextchef.chef import AsyncContextChef
from contextchef.errors import InvalidPathError
from contextchef.memory.entry import MEMORY_NAMESPACE
from contextchef.store.paths import format_uri, parse_uri, validate_entry_path

__all__ = [
    "ARCHIVE_MIME_TYPE",
    "DEFAULT_MIME_TYPE",
    "PAGE_SIZE",
    "Listed",
    "ResourceMissing",
    "list_entries",
    "mime_type",
    "read_entry",
]

PAGE_SIZE: Final = 500
DEFAULT_MIME_TYPE: Final = "text/plain"
ARCHIVE_MIME_TYPE: Final = "application/json"
_TEXT_TYPES: Final = {".md": "text/markdown", ".markdown": "text/markdown"}


class ResourceMissing(LookupError):
    """A resource URI that names no entry (or is not an entry address at all)."""


@dataclass(frozen=True, slots=True)
class Listed:
    """One entry as a resource: its URI, path, description, MIME type and size in bytes."""

    uri: str
    path: str
    description: str | None
    mime_type: str
    size: int | None


def mime_type(ns: str, path: str) -> str:
    """The MIME type of an entry: archive/ holds JSON documents; otherwise by extension."""
    if ns == "archive":
        return ARCHIVE_MIME_TYPE
    suffix = path[path.rfind(".") :].lower() if "." in path.rsplit("/", 1)[-1] else ""
    if suffix in _TEXT_TYPES:
        return _TEXT_TYPES[suffix]
    guessed, _ = mimetypes.guess_type(f"entry{suffix}", strict=False) if suffix else (None, None)
    return guessed or DEFAULT_MIME_TYPE


def _description(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _size(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


async def _namespace(chef: AsyncContextChef, ns: str, has_memory: bool) -> list[Listed]:
    if ns == MEMORY_NAMESPACE:
        if not has_memory:
            return []
        entries = await chef.memory.entries()
        return [
            Listed(
                format_uri(ns, entry.key),
                entry.key,
                entry.description,
                mime_type(ns, entry.key),
                len(entry.value.encode("utf-8")),
            )
            for entry in sorted(entries, key=lambda entry: entry.key)
        ]
    listed = await chef.store.namespace(ns).list()
    return [
        Listed(
            format_uri(ns, item.path),
            item.path,
            _description(item.meta.get("description")),
            mime_type(ns, item.path),
            _size(item.meta.get("bytes")),
        )
        for item in sorted(listed, key=lambda item: item.path)
    ]


async def list_entries(
    chef: AsyncContextChef,
    namespaces: tuple[str, ...],
    *,
    has_memory: bool,
    cursor: str | None = None,
) -> tuple[list[Listed], str | None]:
    """One page of the entries of `namespaces` (in that order), and the next page's cursor."""
    start = 0
    if cursor is not None:
        if not cursor.isdigit():
            raise ValueError(f"invalid cursor {cursor!r}")
        start = int(cursor)
    found: list[Listed] = []
    for ns in namespaces:
        found.extend(await _namespace(chef, ns, has_memory))
        if len(found) > start + PAGE_SIZE:
            break
    page = found[start : start + PAGE_SIZE]
    more = len(found) > start + PAGE_SIZE
    return page, (str(start + PAGE_SIZE) if more else None)


async def read_entry(chef: AsyncContextChef, uri: str, *, has_memory: bool) -> tuple[str, str]:
    """The text of the entry at `uri` and its MIME type; `ResourceMissing` when there is none."""
    address = parse_uri(uri)
    if address is None:
        raise ResourceMissing(f"{uri!r} is not a valid context://<namespace>/<path> address")
    ns = address.ns
    try:
        path = validate_entry_path(address.path)
    except InvalidPathError:
        raise ResourceMissing(f"{uri!r} is a directory, not an entry") from None
    if ns == MEMORY_NAMESPACE:
        entry = await chef.memory.get(path) if has_memory else None
        if entry is None:
            raise ResourceMissing(f"nothing is stored at {format_uri(ns, path)}")
        return entry.value, mime_type(ns, path)
    stored = await chef.store.namespace(ns).get(path)
    if stored is None:
        raise ResourceMissing(f"nothing is stored at {format_uri(ns, path)}")
    return stored.content, mime_type(ns, path)
