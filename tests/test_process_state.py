"""contextchef leaves the interpreter as the host set it up: the garbage collector (on or off,
its callbacks, thresholds and frozen objects), the interpreter's switch interval and recursion
limit, and the logging configuration. Whatever a collector pause or a global setting would buy
a compile is the host's choice to make (see docs/performance.md), never the library's.

The dynamic tests drive every entry point a host calls in a turn, sync and async (setters, the
agent loop, compiles with overflow and store writes, the context tool) with the collector off
and then on, and check nothing moved and no call reached `gc`; the static test keeps such calls
out of `src/` altogether.
"""

from __future__ import annotations

import ast
import asyncio
import gc
import logging
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from contextchef import AsyncContextChef, ContextChef, summarize

SRC = Path(__file__).resolve().parents[1] / "src" / "contextchef"

GC_SETTERS = ("disable", "enable", "freeze", "unfreeze", "set_threshold", "set_debug", "collect")
"""The `gc` functions that change the collector's state (or run it) for the whole process."""

FORBIDDEN_CALLS = {
    "gc": frozenset(GC_SETTERS),
    "sys": frozenset(
        (
            "setswitchinterval",
            "setrecursionlimit",
            "set_int_max_str_digits",
            "setprofile",
            "settrace",
        )
    ),
    "logging": frozenset(("basicConfig", "disable", "captureWarnings")),
    "warnings": frozenset(("filterwarnings", "simplefilter", "resetwarnings")),
    "threading": frozenset(("setprofile", "settrace", "stack_size")),
}
"""Calls that change interpreter-wide state, by module. (`eval`/`exec` are checked elsewhere.)"""


def history(count: int) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    for turn in range(count):
        messages.append({"role": "user", "content": f"Step {turn}: " + "look at this. " * 40})
        messages.append({"role": "assistant", "content": f"Done with step {turn}. " * 20})
    return messages


CALL = {
    "role": "assistant",
    "content": None,
    "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}
    ],
}
CREATE = {"command": "create", "path": "context://notes/todo.md", "file_text": "ship it"}
VIEW = {"command": "view", "path": "context://notes/"}


def options() -> dict[str, Any]:
    """A chef that compresses (summarizer call, archive writes) on the first compile."""
    return {
        "budget": {"context_window": 3000},
        "overflow": {"strategy": summarize(lambda messages: "<summary>so far</summary>")},
    }


def sync_turns() -> None:
    chef = ContextChef(**options()).set_system_prompt("You are careful.")
    chef.on("compile:start", lambda event: None)
    chef.set_history(history(12))
    for target in ("openai", "anthropic", "openai-responses", "gemini"):
        chef.compile(target=target)
    chef.append_history([{"role": "user", "content": "list the files"}])
    chef.add_response(CALL).add_tool_result("call_1", "a.txt\nb.txt")
    assert not chef.handle_tool("context", CREATE).startswith("Error")
    assert "todo.md" in chef.handle_tool("context", VIEW)
    chef.compile(target="anthropic")


async def async_turns() -> None:
    chef = AsyncContextChef(**options()).set_system_prompt("You are careful.")
    chef.set_history(history(12))
    await chef.compile(target="anthropic")
    chef.add_response(CALL).add_tool_result("call_1", "a.txt")
    assert not (await chef.handle_tool("context", CREATE)).startswith("Error")
    await chef.compile(target="openai")


def every_entry_point() -> None:
    sync_turns()
    asyncio.run(async_turns())


def interpreter_state() -> dict[str, Any]:
    root = logging.getLogger()
    loggers = {
        name: (logger.level, list(logger.handlers), logger.propagate, logger.disabled)
        for name, logger in logging.root.manager.loggerDict.items()
        if isinstance(logger, logging.Logger) and not name.startswith("contextchef")
    }
    return {
        "gc enabled": gc.isenabled(),
        "gc callbacks": list(gc.callbacks),
        "gc thresholds": gc.get_threshold(),
        "gc debug": gc.get_debug(),
        "gc frozen": gc.get_freeze_count(),
        "switch interval": sys.getswitchinterval(),
        "recursion limit": sys.getrecursionlimit(),
        "root logger": (root.level, list(root.handlers)),
        "other loggers": loggers,
        "logging disabled": logging.root.manager.disable,
    }


