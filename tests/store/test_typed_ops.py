"""Store effects name the backend contract's methods, not strings: `CapableBackend` declares
every method a store flow may call, each request of `BackendOps` names one of them, the
backend's own implementation is what runs, and what it returns is what the flow gets."""

from __future__ import annotations

import inspect
from typing import Any

import pytest

from contextchef._effects import Effect, Hold, StoreOp, drive_sync, intercept
from contextchef.store import InMemoryBackend, StoredEntry
from contextchef.store.backend import (
    CAPABILITIES,
    VECTOR_METHODS,
    ListedEntry,
    SearchHit,
    StorageBackend,
)
from contextchef.store.core import StoreCore
from contextchef.store.ops import BackendOps, CapableBackend
from contextchef.store.where import NameStarts

REQUIRED = ("read", "write", "delete", "list")
ENTRY = StoredEntry("hello", {"bytes": 5})


def _unchanged(current: Any) -> Any:
    return current


def contract_methods() -> set[str]:
    return {
        name
        for name, member in inspect.getmembers(CapableBackend, inspect.isfunction)
        if not name.startswith("_")
    }


def test_the_contract_declares_the_required_methods_and_every_capability() -> None:
    assert contract_methods() == {*REQUIRED, *CAPABILITIES, *VECTOR_METHODS} - {"vectors"}
    for name in REQUIRED:  # the required four are `StorageBackend`'s very methods
        assert getattr(CapableBackend, name) is getattr(StorageBackend, name)


REQUESTS: list[tuple[str, tuple[Any, ...], Any]] = [
    ("read", ("notes", "a.md"), ENTRY),
    ("write", ("notes", "a.md", ENTRY), None),
    ("create", ("notes", "a.md", ENTRY), True),
    ("read_versioned", ("notes", "a.md"), (ENTRY, "v1")),
    ("replace_if", ("notes", "a.md", ENTRY, "v1"), True),
    ("delete", ("notes", "a.md"), True),
    ("list", ("notes", ""), [ListedEntry("a.md")]),
    ("read_all", ("notes", ""), {"a.md": ENTRY}),
    ("read_last", ("notes", "", 1), {"a.md": ENTRY}),
    ("list_dirs", ("notes", ""), ["dir/"]),
    ("read_recent", ("notes", "", 1, 0), {"a.md": ENTRY}),
    ("read_recent_where", ("notes", "", NameStarts("a"), 1, 0), {"a.md": ENTRY}),
    ("exists", ("notes", "a.md"), True),
    ("append", ("notes", "a.md", "more"), None),
    ("search", ("notes", "hello", "", 3), [SearchHit("a.md")]),
    ("snapshot", ("notes",), {"a.md": ENTRY}),
    ("restore", ("notes", {"a.md": ENTRY}), None),
    ("history", ("notes", "a.md"), [ENTRY]),
    ("touch", ("notes", "a.md", 7.0), None),
    ("get_physical_path", ("notes", "a.md"), "/tmp/a.md"),
    ("keep_versions", ("notes",), None),
    ("transact", ("notes", ("a.md",), _unchanged), {"a.md": ENTRY}),
    ("put_vectors", ("notes", {"a.md": [1.0, 0.0]}), None),
    ("delete_vectors", ("notes", ["a.md"]), None),
    ("nearest", ("notes", [1.0, 0.0], "l2", "", 3), [("a.md", -0.5)]),
]


ANSWERS = {name: answer for name, _, answer in REQUESTS}
"""What `Everything` answers, by method."""


class Everything:
    """A backend with every method, answering each call with a canned value it records."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = []

    def __getattr__(self, name: str) -> Any:
        if name not in ANSWERS:
            raise AttributeError(name)

        def method(*args: Any, **kwargs: Any) -> Any:
            self.calls.append((name, args, kwargs))
            return ANSWERS[name]

        return method


def test_every_request_is_covered() -> None:
    requests = {name for name, _ in inspect.getmembers(BackendOps, inspect.isfunction)} - {
        "__init__",
        "op",
        "call",
    }
    assert requests == {name for name, _, _ in REQUESTS} == contract_methods()


@pytest.mark.parametrize(("name", "args", "answer"), REQUESTS, ids=[r[0] for r in REQUESTS])
def test_a_request_names_its_contract_method_and_returns_the_backends_answer(
    name: str, args: tuple[Any, ...], answer: Any
) -> None:
    backend = Everything()
    issued: list[StoreOp[Any]] = []

    def around(effect: Effect) -> None:
        assert isinstance(effect, StoreOp)
        issued.append(effect)

    result = drive_sync(intercept(getattr(BackendOps(backend), name)(*args), around))
    assert result == answer
    (op,) = issued
    assert op.method is getattr(CapableBackend, name) and op.name == name
    assert [call[0] for call in backend.calls] == [name]
    if name == "search":  # the keyword-only arguments of the contract
        assert backend.calls[0][1:] == (("notes", "hello"), {"prefix": "", "limit": 3})
    elif name == "nearest":
        keywords = {"metric": "l2", "prefix": "", "limit": 3}
        assert backend.calls[0][1:] == (("notes", [1.0, 0.0]), keywords)
    else:
        assert backend.calls[0][1:] == (args, {})


def test_store_flows_name_contract_methods_only() -> None:
    """The hot paths of `StoreCore` build their requests inline: they name the contract too."""
    core = StoreCore(InMemoryBackend(), clock=lambda: 1.0)
    names: list[str] = []

    def around(effect: Effect) -> None:
        if isinstance(effect, Hold):  # an edit's in-process lock, not a backend request
            return
        assert isinstance(effect, StoreOp)
        assert effect.method is getattr(CapableBackend, effect.name)
        names.append(effect.name)

    for flow in (
        core.put("notes", "a.md", "hello", None),
        core.get("notes", "a.md"),
        core.append("notes", "a.md", " world", None),
        core.update("notes", "a.md", lambda entry: (entry.content + "!", None)),
        core.entries("notes", ""),
        core.delete("notes", "a.md"),
    ):
        drive_sync(intercept(flow, around))
    assert names == [
        "write",
        "read",
        "append",
        "transact",  # an edit is one read-modify-write of the backend (see `store.edits`)
        "read_all",
        "delete",
    ]
