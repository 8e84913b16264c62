"""The rule of design.md: the pipeline asks an adapter's profile, never its type or target name.

Outside `src/contextchef/adapters/` no module may test an adapter against a concrete adapter
class (`isinstance`, `issubclass`, `type(x) is …`, a `case …()` pattern), read a capability off
an adapter with `getattr`, or branch on a built-in target name (a comparison or `case` with
`"anthropic"`, `"openai"`, …, or a constant set of such names). The command line is exempt from
the target-name part only: it shows each target's SDK call and checks a payload against the SDK
the target name stands for. Target names may still be registry keys and defaults.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "contextchef"
ADAPTERS = SRC / "adapters"
TARGET_NAMES = frozenset(("openai", "openai-responses", "anthropic", "gemini"))
NAMES_ALLOWED_IN = ("adapters", "cli")


def concrete_adapter_classes() -> frozenset[str]:
    """Every class under adapters/ with a `compile` method that is not a Protocol, and the
    tuple of the built-in ones."""
    names = {"BUILTIN_ADAPTERS"}
    for path in ADAPTERS.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ClassDef):
                continue
            if any(ast.unparse(base).endswith("Protocol") for base in node.bases):
                continue
            if any(
                isinstance(item, ast.FunctionDef) and item.name == "compile" for item in node.body
            ):
                names.add(node.name)
    return frozenset(names)


CONCRETE = concrete_adapter_classes()


def _names(node: ast.AST) -> set[str]:
    """The names an expression mentions (`A`, `module.A` and `(A, B)` all name `A`)."""
    found = set()
    for child in ast.walk(node):
        if isinstance(child, ast.Name):
            found.add(child.id)
        elif isinstance(child, ast.Attribute):
            found.add(child.attr)
    return found


def _target_names(node: ast.AST) -> set[str]:
    """The built-in target names an operand is or holds (a literal, a tuple/set/list of them,
    or `frozenset(...)`/`set(...)`/`tuple(...)` over one)."""
    if isinstance(node, ast.Constant) and node.value in TARGET_NAMES:
        return {node.value}
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return set().union(*(_target_names(item) for item in node.elts)) if node.elts else set()
    if isinstance(node, ast.Call) and ast.unparse(node.func) in ("frozenset", "set", "tuple"):
        return set().union(*(_target_names(arg) for arg in node.args)) if node.args else set()
    return set()


def _is_type_call(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "type"


def violations(source: str, *, target_names: bool = True) -> list[str]:
    """What in `source` finds a capability by type or by target name."""
    found = []
    for node in ast.walk(ast.parse(source)):
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            function = node.func.id
            if function in ("isinstance", "issubclass") and len(node.args) == 2:
                hit = _names(node.args[1]) & CONCRETE
                if hit:
                    found.append(f"line {line}: {function} with {sorted(hit)}")
            on = ast.unparse(node.args[0]).lower() if node.args else ""
            if function in ("getattr", "hasattr") and "adapter" in on:
                found.append(f"line {line}: {function} on an adapter")
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            if any(_is_type_call(operand) for operand in operands):
                hit = set().union(*(_names(operand) for operand in operands)) & CONCRETE
                if hit:
                    found.append(f"line {line}: type(...) compared with {sorted(hit)}")
            named = set().union(*(_target_names(operand) for operand in operands))
            if target_names and named:
                found.append(f"line {line}: compared with the target names {sorted(named)}")
        if isinstance(node, ast.MatchClass) and _names(node.cls) & CONCRETE:
            found.append(f"line {line}: case {ast.unparse(node.cls)}()")
        if target_names and isinstance(node, ast.MatchValue) and _target_names(node.value):
            found.append(f"line {line}: case {ast.unparse(node.value)}")
        if target_names and isinstance(node, ast.Assign | ast.AnnAssign) and node.value:
            value = node.value
            if not isinstance(value, ast.Constant) and _target_names(value):
                found.append(f"line {line}: a constant set of target names")
    return found


MODULES = sorted(path for path in SRC.rglob("*.py") if ADAPTERS not in path.parents)


def test_the_scan_knows_the_builtin_adapter_classes() -> None:
    assert {"AnthropicAdapter", "OpenAIChatAdapter", "OpenAIResponsesAdapter", "GeminiAdapter"} <= (
        CONCRETE
    )
    assert "TargetAdapter" not in CONCRETE  # the Protocol is what a pipeline may type against


def test_the_scan_finds_each_way_of_asking_the_type_or_the_name() -> None:
    source = """
isinstance(adapter, AnthropicAdapter)
isinstance(self.adapter, adapters.OpenAIChatAdapter | OpenAIResponsesAdapter)
isinstance(adapter, BUILTIN_ADAPTERS)
type(adapter) is GeminiAdapter
getattr(self.adapter, "supports_allowed_tools", False)
SERVER_TARGETS = frozenset(("anthropic",))
if target == "anthropic": pass
if target in ("openai", "openai-responses"): pass
match adapter:
    case AnthropicAdapter(): pass
match target:
    case "gemini": pass
"""
    assert len(violations(source)) == 10
    allowed = 'isinstance(adapter, TargetAdapter)\nregistry.get("anthropic")\nx = "openai"\n'
    assert violations(allowed) == []


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(SRC)))
def test_no_capability_is_found_by_adapter_type_or_target_name(path: Path) -> None:
    exempt = path.relative_to(SRC).parts[0] in NAMES_ALLOWED_IN
    assert violations(path.read_text(encoding="utf-8"), target_names=not exempt) == []
