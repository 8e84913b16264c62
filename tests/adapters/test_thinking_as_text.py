"""`preserve_thinking_as_text` on the OpenAI Chat and Gemini adapters: another provider's
reasoning (Claude's `thinking`) goes on as a `<thinking>` text before the reply instead of being
dropped; redacted thinking is opaque and never sent; without the option nothing changes."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from contextchef import ContextChef
from contextchef.adapters import GeminiAdapter, OpenAIChatAdapter, adapter_registry
from contextchef.messages import Message
from tests.adapters.samples import IMAGE_DATA, compile_checked
from tests.adapters.sdk_gemini import validate_gemini
from tests.adapters.sdk_openai import validate_chat

THOUGHT = "The user wants brevity; answer in one line."
TEXTIFIED = f"<thinking>\n{THOUGHT}\n</thinking>\n\n"


def _history(reply: Any) -> list[Message]:
    return [
        {"content": "go", "role": "user"},
        {
            "content": reply,
            "redacted_thinking": [{"data": "opaque-blob"}],
            "role": "assistant",
            "thinking": {"signature": "sig", "thinking": THOUGHT},
        },
        {"content": "next", "role": "user"},
    ]


def _openai_reply(preserve: bool, reply: Any) -> Any:
    adapter = OpenAIChatAdapter(preserve_thinking_as_text=preserve)
    return compile_checked(adapter, validate_chat, _history(reply))["messages"][2]["content"]


def _gemini_reply(preserve: bool, reply: Any) -> Any:
    adapter = GeminiAdapter(preserve_thinking_as_text=preserve)
    return compile_checked(adapter, validate_gemini, _history(reply))["contents"][1]["parts"]


Case = tuple[Callable[[bool, Any], Any], bool, Any, Any]
CASES: list[Case] = [
    (_openai_reply, False, "done", "done"),
    (_openai_reply, True, "done", TEXTIFIED + "done"),
    (_openai_reply, True, "", TEXTIFIED),
    (_gemini_reply, False, "done", [{"text": "done"}]),
    (_gemini_reply, True, "done", [{"text": TEXTIFIED + "done"}]),
    (_gemini_reply, True, "", [{"text": TEXTIFIED}]),
]


@pytest.mark.parametrize(("reply_of", "preserve", "reply", "expected"), CASES)
def test_thinking_is_kept_as_text_only_when_asked(
    reply_of: Callable[[bool, Any], Any], preserve: bool, reply: Any, expected: Any
) -> None:
    sent = reply_of(preserve, reply)
    assert sent == expected
    assert "opaque-blob" not in json.dumps(sent)


def test_gemini_puts_thinking_before_an_image_reply() -> None:
    parts = _gemini_reply(True, [IMAGE_DATA, {"text": "here", "type": "text"}])
    assert parts[0] == {"text": TEXTIFIED}
    assert "inline_data" in parts[1] and parts[2] == {"text": "here"}


def test_a_chef_given_the_option_sends_claude_thinking_to_gemini() -> None:
    registry = adapter_registry.with_adapters(
        {"gemini": GeminiAdapter(preserve_thinking_as_text=True)}
    )
    chef = ContextChef(adapters=registry).set_history(_history("done"))
    contents = chef.compile(target="gemini")["contents"]
    assert contents[1]["parts"][0]["text"] == TEXTIFIED + "done"
    plain = ContextChef().set_history(_history("done")).compile(target="gemini")
    assert THOUGHT not in json.dumps(plain)
