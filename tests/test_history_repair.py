"""`ensure_valid_history`: repairs that keep every tool result right after its own call."""

from __future__ import annotations

import json
from typing import Any

import pytest

from contextchef import ContextChef, ensure_valid_history, prompts
from contextchef._repair import HistoryRepair
from contextchef._sequences import identical_prefix
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


# -- the placeholder user turn: what it says is true of the history --------------------------

OPENS = prompts.CONVERSATION_OPENS_WITH_ASSISTANT
CONTINUES = prompts.CONVERSATION_CONTINUES
REPLY: Message = {"content": "Hello! How can I help?", "role": "assistant"}

LEADING_CASES: list[tuple[str, list[Message], str | None]] = [
    ("the assistant greets first", [REPLY, USER], OPENS),
    ("after the system prompt", [NOTE, REPLY, USER], OPENS),
    ("with a call first", [calls("a"), result("a"), USER], OPENS),
    ("an orphan result first", [result("gone"), REPLY, USER], CONTINUES),
    (
        "an orphan after the system prompt",
        [NOTE, result("gone"), calls("a"), result("a")],
        CONTINUES,
    ),
    ("a user first", [USER, REPLY], None),
    ("a user first, an orphan before it", [result("gone"), USER, REPLY], None),
]


@pytest.mark.parametrize(
    ("history", "expected"),
    [case[1:] for case in LEADING_CASES],
    ids=[case[0] for case in LEADING_CASES],
)
def test_the_placeholder_user_turn_says_how_the_history_begins(
    history: list[Message], expected: str | None
) -> None:
    repaired, fixes = ensure_valid_history(history)
    leading = next(m for m in repaired if m["role"] != "system")
    if expected is None:
        assert leading == USER and "added_leading_user" not in {f.kind for f in fixes}
    else:
        assert leading == {"content": expected, "role": "user"}
    # the incremental pass agrees, built up message by message
    repair = HistoryRepair()
    for end in range(1, len(history) + 1):
        step = repair.run(history[:end])
    assert step == (repaired, fixes)


@pytest.mark.parametrize("target", ["openai", "openai-responses", "anthropic", "gemini"])
def test_a_chef_never_claims_an_omission_for_a_history_the_assistant_opens(target: str) -> None:
    chef = ContextChef().set_history([REPLY, {"content": "Tell me a joke.", "role": "user"}])
    text = json.dumps(chef.compile(target=target))
    assert OPENS in text and CONTINUES not in text


GROWING: list[Message] = [
    NOTE,
    result("gone"),
    REPLY,
    calls("a", "b"),
    NOTE,
    result("a"),
    USER,
    calls("a"),
    result("a"),
    result("a"),
    calls("c"),
    USER,
    REPLY,
]


@pytest.mark.parametrize("start", range(len(GROWING)))
def test_a_resumed_repair_vouches_only_for_what_it_kept(start: int) -> None:
    """Grown one message at a time (from every starting point), each repaired history equals
    `ensure_valid_history`'s, and its lineage from the previous one claims no more shared
    messages than the two have (the compile's memos skip comparing those)."""
    repair = HistoryRepair()
    before: tuple[Message, ...] = ()
    for end in range(start + 1, len(GROWING) + 1):
        history = GROWING[start:end]
        repaired, fixes, lineage = repair.resume(history)
        assert (list(repaired), list(fixes)) == ensure_valid_history(history)
        assert lineage.base is before and lineage.sequence is repaired
        assert lineage.shared <= identical_prefix(before, repaired)
        before = repaired
    assert lineage.shared > 0 or len(GROWING) - start < 3
