"""The dependency rule of design.md: zero import circles and zero arrows that run back up.

The module import graph is built from the AST of every module under `src/contextchef`: every
`import contextchef.x` and `from contextchef.x import y` anywhere in a module counts, inside
functions and under `if TYPE_CHECKING:` too, and so does `importlib.import_module("contextchef.…")`
with a literal name. An import of a package's name resolves to the package's `__init__` module
(so `from contextchef import X` is an arrow to the facade), an import of a submodule to that
submodule.

Two rules hold over that graph:

1. No circles: no strongly connected component has more than one module.
2. Layers, bottom up: the foundation (`errors, messages, tokens, prompts, events` and the private
   helpers) ← `store` ← `memory, selection, placement, cache, skills` ← `retrieval, adapters`
   ← `compiler, payload` ← the chef (`chef`, its `_chef_*` parts, `snapshot`, `pool`) and
   `telemetry` ← `integrations, cli` and the facade `__init__`. An arrow never runs to a higher
   layer. Within the store-to-compiler layers a package imports a sibling of its layer only
   along an edge named in `SIBLING_EDGES`. Nothing imports the facade; nothing below the chef
   but `store/` itself imports a concrete backend (`store.backends`).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
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
    "_intake_core",
    "_schema",
    "_validator",
    "_fastcopy",
    "_hosttext",
    "_jsonvalue",
    "_jsonload",
    "_jsondump",
    "_repair",
    "_config",
    "_limits",
    "_version",
    "_renamed",
    "_lazy",
)
CHEF = (
    "chef",
    "_compaction",
    "snapshot",
    "_snapshot_fields",
    "pool",
    "telemetry",
)
LAYERS: dict[str, int] = {
    **dict.fromkeys(FOUNDATION, 0),
    "store": 1,
    **dict.fromkeys(("memory", "selection", "placement", "cache", "skills"), 2),
    **dict.fromkeys(("retrieval", "adapters"), 3),
    **dict.fromkeys(("compiler", "payload"), 4),
    **dict.fromkeys(CHEF, 5),
    **dict.fromkeys(("integrations", "cli", "__init__", "__main__"), 6),
}
"""Each top-level unit of the package (a subpackage or a top-level module) and its layer."""
SIBLING_EDGES = {
    ("memory", "placement"),  # memory renders XML with placement's escaping
    ("cache", "memory"),  # the memory block is part of the cached prefix
    ("cache", "placement"),  # breakpoints and the dynamic state's place
    ("retrieval", "adapters"),  # the context tool's definition in the IR of tools
    ("compiler", "payload"),  # the pipeline builds the payload
}
"""Imports between units of one layer that design.md names, in the layers from `store` to
`compiler`; the foundation and the layers from the chef up import their siblings freely (the
circle rule still holds there)."""
FREE_SIBLINGS = (0, 5, 6)
CHEF_LAYER = 5


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imported_names(tree: ast.Module, me: str, is_package: bool) -> Iterator[tuple[str, str]]:
    """(module, imported name or "") for every import of the tree, wherever it stands."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, ""
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:
                base = me.split(".") if is_package else me.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                module = ".".join([*base, *([module] if module else [])])
            for alias in node.names:
                yield module, alias.name
        elif isinstance(node, ast.Call) and node.args:
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            first = node.args[0]
            literal = first.value if isinstance(first, ast.Constant) else None
            if called == "import_module" and isinstance(literal, str):
                yield literal, ""


def import_graph(root: Path) -> dict[str, set[str]]:
    """Module → the package's modules it imports (see the module docstring)."""
    top = root.name
    paths = {module_name(path, root): path for path in sorted(root.rglob("*.py"))}

    def resolve(name: str) -> str | None:
        while name not in paths:
            if "." not in name:
                return None
            name = name.rsplit(".", 1)[0]
        return name

    graph: dict[str, set[str]] = {}
    for me, path in paths.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        found: set[str] = set()
        for module, name in _imported_names(tree, me, path.name == "__init__.py"):
            if module.split(".")[0] != top:
                continue
            full = f"{module}.{name}" if name else module
            target = full if full in paths else resolve(module)
            if target is not None and target != me:
                found.add(target)
        graph[me] = found
    return graph


