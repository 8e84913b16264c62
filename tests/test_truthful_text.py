"""Every sentence true for its mode: over vocabulary x memory x policy x overflow x handoff, the
text the model reads (system, user and tool results) names only the tools the payload offers,
never `context://memory` without memory, and never invites a write the policy refuses."""

from __future__ import annotations

import itertools
import re
from typing import Any

import pytest

from contextchef import ContextChef
from contextchef.selection.strategies import summarize

TOOL_MENTIONS = {
    "context": re.compile(r"\bcontext tool\b"),
    "new_context": re.compile(r"\bnew_context\b"),
    "create_memory": re.compile(r"\bcreate_memory\b"),
    "modify_memory": re.compile(r"\bmodify_memory\b"),
    "recall_context": re.compile(r"\brecall_context\b"),
}
MEMORY_WRITE_INVITATIONS = (
    "keep it short and current",
    "memory/ for lasting facts",
    "Writable memory entries",
    "Allowed memory keys",
    "Save facts worth keeping",
    "create_memory",
    "modify_memory",
)


class PerMessage:
    """10 tokens a message: in a payload as sent (compact JSON) every object with a role."""

    def count_text(self, text: str) -> int:
        return 10 * text.count('"role":')

    def count_message(self, message: Any) -> int:
        return 10


def summarizer(messages: list[Any]) -> str:
    return "<summary>S</summary>"


def dialogue(turns: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for i in range(turns):
        out += [{"role": "user", "content": f"q{i}"}, {"role": "assistant", "content": f"a{i}"}]
    return out


TOOL_TURN: list[dict[str, Any]] = [
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "grep", "arguments": "{}"}}
        ],
    },
    {"role": "tool", "tool_call_id": "c1", "content": "line\n" * 3000},
]


def build(tools: str, memory: bool, writable: bool, overflow: bool, handoff: bool) -> ContextChef:
    options: dict[str, Any] = {}
    if overflow or handoff:
        settings: dict[str, Any] = {"strategy": summarize(summarizer, preserve_recent_messages=1)}
        if handoff:
            settings["handoff"] = {"budget_tokens": 50}
        options = {
            "budget": {"context_window": 100, "trigger_ratio": 1},
            "overflow": settings,
            "tokenizer": PerMessage(),
        }
    chef = ContextChef(
        tools=tools,
        memory={} if memory else None,
        context_tool=None if writable else {"writable": ["notes"]},
        **options,
    )
    if memory:
        chef.memory.set("user", "Ada")
    return chef


def read_texts(payload: Any) -> list[str]:
    """What the model reads that it did not write: system, user and tool-result text."""
    return [
        str(message["content"])
        for message in payload["messages"]
        if message["role"] in ("system", "user", "tool")
    ]


MATRIX = list(itertools.product(("unified", "legacy"), *[(True, False)] * 4))


@pytest.mark.parametrize(("tools", "memory", "writable", "overflow", "handoff"), MATRIX)
def test_no_sentence_names_what_the_payload_does_not_offer(
    tools: str, memory: bool, writable: bool, overflow: bool, handoff: bool
) -> None:
    chef = build(tools, memory, writable, overflow, handoff)
    payloads = [chef.set_history([*dialogue(2), *TOOL_TURN]).compile()]
    if overflow:
        payloads.append(chef.set_history([*dialogue(6), *TOOL_TURN, *dialogue(1)]).compile())
    texts = [text for payload in payloads for text in read_texts(payload)]
    joined = "\n".join(texts)
    # every notice the scenario is meant to trigger is there
    assert "<offloaded_output>" in joined
    assert ("<context_notice>" in joined) == handoff
    if overflow:
        assert "<conversation_summary>" in joined and "context://archive/" in joined
    if memory:
        assert '<entry key="user">' in joined
    for payload in payloads:
        offered = {tool["function"]["name"] for tool in payload.get("tools", [])}
        for text in read_texts(payload):
            named = {name for name, pattern in TOOL_MENTIONS.items() if pattern.search(text)}
            assert named <= offered, (named - offered, text)
            if not memory:
                assert "context://memory" not in text, text
            if memory and not writable:
                assert not any(phrase in text for phrase in MEMORY_WRITE_INVITATIONS), text
    if memory and writable and tools == "legacy":
        assert {"create_memory", "modify_memory"} <= offered
    if not (memory and writable):
        assert not offered & {"create_memory", "modify_memory"}
