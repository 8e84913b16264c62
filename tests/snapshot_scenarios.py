"""A scripted agent session for the portable-snapshot tests, run in the test's process and in a
fresh one (`main()` reads a request on stdin and prints the outcome as JSON).

The session has everything a snapshot must carry: overflow that landed (and was written back),
memory written through the `context` tool, offloaded tool output, dynamic state, guardrails,
an active skill with arguments, announcements on both channels, registered tools.
"""

from __future__ import annotations

import asyncio
import inspect
import itertools
import json
import sys
from typing import Any

from pydantic import BaseModel

from contextchef import AsyncContextChef, ContextChef, Skill, Snapshot, summarize

TARGETS = ("openai", "openai-responses", "anthropic", "gemini")
SYSTEM = "You are a careful coding agent working in a Python repository."
PLAN = Skill(
    name="plan",
    description="Plans a change before any file is edited.",
    instructions="Plan the work on $ARGUMENTS as numbered steps, then carry them out.",
    allowed_tools=("read_file",),
)
TOOLS = [
    {
        "name": name,
        "description": f"The {name} tool.",
        "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
    }
    for name in ("read_file", "write_file", "deploy")
]
NEXT = {"role": "user", "content": "One more thing: add a test."}


class Task(BaseModel):
    goal: str
    step: int
    done: list[str]


def summarizer(messages: list[Any]) -> str:
    """A deterministic stand-in for the model that writes summaries."""
    return f"<summary>{len(messages)} earlier messages: the parser work so far.</summary>"


async def maybe(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


def build(kind: str) -> ContextChef | AsyncContextChef:
    """The chef of the session: the same configuration in every process."""
    counter = itertools.count(1)
    options: dict[str, Any] = {
        "budget": {"context_window": 4000, "trigger_ratio": 0.7},
        "overflow": {
            "strategy": summarize(summarizer, preserve_ratio=0.5),
            "window_ids": lambda: f"w{next(counter)}",
        },
        "memory": {},
        "offload": {"threshold": 2000},
        "skill_placement": "after_system",
    }
    return AsyncContextChef(**options) if kind == "async" else ContextChef(**options)


def reloaded(messages: list[Any]) -> list[Any]:
    return json.loads(json.dumps(messages))  # type: ignore[no-any-return]


def call(ident: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    function = {"name": name, "arguments": json.dumps(arguments, sort_keys=True)}
    return {"id": ident, "type": "function", "function": function}


async def play(chef: Any, stored: list[Any], turns: int = 9) -> list[Any]:
    """Run the session; `stored` is the host's ever-growing history (reloaded every turn).
    Returns the payloads compiled along the way."""
    chef.set_system_prompt(SYSTEM).tools.register(TOOLS)
    chef.with_guardrails(enforce_xml={"output_tag": "answer"})
    chef.prompt.announce("freeze", "Deploys are frozen until Monday.")
    chef.prompt.announce("secrets", "Never print credentials.", channel="system")
    await maybe(chef.skills.activate(PLAN, args='"the parser"'))
    payloads = []
    done: list[str] = []
    for turn in range(turns):
        stored.append({"role": "user", "content": f"Step {turn}: " + "details " * 60})
        chef.set_dynamic_state(Task, {"goal": "fix the parser", "step": turn, "done": done})
        payloads.append(await maybe(chef.set_history(reloaded(stored)).compile(target="anthropic")))
        read = call(f"r{turn}", "read_file", {"path": f"src/f{turn}.py"})
        stored.append({"role": "assistant", "content": None, "tool_calls": [read]})
        output = "\n".join(f"line {i} of f{turn}" for i in range(300)) if turn % 3 == 0 else "ok"
        stored.append({"role": "tool", "tool_call_id": f"r{turn}", "content": output})
        if turn % 2 == 0:
            arguments = {"command": "create", "path": f"memory/fact{turn}", "file_text": f"F{turn}"}
            write = call(f"m{turn}", "context", arguments)
            result = await maybe(chef.handle_tool("context", arguments))
            stored.append({"role": "assistant", "content": None, "tool_calls": [write]})
            stored.append({"role": "tool", "tool_call_id": f"m{turn}", "content": result})
        stored.append({"role": "assistant", "content": f"Finished step {turn}."})
        done.append(f"step {turn}")
    return payloads


async def outcome(chef: Any, stored: list[Any]) -> dict[str, Any]:
    """What decides the test: every target's payload now, then the next turn's (the host
    reloads its whole stored history, so the compaction records must be re-applied)."""
    payloads = {}
    for target in TARGETS:
        payload = await maybe(chef.compile(target=target))
        payloads[target] = json.dumps(payload, sort_keys=True)
    chef.set_history(reloaded([*stored, NEXT]))
    following = await maybe(chef.compile(target="anthropic"))
    return {
        "payloads": payloads,
        "next": json.dumps(following, sort_keys=True),
        "next_overflowed": following.meta.overflow.changed,
    }


async def restored_outcome(request: dict[str, Any]) -> dict[str, Any]:
    chef = build(request["kind"])
    await maybe(chef.restore(Snapshot.from_json(request["snapshot"])))
    return await outcome(chef, request["stored"])


def main() -> None:
    request = json.loads(sys.stdin.read())
    print(json.dumps(asyncio.run(restored_outcome(request))))
