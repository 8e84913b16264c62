"""The window tells the truth: every compile of a long, tool-heavy run on a small window fits,
counted on the payload each target receives (library tools, memory, the state tail included)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import BaseModel

from contextchef import ContextChef, WindowExceeded, estimate, summarize
from contextchef.adapters import adapter_registry

TARGETS = adapter_registry.names()
WINDOW = 3000


class Task(BaseModel):
    goal: str
    step: int
    files: list[str]


def summarizer(messages: list[Any]) -> str:
    return (
        "<summary>The agent read files and ran tests; the last run failed in parser.py.</summary>"
    )


def tool_turn(i: int) -> list[dict[str, Any]]:
    call = {
        "id": f"call_{i}",
        "type": "function",
        "function": {"name": "run_tests", "arguments": json.dumps({"path": f"tests/t{i}.py"})},
    }
    output = "\n".join(f"tests/t{i}.py::case_{n} PASSED" for n in range(25))
    return [
        {"role": "user", "content": f"Step {i}: run the tests in tests/t{i}.py."},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": f"call_{i}", "content": output},
        {"role": "assistant", "content": f"Step {i} done: 25 passed."},
    ]


def run_tests_tool() -> dict[str, Any]:
    return {
        "name": "run_tests",
        "description": "Run the test suite at a path and return its output.",
        "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
    }


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("tools", ["unified", "legacy"])
def test_every_compile_of_a_long_run_fits_the_window(target: str, tools: str) -> None:
    chef = ContextChef(
        tools=tools,
        memory={"placement": "before_history_tail"},
        budget={"context_window": WINDOW, "trigger_ratio": 0.7},
        overflow={"strategy": summarize(summarizer, preserve_ratio=0.5)},
        default_target=target,
    )
    chef.tools.register([run_tests_tool()])
    chef.set_system_prompt("You are a careful coding agent. Keep the test suite green.")
    chef.memory.set("test-command", "pytest -q", description="how to run the tests")
    exceeded: list[WindowExceeded] = []
    chef.on("window:exceeded", exceeded.append)
    history: list[dict[str, Any]] = []
    overflows = 0
    for i in range(40):
        history += tool_turn(i)
        chef.set_history(history)
        chef.set_dynamic_state(Task(goal="green suite", step=i, files=[f"t{i}.py"]))
        payload = chef.compile()
        tokens = payload.meta.tokens
        assert tokens.total <= WINDOW, (i, tokens)
        assert tokens.tools > 0 and tokens.system > 0 and tokens.tail > 0
        overflows += payload.meta.overflow.changed
    assert overflows >= 2
    assert not exceeded


def test_the_figures_count_what_each_target_receives() -> None:
    chef = ContextChef().set_history(tool_turn(0))
    totals = {target: chef.compile(target=target).meta.tokens.total for target in TARGETS}
    assert len(set(totals.values())) == len(TARGETS), totals
    tools = chef.compile(target="openai").meta.tokens.tools
    assert tools >= estimate("Everything that leaves your context window")  # the context tool


def test_pinned_content_larger_than_the_window_is_reported_never_silent() -> None:
    chef = ContextChef(
        budget={"context_window": 300, "trigger_ratio": 0.7},
        overflow={"strategy": summarize(summarizer)},
        tools="legacy",
    )
    huge = {"role": "user", "content": "keep this " * 400, "pinned": True}
    exceeded: list[WindowExceeded] = []
    chef.on("window:exceeded", exceeded.append)
    chef.set_history(
        [huge, {"role": "assistant", "content": "ok"}, {"role": "user", "content": "go"}]
    )
    payload = chef.compile()
    assert payload.meta.tokens.total > 300
    assert exceeded and exceeded[0].tokens == payload.meta.tokens.total
    assert exceeded[0].limit == 300 and exceeded[0].target == "openai"


def test_a_failed_strategy_still_leaves_a_payload_inside_the_window() -> None:
    def down(messages: list[Any]) -> str:
        raise RuntimeError("model down")

    chef = ContextChef(
        tools="legacy",
        budget={"context_window": 800, "trigger_ratio": 0.7},
        overflow={"strategy": summarize(down)},
    )
    history = [m for i in range(12) for m in tool_turn(i)]
    payload = chef.set_history(history).compile()
    report = payload.meta.overflow
    assert report.failures == 1 and report.changed
    assert "to fit the window" in report.reason
    assert payload.meta.tokens.total <= 800
    archived = chef.store.namespace("archive").list()
    assert len(archived) == 1  # what was dropped to fit is archived, not lost
