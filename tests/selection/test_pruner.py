"""The pruner changes what compile emits: `allow_only` and `prune_by_task` narrow the payload's
tools on every target, deterministically, and never drop a tool a call in the window refers to."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contextchef import AsyncContextChef, ContextChef, ToolDefinitionError
from contextchef.errors import ConfigError
from contextchef.selection.pruner import PrunerState
from tests.selection.pruner_fixtures import (
    LIBRARY,
    NAMES,
    TARGETS,
    TOOLS,
    defined_names,
    tool,
    tool_turn,
    validate,
)


def chef_with_tools(**options: Any) -> ContextChef:
    chef = ContextChef(**options)
    chef.tools.register(TOOLS)
    return chef.set_history([{"role": "user", "content": "Please fix the failing tests."}])


@pytest.mark.parametrize("target", TARGETS)
def test_allow_only_changes_the_payload_on_every_target(target: str) -> None:
    chef = chef_with_tools()
    before = chef.compile(target=target)
    assert set(defined_names(before, target)) == {*NAMES, *LIBRARY}

    result = chef.tools.allow_only(["read_file", "run_tests"])
    after = chef.compile(target=target)

    assert defined_names(after, target) == ["read_file", "run_tests", "context"]
    assert result.kept == ("read_file", "run_tests")
    assert set(result.removed) == set(NAMES) - {"read_file", "run_tests"}
    assert result.reason("send_email") == "allow_only: not named"
    validate(after, target)


@pytest.mark.parametrize("target", TARGETS)
def test_prune_by_task_keeps_what_the_task_mentions(target: str) -> None:
    chef = chef_with_tools()
    result = chef.tools.prune_by_task("The tests fail after my last commit; read the parser file.")
    names = defined_names(chef.compile(target=target), target)
    # "tests" meets run_tests' name, "commit" git_commit's name and git_log's "commits",
    # "file" read_file's and write_file's names
    assert names == ["read_file", "write_file", "git_commit", "git_log", "run_tests", "context"]
    assert result.reason("run_tests") == "the task mentions 'tests' (its name)"
    assert result.reason("git_log") == "the task mentions 'commits' (its description)"
    assert result.reason("git_status") == "the task mentions no word of its name, tags or text"
    assert result.total == len(NAMES)


def test_task_matches_tags_and_descriptions_and_inflections() -> None:
    chef = chef_with_tools()
    assert (
        chef.tools.prune_by_task("then call git_log.").reason("git_log")
        == "the task names 'git_log'"
    )
    assert chef.tools.prune_by_task("clicking").kept == ("click",)
    assert chef.tools.prune_by_task("the clicker").kept == ("click",)
    assert chef.tools.prune_by_task("browse the web").kept == ("open_page", "click")
    assert chef.tools.prune_by_task("testing").kept == ("run_tests",)  # tag "testing", name "tests"
    # a word of the description: "colleague" only in send_email's
    result = chef.tools.prune_by_task("tell a colleague")
    assert result.kept == ("send_email",)
    assert result.reason("send_email") == "the task mentions 'colleague' (its description)"


def test_tags_combine_with_the_task_by_mode() -> None:
    chef = chef_with_tools()
    union = chef.tools.prune_by_task("stage the status", tags=["web"])
    assert union.kept == ("git_status", "open_page", "click")
    assert union.reason("click") == "tagged 'web'"
    both = chef.tools.prune_by_task("click the button", tags=["web"], mode="intersection")
    assert both.kept == ("click",)
    assert both.reason("click") == "the task names 'click', and tagged 'web'"
    assert both.reason("open_page") == "intersection: the task does not mention it"
    assert both.reason("read_file") == "intersection: the task does not mention it"
    assert chef.tools.prune_by_task("", tags=["vcs"]).kept == ("git_status",)


def test_the_same_inputs_compile_to_the_same_bytes_and_order() -> None:
    first, second = chef_with_tools(), chef_with_tools()
    first.tools.prune_by_task("commit the tests")
    second.tools.prune_by_task("commit the tests")
    for target in TARGETS:
        a = json.dumps(first.compile(target=target))
        assert a == json.dumps(first.compile(target=target))
        assert a == json.dumps(second.compile(target=target))
    # registration order decides, not the order of names given
    first.tools.allow_only(["run_tests", "read_file"])
    assert defined_names(first.compile(target="anthropic"), "anthropic")[:2] == [
        "read_file",
        "run_tests",
    ]


@pytest.mark.parametrize("target", TARGETS)
def test_a_tool_called_in_the_window_is_never_pruned(target: str) -> None:
    chef = chef_with_tools()
    history = [
        {"role": "user", "content": "Mail Ada the results."},
        *tool_turn("c1", "send_email", {"to": "ada", "body": "ok"}),
    ]
    chef.set_history(history)
    result = chef.tools.allow_only(["read_file"])
    payload = chef.compile(target=target)
    assert defined_names(payload, target) == ["read_file", "send_email", "context"]
    assert result.reason("send_email").startswith("called by a tool call in the window")
    validate(payload, target)
    # once the call has left the window (a new conversation), it goes
    chef.set_history([{"role": "user", "content": "hello"}])
    assert defined_names(chef.compile(target=target), target) == ["read_file", "context"]


@settings(max_examples=40, deadline=None)
@given(
    allowed=st.lists(st.sampled_from(NAMES), unique=True, max_size=4),
    called=st.lists(st.sampled_from(NAMES), max_size=4),
    target=st.sampled_from(TARGETS),
)
def test_every_tool_the_window_calls_is_defined(
    allowed: list[str], called: list[str], target: str
) -> None:
    chef = ContextChef()
    chef.tools.register(TOOLS)
    history: list[Any] = [{"role": "user", "content": "go"}]
    for index, name in enumerate(called):
        history += tool_turn(f"c{index}", name)
    chef.set_history(history)
    chef.tools.allow_only(allowed)
    names = defined_names(chef.compile(target=target), target)
    assert set(called) <= set(names)
    assert set(names) == {*allowed, *called, *LIBRARY}
    assert names == [n for n in [*NAMES, "context"] if n in names]  # registration order


def test_clear_and_keep() -> None:
    chef = chef_with_tools(pruner={"keep": ["send_email"]})
    assert chef.tools.allow_only(["read_file"]).kept == ("read_file", "send_email")
    chef.tools.clear_selection()
    assert set(defined_names(chef.compile(), "openai")) == {*NAMES, *LIBRARY}


def test_bad_arguments_raise_and_change_nothing() -> None:
    chef = chef_with_tools()
    chef.tools.allow_only(["read_file"])
    before = json.dumps(chef.compile())
    with pytest.raises(ConfigError, match="allow_only must be a list of tool names"):
        chef.tools.allow_only("read_file")
    with pytest.raises(ConfigError, match="mode must be 'union' or 'intersection'"):
        chef.tools.prune_by_task("x", mode="both")
    with pytest.raises(ConfigError, match="the task must be a string"):
        chef.tools.prune_by_task(None)  # type: ignore[arg-type]
    assert json.dumps(chef.compile()) == before
    assert chef.tools.pruner_state.selection is not None
    assert chef.tools.pruner_state.selection.names == ("read_file",)


def test_bad_pruner_options_and_tool_tags_are_refused_by_name() -> None:
    with pytest.raises(ConfigError, match="unknown pruner option\\(s\\) \\['namespace'\\]"):
        ContextChef(pruner={"namespace": {}})
    with pytest.raises(ConfigError, match="pruner must be a dict"):
        ContextChef(pruner=["git"])  # type: ignore[arg-type]
    with pytest.raises(ToolDefinitionError, match="tool 'x': tags must be a list of strings"):
        ContextChef().tools.register([{**tool("x", "d"), "tags": "vcs"}])


def test_tags_never_reach_a_provider() -> None:
    chef = chef_with_tools()
    for target in TARGETS:
        assert '"tags"' not in json.dumps(chef.compile(target=target))


async def test_the_async_chef_prunes_the_same_bytes() -> None:
    sync = chef_with_tools()
    achef = AsyncContextChef()
    achef.tools.register(TOOLS)
    achef.set_history([{"role": "user", "content": "Please fix the failing tests."}])
    assert sync.tools.prune_by_task("run the tests") == achef.tools.prune_by_task("run the tests")
    for target in TARGETS:
        assert json.dumps(await achef.compile(target=target)) == json.dumps(
            sync.compile(target=target)
        )


def test_pruner_state_round_trips_as_plain_json() -> None:
    chef = chef_with_tools(
        pruner={
            "namespaces": {"git": {"tools": ["git_status", "git_commit"], "description": "Git."}},
            "toolkits": {"web": {"tools": ["open_page", "click"]}},
            "keep": ["read_file"],
        }
    )
    chef.tools.prune_by_task("commit", tags=["vcs"], mode="intersection")
    chef.tools.load_toolkit("web").set_blocked_tools(["send_email"])
    state = chef.tools.pruner_state
    data = json.loads(json.dumps(state.to_dict()))
    assert PrunerState.from_dict(data) == state
    assert PrunerState.from_dict(data).to_dict() == data
    restored = chef_with_tools(pruner=data)
    assert json.dumps(restored.compile(target="anthropic")) == json.dumps(
        chef.compile(target="anthropic")
    )


def test_snapshot_and_restore_carry_the_pruner_state() -> None:
    chef = chef_with_tools()
    chef.tools.allow_only(["read_file"])
    snapshot = chef.snapshot()
    before = json.dumps(chef.compile())
    chef.tools.clear_selection().set_blocked_tools(["click"])
    assert json.dumps(chef.compile()) != before
    chef.restore(snapshot)
    assert json.dumps(chef.compile()) == before
    assert chef.tools.blocked == ()


def test_also_allowed_extends_or_is_the_selection() -> None:
    """The extra allow-list input (an active skill's allowed tools will feed it)."""
    chef = chef_with_tools()
    tools = chef.tools.definitions
    state = PrunerState.from_dict({})
    assert state.apply(tools, also_allowed=["click"]).result.kept == ("click",)
    narrowed = PrunerState.from_dict({"selection": {"allow_only": ["read_file"]}})
    plan = narrowed.apply(tools, also_allowed=["click"], referenced=["git_log"])
    assert plan.result.kept == ("read_file", "git_log", "click")
    assert plan.result.reason("click") == "on the extra allow-list (named)"
    assert [tool["name"] for tool in plan.tools] == ["read_file", "git_log", "click"]
    assert chef.tools.allow_only(["read_file"]) != chef.tools.selection(also_allowed=["click"])
    assert chef.tools.selection(also_allowed=["click"]).kept == ("read_file", "click")


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"namespaces": {"git": {"description": "x"}}}, "pruner namespace 'git' must be a dict"),
        ({"namespaces": {"git": {"tools": []}}}, "pruner namespace 'git' has no tools"),
        ({"namespaces": {"git hub": {"tools": ["a"]}}}, "pruner namespace 'git hub': the name"),
        ({"toolkits": {"web": {"tools": ["a"], "icon": "x"}}}, r"unknown key\(s\) \['icon'\]"),
        ({"loaded": ["web"]}, r"loaded names toolkit\(s\) \['web'\] that are not defined"),
        ({"use_allowed_tools": "yes"}, "use_allowed_tools must be True or False"),
        ({"selection": {"names": ["a"]}}, "pruner selection must be"),
        ({"selection": {"task": "x", "mode": "all"}}, "mode must be 'union' or 'intersection'"),
        ({"keep": "read_file"}, "pruner keep must be a list of tool names"),
    ],
)
def test_a_malformed_pruner_state_names_its_fault(options: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        PrunerState.from_dict(options)
    with pytest.raises(ConfigError, match=message):
        ContextChef(pruner=options)
