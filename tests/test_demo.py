"""`contextchef demo`'s scripted agent run: deterministic, inside the window, and persistent.

The figures come from `--json`, so every assertion reads what a user would see; short runs
(40-45 turns) keep the suite fast while still overflowing a 6000-token window. The data
directory tests run the real console script in a subprocess with HOME and XDG_DATA_HOME
pointed at a temporary directory, the way a new user's machine looks.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from contextchef import InMemoryBackend, SQLiteBackend
from contextchef.cli import app
from contextchef.cli.demo_session import Session, SessionOptions
from contextchef.cli.demo_store import DEMO_NAMESPACES, DEMO_PROJECT

runner = CliRunner()
TURNS = "45"
ROOT = Path(__file__).resolve().parents[1]


def _figures(*args: str) -> dict[str, Any]:
    result = runner.invoke(app, ["demo", "--json", *args], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    figures: dict[str, Any] = json.loads(result.output)
    return figures


@pytest.fixture(scope="module")
def seed_3() -> dict[str, Any]:
    """One 45-turn run for seed 3 in memory, shared by the tests that only read it."""
    return _figures("--store", ":memory:", "--seed", "3", "--turns", TURNS)


def test_the_summary_is_deterministic_for_a_seed(seed_3: dict[str, Any], tmp_path: Path) -> None:
    again = _figures("--store", str(tmp_path / "fresh.db"), "--seed", "3", "--turns", TURNS)
    assert again.pop("store") != seed_3["store"]
    assert again == {key: value for key, value in seed_3.items() if key != "store"}
    other = _figures("--store", ":memory:", "--seed", "4", "--turns", TURNS)
    assert other != seed_3


def test_the_window_holds_and_the_chef_overflows_and_offloads(seed_3: dict[str, Any]) -> None:
    assert seed_3["turns"] == 45
    assert 0 < seed_3["peak_window_tokens"] <= seed_3["window"] == 6000
    assert seed_3["final_window_tokens"] <= 6000
    assert seed_3["overflows"] >= 1
    assert seed_3["archived_spans"] >= 1
    assert seed_3["offloads"] >= 1
    assert seed_3["context_reads"] >= 1
    assert seed_3["memory_entries"] == 1
    assert seed_3["windows_exceeded"] == 0
    assert 0 < seed_3["prefix_reuse_min"] <= seed_3["prefix_reuse_mean"] < 1


@pytest.mark.parametrize("target", ["anthropic", "gemini", "openai-responses"])
def test_every_target_stays_inside_the_window(target: str) -> None:
    figures = _figures("--store", ":memory:", "--target", target, "--turns", "25")
    assert figures["peak_window_tokens"] <= figures["window"]
    assert figures["overflows"] >= 1


def test_a_second_run_on_the_same_store_starts_with_the_first_runs_memory(
    tmp_path: Path,
) -> None:
    database = str(tmp_path / "demo.db")
    first = _figures("--store", database, "--turns", "10")
    assert first["memory_at_start"] == []
    assert first["memory_entries"] == 1
    second = _figures("--store", database, "--turns", "10")
    assert second["memory_at_start"] == ["test-command"]
    shown = runner.invoke(
        app, ["demo", "--turns", "5", "--store", database], env={"COLUMNS": "200"}
    )
    assert shown.exit_code == 0, shown.output
    assert "memory from an earlier run" in shown.output
    assert "rm -f" in shown.output and database in shown.output


def test_the_agent_that_remembers_skips_looking_for_the_test_command() -> None:
    """What memory buys: the second agent never reads pyproject.toml to find the command."""
    store = InMemoryBackend()
    first = Session(SessionOptions(turns=6), store)
    first_events = [event.text for record in first.run() for event in record.events]
    assert "memory: saved test-command" in first_events
    second = Session(SessionOptions(turns=6), store)
    assert second.memory_value("test-command") == "python -m pytest -q -p no:randomly"
    list(second.run())
    assert second.stats.memory_at_start == ["test-command"]
    reads = [m for m in second.chef.history if "pyproject.toml" in json.dumps(m)]
    assert reads == []


def test_each_turn_records_the_window_by_layer() -> None:
    session = Session(SessionOptions(turns=20), InMemoryBackend())
    records = list(session.run())
    assert [record.turn for record in records] == list(range(1, 21))
    for record in records:
        assert set(record.layers) == {"tools", "system", "memory", "history", "tail"}
        assert sum(record.layers.values()) == record.tokens
    assert records[0].layers["memory"] == 0  # nothing remembered yet
    assert records[-1].layers["memory"] > 0  # the test command, after it was saved
    assert records[0].reuse is None and all(r.reuse is not None for r in records[1:])


def _subprocess_env(root: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "CONTEXTCHEF_HOME"}
    env.update(
        HOME=str(root / "home"),
        XDG_DATA_HOME=str(root / "data"),
        XDG_CONFIG_HOME=str(root / "config"),
        XDG_CACHE_HOME=str(root / "cache"),
        COLUMNS="200",
        NO_COLOR="1",
    )
    return env


def _files_under(root: Path) -> list[Path]:
    return sorted(path for path in root.rglob("*") if path.is_file())


def test_memory_store_leaves_nothing_behind(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "contextchef", "demo", "--turns", "8", "--store", ":memory:"],
        env=_subprocess_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert "nothing is written" in result.stdout
    assert list(tmp_path.iterdir()) == []


def _demo(root: Path, *args: str) -> str:
    result = subprocess.run(
        [sys.executable, "-m", "contextchef", "demo", "--turns", "8", "--quiet", *args],
        env=_subprocess_env(root),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_the_default_database_is_named_and_forget_empties_the_demos_project(
    tmp_path: Path,
) -> None:
    shown = _demo(tmp_path)
    files = _files_under(tmp_path)
    assert files and all(path.is_relative_to(tmp_path / "data") for path in files)
    assert f"the default database {tmp_path / 'data'}" in shown
    assert re.search(r"to remove it: .*-m contextchef demo --forget", shown)
    assert "--store :memory:" in shown
    assert json.loads(_demo(tmp_path, "--json"))["memory_at_start"] == ["test-command"]
    assert re.search(r"forgot [1-9]\d* entries", _demo(tmp_path, "--forget"))
    (database,) = (tmp_path / "data").rglob("*.db")
    backend = SQLiteBackend(database, project=DEMO_PROJECT)
    try:  # nothing of the demo's is left, memory's turn counter included
        assert [ns for ns in (*DEMO_NAMESPACES, "memory_state") if backend.list(ns)] == []
    finally:
        backend.close()
    assert json.loads(_demo(tmp_path, "--json"))["memory_at_start"] == []


def test_the_printed_command_removes_a_chosen_database(tmp_path: Path) -> None:
    folder = tmp_path / "db"
    folder.mkdir()
    shown = _demo(tmp_path, "--store", str(folder / "demo.db"))
    assert _files_under(folder)
    explore = re.search(r"to see what it stored: (.+)", shown)
    assert explore, shown
    listed = subprocess.run(
        explore[1], shell=True, env=_subprocess_env(tmp_path), capture_output=True, text=True
    )
    assert listed.returncode == 0, listed.stderr
    assert str(folder / "demo.db") in listed.stdout and "notes/" in listed.stdout
    removal = re.search(r"to remove it: (rm -f .+)", shown)
    assert removal, shown
    subprocess.run(removal[1], shell=True, check=True)
    assert _files_under(folder) == []


def test_after_make_demo_the_printed_commands_work_as_printed(tmp_path: Path) -> None:
    """`make demo` runs `.venv/bin/contextchef demo` from the repository root and puts no
    `contextchef` on the PATH: the closing lines' commands must run as printed, from there."""
    env = {k: v for k, v in _subprocess_env(tmp_path).items() if k != "PYTHONPATH"}
    env["PATH"] = os.pathsep.join(
        part
        for part in env.get("PATH", "").split(os.pathsep)
        if Path(part) != Path(sys.prefix, "bin")
    )
    script = Path(sys.prefix, "bin", "contextchef")
    if not script.exists():
        pytest.skip("the contextchef command is not installed in this environment")
    shown = os.path.relpath(script, ROOT) if script.is_relative_to(ROOT) else str(script)
    demo = subprocess.run(
        f"{shlex.quote(shown)} demo --quiet --turns 8",
        shell=True,
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert demo.returncode == 0, demo.stderr
    explore = re.search(r"to see what it stored: (.+)", demo.stdout)
    assert explore, demo.stdout
    assert explore[1].startswith(shlex.quote(shown) + " store ls"), explore[1]
    assert "--project demo:contextchef" in explore[1]

    def run(command: str) -> str:
        done = subprocess.run(
            command, shell=True, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0, (command, done.stderr)
        return done.stdout

    listed = run(explore[1])
    counts = dict(re.findall(r"│ (\w+)/\s+│ (\d+)", listed))
    assert int(counts["vfs"]) >= 1 and int(counts["memory"]) == 1, listed
    removal = re.search(r"to remove it: (.+ demo --forget)", demo.stdout)
    assert removal, demo.stdout
    assert re.search(r"forgot [1-9]\d* entries", run(removal[1]))
    listed = run(explore[1])
    counts = dict(re.findall(r"│ (\w+)/\s+│ (\d+)", listed))
    assert counts["vfs"] == counts["memory"] == "0", listed


def test_quiet_prints_only_the_summary() -> None:
    result = runner.invoke(app, ["demo", "--quiet", "--turns", "10", "--store", ":memory:"])
    assert result.exit_code == 0, result.output
    assert "peak window tokens" in result.output
    assert "turn   " not in result.output and "openai-responses" not in result.output


def test_the_live_display_shows_the_events_of_each_turn() -> None:
    result = runner.invoke(
        app, ["demo", "--turns", "20", "--store", ":memory:"], env={"COLUMNS": "200"}
    )
    assert result.exit_code == 0, result.output
    assert re.search(r"turn +\d+ +offloaded \d+ KB → context://vfs/", result.output)
    assert re.search(
        r"turn +\d+ +overflow: \d+ messages summarized → context://archive/", (result.output)
    )
    assert re.search(r"turn +2 +memory: saved test-command", result.output)
    assert "openai-responses" in result.output  # the four-target overview opens the demo
    assert "prompt bytes reusable from the previous turn" in result.output
    assert "--report window.html writes this run's window report" in result.output


def test_an_unknown_target_is_a_usage_error() -> None:
    result = runner.invoke(app, ["demo", "--target", "nope", "--store", ":memory:"])
    assert result.exit_code == 2


def test_make_demo_runs_on_a_fresh_clone(tmp_path: Path) -> None:
    """`make demo` in a clean clone exits 0. It reuses the suite's own virtual environment
    (made by `make test`) so the test installs nothing; a fresh set-up is measured by hand."""
    venv = Path(sys.prefix)
    if not (venv / ".installed").exists() or not (ROOT / ".git").exists():
        pytest.skip("needs the .venv `make test` builds and a git checkout")
    if shutil.which("git") is None or shutil.which("make") is None:
        pytest.skip("needs git and make")
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True, timeout=120)
    os.utime(clone / "pyproject.toml", (0, 0))  # older than the venv: nothing to install
    env = _subprocess_env(tmp_path)
    result = subprocess.run(
        ["make", "-C", str(clone), "demo", f"VENV={venv}", "DEMO_ARGS=--store :memory: --turns 20"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "==> installing" not in result.stdout  # the suite's install was reused
    assert "20 turns for openai" in result.stdout and "nothing is written" in result.stdout
    assert not (clone / ".venv").exists()
    assert not any(path.name != "clone" for path in tmp_path.iterdir())


def test_the_readme_opens_with_what_the_default_demo_prints() -> None:
    """The excerpt at the top of the README is the default run's real output (archive names
    hash a per-run window id, so only their shape is compared)."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    excerpt = readme.split("```\n$ make demo\n", 1)[1].split("```", 1)[0]
    result = runner.invoke(app, ["demo", "--store", ":memory:"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output

    def shape(text: str) -> str:
        # The reusable share's minimum moves by a tenth of a percent from run to run: where an
        # archive's URI changes, the common byte prefix of two turns ends wherever the old and
        # the new random hex first differ.
        text = re.sub(r"(mean [0-9.]+%, min )[0-9.]+%", r"\1…%", text)
        return re.sub(r"archive_[0-9a-f]+", "archive_…", text)

    printed = {shape(line.rstrip()) for line in result.output.splitlines()}
    quoted = [line.rstrip() for line in excerpt.splitlines() if line.startswith(("turn", "│"))]
    assert len(quoted) >= 10
    for line in quoted:
        assert shape(line) in printed, line


@pytest.mark.parametrize("kind", ["directory", "not a database"])
def test_a_store_that_is_not_a_database_is_one_line_and_exit_1(tmp_path: Path, kind: str) -> None:
    if kind == "directory":
        store = tmp_path
    else:
        store = tmp_path / "notes.txt"
        store.write_text("my notes\n", encoding="utf-8")
    before = sorted(tmp_path.rglob("*"))
    result = runner.invoke(app, ["demo", "--quiet", "--turns", "3", "--store", str(store)])
    assert result.exit_code == 1
    assert result.output.startswith("error: ") and "Traceback" not in result.output
    assert "hint: --store takes a SQLite file" in result.output
    assert sorted(tmp_path.rglob("*")) == before
    if kind != "directory":
        assert store.read_text(encoding="utf-8") == "my notes\n"
