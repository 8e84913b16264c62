"""The dependency rule of design.md: lower layers never import higher ones, and siblings of
one layer import each other only along the edges design.md names.

Layers, bottom up: the foundation (errors, messages, tokens, prompts, events and the private
helpers) ← store ← memory, selection, placement ← retrieval, adapters ← pipeline, payload, chef
(and skills) ← cli, integrations and the facade. Nothing in store/ imports a feature; nothing
in selection/ imports a concrete backend. Imports under `if TYPE_CHECKING:` do not count.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "contextchef"
FOUNDATION = (
    "errors",
    "messages",
    "tokens",
    "prompts",
    "events",
    "_effects",
    "_sequences",
    "_memo",
    "_intake",
    "_schema",
    "_validator",
    "_fastcopy",
    "_jsonvalue",
    "_repair",
    "_config",
    "_limits",
    "_version",
)
LAYERS = {
    **dict.fromkeys(FOUNDATION, 0),
    "store": 1,
    "memory": 2,
    "selection": 2,
    "placement": 2,
    "retrieval": 3,
    "adapters": 3,
    "pipeline": 4,
    "payload": 4,
    "payload_cache": 4,
    "cache_ledger": 4,
    "_part_sizes": 4,
    "prompt_cache": 4,
    "cache_audit": 4,
    "pipeline_checks": 4,
    "chef": 4,
    "_snapshot_fields": 4,
    "_compaction": 4,
    "_cache_snapshot": 4,
    "_payload_builder": 4,
    "snapshot": 4,
    "skills": 4,
    "pool": 4,
    "cli": 5,
    "integrations": 5,
    "telemetry": 5,
    "__init__": 5,
    "__main__": 5,
}
SIBLING_EDGES = {("memory", "placement")}
"""Imports between packages of one layer that design.md names (memory renders XML with
placement's escaping). The foundation modules may import each other freely."""
CONCRETE_BACKENDS = ("backends",)


def unit_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def runtime_imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped.update(id(child) for child in ast.walk(node))
    found = []
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.ImportFrom) and node.module == "contextchef":
            found.extend(f"contextchef.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append(node.module)
        elif isinstance(node, ast.Import):
            found.extend(alias.name for alias in node.names)
    return [name for name in found if name.split(".")[0] == "contextchef"]


MODULES = sorted(SRC.rglob("*.py"))


def module_name(path: Path) -> str:
    relative = path.relative_to(SRC.parent).with_suffix("")
    return ".".join(relative.parts)


@pytest.mark.parametrize("path", MODULES, ids=lambda p: module_name(p))
def test_no_module_imports_a_higher_layer(path: Path) -> None:
    name = module_name(path)
    own = unit_of(name)
    assert own in LAYERS, f"{name}: add its package to the layer table of design.md and here"
    for imported in runtime_imports(path):
        other = unit_of(imported)
        if other not in LAYERS:  # `from contextchef import Name` reaches into the facade
            other = "__init__"
        if other == "__init__":
            assert own in ("__init__", "__main__", "cli"), f"{name} imports the facade"
            continue
        assert LAYERS[other] <= LAYERS[own], f"{name} (layer {own}) imports {imported}"
        if other != own and LAYERS[other] == LAYERS[own] and LAYERS[own] not in (0, 4, 5):
            assert (own, other) in SIBLING_EDGES, f"{name} imports its sibling {imported}"
        if own == "store":
            assert other != "adapters", f"{name} imports {imported}"
        if own == "selection" and other == "store":
            assert not imported.split(".")[2:3] or imported.split(".")[2] not in CONCRETE_BACKENDS
