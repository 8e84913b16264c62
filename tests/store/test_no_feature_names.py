"""`store/` names no feature: no string constant `"memory"` anywhere in it (docstrings aside).

Which namespaces keep versions is configuration the store receives (`versioned=`,
`keep_versions`); the name `memory` belongs to the memory layer, which defines it once
(`memory.entry.MEMORY_NAMESPACE`) and declares it versioned itself. A branch such as
`if ns == "memory":` in a backend would bring back what issue 22 removed, so this scan fails on
it. SQL text that mentions the name inside a longer string (released migrations, which describe
databases as they were) is not a constant equal to it.
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "contextchef"
STORE = SRC / "store"
FEATURE_NAMES = ("memory",)


def _docstrings(tree: ast.AST) -> set[int]:
    """The ids of the constants that are docstrings (of the module, classes, functions)."""
    found: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                found.add(id(body[0].value))
    return found


def feature_literals(source: str, filename: str = "<source>") -> list[tuple[int, str]]:
    """`(line, value)` of every string constant in `source` equal to a feature's name."""
    tree = ast.parse(source, filename)
    skip = _docstrings(tree)
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and node.value in FEATURE_NAMES
        and id(node) not in skip
    ]


def test_the_scan_catches_a_namespace_branch() -> None:
    code = '"""Mentions memory in a docstring."""\ndef read(ns):\n    return ns == "memory"\n'
    assert feature_literals(code) == [(3, "memory")]
    assert feature_literals('MEMORY_NAMESPACE = "memory"\n') == [(1, "memory")]
    assert feature_literals("SQL = \"WHERE namespace = 'memory'\"\n") == []


def test_store_holds_no_feature_name() -> None:
    files = sorted(STORE.rglob("*.py"))
    assert len(files) > 30  # the whole package, backends included
    found = {
        str(path.relative_to(SRC)): hits
        for path in files
        if (hits := feature_literals(path.read_text(encoding="utf-8"), str(path)))
    }
    assert found == {}


def test_the_memory_namespace_is_defined_once() -> None:
    """One assignment of the string `"memory"` to a `…NAMESPACE` name, in the memory layer."""
    definitions = []
    for path in sorted(SRC.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            targets: list[ast.expr] = []
            if isinstance(node, ast.Assign):
                targets, value = node.targets, node.value
            elif isinstance(node, ast.AnnAssign) and node.value is not None:
                targets, value = [node.target], node.value
            for target in targets:
                if (
                    isinstance(target, ast.Name)
                    and target.id.endswith("NAMESPACE")
                    and isinstance(value, ast.Constant)
                    and value.value == "memory"
                ):
                    definitions.append((str(path.relative_to(SRC)), target.id))
    assert definitions == [("memory/entry.py", "MEMORY_NAMESPACE")]
