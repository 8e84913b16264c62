"""The least Python that builds a payload: its containers made anew by one dict or list display
each (`{**block}` copies a dict in one C call), every string and scalar shared, no decision
made and nothing read but the payload itself.

A pure-Python adapter has to make at least these containers, so the time this takes is its
floor, the way `orjson.loads` of the payload's JSON is the floor of code that makes them in C.
`benchmarks/compile.py` times it next to the cold compile: where it alone is near a target, the
target leaves no room for the adapter's own work (reading the messages, choosing shapes, parsing
arguments).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["BUILDERS", "python_build"]

Json = dict[str, Any]


def _openai_chat(payload: Json) -> Json:
    # the chat payload's messages are the chef's own copies, shared: one list
    return {**payload, "messages": list(payload["messages"])}


def _block(block: Json) -> Json:
    if "input" in block:
        return {**block, "input": {**block["input"]}}
    if type(block.get("content")) is list:
        return {**block, "content": [{**part} for part in block["content"]]}
    return {**block}


def _anthropic(payload: Json) -> Json:
    messages = [
        {"content": [_block(block) for block in turn["content"]], "role": turn["role"]}
        for turn in payload["messages"]
    ]
    return {**payload, "messages": messages}


def _part(part: Json) -> Json:
    if "function_call" in part:
        call = part["function_call"]
        return {**part, "function_call": {**call, "args": {**call["args"]}}}
    if "function_response" in part:
        response = part["function_response"]
        return {**part, "function_response": {**response, "response": {**response["response"]}}}
    return {**part}


def _gemini(payload: Json) -> Json:
    contents = [
        {"parts": [_part(part) for part in content["parts"]], "role": content["role"]}
        for content in payload["contents"]
    ]
    return {**payload, "contents": contents}


def _rebuilt(value: Any) -> Any:
    """Any JSON value's containers made anew (the Responses API's items, of many shapes)."""
    if type(value) is dict:
        return {key: _rebuilt(item) for key, item in value.items()}
    if type(value) is list:
        return [_rebuilt(item) for item in value]
    return value


def _openai_responses(payload: Json) -> Json:
    return {**payload, "input": [_rebuilt(item) for item in payload["input"]]}


BUILDERS: dict[str, Callable[[Json], Json]] = {
    "openai": _openai_chat,
    "openai-responses": _openai_responses,
    "anthropic": _anthropic,
    "gemini": _gemini,
}


def python_build(payload: Json, target: str) -> Json:
    """`payload`, equal, its containers built by the least Python (see the module)."""
    return BUILDERS[target](payload)
