"""Every import of the library is declared: a module-level import by a runtime dependency, an
import guarded by `except ImportError` (or made inside a function) by an extra. And `import
contextchef` stays light: no CLI library, no provider SDK. (`tests/install/gate.py` proves the
same on a real install; this test points at the line.)"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "src" / "contextchef"
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def normalized(requirement: str) -> str:
    name = re.match(r"[A-Za-z0-9._-]+", requirement)
    assert name is not None, requirement
    return re.sub(r"[-_.]+", "-", name.group(0)).lower()


RUNTIME = {normalized(r) for r in PROJECT["dependencies"]}
EXTRAS = {
    extra: {normalized(r) for r in requirements}
    for extra, requirements in PROJECT["optional-dependencies"].items()
    if extra != "dev"
}
DISTRIBUTIONS = {
    module: {normalized(d) for d in dists} for module, dists in packages_distributions().items()
}


def guards_import_error(node: ast.Try) -> bool:
    for handler in node.handlers:
        caught = handler.type
        names = caught.elts if isinstance(caught, ast.Tuple) else [caught]
        if any(
            isinstance(n, ast.Name) and n.id in ("ImportError", "ModuleNotFoundError")
            for n in names
        ):
            return True
    return False


def imports(tree: ast.Module) -> list[tuple[str, str, int]]:
    """(top-level module, where: module/guarded/function, line) of every absolute import."""
    found: list[tuple[str, str, int]] = []

    def visit(node: ast.AST, where: str) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            where = "function" if where == "module" else where
        if isinstance(node, ast.Try) and guards_import_error(node):
            for child in node.body:
                visit(child, "guarded")
            for rest in (*node.handlers, *node.orelse, *node.finalbody):
                visit(rest, where)
            return
        if (
            isinstance(node, ast.If)
            and isinstance(node.test, ast.Name)
            and node.test.id == "TYPE_CHECKING"
        ):
            return  # never executed
        if isinstance(node, ast.Import):
            found.extend((alias.name.split(".")[0], where, node.lineno) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.module.split(".")[0], where, node.lineno))
        for child in ast.iter_child_nodes(node):
            visit(child, where)

    visit(tree, "module")
    return found


def third_party_imports() -> list[tuple[str, str, str]]:
    """Every third-party import. A module-level import in a package whose `__init__` guards
    the same module counts as guarded: the package cannot be imported without it."""
    found = {
        path: imports(ast.parse(path.read_text(encoding="utf-8")))
        for path in sorted(SOURCE.rglob("*.py"))
    }
    guarded_by_package = {
        path.parent: {module for module, where, _ in found[path] if where == "guarded"}
        for path in found
        if path.name == "__init__.py"
    }
    out = []
    for path, seen in found.items():
        package_guards = set().union(
            *(guarded_by_package.get(parent, set()) for parent in path.parents)
        )
        for module, where, line in seen:
            if module in sys.stdlib_module_names or module in ("contextchef", "__future__"):
                continue
            if where == "module" and module in package_guards:
                where = "guarded"
            out.append((module, where, f"{path.relative_to(ROOT)}:{line}"))
    return out


def test_the_scan_sees_the_kinds_of_imports_it_judges() -> None:
    kinds = {(module, where) for module, where, _ in third_party_imports()}
    assert ("pydantic", "module") in kinds
    assert ("orjson", "guarded") in kinds
    assert ("psycopg", "guarded") in kinds


def test_module_level_imports_are_runtime_dependencies() -> None:
    undeclared = [
        f"{place}: import {module} (from {sorted(DISTRIBUTIONS.get(module, {'?'}))})"
        for module, where, place in third_party_imports()
        if where == "module" and not DISTRIBUTIONS.get(module, set()) & RUNTIME
    ]
    assert undeclared == [], "not in [project] dependencies:\n" + "\n".join(undeclared)


def test_optional_imports_belong_to_an_extra() -> None:
    declared = RUNTIME.union(*EXTRAS.values())
    undeclared = [
        f"{place}: import {module}"
        for module, where, place in third_party_imports()
        if where != "module" and not DISTRIBUTIONS.get(module, set()) & declared
    ]
    assert undeclared == [], "in no extra (the dev extra does not count):\n" + "\n".join(undeclared)


@pytest.mark.parametrize("extra", sorted(EXTRAS))
def test_every_extra_is_used(extra: str) -> None:
    used = {
        dist for module, _, _ in third_party_imports() for dist in DISTRIBUTIONS.get(module, ())
    }
    assert EXTRAS[extra] & used, f"no module imports what contextchef[{extra}] installs"


def test_import_contextchef_loads_no_cli_library_and_no_sdk() -> None:
    code = "import sys, contextchef; print('\\n'.join(sys.modules))"
    loaded = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split()
    heavy = (
        "typer",
        "click",
        "rich",
        "openai",
        "anthropic",
        "google",
        "psycopg",
        "mcp",
        "langgraph",
        "agents",
        "pydantic_ai",
        "opentelemetry",
    )
    assert sorted({m for m in loaded if m.split(".")[0] in heavy}) == []
