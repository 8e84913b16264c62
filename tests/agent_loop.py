"""A scripted model, its replies as each provider's API writes them, and the host's side of the
agent loop for each provider's SDK: what `tests/test_agent_loop.py` plays.

The model answers turn `t` from the turn alone (`script`): every fourth turn a final text, the
others 1 to 3 parallel calls, two of the same function on the 3-call turns (Gemini matches
id-less calls to results by name, first in first out). Each provider's reply is the JSON its
API sends, which the real SDK parses into its own response object; Gemini's calls carry no id,
as the Gemini API sends them.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from contextchef import AsyncContextChef, ContextChef

MODEL = "test-model"
MAX_TOKENS = 1024
TARGETS = ("openai", "openai-responses", "anthropic", "gemini")
TOOLS = [
    {
        "description": "Read a file of the repository.",
        "name": "read_file",
        "parameters": {
            "properties": {"path": {"type": "string"}},
            "required": ["path"],
            "type": "object",
        },
    },
    {
        "description": "Run the tests of one module.",
        "name": "run_tests",
        "parameters": {"properties": {"path": {"type": "string"}}, "type": "object"},
    },
]
FIRST_TASK = "Fix the failing parser test."


@dataclass(frozen=True)
class Call:
    id: str
    name: str
    args: dict[str, Any]


def script(turn: int) -> tuple[str | None, list[Call]]:
    """The scripted model's reply on `turn`: (text, calls)."""
    if turn % 4 == 3:
        return f"Task {turn // 4} is done: the tests pass.", []
    count = 1 + turn % 3
    calls = [
        Call(
            f"call_{turn}_{i}", "run_tests" if i == 1 else "read_file", {"path": f"m{turn}_{i}.py"}
        )
        for i in range(count)
    ]
    return ("Let me look at the code first." if turn % 2 else None), calls


def run_tool(name: str, args: dict[str, Any]) -> str:
    """The host's tools: a different output for every call of the conversation."""
    return f"{name}({args['path']}): 12 lines, all green"


# -- the reply of each provider, as its API sends it ---------------------------------------


def chat_reply(turn: int, text: str | None, calls: list[Call]) -> dict[str, Any]:
    message: dict[str, Any] = {
        "annotations": [],
        "content": text,
        "refusal": None,
        "role": "assistant",
    }
    if calls:
        message["tool_calls"] = [
            {
                "function": {"arguments": json.dumps(c.args), "name": c.name},
                "id": c.id,
                "type": "function",
            }
            for c in calls
        ]
    return {
        "choices": [
            {
                "finish_reason": "tool_calls" if calls else "stop",
                "index": 0,
                "logprobs": None,
                "message": message,
            }
        ],
        "created": 1_760_000_000 + turn,
        "id": f"chatcmpl-{turn}",
        "model": MODEL,
        "object": "chat.completion",
        "service_tier": "default",
        "system_fingerprint": "fp_test",
        "usage": {"completion_tokens": 20, "prompt_tokens": 100 + turn, "total_tokens": 120},
    }


def responses_reply(turn: int, text: str | None, calls: list[Call]) -> dict[str, Any]:
    output: list[dict[str, Any]] = [
        {
            "encrypted_content": f"gAAAA-reasoning-{turn}",
            "id": f"rs_{turn}",
            "summary": [{"text": "Read the code before changing it.", "type": "summary_text"}],
            "type": "reasoning",
        }
    ]
    if text is not None:
        output.append(
            {
                "content": [{"annotations": [], "text": text, "type": "output_text"}],
                "id": f"msg_{turn}",
                "role": "assistant",
                "status": "completed",
                "type": "message",
            }
        )
    for c in calls:
        output.append(
            {
                "arguments": json.dumps(c.args),
                "call_id": c.id,
                "id": f"fc_{c.id}",
                "name": c.name,
                "status": "completed",
                "type": "function_call",
            }
        )
    return {
        "created_at": 1_760_000_000 + turn,
        "error": None,
        "id": f"resp_{turn}",
        "incomplete_details": None,
        "instructions": None,
        "metadata": {},
        "model": MODEL,
        "object": "response",
        "output": output,
        "parallel_tool_calls": True,
        "status": "completed",
        "store": True,
        "temperature": 1.0,
        "text": {"format": {"type": "text"}},
        "tool_choice": "auto",
        "tools": [],
        "top_p": 1.0,
        "truncation": "disabled",
        "usage": {
            "input_tokens": 100 + turn,
            "input_tokens_details": {"cache_write_tokens": 0, "cached_tokens": 0},
            "output_tokens": 20,
            "output_tokens_details": {"reasoning_tokens": 8},
            "total_tokens": 120 + turn,
        },
    }


