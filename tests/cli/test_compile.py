"""`contextchef compile FILE`: native histories in, the library's own payload out; bad input out."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from contextchef import ContextChef
from contextchef.cli.compiling import payload_text
from contextchef.cli.history_file import FORMATS
from contextchef.cli.sdk_check import PayloadRejected, validate_payload
from tests.cli.helpers import IR_HISTORY, SYSTEM, error_line, invoke, native_history, write_json

TARGETS = ("openai", "openai-responses", "anthropic", "gemini")


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_native_format_is_detected_and_compiles_like_the_library(
    fmt: str, tmp_path: Path
) -> None:
    history = write_json(tmp_path / "chat.json", native_history(fmt))
    result = invoke("compile", history, "--target", "anthropic")
    assert result.exit_code == 0, result.output
    system: Any = SYSTEM
    if fmt == "anthropic":  # its system block carries the file's own cache breakpoint
        system = [{"role": "system", "content": SYSTEM, "_cache_breakpoint": True}]
    expected = ContextChef().set_system_prompt(system).set_history(IR_HISTORY)
    assert result.stdout == payload_text(expected.compile(target="anthropic"))
    inspected = json.loads(invoke("inspect", history, "--json").stdout)
    assert inspected["format"] == fmt


def test_from_forces_a_format_and_names_its_error(tmp_path: Path) -> None:
    history = write_json(tmp_path / "chat.json", native_history("gemini"))
    assert invoke("compile", history, "--from", "gemini").exit_code == 0
    result = invoke("compile", history, "--from", "anthropic")
    assert result.exit_code == 1
    line = error_line(result)
    assert "not a valid anthropic history" in line and "'messages'" in line


def test_a_history_in_no_known_format_names_every_format_tried(tmp_path: Path) -> None:
    history = write_json(tmp_path / "chat.json", [{"speaker": "me", "text": "hi"}])
    result = invoke("compile", history)
    assert result.exit_code == 1
    line = error_line(result)
    assert "no known history format" in line
    for fmt in FORMATS:
        assert f"{fmt}: " in line
    assert "has role None" in line  # openai's reason
    assert "has no 'parts'" in line  # gemini's reason
    assert result.stdout == ""


def test_state_system_and_tools_files(tmp_path: Path) -> None:
    history = write_json(tmp_path / "chat.json", native_history("openai"))
    state = write_json(tmp_path / "state.json", {"goal": "fix the parser", "step": 2})
    system = tmp_path / "system.txt"
    system.write_text("Be brief.\n")
    tools = write_json(
        tmp_path / "tools.json",
        [{"type": "function", "function": {"name": "read_file", "description": "Read."}}],
    )
    result = invoke(
        "compile", history, "--state", state, "--system", system, "--tools", tools, "-t", "openai"
    )
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert payload["messages"][0] == {"content": "Be brief.", "role": "system"}
    assert "<goal>fix the parser</goal>" in payload["messages"][-1]["content"]
    assert "read_file" in [tool["function"]["name"] for tool in payload["tools"]]


def test_history_from_stdin() -> None:
    result = invoke("compile", "-", stdin=json.dumps(native_history("gemini")))
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["messages"][-1]["content"] == "Yes, go ahead."


def test_system_prompt_from_stdin(tmp_path: Path) -> None:
    history = write_json(tmp_path / "chat.json", native_history("openai"))
    result = invoke("compile", history, "--system", "-", stdin="From stdin.")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["messages"][0]["content"] == "From stdin."


def test_out_writes_the_same_bytes_as_stdout(tmp_path: Path) -> None:
    history = write_json(tmp_path / "chat.json", native_history("anthropic"))
    printed = invoke("compile", history, "-t", "gemini").stdout
    out = tmp_path / "payload.json"
    result = invoke("compile", history, "-t", "gemini", "--out", out)
    assert result.exit_code == 0, result.output
    assert out.read_text(encoding="utf-8") == printed
    assert result.stdout == ""
    assert f"wrote {out}" in result.stderr


@pytest.mark.parametrize("target", TARGETS)
def test_validate_checks_against_the_sdk_types(target: str, tmp_path: Path) -> None:
    history = write_json(tmp_path / "chat.json", native_history("openai"))
    state = write_json(tmp_path / "state.json", {"goal": "g"})
    result = invoke("compile", history, "-t", target, "--state", state, "--validate")
    assert result.exit_code == 0, result.output
    assert "valid: matches" in result.stderr


@pytest.mark.parametrize(
    ("target", "payload", "problem"),
    [
        ("openai", {"messages": [{"role": "robot", "content": "hi"}]}, "messages"),
        ("openai", {"messages": [], "temprature": 0.5}, "temprature"),
        ("anthropic", {"messages": [{"role": "user", "content": [{"type": "txt"}]}]}, "messages"),
        ("openai-responses", {"input": [], "instruction": "x"}, "instruction"),
        ("gemini", {"contents": [{"role": "user", "parts": [{"txt": "x"}]}]}, "contents"),
    ],
)
def test_the_sdk_check_rejects_a_bad_payload(
    target: str, payload: dict[str, Any], problem: str
) -> None:
    with pytest.raises(PayloadRejected, match=problem):
        validate_payload(target, payload)


def test_validate_without_the_sdk_names_the_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "anthropic", None)
    monkeypatch.setitem(sys.modules, "anthropic.types", None)
    history = write_json(tmp_path / "chat.json", native_history("openai"))
    result = invoke("compile", history, "-t", "anthropic", "--validate")
    assert result.exit_code == 1
    assert "pip install 'contextchef[anthropic]'" in error_line(result)


def test_missing_unreadable_and_directory_files(tmp_path: Path) -> None:
    out = tmp_path / "payload.json"
    result = invoke("compile", tmp_path / "nope.json", "--out", out)
    assert result.exit_code == 1
    assert "history file" in error_line(result) and "does not exist" in error_line(result)
    assert "is a directory" in error_line(invoke("compile", tmp_path))
    if os.geteuid() != 0:  # root reads anything
        locked = write_json(tmp_path / "locked.json", [])
        locked.chmod(0)
        assert "not readable" in error_line(invoke("compile", locked))
    assert not out.exists()


def test_invalid_json_and_invalid_state(tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text('[{"role": "user",')
    assert "is not valid JSON" in error_line(invoke("compile", broken))
    history = write_json(tmp_path / "chat.json", native_history("openai"))
    bad_state = tmp_path / "state.json"
    bad_state.write_text("{goal: 1}")
    out = tmp_path / "payload.json"
    result = invoke("compile", history, "--state", bad_state, "--out", out)
    assert result.exit_code == 1
    assert "state file" in error_line(result) and "not valid JSON" in error_line(result)
    write_json(bad_state, ["a", "list"])
    assert "not an object" in error_line(invoke("compile", history, "--state", bad_state))
    assert not out.exists()


def test_tools_in_every_providers_shape(tmp_path: Path) -> None:
    history = write_json(tmp_path / "chat.json", native_history("openai"))
    schema = {"type": "object", "properties": {"path": {"type": "string"}}}
    tools = write_json(
        tmp_path / "tools.json",
        [
            {"type": "function", "function": {"name": "a", "parameters": schema}},
            {"type": "function", "name": "b", "parameters": schema},
            {"name": "c", "input_schema": schema},
            {"function_declarations": [{"name": "d", "parameters": schema}]},
        ],
    )
    result = invoke("compile", history, "--tools", tools, "-t", "anthropic", "--validate")
    assert result.exit_code == 0, result.output
    names = [tool["name"] for tool in json.loads(result.stdout)["tools"]]
    assert names[:4] == ["a", "b", "c", "d"]


def test_invalid_tools_file(tmp_path: Path) -> None:
    history = write_json(tmp_path / "chat.json", native_history("openai"))
    tools = write_json(tmp_path / "tools.json", {"name": "x"})
    assert "must hold a JSON list" in error_line(invoke("compile", history, "--tools", tools))
    write_json(tools, [{"description": "no name"}])
    result = invoke("compile", history, "--tools", tools)
    assert result.exit_code == 1
    assert "name" in error_line(result)


def test_usage_errors_exit_2(tmp_path: Path) -> None:
    history = write_json(tmp_path / "chat.json", native_history("openai"))
    assert invoke("compile", history, "--target", "mistral").exit_code == 2
    assert invoke("compile", history, "--from", "cohere").exit_code == 2
    assert invoke("compile").exit_code == 2


def test_debug_shows_the_exception(tmp_path: Path) -> None:
    result = invoke("--debug", "compile", tmp_path / "nope.json")
    assert result.exit_code == 1
    assert result.exception is not None
    assert "does not exist" in str(result.exception)
