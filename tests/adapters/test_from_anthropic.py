"""`from_anthropic`: native Messages API history into the IR, and back through the adapter."""

from __future__ import annotations

from typing import Any

import anthropic
import pytest

from contextchef.adapters import AdapterInput, AnthropicAdapter, ImportedHistory, from_anthropic
from contextchef.errors import MessageError
from contextchef.messages import validate_history
from tests.adapters.sdk_anthropic import validate_request

EPHEMERAL = {"type": "ephemeral"}


def _text(text: str, **extra: Any) -> dict[str, Any]:
    return {"text": text, "type": "text", **extra}


def _compile(imported: ImportedHistory) -> dict[str, Any]:
    return AnthropicAdapter().compile(AdapterInput(imported.system, imported.history))


def _rich() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """A conversation already in the adapter's normal form: block lists, breakpoints last."""
    system = [_text("You plan trips.", cache_control=EPHEMERAL), _text("Be brief.")]
    pdf = {"data": "JVBER", "media_type": "application/pdf", "type": "base64"}
    messages: list[dict[str, Any]] = [
        {
            "role": "user",
            "content": [
                _text("Plan Oslo."),
                {
                    "source": {"data": "iVBOR", "media_type": "image/png", "type": "base64"},
                    "type": "image",
                },
                {"source": pdf, "title": "visa.pdf", "type": "document"},
                {"source": {"type": "url", "url": "https://x.test/a.pdf"}, "type": "document"},
                {
                    "cache_control": EPHEMERAL,
                    "source": {"data": "notes", "media_type": "text/plain", "type": "text"},
                    "type": "document",
                },
            ],
        },
        {
            "role": "assistant",
            "content": [
                {"signature": "sig-1", "thinking": "two lookups", "type": "thinking"},
                {"data": "enc", "type": "redacted_thinking"},
                _text("Checking."),
                {"id": "toolu_1", "input": {}, "name": "flights", "type": "tool_use"},
                {
                    "id": "toolu_2",
                    "input": {"city": "Oslo", "when": {"month": 5, "year": 2026}},
                    "name": "hotels",
                    "type": "tool_use",
                },
            ],
        },
        {
            "role": "user",
            "content": [
                {"content": "no flights", "tool_use_id": "toolu_1", "type": "tool_result"},
                {
                    "cache_control": EPHEMERAL,
                    "content": [
                        _text("two hotels"),
                        {"source": {"type": "url", "url": "https://x.test/h.jpg"}, "type": "image"},
                    ],
                    "tool_use_id": "toolu_2",
                    "type": "tool_result",
                },
                _text("Pick one."),
            ],
        },
        {
            "role": "assistant",
            "content": [
                {"signature": "sig-2", "thinking": "compare", "type": "thinking"},
                _text("The first."),
                {"signature": "sig-3", "thinking": "verify", "type": "thinking"},
                _text("Booked.", cache_control=EPHEMERAL),
            ],
        },
        {"role": "user", "content": [_text("Thanks, ünïcode ✓.")]},
    ]
    return system, messages


def test_rich_conversation_round_trips_through_the_adapter() -> None:
    system, messages = _rich()
    imported = from_anthropic(messages, system=system)
    assert imported.fixes == []
    validate_history([*imported.system, *imported.history])
    payload = _compile(imported)
    validate_request(payload)
    assert payload == {"messages": messages, "system": system}


def test_mapping_into_the_ir() -> None:
    system, messages = _rich()
    imported = from_anthropic(messages, system=system)
    assert imported.system == [
        {"role": "system", "content": "You plan trips.", "_cache_breakpoint": True},
        {"role": "system", "content": "Be brief."},
    ]
    roles = [m["role"] for m in imported.history]
    assert roles == ["user", "assistant", "tool", "tool", "user", "assistant", "assistant", "user"]
    call = imported.history[1]["tool_calls"][1]
    assert call == {
        "id": "toolu_2",
        "type": "function",
        "function": {
            "name": "hotels",
            "arguments": '{"city":"Oslo","when":{"month":5,"year":2026}}',
        },
    }
    assert imported.history[3]["_cache_breakpoint"] is True
    assert imported.history[4] == {"role": "user", "content": "Pick one."}
    assert imported.history[5]["thinking"] == {"thinking": "compare", "signature": "sig-2"}
    assert imported.history[6]["thinking"] == {"thinking": "verify", "signature": "sig-3"}


def test_string_content_and_string_system() -> None:
    imported = from_anthropic(
        [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}],
        system="Be kind.",
    )
    assert imported == ImportedHistory(
        [{"role": "system", "content": "Be kind."}],
        [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}],
        [],
    )
    assert from_anthropic([], system="").system == []


