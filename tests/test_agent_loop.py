"""The agent loop against the real SDKs: compile → SDK call → `add_response(reply)` → run the
tools → `add_tool_result(id, output)` → compile, for 24 turns per provider.

Each official SDK (`openai`, `anthropic`, `google-genai`) talks to a loopback server playing a
scripted model (`tests/agent_loop.py`), parses its reply into the SDK's own response object,
and that object goes to the chef as it came. On every turn the body the SDK actually sent must
carry every tool result the host added so far, in order, one per call, and nothing the chef
invented (no placeholder result, no "earlier conversation omitted" turn, no repair). The async
chef with the async clients sends the very same bytes.
"""

from __future__ import annotations

import asyncio
import functools
import json
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any

import anthropic
import openai
import pytest
from google import genai
from google.genai import types

from contextchef import AsyncContextChef, ContextChef, Payload, prompts
from tests.agent_loop import (
    MAX_TOKENS,
    MODEL,
    TARGETS,
    ScriptedModel,
    calls_of,
    new_chef,
    results_in,
    run_tool,
    script,
)
from tests.loopback import loopback_server

TURNS = 24  # the last turn is a final answer: its request carries the results of turn 22

Send = Callable[[Payload], Any]


class Host:
    """The host's side of one loop: it runs the tools and checks every request body."""

    def __init__(self, target: str) -> None:
        self.target = target
        self.results: list[str] = []  # every tool result added so far, in order
        self.parallel_turns = 0

    def check(self, payload: Payload, body: dict[str, Any]) -> None:
        assert payload.meta.repairs == ()
        sent = json.dumps(body, ensure_ascii=False)
        assert prompts.NO_TOOL_RESULT not in sent
        assert prompts.CONVERSATION_CONTINUES not in sent
        results, calls = results_in(self.target, body)
        assert results == self.results  # none dropped, none invented, in the order added
        assert calls == len(self.results)

    def answer(self, chef: ContextChef | AsyncContextChef, reply: Any) -> None:
        assert chef.add_response(reply) is chef
        calls = calls_of(self.target, reply)
        self.parallel_turns += len(calls) > 1
        for call_id, name, arguments in calls:
            output = run_tool(name, arguments)
            assert chef.add_tool_result(call_id, output, name=name) is chef
            self.results.append(output)
        if not calls:
            chef.append_history([{"content": "Next task, please.", "role": "user"}])


@contextmanager
def sync_client(target: str, url: str) -> Iterator[Send]:
    if target in ("openai", "openai-responses"):
        with openai.OpenAI(base_url=url + "/v1", api_key="test", max_retries=0) as client:
            if target == "openai":
                yield lambda payload: client.chat.completions.create(model=MODEL, **payload)
            else:
                yield lambda payload: client.responses.create(model=MODEL, **payload)
    elif target == "anthropic":
        with anthropic.Anthropic(base_url=url, api_key="test", max_retries=0) as client:
            yield lambda payload: client.messages.create(
                model=MODEL, max_tokens=MAX_TOKENS, **payload
            )
    else:
        options = types.HttpOptions(base_url=url)
        with genai.Client(api_key="test", http_options=options) as client:
            yield lambda payload: client.models.generate_content(model=MODEL, **payload)


@asynccontextmanager
async def async_client(target: str, url: str) -> AsyncIterator[Send]:
    if target in ("openai", "openai-responses"):
        async with openai.AsyncOpenAI(base_url=url + "/v1", api_key="test", max_retries=0) as ai:
            if target == "openai":
                yield lambda payload: ai.chat.completions.create(model=MODEL, **payload)
            else:
                yield lambda payload: ai.responses.create(model=MODEL, **payload)
    elif target == "anthropic":
        async with anthropic.AsyncAnthropic(base_url=url, api_key="test", max_retries=0) as an:
            yield lambda payload: an.messages.create(model=MODEL, max_tokens=MAX_TOKENS, **payload)
    else:
        options = types.HttpOptions(base_url=url)
        async with genai.Client(api_key="test", http_options=options).aio as gemini:
            yield lambda payload: gemini.models.generate_content(model=MODEL, **payload)


@functools.cache
def play_sync(target: str) -> tuple[Host, list[Any], str]:
    """The whole loop with `ContextChef`: the host, the bodies sent, the final history."""
    host, chef = Host(target), new_chef(target)
    assert isinstance(chef, ContextChef)
    with loopback_server(ScriptedModel(target)) as server, sync_client(target, server.url) as send:
        for _ in range(TURNS):
            payload = chef.compile()
            reply = send(payload)
            host.check(payload, server.last_body)
            host.answer(chef, reply)
        bodies = [request.body for request in server.requests]
    return host, bodies, json.dumps(chef.history)


@functools.cache
def play_async(target: str) -> tuple[Host, list[Any], str]:
    """The same loop with `AsyncContextChef` and the SDK's async client."""

    async def play() -> tuple[Host, list[Any], str]:
        host, chef = Host(target), new_chef(target, asynchronous=True)
        assert isinstance(chef, AsyncContextChef)
        with loopback_server(ScriptedModel(target)) as server:
            async with async_client(target, server.url) as send:
                for _ in range(TURNS):
                    payload = await chef.compile()
                    reply = await send(payload)
                    host.check(payload, server.last_body)
                    host.answer(chef, reply)
            bodies = [request.body for request in server.requests]
        return host, bodies, json.dumps(chef.history)

    return asyncio.run(play())


def test_the_script_has_parallel_calls_on_many_turns() -> None:
    counts = [len(script(turn)[1]) for turn in range(TURNS)]
    assert sum(count >= 2 for count in counts) >= 10 and 3 in counts
    assert counts[-1] == 0  # the last request carries the results of the turn before


@pytest.mark.parametrize("target", TARGETS)
def test_agent_loop_with_the_sync_chef_and_the_real_sdk(target: str) -> None:
    host, bodies, _ = play_sync(target)
    assert len(bodies) == TURNS
    assert len(host.results) == sum(len(script(turn)[1]) for turn in range(TURNS)) >= 30
    assert host.parallel_turns >= 10
    assert results_in(target, bodies[-1])[0] == host.results


@pytest.mark.parametrize("target", TARGETS)
def test_agent_loop_with_the_async_chef_and_the_async_sdk(target: str) -> None:
    host, bodies, _ = play_async(target)
    assert len(bodies) == TURNS
    assert results_in(target, bodies[-1])[0] == host.results
    assert host.parallel_turns >= 10


@pytest.mark.parametrize("target", TARGETS)
def test_sync_and_async_chefs_send_the_same_bytes(target: str) -> None:
    _, sync_bodies, sync_history = play_sync(target)
    _, async_bodies, async_history = play_async(target)
    assert json.dumps(sync_bodies, sort_keys=True) == json.dumps(async_bodies, sort_keys=True)
    assert sync_history == async_history
