"""`contextchef inspect FILE`: layers, cache breakpoints, repairs and the byte diff of a compile."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from contextchef import ContextChef
from contextchef.cli.compiling import CompileInputs, compile_inputs
from contextchef.cli.inspection import inspect_compile
from contextchef.cli.payload_diff import diff_payloads, part_bytes, prompt_parts
from contextchef.store.backend import StoredEntry
from contextchef.store.backends.sqlite import SQLiteBackend
from tests.cli.helpers import (
    IR_HISTORY,
    SYSTEM,
    contents,
    error_line,
    invoke,
    native_history,
    write_json,
)

LAYER_PARTS = (
    "tools",
    "config.tools",
    "system",
    "instructions",
    "config.system_instruction",
    "messages",
    "input",
    "contents",
)


def _inspect(*args: str | Path) -> dict[str, Any]:
    result = invoke("inspect", *args, "--json")
    assert result.exit_code == 0, result.output
    data: dict[str, Any] = json.loads(result.stdout)
    return data


@pytest.mark.parametrize("target", ["openai", "openai-responses", "anthropic", "gemini"])
def test_layer_figures_are_the_compiles_own(target: str, tmp_path: Path) -> None:
    history = write_json(tmp_path / "chat.json", native_history("openai"))
    state = write_json(tmp_path / "state.json", {"goal": "fix it", "step": 1})
    data = _inspect(history, "-t", target, "--state", state)
    chef = ContextChef().set_system_prompt(SYSTEM).set_history(IR_HISTORY)
    chef.set_dynamic_state(dict[str, Any], {"goal": "fix it", "step": 1})
    payload = chef.compile(target=target)
    layers = {row["label"]: row for row in data["layers"] if row["depth"] == 0}
    tokens = payload.meta.tokens
    assert {name: layers[name]["tokens"] for name in ("system", "history", "tail", "tools")} == {
        "system": tokens.system,
        "history": tokens.history,
        "tail": tokens.tail,
        "tools": tokens.tools,
    }
    assert data["total_tokens"] == tokens.total
    sequence = next(payload[key] for key in ("messages", "input", "contents") if key in payload)
    assert layers["tail"]["bytes"] == len(part_bytes(sequence[-1]))  # stitched into the last
    listed = sum(layers[name]["bytes"] for name in ("system", "history", "tail", "tools"))
    others = [n for n, _ in prompt_parts(payload) if not n.startswith(LAYER_PARTS)]
    assert listed == data["total_bytes"] - sum(
        len(part_bytes(v)) for n, v in prompt_parts(payload) if n in others
    )
    assert data["total_bytes"] == sum(len(part_bytes(v)) for _, v in prompt_parts(payload))
    turns = [row["label"] for row in data["layers"] if row["layer"] == "history" and row["depth"]]
    assert turns == ["turn 1", "turn 2"]  # a tool result never opens a turn, in any target
    tail = [row["label"] for row in data["layers"] if row["layer"] == "tail" and row["depth"]]
    assert tail == ["dynamic state", "state anchor", "the rest of the message"]


def _assert_figures_add_up(data: dict[str, Any]) -> None:
    """Every row listed under a layer sums to it; the layers sum to the total; a breakpoint's
    prefix is never more than the payload."""
    layers = [row for row in data["layers"] if row["depth"] == 0]
    assert sum(row["tokens"] for row in layers) == data["total_tokens"]
    for layer in layers:
        parts = [r for r in data["layers"] if r["depth"] == 1 and r["layer"] == layer["layer"]]
        if parts:
            for unit in ("tokens", "bytes"):
                assert sum(r[unit] for r in parts) == layer[unit], (layer["label"], unit, parts)
    assert all(row["tokens"] >= 0 and row["bytes"] >= 0 for row in data["layers"])
    prefixes = [(p["prefix_tokens"], p["prefix_bytes"]) for p in data["breakpoints"]]
    assert prefixes == sorted(prefixes)
    for tokens, size in prefixes:
        assert tokens <= data["total_tokens"] and size <= data["total_bytes"]


def _long_history() -> list[Any]:
    """Four turns, two with a tool call and its result."""
    second = [
        {**message, "tool_calls": [{**message["tool_calls"][0], "id": "call_2"}]}
        if "tool_calls" in message
        else {**message, "tool_call_id": "call_2"}
        if message["role"] == "tool"
        else message
        for message in IR_HISTORY
    ]
    return [*IR_HISTORY, {"role": "assistant", "content": "Patched."}, *second]


@pytest.mark.parametrize("target", ["openai", "openai-responses", "anthropic", "gemini"])
def test_the_figures_add_up(target: str, tmp_path: Path) -> None:
    """Turns sum to the history, the parts of a layer to the layer, and a breakpoint's prefix
    never exceeds the payload (they were once counted on different texts)."""
    state = write_json(tmp_path / "state.json", {"goal": "fix the parser", "step": 3})
    marked = native_history("anthropic")
    marked["messages"][2]["content"][0]["cache_control"] = {"type": "ephemeral"}  # tool result
    marked["messages"][-1]["content"] = [
        {"type": "text", "text": "Yes, go ahead.", "cache_control": {"type": "ephemeral"}}
    ]
    histories = {
        "native": native_history(target),
        "long": _long_history(),
        "marked": marked,
        "repaired": IR_HISTORY[:2] + IR_HISTORY[3:],
    }
    for name, history in histories.items():
        path = write_json(tmp_path / f"{name}.json", history)
        for extra in ((), ("--state", state)):
            data = _inspect(path, "-t", target, *extra)
            _assert_figures_add_up(data)
            if name == "long":
                turns = [r for r in data["layers"] if r["layer"] == "history" and r["depth"]]
                assert len(turns) == 4, turns
    marked_data = _inspect(tmp_path / "marked.json", "-t", "anthropic", "--state", state)
    assert marked_data["breakpoints"][-1]["prefix_tokens"] == marked_data["total_tokens"]


def test_breakpoints_show_the_prefix_they_cache(tmp_path: Path) -> None:
    native = native_history("anthropic")
    native["messages"][2]["content"][0]["cache_control"] = {"type": "ephemeral"}  # tool result
    history = write_json(tmp_path / "chat.json", native)
    data = _inspect(history, "-t", "anthropic")
    compiled = compile_inputs(CompileInputs(history, "anthropic"))
    parts = prompt_parts(compiled.payload)
    [point] = [p for p in data["breakpoints"] if p["part"] == "messages[2].content[0]"]
    upto = [name for name, _ in parts].index("messages[2]") + 1
    assert point["prefix_bytes"] == sum(len(part_bytes(v)) for _, v in parts[:upto])
    assert point["before"] == "tools[0], system[0..1], messages[0..2]"
    openai = _inspect(history, "-t", "openai")
    assert openai["breakpoints"] == [] and "automatically" in openai["cache_note"]


def test_repairs_are_listed(tmp_path: Path) -> None:
    history = write_json(tmp_path / "chat.json", IR_HISTORY[:2] + IR_HISTORY[3:])
    data = _inspect(history)
    [repair] = data["repairs"]
    assert repair["kind"] == "added_missing_result" and "call_1" in repair["detail"]
    table = invoke("inspect", history, env={"COLUMNS": "200"})
    assert "added_missing_result" in table.stdout


def test_diff_finds_the_bytes_a_prefix_cache_would_miss(tmp_path: Path) -> None:
    history = write_json(tmp_path / "chat.json", native_history("anthropic"))
    before = write_json(tmp_path / "before.json", {"goal": "parse", "step": 1})
    after = write_json(tmp_path / "after.json", {"goal": "parse", "step": 2})
    previous = tmp_path / "previous.json"
    assert (
        invoke("compile", history, "-t", "anthropic", "--state", before, "-o", previous).exit_code
        == 0
    )

    same = _inspect(history, "-t", "anthropic", "--state", before, "--diff", previous)["diff"]
    assert same["identical"] and same["first_difference"] is None and same["reusable"] == 1.0

    diff = _inspect(history, "-t", "anthropic", "--state", after, "--diff", previous)["diff"]
    [change] = diff["changes"]
    assert change["part"] == "messages[4]" and change["status"] == "changed"
    assert (change["before"], change["after"]) == ("1", "2")
    parts = prompt_parts(json.loads(previous.read_text()))
    offset = sum(
        len(part_bytes(v)) for name, v in parts[: [n for n, _ in parts].index("messages[4]")]
    )
    assert diff["first_difference"] == diff["common_prefix"] == offset + change["offset"]
    text = invoke("inspect", history, "-t", "anthropic", "--state", after, "--diff", previous)
    assert f"first difference at byte {diff['first_difference']:,}" in text.stdout


def test_diff_reports_added_and_removed_parts() -> None:
    old = {"messages": [{"role": "user", "content": "a"}], "tools": [{"name": "x"}]}
    new = {"messages": [{"role": "user", "content": "a"}, {"role": "user", "content": "b"}]}
    diff = diff_payloads(new, old)
    statuses = {change.part: change.status for change in diff.changes}
    assert statuses == {"messages[1]": "added", "tools[0]": "removed"}
    # The tools come first in the prompt, and they went: only the opening `{"` is shared.
    assert diff.first_difference == diff.common_prefix == 2


def test_inspection_is_data_the_report_can_take(tmp_path: Path) -> None:
    history = write_json(tmp_path / "chat.json", native_history("gemini"))
    inspection = inspect_compile(compile_inputs(CompileInputs(history, "gemini")))
    assert inspection.format == "gemini"
    assert json.loads(json.dumps(inspection.to_dict())) == inspection.to_dict()


def test_inspect_errors_are_one_line(tmp_path: Path) -> None:
    history = write_json(tmp_path / "chat.json", native_history("openai"))
    result = invoke("inspect", history, "--diff", tmp_path / "missing.json")
    assert result.exit_code == 1 and "previous payload" in error_line(result)
    listing = write_json(tmp_path / "list.json", [1, 2])
    assert "not a JSON object" in error_line(invoke("inspect", history, "--diff", listing))
    assert "does not exist" in error_line(invoke("inspect", tmp_path / "nope.json"))
    assert invoke("inspect", history, "--target", "nope").exit_code == 2


def test_memory_comes_from_the_store_and_nothing_is_written_back(tmp_path: Path) -> None:
    with SQLiteBackend(project="test:cli-memory") as backend:
        backend.write("memory", "test-command", StoredEntry("make test"))
        before = contents(backend)
    history = write_json(tmp_path / "chat.json", native_history("openai"))
    args = ("--memory", "--project", "test:cli-memory")
    data = _inspect(history, *args)
    memory = next(row for row in data["layers"] if row["label"] == "memory")
    assert memory["detail"] == "1 entries: test-command" and memory["tokens"] > 0
    result = invoke("compile", history, *args)
    assert result.exit_code == 0, result.output
    assert "make test" in json.loads(result.stdout)["messages"][1]["content"]
    with SQLiteBackend(project="test:cli-memory") as backend:
        assert contents(backend) == before
    plain = _inspect(history)
    assert [row["label"] for row in plain["layers"][:3]] == [
        "system",
        "system prompt",
        "store instruction",
    ]
    assert invoke("compile", history, "--project", "x").exit_code == 2  # only with --memory


def test_report_draws_the_compile_and_its_repairs(tmp_path: Path) -> None:
    history = write_json(tmp_path / "chat.json", IR_HISTORY[:2] + IR_HISTORY[3:])
    previous = tmp_path / "previous.json"
    assert invoke("compile", history, "-t", "anthropic", "-o", previous).exit_code == 0
    page = tmp_path / "window.html"
    result = invoke("inspect", history, "-t", "anthropic", "--diff", previous, "--report", page)
    assert result.exit_code == 0, result.output
    html = page.read_text(encoding="utf-8")
    assert 'id="series-history"' in html and 'id="series-reuse"' in html
    assert "added_missing_result" in html and "call_1" in html
    assert "<script" not in html


def test_report_to_an_unwritable_path_is_one_line(tmp_path: Path) -> None:
    history = write_json(tmp_path / "chat.json", IR_HISTORY)
    result = invoke("inspect", history, "--report", tmp_path / "missing" / "window.html")
    assert result.exit_code == 1
    assert error_line(result).startswith("error: cannot write the report to")


def test_audit_findings_are_listed(tmp_path: Path) -> None:
    history = write_json(tmp_path / "chat.json", IR_HISTORY)
    system = tmp_path / "system.txt"
    system.write_text("You are a coding agent. Now: 2026-11-30T21:40:00Z.", encoding="utf-8")
    data = _inspect(history, "-t", "anthropic", "--system", system)
    assert any(f.startswith("timestamp_in_prefix:") for f in data["findings"]), data["findings"]
    clean = _inspect(history, "-t", "anthropic")
    assert clean["findings"] == []
