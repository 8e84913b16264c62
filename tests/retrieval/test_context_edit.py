"""The `context` tool's writes in every namespace (notes/, memory/, read-only ones), exact texts.

Each test runs on every backend of the contract suite (see conftest.py).
"""

from __future__ import annotations

from typing import Any

import pytest

from contextchef.memory import Memory
from contextchef.retrieval import ContextTool
from contextchef.store import Store

READ_ONLY_HINT = "This tool may write to: context://memory/, context://notes/."


def seed(store: Store, ns: str, path: str, content: str) -> None:
    store.namespace(ns).put(path, content)


# -- create -----------------------------------------------------------------------------------


def test_create_and_create_again(run: Any, store: Store) -> None:
    assert run("create", "context://notes/plan.md", file_text="1. a\n2. b\n") == (
        "Created context://notes/plan.md."
    )
    assert store.namespace("notes").get("plan.md").content == "1. a\n2. b\n"  # type: ignore[union-attr]
    assert run("create", "notes/plan.md", file_text="other") == (
        "Error: context://notes/plan.md already exists. Edit it with str_replace or insert, or "
        "delete it first."
    )
    assert store.namespace("notes").get("plan.md").content == "1. a\n2. b\n"  # type: ignore[union-attr]
    assert run("create", "notes/empty.md", file_text="") == "Created context://notes/empty.md."
    assert (
        run("create", "notes/deep/er/x.md", file_text="x")
        == "Created context://notes/deep/er/x.md."
    )


def test_create_with_a_description_shows_it(run: Any) -> None:
    run("create", "notes/plan.md", file_text="step", description="the plan")
    assert (
        run("view", "notes/") == "context://notes/ (1 entry):\n- context://notes/plan.md — the plan"
    )
    assert run("view", "notes/plan.md") == (
        "context://notes/plan.md (1 line):\nDescription: the plan\n     1\tstep"
    )


def test_create_needs_file_text_and_an_entry_path(run: Any) -> None:
    assert run("create", "notes/a") == (
        'Error: the "file_text" argument is missing or empty. Call again with "file_text" set.'
    )
    assert run("create", "notes/a", file_text=3) == (
        'Error: the "file_text" argument must be a string. Call again with a corrected value.'
    )
    assert run("create", "notes/dir/", file_text="x") == (
        "Error: context://notes/dir/ is a directory, but create needs an entry (a path not ending "
        'in "/"). View the directory to list its entries.'
    )


@pytest.mark.parametrize("ns", ["vfs", "archive", "scratch"])
def test_writes_to_read_only_namespaces_are_refused(run: Any, store: Store, ns: str) -> None:
    seed(store, ns, "x.txt", "keep me")
    uri = f"context://{ns}/x.txt"
    refusal = f"Error: {uri} is read-only. {READ_ONLY_HINT}"
    assert run("create", f"{ns}/new.txt", file_text="x") == (
        f"Error: context://{ns}/new.txt is read-only. {READ_ONLY_HINT}"
    )
    assert run("str_replace", uri, old_str="keep", new_str="lose") == refusal
    assert run("insert", uri, insert_line=0, insert_text="x") == refusal
    assert run("delete", uri) == refusal
    assert run("rename", uri, new_path=f"{ns}/y.txt") == refusal
    assert store.namespace(ns).get("x.txt").content == "keep me"  # type: ignore[union-attr]
    assert run("view", uri) == f"{uri} (1 line):\n     1\tkeep me"


def test_the_access_policy_is_configurable(store: Store, memory: Memory) -> None:
    tool = ContextTool(store, memory=memory, writable=["notes", "vfs"])
    assert tool.writable == ("notes", "vfs")
    assert (
        tool.run({"command": "create", "path": "vfs/x", "file_text": "x"})
        == "Created context://vfs/x."
    )
    assert tool.run({"command": "create", "path": "memory/k", "file_text": "x"}) == (
        "Error: context://memory/k is read-only. This tool may write to: context://notes/, "
        "context://vfs/."
    )
    closed = ContextTool(store, memory=memory, writable=[])
    assert closed.run({"command": "delete", "path": "notes/x"}) == (
        "Error: context://notes/x is read-only, and this tool may not write anywhere in this "
        "session."
    )


