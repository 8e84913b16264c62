"""Server-side compaction: an `AdapterInput` field the Anthropic adapter renders, others ignore."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from contextchef import server
from contextchef.adapters import get_adapter
from contextchef.adapters.base import AdapterInput
from contextchef.errors import ConfigError
from contextchef.messages import Message
from contextchef.selection import ServerCompaction
from tests.adapters.sdk_anthropic import validate_request

HISTORY: list[Message] = [
    {"role": "user", "content": "hi"},
    {"role": "assistant", "content": "hello"},
    {"role": "user", "content": "go on"},
]
SYSTEM: list[Message] = [{"role": "system", "content": "be brief"}]


def compile_for(target: str, request: ServerCompaction | None) -> dict[str, Any]:
    adapter = get_adapter(target)
    return adapter.compile(AdapterInput(SYSTEM, HISTORY, server_compaction=request))


def test_anthropic_renders_the_default_request() -> None:
    payload = compile_for("anthropic", ServerCompaction())
    assert payload["context_management"] == {"edits": [{"type": "compact_20260112"}]}
    assert payload["betas"] == ["compact-2026-01-12"]
    assert list(payload) == sorted(payload)
    plain = compile_for("anthropic", None)
    assert {k: v for k, v in payload.items() if k not in ("betas", "context_management")} == plain
    validate_request(payload, beta=True)


def test_anthropic_renders_the_neutral_options() -> None:
    request = ServerCompaction(
        trigger_tokens=50_000, instructions="keep file paths", pause_after_compaction=True
    )
    payload = compile_for("anthropic", request)
    edit = {
        "instructions": "keep file paths",
        "pause_after_compaction": True,
        "trigger": {"type": "input_tokens", "value": 50_000},
        "type": "compact_20260112",
    }
    assert payload["context_management"] == {"edits": [edit]}
    assert json.dumps(payload["context_management"]) == json.dumps(
        payload["context_management"], sort_keys=True
    )
    validate_request(payload, beta=True)


def test_a_native_config_is_sent_verbatim_with_the_betas_its_edits_need() -> None:
    native = {"edits": [{"type": "clear_tool_uses_20250919"}, {"type": "compact_20260112"}]}
    payload = compile_for("anthropic", ServerCompaction(native=native))
    assert payload["context_management"] == native
    assert payload["betas"] == ["compact-2026-01-12", "context-management-2025-06-27"]
    assert server(native).request.native == native


@pytest.mark.parametrize("target", ["openai", "openai-responses", "gemini"])
def test_other_adapters_ignore_the_request(target: str) -> None:
    assert compile_for(target, ServerCompaction(trigger_tokens=10)) == compile_for(target, None)


def test_server_options_are_checked() -> None:
    with pytest.raises(ConfigError, match="trigger_tokens"):
        ServerCompaction(trigger_tokens=0)
    with pytest.raises(ConfigError, match="not both"):
        server({"edits": []}, trigger_tokens=10)
    assert server(trigger_tokens=10).request == ServerCompaction(trigger_tokens=10)


def test_no_anthropic_wire_detail_is_left_in_selection() -> None:
    selection = Path(__file__).resolve().parents[2] / "src" / "contextchef" / "selection"
    for path in selection.glob("*.py"):
        text = path.read_text(encoding="utf-8")
        for wire in ("context_management", "betas", "compact_2026", "compact-2026", "2025-06-27"):
            assert wire not in text, f"{path.name} mentions {wire!r}"
