"""`contextchef demo`: compile a bundled agent conversation to every target and summarise it."""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel
from rich.console import Console
from rich.table import Table

from contextchef.adapters import adapter_registry
from contextchef.chef import ContextChef
from contextchef.payload import Payload

SEQUENCE_KEYS = ("messages", "input", "contents")

# A long test log: the chef offloads it to vfs/ and the payload keeps a preview with the error.
TEST_LOG = "\n".join(
    "FAILED tests/test_parser.py::test_parse_empty - assert [] == ['']"
    if i == 140
    else f"tests/test_parser.py::test_case_{i} PASSED"
    for i in range(400)
)


class TaskState(BaseModel):
    """The live state of the demo task, re-stated to the model on every turn."""

    goal: str
    step: int
    files_touched: list[str]


def demo_chef(store: Any = None) -> ContextChef:
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
    chef = ContextChef(
        store=store,
        tools="unified",
        memory={},
        offload={"threshold": 2000, "head_chars": 150, "tail_chars": 150},
    ).set_system_prompt(
        [
            {
                "role": "system",
                "content": "You are a careful coding agent. Make small, tested changes.",
                "_cache_breakpoint": True,
            }
        ]
    )
    chef.tools.register(
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
    return (
        chef.set_history(
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
                {"role": "tool", "tool_call_id": "call_2", "content": TEST_LOG},
                {"role": "assistant", "content": "parse() ignores its input. Shall I patch it?"},
                {"role": "user", "content": "Yes, go ahead."},
            ]
        )
        .set_dynamic_state(
            TaskState, {"goal": "Make test_parse_empty pass", "step": 3, "files_touched": []}
        )
        .with_guardrails(enforce_xml={"output_tag": "plan"})
    )


SDK_CALLS = {
    "openai": "client.chat.completions.create(model=..., **payload)",
    "openai-responses": "client.responses.create(model=..., **payload)",
    "anthropic": "client.messages.create(model=..., max_tokens=..., **payload)",
    "gemini": "client.models.generate_content(model=..., **payload)",
}


def _roles(payload: Payload) -> str:
    for key in SEQUENCE_KEYS:
        if key in payload:
            roles = []
            for item in payload[key]:
                roles.append(str(item.get("role") or item.get("type") or "?"))
            return " ".join(roles)
    return "-"


def _tool_count(payload: Payload) -> int:
    if "tools" in payload:
        return len(payload["tools"])
    tools = payload.get("config", {}).get("tools", [])
    return sum(len(group.get("function_declarations", [])) for group in tools)


def summarize(payload: Payload) -> dict[str, Any]:
    """The figures the demo prints for one compiled payload."""
    tokens = payload.meta.tokens
    return {
        "target": payload.meta.target,
        "call": SDK_CALLS.get(payload.meta.target, "(custom adapter)"),
        "keys": ", ".join(payload),
        "sequence": _roles(payload),
        "tools": _tool_count(payload),
        "bytes": len(json.dumps(payload, ensure_ascii=False).encode()),
        "tokens": (
            f"system {tokens.system}, history {tokens.history}, tail {tokens.tail}, "
            f"tools {tokens.tools} (estimated)"
        ),
    }


def run(console: Console | None = None, *, store: Any = "sqlite") -> list[Payload]:
    """Compile the demo to every registered target and print what each SDK call receives.

    It runs on the embedded default store (SQLite under `CONTEXTCHEF_HOME`, else the user data
    directory), offline and without an API key.
    """
    console = console or Console()
    chef = demo_chef(store)
    console.print("[bold]contextchef demo[/bold]: one agent conversation, every provider\n")
    payloads = []
    for target in adapter_registry.names():
        payload = chef.compile(target=target)
        payloads.append(payload)
        row = summarize(payload)
        table = Table(show_header=False, box=None, padding=(0, 1))
        table.add_column(style="dim", no_wrap=True)
        table.add_column(overflow="fold")
        for label in ("call", "keys", "sequence", "tools", "bytes", "tokens"):
            table.add_row(label, str(row[label]))
        console.print(f"[bold cyan]{target}[/bold cyan]")
        console.print(table)
        console.print()
    tail = payloads[0]["messages"][-1]["content"]
    console.print("[bold]The tail stitched into the last user message (openai):[/bold]")
    console.print(tail, markup=False, highlight=False)
    _show_store(console, chef, payloads[0])
    return payloads


def _show_store(console: Console, chef: ContextChef, payload: Payload) -> None:
    """What left the window: the offloaded log, and the model reading it back."""
    result = next(m for m in payload["messages"] if m["role"] == "tool" and len(m["content"]) > 40)
    console.print("\n[bold]The 400-line test log as the payload carries it:[/bold]")
    console.print(result["content"], markup=False, highlight=False)
    uri = next(word for word in result["content"].split() if word.startswith("context://vfs/"))
    uri = uri.rstrip(".")
    view = {"command": "view", "path": uri, "view_range": [139, 142]}
    console.print(f"\n[bold]The model calls context {json.dumps(view)}:[/bold]")
    console.print(chef.handle_tool("context", view), markup=False, highlight=False)
    console.print()