def anthropic_reply(turn: int, text: str | None, calls: list[Call]) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    if calls:
        content.append(
            {"signature": f"sig-{turn}", "thinking": "Look first, then fix.", "type": "thinking"}
        )
    if text is not None:
        content.append({"text": text, "type": "text"})
    content.extend({"id": c.id, "input": c.args, "name": c.name, "type": "tool_use"} for c in calls)
    return {
        "content": content,
        "id": f"msg_{turn:04d}",
        "model": MODEL,
        "role": "assistant",
        "stop_reason": "tool_use" if calls else "end_turn",
        "stop_sequence": None,
        "type": "message",
        "usage": {
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            "input_tokens": 100 + turn,
            "output_tokens": 20,
        },
    }


def gemini_reply(turn: int, text: str | None, calls: list[Call]) -> dict[str, Any]:
    parts: list[dict[str, Any]] = [{"text": text}] if text is not None else []
    for at, c in enumerate(calls):
        part: dict[str, Any] = {"functionCall": {"args": c.args, "name": c.name}}
        if at == 0:  # Gemini signs the first call of a turn
            part["thoughtSignature"] = base64.b64encode(f"sig-{turn}".encode()).decode()
        parts.append(part)
    return {
        "candidates": [
            {"content": {"parts": parts, "role": "model"}, "finishReason": "STOP", "index": 0}
        ],
        "modelVersion": MODEL,
        "responseId": f"response-{turn}",
        "usageMetadata": {
            "candidatesTokenCount": 20,
            "promptTokenCount": 100 + turn,
            "totalTokenCount": 120 + turn,
        },
    }


REPLIES: dict[str, Callable[[int, str | None, list[Call]], dict[str, Any]]] = {
    "anthropic": anthropic_reply,
    "gemini": gemini_reply,
    "openai": chat_reply,
    "openai-responses": responses_reply,
}


class ScriptedModel:
    """The loopback server's answer: the reply of the turn the request count says it is."""

    def __init__(self, target: str) -> None:
        self.reply = REPLIES[target]
        self.turn = 0

    def __call__(self, body: Any) -> dict[str, Any]:
        del body
        text, calls = script(self.turn)
        self.turn += 1
        return self.reply(self.turn - 1, text, calls)


# -- the host's side: the calls in an SDK reply, the results in a request body -------------


def calls_of(target: str, reply: Any) -> list[tuple[str | None, str, dict[str, Any]]]:
    """(id, name, arguments) of each tool call in `reply`, the SDK's object, the way a host
    reads them with that SDK."""
    if target == "openai":
        message = reply.choices[0].message
        return [
            (c.id, c.function.name, json.loads(c.function.arguments))
            for c in message.tool_calls or ()
        ]
    if target == "openai-responses":
        return [
            (item.call_id, item.name, json.loads(item.arguments))
            for item in reply.output
            if item.type == "function_call"
        ]
    if target == "anthropic":
        return [(b.id, b.name, b.input) for b in reply.content if b.type == "tool_use"]
    return [(fc.id, fc.name, fc.args) for fc in reply.function_calls or ()]


def results_in(target: str, body: dict[str, Any]) -> tuple[list[str], int]:
    """The tool results a request body (or a payload) carries, in order, and how many tool
    calls it holds."""
    results: list[str] = []
    calls = 0
    if target == "openai":
        for message in body["messages"]:
            calls += len(message.get("tool_calls") or ())
            if message["role"] == "tool":
                results.append(message["content"])
    elif target == "openai-responses":
        for item in body["input"]:
            calls += item.get("type") == "function_call"
            if item.get("type") == "function_call_output":
                results.append(item["output"])
    elif target == "anthropic":
        for message in body["messages"]:
            for block in message["content"] if isinstance(message["content"], list) else ():
                calls += block["type"] == "tool_use"
                if block["type"] == "tool_result":
                    results.append(block["content"])
    else:
        for content in body["contents"]:
            for part in content["parts"]:  # the body is camelCase, the payload snake_case
                calls += "functionCall" in part or "function_call" in part
                response = part.get("functionResponse") or part.get("function_response")
                if response is not None:
                    results.append(response["response"]["result"])
    return results, calls


def new_chef(target: str, *, asynchronous: bool = False) -> ContextChef | AsyncContextChef:
    chef = (AsyncContextChef if asynchronous else ContextChef)(default_target=target)
    chef.set_system_prompt("You are a careful coding agent.").tools.register(TOOLS)
    return chef.set_history([{"content": FIRST_TASK, "role": "user"}])
