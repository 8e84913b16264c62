"""`NamespaceView.last(count, prefix)`: the last entries by path, on every backend, through
both APIs, natively (`read_last`) and through the generic fallback (a backend without it)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from contextchef.errors import ConfigError
from contextchef.store import backend_supports
from tests.contract.helpers import Minimal, Spy

PATHS = ["s/000002", "s/000010", "s/000001", "t/000005", "s/000003", "s/sub/9", "r/000001"]
"""Written out of order; under `s/` by code point: 000001 000002 000003 000010 sub/9."""


def _fill(notes: Any) -> None:
    for path in PATHS:
        notes.put(path, f"content of {path}", {"n": path})


@pytest.mark.parametrize("minimal", [False, True], ids=["native", "fallback"])
def test_last_reads_the_tail_in_path_order(
    make_store: Callable[..., Any], backend: Any, ns: str, minimal: bool
) -> None:
    notes = make_store(Minimal(backend) if minimal else backend).namespace(ns)
    _fill(notes)
    native = not minimal and backend_supports(backend, "read_last", ns)
    assert notes.supports("read_last") is native
    last = notes.last(3, "s/")
    assert list(last) == ["s/000003", "s/000010", "s/sub/9"]
    assert last["s/000010"].content == "content of s/000010"
    assert last["s/000010"].meta["n"] == "s/000010"
    assert list(notes.last(1, "s/")) == ["s/sub/9"]
    assert list(notes.last(100, "s/")) == sorted(p for p in PATHS if p.startswith("s/"))
    assert list(notes.last(2)) == ["s/sub/9", "t/000005"]  # the whole namespace
    assert notes.last(0, "s/") == {} and notes.last(-1, "s/") == {}
    assert notes.last(5, "nothing/") == {}
    notes.delete("s/sub/9")
    assert list(notes.last(2, "s/")) == ["s/000003", "s/000010"]
    with pytest.raises(ConfigError):
        notes.last("3", "s/")  # type: ignore[arg-type]


def test_last_is_one_request_where_the_backend_reads_the_tail(
    make_store: Callable[..., Any], backend: Any
) -> None:
    spy = Spy(backend)
    notes = make_store(spy).namespace("notes")
    for n in range(30):
        notes.put(f"log/{n:04d}", str(n))
    spy.calls.clear()
    assert [e.content for e in notes.last(3, "log/").values()] == ["27", "28", "29"]
    if backend_supports(backend, "read_last", "notes"):
        assert spy.calls == ["read_last"]
    else:  # the fallback lists, then reads only what it returns
        assert spy.calls == ["list", "read", "read", "read"]
