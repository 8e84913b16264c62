"""How `FileSystemBackend` lays a namespace out on disk, compatible with the TypeScript reference.

Two formats, chosen per namespace:

- `json` (default): each entry is a file holding `{"content": …, "meta": {…}}`, written compactly
  with the content first, as the reference's `JSON.stringify` does. On disk the two timestamps use
  the reference's names and unit, `createdAt` / `updatedAt` in milliseconds; every other meta key
  is stored under its own name. `bytes` and `accessed_at` are never stored: the first is the
  content's UTF-8 length, the second is the file's access time.
- `raw` (default for `vfs` and `archive`): the file *is* the content, so the physical path the
  Offloader hands the model is plain text. Meta comes from `stat()`; free meta keys are not kept.

A `Layout` may also point a namespace at its own directory and limit it to file names starting
with `owns`, which is how the reference's flat `.context_vfs/vfs_<hash>.txt` directory is opened.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from contextchef.errors import ConfigError
from contextchef.store.backend import StoredEntry
from contextchef.store.entries import utf8_length

__all__ = [
    "RAW_NAMESPACES",
    "Format",
    "Layout",
    "decode_entry",
    "encode_entry",
    "stat_meta",
]

Format = Literal["json", "raw"]
RAW_NAMESPACES = frozenset({"vfs", "archive"})

# Python meta key -> the reference's on-disk key, stored in milliseconds.
_TIME_KEYS = {"created_at": "createdAt", "updated_at": "updatedAt"}
_DISK_TIME_KEYS = {disk: key for key, disk in _TIME_KEYS.items()}
_NOT_STORED = frozenset({"bytes", "accessed_at"})


@dataclass(frozen=True, slots=True)
class Layout:
    """One namespace's on-disk layout."""

    format: Format = "json"
    """`json` envelopes or `raw` content files."""
    directory: str | os.PathLike[str] | None = None
    """The namespace's directory; default `<root>/<namespace>`."""
    owns: str | None = None
    """When set, only files whose name starts with this are entries (and may be written)."""

    def __post_init__(self) -> None:
        if self.format not in ("json", "raw"):
            raise ConfigError(f"layout format must be 'json' or 'raw', got {self.format!r}")

    @classmethod
    def coerce(cls, value: Layout | str) -> Layout:
        """Accept a `Layout` or just its format name."""
        if isinstance(value, Layout):
            return value
        if value == "json":
            return cls(format="json")
        if value == "raw":
            return cls(format="raw")
        raise ConfigError(f"a layout must be a Layout, 'json' or 'raw'; got {value!r}")

    @classmethod
    def default(cls, ns: str) -> Layout:
        return cls(format="raw" if ns in RAW_NAMESPACES else "json")


def _to_ms(seconds: float) -> float | int:
    """Seconds to the reference's milliseconds, rounded to the microsecond; whole values as int."""
    ms = round(float(seconds) * 1000, 3)
    return int(ms) if ms.is_integer() else ms


def encode_entry(layout: Layout, entry: StoredEntry) -> bytes:
    """The bytes of `entry`'s file under `layout`."""
    if layout.format == "raw":
        return entry.content.encode("utf-8")
    meta: dict[str, Any] = {}
    for key, value in entry.meta.items():
        if key in _NOT_STORED:
            continue
        if key in _DISK_TIME_KEYS:
            raise ConfigError(
                f"meta key {key!r} is reserved by the on-disk format (it holds "
                f"{_DISK_TIME_KEYS[key]!r}); use {_DISK_TIME_KEYS[key]!r} instead"
            )
        disk = _TIME_KEYS.get(key)
        if disk is not None and isinstance(value, int | float) and not isinstance(value, bool):
            meta[disk] = _to_ms(value)
        else:
            meta[key] = value
    envelope = {"content": entry.content, "meta": meta}
    return json.dumps(envelope, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode(
        "utf-8"
    )


def stat_meta(st: os.stat_result) -> dict[str, Any]:
    """Meta of a raw file: its times and size (birth time where the platform has one)."""
    created = getattr(st, "st_birthtime", None) or st.st_mtime
    return {
        "created_at": float(created),
        "updated_at": st.st_mtime,
        "accessed_at": st.st_atime,
        "bytes": st.st_size,
    }


def decode_entry(layout: Layout, data: bytes, st: os.stat_result) -> StoredEntry:
    """Parse a file's bytes; raises `ValueError` when they are not a valid entry."""
    text = data.decode("utf-8")
    if layout.format == "raw":
        return StoredEntry(text, stat_meta(st))
    envelope = json.loads(text)
    if not isinstance(envelope, dict) or not isinstance(envelope.get("content"), str):
        raise ValueError("not a {content, meta} envelope")
    raw_meta = envelope.get("meta")
    if raw_meta is None:
        raw_meta = {}
    if not isinstance(raw_meta, dict):
        raise ValueError("the envelope's meta is not an object")
    content: str = envelope["content"]
    return StoredEntry(content, _meta_from_disk(raw_meta, content, st))


def _meta_from_disk(raw: Mapping[str, Any], content: str, st: os.stat_result) -> dict[str, Any]:
    fallback = stat_meta(st)
    meta: dict[str, Any] = {}
    for key, value in raw.items():
        python_key = _DISK_TIME_KEYS.get(key)
        if python_key is not None:
            if isinstance(value, int | float) and not isinstance(value, bool):
                meta[python_key] = value / 1000
        elif key not in _NOT_STORED and key not in _TIME_KEYS and key != "accessedAt":
            meta[key] = value
    meta.setdefault("created_at", fallback["created_at"])
    meta.setdefault("updated_at", fallback["updated_at"])
    meta["accessed_at"] = fallback["accessed_at"]
    meta["bytes"] = utf8_length(content)
    return meta
