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
from collections.abc import Sequence
from operator import itemgetter
from typing import Any

from contextchef import prompts
from contextchef.adapters.base import AdapterInput, ConversionCache, ToolDefinition
from contextchef.adapters.content import text_only
from contextchef.errors import CompileError
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


class _Unconvertible(Exception):
    """A message the target cannot take; `compile` re-raises it as `CompileError` with its index."""


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


def _with_signature(parts: list[dict[str, Any]], signature: str) -> None:
    """Put the message's thought signature back on its (last) text part."""
    for index in range(len(parts) - 1, -1, -1):
        if "text" in parts[index]:
            parts[index] = {**parts[index], "thought_signature": signature}
            return
    parts.insert(0, {"text": "", "thought_signature": signature})


def _parse_arguments(call: Any) -> dict[str, Any]:
    """A tool call's arguments as the JSON object Gemini wants; `_Unconvertible` otherwise."""
    function = call["function"]
    raw = function["arguments"]
    if not raw.strip():
        return {}
    try:
        value = _decoder.decode(raw)
    except ValueError as exc:
        raise _Unconvertible(
            f"tool call {call['id']!r} ({function['name']}) has arguments that are not valid "
            f"JSON ({exc}); Gemini needs them as a JSON object"
        ) from None
    if not isinstance(value, dict):
        raise _Unconvertible(
            f"tool call {call['id']!r} ({function['name']}) has arguments that are a JSON "
            f"{_JSON_KINDS.get(type(value), 'null')}, not an object; Gemini needs a JSON object"
        )
    return value


def _response_value(content: Any) -> dict[str, Any]:
    """A tool result as Gemini's `response` object: a JSON object as is, else `{"result": text}`."""
    text = text_only(content)
    if text.lstrip().startswith("{"):
        try:
            value = _decoder.decode(text)
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
    pairs responses with calls by order and name alone.
    """

    name = "gemini"

    def __init__(self, *, send_call_ids: bool = True) -> None:
        self.send_call_ids = send_call_ids

    def _call_id(self, call_id: str) -> str | None:
        if not self.send_call_ids or call_id.startswith(SYNTHETIC_CALL_ID_PREFIX):
            return None
        return call_id

    def _model_content(self, message: Message) -> Content | None:
        parts = _parts(message.get("content"))
        signature = message.get("gemini_thought_signature")
        if signature:
            _with_signature(parts, signature)
        for call in message.get("tool_calls") or ():
            function_call: dict[str, Any] = {"args": _parse_arguments(call)}
            call_id = self._call_id(call["id"])
            if call_id is not None:
                function_call["id"] = call_id
            function_call["name"] = call["function"]["name"]
            part: dict[str, Any] = {"function_call": function_call}
            if "gemini_thought_signature" in call:
                part["thought_signature"] = call["gemini_thought_signature"]
            parts.append(part)
        return {"parts": parts, "role": "model"} if parts else None

    def _user_content(self, message: Message) -> Content | None:
        parts = _parts(message.get("content"))
        return {"parts": parts, "role": "user"} if parts else None

    def _tool_content(self, message: Message, name: str) -> Content:
        response: dict[str, Any] = {}
        call_id = self._call_id(message["tool_call_id"])
        if call_id is not None:
            response["id"] = call_id
        response["name"] = name
        response["response"] = _response_value(message.get("content"))
        return {"parts": [{"function_response": response}], "role": "user"}

    def _tool_result(
        self, message: Message, names: dict[str, str], cache: ConversionCache
    ) -> Content:
        call_id = message["tool_call_id"]
        name = names.get(call_id) or message.get("name")
        if not name:
            raise _Unconvertible(
                f"tool result for call {call_id!r} has no matching tool call earlier in the "
                "history, and Gemini needs the called function's name; repair the history "
                "with ensure_valid_history() or give the result a 'name'"
            )
        result = cache.convert(message, lambda m: self._tool_content(m, name))
        if result["parts"][0]["function_response"]["name"] != name:
            result = self._tool_content(message, name)  # the same object answers another call
        return result

    def _contents(
        self, messages: Sequence[Message], system: list[Any], cache: ConversionCache
    ) -> list[Content]:
        """Convert the history, hoisting system messages and merging same-role neighbours."""
        convert = cache.convert
        model_content, user_content = self._model_content, self._user_content
        names: dict[str, str] = {}  # call id -> function name, for naming the results
        contents: list[Content] = []
        groups: list[list[Content]] = []  # the converted contents each output content holds
        last_role = ""
        for index, message in enumerate(messages):
            role = message["role"]
            content: Content | None
            try:
                if role == "tool":
                    content = self._tool_result(message, names, cache)
                elif role == "assistant":
                    content = convert(message, model_content)
                    for call in message.get("tool_calls") or ():
                        names[call["id"]] = call["function"]["name"]
                elif role == "system":
                    system.extend(convert(message, _system_parts))
                    continue
                else:
                    content = convert(message, user_content)
            except _Unconvertible as exc:
                raise CompileError(str(exc), index=index) from None
            if content is None:
                continue
            if content["role"] != last_role:
                contents.append(content)
                groups.append([content])
                last_role = content["role"]
                continue
            groups[-1].append(content)
        for index, group in enumerate(groups):
            if len(group) > 1:
                contents[index] = _merged(group, cache)
        return contents

    def compile(self, request: AdapterInput) -> dict[str, Any]:
        cache = request.cache if request.cache is not None else ConversionCache()
        system = [part for m in request.system for part in cache.convert(m, _system_parts)]
        contents = self._contents(request.messages, system, cache)
        prefill = _trailing_model_text(contents) + (request.prefill or "")
        if not contents:
            contents.append({"parts": [{"text": prompts.CONVERSATION_STARTS}], "role": "user"})
        if prefill:
            _append_instruction(contents, system, prompts.prefill_instruction(prefill))
        config: dict[str, Any] = {}
        if system:
            config["system_instruction"] = {"parts": system}
        if request.tools:
            declarations = [_declaration(tool) for tool in request.tools]
            config["tools"] = [{"function_declarations": declarations}]
        return {"config": config, "contents": contents}


class _Merge:
    """A content merged from several converted contents, and the contents it was built from."""

    __slots__ = ("group", "wire")

    def __init__(self) -> None:
        self.group: tuple[Content, ...] = ()
        self.wire: Content = {"parts": [], "role": ""}


def _merged(group: list[Content], cache: ConversionCache) -> Content:
    """Same-role neighbours as one content, the same object while they are the same objects
    (what memoises by identity, token counts and the cache ledger, then skips it). Keyed by the
    first content's parts list, an object only that converted content holds."""
    merge: _Merge = cache.convert(group[0]["parts"], lambda _: _Merge())
    if len(merge.group) != len(group) or any(
        a is not b for a, b in zip(merge.group, group, strict=True)
    ):
        merge.group = tuple(group)
        merge.wire = {"parts": [p for c in group for p in c["parts"]], "role": group[0]["role"]}
    return merge.wire


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
