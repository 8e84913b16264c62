"""Case-insensitive substring search over entries, with a snippet around the first hit.

The built-in backends have no index, so their `search` is this scan; it lives here once so that
every backend ranks and snips the same way. A hit's score is the number of occurrences; hits are
ordered by score, then path.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from contextchef.store.backend import SearchHit, StoredEntry

__all__ = ["SNIPPET_RADIUS", "scan", "snippet"]

SNIPPET_RADIUS = 60
"""Characters of context kept on each side of the match."""

_WHITESPACE = re.compile(r"\s+")


def snippet(content: str, start: int, end: int, radius: int = SNIPPET_RADIUS) -> str:
    """One line of `content` around `content[start:end]`, with `…` where it was cut."""
    left = max(0, start - radius)
    right = min(len(content), end + radius)
    text = _WHITESPACE.sub(" ", content[left:right]).strip()
    return f"{'…' if left > 0 else ''}{text}{'…' if right < len(content) else ''}"


def scan(
    entries: Iterable[tuple[str, StoredEntry]], query: str, limit: int | None = None
) -> list[SearchHit]:
    """Search `(path, entry)` pairs for `query`, ignoring case."""
    pattern = re.compile(re.escape(query), re.IGNORECASE)
    hits: list[SearchHit] = []
    for path, entry in entries:
        content = entry.content
        first = pattern.search(content)
        if first is None:
            continue
        count = sum(1 for _ in pattern.finditer(content))
        hits.append(
            SearchHit(
                path=path,
                meta=entry.meta,
                snippet=snippet(content, first.start(), first.end()),
                score=float(count),
            )
        )
    hits.sort(key=lambda hit: (-(hit.score or 0.0), hit.path))
    return hits if limit is None else hits[: max(limit, 0)]
