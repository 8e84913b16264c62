"""One-pass intake of a host message: validate while copying, for the common case only.

`fast_intake` accepts a message made of exact built-in types (`dict`, `list`, `str`, `int`,
`float`, `bool`, None) that `validate_message` would accept, and returns the same sorted-key
strict-JSON copy `strict_json` would make, in one walk with no ABC checks. Anything else (a
fault, a tuple, a `Mapping` or `str` subclass, a huge integer, a cycle) raises `Unusual`, and the
caller reruns the reference path (`validate_message`, then `strict_json`), which gives the exact
result or error. The fast path never runs host code: it touches exact built-in types only.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from contextchef._jsonvalue import MAX_DEPTH
from contextchef.messages import arguments_problem

__all__ = ["Unusual", "fast_intake"]


class Unusual(Exception):
    """The fast path declines this message; the reference path decides."""


_ROLES = frozenset(("system", "user", "assistant", "tool"))
_PHASES = frozenset(("commentary", "final_answer"))
_SAFE_INT_BITS = 2000  # as `_jsonvalue`: ints this short always print

# Nesting budgets as `strict_json` counts them: the message itself has MAX_DEPTH, each level of
# containers one less.
_IN_MESSAGE = MAX_DEPTH - 1  # a value of the message
_IN_LIST = MAX_DEPTH - 2  # an item of a list in the message: a content part, a tool call


_ONLY_STR = frozenset((str,)).issuperset
_ONLY_STR_OR_NONE = frozenset((str, type(None))).issuperset
_ONLY_SCALARS = frozenset((str, type(None), bool)).issuperset

_Copier = Callable[[dict[str, Any]], dict[str, Any]]
_COPIERS: dict[tuple[str, ...], _Copier] = {}
_MAX_SHAPES = 2048
_MAX_SHAPE_CHARS = 400


def _sorted_copy(value: dict[str, Any]) -> dict[str, Any]:
    """`{key: value[key] for key in sorted(value)}` for a dict whose keys are all exact `str`,
    by a copier compiled once per key order (a dict display: about 3x faster than sorting).

    Used for messages, tool calls, their functions and content parts, whose keys the IR names:
    a history holds a handful of key orders. Past `_MAX_SHAPES` of them, or for keys longer
    than `_MAX_SHAPE_CHARS` in all, this sorts as usual."""
    shape = tuple(value)
    copier = _COPIERS.get(shape)
    if copier is None:
        if len(_COPIERS) >= _MAX_SHAPES or sum(map(len, shape)) > _MAX_SHAPE_CHARS:
            return {key: value[key] for key in sorted(value)}
        copier = _COPIERS[shape] = _compile_copier(shape)
    return copier(value)


def _compile_copier(shape: tuple[str, ...]) -> _Copier:
    # Keys are exact strings, and `repr` of a string is always a string literal: the source
    # holds nothing but a dict display of literals and subscripts.
    items = ", ".join(f"{key!r}: value[{key!r}]" for key in sorted(shape))
    copier: _Copier = eval(f"lambda value: {{{items}}}")
    return copier


def fast_intake(message: Any) -> dict[str, Any]:
    """The private copy `strict_json(validate_message(message))` would return, or `Unusual`."""
    if type(message) is not dict or not _ONLY_STR(map(type, message)):
        raise Unusual
    out = _sorted_copy(message)
    role = out.get("role")
    if type(role) is not str or role not in _ROLES:
        raise Unusual
    if not (_ONLY_STR_OR_NONE(map(type, out.values())) and _CHECKED_KEYS.isdisjoint(out)):
        for key in list(out):  # a value that is not a string, or a key with rules of its own
            value = out[key]
            kind = type(value)
            if key in _CHECKED:
                out[key] = _CHECKED[key](value, role)
            elif key == "content":
                if kind is list:
                    out[key] = [_part(part) for part in value]
                elif kind is not str and value is not None:
                    raise Unusual
            elif kind is not str and value is not None and kind is not bool:
                out[key] = _exact(value, _IN_MESSAGE)
    if role == "tool":
        call_id = out.get("tool_call_id")
        if type(call_id) is not str or not call_id:
            raise Unusual
    return out


def _exact(value: Any, budget: int) -> Any:
    """`_jsonvalue._strict` restricted to exact built-in types (else `Unusual`)."""
    kind = type(value)
    if kind is dict:
        if not budget or not _ONLY_STR(map(type, value)):
            raise Unusual
        out = {key: value[key] for key in sorted(value)}  # host keys: not worth a copier
        if not _ONLY_SCALARS(map(type, out.values())):
            budget -= 1
            for key in list(out):
                out[key] = _exact(out[key], budget)
        return out
    if kind is list:
        if not budget:
            raise Unusual
        if _ONLY_SCALARS(map(type, value)):
            return value.copy()
        budget -= 1
        return [_exact(item, budget) for item in value]
    if kind is str or kind is bool or value is None:
        return value
    if kind is int:
        if value.bit_length() > _SAFE_INT_BITS:
            raise Unusual
        return value
    if kind is float and value - value == 0.0:  # not NaN nor an infinity
        return value
    raise Unusual


def _part(part: Any) -> Any:
    """A content part: `_validate_part`'s rules on exact types, then its copy."""
    if type(part) is not dict:
        raise Unusual
    kind = part.get("type")
    if kind == "text":
        if type(part.get("text")) is not str:
            raise Unusual
    elif kind == "image" or kind == "document":
        sources = [key for key in ("data", "url", "text") if type(part.get(key)) is str]
        if kind == "image" and "text" in sources:
            sources.remove("text")
        if len(sources) != 1:
            raise Unusual
        if sources[0] == "data" and type(part.get("media_type")) is not str:
            raise Unusual
    else:
        raise Unusual
    if _ONLY_STR(map(type, part)):
        copy = _sorted_copy(part)
        if _ONLY_SCALARS(map(type, copy.values())):
            return copy
    return _exact(part, _IN_LIST)


