"""Small pure helpers for building entries, shared by the built-in backends.

Third-party backends may use them too: they encode the protocol's conventions (`bytes` is the
UTF-8 length; an append keeps `created_at` and moves `updated_at`) in one place.
"""

from __future__ import annotations

import time
from typing import Any

from contextchef.store.backend import StoredEntry

__all__ = ["appended", "utf8_length"]


def utf8_length(text: str) -> int:
    """`len(text.encode("utf-8"))` without the copy for ASCII text."""
    return len(text) if text.isascii() else len(text.encode("utf-8"))


def appended(existing: StoredEntry | None, content: str, now: float | None = None) -> StoredEntry:
    """`existing` with `content` added at the end (a new entry when None), times updated."""
    stamp = time.time() if now is None else now
    meta: dict[str, Any] = {"created_at": stamp}
    if existing is not None:
        meta.update(existing.meta)
    meta["updated_at"] = stamp
    return StoredEntry((existing.content if existing is not None else "") + content, meta)
