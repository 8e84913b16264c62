"""The message IR: validation at the boundary, turn grouping, repairs, private copies."""

from __future__ import annotations

from typing import Any

import pytest

from contextchef import ensure_valid_history, prompts
from contextchef._memo import MessageIntake
from contextchef.errors import MessageError
from contextchef.messages import content_text, group_turns, validate_history, validate_message


def call(call_id: str, name: str = "ls", arguments: str = "{}") -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def assistant_calls(*ids: str) -> dict[str, Any]:
    return {"role": "assistant", "content": None, "tool_calls": [call(i) for i in ids]}


def result(call_id: str, text: str = "ok") -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": text}


@pytest.mark.parametrize(
    ("message", "field", "fragment"),
    [
        ({"role": "robot", "content": "x"}, "role", "unknown role 'robot'"),
        ({"role": "user", "content": 42}, "content", "content must be a string"),
        ({"role": "tool", "content": "x"}, "tool_call_id", "needs a non-empty 'tool_call_id'"),
        (
            {"role": "user", "content": [{"type": "image_url", "image_url": {"url": "u"}}]},
            "content[0]",
            "from_openai()",
        ),
        (
            {"role": "user", "content": [{"type": "image", "data": "AAA"}]},
            "content[0]",
            "needs a 'media_type'",
        ),
        (
            {"role": "assistant", "tool_calls": [{"id": "c", "function": {"name": "f"}}]},
            "tool_calls[0].function.arguments",
            "JSON string",
        ),
        (
            {"role": "user", "tool_calls": [call("c")]},
            "tool_calls",
            "only assistant messages",
        ),
        ({"role": "assistant", "thinking": "hmm"}, "thinking", "thinking must be a dict"),
    ],
)
def test_malformed_messages_name_index_and_field(
    message: dict[str, Any], field: str, fragment: str
) -> None:
    with pytest.raises(MessageError) as info:
        validate_history([{"role": "user", "content": "fine"}, message])
    assert info.value.index == 1
    assert info.value.field == field
    assert fragment in str(info.value)
    assert str(info.value).startswith(f"message 1, field {field!r}: ")


def test_a_message_that_is_not_a_dict_is_refused() -> None:
    with pytest.raises(MessageError, match="message 0: a message must be a dict, got str"):
        validate_message("hello", 0)


def test_an_sdk_object_gets_a_hint_to_convert_it() -> None:
    from openai.types.chat import ChatCompletionMessage

    message = ChatCompletionMessage(role="assistant", content="hi")
    with pytest.raises(MessageError, match="from_openai"):
        validate_message(message, 3)


def test_valid_rich_messages_pass_unchanged() -> None:
    message = {
        "role": "assistant",
        "content": [{"type": "text", "text": "see"}],
        "tool_calls": [call("c1")],
        "thinking": {"thinking": "plan", "signature": "sig"},
        "redacted_thinking": [{"data": "blob"}],
        "pinned": True,
        "_cache_breakpoint": True,
    }
    assert validate_message(message) is message


def test_content_text_ignores_attachments() -> None:
    message: Any = {
        "role": "user",
        "content": [
            {"type": "text", "text": "a"},
            {"type": "image", "url": "https://x/y.png"},
            {"type": "text", "text": "b"},
        ],
    }
    assert content_text(message) == "ab"
    assert content_text({"role": "assistant", "content": None}) == ""


def test_turns_keep_calls_with_their_results() -> None:
    history: Any = [
        {"role": "user", "content": "q"},
        assistant_calls("a", "b"),
        result("a"),
        result("b"),
        {"role": "assistant", "content": "done"},
        {"role": "user", "content": "next"},
    ]
    turns = group_turns(history)
    assert [(t.start, t.stop) for t in turns] == [(0, 1), (1, 4), (4, 5), (5, 6)]
    assert [m["role"] for m in turns[1].messages] == ["assistant", "tool", "tool"]


def test_pinning_one_message_pins_its_turn() -> None:
    history: Any = [assistant_calls("a"), {**result("a"), "pinned": True}]
    assert group_turns(history)[0].pinned


def test_repairs_are_reported_and_the_input_is_untouched() -> None:
    history: Any = [
        {"role": "assistant", "content": "hello"},
        result("ghost"),
        assistant_calls("a", "b"),
        result("b"),
        {"role": "user", "content": "next"},
    ]
    before = [dict(m) for m in history]
    repaired, fixes = ensure_valid_history(history)
    assert history == before
    assert [f.kind for f in fixes] == [
        "dropped_orphan_result",
        "added_missing_result",
        "added_leading_user",
    ]
    assert [m["role"] for m in repaired] == [
        "user",
        "assistant",
        "assistant",
        "tool",
        "tool",
        "user",
    ]
    assert repaired[0]["content"] == prompts.CONVERSATION_OPENS_WITH_ASSISTANT
    assert repaired[4] == {"role": "tool", "tool_call_id": "a", "content": prompts.NO_TOOL_RESULT}


def test_missing_result_at_the_end_is_added() -> None:
    history: Any = [{"role": "user", "content": "q"}, assistant_calls("a")]
    repaired, fixes = ensure_valid_history(history)
    assert repaired[-1]["tool_call_id"] == "a"
    assert fixes[0].kind == "added_missing_result"


def test_a_valid_history_needs_no_repair() -> None:
    history: Any = [
        {"role": "system", "content": "s"},
        {"role": "user", "content": "q"},
        assistant_calls("a"),
        result("a"),
    ]
    repaired, fixes = ensure_valid_history(history)
    assert repaired == history
    assert fixes == []
    assert ensure_valid_history([]) == ([], [])


def test_intake_reuses_copies_of_unchanged_messages_and_recopies_changed_ones() -> None:
    intake = MessageIntake()
    first: Any = {"role": "user", "content": "a"}
    second: Any = {"role": "assistant", "content": None, "tool_calls": [call("c")]}
    taken = intake.take([first, second])
    assert taken[0] == first and taken[0] is not first
    again = intake.take([first, second])
    assert again[0] is taken[0] and again[1] is taken[1]
    second["tool_calls"][0]["function"]["arguments"] = '{"x": 1}'
    changed = intake.take([first, second])
    assert changed[0] is taken[0]
    assert changed[1] is not taken[1]
    assert changed[1]["tool_calls"][0]["function"]["arguments"] == '{"x": 1}'
    assert taken[1]["tool_calls"][0]["function"]["arguments"] == "{}"


def test_intake_keeps_nothing_when_a_message_is_invalid() -> None:
    intake = MessageIntake()
    good: Any = {"role": "user", "content": "a"}
    copy = intake.take([good])[0]
    with pytest.raises(MessageError):
        intake.take([good, {"role": "nope"}])
    assert intake.take([good])[0] is copy


def test_tool_call_arguments_keep_integers_beyond_64_bits() -> None:
    """orjson (the `fast` extra) reads such an integer as a float; the arguments must come back
    as `json.loads` gives them."""
    from contextchef.messages import _parse_arguments

    raw = '{"id": 123456789012345678901234567890, "n": -98765432109876543210}'
    assert _parse_arguments(raw) == {
        "id": 123456789012345678901234567890,
        "n": -98765432109876543210,
    }
