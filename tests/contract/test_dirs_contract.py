"""`NamespaceView.directories(prefix)`: the directories directly holding an entry, on every
backend, through both APIs, natively (`list_dirs`) and through the generic fallback."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from contextchef.errors import ConfigError
from contextchef.store import backend_supports
from tests.contract.helpers import Minimal, Spy

PATHS = ["top.md", "a/x.md", "a/y.md", "a/b/z.md", "a/b/c/w.md", "é/v.md", "q/r/s.md"]


@pytest.mark.parametrize("minimal", [False, True], ids=["native", "fallback"])
def test_directories_holding_entries(
    make_store: Callable[..., Any], backend: Any, ns: str, minimal: bool
) -> None:
    notes = make_store(Minimal(backend) if minimal else backend).namespace(ns)
    assert notes.directories() == []
    for path in PATHS:
        notes.put(path, f"content of {path}")
    native = not minimal and backend_supports(backend, "list_dirs", ns)
    assert notes.supports("list_dirs") is native
    assert notes.directories() == ["", "a/", "a/b/", "a/b/c/", "q/r/", "é/"]
    assert notes.directories("a/") == ["a/", "a/b/", "a/b/c/"]
    assert notes.directories("a/b/") == ["a/b/", "a/b/c/"]
    assert notes.directories("q/") == ["q/r/"]  # `q/` holds no entry itself
    assert notes.directories("nothing/") == []
    notes.delete("a/b/z.md")
    notes.delete("top.md")
    assert notes.directories() == ["a/", "a/b/c/", "q/r/", "é/"]
    notes.put("a/b/again.md", "back")
    assert notes.directories("a/b/") == ["a/b/", "a/b/c/"]
    with pytest.raises(ConfigError):
        notes.directories("a")  # a directory prefix ends in `/`


def test_directories_read_no_entry_where_the_backend_indexes_them(
    make_store: Callable[..., Any], backend: Any
) -> None:
    spy = Spy(backend)
    notes = make_store(spy).namespace("notes")
    for n in range(20):
        notes.put(f"d{n % 4}/{n}.md", str(n))
    spy.calls.clear()
    assert notes.directories() == ["d0/", "d1/", "d2/", "d3/"]
    native = backend_supports(backend, "list_dirs", "notes")
    assert spy.calls == (["list_dirs"] if native else ["list"])


def test_directories_after_a_restore(make_store: Callable[..., Any], backend: Any) -> None:
    notes = make_store(backend).namespace("notes")
    for path in PATHS:
        notes.put(path, "x")
    kept = {path: entry for path, entry in notes.snapshot().items() if path.startswith("a/b/")}
    notes.restore(kept)
    assert notes.directories() == ["a/b/", "a/b/c/"]
