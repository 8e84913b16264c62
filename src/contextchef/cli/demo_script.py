"""The scripted coding agent of `contextchef demo`: a fake workspace and a fake model.

Nothing here calls a model or touches the disk: a seeded `random.Random` decides which module
breaks, how long and noisy the test logs are and whether a fix holds, so a seed always plays the
same session. The fake model reads only what the compiled payload shows it (the memory block, the
offload previews, the summary's archive URI), so what the chef keeps or drops shapes its moves,
as it would a real model's.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

MODULES = ("parser", "lexer", "scheduler", "cache", "router", "config", "auth", "reports")
TEST_COMMAND = "python -m pytest -q -p no:randomly"
MEMORY_KEY = "test-command"
_VFS_URI = re.compile(r"context://vfs/[A-Za-z0-9._/-]+")
_ARCHIVE_URI = re.compile(r"context://archive/[A-Za-z0-9._/-]+")

TOOLS: list[dict[str, Any]] = [
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
        "description": "Run the test command on the tests matching a pattern.",
        "parameters": {
            "type": "object",
            "properties": {"command": {"type": "string"}, "pattern": {"type": "string"}},
            "required": ["command"],
        },
    },
    {
        "name": "edit_file",
        "description": "Replace one snippet of a file with another.",
        "parameters": {
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "old": {"type": "string"},
                "new": {"type": "string"},
            },
            "required": ["path", "old", "new"],
        },
    },
]


@dataclass(frozen=True)
class ToolCall:
    """One call the fake model makes: a workspace tool, or the library's `context` tool."""

    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class Reply:
    """The fake model's answer to one compiled payload: some text and at most one tool call."""

    text: str
    call: ToolCall | None = None


