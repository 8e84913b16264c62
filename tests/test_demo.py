"""`contextchef demo`'s scripted agent run: deterministic, inside the window, and persistent.

The figures come from `--json`, so every assertion reads what a user would see; short runs
(`--turns 60`) keep the suite fast while still overflowing a 6000-token window.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from contextchef.cli import app
from contextchef.cli.demo_session import common_prefix

runner = CliRunner()
SHORT = ["demo", "--json", "--turns", "60"]


def _figures(*args: str) -> dict[str, Any]:
    result = runner.invoke(app, [*SHORT, *args], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    figures: dict[str, Any] = json.loads(result.output)
    return figures


def test_the_summary_is_deterministic_for_a_seed() -> None:
    first = _figures("--store", ":memory:", "--seed", "3")
    assert first == _figures("--store", ":memory:", "--seed", "3")
    assert first != _figures("--store", ":memory:", "--seed", "4")


def test_the_window_holds_and_the_chef_overflows_and_offloads() -> None:
    figures = _figures("--store", ":memory:", "--window", "6000")
    assert figures["turns"] == 60
    assert 0 < figures["peak_window_tokens"] <= figures["window"] == 6000
    assert figures["final_window_tokens"] <= 6000
    assert figures["overflows"] >= 1
    assert figures["archived_spans"] >= 1
    assert figures["offloads"] >= 1
    assert figures["context_reads"] >= 1
    assert figures["windows_exceeded"] == 0
    assert 0 < figures["prefix_reuse_min"] <= figures["prefix_reuse_mean"] < 1


@pytest.mark.parametrize("target", ["anthropic", "gemini", "openai-responses"])
def test_every_target_stays_inside_the_window(target: str) -> None:
    figures = _figures("--store", ":memory:", "--target", target, "--turns", "40")
    assert figures["peak_window_tokens"] <= figures["window"]
    assert figures["overflows"] >= 1


def test_a_second_run_on_the_same_store_starts_with_the_first_runs_memory(
    tmp_path: Path,
) -> None:
    database = str(tmp_path / "demo.db")
    first = _figures("--store", database)
    assert first["memory_at_start"] == []
    assert first["memory_entries"] == 1
    second = _figures("--store", database)
    assert second["memory_at_start"] == ["test-command"]
    shown = runner.invoke(
        app, ["demo", "--turns", "5", "--store", database], env={"COLUMNS": "200"}
    )
    assert shown.exit_code == 0, shown.output
    assert "memory from an earlier run" in shown.output
    assert "rm -f" in shown.output and database in shown.output


def test_memory_store_writes_nothing_to_the_data_directory(tmp_path: Path) -> None:
    home = tmp_path / "home"
    result = runner.invoke(
        app,
        ["demo", "--turns", "30", "--store", ":memory:"],
        env={"CONTEXTCHEF_HOME": str(home), "COLUMNS": "200"},
    )
    assert result.exit_code == 0, result.output
    assert not home.exists() or not any(home.iterdir())
    assert "nothing is written" in result.output


def test_quiet_prints_only_the_summary() -> None:
    result = runner.invoke(app, ["demo", "--quiet", "--turns", "30", "--store", ":memory:"])
    assert result.exit_code == 0, result.output
    assert "peak window tokens" in result.output
    assert "turn   " not in result.output and "openai-responses" not in result.output


def test_an_unknown_target_is_a_usage_error() -> None:
    result = runner.invoke(app, ["demo", "--target", "nope", "--store", ":memory:"])
    assert result.exit_code == 2


def test_common_prefix() -> None:
    assert common_prefix("abcdef", "abcxyz") == 3
    assert common_prefix("", "abc") == 0
    assert common_prefix("same", "same") == 4
