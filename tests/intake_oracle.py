"""A frozen copy of message intake as it was before the one-pass fast path (commit 6634caa) and
before the message schema (issue 22): `validate_message` (messages.py) then `strict_json`
(_jsonvalue.py), verbatim.

A regression fixture, no longer the oracle: the differential tests compare the fast path against
the schema-driven reference path (`_intake.reference_intake`), and the reference path against
this copy, so the schema keeps every sentence, field and order of errors users saw before it.

Changed since, deliberately (issue 23, host input typed): a role or part type that is not a
string is an unknown one (it used to raise `TypeError: unhashable`), a value an error shows is
`_hosttext.shown` (an integer too long to print no longer raises `ValueError`), tool-call
arguments must be a JSON object ("" means none), and a lone surrogate anywhere is refused."""

# ruff: noqa
from __future__ import annotations

import json
import re
import sys
from collections.abc import Mapping
from typing import Any

from contextchef._hosttext import find_surrogate, shown
from contextchef._jsonvalue import MAX_DEPTH, NotJson
from contextchef.errors import MessageError

ROLES: frozenset[str] = frozenset(("system", "user", "assistant", "tool"))


_PART_TYPES = frozenset(("text", "image", "document"))
_FOREIGN_PART_HINT = {
    "image_url": "an OpenAI image_url part; convert the history with from_openai()",
    "input_text": "an OpenAI Responses part; convert the history with from_openai_responses()",
    "tool_use": "an Anthropic block; convert the history with from_anthropic()",
    "tool_result": "an Anthropic block; convert the history with from_anthropic()",
    "file": "an OpenAI file part; convert the history with from_openai()",
}


def _fail(message: str, index: int | None, field: str) -> MessageError:
    return MessageError(message, index=index, field=field)


def _validate_part(part: object, index: int | None, at: int) -> None:
    field = f"content[{at}]"
    if not isinstance(part, Mapping):
        raise _fail(f"a content part must be a dict, got {type(part).__name__}", index, field)
    kind = part.get("type")
    if not isinstance(kind, str) or kind not in _PART_TYPES:
        hint = _FOREIGN_PART_HINT.get(kind) if isinstance(kind, str) else None
        detail = f" ({hint})" if hint else ""
        raise _fail(
            f"unknown content part type {shown(kind)}{detail}; use 'text', 'image' or 'document'",
            index,
            field,
        )
    if kind == "text":
        if not isinstance(part.get("text"), str):
            raise _fail("a text part needs a string 'text'", index, field)
        return
    sources = [key for key in ("data", "url", "text") if isinstance(part.get(key), str)]
    if kind == "image" and "text" in sources:
        sources.remove("text")
    if len(sources) != 1:
        allowed = "'data' or 'url'" if kind == "image" else "'data', 'url' or 'text'"
        raise _fail(f"an {kind} part needs exactly one of {allowed}", index, field)
    if sources[0] == "data" and not isinstance(part.get("media_type"), str):
        raise _fail(f"an {kind} part with base64 'data' needs a 'media_type'", index, field)


def _validate_tool_calls(calls: object, index: int | None) -> None:
    if not isinstance(calls, list):
        raise _fail("tool_calls must be a list", index, "tool_calls")
    for at, call in enumerate(calls):
        field = f"tool_calls[{at}]"
        if not isinstance(call, Mapping):
            raise _fail("a tool call must be a dict", index, field)
        if not isinstance(call.get("id"), str) or not call["id"]:
            raise _fail("a tool call needs a non-empty string 'id'", index, field + ".id")
        function = call.get("function")
        if not isinstance(function, Mapping):
            raise _fail("a tool call needs a 'function' dict", index, field + ".function")
        if not isinstance(function.get("name"), str) or not function["name"]:
            raise _fail("a tool call needs a function name", index, field + ".function.name")
        if not isinstance(function.get("arguments"), str):
            raise _fail(
                "function arguments must be a JSON string (json.dumps the dict)",
                index,
                field + ".function.arguments",
            )
        _check_arguments(function["arguments"], index, field + ".function.arguments")


_EXPONENT = re.compile(r"[eE]\+?\d\d\d")
"""An exponent of three digits or more: the only way a JSON number overflows to infinity."""


class _NotFinite(ValueError):
    """A NaN or infinity met while parsing arguments."""


def _refuse_constant(name: str) -> float:
    raise _NotFinite(name)


def _finite_float(text: str) -> float:
    value = float(text)
    if value - value != 0.0:
        raise _NotFinite(text)
    return value


_STRICT_DECODER = json.JSONDecoder(parse_constant=_refuse_constant, parse_float=_finite_float)


def _check_arguments(raw: str, index: int | None, field: str) -> None:
    """Refuse arguments that are not strict JSON (the frozen check below), then (issue 23)
    arguments that are not a JSON object at all; "" or blanks mean no arguments."""
    if not raw or raw.isspace():
        return
    problem = _strict_problem(raw)
    if problem is None:
        problem = _object_problem(raw)
    if problem is not None:
        raise _fail(problem, index, field)


_KINDS = {list: "array", str: "string", int: "number", float: "number", bool: "boolean"}


