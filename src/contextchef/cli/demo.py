"""`contextchef demo`: compile a bundled agent conversation to every target and summarise it."""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel
from rich.console import Console
from rich.table import Table

from contextchef.adapters import adapter_registry
from contextchef.chef import ContextChef
from contextchef.pipeline import Payload

SEQUENCE_KEYS = ("messages", "input", "contents")


class TaskState(BaseModel):
    """The live state of the demo task, re-stated to the model on every turn."""

    goal: str
    step: int
    files_touched: list[str]


def demo_chef() -> ContextChef:
    """A small but realistic coding-agent conversation, with tools, state and a guardrail."""
    read_call = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "read_file", "arguments": '{"path": "src/parser.py"}'},
    }
    test_call = {
        "id": "call_2",
        "type": "function",
        "function": {"name": "run_tests", "arguments": '{"pattern": "parser"}'},
    }
    return (
        ContextChef()
        .set_system_prompt(
            [
                {
                    "role": "system",
                    "content": "You are a careful coding agent. Make small, tested changes.",
                    "_cache_breakpoint": True,
                }
            ]
        )
        .register_tools(
            [
                {
                    "name": "read_file",
                    "description": "Read a file from the workspace.",
                    "parameters": {
                        "type": "object",
                        "properties": {"path": {"type": "string"}},
                        "required": ["path"],
                    },
                },
                {
                    "name": "run_tests",
                    "description": "Run the tests whose names match a pattern.",
                    "parameters": {
                        "type": "object",
                        "properties": {"pattern": {"type": "string"}},
                    },
                },
            ]
        )
        .set_history(
            [
                {"role": "user", "content": "The parser test fails. Can you fix it?"},
                {
                    "role": "assistant",
                    "content": "I will read the parser and run its tests.",
                    "tool_calls": [read_call, test_call],
                },
                {
                    "role": "tool",
                    "tool_call_id": "call_1",
                    "content": "def parse(s):\n    return []",
                },
                {"role": "tool", "tool_call_id": "call_2", "content": "FAILED test_parse_empty"},
                {"role": "assistant", "content": "parse() ignores its input. Shall I patch it?"},
                {"role": "user", "content": "Yes, go ahead."},
            ]
        )
        .set_dynamic_state(
            TaskState, {"goal": "Make test_parse_empty pass", "step": 3, "files_touched": []}
        )
        .with_guardrails(enforce_xml={"output_tag": "plan"})
    )


def _roles(payload: Payload) -> str:
    for key in SEQUENCE_KEYS:
        if key in payload:
            roles = []
            for item in payload[key]:
                roles.append(str(item.get("role") or item.get("type") or "?"))
            return " ".join(roles)
    return "-"


def summarize(payload: Payload) -> dict[str, Any]:
    """The figures the demo prints for one compiled payload."""
    tokens = payload.meta.tokens
    return {
        "target": payload.meta.target,
        "keys": ", ".join(payload),
        "sequence": _roles(payload),
        "tools": len(payload.get("tools", payload.get("config", {}).get("tools", []))),
        "bytes": len(json.dumps(payload, ensure_ascii=False).encode()),
        "tokens": f"{tokens.system}/{tokens.history}/{tokens.tail}/{tokens.tools}",
    }


def run(console: Console | None = None) -> list[Payload]:
    """Compile the demo to every registered target and print a table."""
    console = console or Console()
    chef = demo_chef()
    table = Table(title="contextchef demo: one conversation, every provider")
    for column in ("target", "keys", "sequence", "tools", "bytes", "tokens sys/hist/tail/tools"):
        table.add_column(column, overflow="fold")
    payloads = []
    for target in adapter_registry.names():
        payload = chef.compile(target=target)
        payloads.append(payload)
        row = summarize(payload)
        table.add_row(*(str(value) for value in row.values()))
    console.print(table)
    tail = payloads[0]["messages"][-1]["content"]
    console.print("\n[bold]Tail of the last user message (openai):[/bold]")
    console.print(tail, markup=False, highlight=False)
    return payloads
