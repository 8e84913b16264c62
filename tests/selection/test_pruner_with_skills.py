"""The pruner and the skills meet: a skill's `allowed_tools` narrow the tools through the
pruner, and a portable snapshot carries the pruner's state to another chef."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from contextchef import ContextChef, Skill, Snapshot
from tests.selection.pruner_fixtures import GIT, TOOLS, defined_names, tool_turn

TARGETS = ["openai", "openai-responses", "anthropic", "gemini"]
REVIEW = Skill(
    name="review",
    description="Reviews a change.",
    instructions="Review the diff.",
    allowed_tools=["read_file", "git_*"],
)


@pytest.mark.parametrize("target", TARGETS)
def test_a_skill_narrows_the_tools_and_keeps_a_called_one(target: str) -> None:
    chef = ContextChef(skills=[REVIEW])
    chef.tools.register(TOOLS)
    chef.set_history([{"role": "user", "content": "go"}, *tool_turn("c1", "send_email")])
    chef.skills.activate("review")
    names = defined_names(chef.compile(target=target), target)
    assert names == ["read_file", "git_status", "git_commit", "git_log", "send_email", "context"]
    chef.skills.activate(None)
    assert len(defined_names(chef.compile(target=target), target)) == len(TOOLS) + 1


def test_a_skill_adds_to_a_pruner_selection() -> None:
    chef = ContextChef(skills=[REVIEW])
    chef.tools.register(TOOLS)
    chef.set_history([{"role": "user", "content": "go"}])
    chef.tools.allow_only(["run_tests"])
    chef.skills.activate("review")
    names = defined_names(chef.compile(target="openai"), "openai")
    assert names == ["read_file", "git_status", "git_commit", "git_log", "run_tests", "context"]


def test_a_portable_snapshot_carries_the_pruner_to_a_fresh_process() -> None:
    chef = ContextChef(pruner={"namespaces": GIT})
    chef.tools.register(TOOLS)
    chef.set_history([{"role": "user", "content": "tidy the repository"}])
    chef.tools.allow_only(["read_file", "git_status"])
    chef.tools.set_blocked_tools(["write_file"])
    expected = json.dumps(chef.compile(target="anthropic"), sort_keys=True)
    text = chef.snapshot().to_json()

    other = ContextChef(pruner={"namespaces": GIT})

    other.tools.register(TOOLS)
    other.restore(Snapshot.from_json(text))
    assert json.dumps(other.compile(target="anthropic"), sort_keys=True) == expected
    assert other.tools.blocked == ("write_file",)

    script = (
        "import json, sys\n"
        "from contextchef import ContextChef, Snapshot\n"
        "from tests.selection.pruner_fixtures import GIT, TOOLS\n"
        "chef = ContextChef(pruner={'namespaces': GIT})\n"
        "chef.tools.register(TOOLS)\n"
        "chef.restore(Snapshot.from_json(sys.stdin.read()))\n"
        "print(json.dumps(chef.compile(target='anthropic'), sort_keys=True))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], input=text, capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == expected
