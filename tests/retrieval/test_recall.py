"""The recall path: archived spans read back as transcripts; everything else unchanged."""

from __future__ import annotations

import json

from contextchef.retrieval import render_recalled
from contextchef.store.archive import archive_document


def test_an_archived_span_renders_as_a_transcript() -> None:
    span = [
        {"role": "system", "content": "Be terse."},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "What is in this?"},
                {"type": "image", "media_type": "image/png", "data": "AAAA"},
                {"type": "document", "url": "https://example.com/spec.pdf"},
                {"type": "image", "url": "data:image/png;base64,AAAA"},
            ],
        },
        {
            "role": "assistant",
            "content": "Let me check.",
            "thinking": {"thinking": "Read the file first.", "signature": "sig"},
            "tool_calls": [
                {
                    "id": "t1",
                    "type": "function",
                    "function": {"name": "read_file", "arguments": '{"path": "a.py"}'},
                },
                {"id": "t2", "type": "function", "function": {"name": "ls", "arguments": "{}"}},
            ],
        },
        {"role": "tool", "tool_call_id": "t1", "content": "print('hi')"},
        {"role": "tool", "tool_call_id": "t2", "content": "a.py"},
        {"role": "tool", "tool_call_id": "unknown", "content": "?"},
        {"role": "tool", "tool_call_id": "t3", "name": "named", "content": None},
    ]
    assert render_recalled(archive_document(span)) == (
        "[Archived conversation: 7 messages]\n"
        "\n"
        "system:\n"
        "Be terse.\n"
        "\n"
        "user:\n"
        "What is in this?\n"
        "[attachment: image image/png]\n"
        "[attachment: document https://example.com/spec.pdf]\n"
        "[attachment: image]\n"
        "\n"
        "assistant:\n"
        "[thinking]\n"
        "Read the file first.\n"
        "Let me check.\n"
        '[tool call] read_file({"path": "a.py"})\n'
        "[tool call] ls({})\n"
        "\n"
        "[tool result for read_file]\n"
        "print('hi')\n"
        "\n"
        "[tool result for ls]\n"
        "a.py\n"
        "\n"
        "[tool result]\n"
        "?\n"
        "\n"
        "[tool result for named]"
    )


def test_one_message_is_singular() -> None:
    rendered = render_recalled(archive_document([{"role": "user", "content": "hi"}]))
    assert rendered == "[Archived conversation: 1 message]\n\nuser:\nhi"


def test_other_content_passes_through_unchanged() -> None:
    for content in (
        "plain tool output",
        "",
        '{"messages": [], "version": 2}',
        '{"messages": "no", "version": 1}',
        '{"messages": [1, 2',
        "[1, 2]",
        '{"version": 1}',
    ):
        assert render_recalled(content) == content


def test_malformed_messages_inside_a_span_never_fail() -> None:
    document = json.dumps(
        {
            "version": 1,
            "messages": [
                "a bare string",
                {"content": {"odd": True}},
                {"role": "user", "content": [{"type": "audio"}, 3]},
                {"role": "assistant", "tool_calls": [{"function": {"arguments": {"a": 1}}}, 7]},
            ],
        }
    )
    assert render_recalled(document) == (
        "[Archived conversation: 4 messages]\n"
        "\n"
        '"a bare string"\n'
        "\n"
        "message:\n"
        '{"odd": true}\n'
        "\n"
        "user:\n"
        '{"type": "audio"}\n'
        "3\n"
        "\n"
        "assistant:\n"
        '[tool call] ?({"a": 1})'
    )