def _object_problem(raw: str) -> str | None:
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        return (
            f"the arguments are not valid JSON ({exc.msg} at character {exc.pos}); send one "
            "JSON object as a string (json.dumps the dict)"
        )
    if type(value) is not dict:
        return f"the arguments must be a JSON object, got a JSON {_KINDS.get(type(value), 'null')}"
    found = find_surrogate(value)
    return f"the arguments JSON {found[1]}" if found is not None else None


def _strict_problem(raw: str) -> str | None:
    """Why arguments that parse as JSON are not strict JSON (NaN, Infinity, 1e999, an integer
    beyond Python's int-to-str limit, nesting beyond `MAX_DEPTH`), else None.

    A short string is parsed only when it could hold such a value (two substring tests and a
    regex); a long one is parsed outright, which costs less than scanning it with a regex."""
    short = len(raw) <= 2 * MAX_DEPTH  # too short to nest deeper, or to hold a 640-digit int
    if short and "NaN" not in raw and "Infinity" not in raw and not _EXPONENT.search(raw):
        return None
    try:
        value = _STRICT_DECODER.decode(raw)
        if raw.count("[") + raw.count("{") > MAX_DEPTH:
            strict_json(value)
    except json.JSONDecodeError:
        return None
    except _NotFinite as exc:
        return f"the arguments JSON holds {exc}, a number strict JSON does not have"
    except NotJson as exc:
        return exc.describe("the arguments JSON", "the arguments JSON")
    except RecursionError:
        return f"the arguments JSON is nested more than {MAX_DEPTH} levels deep"
    except ValueError as exc:  # int(): an integer longer than the int-to-str limit
        return f"the arguments JSON holds a number Python cannot read: {exc}"
    return None


def validate_message(message: object, index: int | None = None) -> Any:
    """Check one message against the IR and return it typed; raise `MessageError` if malformed."""
    if not isinstance(message, Mapping):
        hint = (
            "; convert SDK objects with from_openai(), from_anthropic(), from_gemini() or "
            "from_openai_responses()"
            if callable(getattr(message, "model_dump", None))
            else ""
        )
        raise MessageError(
            f"a message must be a dict, got {type(message).__name__}{hint}", index=index
        )
    role = message.get("role")
    if not isinstance(role, str) or role not in ROLES:
        raise _fail(
            f"unknown role {shown(role)}; use 'system', 'user', 'assistant' or 'tool'",
            index,
            "role",
        )
    content = message.get("content")
    if isinstance(content, list):
        for at, part in enumerate(content):
            _validate_part(part, index, at)
    elif content is not None and not isinstance(content, str):
        raise _fail(
            f"content must be a string, a list of parts or None, got {type(content).__name__}",
            index,
            "content",
        )
    if role == "tool":
        call_id = message.get("tool_call_id")
        if not isinstance(call_id, str) or not call_id:
            raise _fail("a tool result needs a non-empty 'tool_call_id'", index, "tool_call_id")
    if "tool_calls" in message and message["tool_calls"] is not None:
        if role != "assistant":
            raise _fail("only assistant messages carry tool_calls", index, "tool_calls")
        _validate_tool_calls(message["tool_calls"], index)
    thinking = message.get("thinking")
    if thinking is not None and (
        not isinstance(thinking, Mapping) or not isinstance(thinking.get("thinking"), str)
    ):
        raise _fail("thinking must be a dict with a string 'thinking'", index, "thinking")
    redacted = message.get("redacted_thinking")
    if redacted is not None and (
        not isinstance(redacted, list)
        or not all(isinstance(r, Mapping) and isinstance(r.get("data"), str) for r in redacted)
    ):
        raise _fail("redacted_thinking must be a list of {'data': str}", index, "redacted_thinking")
    for flag in ("pinned", "_cache_breakpoint"):
        if flag in message and type(message[flag]) is not bool:
            raise _fail(f"{flag} must be True or False, got {shown(message[flag])}", index, flag)
    _validate_passthrough(message, index)
    return message


def _validate_passthrough(message: Mapping[str, Any], index: int | None) -> None:
    reasoning = message.get("openai_reasoning")
    if reasoning is not None and (
        not isinstance(reasoning, list) or not all(isinstance(r, Mapping) for r in reasoning)
    ):
        raise _fail("openai_reasoning must be a list of item dicts", index, "openai_reasoning")
    phase = message.get("openai_phase")
    if phase is not None and phase not in ("commentary", "final_answer"):
        raise _fail("openai_phase must be 'commentary' or 'final_answer'", index, "openai_phase")
    signature = message.get("gemini_thought_signature")
    if signature is not None and not isinstance(signature, str):
        raise _fail(
            "gemini_thought_signature must be a base64 string", index, "gemini_thought_signature"
        )
    compaction = message.get("anthropic_compaction")
    if compaction is not None and (
        not isinstance(compaction, Mapping) or compaction.get("type") != "compaction"
    ):
        raise _fail(
            "anthropic_compaction must be an Anthropic block dict with type 'compaction'",
            index,
            "anthropic_compaction",
        )
    for at, call in enumerate(message.get("tool_calls") or ()):
        signature = call.get("gemini_thought_signature")
        if signature is not None and not isinstance(signature, str):
            field = f"tool_calls[{at}].gemini_thought_signature"
            raise _fail("gemini_thought_signature must be a base64 string", index, field)