# -- str_replace ------------------------------------------------------------------------------


def test_str_replace(run: Any, store: Store) -> None:
    seed(store, "notes", "a.md", "alpha\nbeta\ngamma beta\n")
    assert run("str_replace", "notes/a.md", old_str="alpha", new_str="ALPHA") == (
        "Edited context://notes/a.md."
    )
    assert run("str_replace", "notes/a.md", old_str="beta", new_str="B") == (
        "Error: old_str occurs more than once in context://notes/a.md (starting on lines 2, 3). "
        "Include more of the surrounding text so that it matches exactly once."
    )
    assert run("str_replace", "notes/a.md", old_str="delta", new_str="D") == (
        "Error: old_str was not found in context://notes/a.md. View the entry and copy the text "
        "exactly, whitespace included."
    )
    assert (
        run("str_replace", "notes/a.md", old_str="\ngamma beta") == "Edited context://notes/a.md."
    )
    assert store.namespace("notes").get("a.md").content == "ALPHA\nbeta\n"  # type: ignore[union-attr]
    assert run("str_replace", "notes/a.md", old_str="", new_str="x") == (
        'Error: the "old_str" argument is missing or empty. Call again with "old_str" set.'
    )
    assert run("str_replace", "notes/a.md", old_str="beta", new_str=["x"]) == (
        'Error: the "new_str" argument must be a string. Call again with a corrected value.'
    )
    assert run("str_replace", "notes/zz.md", old_str="a", new_str="b") == (
        "Error: nothing is stored at context://notes/zz.md. View context://notes/ to see what is "
        "there."
    )


def test_str_replace_counts_overlapping_occurrences(run: Any, store: Store) -> None:
    seed(store, "notes", "a", "aaa")
    assert run("str_replace", "notes/a", old_str="aa", new_str="b").startswith(
        "Error: old_str occurs more than once in context://notes/a (starting on lines 1)."
    )


def test_edits_keep_meta_and_refresh_updated_at(run: Any, store: Store, clock: Any) -> None:
    store.namespace("notes").put("a", "one", {"tag": "keep"})
    created = store.namespace("notes").get("a").meta["created_at"]  # type: ignore[union-attr]
    clock.advance(60)
    run("str_replace", "notes/a", old_str="one", new_str="two")
    entry = store.namespace("notes").get("a")
    assert entry is not None
    assert (entry.content, entry.meta["tag"], entry.meta["created_at"]) == ("two", "keep", created)
    assert entry.meta["updated_at"] == pytest.approx(created + 60)


# -- insert -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "line", "text", "result"),
    [
        ("a\nb\n", 0, "x", "x\na\nb\n"),
        ("a\nb\n", 1, "x\ny", "a\nx\ny\nb\n"),
        ("a\nb\n", 2, "x\n", "a\nb\nx\n"),
        ("a\nb", 2, "x", "a\nb\nx"),
        ("", 0, "x\n", "x\n"),
        ("a", 0, "", "\na"),
    ],
)
def test_insert_splices_lines(
    run: Any, store: Store, content: str, line: int, text: str, result: str
) -> None:
    seed(store, "notes", "f", content)
    assert run("insert", "notes/f", insert_line=line, insert_text=text).startswith("Inserted ")
    assert store.namespace("notes").get("f").content == result  # type: ignore[union-attr]


