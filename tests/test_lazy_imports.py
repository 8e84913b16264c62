"""A cheap start: `import contextchef` (or one of its modules) and `contextchef --version` load
what they need, and the public names stay where they were.

The package `__init__`s export lazily (`contextchef._lazy`, PEP 562): a name's module is
imported on first use. Type checkers and IDEs read the same names from an `if TYPE_CHECKING:`
block, so these tests hold the block, the runtime answer and `__all__` together, and watch a
fresh interpreter's `sys.modules` for what a cold start loads.
"""

from __future__ import annotations

import ast
import importlib
import json
import os
import pkgutil
import pydoc
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

import pytest

import contextchef
from contextchef._lazy import lazy_exports
from contextchef.errors import MissingDependencyError

SRC = Path(__file__).resolve().parents[1] / "src"
LAZY_PACKAGES = sorted(
    ".".join(path.parent.relative_to(SRC).parts)
    for path in (SRC / "contextchef").rglob("__init__.py")
    if "lazy_exports(" in path.read_text(encoding="utf-8")
)
"""Every package whose `__init__` exports lazily."""

HEAVY = ("pydantic", "rich", "yaml", "asyncio", "contextchef.chef", "contextchef.compiler")


def type_checked(package: str) -> dict[str, str]:
    """Name → home module, as the `if TYPE_CHECKING:` block of `package`'s `__init__` imports
    it (what mypy and IDEs see)."""
    path = SRC.joinpath(*package.split("."), "__init__.py")
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            for statement in node.body:
                assert isinstance(statement, ast.ImportFrom), ast.unparse(statement)
                for alias in statement.names:
                    found[alias.asname or alias.name] = str(statement.module)
    return found


def bound_eagerly(package: str) -> set[str]:
    """The names `package`'s `__init__` binds when it runs (imports, defs and assignments)."""
    path = SRC.joinpath(*package.split("."), "__init__.py")
    found: set[str] = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.ImportFrom | ast.Import):
            found |= {(alias.asname or alias.name).split(".")[0] for alias in node.names}
        elif isinstance(node, ast.FunctionDef | ast.ClassDef):
            found.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            found |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return found


def fresh(code: str, *, env: dict[str, str] | None = None) -> dict[str, Any]:
    """Run `code` in a new interpreter and return the JSON it prints last."""
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, **(env or {})},
    )
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def test_every_lazy_package_is_found() -> None:
    assert {"contextchef", "contextchef.store", "contextchef.store.backends"} <= set(LAZY_PACKAGES)


@pytest.mark.parametrize("package", LAZY_PACKAGES)
def test_each_name_is_the_object_its_type_checked_import_names(package: str) -> None:
    module = importlib.import_module(package)
    homes = type_checked(package)
    assert homes, f"{package} has no TYPE_CHECKING block"
    assert set(homes) <= set(module.__all__)
    assert set(module.__all__) <= set(homes) | bound_eagerly(package)  # mypy sees every name
    for name in module.__all__:  # every public name resolves (lazily or eagerly bound)
        assert name in dir(module)
        value = getattr(module, name)
        if name in homes:
            assert value is getattr(importlib.import_module(homes[name]), name), name
        assert not isinstance(value, types.ModuleType), f"{package}.{name} is a module"


@pytest.mark.parametrize("package", LAZY_PACKAGES)
def test_no_lazy_name_is_also_a_submodule_of_its_package(package: str) -> None:
    # Importing such a submodule would bind the module to the package attribute, and the lazy
    # `__getattr__` would never be asked for the name again.
    module = importlib.import_module(package)
    submodules = {info.name for info in pkgutil.iter_modules(module.__path__)}
    assert set(type_checked(package)) & submodules == set()


def test_import_contextchef_loads_only_the_facade() -> None:
    loaded = fresh(
        "import sys, json, contextchef\n"
        "before = sorted(sys.modules)\n"
        "from contextchef import estimate\n"
        "print(json.dumps({'before': before, 'after': sorted(sys.modules),"
        " 'dir': sorted(dir(contextchef)), 'estimate': estimate('hello world') > 0}))"
    )
    before = set(loaded["before"])
    ours = {name for name in before if name.startswith("contextchef")}
    assert ours == {"contextchef", "contextchef._lazy", "contextchef._renamed"}
    assert {name.split(".")[0] for name in before} & {"pydantic", "rich", "yaml"} == set()
    assert set(contextchef.__all__) <= set(loaded["dir"])
    assert loaded["estimate"]  # the first use imported its module, and only what that needs
    assert "contextchef.tokens" in loaded["after"] and "contextchef.chef" not in loaded["after"]


