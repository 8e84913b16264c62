"""`ensure_valid_history`: repairs that keep every tool result right after its own call."""

from __future__ import annotations

from typing import Any

from contextchef import ensure_valid_history, prompts
from contextchef.messages import Message


def calls(*ids: str) -> Message:
    tool_calls: Any = [
        {"function": {"arguments": "{}", "name": "ls"}, "id": i, "type": "function"} for i in ids
    ]
    return {"content": None, "role": "assistant", "tool_calls": tool_calls}


def result(call_id: str, text: str = "ok") -> Message:
    return {"content": text, "role": "tool", "tool_call_id": call_id}


USER: Message = {"content": "go", "role": "user"}
NOTE: Message = {"content": "note", "role": "system"}


def test_a_system_message_inside_the_results_moves_after_them() -> None:
    history = [USER, calls("a", "b"), result("a"), NOTE, result("b"), USER]
    repaired, fixes = ensure_valid_history(history)
    assert repaired == [USER, calls("a", "b"), result("a"), result("b"), NOTE, USER]
    assert [(f.kind, f.index) for f in fixes] == [("moved_system_message", 3)]


def test_placeholders_go_before_a_system_message_that_follows_the_calls() -> None:
    repaired, fixes = ensure_valid_history([USER, calls("a"), NOTE])
    placeholder = {"content": prompts.NO_TOOL_RESULT, "role": "tool", "tool_call_id": "a"}
    assert repaired == [USER, calls("a"), placeholder, NOTE]
    assert [f.kind for f in fixes] == ["moved_system_message", "added_missing_result"]


def test_late_and_repeated_results_are_dropped() -> None:
    history = [USER, calls("a"), result("a"), result("a", "again"), USER, result("a", "late")]
    repaired, fixes = ensure_valid_history(history)
    assert repaired == [USER, calls("a"), result("a"), USER]
    assert [(f.kind, f.index) for f in fixes] == [
        ("dropped_orphan_result", 3),
        ("dropped_orphan_result", 5),
    ]
    assert "already answered" in fixes[0].detail
