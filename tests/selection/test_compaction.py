"""Durable compaction utilities: summaries from the user's model, mechanical clearing."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from contextchef import prompts
from contextchef.errors import ConfigError
from contextchef.selection.compaction import (
    asummarize_history,
    compact_history,
    compact_messages,
    format_summary,
    plan_compaction,
    prepare_for_summary,
    summarize_history,
)


def call(call_id: str, name: str = "bash") -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": "{}"}}


def tool_turn(call_id: str, output: str = "out", name: str = "bash") -> list[Any]:
    return [
        {"role": "assistant", "content": None, "tool_calls": [call(call_id, name)]},
        {"role": "tool", "tool_call_id": call_id, "content": output},
    ]


HISTORY: list[Any] = [
    {"role": "system", "content": "sys"},
    {"role": "user", "content": "u1"},
    {"role": "assistant", "content": "a1"},
    {"role": "user", "content": "u2"},
    *tool_turn("c1"),
    {"role": "user", "content": "u3"},
]


def test_format_summary_keeps_only_the_summary_block() -> None:
    raw = "<analysis>thinking aloud</analysis>\n<summary>\nKeep this.\n\n\n\nAnd this.\n</summary>"
    assert format_summary(raw) == "Keep this.\n\nAnd this."
    assert format_summary("  plain text  ") == "plain text"


def test_the_transcript_is_plain_alternating_text_ending_with_the_instruction() -> None:
    messages: list[Any] = [
        {
            "role": "user",
            "content": [{"type": "text", "text": "see"}, {"type": "image", "url": "u"}],
        },
        *tool_turn("c1", "x" * 500, name="grep"),
        {"role": "assistant", "content": "found"},
    ]
    transcript = prepare_for_summary(messages, "INSTRUCT", tool_result_stub_threshold=100)
    roles = [m["role"] for m in transcript]
    assert all(a != b for a, b in itertools.pairwise(roles))
    text = "\n".join(str(m["content"]) for m in transcript)
    assert "[image: u]" in text
    assert "[called grep with {}]" in text
    assert prompts.tool_result_stub("grep", 500) in text
    assert "x" * 500 not in text
    assert transcript[-1]["role"] == "user" and transcript[-1]["content"].endswith("INSTRUCT")
    assert "tool_calls" not in str(transcript)


def test_summarize_history_calls_the_model_once_and_formats_its_answer() -> None:
    seen: list[Any] = []

    def model(messages: list[Any]) -> str:
        seen.append(messages)
        return "<summary>S</summary>"

    out = summarize_history(
        HISTORY[1:3], model, guidelines=["keep numbers", " "], extra_instructions="be short"
    )
    assert out == "S"
    assert len(seen) == 1
    last = seen[0][-1]["content"]
    assert prompts.COMPACTION_INSTRUCTION in last
    assert f"{prompts.GUIDELINES_HEADER}\n1. keep numbers" in last
    assert last.endswith(f"{prompts.EXTRA_INSTRUCTIONS_HEADER}\nbe short")
    assert summarize_history([], model) == "" and len(seen) == 1


def test_model_errors_propagate_and_async_models_need_the_async_api() -> None:
    def broken(messages: Any) -> str:
        raise RuntimeError("model down")

    with pytest.raises(RuntimeError, match="model down"):
        summarize_history(HISTORY[1:3], broken)

    async def async_model(messages: Any) -> str:
        return "S"

    with pytest.raises(ConfigError, match="awaitable"):
        summarize_history(HISTORY[1:3], async_model)


async def test_asummarize_history_awaits_an_async_model() -> None:
    async def async_model(messages: Any) -> str:
        return "<summary>async S</summary>"

    assert await asummarize_history(HISTORY[1:3], async_model) == "async S"


def test_plan_compaction_splits_on_turns_and_moves_pinned_turns_to_the_kept_part() -> None:
    history: list[Any] = [*HISTORY]
    history[1] = {**history[1], "pinned": True}
    plan = plan_compaction(history, keep_recent_turns=2)
    assert plan.system == [HISTORY[0]]
    assert plan.to_keep[0]["content"] == "u1"
    assert [m["role"] for m in plan.to_keep[1:]] == ["assistant", "tool", "user"]
    assert [m.get("content") for m in plan.to_summarize] == ["a1", "u2"]
    assert plan_compaction(HISTORY, 2.7) == plan_compaction(HISTORY, 2)
    assert plan_compaction(HISTORY, -1).to_keep == []


def test_compact_history_returns_the_same_object_when_there_is_nothing_to_do() -> None:
    assert compact_history(HISTORY, lambda m: "S", keep_recent_turns=10) is HISTORY
    assert compact_history(HISTORY, lambda m: "   ", keep_recent_turns=1) is HISTORY
    compacted = compact_history(HISTORY, lambda m: "<summary>S</summary>", keep_recent_turns=1)
    assert compacted[0] == HISTORY[0]
    assert compacted[1]["role"] == "user" and "S" in compacted[1]["content"]
    assert compacted[2:] == [HISTORY[-1]]


def test_clearing_tool_results_keeps_recent_ones_and_respects_filters() -> None:
    history: list[Any] = [
        {"role": "user", "content": "go"},
        *tool_turn("c1", "one"),
        *tool_turn("c2", "two", name="read"),
        *tool_turn("c3", "three"),
    ]
    cleared = compact_messages(history, "tool-result")
    assert [m["content"] for m in cleared if m["role"] == "tool"] == [
        prompts.CLEARED_TOOL_RESULT
    ] * 3
    assert history[2]["content"] == "one"
    kept = compact_messages(history, "tool-result", keep_recent=1)
    assert [m["content"] for m in kept if m["role"] == "tool"][-1] == "three"
    only_bash = compact_messages(history, "tool-result", tools=["bash"], exempt_tools=["bash"])
    assert only_bash == history
    reads = compact_messages(history, "tool-result", tools=["read"])
    assert [m["content"] for m in reads if m["role"] == "tool"] == [
        "one",
        prompts.CLEARED_TOOL_RESULT,
        "three",
    ]


def test_pinned_turns_are_never_cleared_and_thinking_and_think_tags_go() -> None:
    history: list[Any] = [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": None, "pinned": True, "tool_calls": [call("c1")]},
        {"role": "tool", "tool_call_id": "c1", "content": "keep me"},
        {
            "role": "assistant",
            "content": "<THINK>hmm</think>\n\n\n\nAnswer",
            "thinking": {"thinking": "t"},
        },
    ]
    out = compact_messages(history, ["tool-result", "thinking", "reasoning-tags"])
    assert out[2]["content"] == "keep me"
    assert out[3] == {"role": "assistant", "content": "Answer"}
    with pytest.raises(ConfigError):
        compact_messages(history, "everything")  # type: ignore[arg-type]
