"""Random command sequences against a model of `notes/`, on every backend.

After every call: `run` returned text (it never raises), the text starts with `Error: ` exactly
when the model says the call must be refused, and the store holds exactly the model's entries,
byte for byte (nothing torn, nothing escaped). A second property throws arbitrary argument
shapes at every owned tool through the dispatcher.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from contextchef.memory import Memory
from contextchef.retrieval import OWNED_TOOL_NAMES, ContextTool, Dispatcher
from contextchef.store import InMemoryBackend, Store
from tests.contract.conftest import BACKENDS
from tests.fuzz import examples

VALID = ["a", "b.md", "dir/c", "dir/d.txt", "日本.md", "%2e%2e", "x y"]
HOSTILE = [
    "/",
    "..",
    "../x",
    "a/../b",
    "a//b",
    ".hidden",
    "a\\b",
    "a\x00b",
    "\u202ea",
    "a/./b",
    "ｘ／．．",
]
FORMS = ["notes/{}", "context://notes/{}", "/notes/{}"]
TEXT = st.text(st.characters(exclude_categories=("Cs",)), max_size=30)
TEXT_WITH_NEEDLES = st.one_of(TEXT, st.sampled_from(["a", "aa", "\n", "<&>", "dir", "x y\n"]))


@st.composite
def paths(draw: st.DrawFn) -> tuple[str, str | None]:
    """(the path as the model writes it, the entry name when it is a valid notes/ entry)."""
    if draw(st.integers(0, 9)) == 0:
        return draw(st.sampled_from(["vfs/a", "context://archive/a", "http://x/a"])), None
    name = draw(st.sampled_from(VALID + HOSTILE))
    form = draw(st.sampled_from(FORMS))
    return form.format(name), name if name in VALID else None


OPERATIONS = st.one_of(
    st.tuples(st.just("view"), paths()),
    st.tuples(st.just("create"), paths(), TEXT_WITH_NEEDLES),
    st.tuples(st.just("str_replace"), paths(), TEXT_WITH_NEEDLES, TEXT),
    st.tuples(st.just("insert"), paths(), st.integers(-1, 6), TEXT_WITH_NEEDLES),
    st.tuples(st.just("delete"), paths()),
    st.tuples(st.just("rename"), paths(), paths()),
    st.tuples(st.just("search"), st.sampled_from(["notes/", "notes/dir/", "notes/a"]), TEXT),
)


def splice(content: str, line: int, text: str) -> str | None:
    """`insert`, written independently: None when the line is out of range."""
    lines = content.split("\n") if content else []
    trailing = content.endswith("\n")
    if trailing:
        lines.pop()
    added = text.split("\n")
    if text.endswith("\n"):
        added.pop()
    if not 0 <= line <= len(lines):
        return None
    ends = trailing if lines else text.endswith("\n")
    return "\n".join(lines[:line] + added + lines[line:]) + ("\n" if ends else "")


def expect(model: dict[str, str], operation: tuple[Any, ...]) -> bool:
    """Apply `operation` to `model`; whether the tool must refuse it."""
    command = operation[0]
    if command == "search":
        return not operation[2].strip()
    name = operation[1][1]
    if name is None:  # a hostile path, a foreign scheme, or a read-only namespace (and empty)
        return True
    if command == "view":
        return name not in model and not any(key.startswith(name + "/") for key in model)
    if command == "create":
        if name in model:
            return True
        model[name] = operation[2]
        return False
    if name not in model:
        return True
    if command == "delete":
        del model[name]
        return False
    if command == "str_replace":
        old, new = operation[2], operation[3]
        first = model[name].find(old) if old else -1
        if first < 0 or model[name].find(old, first + 1) >= 0:
            return True
        model[name] = model[name][:first] + new + model[name][first + len(old) :]
        return False
    if command == "insert":
        result = splice(model[name], operation[2], operation[3])
        if result is None:
            return True
        model[name] = result
        return False
    target = operation[2][1]  # rename
    if target is None or target == name or target in model:
        return True
    model[target] = model.pop(name)
    return False


def arguments(operation: tuple[Any, ...]) -> dict[str, Any]:
    command = operation[0]
    path = operation[1] if command == "search" else operation[1][0]
    args: dict[str, Any] = {"command": command, "path": path}
    if command == "create":
        args["file_text"] = operation[2]
    elif command == "str_replace":
        args.update(old_str=operation[2], new_str=operation[3])
    elif command == "insert":
        args.update(insert_line=operation[2], insert_text=operation[3])
    elif command == "rename":
        args["new_path"] = operation[2][0]
    elif command == "search":
        args["query"] = operation[2]
    return args


def check_sequence(store: Store, operations: list[tuple[Any, ...]]) -> None:
    tool = ContextTool(store, memory=Memory(store))
    notes = store.namespace("notes")
    model: dict[str, str] = {}
    for operation in operations:
        refused = expect(model, operation)
        result = tool.run(arguments(operation))
        assert isinstance(result, str)
        assert result.startswith("Error: ") == refused, (operation, result)
        stored = {path: entry.content for path, entry in notes.entries().items()}
        assert stored == model, (operation, result)


@settings(max_examples=60, deadline=None)
@given(st.lists(OPERATIONS, max_size=25))
def test_random_sequences_in_memory(operations: list[tuple[Any, ...]]) -> None:
    check_sequence(Store(InMemoryBackend()), operations)


@pytest.mark.parametrize("backend_name", sorted(set(BACKENDS) - {"memory"}))
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(operations=st.lists(OPERATIONS, max_size=15))
def test_random_sequences_on_disk(backend_name: str, operations: list[tuple[Any, ...]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        backend = BACKENDS[backend_name](Path(tmp))
        try:
            check_sequence(Store(backend), operations)
        finally:
            close = getattr(backend, "close", None)
            if callable(close):
                close()


ARGUMENT_NAMES = [
    "command",
    "path",
    "file_text",
    "old_str",
    "new_str",
    "insert_line",
    "insert_text",
    "new_path",
    "query",
    "view_range",
    "description",
    "key",
    "value",
    "action",
    "uri",
]
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=6,
)
VALUES = st.one_of(
    JSON,
    st.sampled_from(["view", "create", "insert", "update", "delete", "notes/a", "memory/a"]),
    st.sampled_from(["context://notes/", "/memories/a", "[1, 2]", "3", "-1"]),
)
CALL_ARGUMENTS = st.one_of(
    st.none(),
    TEXT,
    JSON,
    st.dictionaries(st.sampled_from(ARGUMENT_NAMES), VALUES, max_size=6),
)


@settings(max_examples=examples(150), deadline=None)
@given(st.lists(st.tuples(st.sampled_from(OWNED_TOOL_NAMES), CALL_ARGUMENTS), max_size=8))
def test_owned_tools_never_raise(calls: list[tuple[str, Any]]) -> None:
    store = Store(InMemoryBackend())
    memory = Memory(store, allowed_keys=["a", "b"])
    dispatcher = Dispatcher(ContextTool(store, memory=memory), on_new_context=lambda: None)
    for name, call_arguments in calls:
        assert isinstance(dispatcher.handle(name, call_arguments), str)