class Workspace:
    """A fake repository: file contents and test logs, generated from the session's seed."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.fixed: set[str] = set()

    def read_file(self, path: str) -> str:
        """A plausible Python module (a few KB; the big ones get offloaded)."""
        if path == "pyproject.toml":
            return (
                '[project]\nname = "shop"\n\n[tool.pytest.ini_options]\n'
                f'addopts = "-q"\n# run the suite with: {TEST_COMMAND}\n'
            )
        name = path.rsplit("/", 1)[-1].removesuffix(".py")
        functions = self.rng.randint(20, 140)
        lines = [f'"""The {name} module of the shop service."""', "", "import logging", ""]
        for i in range(functions):
            lines += [
                f"def {name}_step_{i}(value, *, strict=False):",
                f'    """Step {i} of the {name} pipeline."""',
                f"    if strict and value is None:\n        raise ValueError('{name} step {i}')",
                f"    return value if value else {i}",
                "",
            ]
        return "\n".join(lines)

    def run_tests(self, module: str, *, passing: bool) -> str:
        """A long, noisy pytest log: hundreds of PASSED lines, warnings, and the failures."""
        rng = self.rng
        count = rng.randint(250, 700)
        failing = set() if passing else set(rng.sample(range(count), rng.randint(1, 3)))
        lines = [f"$ {TEST_COMMAND} tests/test_{module}.py", f"collected {count} items", ""]
        for i in range(count):
            outcome = "FAILED" if i in failing else "PASSED"
            lines.append(f"tests/test_{module}.py::test_{module}_case_{i:04d} {outcome}")
            if rng.random() < 0.06:
                lines.append(
                    f"  DeprecationWarning: {module}.legacy_mode is deprecated "
                    f"(seen {rng.randint(1, 99)} times)"
                )
        for i in sorted(failing):
            lines += [
                "",
                f"___ test_{module}_case_{i:04d} ___",
                f"    def test_{module}_case_{i:04d}():",
                f">       assert {module}_step_{i % 20}(None, strict=True) == {i % 20}",
                f"E       ValueError: {module} step {i % 20}",
                f"src/{module}.py:{4 + 5 * (i % 20)}: ValueError",
            ]
        summary = f"{len(failing)} failed, {count - len(failing)} passed" if failing else ""
        lines.append(f"=== {summary or f'{count} passed'} in {rng.uniform(2, 9):.2f}s ===")
        return "\n".join(lines)


@dataclass
class FakeModel:
    """A deterministic coding agent: one task at a time, one tool call per turn.

    Each task (a module whose tests fail) goes: read the module, run its tests, read the
    offloaded log back through `context`, patch, test again (a fix holds with probability 0.7),
    sometimes note what it learned, sometimes re-read an archived span, then report. It learns
    the test command once — from `pyproject.toml`, or from memory when the payload shows it — and
    saves it to memory.
    """

    rng: random.Random
    knows_test_command: bool = False
    saved_test_command: bool = False
    task: int = 0
    module: str = ""
    plan: list[str] = field(default_factory=list)
    notes_written: int = 0

    def start_task(self) -> str:
        """The user's next request; the plan of the task that follows."""
        self.task += 1
        self.module = self.rng.choice(MODULES)
        plan = [] if self.knows_test_command else ["discover", "remember"]
        plan += ["read", "test", "inspect", "edit", "retest"]
        self.plan = plan
        return f"Task {self.task}: the {self.module} tests fail on CI. Please fix them."

    def reply(self, payload_text: str, last_result: str) -> Reply:
        """The next move, given the compiled payload (as text) and the last tool result."""
        if self.plan[:1] == ["discover"] and TEST_COMMAND in payload_text:
            self.knows_test_command = True  # memory from an earlier run, shown in the payload
            del self.plan[:2]
        step = self.plan.pop(0) if self.plan else "report"
        module, path = self.module, f"src/{self.module}.py"
        if step == "discover":
            return Reply(
                "First, how are tests run here?", _call("read_file", path="pyproject.toml")
            )
        if step == "remember":
            self.knows_test_command = self.saved_test_command = True
            write = {"command": "create", "path": f"memory/{MEMORY_KEY}", "file_text": TEST_COMMAND}
            return Reply("I will remember the test command.", ToolCall("context", write))
        if step == "read":
            return Reply(f"Reading {path}.", _call("read_file", path=path))
        if step in ("test", "retest"):
            if step == "retest":
                self._after_retest()
            return Reply(
                f"Running the {module} tests.",
                _call("run_tests", command=TEST_COMMAND, pattern=module),
            )
        if step == "inspect":
            return self._inspect(payload_text, last_result)
        if step == "edit":
            return Reply(
                f"The strict path of {module} raises; patching it.",
                _call("edit_file", path=path, old="raise ValueError", new="return None"),
            )
        if step == "note":
            self.notes_written += 1
            note = {
                "command": "create",
                "path": f"notes/task-{self.task:03d}-{module}.md",
                "file_text": f"{module}: strict mode must not raise on None; fixed in {path}.",
            }
            return Reply("Noting what I learned.", ToolCall("context", note))
        if step == "recall":
            uris = _ARCHIVE_URI.findall(payload_text)
            if uris:
                view = {"command": "view", "path": uris[-1], "view_range": [1, 30]}
                return Reply("Checking the archived turns for earlier fixes.", _call_ctx(view))
        return Reply(f"Done: the {module} tests pass now.")

    def _inspect(self, payload_text: str, last_result: str) -> Reply:
        """Read the offloaded test log back around its first failure, if it was offloaded."""
        uris = _VFS_URI.findall(last_result) or _VFS_URI.findall(payload_text)
        if not uris:
            return Reply("The failure is in the log above.")
        start = self.rng.randint(1, 200)
        view = {"command": "view", "path": uris[-1].rstrip("."), "view_range": [start, start + 25]}
        return Reply("The log was offloaded; reading the part around the failure.", _call_ctx(view))

    def _after_retest(self) -> None:
        """Decide now whether this fix holds; if not, go round once more."""
        holds = self.rng.random() < 0.7
        if not holds:
            self.plan += ["inspect", "edit", "retest"]
            return
        if self.rng.random() < 0.5:
            self.plan.append("note")
        if self.rng.random() < 0.35:
            self.plan.append("recall")

    def fix_holds(self) -> bool:
        """Whether the test run now happening passes (no retest left in the plan)."""
        return "retest" not in self.plan


def _call(name: str, **arguments: Any) -> ToolCall:
    return ToolCall(name, dict(arguments))


def _call_ctx(arguments: dict[str, Any]) -> ToolCall:
    return ToolCall("context", arguments)


def fake_summarizer(messages: Sequence[Any]) -> str:
    """A deterministic stand-in for the summarising model: what was worked on, in one line."""
    text = json.dumps(list(messages), sort_keys=True, default=str)
    modules = sorted(set(re.findall(r"src/([a-z]+)\.py", text)))
    tasks = sorted(set(re.findall(r"Task (\d+):", text)), key=int)
    failed = len(re.findall(r"\d+ failed", text))
    done = ", ".join(modules) or "nothing yet"
    span = f"tasks {tasks[0]}-{tasks[-1]}" if tasks else "earlier turns"
    return (
        f"<summary>Over {span} the agent worked on {done}; {failed} failing test runs were "
        f"investigated and fixed. Tests run with `{TEST_COMMAND}`.</summary>"
    )
