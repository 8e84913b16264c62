"""Conversations a provider would reject as they stand: an empty one, and one that ends with the
assistant. Every target compiles them to a request its official SDK's types accept, opened by
a user turn that claims nothing was omitted, and Gemini's ends with a `user` turn."""

from __future__ import annotations

import json
from typing import Any

import pytest

from contextchef import ContextChef, prompts
from tests.golden.test_sdk_validation import MODEL_ARGS, VALIDATORS

TARGETS = sorted(VALIDATORS)
ENDS_WITH_ASSISTANT: list[dict[str, Any]] = [
    {"role": "user", "content": "Name a prime."},
    {"role": "assistant", "content": "The first prime is"},
]


def compiled(history: list[dict[str, Any]], target: str, **guardrails: Any) -> dict[str, Any]:
    chef = ContextChef().set_system_prompt("Be brief.").set_history(history)
    if guardrails:
        chef.with_guardrails(**guardrails)
    payload = dict(chef.compile(target=target))
    VALIDATORS[target]({**MODEL_ARGS[target], **payload})
    return payload


def turns(payload: dict[str, Any]) -> list[dict[str, Any]]:
    """The conversation turns of a payload, whatever the target (system messages left out)."""
    for key in ("messages", "input", "contents"):
        if key in payload:
            return [turn for turn in payload[key] if turn.get("role") != "system"]
    raise AssertionError(f"no conversation in {sorted(payload)}")


@pytest.mark.parametrize("target", TARGETS)
def test_an_empty_conversation_opens_with_the_placeholder_user_turn(target: str) -> None:
    conversation = turns(compiled([], target))
    assert len(conversation) == 1 and conversation[0]["role"] == "user"
    text = json.dumps(conversation[0])
    assert prompts.CONVERSATION_STARTS in text
    assert prompts.CONVERSATION_CONTINUES not in text  # nothing was omitted


@pytest.mark.parametrize("target", TARGETS)
def test_an_empty_conversation_with_a_prefill_claims_nothing_omitted(target: str) -> None:
    payload = compiled([], target, prefill="{")
    text = json.dumps(payload)
    assert prompts.CONVERSATION_STARTS in text
    assert prompts.CONVERSATION_CONTINUES not in text
    assert turns(payload)[0]["role"] == "user"


@pytest.mark.parametrize("target", TARGETS)
def test_a_conversation_ending_with_the_assistant_is_accepted(target: str) -> None:
    payload = compiled(ENDS_WITH_ASSISTANT, target)
    assert "The first prime is" in json.dumps(payload)


def test_gemini_turns_trailing_assistant_text_into_the_prefill_instruction() -> None:
    contents = compiled(ENDS_WITH_ASSISTANT, "gemini")["contents"]
    assert contents[-1]["role"] == "user"
    assert contents == [
        {
            "parts": [
                {"text": "Name a prime."},
                {"text": prompts.prefill_instruction("The first prime is")},
            ],
            "role": "user",
        }
    ]


def test_gemini_joins_trailing_assistant_text_and_a_prefill() -> None:
    contents = compiled(ENDS_WITH_ASSISTANT, "gemini", prefill=" 2")["contents"]
    assert contents[-1] == {
        "parts": [
            {"text": "Name a prime."},
            {"text": prompts.prefill_instruction("The first prime is 2")},
        ],
        "role": "user",
    }


def test_gemini_keeps_a_model_turn_that_is_followed_by_the_user() -> None:
    history = [*ENDS_WITH_ASSISTANT, {"role": "user", "content": "Go on."}]
    contents = compiled(history, "gemini")["contents"]
    assert [content["role"] for content in contents] == ["user", "model", "user"]


def test_anthropic_keeps_the_trailing_assistant_text_as_a_prefill() -> None:
    messages = compiled(ENDS_WITH_ASSISTANT, "anthropic")["messages"]
    assert messages[-1] == {
        "content": [{"text": "The first prime is", "type": "text"}],
        "role": "assistant",
    }
