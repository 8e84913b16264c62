"""anchored, background and server strategies."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from contextchef import AsyncContextChef, ContextChef, anchored, background, server, summarize
from contextchef.selection.background import Background
from tests.adapters.sdk_anthropic import validate_request
from tests.selection.test_overflow import Model, PerMessage, dialogue, ids


def janitor(**overflow: Any) -> dict[str, Any]:
    return {
        "budget": {"context_window": 200, "trigger_ratio": 0.5},  # trigger 100, window 200
        "tokenizer": PerMessage(),
        "overflow": {"window_ids": ids(), **overflow},
    }


def long_history(extra: int = 0) -> list[dict[str, Any]]:
    return [*dialogue(6 + extra), {"role": "user", "content": "q"}]


def test_anchored_extends_the_previous_summary() -> None:
    seen: list[str] = []
    replies = iter(["<summary>first anchor</summary>", "<summary>second anchor</summary>"])

    def model(messages: list[Any]) -> str:
        seen.append(messages[-1]["content"])
        return next(replies)

    strategy = anchored(compression_model=model, preserve_recent_messages=1)
    chef = ContextChef(**janitor(strategy=strategy, archive=None))
    chef.set_history(long_history()).compile()
    assert strategy.anchor == "first anchor"
    chef.set_history([*chef.history, *dialogue(6)]).compile()
    assert "<anchor>\nfirst anchor\n</anchor>" in seen[1]
    assert "<anchor>" not in seen[0]
    assert strategy.anchor == "second anchor"
    snap = chef.snapshot()
    chef.clear_history()
    assert strategy.anchor == "second anchor"
    chef.restore(snap)
    assert strategy.anchor == "second anchor"


class Gate:
    """A summarizer that blocks until released, to hold a background job in flight."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.calls = 0

    def __call__(self, messages: list[Any]) -> str:
        self.calls += 1
        assert self.release.wait(5)
        return "<summary>background summary</summary>"


def wait_done(strategy: Any) -> None:
    for _ in range(500):
        if strategy.pending():
            return
        threading.Event().wait(0.01)
    raise AssertionError("the background job never finished")


def test_background_swaps_in_and_keeps_messages_appended_meanwhile() -> None:
    gate = Gate()
    strategy = background(summarize(gate, preserve_recent_messages=1))
    chef = ContextChef(**janitor(strategy=strategy, archive=None))
    history = long_history()
    first = chef.set_history(history).compile()
    assert not first.meta.overflow.changed
    assert first.meta.overflow.reason == "background compression started"
    assert len(first["messages"]) == 1 + len(history)  # the store instruction, then the history
    history = [*history, {"role": "assistant", "content": "meanwhile"}]
    in_flight = chef.set_history(history).compile().meta.overflow
    assert in_flight.reason == "background compression in flight"
    gate.release.set()
    wait_done(strategy)
    landed = chef.set_history(history).compile()
    assert landed.meta.overflow.changed
    contents = [m["content"] for m in landed["messages"]]
    assert "background summary" in contents[1]
    assert contents[-2:] == ["q", "meanwhile"]
    assert gate.calls == 1


def test_a_stale_background_result_is_discarded() -> None:
    gate = Gate()
    strategy = background(summarize(gate, preserve_recent_messages=1))
    chef = ContextChef(**janitor(strategy=strategy, archive=None))
    chef.set_history(long_history()).compile()
    gate.release.set()
    wait_done(strategy)
    replaced = [{"role": "user", "content": "a brand new conversation"}]
    report = chef.set_history(replaced).compile().meta.overflow
    assert not report.changed
    assert chef.history == replaced


async def test_background_runs_as_a_task_under_the_async_chef() -> None:
    async def model(messages: list[Any]) -> str:
        await asyncio.sleep(0)
        return "<summary>async background</summary>"

    strategy = background(summarize(model, preserve_recent_messages=1))
    chef = AsyncContextChef(**janitor(strategy=strategy, archive=None))
    await chef.set_history(long_history()).compile()
    for _ in range(100):
        if strategy.pending():
            break
        await asyncio.sleep(0.01)
    payload = await chef.compile()
    assert "async background" in payload["messages"][1]["content"]


def test_server_compaction_on_anthropic_and_the_fallback_elsewhere() -> None:
    model = Model()
    strategy = server(fallback=summarize(model, preserve_recent_messages=1))
    chef = ContextChef(**janitor(strategy=strategy, archive=None))
    payload = chef.set_history(long_history()).compile(target="anthropic")
    assert payload["context_management"] == {"edits": [{"type": "compact_20260112"}]}
    assert payload["betas"] == ["compact-2026-01-12"]
    assert len(payload["messages"]) == 13 and model.calls == 0
    assert list(payload) == sorted(payload)
    validate_request({"model": "m", "max_tokens": 1, **payload}, beta=True)
    other = chef.compile(target="openai")
    assert "context_management" not in other and model.calls == 1
    assert other.meta.overflow.changed


def test_server_without_fallback_leaves_other_targets_alone() -> None:
    chef = ContextChef(**janitor(strategy=server(), archive=None))
    report = chef.set_history(long_history()).compile(target="gemini").meta.overflow
    assert not report.changed and "fallback" in report.reason


@pytest.mark.parametrize("make", [lambda: anchored(), lambda: background(summarize())])
def test_strategies_keep_tool_calls_with_their_results(make: Any) -> None:
    calls = [
        {"id": f"c{i}", "type": "function", "function": {"name": "f", "arguments": "{}"}}
        for i in range(2)
    ]
    history = [
        *dialogue(6),
        {"role": "assistant", "content": None, "tool_calls": calls},
        {"role": "tool", "tool_call_id": "c0", "content": "r0"},
        {"role": "tool", "tool_call_id": "c1", "content": "r1"},
    ]
    strategy = make()
    chef = ContextChef(**janitor(strategy=strategy, archive=None))
    chef.set_history(history).compile()
    if isinstance(strategy, Background):
        wait_done(strategy)
        chef.set_history(history).compile()
    roles = [m["role"] for m in chef.history]
    assert roles[-3:] == ["assistant", "tool", "tool"]