def _tool_calls(calls: Any, role: str) -> Any:
    if calls is None:
        return None
    if role != "assistant" or type(calls) is not list:
        raise Unusual
    return [_tool_call(call) for call in calls]


def _tool_call(call: Any) -> Any:
    """A tool call: `_validate_tool_calls`' rules on exact types, then its copy (the usual
    `{id, type, function: {name, arguments}}` built directly, without a walk)."""
    if type(call) is not dict or not _ONLY_STR(map(type, call)):
        raise Unusual
    call_id = call.get("id")
    function = call.get("function")
    if type(call_id) is not str or not call_id or type(function) is not dict:
        raise Unusual
    name = function.get("name")
    arguments = function.get("arguments")
    if type(name) is not str or not name or type(arguments) is not str:
        raise Unusual
    if not _ONLY_STR(map(type, function)) or arguments_problem(arguments) is not None:
        raise Unusual
    inner: dict[str, Any]
    if len(function) == 2:  # exactly the two strings just checked
        inner = {"arguments": arguments, "name": name}
    else:
        inner = _sorted_copy(function)
        if not _ONLY_SCALARS(map(type, inner.values())):
            return _checked_call(call)
    kind = call.get("type")
    if len(call) == 3 and type(kind) is str:  # exactly id, function and a string type
        return {"function": inner, "id": call_id, "type": kind}
    out = _sorted_copy(call)
    out["function"] = None
    if not _ONLY_SCALARS(map(type, out.values())):
        return _checked_call(call)
    signature = out.get("gemini_thought_signature")
    if signature is not None and type(signature) is not str:
        raise Unusual
    out["function"] = inner
    return out


def _checked_call(call: dict[str, Any]) -> Any:
    """A validated tool call holding nested values: its signature's rule, then the full walk."""
    signature = call.get("gemini_thought_signature")
    if signature is not None and type(signature) is not str:
        raise Unusual
    return _exact(call, _IN_LIST)


def _thinking(value: Any, role: str) -> Any:
    if value is None:
        return None
    if type(value) is not dict or type(value.get("thinking")) is not str:
        raise Unusual
    return _exact(value, _IN_MESSAGE)


def _dict_list(value: Any, role: str) -> Any:
    """`redacted_thinking` and `openai_reasoning`: None or a list of dicts."""
    if value is None:
        return None
    if type(value) is not list:
        raise Unusual
    for item in value:
        if type(item) is not dict:
            raise Unusual
    return _exact(value, _IN_MESSAGE)


def _redacted(value: Any, role: str) -> Any:
    copy = _dict_list(value, role)
    if copy is not None:
        for item in value:
            if type(item.get("data")) is not str:
                raise Unusual
    return copy


def _flag(value: Any, role: str) -> Any:
    if type(value) is not bool:
        raise Unusual
    return value


def _phase(value: Any, role: str) -> Any:
    if value is not None and (type(value) is not str or value not in _PHASES):
        raise Unusual
    return value


def _signature(value: Any, role: str) -> Any:
    if value is not None and type(value) is not str:
        raise Unusual
    return value


def _compaction(value: Any, role: str) -> Any:
    if value is None:
        return None
    if type(value) is not dict or value.get("type") != "compaction":
        raise Unusual
    return _exact(value, _IN_MESSAGE)


_CHECKED = {
    "tool_calls": _tool_calls,
    "thinking": _thinking,
    "redacted_thinking": _redacted,
    "openai_reasoning": _dict_list,
    "pinned": _flag,
    "_cache_breakpoint": _flag,
    "openai_phase": _phase,
    "gemini_thought_signature": _signature,
    "anthropic_compaction": _compaction,
}
"""The keys `validate_message` constrains beyond strict JSON, with their check-and-copy."""
_CHECKED_KEYS = frozenset(_CHECKED)
