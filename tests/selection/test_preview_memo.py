"""A long tool result is previewed once, however often the host hands its history back."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from contextchef import ContextChef
from contextchef.selection import tool_results


def history(turns: int) -> list[dict[str, Any]]:
    log = "\n".join(f"line {index}: ok" for index in range(4000)) + "\nValueError: boom"
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "run the tests"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "sh", "arguments": "{}"}}
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": log},
    ]
    for turn in range(turns):
        messages.append({"role": "assistant", "content": f"answer {turn}"})
        messages.append({"role": "user", "content": f"question {turn}"})
    return messages


def test_a_reloaded_history_reuses_the_preview(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    real = tool_results.preview

    def counting(text: str, uri: str, *args: Any) -> str:
        calls.append(uri)
        return real(text, uri, *args)

    monkeypatch.setattr(tool_results, "preview", counting)
    chef = ContextChef(offload={"threshold": 1000})
    sent = []
    for turn in range(5):
        chef.set_history(copy.deepcopy(history(turn)))  # fresh dicts, as from a database
        payload = chef.compile(target="openai")
        (tool,) = [message for message in payload["messages"] if message["role"] == "tool"]
        sent.append(tool["content"])
    assert len(calls) == 1
    assert len(set(sent)) == 1 and "ValueError: boom" in sent[0]
    assert "context://vfs/" in sent[0]