def test_a_submodule_is_served_on_first_use_as_when_everything_was_imported() -> None:
    served = fresh(
        "import json, contextchef\n"
        "error = contextchef.errors.StoreError\n"
        "backend = contextchef.store.backends.SQLiteBackend\n"
        "missing = [hasattr(contextchef, n) for n in ('no_such_module', '_repair')]\n"
        "print(json.dumps({'names': [error.__name__, backend.__name__], 'missing': missing}))"
    )
    assert served == {"names": ["StoreError", "SQLiteBackend"], "missing": [False, False]}


def test_importing_one_backend_loads_neither_the_features_nor_the_other_backends() -> None:
    loaded = fresh(
        "import sys, json\nimport contextchef.store.backends.sqlite\n"
        "print(json.dumps({'m': sorted(sys.modules)}))"
    )["m"]
    modules = set(loaded)
    unwanted = {
        *HEAVY,
        "contextchef.memory",
        "contextchef.selection",
        "contextchef.adapters",
        "contextchef.store.backends.filesystem",
        "contextchef.store.backends.inmemory",
        "contextchef.store.legacy41",
    }
    assert modules & unwanted == set()


def test_contextchef_version_loads_neither_the_chef_nor_the_store_nor_rich() -> None:
    loaded = fresh(
        "import sys, json, io, contextlib\n"
        "sys.argv = ['contextchef', '--version']\n"
        "from contextchef.cli import main\n"
        "out = io.StringIO()\n"
        "with contextlib.redirect_stdout(out):\n"
        "    try:\n        main()\n    except SystemExit:\n        pass\n"
        "print(json.dumps({'out': out.getvalue(), 'm': sorted(sys.modules)}))"
    )
    assert loaded["out"] == f"contextchef {contextchef.__version__}\n"
    modules = set(loaded["m"])
    assert modules & {*HEAVY, "contextchef.memory", "contextchef.adapters"} == set()
    assert {name for name in modules if name.startswith("contextchef.store.")} <= {
        "contextchef.store.paths"
    }


def test_db_info_on_an_empty_home_loads_the_database_code_only(tmp_path: Path) -> None:
    loaded = fresh(
        "import sys, json, io, contextlib\n"
        "sys.argv = ['contextchef', 'db', 'info']\n"
        "from contextchef.cli import main\n"
        "err = io.StringIO()\n"
        "with contextlib.redirect_stderr(err):\n"
        "    try:\n        main()\n    except SystemExit as exc:\n        code = exc.code\n"
        "print(json.dumps({'code': code, 'err': err.getvalue(), 'm': sorted(sys.modules)}))",
        env={"CONTEXTCHEF_HOME": str(tmp_path), "NO_COLOR": "1"},
    )
    assert loaded["code"] == 1
    assert f"error: no database at {tmp_path}" in str(loaded["err"])
    modules = set(loaded["m"])
    assert "contextchef.store.backends.sqlite.maintenance" in modules
    # (typer itself imports pydantic to convert a command's parameters)
    unwanted = {"contextchef.chef", "contextchef.memory", "contextchef.adapters", "yaml"}
    assert modules & unwanted == set()


def test_a_failing_import_surfaces_unchanged(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "opentelemetry", None)
    monkeypatch.delitem(sys.modules, "contextchef.telemetry", raising=False)
    fake = types.ModuleType("lazyfake")
    namespace = vars(fake)
    fake.__getattr__, fake.__dir__ = lazy_exports(
        "lazyfake", namespace, {"contextchef.telemetry": ("instrument",)}
    )
    monkeypatch.setitem(sys.modules, "lazyfake", fake)
    with pytest.raises(MissingDependencyError, match=r"contextchef\[otel\]"):
        from lazyfake import instrument  # noqa: F401
    with pytest.raises(AttributeError, match="module 'lazyfake' has no attribute 'other'"):
        fake.other  # noqa: B018
    assert "instrument" not in namespace  # nothing bound after a failure: the next use retries


def test_help_lists_the_public_names() -> None:
    text = pydoc.render_doc(contextchef, renderer=pydoc.plaintext)
    for name in ("ContextChef", "SQLiteBackend", "load_skill", "from_openai", "estimate"):
        assert name in text
