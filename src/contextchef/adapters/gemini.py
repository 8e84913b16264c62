"""The `gemini` target: keyword arguments of google-genai's `client.models.generate_content`.

The payload is `{"config": {...}, "contents": [...]}` (pass `model=` yourself). Every system
message, from the top layer or from inside the history, becomes a text part of
`config.system_instruction`, in order: Gemini has no system role in `contents`. Assistant
messages become `model` contents (a text part, then one `function_call` part per tool call, each
carrying back its thought signature); tool results become `function_response` parts in `user`
contents, named after the function their call invoked. Consecutive contents of one role are
merged, so parallel results share one `user` content. Gemini cannot prefill a reply: the prefill
becomes an instruction part at the end of the last `user` content (its attachments are kept).
Gemini also rejects contents that end with a `model` turn, so a history ending with assistant
text has that text taken off and turned into the same instruction (before any prefill), and the
contents end with a `user` turn.
Field names are google-genai's snake_case; tools use `parameters_json_schema`, which takes a
standard JSON schema unchanged (`parameters` wants Gemini's OpenAPI subset).

Call ids are sent with calls and responses (Gemini pairs them by id), except the synthetic ids
`from_gemini` invents for calls that came without one, so such a history goes back as it came.
"""

from __future__ import annotations

import json
from operator import itemgetter
from typing import Any

from contextchef import prompts
from contextchef.adapters.base import AdapterInput, ConversionCache, ToolDefinition
from contextchef.adapters.content import text_only
from contextchef.adapters.gemini_contents import Contents, Unconvertible
from contextchef.adapters.json_args import loads_sorted_fast
from contextchef.adapters.profile import AdapterProfile
from contextchef.messages import Message

__all__ = ["SYNTHETIC_CALL_ID_PREFIX", "GeminiAdapter"]

# `from_gemini` names calls that came without an id `gemini-call-<name>-<n>`.
SYNTHETIC_CALL_ID_PREFIX = "gemini-call-"

Content = dict[str, Any]


_by_key = itemgetter(0)
_JSON_KINDS = {bool: "boolean", float: "number", int: "number", list: "array", str: "string"}


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


# Builds every JSON object with its keys already in sorted order (foreign JSON must be sorted),
# and refuses NaN / Infinity, which Python's json would otherwise let through.
_decoder = json.JSONDecoder(
    object_pairs_hook=lambda pairs: dict(sorted(pairs, key=_by_key)), parse_constant=_no_constants
)


def _media_part(part: Any) -> dict[str, Any]:
    if "data" in part:
        return {"inline_data": {"data": part["data"], "mime_type": part["media_type"]}}
    file_data = {"file_uri": part["url"]}
    if "media_type" in part:
        file_data["mime_type"] = part["media_type"]
    return {"file_data": file_data}


def _parts(content: Any) -> list[dict[str, Any]]:
    """Parts for a user or model message's content; empty text makes no part."""
    if content is None:
        return []
    if isinstance(content, str):
        return [{"text": content}] if content else []
    parts: list[dict[str, Any]] = []
    for part in content:
        if part["type"] == "text" or "text" in part:
            if part["text"]:
                parts.append({"text": part["text"]})
        else:
            parts.append(_media_part(part))
    return parts


def _with_thinking(parts: list[dict[str, Any]], thinking: str) -> None:
    """Put `thinking` as text before the reply: in front of its first part when that is text,
    else as a part of its own."""
    if parts and set(parts[0]) == {"text"}:
        parts[0] = {"text": prompts.thinking_as_text(thinking, parts[0]["text"])}
    else:
        parts.insert(0, {"text": prompts.thinking_as_text(thinking, None)})


def _with_signature(parts: list[dict[str, Any]], signature: str) -> None:
    """Put the message's thought signature back on its (last) text part."""
    for index in range(len(parts) - 1, -1, -1):
        if "text" in parts[index]:
            parts[index] = {**parts[index], "thought_signature": signature}
            return
    parts.insert(0, {"text": "", "thought_signature": signature})


def _parse_arguments(call: Any) -> dict[str, Any]:
    """A tool call's arguments as the JSON object Gemini wants; `Unconvertible` otherwise."""
    function = call["function"]
    raw = function["arguments"]
    if not raw.strip():
        return {}
    try:
        value = loads_sorted_fast(raw, _decoder.decode)
    except ValueError as exc:
        raise Unconvertible(
            f"tool call {call['id']!r} ({function['name']}) has arguments that are not valid "
            f"JSON ({exc}); Gemini needs them as a JSON object"
        ) from None
    if not isinstance(value, dict):
        raise Unconvertible(
            f"tool call {call['id']!r} ({function['name']}) has arguments that are a JSON "
            f"{_JSON_KINDS.get(type(value), 'null')}, not an object; Gemini needs a JSON object"
        )
    return value


def _response_value(content: Any) -> dict[str, Any]:
    """A tool result as Gemini's `response` object: a JSON object as is, else `{"result": text}`."""
    text = content if isinstance(content, str) else text_only(content)
    if text.lstrip().startswith("{"):
        try:
            value = loads_sorted_fast(text, _decoder.decode)
        except ValueError:
            value = None
        if isinstance(value, dict):
            return value
    return {"result": text}


def _system_parts(message: Message) -> list[dict[str, Any]]:
    text = text_only(message.get("content"))
    return [{"text": text}] if text else []


def _declaration(tool: ToolDefinition) -> dict[str, Any]:
    return {
        "description": tool.get("description", ""),
        "name": tool["name"],
        "parameters_json_schema": tool.get("parameters", {"properties": {}, "type": "object"}),
    }


