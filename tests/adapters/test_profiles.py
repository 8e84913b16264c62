"""Adapter profiles: the chef asks what an adapter supports, never its class or target name.

An adapter that wraps a built-in one (Anthropic through Bedrock or Vertex, a logging proxy) is
a plain class forwarding to the built-in, registered under a name of its own. It compiles to
the very bytes the built-in target gives, automatic cache breakpoints, server compaction,
allowed tools and the providers' cache options included, because it forwards the profile; the
same wrapper with a plain profile loses them, which shows the profile is what carries them.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from typing import Any

import pytest

from contextchef import ContextChef, server
from contextchef.adapters import (
    AdapterInput,
    AdapterProfile,
    AnthropicAdapter,
    GeminiAdapter,
    OpenAIChatAdapter,
    OpenAIResponsesAdapter,
    builtin_registry,
)
from contextchef.adapters.base import profile_of
from contextchef.adapters.profile import PLAIN_PROFILE
from contextchef.errors import ConfigError
from contextchef.placement.breakpoints import AUTO_MARK
from tests.adapters.sdk_anthropic import validate_request
from tests.docs_pages import python_blocks
from tests.selection.pruner_fixtures import NAMES, TOOLS, validate


class Delegating:
    """A plain wrapper (not a subclass) that forwards every call to `inner`, as an adapter for
    Anthropic on Bedrock would; `profile` overrides the forwarded profile when given."""

    def __init__(self, inner: Any, name: str, profile: AdapterProfile | None = None) -> None:
        self.inner, self.name, self.calls = inner, name, 0
        self._profile = profile

    @property
    def profile(self) -> AdapterProfile:
        return self._profile if self._profile is not None else self.inner.profile

    def compile(self, request: AdapterInput) -> dict[str, Any]:
        self.calls += 1
        result: dict[str, Any] = self.inner.compile(request)
        return result

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def window_ids() -> Callable[[], str]:
    counter = itertools.count(1)
    return lambda: f"w{next(counter)}"


def agent_turns(chef: ContextChef, target: str, steps: int = 4) -> list[Any]:
    """The payloads of a steady agent loop: a tool call and its result every step, and a long
    step (more than `placement.breakpoints.LOOKBACK` messages) before the last compile, so that
    compile keeps the previous one's mark too."""
    history: list[dict[str, Any]] = [{"role": "user", "content": "Fix the parser."}]
    payloads = []
    for step in range(steps):
        payloads.append(chef.set_history(history).compile(target=target))
        call = {
            "function": {"arguments": json.dumps({"path": f"f{step}.py"}), "name": "read_file"},
            "id": f"call_{step}",
            "type": "function",
        }
        history += [
            {"role": "assistant", "content": f"Reading f{step}.py.", "tool_calls": [call]},
            {"role": "tool", "tool_call_id": f"call_{step}", "content": f"text of f{step}"},
        ]
        if step == steps - 2:
            history += [
                {"role": "assistant" if i % 2 else "user", "content": f"long step {i}"}
                for i in range(12)
            ]
        history.append({"role": "user", "content": f"Now step {step + 1}."})
    return payloads


def dumped(payloads: list[Any]) -> list[str]:
    return [json.dumps(payload, ensure_ascii=False) for payload in payloads]


def anthropic_chef(registry: Any) -> ContextChef:
    chef = ContextChef(
        adapters=registry,
        memory={},
        budget={"context_window": 100_000},
        overflow={"strategy": server(trigger_tokens=50_000), "window_ids": window_ids()},
    )
    chef.set_system_prompt("You are a coding agent.").tools.register(TOOLS)
    return chef


