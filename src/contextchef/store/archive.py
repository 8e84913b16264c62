"""The archive document: how an evicted conversation span is stored, written and read here only.

Overflow stores each span it evicts as one entry of versioned JSON,
`{"messages": [...], "version": 1}`, keys sorted and compact, so the same span is always the
same bytes (and so the same content-addressed path). The recall path reads it back with
`archived_messages` and renders it as a transcript.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Final

__all__ = ["ARCHIVE_VERSION", "archive_document", "archived_messages"]

ARCHIVE_VERSION: Final = 1


def archive_document(span: Sequence[Any]) -> str:
    """The stored form of an evicted span (IR message dicts)."""
    return json.dumps(
        {"messages": list(span), "version": ARCHIVE_VERSION},
        ensure_ascii=False,
        separators=(",", ":"),
        sort_keys=True,
    )


def archived_messages(content: str) -> list[Any] | None:
    """The messages of an archive document, or None when `content` is not one."""
    if not content.startswith("{") or '"messages"' not in content:
        return None
    try:
        document = json.loads(content)
    except (ValueError, RecursionError):
        return None
    if not isinstance(document, dict) or document.get("version") != ARCHIVE_VERSION:
        return None
    messages = document.get("messages")
    return messages if isinstance(messages, list) else None
