"""Compile one agent state to every provider and print what each SDK call would receive.

Run: python examples/compile_everywhere.py
"""

from __future__ import annotations

import json

from pydantic import BaseModel

from contextchef import ContextChef
from contextchef.adapters import adapter_registry


class Task(BaseModel):
    goal: str
    done: list[str]


def main() -> None:
    chef = (
        ContextChef()
        .set_system_prompt("You are a release assistant. Be brief.")
        .set_history(
            [
                {"role": "user", "content": "Prepare the 2.1 release notes."},
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "call_1",
                            "type": "function",
                            "function": {"name": "git_log", "arguments": '{"since": "v2.0"}'},
                        }
                    ],
                },
                {"role": "tool", "tool_call_id": "call_1", "content": "fix: parser\nfeat: cli"},
            ]
        )
        .set_dynamic_state(Task, {"goal": "release notes for 2.1", "done": ["read git log"]})
    )
    chef.tools.register(
        [
            {
                "name": "git_log",
                "description": "Show commits since a tag.",
                "parameters": {"type": "object", "properties": {"since": {"type": "string"}}},
            }
        ]
    )
    for target in adapter_registry.names():
        payload = chef.compile(target=target)
        print(f"== {target}: {sorted(payload)} ({payload.meta.tokens.total} tokens, estimated)")
        print(json.dumps(payload, ensure_ascii=False)[:300], "...")


if __name__ == "__main__":
    main()
