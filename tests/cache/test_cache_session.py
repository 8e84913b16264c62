"""The acceptance test of the prompt-cache work: a scripted 150-turn agent session compiled for
Anthropic, where the host reloads its history as fresh dicts every turn.

The session has what a coding agent's run has: a long system prompt and tool set, tool calls
and results, tool outputs large enough to be offloaded, memory written by the model through the
`context` tool and by the host (with a TTL), a memory deletion, the live task state in the tail,
and one overflow. Between consecutive turns that are not the overflow, the bytes reused from the
previous request must average at least 95 % and never fall under 50 % — memory writes included —
and the payload never holds more than 4 cache breakpoints.
"""

from __future__ import annotations

import json
import random
from typing import Any

from pydantic import BaseModel

from contextchef import ContextChef, summarize
from tests.adapters.sdk_anthropic import validate_request

RULES = "\n".join(
    f"{n}. Rule {n} of the house style: keep functions small, name things for what they are, "
    "test every behaviour a user relies on, and never leave the build red."
    for n in range(1, 41)
)
SYSTEM_PROMPT = f"You are a careful coding agent in the `shop` repository.\n\n{RULES}"
TOOLS = [
    {
        "name": name,
        "description": f"{name.replace('_', ' ').capitalize()} in the workspace. " * 6,
        "parameters": {
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "A path relative to the root."},
                "pattern": {"type": "string", "description": "What to look for, if anything."},
            },
            "required": ["path"],
        },
    }
    for name in ("read_file", "write_file", "run_tests", "search_code", "list_dir", "git_diff")
]


class Task(BaseModel):
    step: int
    goal: str
    files_touched: int


def fresh(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return json.loads(json.dumps(messages))  # type: ignore[no-any-return]


def _call(turn: int, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": f"Step {turn}: calling {name}.",
        "tool_calls": [
            {
                "id": f"call_{turn}",
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(arguments, sort_keys=True)},
            }
        ],
    }


def test_a_steady_agent_loop_reuses_the_cached_prefix_every_turn() -> None:
    rng = random.Random(12)
    chef = ContextChef(
        memory={},
        budget={"context_window": 45000, "trigger_ratio": 0.8},
        overflow={
            "strategy": summarize(lambda m: "Work so far: modules fixed.", preserve_ratio=0.3)
        },
        offload={"threshold": 3000},
    ).set_system_prompt(SYSTEM_PROMPT)
    chef.tools.register(TOOLS)
    memory = chef.memory
    stored: list[dict[str, Any]] = []  # the host's database
    ratios: list[float] = []
    overflow_turns: list[int] = []
    memory_turns: list[int] = []
    offloads = 0
    for turn in range(150):
        if turn % 6 == 0:
            stored.append({"role": "user", "content": f"Next: fix module {turn // 6}."})
        chef.set_dynamic_state(Task(step=turn, goal=f"module {turn // 6}", files_touched=turn))
        payload = chef.set_history(fresh(stored)).compile(target="anthropic")
        cache = payload.meta.cache
        overflowed = payload.meta.overflow is not None and payload.meta.overflow.changed
        if overflowed:
            overflow_turns.append(turn)
        elif turn and turn - 1 not in overflow_turns:
            ratios.append(cache.reuse_ratio)
        assert len(cache.breakpoints) <= 4
        assert json.dumps(payload).count('"cache_control"') == len(cache.breakpoints)
        if turn % 25 == 0:
            validate_request(payload)
        offloads += json.dumps(payload).count("context://vfs/") > 0
        # the model's step: a memory write every 9th turn, else a workspace tool
        if turn % 9 == 4:
            arguments = {
                "command": "create",
                "path": f"memory/finding_{turn}",
                "file_text": f"module {turn // 6} needs a fix in parse() (turn {turn})",
            }
            stored.append(_call(turn, "context", arguments))
            result = chef.handle_tool("context", arguments)
            memory_turns.append(turn)
        else:
            size = 3500 if turn % 10 == 7 else rng.randint(200, 900)
            stored.append(_call(turn, "read_file", {"path": f"src/m{turn}.py"}))
            result = "\n".join(f"line {n}: x = {n}" for n in range(size // 16))
        stored.append({"role": "tool", "tool_call_id": f"call_{turn}", "content": result})
        if turn % 17 == 8:
            memory.set(f"note_{turn}", f"the host noted turn {turn}", ttl=4)
            memory_turns.append(turn)
        if turn == 60:
            memory.delete("finding_4")
    mean = sum(ratios) / len(ratios)
    print(f"reuse mean {mean:.4f}, min {min(ratios):.4f} over {len(ratios)} turns", overflow_turns)
    assert len(overflow_turns) == 1
    assert len(memory_turns) >= 20 and offloads
    assert mean >= 0.95
    assert min(ratios) >= 0.5
