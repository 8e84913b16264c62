"""No source text is run in the package: no call to the builtins `eval`, `exec` or `compile`
anywhere in src/contextchef (design.md: no process-wide side effects, no eval/exec).

Read from the syntax tree: a bare call `eval(...)`, a call through the `builtins` module
(`builtins.exec(...)`, under any alias), or through a name imported from it. Methods that happen
to be called `compile` (`re.compile`, `chef.compile`) are not the builtin and pass.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "contextchef"
BUILTINS = frozenset(("eval", "exec", "compile"))


def dynamic_calls(source: str) -> list[str]:
    """Each call to the builtin eval, exec or compile in `source`, as `line: text`."""
    tree = ast.parse(source)
    modules = {"builtins", "__builtins__"}  # names bound to the builtins module
    bare = set(BUILTINS)  # names bound to one of the three builtins
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules |= {a.asname or a.name for a in node.names if a.name == "builtins"}
        elif isinstance(node, ast.ImportFrom) and node.module == "builtins":
            bare |= {a.asname or a.name for a in node.names if a.name in BUILTINS}
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        direct = isinstance(func, ast.Name) and func.id in bare
        through = (
            isinstance(func, ast.Attribute)
            and func.attr in BUILTINS
            and isinstance(func.value, ast.Name)
            and func.value.id in modules
        )
        if direct or through:
            found.append(f"{node.lineno}: {ast.unparse(node)}")
    return found


@pytest.mark.parametrize("path", sorted(SRC.rglob("*.py")), ids=lambda p: str(p.relative_to(SRC)))
def test_no_module_calls_eval_exec_or_compile(path: Path) -> None:
    assert dynamic_calls(path.read_text(encoding="utf-8")) == []


def test_the_check_finds_every_spelling_and_spares_methods() -> None:
    flagged = """
import builtins
import builtins as b
from builtins import exec as run
eval("1")
exec("x = 1")
compile("1", "<s>", "eval")
builtins.eval("1")
b.compile("1", "<s>", "eval")
run("x = 1")
"""
    assert len(dynamic_calls(flagged)) == 6
    spared = """
import re
re.compile("a+")
chef.compile(target="openai")
self.compile()
pattern.eval()
"""
    assert dynamic_calls(spared) == []