def test_sdk_response_objects_are_accepted() -> None:
    reply = anthropic.types.Message.model_validate(
        {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude-contextchef-test",
            "content": [
                {"type": "thinking", "thinking": "hm", "signature": "s"},
                {"type": "text", "text": "Let me check.", "citations": None},
                {
                    "type": "tool_use",
                    "id": "toolu_9",
                    "name": "ls",
                    "input": {"path": "/", "all": True},
                },
            ],
            "stop_reason": "tool_use",
            "stop_sequence": None,
            "usage": {"input_tokens": 1, "output_tokens": 1},
        }
    )
    result = {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": "toolu_9", "content": "a b"}],
    }
    expected = [
        {"role": "user", "content": "list it"},
        {
            "role": "assistant",
            "content": "Let me check.",
            "thinking": {"thinking": "hm", "signature": "s"},
            "tool_calls": [
                {
                    "id": "toolu_9",
                    "type": "function",
                    "function": {"name": "ls", "arguments": '{"all":true,"path":"/"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "toolu_9", "content": "a b"},
    ]
    first = {"role": "user", "content": "list it"}
    assert from_anthropic([first, reply, result]).history == expected
    as_param = {"role": "assistant", "content": reply.content}
    assert from_anthropic([first, as_param, result]).history == expected


def test_repairs_are_returned() -> None:
    imported = from_anthropic(
        [
            {"role": "user", "content": "go"},
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "t1", "name": "f", "input": {}}],
            },
            {"role": "user", "content": "never mind"},
        ],
        repair=True,
    )
    assert [fix.kind for fix in imported.fixes] == ["added_missing_result"]
    assert [m["role"] for m in imported.history] == ["user", "assistant", "tool", "user"]


def test_compaction_block_is_kept_verbatim_and_pinned() -> None:
    block = {
        "type": "compaction",
        "content": "Summary.",
        "encrypted_content": "e",
        "cache_control": EPHEMERAL,
    }
    imported = from_anthropic(
        [{"role": "user", "content": "hi"}, {"role": "assistant", "content": [block, _text("ok")]}]
    )
    assistant = imported.history[1]
    assert assistant["anthropic_compaction"] == {
        "content": "Summary.",
        "encrypted_content": "e",
        "type": "compaction",
    }
    assert assistant["pinned"] is True
    assert assistant["_cache_breakpoint"] is True
    validate_history(imported.history)


def test_mid_history_system_role_stays_in_the_history() -> None:
    imported = from_anthropic(
        [
            {"role": "user", "content": "a"},
            {"role": "system", "content": [_text("note", cache_control=EPHEMERAL)]},
            {"role": "assistant", "content": "b"},
        ]
    )
    assert imported.history[1] == {"role": "system", "content": "note", "_cache_breakpoint": True}


@pytest.mark.parametrize(
    ("messages", "where"),
    [
        (
            [
                {
                    "role": "user",
                    "content": [{"type": "server_tool_use", "id": "s", "name": "web", "input": {}}],
                }
            ],
            r"message 0, field 'content\[0\]'.*server_tool_use",
        ),
        (
            [{"role": "user", "content": "a"}, {"role": "tool", "content": "x"}],
            r"message 1, field 'role'",
        ),
        (
            [
                {
                    "role": "user",
                    "content": [{"type": "image", "source": {"type": "file", "file_id": "f"}}],
                }
            ],
            r"message 0.*'file'",
        ),
        ([{"role": "user", "content": [{"type": "tool_result"}]}], r"needs 'tool_use_id'"),
        ([{"role": "user", "content": 5}], r"message 0, field 'content'"),
        (
            [
                {"role": "user", "content": "a"},
                {
                    "role": "assistant",
                    "content": [
                        {"type": "tool_use", "id": "t", "name": "f", "input": {}},
                        {"type": "thinking", "thinking": "late", "signature": "s"},
                    ],
                },
            ],
            r"message 1, field 'content\[1\]'.*after a tool_use",
        ),
    ],
)
def test_unsupported_input_names_the_message_and_block(messages: Any, where: str) -> None:
    with pytest.raises(MessageError, match=where):
        from_anthropic(messages)


def test_text_after_a_tool_call_is_kept_ahead_of_the_calls() -> None:
    imported = from_anthropic(
        [
            {"role": "user", "content": "a"},
            {
                "role": "assistant",
                "content": [
                    {"type": "tool_use", "id": "t", "name": "f", "input": {}},
                    _text("then"),
                ],
            },
        ],
        repair=True,
    )
    assert imported.history[1]["content"] == "then"
    assert [c["id"] for c in imported.history[1]["tool_calls"]] == ["t"]