def test_insert_messages_and_refusals(run: Any, store: Store) -> None:
    seed(store, "notes", "f", "a\nb\n")
    assert run("insert", "notes/f", insert_line="1", insert_text="x\ny") == (
        "Inserted 2 lines into context://notes/f; they are now lines 2-3."
    )
    assert run("insert", "notes/f", insert_line=4.0, insert_text="z") == (
        "Inserted 1 line into context://notes/f; it is now line 5."
    )
    assert run("insert", "notes/f", insert_line=9, insert_text="z") == (
        "Error: insert_line 9 is out of range for context://notes/f, which has 5 lines. Use a "
        "number from 0 to 5."
    )
    assert run("insert", "notes/f", insert_line=-1, insert_text="z").startswith(
        "Error: insert_line -1 is out of range"
    )
    assert run("insert", "notes/f", insert_line="two", insert_text="z") == (
        'Error: the "insert_line" argument must be a whole number, such as 0 or 12. Call again '
        "with a corrected value."
    )
    assert run("insert", "notes/f", insert_line=True, insert_text="z").startswith(
        'Error: the "insert_line" argument must be a whole number'
    )
    assert run("insert", "notes/f", insert_text="z") == (
        'Error: the "insert_line" argument is missing or empty. Call again with "insert_line" set.'
    )
    assert run("insert", "notes/f", insert_line=0) == (
        'Error: the "insert_text" argument is missing or empty. Call again with "insert_text" set.'
    )
    assert run("insert", "notes/none", insert_line=0, insert_text="z").startswith(
        "Error: nothing is stored at context://notes/none."
    )


# -- delete and rename ------------------------------------------------------------------------


def test_delete(run: Any, store: Store) -> None:
    seed(store, "notes", "a", "x")
    assert run("delete", "notes/a") == "Deleted context://notes/a."
    assert store.namespace("notes").get("a") is None
    assert run("delete", "notes/a") == (
        "Error: nothing is stored at context://notes/a. View context://notes/ to see what is there."
    )
    assert run("delete", "notes/") == (
        "Error: context://notes/ is a directory, but delete needs an entry (a path not ending in "
        '"/"). View the directory to list its entries.'
    )


def test_rename(run: Any, store: Store) -> None:
    store.namespace("notes").put("a.md", "text", {"description": "kept"})
    assert run("rename", "notes/a.md", new_path="context://notes/done/a.md") == (
        "Renamed context://notes/a.md to context://notes/done/a.md."
    )
    moved = store.namespace("notes").get("done/a.md")
    assert moved is not None
    assert (moved.content, moved.meta["description"]) == ("text", "kept")
    assert store.namespace("notes").get("a.md") is None
    seed(store, "notes", "b.md", "b")
    assert run("rename", "notes/b.md", new_path="notes/done/a.md") == (
        "Error: context://notes/done/a.md already exists. Edit it with str_replace or insert, or "
        "delete it first."
    )
    assert run("rename", "notes/b.md", new_path="memory/b.md") == (
        "Error: rename moves an entry within one namespace, but context://memory/b.md is outside "
        "context://notes/. Create the entry there and delete context://notes/b.md instead."
    )
    assert run("rename", "notes/b.md", new_path="notes/b.md") == (
        "Error: new_path names context://notes/b.md itself. Give the new path the entry should "
        "move to."
    )
    assert run("rename", "notes/b.md", new_path="notes/dir/").startswith(
        "Error: context://notes/dir/ is a directory, but rename needs an entry"
    )
    assert run("rename", "notes/b.md") == (
        'Error: the "new_path" argument is missing or empty. Call again with "new_path" set.'
    )
    assert run("rename", "notes/zz", new_path="notes/yy").startswith(
        "Error: nothing is stored at context://notes/zz."
    )


# -- memory/ ------------------------------------------------------------------------------------


