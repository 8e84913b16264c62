"""Compiled by `test_hashseed.py` in subprocesses: prints one digest over every scenario and
target. `sys.argv[1]` picks how dicts and sets are built (insertion order, set construction);
the logical state is the same for every value, so the digest must be too."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import sys
from typing import Any

from pydantic import BaseModel
from typing_extensions import TypedDict

from contextchef import ContextChef

TARGETS = ("anthropic", "gemini", "openai", "openai-responses")
WORDS = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"]


def ordered(items: list[Any], variant: int) -> list[Any]:
    return list(reversed(items)) if variant % 2 else items


def a_set(items: list[Any], variant: int) -> set[Any]:
    out: set[Any] = set()
    for item in ordered(items, variant) + ([] if variant < 2 else ["tmp"]):
        out.add(item)
    out.discard("tmp")  # a set that held more, then shrank: another table layout
    return out


class Task(BaseModel):
    tags: set[str]
    mixed: frozenset[int | str]
    nested: list[frozenset[str]]
    meta: dict[str, Any]


class Plan(TypedDict):
    steps: list[str]
    seen: set[str]


@dataclasses.dataclass
class Flags:
    on: frozenset[str]


def a_dict(pairs: list[tuple[str, Any]], variant: int) -> dict[str, Any]:
    return dict(ordered(pairs, variant))


def scenarios(variant: int) -> list[ContextChef]:
    history = [
        {"role": "user", "content": "plan the release"},
        {"role": "assistant", "content": "on it"},
        {"role": "user", "content": "go"},
    ]
    task = Task(
        tags=a_set(WORDS, variant),
        mixed=frozenset(a_set([1, "1", 2, "b", 30], variant)),
        nested=[frozenset(a_set(WORDS[:3], variant))],
        meta=a_dict([("z", 1), ("a", a_set(["x", "y"], variant)), ("m", None)], variant),
    )
    tool = {
        "name": "lookup",
        "description": "Look something up.",
        "parameters": a_dict(
            [
                ("type", "object"),
                # a schema is strict JSON (a set there is a ToolDefinitionError): a list
                ("properties", {"kind": {"type": "string", "enum": WORDS[:4]}}),
                ("required", ["kind"]),
            ],
            variant,
        ),
    }
    # key order: the block does not depend on the order the facts were set (insertion order,
    # the default, is logical state: the same order of sets gives the same bytes)
    first = ContextChef(memory={"order": "key"}).set_history(history).set_dynamic_state(task)
    first.tools.register([tool])
    for key in ordered(["user", "project/lang", "style"], variant):
        first.memory.set(key, f"value of {key}")
    plan: Plan = {"steps": ["build", "test"], "seen": a_set(WORDS[2:6], variant)}
    second = ContextChef(tools="legacy", memory={}).set_history(history)
    second.set_dynamic_state(Plan, a_dict(list(plan.items()), variant), placement="system")
    third = ContextChef().set_history(history)
    third.set_dynamic_state(Flags, {"on": frozenset(a_set(WORDS, variant))})
    return [first, second, third, pruned(history, variant)]


def pruned(history: list[Any], variant: int) -> ContextChef:
    """The pruner: a namespace, a toolkit, a task selection and an allow-list given as a set,
    and a window whose calls keep their tools."""
    names = [f"{verb}_{noun}" for verb in ("read", "write", "list") for noun in WORDS[:4]]
    tools = [
        {"name": name, "description": f"The {name.replace('_', ' ')} tool.", "tags": [name[:4]]}
        for name in names
    ]
    calls = [
        {"id": f"c{i}", "type": "function", "function": {"name": name, "arguments": "{}"}}
        for i, name in enumerate(["list_beta", "write_gamma"])
    ]
    window = [*history, {"role": "assistant", "content": None, "tool_calls": calls}]
    window += [{"role": "tool", "tool_call_id": call["id"], "content": "ok"} for call in calls]
    pruner = {
        "namespaces": a_dict(
            [("readers", {"tools": names[:4]}), ("listers", {"tools": names[8:]})], variant
        ),
        "toolkits": {"writers": {"tools": names[4:8], "description": "Write <things> & more."}},
    }
    chef = ContextChef(pruner=pruner)
    chef.tools.register(tools)
    chef.set_history(window)
    chef.tools.allow_only(a_set(["read_alpha", "read_delta", "listers", "write_beta"], variant))
    chef.tools.set_blocked_tools(a_set(["read_alpha", "list_gamma"], variant))
    if variant % 2:
        chef.tools.prune_by_task("read the alpha and delta entries", tags=["list"])
        chef.tools.allow_only(a_set(["read_alpha", "read_delta", "listers", "write_beta"], variant))
    return chef


def main() -> None:
    variant = int(sys.argv[1])
    digest = hashlib.sha256()
    for chef in scenarios(variant):
        for target in TARGETS:
            payload = chef.compile(target=target)
            digest.update(json.dumps(payload, ensure_ascii=False).encode())
    print(digest.hexdigest())


if __name__ == "__main__":
    main()