@pytest.fixture
def gc_calls(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Every call of a `gc` state setter while the test runs (the real one still happens)."""
    calls: list[str] = []
    enabled = gc.isenabled()

    def spy(name: str, real: Callable[..., Any]) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            calls.append(name)
            return real(*args, **kwargs)

        return call

    for name in GC_SETTERS:
        monkeypatch.setattr(gc, name, spy(name, getattr(gc, name)))
    yield calls
    monkeypatch.undo()
    gc.enable() if enabled else gc.disable()


@pytest.mark.parametrize("collector", ["off", "on"])
def test_a_turn_leaves_the_collector_and_the_interpreter_as_the_host_set_them(
    gc_calls: list[str], collector: str
) -> None:
    gc.disable() if collector == "off" else gc.enable()
    del gc_calls[:]  # the test's own switch
    before = interpreter_state()
    every_entry_point()
    assert interpreter_state() == before
    assert gc.isenabled() is (collector == "on")
    assert gc_calls == []


def test_a_collector_a_handler_turns_off_mid_compile_stays_off(gc_calls: list[str]) -> None:
    """The host may change the collector from its own code at any point; we never undo it."""
    gc.enable()
    del gc_calls[:]  # the test's own switch
    chef = ContextChef(**options()).set_history(history(12))
    chef.on("compile:start", lambda event: gc.disable())
    chef.compile(target="anthropic")
    assert not gc.isenabled()
    chef.on("compile:done", lambda event: gc.enable())
    chef.compile(target="gemini")
    assert gc.isenabled()
    assert gc_calls == ["disable", "disable", "enable"]  # the handlers' calls, none of ours


@pytest.mark.parametrize("enabled", [True, False])
def test_callbacks_see_the_collector_as_the_host_left_it(
    gc_calls: list[str], enabled: bool
) -> None:
    """User code inside a compile (a tokenizer, a summarizer, a handler) runs with the collector
    exactly as the host set it: on stays on, off stays off."""
    gc.enable() if enabled else gc.disable()
    del gc_calls[:]  # the test's own switch
    seen: set[bool] = set()

    class Counting:
        def count_text(self, text: str) -> int:
            seen.add(gc.isenabled())
            return len(text) // 4

        def count_message(self, message: Any) -> int:
            seen.add(gc.isenabled())
            return len(str(message.get("content"))) // 4 + 4

    def summarizer(messages: list[Any]) -> str:
        seen.add(gc.isenabled())
        return "<summary>so far</summary>"

    chef = ContextChef(
        tokenizer=Counting(),
        budget={"context_window": 3000},
        overflow={"strategy": summarize(summarizer)},
    )
    chef.on("compile:done", lambda event: seen.add(gc.isenabled()))
    chef.set_history(history(12)).compile(target="anthropic")
    assert seen == {enabled}
    assert gc_calls == []


def _forbidden_calls(tree: ast.AST) -> list[str]:
    """`module.name(...)` calls (and `from module import name` of such names) in `tree`."""
    aliases: dict[str, str] = {}  # local name -> module, for `import gc as g`
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in FORBIDDEN_CALLS:
                    aliases[alias.asname or alias.name] = alias.name
        elif isinstance(node, ast.ImportFrom) and node.module in FORBIDDEN_CALLS:
            names = FORBIDDEN_CALLS[node.module]
            found += [f"from {node.module} import {a.name}" for a in node.names if a.name in names]
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
            continue
        owner = node.func.value
        if isinstance(owner, ast.Name) and owner.id in aliases:
            module = aliases[owner.id]
            if node.func.attr in FORBIDDEN_CALLS[module]:
                found.append(f"{module}.{node.func.attr}() at line {node.lineno}")
    return found


def test_no_module_changes_interpreter_wide_state() -> None:
    offenders = {
        str(path.relative_to(SRC)): calls
        for path in sorted(SRC.rglob("*.py"))
        if (calls := _forbidden_calls(ast.parse(path.read_text(encoding="utf-8"))))
    }
    assert offenders == {}


def test_the_static_check_finds_what_it_looks_for() -> None:
    source = (
        "import gc\nimport sys as system\nfrom logging import basicConfig\n"
        "gc.disable()\nsystem.setswitchinterval(1)\ngc.isenabled()\n"
    )
    assert _forbidden_calls(ast.parse(source)) == [
        "from logging import basicConfig",
        "gc.disable() at line 4",
        "sys.setswitchinterval() at line 5",
    ]
