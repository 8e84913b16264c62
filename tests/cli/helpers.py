"""What the CLI tests share: a runner, native history files in all four formats, store views."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from contextchef import ContextChef
from contextchef.cli import app
from contextchef.store.backend import StorageBackend

runner = CliRunner()

SYSTEM = "You are a careful coding agent."
IR_HISTORY: list[Any] = [
    {"role": "user", "content": "The parser test fails. Fix it."},
    {
        "role": "assistant",
        "content": "Reading the parser.",
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "read_file", "arguments": '{"path": "parser.py"}'},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "call_1", "content": "def parse(s):\n    return []"},
    {"role": "assistant", "content": "parse() ignores its input. Shall I patch it?"},
    {"role": "user", "content": "Yes, go ahead."},
]


def invoke(*args: str | Path, stdin: str | None = None, env: dict[str, str] | None = None) -> Any:
    """Run `contextchef ARGS` in process, as a user would."""
    return runner.invoke(app, [str(arg) for arg in args], input=stdin, env=env)


def native_history(fmt: str) -> Any:
    """The test conversation as a host keeps it in provider `fmt`'s own wire format.

    Made by compiling the IR with the library's adapters, so each file is what that provider's
    SDK call receives (OpenAI as a bare message list, the others as request-shaped objects).
    """
    chef = ContextChef(tools="legacy").set_system_prompt(SYSTEM).set_history(IR_HISTORY)
    payload = chef.compile(target=fmt)
    if fmt == "openai":
        return payload["messages"]
    if fmt == "openai-responses":
        return {"input": payload["input"], "instructions": payload["instructions"]}
    if fmt == "anthropic":
        return {"system": payload["system"], "messages": payload["messages"]}
    return {
        "contents": payload["contents"],
        "system_instruction": payload["config"]["system_instruction"],
    }


def write_json(path: Path, data: Any) -> Path:
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def error_line(result: Any) -> str:
    """The one line a failed command printed on stderr (asserting it is exactly one line)."""
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: "), lines[0]
    assert "Traceback" not in result.output
    return lines[0]


def contents(
    backend: StorageBackend, namespaces: tuple[str, ...] = ("memory", "notes", "vfs")
) -> Any:
    """Every entry's content per namespace: what "the store is unchanged" compares."""
    return {ns: {e.path: backend.read(ns, e.path) for e in backend.list(ns)} for ns in namespaces}
