"""A 500-turn tool-heavy conversation in an 8000-token window: every payload fits, validates,
keeps tool calls with their results and the pinned constraint, and every message that left the
window can be read back from the archive."""

from __future__ import annotations

import json
import random
from typing import Any

from contextchef import ContextChef, summarize
from tests.adapters.sdk_anthropic import validate_request as validate_anthropic
from tests.adapters.sdk_gemini import validate_gemini
from tests.adapters.sdk_openai import validate_chat, validate_responses

WINDOW = 8000
TARGETS = ["openai", "openai-responses", "anthropic", "gemini"]
VALIDATE = {
    "openai": lambda p: validate_chat({"model": "m", **p}),
    "openai-responses": lambda p: validate_responses({"model": "m", **p}),
    "anthropic": lambda p: validate_anthropic({"model": "m", "max_tokens": 1, **p}),
    "gemini": validate_gemini,
}
PINNED = "Constraint: never touch the production database."


def fake_summarizer(messages: list[Any]) -> str:
    """Deterministic and short: names how many transcript turns it saw."""
    return f"<summary>Summary of {len(messages)} transcript turns; work continues.</summary>"


def turn(rng: random.Random, n: int) -> list[dict[str, Any]]:
    calls = [
        {
            "id": f"call_{n}_{k}",
            "type": "function",
            "function": {"name": "run", "arguments": json.dumps({"step": n, "k": k})},
        }
        for k in range(rng.randint(1, 3))
    ]
    out: list[dict[str, Any]] = [
        {"role": "user", "content": f"Step {n}: " + "please continue. " * rng.randint(1, 20)},
        {"role": "assistant", "content": f"Running step {n}.", "tool_calls": calls},
    ]
    for call in calls:
        output = f"output of {call['id']}\n" + "log line\n" * rng.randint(5, 200)
        out.append({"role": "tool", "tool_call_id": call["id"], "content": output})
    out.append({"role": "assistant", "content": f"Step {n} done."})
    return out


def paired(messages: list[dict[str, Any]]) -> bool:
    open_calls: set[str] = set()
    for message in messages:
        if message["role"] == "assistant":
            if open_calls:
                return False
            open_calls = {c["id"] for c in message.get("tool_calls") or ()}
        elif message["role"] == "tool":
            if message["tool_call_id"] not in open_calls:
                return False
            open_calls.discard(message["tool_call_id"])
        elif open_calls:
            return False
    return not open_calls


def test_five_hundred_turns_in_an_eight_thousand_token_window() -> None:
    rng = random.Random(42)
    chef = ContextChef(
        budget={"context_window": WINDOW},
        overflow={"strategy": summarize(fake_summarizer, preserve_ratio=0.5)},
    )
    chef.set_system_prompt("You are an operations agent.")
    host: list[dict[str, Any]] = [{"role": "user", "content": PINNED, "pinned": True}]
    host.append({"role": "assistant", "content": "Understood."})
    compressions = 0
    for n in range(500):
        host.extend(turn(rng, n))
        target = TARGETS[n % len(TARGETS)]
        payload = chef.set_history(host).compile(target=target)
        report = payload.meta.overflow
        compressions += report.changed
        assert payload.meta.tokens.total < WINDOW, (n, payload.meta.tokens)
        VALIDATE[target](payload)
        assert PINNED in json.dumps(payload, ensure_ascii=False)
        assert paired(chef.history)
        openai_view = chef.compile(target="openai")["messages"]
        assert paired([m for m in openai_view if m["role"] != "system"][1:])
    assert compressions > 10
    kept = {json.dumps(m, sort_keys=True) for m in chef.history}
    archive = chef.store.namespace("archive").entries()
    assert len(archive) == compressions
    gone = {
        json.dumps(m, sort_keys=True)
        for entry in archive.values()
        for m in json.loads(entry.content)["messages"]
    }
    for message in host:
        key = json.dumps(message, sort_keys=True)
        assert key in kept or key in gone, message
