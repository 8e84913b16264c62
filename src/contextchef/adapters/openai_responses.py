"""The `openai-responses` target: keyword arguments of `client.responses.create`.

The top-layer system messages become `instructions` (joined with a blank line; omitted when
there are none); the history becomes `input` items:

- user messages: `message` items with `input_text` / `input_image` / `input_file` parts;
- system messages inside the history: inline `system` message items, where they stand;
- assistant messages: first their `openai_reasoning` items, verbatim (the API pairs a reasoning
  item with the item right after it), then the text as an easy-input assistant message
  (`{"content": str, "role": "assistant", "type": "message"}` — the output-message form needs
  the item `id` and `status` the IR does not keep), then one `function_call` item per call;
- tool results: `function_call_output` items; a result with attachments sends them as a list of
  input parts, otherwise the output is a string.

Tools use the Responses flat function shape with `strict` always explicit: the API treats a
missing `strict` as true, which rejects most hand-written schemas. A prefill becomes an
instruction at the end of the last user message (a text part after its attachments), or of
`instructions` when there is no user message. An `input` with nothing but system items gets
the placeholder user turn the other targets use (`prompts.CONVERSATION_STARTS`). When the
pruner restricts calls by name (`use_allowed_tools`), `tool_choice` is
`{"type": "allowed_tools", "mode": "auto", "tools": [{"type": "function", "name": ...}]}`.
"""

from __future__ import annotations

from itertools import accumulate, chain
from typing import Any

from contextchef import prompts
from contextchef.adapters.base import AdapterInput, ConversionCache, ToolDefinition, sorted_keys
from contextchef.adapters.content import data_url, text_only
from contextchef.adapters.profile import AdapterProfile
from contextchef.messages import Message

__all__ = ["OpenAIResponsesAdapter"]

Item = dict[str, Any]


def _input_part(part: Any) -> dict[str, Any]:
    """One IR content part as a Responses input part."""
    kind = part["type"]
    if kind == "text" or "text" in part:
        return {"text": part["text"], "type": "input_text"}
    if kind == "image":
        url = part["url"] if "url" in part else data_url(part["media_type"], part["data"])
        return {"detail": "auto", "image_url": url, "type": "input_image"}
    file: dict[str, Any] = {}
    if "data" in part:
        file["file_data"] = data_url(part["media_type"], part["data"])
    else:
        file["file_url"] = part["url"]
    if "filename" in part:
        file["filename"] = part["filename"]
    file["type"] = "input_file"
    return file


def _input_parts(content: Any) -> list[dict[str, Any]]:
    if content is None or isinstance(content, str):
        return [{"text": content or "", "type": "input_text"}]
    return [_input_part(part) for part in content]


def _assistant_items(message: Message) -> list[Item]:
    reasoning = message.get("openai_reasoning")
    items: list[Item] = [sorted_keys(item) for item in reasoning] if reasoning else []
    calls = message.get("tool_calls")
    content = message.get("content")
    text = content if isinstance(content, str) else text_only(content)
    if text or not (calls or items):
        if "openai_phase" in message:
            phase = message["openai_phase"]
            items.append({"content": text, "phase": phase, "role": "assistant", "type": "message"})
        else:
            items.append({"content": text, "role": "assistant", "type": "message"})
    for call in calls or ():
        function = call["function"]
        items.append(
            {
                "arguments": function["arguments"],
                "call_id": call["id"],
                "name": function["name"],
                "type": "function_call",
            }
        )
    return items


def _items(message: Message) -> tuple[Item, ...]:
    """The input items one message becomes: a tuple, which the collector stops tracking at its
    first pass when the items hold only text (most messages), so the memo of a long history
    does not count towards its full passes as a list per message would."""
    role = message["role"]
    if role == "assistant":
        return tuple(_assistant_items(message))
    content = message.get("content")
    if role == "tool":
        output: Any = content
        if not isinstance(content, str):
            attached = content is not None and any(p["type"] != "text" for p in content)
            output = _input_parts(content) if attached else text_only(content)
        return (
            {"call_id": message["tool_call_id"], "output": output, "type": "function_call_output"},
        )
    if role == "system":
        parts = [{"text": text_only(content), "type": "input_text"}]
        return ({"content": parts, "role": "system", "type": "message"},)
    return ({"content": _input_parts(content), "role": "user", "type": "message"},)


