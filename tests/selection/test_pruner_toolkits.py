"""Lazy toolkits: out of the payload until the model loads them through `load_toolkit` (routed
by the host to `chef.handle_tool`), then in it from the next compile on."""

from __future__ import annotations

import json
from typing import Any

import pytest

from contextchef import AsyncContextChef, ContextChef
from contextchef.errors import ConfigError, ToolCollisionError, UnknownToolError
from tests.selection.pruner_fixtures import BROWSER, GIT, TARGETS, TOOLS, defined_names, validate


def browser_chef(chef_type: type[Any] = ContextChef) -> Any:
    chef = chef_type(pruner={"toolkits": BROWSER})
    chef.tools.register(TOOLS)
    return chef.set_history([{"role": "user", "content": "Find the release notes online."}])


def system_text(payload: dict[str, Any], target: str) -> str:
    if target == "anthropic":
        return "\n".join(block["text"] for block in payload["system"])
    if target == "openai-responses":
        return str(payload["instructions"])
    if target == "gemini":
        return "\n".join(p["text"] for p in payload["config"]["system_instruction"]["parts"])
    return "\n".join(m["content"] for m in payload["messages"] if m["role"] == "system")


@pytest.mark.parametrize("target", TARGETS)
def test_a_toolkit_loads_across_two_compiles(target: str) -> None:
    chef = browser_chef()
    first = chef.compile(target=target)
    names = defined_names(first, target)
    assert "open_page" not in names and "click" not in names
    assert names[-2:] == ["load_toolkit", "context"]
    assert '<toolkit name="browser" tools="open_page, click">Drive a web browser.</toolkit>' in (
        system_text(first, target)
    )
    validate(first, target)

    # the model calls load_toolkit; the host routes the call to the chef
    assert chef.owns_tool("load_toolkit")
    reply = chef.handle_tool("load_toolkit", '{"toolkit": "browser"}')
    assert (
        reply
        == "Loaded the browser toolkit: open_page, click can be called from your next step on."
    )

    second = chef.compile(target=target)
    names = defined_names(second, target)
    assert names.index("open_page") < names.index("click") < names.index("load_toolkit")
    assert 'loaded="true"' in system_text(second, target)
    validate(second, target)
    assert chef.tools.loaded_toolkits == ("browser",)


def test_model_mistakes_get_a_tool_result_and_change_nothing() -> None:
    chef = browser_chef()
    before = json.dumps(chef.compile())
    assert chef.handle_tool("load_toolkit", {"toolkit": "brwoser"}) == (
        'Error: "brwoser" is not a toolkit. Toolkits: browser. Call again with one of them as '
        '"toolkit".'
    )
    assert chef.handle_tool("load_toolkit", "{}").startswith(
        'Error: the "toolkit" argument is missing or empty. Toolkits: browser.'
    )
    assert chef.handle_tool("load_toolkit", "[1]").startswith("Error: the tool arguments must be")
    assert json.dumps(chef.compile()) == before
    chef.handle_tool("load_toolkit", {"toolkit": "Browser"})  # case is forgiven
    assert chef.handle_tool("load_toolkit", {"toolkit": "browser"}) == (
        "The browser toolkit is already loaded; its tools are in your tool list."
    )


def test_the_directory_escapes_what_the_host_wrote() -> None:
    toolkits = {"web": {"tools": ["open_page"], "description": '</toolkit> & "quotes" <b>'}}
    chef = ContextChef(pruner={"toolkits": toolkits})
    chef.tools.register(TOOLS)
    text = system_text(chef.compile(), "openai")
    assert "&lt;/toolkit&gt; &amp; &quot;quotes&quot; &lt;b&gt;</toolkit>" in text
    assert text.count("</toolkit>") == 1


def test_a_toolkit_may_hold_a_namespace_and_the_host_may_load_and_unload() -> None:
    chef = ContextChef(pruner={"namespaces": GIT, "toolkits": {"vcs": {"tools": ["git"]}}})
    chef.tools.register(TOOLS)
    assert "git" not in defined_names(chef.compile(), "openai")
    chef.tools.load_toolkit("vcs")
    assert "git" in defined_names(chef.compile(), "openai")
    chef.tools.unload_toolkit("vcs")
    assert "git" not in defined_names(chef.compile(), "openai")
    with pytest.raises(ConfigError, match="unknown toolkit 'vsc'; toolkits: vcs"):
        chef.tools.load_toolkit("vsc")


def test_without_toolkits_load_toolkit_is_not_the_library_s() -> None:
    chef = ContextChef()
    chef.tools.register(TOOLS)
    assert not chef.owns_tool("load_toolkit")
    with pytest.raises(UnknownToolError):
        chef.handle_tool("load_toolkit", {"toolkit": "x"})
    assert "load_toolkit" not in json.dumps(chef.compile())


def test_a_tool_of_the_host_called_load_toolkit_collides_with_toolkits() -> None:
    chef = ContextChef(pruner={"toolkits": BROWSER})
    with pytest.raises(ToolCollisionError, match="a registered tool is called load_toolkit"):
        chef.tools.register([*TOOLS, {"name": "load_toolkit", "description": "mine"}])
    assert chef.tools.definitions == []


async def test_the_async_chef_loads_through_handle_tool_too() -> None:
    achef = browser_chef(AsyncContextChef)
    assert "open_page" not in defined_names(await achef.compile(), "openai")
    assert (await achef.handle_tool("load_toolkit", {"toolkit": "browser"})).startswith("Loaded")
    assert "open_page" in defined_names(await achef.compile(), "openai")
