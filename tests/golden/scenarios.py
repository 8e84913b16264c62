"""Named chef states that the golden, parity and SDK-validation tests compile to every target.

Each scenario configures a chef (sync or async: both share the setters) and returns it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import BaseModel

from contextchef import AsyncContextChef, ContextChef, Memory
from contextchef.chef.facade import ChefFacade

C = TypeVar("C", bound=ChefFacade)
Scenario = Callable[[C], C]

SYSTEM = "You are a meticulous coding agent. Prefer small, reviewed changes."
PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9aw"
    "AAAABJRU5ErkJggg=="
)
PDF = "JVBERi0xLjQKJcOkw7zDtsOfCjIgMCBvYmoKPDwvTGVuZ3RoIDMgMCBSPj4Kc3RyZWFtCg=="

TOOLS = [
    {
        "name": "read_file",
        "description": "Read a UTF-8 file from the workspace.",
        "parameters": {
            "type": "object",
            "properties": {"path": {"type": "string", "description": "Relative path."}},
            "required": ["path"],
        },
    },
    {
        "type": "function",
        "function": {
            "name": "run_tests",
            "description": "Run the test suite and return its output.",
            "parameters": {"type": "object", "properties": {"pattern": {"type": "string"}}},
        },
    },
]


class TaskState(BaseModel):
    goal: str
    step: int
    open_questions: list[str] = []


STATE = {"goal": "Fix the failing parser test", "step": 2, "open_questions": ["Is <EOF> valid?"]}


def call(call_id: str, name: str, arguments: str, **extra: Any) -> dict[str, Any]:
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": arguments},
        **extra,
    }


def tool_turn() -> list[dict[str, Any]]:
    return [
        {"role": "user", "content": "Why does test_parser fail?"},
        {
            "role": "assistant",
            "content": "Let me look at the parser.",
            "tool_calls": [call("call_1", "read_file", '{"path": "src/parser.py"}')],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "def parse(text):\n    return []"},
    ]


def plain(chef: C) -> C:
    return chef.set_system_prompt(SYSTEM).set_history(
        [
            {"role": "user", "content": "Hello!"},
            {"role": "assistant", "content": "Hi. What are we fixing today?"},
            {"role": "user", "content": "The parser."},
        ]
    )


def state_last_user(chef: C) -> C:
    return plain(chef).set_dynamic_state(TaskState, STATE)


def state_after_tool_result(chef: C) -> C:
    return (
        chef.set_system_prompt(SYSTEM).set_history(tool_turn()).set_dynamic_state(TaskState, STATE)
    )


def state_no_user_message(chef: C) -> C:
    return (
        chef.set_system_prompt(SYSTEM)
        .set_history([{"role": "assistant", "content": "I am ready when you are."}])
        .set_dynamic_state(TaskState, STATE)
    )


def state_empty_history(chef: C) -> C:
    return chef.set_system_prompt(SYSTEM).set_dynamic_state(TaskState, STATE)


def state_system_placement(chef: C) -> C:
    return plain(chef).set_dynamic_state(TaskState, STATE, placement="system")


def prefill(chef: C) -> C:
    return plain(chef).with_guardrails(prefill='{"answer": ')


def output_tag_and_prefill(chef: C) -> C:
    return state_last_user(chef).with_guardrails(
        enforce_xml={"output_tag": "final_answer"}, prefill="<final_answer>"
    )


def prefill_with_attachments(chef: C) -> C:
    return attachments(chef).with_guardrails(prefill="Observation:")


def cache_breakpoints(chef: C) -> C:
    return (
        chef.set_system_prompt(
            [
                {"role": "system", "content": SYSTEM},
                {
                    "role": "system",
                    "content": "Project rules: no new deps.",
                    "_cache_breakpoint": True,
                },
            ]
        )
        .set_history(
            [
                *tool_turn(),
                {"role": "assistant", "content": "parse() returns an empty list."},
                {"role": "user", "content": "Fix it.", "_cache_breakpoint": True},
            ]
        )
        .set_dynamic_state(TaskState, STATE)
    )


def parallel_tool_calls(chef: C) -> C:
    chef.tools.register(TOOLS)
    return chef.set_system_prompt(SYSTEM).set_history(
        [
            {"role": "user", "content": "Read both files and run the tests."},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    call("call_a", "read_file", '{"path": "a.py"}'),
                    call("call_b", "read_file", '{"path": "b.py"}'),
                    call("call_c", "run_tests", '{"pattern": "parser"}'),
                ],
            },
            {"role": "tool", "tool_call_id": "call_a", "content": "A = 1"},
            {"role": "tool", "tool_call_id": "call_b", "content": '{"ok": true, "lines": 2}'},
            {"role": "tool", "tool_call_id": "call_c", "content": "1 failed, 3 passed"},
            {"role": "user", "content": "Summarise."},
        ]
    )


def thinking(chef: C) -> C:
    return chef.set_system_prompt(SYSTEM).set_history(
        [
            {"role": "user", "content": "Is 91 prime?"},
            {
                "role": "assistant",
                "content": "Let me check with a tool.",
                "thinking": {"thinking": "91 = 7 * 13, but verify.", "signature": "c2lnbmF0dXJl"},
                "tool_calls": [call("call_t", "run_tests", '{"pattern": "prime"}')],
            },
            {"role": "tool", "tool_call_id": "call_t", "content": "1 passed"},
            {
                "role": "assistant",
                "content": "No: 91 = 7 × 13.",
                "redacted_thinking": [{"data": "ZW5jcnlwdGVk"}],
            },
            {"role": "user", "content": "Thanks."},
        ]
    )


def attachments(chef: C) -> C:
    return chef.set_system_prompt(SYSTEM).set_history(
        [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "What do these show?"},
                    {"type": "image", "media_type": "image/png", "data": PNG},
                    {"type": "image", "url": "https://example.com/diagram.png"},
                    {
                        "type": "document",
                        "media_type": "application/pdf",
                        "data": PDF,
                        "filename": "spec.pdf",
                    },
                ],
            }
        ]
    )


def empty_history(chef: C) -> C:
    return chef.set_system_prompt(SYSTEM)


def responses_reasoning(chef: C) -> C:
    chef.tools.register(TOOLS)
    return chef.set_system_prompt(SYSTEM).set_history(
        [
            {"role": "user", "content": "Plan the fix."},
            {
                "role": "assistant",
                "content": "Plan: patch parse().",
                "openai_reasoning": [
                    {
                        "type": "reasoning",
                        "id": "rs_1",
                        "summary": [{"type": "summary_text", "text": "Looked at parse."}],
                        "encrypted_content": "gAAAA-opaque",
                    }
                ],
                "tool_calls": [call("call_r", "read_file", '{"path": "src/parser.py"}')],
            },
            {"role": "tool", "tool_call_id": "call_r", "content": "def parse(text): ..."},
            {"role": "user", "content": "Go on."},
        ]
    )


def tools_registered(chef: C) -> C:
    plain(chef).tools.register(TOOLS)
    return chef


def mid_history_system(chef: C) -> C:
    return chef.set_system_prompt(SYSTEM).set_history(
        [
            {"role": "user", "content": "Start."},
            {"role": "assistant", "content": "Started."},
            {"role": "system", "content": "The user switched to read-only mode."},
            {"role": "user", "content": "Continue."},
        ]
    )


def repaired_history(chef: C) -> C:
    return chef.set_system_prompt(SYSTEM).set_history(
        [
            {"role": "tool", "tool_call_id": "gone", "content": "orphan"},
            {
                "role": "assistant",
                "content": "Resuming.",
                "tool_calls": [call("c9", "run_tests", "{}")],
            },
            {"role": "user", "content": "Status?"},
        ]
    )


def gemini_signatures(chef: C) -> C:
    return chef.set_system_prompt(SYSTEM).set_history(
        [
            {"role": "user", "content": "Check the build."},
            {
                "role": "assistant",
                "content": "Checking.",
                "gemini_thought_signature": "dGhvdWdodA==",
                "tool_calls": [
                    call("call_g", "run_tests", "{}", gemini_thought_signature="c2lnMQ==")
                ],
            },
            {"role": "tool", "tool_call_id": "call_g", "content": "all green"},
        ]
    )


def configured(**config: Any) -> Callable[[Scenario[Any]], Scenario[Any]]:
    """Mark a scenario as needing chef options (memory, tools mode, …)."""

    def mark(fn: Scenario[Any]) -> Scenario[Any]:
        fn.config = config  # type: ignore[attr-defined]
        return fn

    return mark


def seeded(**entries: str) -> Callable[[Scenario[Any]], Scenario[Any]]:
    """Mark a scenario as needing memory entries, set in this order before it runs (through
    the chef's own memory API, so an async chef over an async-native store can seed them)."""

    def mark(fn: Scenario[Any]) -> Scenario[Any]:
        fn.memory = entries  # type: ignore[attr-defined]
        return fn

    return mark


TEST_LOG = "\n".join(
    "FAILED tests/test_io.py::test_read - OSError: [Errno 2]" if i == 300 else f"test_{i} PASSED"
    for i in range(800)
)


def fixed_clock() -> float:
    return 1_790_000_000.0


def memory_of(chef: ContextChef | AsyncContextChef) -> Memory:
    """The chef's memory with the synchronous API, whichever chef it is (scenarios are sync)."""
    return Memory.over(chef.memory.core)


@configured(
    tools="unified",
    memory={"clock": fixed_clock},
    budget={},
    overflow={"handoff": {"budget_tokens": 10}, "window_ids": lambda: "w1"},
)
@seeded(
    conventions="Use pytest; keep functions under 40 lines.",
    user="Prefers <short> answers & plain words.",
)
def unified_with_memory(chef: C) -> C:
    return plain(chef)


@configured(tools="legacy", memory={"placement": "before_history_tail", "clock": fixed_clock})
@seeded(conventions="Use pytest.")
def legacy_memory_at_the_tail(chef: C) -> C:
    return state_last_user(chef)


def offloaded_tool_result(chef: C) -> C:
    turn = tool_turn()
    turn[-1] = {**turn[-1], "content": TEST_LOG}
    return chef.set_system_prompt(SYSTEM).set_history(turn)


@configured(tools="legacy")
def legacy_offloaded_tool_result(chef: C) -> C:
    return offloaded_tool_result(chef)


HELPERS = (
    "call",
    "tool_turn",
    "configured",
    "seeded",
    "build",
    "build_async",
    "fixed_clock",
    "memory_of",
)

SCENARIOS: dict[str, Scenario[Any]] = {
    name: fn
    for name, fn in sorted(globals().items())
    if callable(fn)
    and getattr(fn, "__module__", None) == __name__
    and name not in HELPERS
    and not name[0].isupper()
}


def _options(scenario: Scenario[Any], store: object) -> dict[str, Any]:
    options = dict(getattr(scenario, "config", {}))
    if store is not None:
        options["store"] = store
    return options


def build(name: str, kind: type[C], *, store: object = None) -> C:
    """The scenario `name` on a new chef of class `kind` (over `store`, if given), with the
    options it needs and its memory seeded through the synchronous `Memory` API."""
    scenario = SCENARIOS[name]
    chef = kind(**_options(scenario, store))
    for key, value in getattr(scenario, "memory", {}).items():
        memory_of(chef).set(key, value)
    return scenario(chef)


async def build_async(name: str, *, store: object = None) -> AsyncContextChef:
    """The scenario `name` on a new `AsyncContextChef` (over `store`, if given), its memory
    seeded through `AsyncMemory`: this also works over an async-native backend."""
    scenario = SCENARIOS[name]
    chef = AsyncContextChef(**_options(scenario, store))
    for key, value in getattr(scenario, "memory", {}).items():
        await chef.memory.set(key, value)
    return scenario(chef)
