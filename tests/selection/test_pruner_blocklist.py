"""The runtime blocklist never changes the compiled payload (the prompt cache survives); the host
asks `check_tool_call` and sends the refusal back as the tool result."""

from __future__ import annotations

import json

import pytest

from contextchef import AsyncContextChef, ContextChef
from contextchef.errors import UnknownToolNameError
from contextchef.selection.blocklist import ToolCallCheck
from tests.selection.pruner_fixtures import GIT, TARGETS, TOOLS

REFUSAL = (
    "Error: the {} tool is blocked right now, so this call was not run. Continue without it, "
    "or ask the user how to proceed."
)


@pytest.mark.parametrize("target", TARGETS)
def test_blocking_leaves_the_payload_bytes_unchanged(target: str) -> None:
    chef = ContextChef(pruner={"namespaces": GIT})
    chef.tools.register(TOOLS)
    chef.set_history([{"role": "user", "content": "Ship it."}])
    before = json.dumps(chef.compile(target=target))
    chef.tools.set_blocked_tools(["send_email", "git_commit"])
    assert json.dumps(chef.compile(target=target)) == before
    chef.tools.set_blocked_tools([])
    assert json.dumps(chef.compile(target=target)) == before


def test_check_tool_call_refuses_blocked_tools_and_namespace_actions() -> None:
    chef = ContextChef(pruner={"namespaces": GIT})
    chef.tools.register(TOOLS)
    chef.tools.set_blocked_tools(["send_email", "git_commit"])
    assert chef.tools.blocked == ("send_email", "git_commit")

    refused = chef.tools.check_tool_call("send_email", {"to": "ada"})
    assert refused == ToolCallCheck(False, REFUSAL.format("send_email"))
    assert not refused
    assert chef.tools.check_tool_call("read_file", '{"path": "a"}') == ToolCallCheck(True, None)
    # a namespace call is checked by the action it names, in any provider's shape
    call = {"type": "tool_use", "name": "git", "input": {"action": "git_commit", "args": {}}}
    assert chef.tools.check_tool_call(call).reason == REFUSAL.format("git_commit")
    assert chef.tools.check_tool_call("git", '{"action": "git_log", "args": {}}').allowed
    chef.tools.set_blocked_tools([])
    assert chef.tools.check_tool_call("send_email").allowed


def test_an_unknown_name_is_refused_and_the_list_is_kept() -> None:
    chef = ContextChef()
    chef.tools.register(TOOLS)
    chef.tools.set_blocked_tools(["click"])
    with pytest.raises(UnknownToolNameError, match=r"set_blocked_tools: unknown .*\['clik'\]"):
        chef.tools.set_blocked_tools(["clik"])
    assert chef.tools.blocked == ("click",)
    chef.tools.set_blocked_tools(["context"])  # the library's own tools may be blocked too
    assert not chef.tools.check_tool_call("context", "{}").allowed


async def test_the_async_chef_blocks_alike() -> None:
    achef = AsyncContextChef(pruner={"blocked": ["click"]})
    achef.tools.register(TOOLS)
    before = json.dumps(await achef.compile(target="anthropic"))
    assert not achef.tools.check_tool_call("click").allowed
    achef.tools.set_blocked_tools([])
    assert json.dumps(await achef.compile(target="anthropic")) == before