class _Fault(Exception):
    """Raised by the fast walk; `strict_json` then locates the fault with the slow one."""


def strict_json(value: Any) -> Any:
    """`sorted_keys` for host input, refusing anything that is not strict JSON.

    Accepts dicts (any `Mapping`) with string keys, lists and tuples, strings, booleans, None,
    finite floats and integers `str()` can print; returns a deep copy with sorted keys (tuples
    become lists). Refuses (`NotJson`, with the path of the first fault) non-string keys, NaN and
    infinities, integers beyond the interpreter's int-to-str limit, sets (their order is not the
    host's) and any other type, and nesting deeper than `MAX_DEPTH` (which is how a value that
    contains itself ends). One recursive pass, the copy itself: the checks ride on it.
    """
    try:
        return _strict(value, MAX_DEPTH)
    except (_Fault, RecursionError):
        found = _locate(value, [], MAX_DEPTH, set())
    raise found if found.reason else NotJson(f"is nested more than {MAX_DEPTH} levels deep")


def _strict(value: Any, budget: int) -> Any:
    kind = type(value)
    if kind is str or kind is bool or value is None:
        return value
    if kind is dict:
        if not budget:
            raise _Fault
        for key in value:
            if type(key) is not str:
                if not all(isinstance(key, str) for key in value):
                    raise _Fault
                value = {str.__str__(key): item for key, item in value.items()}  # keys' data
                break
        budget -= 1
        return {key: _strict(value[key], budget) for key in sorted(value)}
    if kind is list or kind is tuple:
        if not budget:
            raise _Fault
        budget -= 1
        return [_strict(item, budget) for item in value]
    if kind is int:
        if value.bit_length() > _SAFE_INT_BITS and _unprintable(value):
            raise _Fault
        return value
    if kind is float:
        if value - value != 0.0:  # NaN and the infinities
            raise _Fault
        return value
    if isinstance(value, Mapping):
        return _strict(dict(value), budget)
    if isinstance(value, list | tuple):
        return _strict(list(value), budget)
    if isinstance(value, str):  # its data, as `json.dumps` writes it (never its `__str__`)
        return str.__str__(value)
    for base in (int, float):  # a subclass (an enum member…) as its plain JSON value
        if isinstance(value, base):
            return _strict(base(value), budget)
    raise _Fault


_SAFE_INT_BITS = 2000
"""Integers up to this many bits (about 600 digits) print under any int-to-str limit Python
accepts (at least 640 digits); longer ones are checked by printing them."""


def _unprintable(value: int) -> bool:
    try:
        str(value)
    except ValueError:
        return True
    return False


def _locate(value: Any, path: list[str | int], budget: int, open_: set[int]) -> NotJson:
    """The first fault `_strict` met, with its path (a slow walk, run only after a fault)."""
    kind = type(value)
    if isinstance(value, Mapping | list | tuple):
        if id(value) in open_:
            return NotJson("contains itself (a reference cycle)", path)
        if not budget:
            return NotJson(f"is nested more than {MAX_DEPTH} levels deep", path)
        open_.add(id(value))
        if isinstance(value, Mapping):
            for key in value:
                if not isinstance(key, str):
                    return NotJson(f"has the non-string key {key!r}; JSON keys are strings", path)
            items: list[tuple[str | int, Any]] = [(key, value[key]) for key in sorted(value)]
        else:
            items = list(enumerate(value))
        for step, item in items:
            found = _locate(item, [*path, step], budget - 1, open_)
            if found.reason:
                return found
        open_.discard(id(value))
        return NotJson("", path)
    if kind is int and _unprintable(value):
        return NotJson(
            f"is an integer of more than {sys.get_int_max_str_digits()} digits, beyond what "
            "Python prints (sys.set_int_max_str_digits)",
            path,
        )
    if kind is float and value - value != 0.0:
        return NotJson(f"is {value!r}; JSON has no NaN or infinity", path)
    if kind is set or kind is frozenset:
        return NotJson("is a set; pass a list (a set has no order of its own)", path)
    if kind in (str, bool, int, float) or value is None:
        return NotJson("", path)
    for base in (str, int, float):
        if isinstance(value, base):
            return _locate(base(value), path, budget, open_)
    return NotJson(
        f"is a {kind.__name__}; JSON values are dict, list, str, number, bool or None", path
    )


def oracle_intake(message: object, index: int | None = None) -> Any:
    """`intake_message` as it was: validate, then the strict sorted copy."""
    checked = validate_message(message, index)
    try:
        copy = strict_json(checked)
    except NotJson as exc:
        problem, field = exc.describe("the message"), exc.where() or None
        raise MessageError(problem, index=index, field=field) from None
    found = find_surrogate(copy)  # issue 23: a lone surrogate anywhere is refused
    if found is not None:
        where = NotJson(found[1], found[0])
        raise MessageError(where.describe("the message"), index=index, field=where.where() or None)
    return copy
