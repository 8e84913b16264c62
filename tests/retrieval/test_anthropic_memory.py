"""Anthropic's native memory tool (memory_20250818) served from the context store."""

from __future__ import annotations

import pytest

from contextchef.memory import Memory
from contextchef.retrieval import ContextTool, anthropic_memory_path, handle_anthropic_memory
from contextchef.store import Store


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("/memories", "context://memory/"),
        ("/memories/", "context://memory/"),
        ("/memories/prefs.md", "context://memory/prefs.md"),
        (" /memories/a/b.md ", "context://memory/a/b.md"),
        ("/memories/../x", "context://memory/../x"),  # refused later, by the context tool
        ("/memoriesX/a", None),
        ("memories/a", None),
        ("/etc/passwd", None),
    ],
)
def test_path_mapping(path: str, expected: str | None) -> None:
    assert anthropic_memory_path(path) == expected


def test_path_mapping_to_another_namespace() -> None:
    assert anthropic_memory_path("/memories/a", "notes") == "context://notes/a"


def test_a_session_of_native_memory_commands(tool: ContextTool, memory: Memory) -> None:
    def call(**tool_input: object) -> str:
        return handle_anthropic_memory(tool, tool_input)

    assert call(command="view", path="/memories") == "context://memory/ is empty."
    assert call(command="create", path="/memories/prefs.md", file_text="- dark mode\n") == (
        "Created context://memory/prefs.md."
    )
    assert call(
        command="str_replace", path="/memories/prefs.md", old_str="dark", new_str="light"
    ) == ("Edited context://memory/prefs.md.")
    assert call(
        command="insert", path="/memories/prefs.md", insert_line=1, insert_text="- vim"
    ) == ("Inserted 1 line into context://memory/prefs.md; it is now line 2.")
    assert call(command="view", path="/memories/prefs.md", view_range=[2, -1]) == (
        "context://memory/prefs.md, lines 2-2 of 2:\n     2\t- vim"
    )
    assert call(command="rename", old_path="/memories/prefs.md", new_path="/memories/p.md") == (
        "Renamed context://memory/prefs.md to context://memory/p.md."
    )
    entry = memory.get("p.md")
    assert entry is not None
    assert entry.value == "- light mode\n- vim\n"
    assert call(command="delete", path="/memories/p.md") == "Deleted context://memory/p.md."
    assert call(command="view", path="/etc/passwd") == (
        'Error: memory paths start with /memories, but got "/etc/passwd". Use a path such as '
        "/memories/notes.md, or /memories to list everything."
    )
    assert call(command="create", path="/memories/../x", file_text="x").startswith(
        'Error: the path "context://memory/../x" is not valid'
    )
    assert call(command="view", path="context://memory/").startswith("context://memory/")
    assert handle_anthropic_memory(tool, "{bad").startswith("Error: the tool arguments")


def test_native_memory_into_notes(tool: ContextTool, store: Store) -> None:
    result = handle_anthropic_memory(
        tool, {"command": "create", "path": "/memories/a.md", "file_text": "x"}, namespace="notes"
    )
    assert result == "Created context://notes/a.md."
    assert store.namespace("notes").get("a.md") is not None
