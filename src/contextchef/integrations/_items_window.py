"""Responses API input items through a chef's overflow, back out as items (for the Agents SDK).

The items are mapped to IR messages — a message item to a message, consecutive `function_call`
items to one assistant message's tool calls, a `function_call_output` to a tool result — and
every other item (reasoning, built-in tool calls, anything without a `type` or `role`) rides
along with the IR message that follows it. The chef compiles that history; the messages it kept
come back as the very items they were made from (a tool output it offloaded comes back with the
preview as its `output`), the ones it wrote (a summary) as new message items, and what it puts
after the system prompt (the store instruction, the memory block) as one leading system item.
"""

from __future__ import annotations

import copy
import json
import logging
from collections.abc import Mapping, Sequence
from typing import Any

from contextchef.chef import AsyncContextChef, ContextChef
from contextchef.integrations._align import align
from contextchef.messages import Message, content_text

__all__ = ["Window", "items_to_ir"]

logger = logging.getLogger("contextchef.integrations.openai_agents")

_ROLES = {"user": "user", "assistant": "assistant", "system": "system", "developer": "system"}


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [p.get("text") for p in content if isinstance(p, Mapping)]
        return "".join(t for t in texts if isinstance(t, str))
    return "" if content is None else json.dumps(content, sort_keys=True, default=str)


def items_to_ir(items: Sequence[Any]) -> tuple[list[Message], list[list[int]]]:
    """IR messages for `items`, and the indices of the items each one stands for."""
    ir: list[Message] = []
    sources: list[list[int]] = []
    waiting: list[int] = []
    after_call = False
    for index, item in enumerate(items):
        kind = item.get("type") if isinstance(item, Mapping) else None
        role = item.get("role") if isinstance(item, Mapping) else None
        if kind in (None, "message") and role in _ROLES:
            text = _text(item.get("content"))
            ir.append({"role": _ROLES[role], "content": text})  # type: ignore[typeddict-item]
        elif kind == "function_call":
            function = {"name": str(item.get("name")), "arguments": item.get("arguments")}
            call: dict[str, Any] = {"id": str(item.get("call_id")), "type": "function"}
            call["function"] = function
            if after_call:
                ir[-1].setdefault("tool_calls", []).append(call)  # type: ignore[arg-type]
                sources[-1].extend([*waiting, index])
                waiting = []
                continue
            ir.append({"role": "assistant", "content": None, "tool_calls": [call]})  # type: ignore[list-item]
        elif kind == "function_call_output":
            output = item.get("output")
            text = output if isinstance(output, str) else _text(output)
            ir.append({"role": "tool", "tool_call_id": str(item.get("call_id")), "content": text})
        else:
            waiting.append(index)
            after_call = False
            continue
        after_call = kind == "function_call"
        sources.append([*waiting, index])
        waiting = []
    if waiting:
        if sources:
            sources[-1].extend(waiting)
        else:  # nothing but unknown items: keep them as one placeholder
            ir.append({"role": "user", "content": ""})
            sources.append(waiting)
    return ir, sources


class Window:
    """Compiles items through a chef and maps the result back (see the module docstring)."""

    def __init__(self, chef: ContextChef | AsyncContextChef, *, target: str = "openai") -> None:
        self.chef = chef
        self.target = target
        self._capturing = False
        self._before: list[Message] = []
        self._after: list[Message] = []
        chef.use("before_overflow", self._on_before)
        chef.use("after_overflow", self._on_after)

    def _on_before(self, history: list[Message]) -> None:
        if self._capturing:
            self._before = history

    def _on_after(self, history: list[Message], _report: object) -> None:
        if self._capturing:
            self._after = history

    async def apply(self, items: list[Any]) -> list[Any]:
        """The window for `items`: what the chef kept, as items, after what it adds on top."""
        lead = 0
        while lead < len(items) and _is_system(items[lead]):
            lead += 1
        ir, sources = items_to_ir(items[lead:])
        system = [
            {"role": "system", "content": _text(item.get("content"))} for item in items[:lead]
        ]
        chef = self.chef
        chef.set_system_prompt(system).set_history(ir)
        self._capturing = True
        try:
            if isinstance(chef, AsyncContextChef):
                payload = await chef.compile(target=self.target)
            else:
                payload = chef.compile(target=self.target)
        finally:
            self._capturing = False
        before, after = self._before, self._after
        position = align(before, ir)
        out: list[Any] = list(items[:lead])
        top = _top_layer(payload.get("messages") or [], lead)
        if top:
            out.append({"role": "system", "content": top})
        for message in after:
            at = position.get(id(message))
            if at is None:
                role = message["role"] if message["role"] != "tool" else "user"
                out.append({"role": role, "content": content_text(message)})
                continue
            for index in sources[at]:
                item = items[lead + index]
                changed = message.get("content") != ir[at].get("content")
                if (
                    changed
                    and isinstance(item, Mapping)
                    and item.get("type") == "function_call_output"
                ):
                    item = {**copy.deepcopy(dict(item)), "output": content_text(message)}
                out.append(item)
        return out


def _is_system(item: Any) -> bool:
    return (
        isinstance(item, Mapping)
        and item.get("type") in (None, "message")
        and item.get("role") in ("system", "developer")
    )


def _top_layer(sent: Sequence[Mapping[str, Any]], system_count: int) -> str:
    lead = 0
    while lead < len(sent) and sent[lead].get("role") == "system":
        lead += 1
    return "\n\n".join(str(m.get("content") or "") for m in sent[system_count:lead])