def circles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module, each as one circle through
    them (a path that ends where it started), found with Tarjan's algorithm."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[set[str]] = []

    def visit(start: str) -> None:
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = set()
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.add(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        components.append(component)

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return [_circle_through(graph, component) for component in components]


def _circle_through(graph: Mapping[str, set[str]], component: set[str]) -> list[str]:
    """A shortest circle from the component's first module back to it, inside the component."""
    start = min(component)
    paths = {start: [start]}
    queue = [start]
    while queue:
        node = queue.pop(0)
        for child in sorted(graph[node] & component):
            if child == start:
                return [*paths[node], start]
            if child not in paths:
                paths[child] = [*paths[node], child]
                queue.append(child)
    raise AssertionError(f"no circle through {sorted(component)}")  # pragma: no cover


def unit_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def layer_violations(graph: Mapping[str, set[str]], layers: Mapping[str, int]) -> list[str]:
    """Every arrow that breaks the layer rule, in words."""
    found = []
    for module, imported in sorted(graph.items()):
        own = unit_of(module)
        if own not in layers:
            found.append(f"{module}: add {own!r} to the layer table of design.md and here")
            continue
        for target in sorted(imported):
            other = unit_of(target)
            if other == own and other != "__init__":
                continue
            if target == target.split(".")[0]:
                found.append(f"{module} imports the facade: import from the defining module")
                continue
            if other not in layers:
                found.append(f"{target}: add {other!r} to the layer table")
                continue
            if layers[other] > layers[own]:
                found.append(
                    f"{module} (layer {layers[own]}) imports {target} (layer {layers[other]}): "
                    "an arrow that runs back up"
                )
            elif (
                layers[other] == layers[own]
                and layers[own] not in FREE_SIBLINGS
                and (own, other) not in SIBLING_EDGES
            ):
                found.append(f"{module} imports its sibling {target} (not in SIBLING_EDGES)")
            if ".store.backends" in f"{target}." and own != "store" and layers[own] < CHEF_LAYER:
                found.append(f"{module} imports the concrete backend {target}")
    return found


GRAPH = import_graph(SRC)


def test_there_is_no_import_circle() -> None:
    found = circles(GRAPH)
    assert not found, "import circles:\n" + "\n".join(" → ".join(c) for c in found)


def test_no_arrow_runs_back_up() -> None:
    found = layer_violations(GRAPH, LAYERS)
    assert not found, "\n".join(found)


def test_the_graph_sees_every_kind_of_import() -> None:
    """TYPE_CHECKING and function-level imports count (the store's own graph has both)."""
    assert len(GRAPH) > 200
    assert "contextchef.messages" in GRAPH["contextchef.selection.pruner"]  # under TYPE_CHECKING


# -- self-test: the checks catch what they are for ---------------------------------------------


def _package(root: Path, modules: Mapping[str, str]) -> Path:
    package = root / "pkg"
    for name, text in modules.items():
        path = package.joinpath(*name.split(".")).with_suffix(".py")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return package


TOY_LAYERS = {"errors": 0, "low": 1, "high": 2, "__init__": 3}


@pytest.mark.parametrize(
    "where",
    [
        "from pkg.high import thing\n",
        "import typing\nif typing.TYPE_CHECKING:\n    from pkg.high import thing\n",
        "def f():\n    from pkg.high import thing\n",
        "import importlib\nimportlib.import_module('pkg.high')\n",
    ],
    ids=["module level", "TYPE_CHECKING", "function level", "importlib"],
)
def test_the_checks_catch_a_circle_and_an_upward_arrow(tmp_path: Path, where: str) -> None:
    package = _package(
        tmp_path,
        {
            "__init__": "from pkg.high import thing\n",
            "errors": "",
            "low": where,
            "high": "import pkg.low\nthing = 1\n",
        },
    )
    graph = import_graph(package)
    assert circles(graph) == [["pkg.high", "pkg.low", "pkg.high"]]
    (violation,) = layer_violations(graph, TOY_LAYERS)
    assert violation.startswith("pkg.low (layer 1) imports pkg.high (layer 2)")


def test_the_facade_counts_as_a_module(tmp_path: Path) -> None:
    """`from pkg import name` from inside the package is an arrow to the facade: a circle."""
    package = _package(
        tmp_path,
        {"__init__": "from pkg.low import thing\n", "errors": "", "low": "from pkg import x\n"},
    )
    graph = import_graph(package)
    assert circles(graph) == [["pkg", "pkg.low", "pkg"]]
    assert layer_violations(graph, TOY_LAYERS) == [
        "pkg.low imports the facade: import from the defining module"
    ]


def test_a_clean_package_passes(tmp_path: Path) -> None:
    package = _package(
        tmp_path,
        {
            "__init__": "from pkg.high import thing\n",
            "errors": "",
            "low": "from pkg import errors\n",
            "high": "from pkg.low import x\n",
        },
    )
    graph = import_graph(package)
    assert graph["pkg.low"] == {"pkg.errors"}
    assert not circles(graph)
    assert not layer_violations(graph, TOY_LAYERS)
