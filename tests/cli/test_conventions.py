"""The rules every command follows: help with an example, --json on listings, exit codes,
one-line errors, --debug, and no styling off a terminal or under NO_COLOR."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.commands import CommandInfo, all_commands
from tests.cli.helpers import error_line, invoke, native_history, write_json

COMMANDS = all_commands()
LEAVES = [command for command in COMMANDS if not command.is_group]
LISTINGS = {
    ("demo",),
    ("inspect",),
    ("identity",),
    ("store", "ls"),
    ("store", "cat"),
    ("store", "search"),
    ("store", "export"),
    ("store", "import"),
    ("store", "cleanup"),
    ("db", "info"),
    ("db", "check"),
}


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c.path) or "root")
def test_help_shows_an_example(command: CommandInfo) -> None:
    result = invoke(*command.path, "--help", env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "Example: contextchef" in result.stdout


def _option_rows(help_text: str) -> dict[str, str]:
    """Each `--option` row of a rich help panel: what follows the option on its line."""
    rows: dict[str, str] = {}
    for line in help_text.splitlines():
        found = re.match(r"│\s+(?:\*\s+)?(--[\w.-]+)(.*?)\s*│$", line)  # `--from-4.1`
        if found:
            rows[found.group(1)] = found.group(2)
    return rows


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c.path) or "root")
def test_help_shows_no_type_after_a_flag_and_one_after_an_option_taking_a_value(
    command: CommandInfo,
) -> None:
    """`--json <bool>` reads as if it took a value: a flag shows nothing between it and its help."""
    result = invoke(*command.path, "--help", env={"COLUMNS": "250", "NO_COLOR": "1"})
    assert result.exit_code == 0, result.output
    assert "<bool>" not in result.stdout
    rows = _option_rows(result.stdout)
    assert set(rows) == set(command.option_help), result.stdout
    for option, help_text in command.option_help.items():
        shown = rows[option].strip()
        help_start = " ".join(help_text.split())[:12]
        if option in command.flags:
            assert shown.startswith(help_start), (option, rows[option])
        else:  # a short form such as `-t` may come first, then the value's type or metavar
            value = re.sub(r"^-\w\s+", "", shown).split()[0]
            assert value and not shown.startswith(help_start), (option, rows[option])
            assert value != "<bool>"


def test_every_listing_takes_json() -> None:
    options = {command.path: command.options for command in COMMANDS}
    for path in LISTINGS:
        assert "--json" in options[path], path


@pytest.mark.parametrize("command", LEAVES, ids=lambda c: " ".join(c.path))
def test_an_unknown_option_is_a_usage_error(command: CommandInfo) -> None:
    result = invoke(*command.path, "--no-such-option")
    assert result.exit_code == 2


def test_json_output_is_plain_json(tmp_path: Path) -> None:
    history = write_json(tmp_path / "chat.json", native_history("openai"))
    runs = [
        ("store", "ls", "--json"),
        ("store", "ls", "notes/", "--json"),
        ("store", "search", "x", "--json"),
        ("store", "cleanup", "vfs", "--max-files", "9", "--json"),
        ("store", "export", tmp_path / "out", "--json"),
        ("identity", tmp_path, "--json"),
        ("inspect", history, "--json"),
        ("demo", "--turns", "3", "--store", ":memory:", "--json"),
    ]
    for args in runs:
        result = invoke(*args)
        assert result.exit_code == 0, (args, result.output)
        json.loads(result.stdout)
    assert invoke("store", "put", "notes/a.md", stdin="a").exit_code == 0  # creates the database
    for args in (("db", "info", "--json"), ("db", "check", "--json")):
        result = invoke(*args)
        assert result.exit_code == 0, (args, result.output)
        json.loads(result.stdout)


def test_errors_are_one_line_and_debug_shows_the_traceback(tmp_path: Path) -> None:
    missing = tmp_path / "missing.db"
    for args in (
        ("compile", missing),
        ("inspect", missing),
        ("store", "ls", "--store", missing),
        ("identity", missing),
        ("db", "info", "--db", missing),
    ):
        result = invoke(*args)
        assert result.exit_code == 1, (args, result.output)
        error_line(result)
        debug = invoke("--debug", *args)
        assert debug.exit_code == 1 and debug.exception is not None
    for group in ("store", "db"):
        args = ("ls", "--store", missing) if group == "store" else ("info", "--db", missing)
        assert invoke(group, "--debug", *args).exception is not None


@pytest.mark.parametrize(
    ("env", "styled"),
    [
        ({"FORCE_COLOR": "1", "TERM": "xterm-256color"}, True),
        ({"FORCE_COLOR": "1", "TERM": "xterm-256color", "NO_COLOR": "1"}, False),
        ({}, False),  # not a terminal
    ],
)
def test_styling_only_on_a_terminal_and_never_with_no_color(
    env: dict[str, str], styled: bool, tmp_path: Path
) -> None:
    listing = invoke("store", "ls", env=env)
    error = invoke("store", "ls", "--store", tmp_path / "missing", env=env)
    assert ("\x1b[" in listing.stdout) is styled
    assert ("\x1b[" in error.stderr) is styled


def test_python_dash_m_runs_the_same_app() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "contextchef", "--help"],
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": "200", "NO_COLOR": "1"},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    for command in ("compile", "inspect", "store", "identity", "db", "demo"):
        assert f" {command} " in done.stdout


def test_printed_commands_start_the_way_contextchef_was_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A command the CLI prints (`how_to_run()` + arguments) must run as printed."""
    from contextchef.cli._common import how_to_run

    script = tmp_path / "bin" / "contextchef"
    script.parent.mkdir()
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "argv", [str(script), "demo"])
    monkeypatch.setenv("PATH", str(script.parent))
    assert how_to_run() == "contextchef"  # the console script on the PATH
    monkeypatch.setenv("PATH", str(tmp_path / "elsewhere"))
    assert how_to_run() == "bin/contextchef"  # not on the PATH: its path
    package_root = Path(__file__).resolve().parents[2] / "src"
    monkeypatch.setattr(sys, "argv", [str(package_root / "contextchef" / "__main__.py")])
    monkeypatch.setenv("PYTHONPATH", str(package_root))
    assert how_to_run() == f"PYTHONPATH={package_root} {sys.executable} -m contextchef"
    monkeypatch.delenv("PYTHONPATH")
    assert how_to_run() == f"{sys.executable} -m contextchef"


def test_progress_on_a_terminal_only(tmp_path: Path) -> None:
    terminal = {"FORCE_COLOR": "1", "TERM": "xterm-256color"}
    assert invoke("store", "put", "notes/a.md", stdin="a").exit_code == 0
    history = write_json(tmp_path / "chat.json", native_history("openai"))
    for args, label in (
        (("store", "export", tmp_path / "out"), "exporting"),
        (("compile", history), "compiling"),
        (("store", "search", "a"), "searching"),
    ):
        shown = invoke(*args, env=terminal)
        assert shown.exit_code == 0, shown.output
        assert label in shown.stderr
        piped = invoke(*args)
        assert label not in piped.stderr