def test_a_wrapped_anthropic_keeps_automatic_breakpoints_and_server_compaction() -> None:
    registry = builtin_registry()
    wrapper = Delegating(AnthropicAdapter(), "bedrock-anthropic")
    registry.register("bedrock-anthropic", wrapper)
    expected = agent_turns(anthropic_chef(registry), "anthropic")
    wrapped = agent_turns(anthropic_chef(registry), "bedrock-anthropic")
    assert wrapper.calls >= len(wrapped)
    assert dumped(wrapped) == dumped(expected)
    for mine, theirs in zip(wrapped, expected, strict=True):
        assert mine.meta.target == "bedrock-anthropic" and theirs.meta.target == "anthropic"
        assert mine.meta.cache.breakpoints == theirs.meta.cache.breakpoints
        assert mine.meta.overflow.server == theirs.meta.overflow.server is not None
        assert mine.meta.cache.prefix_bytes == theirs.meta.cache.prefix_bytes
    last = wrapped[-1]
    text = json.dumps(last)
    assert text.count('"cache_control"') == 3  # the system end, the stable end, the previous end
    assert last["context_management"] == {
        "edits": [
            {"trigger": {"type": "input_tokens", "value": 50_000}, "type": "compact_20260112"}
        ]
    }
    assert last["betas"] == ["compact-2026-01-12"]
    validate_request({"model": "m", "max_tokens": 1, **last}, beta=True)


def test_the_profile_is_what_carries_them() -> None:
    """The same wrapper with a plain profile: no automatic breakpoint, no server compaction."""
    registry = builtin_registry()
    registry.register("proxy", Delegating(AnthropicAdapter(), "proxy", PLAIN_PROFILE))
    last = agent_turns(anthropic_chef(registry), "proxy")[-1]
    assert '"cache_control"' not in json.dumps(last)
    assert "context_management" not in last and "betas" not in last
    assert last.meta.overflow.server is None


def openai_chef(registry: Any) -> ContextChef:
    chef = ContextChef(
        adapters=registry, pruner={"use_allowed_tools": True}, prompt_cache_key="session-1"
    )
    chef.set_system_prompt("You are a coding agent.").tools.register(TOOLS)
    chef.tools.allow_only(["read_file", "run_tests"])
    return chef


@pytest.mark.parametrize(
    ("target", "inner"),
    [("openai", OpenAIChatAdapter()), ("openai-responses", OpenAIResponsesAdapter())],
    ids=["openai", "openai-responses"],
)
def test_a_wrapped_openai_keeps_allowed_tools_and_the_prompt_cache_key(
    target: str, inner: Any
) -> None:
    registry = builtin_registry()
    registry.register("azure", Delegating(inner, "azure"))
    registry.register("plain", Delegating(inner, "plain", PLAIN_PROFILE))
    expected = agent_turns(openai_chef(registry), target)
    wrapped = agent_turns(openai_chef(registry), "azure")
    assert dumped(wrapped) == dumped(expected)
    last = wrapped[-1]
    assert last["prompt_cache_key"] == "session-1"
    assert last["tool_choice"]["type"] == "allowed_tools"
    assert len(last["tools"]) == len(NAMES) + 1  # every definition stays, calls are restricted
    validate(last, target)
    plain = agent_turns(openai_chef(registry), "plain")[-1]
    assert "prompt_cache_key" not in plain and "tool_choice" not in plain
    assert len(plain["tools"]) == 3  # read_file, run_tests and the context tool


def gemini_chef(registry: Any) -> ContextChef:
    chef = ContextChef(adapters=registry, cached_content="cachedContents/abc")
    chef.set_system_prompt("You are a coding agent.").tools.register(TOOLS)
    return chef


def test_a_wrapped_gemini_keeps_its_cached_content() -> None:
    registry = builtin_registry()
    registry.register("vertex", Delegating(GeminiAdapter(), "vertex"))
    registry.register("plain", Delegating(GeminiAdapter(), "plain", PLAIN_PROFILE))
    expected = agent_turns(gemini_chef(registry), "gemini")
    wrapped = agent_turns(gemini_chef(registry), "vertex")
    assert dumped(wrapped) == dumped(expected)
    config = wrapped[-1]["config"]
    assert config == {"cached_content": "cachedContents/abc"}  # the cache holds system, tools
    validate(wrapped[-1], "gemini")
    plain = agent_turns(gemini_chef(registry), "plain")[-1]["config"]
    assert "cached_content" not in plain and "system_instruction" in plain and "tools" in plain


