"""The cache ledger against an independent oracle on payloads edited the way hosts and the chef
edit them: appended turns, a message rewritten or dropped mid-history, neighbours swapped,
breakpoints moved, the history reloaded as fresh dicts, tools and system blocks added or
removed. The ledger skips what it can prove shared; the figures must be those of the bytes."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from contextchef._memo import ConversionCache
from contextchef.cache.ledger import CacheLedger
from tests.cache_oracle import common_prefix, oracle_serialization


def edit(rng: random.Random, messages: list[dict[str, Any]], step: int) -> list[dict[str, Any]]:
    messages = list(messages)
    roll = rng.random()
    if roll < 0.35 or not messages:
        messages.append({"role": rng.choice(["user", "assistant"]), "content": f"turn {step} é"})
    elif roll < 0.45:  # reloaded from a database: equal, not the same objects
        messages = json.loads(json.dumps(messages))
    elif roll < 0.6:  # rewritten in place, often to the same size
        index = rng.randrange(len(messages))
        content = messages[index]["content"]
        messages[index] = {**messages[index], "content": content[:-1] + rng.choice("xyz")}
    elif roll < 0.7:
        messages.pop(rng.randrange(len(messages)))
    elif roll < 0.85:  # a breakpoint moves
        index = rng.randrange(len(messages))
        message = dict(messages[index])
        if message.pop("cache_control", None) is None:
            message["cache_control"] = {"type": "ephemeral"}
        messages[index] = message
    elif len(messages) > 2:
        index = rng.randrange(len(messages) - 1)
        messages[index], messages[index + 1] = messages[index + 1], messages[index]
    return messages


def shaped(shape: str, messages: list[Any], tools: list[Any], system: str | None) -> dict[str, Any]:
    blocks = [{"type": "text", "text": system}] if system else []
    if shape == "openai":
        return {"messages": messages, **({"tools": tools} if tools else {})}
    if shape == "openai-responses":
        return {"input": messages, **({"instructions": system} if system else {}), "tools": tools}
    if shape == "anthropic":
        return {"messages": messages, "system": blocks, **({"tools": tools} if tools else {})}
    config = {"system_instruction": {"parts": blocks}} if blocks else {}
    return {"contents": messages, **({"config": {**config, "tools": tools}} if tools else {})}


@pytest.mark.parametrize("shape", ["openai", "openai-responses", "anthropic", "gemini"])
def test_figures_are_those_of_the_serialized_bytes_whatever_the_edits(shape: str) -> None:
    for seed in range(8):
        rng = random.Random(seed)
        ledger = CacheLedger(ConversionCache())
        messages = [{"role": "user", "content": f"m{i}"} for i in range(rng.randrange(90))]
        tools: list[Any] = [{"name": "read"}]
        system: str | None = "You are careful."
        previous: bytes | None = None
        for step in range(30):
            messages = edit(rng, messages, step)
            if rng.random() < 0.1:
                tools = [*tools, {"name": f"tool{step}"}] if len(tools) < 3 else tools[:1]
            if rng.random() < 0.05:
                system = None if system else f"System {step}."
            payload = shaped(shape, messages, tools, system)
            entry, prefix, changed = ledger.advance(payload)
            report = ledger.report(entry, prefix, changed)
            ledger.commit(entry)
            current = oracle_serialization(payload)
            assert report.total_bytes == len(current)
            expected = 0 if previous is None else common_prefix(previous, current)
            assert report.prefix_bytes == expected, (seed, step)
            marked = sum('"cache_control"' in json.dumps(m) for m in messages)
            assert len(report.breakpoints) == marked
            previous = current
