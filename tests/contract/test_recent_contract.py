"""`NamespaceView.recent(limit, prefix, offset)`: pages by recency (newest first, then by path)
on every backend, through both APIs, natively (`read_recent`) and through the fallback."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from contextchef.errors import ConfigError
from contextchef.store import backend_supports
from tests.contract.helpers import Clock, Minimal, Spy

# (path, updated_at offset): two ties, so the path breaks them.
WRITES = [("d/b", 3), ("d/a", 3), ("d/c", 1), ("e/x", 5), ("d/sub/z", 4), ("d/y", 0)]


@pytest.mark.parametrize("minimal", [False, True], ids=["native", "fallback"])
def test_recent_pages_newest_first(
    make_store: Callable[..., Any], backend: Any, ns: str, minimal: bool, clock: Clock
) -> None:
    notes = make_store(Minimal(backend) if minimal else backend).namespace(ns)
    base = clock.now
    for path, at in WRITES:
        notes.put(path, f"content of {path}", {"updated_at": base + at})
    native = not minimal and backend_supports(backend, "read_recent", ns)
    assert notes.supports("read_recent") is native
    order = ["d/sub/z", "d/a", "d/b", "d/c", "d/y"]
    assert list(notes.recent(10, "d/")) == order
    assert list(notes.recent(2, "d/")) == order[:2]
    assert list(notes.recent(2, "d/", offset=2)) == order[2:4]
    assert list(notes.recent(2, "d/", offset=4)) == order[4:]
    assert notes.recent(2, "d/", offset=9) == {}
    assert notes.recent(0, "d/") == {}
    assert list(notes.recent(1)) == ["e/x"]  # the whole namespace
    assert notes.recent(3, "d/")["d/a"].content == "content of d/a"
    for bad in ({"limit": -1}, {"offset": -1}, {"limit": "2"}):
        with pytest.raises(ConfigError):
            notes.recent(**{"limit": 2, "prefix": "d/", **bad})


def test_recent_reads_one_page_where_the_backend_can(
    make_store: Callable[..., Any], backend: Any
) -> None:
    spy = Spy(backend)
    notes = make_store(spy).namespace("notes")
    for n in range(12):
        notes.put(f"p/{n:02d}", str(n))
    spy.calls.clear()
    assert len(notes.recent(3, "p/")) == 3
    if backend_supports(backend, "read_recent", "notes"):
        assert spy.calls == ["read_recent"]
