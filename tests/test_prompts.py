"""The two tool vocabularies: each renders its own text and never names the other's tools."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest

from contextchef import ContextChef, prompts
from contextchef.errors import ConfigError
from contextchef.prompts import LegacyVocabulary, UnifiedVocabulary, Vocabulary, vocabulary

PROMPTS = Path(prompts.__file__).parent
LEGACY_NAMES = ("create_memory", "modify_memory", "recall_context")
UNIFIED_NAMES = ("context tool", "context://memory", "context://notes", "new_context")


def texts(v: Vocabulary, uri: str = "context://vfs/x.txt") -> list[str]:
    """Every text `v` renders, for a few representative inputs."""
    out = [v.memory_instruction, v.memory_block_header, v.handoff_notice()]
    out += [v.store_instruction] if v.store_instruction is not None else []
    for keys in ([], ["a"], ["a", "b/c"]):
        out += [v.memory_keys_line(keys, allowed=allowed) for allowed in (True, False)]
    for errors in (0, 1, 3):
        shown = prompts.OFFLOAD_SHOWN[(True, True)]
        out.append(v.offload_notice(uri=uri, lines=9, chars=99, shown=shown, error_lines=errors))
    return out


def module_strings(name: str) -> list[str]:
    tree = ast.parse((PROMPTS / f"{name}.py").read_text(encoding="utf-8"))
    body = [node for node in tree.body if not isinstance(node, ast.Expr)]  # not the docstrings
    return [
        node.value
        for top in body
        for node in ast.walk(top)
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    ]


def test_vocabulary_names_its_two_implementations_and_refuses_others() -> None:
    assert isinstance(vocabulary("unified"), UnifiedVocabulary)
    assert isinstance(vocabulary("legacy"), LegacyVocabulary)
    assert vocabulary("unified").name == "unified" and vocabulary("legacy").name == "legacy"
    assert prompts.DEFAULT_VOCABULARY is vocabulary("unified")
    for bad in ("nope", "Unified", ""):
        with pytest.raises(ConfigError, match="'legacy' or 'unified'"):
            vocabulary(bad)
    with pytest.raises(ConfigError, match="tools must be"):
        ContextChef(tools="nope")


def test_vocabularies_are_frozen_and_stateless() -> None:
    assert UnifiedVocabulary() == vocabulary("unified")
    with pytest.raises(AttributeError):
        vocabulary("legacy").extra = 1  # type: ignore[attr-defined]


def test_legacy_text_never_names_the_context_tool() -> None:
    for text in texts(vocabulary("legacy"), uri="vfs/x.txt"):
        assert not any(name in text for name in (*UNIFIED_NAMES, "context://")), text
    for text in module_strings("memory_tools"):
        assert not any(name in text for name in UNIFIED_NAMES), text


def test_unified_text_never_names_the_legacy_memory_tools() -> None:
    rendered = texts(vocabulary("unified"))
    assert any("context tool" in text for text in rendered)
    for text in [*rendered, *module_strings("context_tool")]:
        assert not any(name in text for name in LEGACY_NAMES), text


def test_each_vocabulary_renders_its_own_text() -> None:
    unified, legacy = vocabulary("unified"), vocabulary("legacy")
    assert unified.memory_instruction == prompts.CONTEXT_STORE_INSTRUCTION
    assert unified.store_instruction is not None
    assert "context://memory" not in unified.store_instruction
    assert legacy.store_instruction is None
    assert legacy.memory_instruction == prompts.MEMORY_INSTRUCTION
    assert unified.memory_block_header == prompts.UNIFIED_MEMORY_BLOCK_HEADER
    assert legacy.memory_block_header == prompts.MEMORY_BLOCK_HEADER
    assert unified.summary_window("w2") == "w2" and legacy.summary_window("w2") is None
    assert "new_context" in unified.handoff_notice()
    assert prompts.HANDOFF_REMAINING in unified.handoff_notice()
    assert prompts.HANDOFF_REMAINING in legacy.handoff_notice()


def test_common_text_names_no_tool_of_either_vocabulary() -> None:
    for text in module_strings("common"):
        assert not any(name in text for name in (*LEGACY_NAMES, *UNIFIED_NAMES)), text


def tool_names(payload: Any) -> list[str]:
    return [tool["function"]["name"] for tool in payload.get("tools", [])]


def test_the_default_chef_speaks_the_unified_vocabulary() -> None:
    chef = ContextChef()
    assert chef.tools.mode == "unified" and isinstance(chef.tools.vocabulary, UnifiedVocabulary)
    assert chef.tools.vocabulary == vocabulary("unified").offering(chef.tools.vocabulary.offer)
    payload = chef.set_history([{"role": "user", "content": "hi"}]).compile()
    assert tool_names(payload) == ["context"]
    assert payload["messages"][0] == {
        "content": chef.tools.vocabulary.store_instruction,
        "role": "system",
    }
    legacy = ContextChef(tools="legacy", memory={})
    assert legacy.tools.mode == "legacy"
    assert tool_names(legacy.compile()) == ["create_memory", "modify_memory"]


def test_no_module_outside_the_vocabulary_compares_mode_names() -> None:
    src = PROMPTS.parent
    allowed = {PROMPTS / "vocabulary.py", src / "chef.py", src / "cli" / "demo.py"}
    for path in src.rglob("*.py"):
        if path in allowed:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Compare):
                names = {ast.unparse(part) for part in (node.left, *node.comparators)}
                assert not names & {"'unified'", "'legacy'"}, f"{path}: {ast.unparse(node)}"