def _tool(tool: ToolDefinition) -> dict[str, Any]:
    return {
        "description": tool.get("description", ""),
        "name": tool["name"],
        "parameters": tool.get("parameters", {"properties": {}, "type": "object"}),
        "strict": tool.get("strict", False),
        "type": "function",
    }


class OpenAIResponsesAdapter:
    """Compiles to Responses `instructions`, `input` and `tools`.

    Its profile is the Chat Completions adapter's: calls restricted by name and OpenAI's
    `prompt_cache_key`, no breakpoints.
    """

    __slots__ = ()
    name = "openai-responses"
    profile = AdapterProfile(allowed_tools=True, prompt_cache_key=True)

    def compile(self, request: AdapterInput) -> dict[str, Any]:
        cache = request.cache if request.cache is not None else ConversionCache()
        items = _history_items(self, request, cache)
        if all(item.get("role") == "system" for item in items):
            part = {"text": prompts.CONVERSATION_STARTS, "type": "input_text"}
            items.append({"content": [part], "role": "user", "type": "message"})
        texts = (text_only(message.get("content")) for message in request.system)
        instructions = "\n\n".join(text for text in texts if text)
        if request.prefill is not None:
            instruction = prompts.prefill_instruction(request.prefill)
            if not _append_to_last_user(items, instruction):
                instructions = f"{instructions}\n\n{instruction}" if instructions else instruction
        payload: dict[str, Any] = {"input": items}
        if instructions:
            payload["instructions"] = instructions
        if request.tools and request.allowed_tools is not None:
            allowed = [{"name": name, "type": "function"} for name in request.allowed_tools]
            payload["tool_choice"] = {"mode": "auto", "tools": allowed, "type": "allowed_tools"}
        if request.tools:
            payload["tools"] = [_tool(tool) for tool in request.tools]
        return payload


class _Flat:
    """The input items of the previous compile's history, flat, and where each message's
    items start (`starts[i]`; one more entry than messages), so the next compile keeps the
    items of the prefix it shares and converts the rest."""

    __slots__ = ("generation", "items", "starts")

    def __init__(self) -> None:
        self.generation = -1  # the `ConversionCache.generation` the items came from
        self.items: list[Item] = []
        self.starts: list[int] = [0]


def _history_items(owner: object, request: AdapterInput, cache: ConversionCache) -> list[Item]:
    """The history's input items (a list of the caller's own), reusing the previous ones."""
    flat: _Flat | None = cache.state.get(owner)
    if flat is None:
        flat = cache.state[owner] = _Flat()
    generation = cache.generation
    converted = cache.convert_all(request.messages, _items, known=request.lineage)
    shared = cache.shared if flat.generation == generation else 0
    items, starts = flat.items, flat.starts
    del items[starts[shared] :], starts[shared + 1 :]
    new = converted[shared:] if shared else converted
    items.extend(chain.from_iterable(new))
    starts.extend(accumulate(map(len, new), initial=starts[-1]))
    del starts[shared + 1]  # `accumulate` repeats its initial value first
    flat.generation = cache.generation
    return items[:]


def _append_to_last_user(items: list[Item], instruction: str) -> bool:
    """Append `instruction` as an `input_text` part of the last user item, keeping its other
    parts; the item is replaced by a copy, so cached conversions are never mutated."""
    for index in range(len(items) - 1, -1, -1):
        item = items[index]
        if item.get("role") == "user":
            part = {"text": instruction, "type": "input_text"}
            items[index] = {**item, "content": [*item["content"], part]}
            return True
    return False
