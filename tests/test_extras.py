"""Every extra installs what its documented examples import.

A code block marked `<!-- docs-test: extra=NAME -->` (see tests/docs_pages.py) is the example of
`contextchef[NAME]`: each third-party module it imports must come from a distribution that the
extra, or the runtime dependencies, declare in pyproject.toml. The owning distribution is found
from the installed files, so `opentelemetry.sdk` counts as `opentelemetry-sdk`, not as the
`opentelemetry-api` that shares its top-level package.
"""

from __future__ import annotations

import re
import tomllib
from functools import cache
from importlib.metadata import distribution, packages_distributions

import pytest

from tests.docs_pages import ROOT, Block, blocks, imported_modules, pages

PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def normalized(requirement: str) -> str:
    name = re.match(r"[A-Za-z0-9._-]+", requirement)
    assert name is not None, requirement
    return re.sub(r"[-_.]+", "-", name.group(0)).lower()


RUNTIME = frozenset(normalized(r) for r in PROJECT["dependencies"])
EXTRAS = {
    extra: frozenset(normalized(r) for r in requirements)
    for extra, requirements in PROJECT["optional-dependencies"].items()
}


def examples() -> list[Block]:
    return [block for page in pages() for block in blocks(page) if "extra" in block.options]


@cache
def _files(name: str) -> frozenset[str]:
    return frozenset(str(file) for file in distribution(name).files or ())


@cache
def _top_level() -> dict[str, list[str]]:
    return packages_distributions()


def owner(module: str) -> str:
    """The distribution whose files hold `module` (or its longest prefix that is a module: an
    imported name may be a class), found in the distributions' file lists, importing nothing."""
    parts = module.split(".")
    candidates = sorted({normalized(d) for d in _top_level().get(parts[0], ())}, key=str)
    for end in range(len(parts), 0, -1):
        path = "/".join(parts[:end])
        for name in candidates:
            files = _files(name)
            if f"{path}.py" in files or f"{path}/__init__.py" in files:
                return name
    raise AssertionError(f"no installed distribution provides {module}")


def undeclared(code: str, extra: str, extras: dict[str, frozenset[str]]) -> list[str]:
    """The modules `code` imports that neither the extra nor the runtime dependencies bring."""
    declared = RUNTIME | extras[extra]
    return sorted(
        f"{module} (from {owner(module)})"
        for module in imported_modules(code)
        if owner(module) not in declared
    )


def test_every_extra_with_an_integration_has_a_documented_example() -> None:
    documented = {block.options["extra"] for block in examples()}
    assert set(documented) <= set(EXTRAS)
    for extra in ("postgres", "mcp", "otel", "pydantic-ai", "openai-agents", "langgraph"):
        assert extra in documented, extra


@pytest.mark.parametrize("block", examples(), ids=lambda block: block.where)
def test_the_extra_installs_what_its_example_imports(block: Block) -> None:
    extra = block.options["extra"]
    missing = undeclared(block.code, extra, EXTRAS)
    assert not missing, f"{block.where}: contextchef[{extra}] does not install {missing}"


def test_the_check_catches_an_extra_that_lacks_what_its_example_imports() -> None:
    """The bug this guards against: `[otel]` once brought only the API, and the example
    imports the SDK."""
    (example,) = [block for block in examples() if block.options["extra"] == "otel"]
    api_only = {**EXTRAS, "otel": frozenset({"opentelemetry-api"})}
    assert undeclared(example.code, "otel", api_only) == [
        "opentelemetry.sdk.trace.TracerProvider (from opentelemetry-sdk)",
        "opentelemetry.sdk.trace.export.SimpleSpanProcessor (from opentelemetry-sdk)",
        "opentelemetry.sdk.trace.export.in_memory_span_exporter.InMemorySpanExporter "
        "(from opentelemetry-sdk)",
    ]
