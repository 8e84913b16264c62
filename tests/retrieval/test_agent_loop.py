"""A scripted 30-turn agent loop: a fake model uses the context tool; everything survives a
reopen of the filesystem store."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from contextchef import ContextChef, FileSystemBackend

BIG_OUTPUT = "\n".join(f"test_{i} PASSED" for i in range(3000)).replace(
    "test_1234 PASSED", "test_1234 FAILED: expected 3, got 4"
)


class FakeModel:
    """Emits one scripted tool call per turn, reading what earlier results said."""

    def __init__(self) -> None:
        self.turn = 0
        self.offloaded_uri: str | None = None

    def reply(self, payload: Any) -> dict[str, Any]:
        self.turn += 1
        last = payload["messages"][-1]["content"]
        match = re.search(r"context://vfs/vfs_[0-9a-f]{16}\.txt", json.dumps(payload))
        if match and self.offloaded_uri is None:
            self.offloaded_uri = match.group(0)
        script = {
            1: ("run_tests", {}),
            2: (
                "context",
                {"command": "view", "path": self.offloaded_uri, "view_range": [1230, 1240]},
            ),
            3: (
                "context",
                {"command": "create", "path": "notes/plan.md", "file_text": "1. fix test_1234\n"},
            ),
            4: (
                "context",
                {
                    "command": "str_replace",
                    "path": "notes/plan.md",
                    "old_str": "1. fix test_1234",
                    "new_str": "1. fix test_1234 (off by one)",
                },
            ),
            5: (
                "context",
                {
                    "command": "insert",
                    "path": "notes/plan.md",
                    "insert_line": 1,
                    "insert_text": "2. rerun the suite",
                },
            ),
            6: (
                "context",
                {
                    "command": "create",
                    "path": "memory/project_style",
                    "file_text": "Prefer small diffs.",
                },
            ),
        }
        name, arguments = script.get(self.turn, ("context", {"command": "view", "path": "notes/"}))
        assert last is not None
        return {
            "id": f"call_{self.turn}",
            "type": "function",
            "function": {"name": name, "arguments": json.dumps(arguments)},
        }


def test_thirty_turns_with_offload_notes_and_memory_then_reopen(tmp_path: Path) -> None:
    root = tmp_path / ".context"

    def make_chef() -> ContextChef:
        return ContextChef(store=FileSystemBackend(root), tools="unified", memory={})

    chef = make_chef()
    chef.set_system_prompt("You are a careful agent.")
    model = FakeModel()
    history: list[dict[str, Any]] = [{"role": "user", "content": "Make the suite green."}]
    results: dict[int, str] = {}
    for turn in range(1, 31):
        payload = chef.set_history(history).compile(target="anthropic" if turn % 2 else "openai")
        call = model.reply(payload)
        history.append({"role": "assistant", "content": None, "tool_calls": [call]})
        name = call["function"]["name"]
        if chef.owns_tool(name):
            output = chef.handle_tool(name, call["function"]["arguments"])
        else:
            output = BIG_OUTPUT
        results[turn] = output
        history.append({"role": "tool", "tool_call_id": call["id"], "content": output})
        history.append({"role": "user", "content": f"Turn {turn} done; go on."})

    assert model.offloaded_uri is not None
    assert "  1235\ttest_1234 FAILED: expected 3, got 4" in results[2]
    assert "test_1300" not in results[2]  # only the asked range
    assert not results[4].startswith("Error") and not results[5].startswith("Error")
    assert not results[6].startswith("Error")
    sent = chef.compile(target="openai")
    assert "Prefer small diffs." in json.dumps(sent)
    assert BIG_OUTPUT not in json.dumps(sent)

    reopened = make_chef()
    store = reopened.store
    plan = store.namespace("notes").get("plan.md")
    assert plan is not None
    assert plan.content == "1. fix test_1234 (off by one)\n2. rerun the suite\n"
    address = store.parse_uri(model.offloaded_uri)
    assert address is not None
    stored = store.namespace("vfs").get(address.path)
    assert stored is not None and stored.content == BIG_OUTPUT
    memory = reopened.memory.get("project_style")
    assert memory is not None and memory.value == "Prefer small diffs."
    view = reopened.handle_tool("context", {"command": "view", "path": "notes/plan.md"})
    assert "2. rerun the suite" in view
