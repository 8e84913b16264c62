"""The command line: `contextchef demo` compiles the bundled conversation to every target."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from contextchef.adapters import adapter_registry
from contextchef.cli import app
from contextchef.cli.demo import demo_chef, summarize

runner = CliRunner()


def test_demo_prints_a_summary_for_every_target() -> None:
    result = runner.invoke(app, ["demo", "--turns", "20"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    for target in adapter_registry.names():
        assert target in result.output
    assert "<dynamic_state>" in result.output
    assert "FAILED tests/test_parser.py::test_parse_empty" in result.output
    assert "store: the default database" in result.output  # the store it ran on, named


def test_demo_summary_matches_the_payload() -> None:
    payload = demo_chef().compile(target="openai")
    row = summarize(payload)
    assert row["tools"] == 3  # read_file, run_tests and the context tool
    assert row["bytes"] == len(json.dumps(payload, ensure_ascii=False).encode())
    assert row["sequence"].split() == [m["role"] for m in payload["messages"]]


def test_help_lists_the_commands() -> None:
    result = runner.invoke(app, ["--help"])
    assert result.exit_code == 0
    assert "demo" in result.output