class GeminiAdapter:
    """Compiles to `generate_content`'s `contents` and `config`.

    `send_call_ids=False` leaves every call id out, for endpoints that refuse them; Gemini then
    pairs responses with calls by order and name alone. `preserve_thinking_as_text=True` keeps
    an assistant turn's `thinking` (say, Claude's, when a conversation moves to Gemini) as a
    `<thinking>` text before its reply instead of dropping it; `redacted_thinking` is opaque and
    always dropped. Its profile: a context cache made with
    `client.caches.create` (`cached_content`); Gemini caches repeated prefixes implicitly
    otherwise, so no breakpoints.
    """

    name = "gemini"
    profile = AdapterProfile(cached_content=True)

    __slots__ = ("_preserve_thinking_as_text", "_send_call_ids")

    def __init__(
        self, *, send_call_ids: bool = True, preserve_thinking_as_text: bool = False
    ) -> None:
        self._send_call_ids = send_call_ids
        self._preserve_thinking_as_text = preserve_thinking_as_text

    @property
    def preserve_thinking_as_text(self) -> bool:
        """Whether thinking is kept as text (read-only: the default registry's adapter is
        shared)."""
        return self._preserve_thinking_as_text

    @property
    def send_call_ids(self) -> bool:
        """Whether call ids are sent (read-only: the default registry's adapter is shared)."""
        return self._send_call_ids

    def model_content(self, message: Message) -> Content | None:
        content = message.get("content")
        parts: list[dict[str, Any]]
        if isinstance(content, str):
            parts = [{"text": content}] if content else []
        else:
            parts = _parts(content)
        if self._preserve_thinking_as_text:
            thinking = message.get("thinking")
            if thinking and thinking["thinking"]:
                _with_thinking(parts, thinking["thinking"])
        if "gemini_thought_signature" in message:
            signature = message["gemini_thought_signature"]
            if signature:
                _with_signature(parts, signature)
        send = self._send_call_ids
        for call in message.get("tool_calls") or ():
            args, name, call_id = _parse_arguments(call), call["function"]["name"], call["id"]
            function_call: dict[str, Any] = (
                {"args": args, "id": call_id, "name": name}
                if send and not call_id.startswith(SYNTHETIC_CALL_ID_PREFIX)
                else {"args": args, "name": name}
            )
            if "gemini_thought_signature" in call:
                signed = call["gemini_thought_signature"]
                parts.append({"function_call": function_call, "thought_signature": signed})
            else:
                parts.append({"function_call": function_call})
        return {"parts": parts, "role": "model"} if parts else None

    def user_content(self, message: Message) -> Content | None:
        content = message.get("content")
        if isinstance(content, str):
            return {"parts": [{"text": content}], "role": "user"} if content else None
        parts = _parts(content)
        return {"parts": parts, "role": "user"} if parts else None

    def tool_content(self, message: Message, name: str) -> Content:
        value = _response_value(message.get("content"))
        call_id = message["tool_call_id"]
        response = (
            {"id": call_id, "name": name, "response": value}
            if self._send_call_ids and not call_id.startswith(SYNTHETIC_CALL_ID_PREFIX)
            else {"name": name, "response": value}
        )
        return {"parts": [{"function_response": response}], "role": "user"}

    def compile(self, request: AdapterInput) -> dict[str, Any]:
        cache = request.cache if request.cache is not None else ConversionCache()
        system = [part for m in request.system for part in cache.convert(m, _system_parts)]
        history: Contents | None = cache.state.get(self)
        if history is None:
            history = cache.state[self] = Contents()
        history.update(self, _system_parts, request.messages, cache, request.lineage)
        system.extend(history.hoisted)
        contents = history.wires[:]  # this request's copy: the merged contents are never mutated
        prefill = _trailing_model_text(contents) + (request.prefill or "")
        if not contents:
            contents.append({"parts": [{"text": prompts.CONVERSATION_STARTS}], "role": "user"})
        if prefill:
            _append_instruction(contents, system, prompts.prefill_instruction(prefill))
        config: dict[str, Any] = {}
        if system:
            config["system_instruction"] = {"parts": system}
        if request.tools:
            declarations = [cache.convert(tool, _declaration) for tool in request.tools]
            config["tools"] = [{"function_declarations": declarations}]
        return {"config": config, "contents": contents}


def _trailing_model_text(contents: list[Content]) -> str:
    """Take a trailing `model` content of text only off `contents` and return its text (its
    thoughts left out); `""` when there is none. Gemini rejects a request that ends with a model
    turn, so a history ending with the assistant's words becomes a prefill instruction instead:
    the reply begins with them, as a prefill does on Anthropic."""
    if not contents or contents[-1]["role"] != "model":
        return ""
    parts = contents[-1]["parts"]
    if any("text" not in part for part in parts):
        return ""  # a function call: the history was not repaired; leave it to the provider
    contents.pop()
    return "".join(part["text"] for part in parts if not part.get("thought"))


def _append_instruction(contents: list[Content], system: list[Any], instruction: str) -> None:
    """Append `instruction` as a text part of the last user content (attachments kept), or to
    the system instruction when there is none. Cached contents are replaced, never mutated."""
    for index in range(len(contents) - 1, -1, -1):
        content = contents[index]
        if content["role"] == "user":
            contents[index] = {"parts": [*content["parts"], {"text": instruction}], "role": "user"}
            return
    system.append({"text": instruction})
