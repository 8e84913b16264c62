"""Where the tail goes: the last user message, a new one after tool results, before prefill."""

from __future__ import annotations

from typing import Any

from contextchef import prompts
from contextchef.placement.assembler import assemble, compose_tail, inject_tail
from contextchef.placement.guardrail import make_guardrails
from contextchef.placement.state import render_dynamic_state

STATE = render_dynamic_state(dict, {"task": "X"})
TOOL_CALL: Any = {
    "role": "assistant",
    "content": None,
    "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}],
}


def test_state_goes_into_the_last_user_message_followed_by_the_anchor() -> None:
    history: Any = [{"role": "user", "content": "hi"}]
    sandwich = assemble([{"role": "system", "content": "S"}], history, state=STATE)
    assert sandwich.messages[0]["content"] == (
        "hi\n\n<dynamic_state>\n  <task>X</task>\n</dynamic_state>\n\n" + prompts.STATE_ANCHOR
    )
    assert history[0]["content"] == "hi"
    assert sandwich.tail_index == 0


def test_empty_history_gets_a_user_message_holding_the_tail() -> None:
    sandwich = assemble([{"role": "system", "content": "S"}], [], state=STATE)
    assert [m["role"] for m in sandwich.messages] == ["user"]
    assert sandwich.messages[0]["content"].startswith("<dynamic_state>")


def test_after_a_tool_result_a_new_user_message_follows_and_earlier_messages_stay() -> None:
    user: Any = {"role": "user", "content": "q"}
    history: Any = [user, TOOL_CALL, {"role": "tool", "tool_call_id": "c", "content": "r"}]
    sandwich = assemble([], history, state=STATE)
    assert [m["role"] for m in sandwich.messages] == ["user", "assistant", "tool", "user"]
    assert sandwich.messages[0] is user
    assert sandwich.tail_index == 3


def test_a_trailing_assistant_prefill_stays_last() -> None:
    history: Any = [{"role": "user", "content": "q"}, {"role": "assistant", "content": "Sure"}]
    sandwich = assemble([], history, state=STATE)
    assert sandwich.messages[-1] == {"role": "assistant", "content": "Sure"}
    assert "<dynamic_state>" in sandwich.messages[0]["content"]


def test_with_only_assistant_messages_the_tail_goes_before_them() -> None:
    messages, index = inject_tail([{"role": "assistant", "content": "p"}], "T")
    assert messages == [{"role": "user", "content": "T"}, {"role": "assistant", "content": "p"}]
    assert index == 0


def test_system_placement_adds_a_system_message_and_no_anchor() -> None:
    state = render_dynamic_state(dict, {"task": "X"}, placement="system")
    sandwich = assemble([], [{"role": "user", "content": "hi"}], state=state)
    assert sandwich.messages[0] == {"role": "user", "content": "hi"}
    assert sandwich.messages[-1]["role"] == "system"
    assert sandwich.messages[-1]["content"].startswith(prompts.SYSTEM_STATE_HEADER + "\n<dynamic")
    assert sandwich.tail_index is None


def test_attachments_are_kept_when_the_tail_is_appended() -> None:
    image = {"type": "image", "url": "https://example.com/a.png"}
    history: Any = [{"role": "user", "content": [{"type": "text", "text": "look"}, image]}]
    content = assemble([], history, state=STATE).messages[0]["content"]
    assert content[:2] == [{"type": "text", "text": "look"}, image]
    assert content[2]["text"].startswith("<dynamic_state>")


def test_a_cache_breakpoint_on_the_last_user_message_keeps_it_unchanged() -> None:
    marked: Any = {"role": "user", "content": "q", "_cache_breakpoint": True}
    sandwich = assemble([], [marked], state=STATE)
    assert sandwich.messages[0] is marked
    assert sandwich.messages[1]["content"].startswith("<dynamic_state>")


def test_guardrail_closes_the_tail_and_prefill_is_passed_on() -> None:
    guard = make_guardrails({"output_tag": "final"}, "<final>")
    sandwich = assemble([], [{"role": "user", "content": "q"}], state=STATE, guardrails=guard)
    content = sandwich.messages[0]["content"]
    assert content.index("<dynamic_state>") < content.index(prompts.STATE_ANCHOR)
    assert content.endswith(prompts.xml_output_instruction("final"))
    assert sandwich.prefill == "<final>"


def test_context_blocks_alone_carry_no_anchor() -> None:
    assert compose_tail(context_blocks=["<memory/>"]) == "<memory/>"
    assert compose_tail() == ""
    assert compose_tail(context_blocks=["m"], state_blocks=["s"], closing_blocks=["g"]) == (
        f"m\n\ns\n\n{prompts.STATE_ANCHOR}\n\ng"
    )