def test_memory_commands_go_through_memory(store: Store, clock: Any) -> None:
    changes: list[Any] = []
    memory = Memory(store, clock=clock, on_memory_changed=changes.append)
    tool = ContextTool(store, memory=memory)

    def run(command: str, path: str, **arguments: Any) -> str:
        return tool.run({"command": command, "path": path, **arguments})

    assert run("create", "memory/user", file_text="Ann", description="name") == (
        "Created context://memory/user."
    )
    assert run("create", "memory/user", file_text="Bob") == (
        "Error: context://memory/user already exists. Edit it with str_replace or insert, or "
        "delete it first."
    )
    assert run("str_replace", "memory/user", old_str="Ann", new_str="Ann Lee") == (
        "Edited context://memory/user."
    )
    assert run("insert", "memory/user", insert_line=1, insert_text="likes tea") == (
        "Inserted 1 line into context://memory/user; it is now line 2."
    )
    entry = memory.get("user")
    assert entry is not None
    assert (entry.value, entry.description, entry.update_count) == ("Ann Lee\nlikes tea", "name", 3)
    assert run("view", "memory/user") == (
        "context://memory/user (2 lines):\nDescription: name\n     1\tAnn Lee\n     2\tlikes tea"
    )
    assert run("view", "memory/") == "context://memory/ (1 entry):\n- context://memory/user — name"
    assert run("search", "memory/", query="TEA") == (
        '1 match for "TEA" under context://memory/:\n'
        "- context://memory/user: Ann Lee likes tea name"
    )
    assert run("search", "memory/", query="name").startswith("1 match")  # descriptions count
    assert run("rename", "memory/user", new_path="memory/profile/user") == (
        "Renamed context://memory/user to context://memory/profile/user."
    )
    assert run("delete", "memory/profile/user") == "Deleted context://memory/profile/user."
    assert [change.type for change in changes] == ["set", "set", "set", "set", "delete", "delete"]
    assert run("delete", "memory/profile/user").startswith(
        "Error: nothing is stored at context://memory/profile/user."
    )


def test_memory_refusals(store: Store, clock: Any) -> None:
    memory = Memory(
        store,
        clock=clock,
        allowed_keys=["user", "goal"],
        on_memory_update=lambda key, new, old: key != "goal",
    )
    tool = ContextTool(store, memory=memory)
    assert tool.run({"command": "create", "path": "memory/secret", "file_text": "x"}) == (
        "Error: context://memory/secret is not an allowed memory key. Allowed keys: "
        "context://memory/goal, context://memory/user."
    )
    assert tool.run({"command": "create", "path": "memory/goal", "file_text": "x"}) == (
        "Error: the host rejected the write to context://memory/goal. Do not retry the same "
        "change; carry on without it or ask the user."
    )
    memory.set("user", "Ann")
    assert tool.run(
        {"command": "rename", "path": "memory/user", "new_path": "memory/other"}
    ).startswith("Error: context://memory/other is not an allowed memory key.")
    closed = Memory(store, clock=clock, allowed_keys=[])
    assert ContextTool(store, memory=closed).run(
        {"command": "create", "path": "memory/user", "file_text": "x"}
    ) == (
        "Error: context://memory/user is not an allowed memory key: no memory key may be "
        "written here."
    )
    assert memory.get("goal") is None


def test_memory_expiry_applies_to_tool_reads(store: Store, clock: Any) -> None:
    memory = Memory(store, clock=clock)
    memory.set("otp", "123", ttl={"seconds": 10})
    tool = ContextTool(store, memory=memory)
    assert tool.run({"command": "view", "path": "memory/otp"}).endswith("1\t123")
    clock.advance(10)
    assert tool.run({"command": "view", "path": "memory/otp"}).startswith(
        "Error: nothing is stored at context://memory/otp."
    )
    assert tool.run({"command": "view", "path": "memory/"}) == "context://memory/ is empty."


def test_memory_without_a_memory_module(store: Store) -> None:
    tool = ContextTool(store)
    unavailable = (
        "Error: context://memory/ is not available: no memory is configured in this session. "
        "Keep what you need in context://notes/ instead."
    )
    assert tool.run({"command": "view", "path": "memory/"}) == unavailable
    assert tool.run({"command": "create", "path": "memory/a", "file_text": "x"}) == unavailable
    assert tool.run({"command": "search", "path": "memory/", "query": "x"}) == unavailable
