"""The `openai` target: keyword arguments of `client.chat.completions.create`.

System messages stay messages; tool calls and results keep OpenAI's own shape. OpenAI cannot
prefill a reply, so a prefill becomes an instruction at the end of the last user message (a text
part appended after any attachments, which are kept). Thinking is not sent back unless
`preserve_thinking_as_text` asks for it as text. A conversation with no message but system ones
gets the placeholder user turn the other targets use (`prompts.CONVERSATION_STARTS`). When the
pruner restricts calls by name (`use_allowed_tools`), `tool_choice` is
`{"type": "allowed_tools", "allowed_tools": {"mode": "auto", "tools": [...]}}`.
"""

from __future__ import annotations

import logging
from typing import Any

from contextchef import prompts
from contextchef.adapters.base import AdapterInput, ConversionCache, ToolDefinition
from contextchef.adapters.content import attachment_placeholder, data_url, text_only
from contextchef.adapters.profile import AdapterProfile
from contextchef.messages import Message

__all__ = ["OpenAIChatAdapter"]

logger = logging.getLogger("contextchef.adapters.openai_chat")


def _user_part(part: Any) -> dict[str, Any]:
    kind = part["type"]
    if kind == "text":
        return {"text": part["text"], "type": "text"}
    if kind == "image":
        url = part["url"] if "url" in part else data_url(part["media_type"], part["data"])
        return {"image_url": {"url": url}, "type": "image_url"}
    if "data" in part:
        file: dict[str, Any] = {"file_data": data_url(part["media_type"], part["data"])}
        if "filename" in part:
            file["filename"] = part["filename"]
        return {"file": file, "type": "file"}
    if "text" in part:
        return {"text": part["text"], "type": "text"}
    return {"text": attachment_placeholder(part), "type": "text"}


# Keys a message of each role may carry to be sent exactly as the chef holds it (its private
# copies already have sorted keys), with no conversion at all.
_WIRE_KEYS = {
    "user": frozenset(("content", "name", "role")),
    "system": frozenset(("content", "name", "role")),
    "tool": frozenset(("content", "role", "tool_call_id")),
    "assistant": frozenset(("content", "name", "role", "tool_calls")),
}
_CALL_KEYS = frozenset(("function", "id", "type"))


def _is_wire_ready(message: Message) -> bool:
    """Whether the chef's copy of `message` is already exactly what OpenAI takes."""
    if not message.keys() <= _WIRE_KEYS[message["role"]]:
        return False
    content = message.get("content")
    calls = message.get("tool_calls")
    if calls is None:
        return isinstance(content, str)
    if content is not None and not isinstance(content, str):
        return False
    for call in calls:
        if len(call) != 3 or call.get("type") != "function" or len(call["function"]) != 2:
            return False
    return True


class OpenAIChatAdapter:
    """Compiles to Chat Completions `messages` and `tools`.

    Its profile: calls restricted by name (`tool_choice` `allowed_tools`) and OpenAI's
    `prompt_cache_key`; OpenAI caches prefixes by itself, so no breakpoints.
    """

    name = "openai"
    profile = AdapterProfile(allowed_tools=True, prompt_cache_key=True)

    __slots__ = ("_preserve_thinking_as_text",)

    def __init__(self, *, preserve_thinking_as_text: bool = False) -> None:
        self._preserve_thinking_as_text = preserve_thinking_as_text

    @property
    def preserve_thinking_as_text(self) -> bool:
        """Whether thinking is kept as text (read-only: the default registry's adapter is
        shared)."""
        return self._preserve_thinking_as_text

    def _wire(self, message: Message) -> dict[str, Any]:
        return message if _is_wire_ready(message) else self._convert(message)  # type: ignore[return-value]

    def _convert(self, message: Message) -> dict[str, Any]:
        role = message["role"]
        content = message.get("content")
        if role == "user":
            out: dict[str, Any] = {
                "content": content or ""
                if content is None or isinstance(content, str)
                else [_user_part(p) for p in content]
            }
            if "name" in message:
                out["name"] = message["name"]
            out["role"] = "user"
            return out
        if role == "tool":
            return {
                "content": text_only(content),
                "role": "tool",
                "tool_call_id": message["tool_call_id"],
            }
        if role == "system":
            out = {"content": text_only(content)}
            if "name" in message:
                out["name"] = message["name"]
            out["role"] = "system"
            return out
        text: str | None = text_only(content) if content is not None else None
        thinking = message.get("thinking")
        if self.preserve_thinking_as_text and thinking and thinking["thinking"]:
            text = prompts.thinking_as_text(thinking["thinking"], text)
        out = {"content": text}
        if "name" in message:
            out["name"] = message["name"]
        out["role"] = "assistant"
        calls = message.get("tool_calls")
        if calls:
            out["tool_calls"] = [
                {
                    "function": {
                        "arguments": call["function"]["arguments"],
                        "name": call["function"]["name"],
                    },
                    "id": call["id"],
                    "type": "function",
                }
                for call in calls
            ]
        return out

    def compile(self, request: AdapterInput) -> dict[str, Any]:
        cache = request.cache if request.cache is not None else ConversionCache()
        convert = self._wire
        messages = cache.convert_all(request.messages, convert, known=request.lineage)
        messages[:0] = [cache.convert(message, convert) for message in request.system]
        if all(message["role"] == "system" for message in messages):
            messages.append({"content": prompts.CONVERSATION_STARTS, "role": "user"})
        if request.prefill is not None:
            _append_instruction(messages, prompts.prefill_instruction(request.prefill))
        payload: dict[str, Any] = {"messages": messages}
        if request.tools and request.allowed_tools is not None:
            allowed = [
                {"function": {"name": name}, "type": "function"} for name in request.allowed_tools
            ]
            choice = {"allowed_tools": {"mode": "auto", "tools": allowed}, "type": "allowed_tools"}
            payload["tool_choice"] = choice
        if request.tools:
            payload["tools"] = [_tool(tool) for tool in request.tools]
        return payload


def _tool(tool: ToolDefinition) -> dict[str, Any]:
    function: dict[str, Any] = {
        "description": tool.get("description", ""),
        "name": tool["name"],
        "parameters": tool.get("parameters", {"properties": {}, "type": "object"}),
    }
    if "strict" in tool:
        function["strict"] = tool["strict"]
    return {"function": function, "type": "function"}


def _append_instruction(messages: list[dict[str, Any]], instruction: str) -> None:
    """Append `instruction` to the last user (else system) message, keeping its attachments.

    The target message is replaced by a copy, so cached conversions are never mutated.
    """
    for role in ("user", "system"):
        for index in range(len(messages) - 1, -1, -1):
            message = messages[index]
            if message["role"] != role:
                continue
            content = message["content"]
            if isinstance(content, list):
                content = [*content, {"text": instruction, "type": "text"}]
            else:
                content = f"{content}\n\n{instruction}" if content else instruction
            messages[index] = {**message, "content": content}
            return
    messages.append({"content": instruction, "role": "system"})