class OwnWire:
    """A custom adapter with a wire format of its own, declaring what it supports."""

    name = "own"

    def __init__(self, profile: AdapterProfile) -> None:
        self.profile = profile
        self.requests: list[AdapterInput] = []

    def compile(self, request: AdapterInput) -> dict[str, Any]:
        self.requests.append(request)
        return {
            "marked": list(request.auto_marks),
            "messages": [m["content"] for m in request.messages],
        }


def own_chef(adapter: OwnWire) -> ContextChef:
    registry = builtin_registry()
    registry.register("own", adapter)
    return ContextChef(
        adapters=registry,
        default_target="own",
        budget={"context_window": 100_000},
        overflow={"strategy": server(), "window_ids": window_ids()},
    ).set_history([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}])


def test_a_custom_adapter_gets_what_its_profile_declares() -> None:
    declaring = OwnWire(AdapterProfile(cache_breakpoints=2, server_compaction=True))
    own_chef(declaring).compile()
    request = declaring.requests[-1]
    everything = (*request.system, *request.messages)
    assert request.auto_marks  # positions in system + messages, the messages left as they are
    assert all(0 <= at < len(everything) for at in request.auto_marks)
    assert not any(AUTO_MARK in message for message in everything)
    assert request.server_compaction is not None and request.max_breakpoints is None
    plain = OwnWire(AdapterProfile())
    own_chef(plain).compile()
    request = plain.requests[-1]
    assert request.auto_marks == ()
    assert not any(AUTO_MARK in message for message in (*request.system, *request.messages))
    assert request.server_compaction is None


def test_an_adapter_without_a_profile_supports_nothing_beyond_its_wire() -> None:
    class Bare:
        def compile(self, request: AdapterInput) -> dict[str, Any]:
            return {"messages": list(request.messages)}

    assert profile_of(Bare()) is PLAIN_PROFILE
    registry = builtin_registry()
    registry.register("bare", Bare())
    payload = ContextChef(adapters=registry).set_history([{"role": "user", "content": "hi"}])
    assert payload.compile(target="bare")["messages"][-1]["content"] == "hi"


def test_the_builtin_profiles() -> None:
    assert AnthropicAdapter().profile == AdapterProfile(cache_breakpoints=4, server_compaction=True)
    assert AnthropicAdapter(max_cache_breakpoints=1).profile.cache_breakpoints == 1
    openai = AdapterProfile(allowed_tools=True, prompt_cache_key=True)
    assert OpenAIChatAdapter().profile == OpenAIResponsesAdapter().profile == openai
    assert GeminiAdapter().profile == AdapterProfile(cached_content=True)


def test_a_profile_is_checked() -> None:
    with pytest.raises(ConfigError, match="cache_breakpoints"):
        AdapterProfile(cache_breakpoints=-1)
    with pytest.raises(ConfigError, match="cache_breakpoints"):
        AdapterProfile(cache_breakpoints=True)
    with pytest.raises(ConfigError, match="allowed_tools"):
        AdapterProfile(allowed_tools=1)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        AdapterProfile(4)  # type: ignore[misc]  # keyword-only: a bare number says nothing

    class Misdeclared:
        profile = ("cache_breakpoints", 4)

        def compile(self, request: AdapterInput) -> dict[str, Any]:
            return {}

    with pytest.raises(ConfigError, match="must be an AdapterProfile"):
        builtin_registry().register("bad", Misdeclared())  # type: ignore[arg-type]


def test_the_documented_wrapper_runs_and_matches_the_builtin_target() -> None:
    (code,) = python_blocks("concepts/payload.md")
    namespace: dict[str, Any] = {}
    exec(compile(code, "docs/concepts/payload.md", "exec"), namespace)
    builtin = ContextChef().set_system_prompt("You are a coding agent.")
    builtin.set_history([{"role": "user", "content": "Hi"}])
    assert json.dumps(namespace["payload"]) == json.dumps(builtin.compile(target="anthropic"))
