"""The public surface: `__all__` is the README's table, every chef option is in the signature,
the version is the package's, and the typed marker ships."""

from __future__ import annotations

import importlib
import inspect
import re
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest

import contextchef
from contextchef import AsyncContextChef, ContextChef

# Every event type and the public module that defines it: the pipeline's own in
# `contextchef.events`, the others next to what emits them (the foundation layer cannot import up).
EVENT_HOMES = {
    "CompileStart": "contextchef.events",
    "WindowExceeded": "contextchef.events",
    "CacheFinding": "contextchef.events",
    "PipelineInvariant": "contextchef.events",
    "AssembleContext": "contextchef.events",
    "CompileDone": "contextchef.payload",
    "CompressStart": "contextchef.selection",
    "CompressEnd": "contextchef.selection",
    "MemoryChange": "contextchef.memory",
}
# The errors a user catches, exported from the top as well as from `contextchef.errors`.
CAUGHT_ERRORS = (
    "ContextChefError",
    "ConfigError",
    "UnknownTargetError",
    "MessageError",
    "ToolDefinitionError",
    "CompileError",
    "StoreError",
    "EntryNotFoundError",
    "EntryExistsError",
    "StoreBusyError",
    "StoreUnavailableError",
    "StoreConflictError",
    "MemoryRefusedError",
    "MissingDependencyError",
    "SkillError",
    "SnapshotError",
    "ToolCallError",
)
PUBLIC_API = Path(__file__).resolve().parents[1] / "docs" / "reference" / "index.md"
CHEF_OPTIONS = {
    "store",
    "memory",
    "tools",
    "context_tool",
    "budget",
    "overflow",
    "offload",
    "transform_tool_result",
    "tokenizer",
    "default_target",
    "adapters",
    "skills",
    "skill_placement",
    "pruner",
    "cache",
    "cache_audit",
    "prompt_cache_key",
    "cached_content",
    "pipeline_checks",
}


def documented_names() -> list[str]:
    text = PUBLIC_API.read_text(encoding="utf-8")
    section = text.split("## Public API", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| ") and "`" in line]
    return [name for row in rows for name in re.findall(r"`([A-Za-z_][A-Za-z0-9_]*)`", row)]


def test_all_is_the_documented_table() -> None:
    documented = documented_names()
    assert len(documented) == len(set(documented)), "a name is listed twice in the docs"
    assert sorted(contextchef.__all__) == sorted(["__version__", *documented])


def test_all_is_importable_and_holds_no_internals() -> None:
    for name in contextchef.__all__:
        assert hasattr(contextchef, name), name
    for internal in ("Dispatcher", "ContextTool", "render_recalled", "OverflowInput"):
        assert internal not in contextchef.__all__


def test_every_builtin_adapter_class_and_importer_is_exported() -> None:
    from contextchef import adapters

    for name in (
        "OpenAIChatAdapter",
        "OpenAIResponsesAdapter",
        "AnthropicAdapter",
        "GeminiAdapter",
        "from_openai",
        "from_openai_responses",
        "from_anthropic",
        "from_gemini",
    ):
        assert name in adapters.__all__
        assert hasattr(adapters, name), name
    for name in ("from_openai", "from_openai_responses", "from_anthropic", "from_gemini"):
        assert name in contextchef.__all__


def test_every_event_type_is_exported() -> None:
    """Every event type from the public module that defines it (the pipeline's own events from
    `contextchef.events`), and the ones users subscribe to from the top as well."""
    for name, module in EVENT_HOMES.items():
        home = importlib.import_module(module)
        assert name in home.__all__, f"{name} is not in {module}.__all__"
        assert isinstance(getattr(home, name), type), name
    for name in ("CompileStart", "CompileDone", "CompressStart", "CompressEnd", "MemoryChange"):
        assert name in contextchef.__all__
        assert getattr(contextchef, name) is getattr(
            importlib.import_module(EVENT_HOMES[name]), name
        )


@pytest.mark.parametrize("chef", [ContextChef, AsyncContextChef])
def test_the_signature_lists_every_option(chef: type) -> None:
    every = inspect.signature(chef).parameters
    parameters = {n: p for n, p in every.items() if p.kind is not inspect.Parameter.VAR_KEYWORD}
    assert set(parameters) == CHEF_OPTIONS
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in parameters.values())
    assert [n for n in every if n not in parameters] == ["renamed"]  # the old names, deprecated
    doc = inspect.getdoc(chef.__init__) or ""
    for option in CHEF_OPTIONS:
        assert f"{option}:" in doc, f"help(ContextChef) does not describe {option}"


def test_unknown_options_are_refused_by_name() -> None:
    with pytest.raises(TypeError, match="strore"):
        ContextChef(strore="memory")  # type: ignore[call-arg]


def test_version_is_the_package_version() -> None:
    assert contextchef.__version__ == version("contextchef")
    result = subprocess.run(
        [sys.executable, "-m", "contextchef", "--version"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert result.stdout.strip() == f"contextchef {contextchef.__version__}"


def test_package_is_typed() -> None:
    assert (Path(contextchef.__file__).parent / "py.typed").is_file()


def test_every_error_is_exported() -> None:
    """Every error is exported from `contextchef.errors`; the ones users catch from the top."""
    from contextchef import errors

    for name in errors.__all__:
        error = getattr(errors, name)
        assert isinstance(error, type) and issubclass(error, errors.ContextChefError), name
    for name in CAUGHT_ERRORS:
        assert name in errors.__all__
        assert name in contextchef.__all__
        assert getattr(contextchef, name) is getattr(errors, name)
