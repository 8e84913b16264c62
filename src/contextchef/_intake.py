"""Message intake: the private strict-JSON copy the chef keeps of each host message, made by two
paths that read one schema (`messages.MESSAGE_SCHEMA`).

- The reference path, `reference_intake`: `validate_message` (the schema's validator), then
  `strict_json`. It takes any `Mapping`, sequence or subclass, and names every fault exactly.
- The fast path, `fast_intake`: for a message made of exact built-in types (`dict`, `list`,
  `str`, `int`, `float`, `bool`, None), the same copy in one walk that checks the schema's rules
  as it copies, with no ABC checks. `fast_intake_for` builds it from the schema once, at import:
  a closure per rule, composed (no source text, nothing `eval`-ed, no cache). Anything else (a
  fault, a tuple, a `Mapping` or `str` subclass, a huge integer, a cycle) raises `Unusual`, and
  `intake_message` reruns the reference path, which gives the exact result or error. The fast
  path never runs host code: it touches exact built-in types only.
- A history (`intake_messages`) is first offered, in batches, to `_intake_core.batch_intake`: the
  same schema compiled into a native validator that copies the common shapes and hands back
  every message it cannot vouch for, which then takes the paths above.

How the fast path reads a rule: a `Record` copies the dict with sorted keys; while every value is
a string or None and no field whose rule says more than "any string or None" is present, the
copy is the answer (after the required scalar fields' checks); otherwise each field's closure
checks and copies its value, and keys the record does not name are copied as strict JSON.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, cast

from contextchef._fastcopy import Unusual, exact_json, sorted_copy
from contextchef._hosttext import all_encodable, encodable, find_surrogate
from contextchef._intake_core import BATCH, batch_intake
from contextchef._jsonvalue import MAX_DEPTH, NotJson, strict_json
from contextchef._schema import (
    AnyOf,
    Attachment,
    Flag,
    Forbidden,
    Json,
    ListOf,
    MessageSchema,
    Nullable,
    OneOf,
    Record,
    Rule,
    Str,
    Tagged,
    dict_like,
)
from contextchef.errors import MessageError
from contextchef.messages import MESSAGE_SCHEMA, Message, validate_message

__all__ = [
    "Unusual",
    "fast_intake",
    "fast_intake_for",
    "intake_message",
    "intake_messages",
    "reference_intake",
]


_Fast = Callable[[Any], Any]


def intake_message(message: object, index: int | None = None) -> Message:
    """A private copy of a host message: validated against the schema, keys sorted, and strict
    JSON all through (`strict_json`: no cycle, no nesting beyond `MAX_DEPTH`, string keys, no
    NaN or infinity, no unprintable integer, no set or foreign object), else `MessageError`
    naming the index and the field; a string (or key) holding a lone surrogate is refused the
    same way (it could never be sent). `fast_intake` when it can, else the reference path."""
    try:
        copy = fast_intake(message)
    except (Unusual, RecursionError):
        return reference_intake(message, index)
    if not encodable(copy):
        _refuse_surrogate(copy, index)
    return cast(Message, copy)


def intake_messages(messages: Sequence[object], start: int = 0) -> list[Message]:
    """`[intake_message(m, start + at) for at, m in enumerate(messages)]`, with the same result
    or the same (first) error. Batches go through `_intake_core.batch_intake` first (the common
    shapes copied in native code); what it hands back takes the one-message path, and the
    lone-surrogate check is made once over all the copies when any did (`all_encodable`: a few
    native encodings, not a Python walk of every message)."""
    given = messages if type(messages) is list else list(messages)
    copies: list[Any] = []
    walked = False  # a copy made by the one-message path, its strings not yet checked
    for first in range(0, len(given), BATCH):
        batch = given[first : first + BATCH]
        for at, (message, copy) in enumerate(zip(batch, batch_intake(batch), strict=True), first):
            if copy is message:
                walked = True
                try:
                    try:
                        copy = fast_intake(message)
                    except (Unusual, RecursionError):
                        copy = reference_intake(message, start + at)
                except Exception:
                    _check_text(copies, start)  # an earlier message's error comes first
                    raise
            copies.append(copy)
    if walked:
        _check_text(copies, start)
    return copies


def _check_text(copies: list[Any], start: int) -> None:
    """`MessageError` at the first of `copies` (the first at index `start`) holding a lone
    surrogate, if one does."""
    if not all_encodable(copies):
        for at, copy in enumerate(copies):
            if not encodable(copy):
                _refuse_surrogate(copy, start + at)


def reference_intake(message: object, index: int | None = None) -> Message:
    """`intake_message` by the reference path: `validate_message`, then `strict_json`, then
    the check that every string encodes as UTF-8 (no lone surrogate)."""
    checked = validate_message(message, index)
    try:
        copy: Message = strict_json(checked)
    except NotJson as exc:
        problem, field = exc.describe("the message"), exc.where() or None
        raise MessageError(problem, index=index, field=field) from None
    if not encodable(copy):
        _refuse_surrogate(copy, index)
    return copy


def _refuse_surrogate(copy: object, index: int | None) -> None:
    """Raise `MessageError` at the first string of `copy` holding a lone surrogate."""
    found = find_surrogate(copy)
    if found is not None:
        path, problem = found
        where = NotJson(problem, path)
        raise MessageError(where.describe("the message"), index=index, field=where.where() or None)


def fast_intake_for(schema: MessageSchema) -> _Fast:
    """The fast path for `schema`: a message's copy, or `Unusual`."""
    roles = {role: _record(rule, 0, trusted=True) for role, rule in schema.roles.items()}

    def intake(message: Any) -> Any:
        if type(message) is not dict:
            raise Unusual
        role = message.get("role")
        if type(role) is not str:
            raise Unusual
        by_role = roles.get(role)
        if by_role is None:
            raise Unusual
        return by_role(message)

    return intake


def _fast(rule: Rule, depth: int) -> _Fast:
    """The check-and-copy of `rule` for a value `depth` levels inside the message."""
    if isinstance(rule, Str):
        return _str(rule)
    if isinstance(rule, Flag):
        return _flag
    if isinstance(rule, OneOf):
        return _one_of(frozenset(value for value in rule.values if type(value) is str))
    if isinstance(rule, Forbidden):
        return _none
    if isinstance(rule, Nullable):
        return _nullable(_fast(rule.rule, depth), _any_text(rule.rule))
    if isinstance(rule, ListOf):
        return _list_of(_fast(rule.item, depth + 1))
    if isinstance(rule, Record):
        return _record(rule, depth)
    if isinstance(rule, Attachment):
        return _attachment(rule.sources, MAX_DEPTH - depth)
    if isinstance(rule, AnyOf):
        return _any_of(rule, depth)
    if isinstance(rule, Tagged):
        return _tagged(rule, depth)
    return _json(MAX_DEPTH - depth)


def _any_text(rule: Rule) -> bool:
    """Whether `rule` accepts every string as it is (so a string needs no call)."""
    if isinstance(rule, Str):
        return not rule.nonempty and rule.problem is None
    if isinstance(rule, Nullable):
        return _any_text(rule.rule)
    if isinstance(rule, AnyOf):
        return any(_any_text(option) for option in rule.options)
    return isinstance(rule, Json)


def _plain(rule: Rule) -> bool:
    """Whether `rule` accepts every string and None as they are."""
    return isinstance(rule, Json) or (isinstance(rule, Nullable) and _any_text(rule.rule))


def _record(rule: Record, depth: int, *, trusted: bool = False) -> _Fast:
    """A dict's sorted copy with its fields' rules applied; `trusted`: the caller has checked
    that it is a dict."""
    budget = MAX_DEPTH - depth - 1  # for the values of keys the record does not name
    fields = [f for f in rule.fields if not isinstance(f.rule, Json)]
    if not fields:
        return _open(budget + 1)
    # Required strings are checked after the copy, inline, whatever their value; other required
    # scalars by their closure. Required containers (never a string or None) must be present.
    strings = tuple(
        (f.key, f.rule.nonempty, f.rule.problem)
        for f in fields
        if f.required and isinstance(f.rule, Str)
    )
    scalars = tuple(
        (f.key, _fast(f.rule, depth + 1))
        for f in fields
        if f.required and isinstance(f.rule, Flag | OneOf)
    )
    later = {key for key, *_ in strings} | {key for key, _ in scalars}
    present = frozenset(f.key for f in fields if f.required and f.key not in later)
    checks = {f.key: _fast(f.rule, depth + 1) for f in fields if f.key not in later}
    # Fields whose rule says more than "any string or None": present, they need their check
    # even when every value of the record is a string or None.
    lane = frozenset(f.key for f in fields if f.key in checks and not _plain(f.rule))

    # the first two required strings and the first required container, inline: most records
    # have no more (a tool call: id and function; its function: name and arguments)
    none = ("", False, None)
    (key1, nonempty1, problem1), (key2, nonempty2, problem2) = (*strings, none, none)[:2]
    more_strings = strings[2:]
    container = next(iter(present), "")
    more_present = len(present) > 1
    few = tuple((key, checks[key]) for key in lane) if len(lane) <= 2 else ()

    def record(value: Any) -> Any:
        if not trusted and type(value) is not dict:
            raise Unusual
        out, odd = sorted_copy(value)
        if few:  # a lane of one or two keys: look them up
            for key, check in few:
                item = out.get(key, out)
                if item is not out:
                    odd -= type(item) is not str and item is not None
                    out[key] = check(item)
        elif lane and not lane.isdisjoint(out):  # a long one (a message's): what it shares
            for key in lane.intersection(out):
                item = out[key]
                odd -= type(item) is not str and item is not None
                out[key] = checks[key](item)
        if odd > 0:  # values neither a string nor None, under keys outside the lane
            for key, item in out.items():  # (replacing values while iterating is safe)
                kind = type(item)
                if kind is str or item is None or key in lane:
                    continue
                field = checks.get(key)
                if field is not None:
                    out[key] = field(item)
                elif kind is not bool:
                    out[key] = exact_json(item, budget)
        if key1:
            item = out.get(key1)
            if type(item) is not str or (nonempty1 and not item):
                raise Unusual
            if problem1 is not None and problem1(item) is not None:
                raise Unusual
            if key2:
                item = out.get(key2)
                if type(item) is not str or (nonempty2 and not item):
                    raise Unusual
                if problem2 is not None and problem2(item) is not None:
                    raise Unusual
                for key, nonempty, problem in more_strings:
                    item = out.get(key)
                    if type(item) is not str or (nonempty and not item):
                        raise Unusual
                    if problem is not None and problem(item) is not None:
                        raise Unusual
        if scalars:
            for key, check in scalars:
                check(out.get(key))
        if container and (container not in out or (more_present and not out.keys() >= present)):
            raise Unusual
        return out

    return record


def _str(rule: Str) -> _Fast:
    nonempty, problem = rule.nonempty, rule.problem

    def text(value: Any) -> Any:
        if type(value) is not str or (nonempty and not value):
            raise Unusual
        if problem is not None and problem(value) is not None:
            raise Unusual
        return value

    return text


def _flag(value: Any) -> Any:
    if type(value) is not bool:
        raise Unusual
    return value


def _none(value: Any) -> Any:
    if value is not None:
        raise Unusual
    return None


def _one_of(values: frozenset[str]) -> _Fast:
    def one_of(value: Any) -> Any:
        if type(value) is not str or value not in values:
            raise Unusual
        return value

    return one_of


def _nullable(inner: _Fast, any_text: bool) -> _Fast:
    def nullable(value: Any) -> Any:
        if value is None or (any_text and type(value) is str):
            return value
        return inner(value)

    return nullable


def _list_of(item: _Fast) -> _Fast:
    def list_of(value: Any) -> Any:
        if type(value) is not list:
            raise Unusual
        return [item(each) for each in value]

    return list_of


def _any_of(rule: AnyOf, depth: int) -> _Fast:
    by_type: dict[type, _Fast] = {}
    for option in rule.options:
        kind = dict if dict_like(option) else list if isinstance(option, ListOf) else str
        by_type.setdefault(kind, _fast(option, depth))

    def any_of(value: Any) -> Any:
        check = by_type.get(type(value))
        if check is None:
            raise Unusual
        return check(value)

    return any_of


def _tagged(rule: Tagged, depth: int) -> _Fast:
    tag = rule.tag
    variants = {name: _fast(variant, depth) for name, variant in rule.variants.items()}

    def tagged(value: Any) -> Any:
        if type(value) is not dict:
            raise Unusual
        kind = value.get(tag)
        check = variants.get(kind) if type(kind) is str else None
        if check is None:
            raise Unusual
        return check(value)

    return tagged


def _attachment(sources: tuple[str, ...], budget: int) -> _Fast:
    def attachment(value: Any) -> Any:
        if type(value) is not dict:
            raise Unusual
        found = [key for key in sources if type(value.get(key)) is str]
        if len(found) != 1 or (found[0] == "data" and type(value.get("media_type")) is not str):
            raise Unusual
        return exact_json(value, budget)

    return attachment


def _json(budget: int) -> _Fast:
    def json_value(value: Any) -> Any:
        return exact_json(value, budget)

    return json_value


def _open(budget: int) -> _Fast:
    """A record that names no field: any dict of strict JSON."""

    def open_record(value: Any) -> Any:
        if type(value) is not dict:
            raise Unusual
        return exact_json(value, budget)

    return open_record


fast_intake = fast_intake_for(MESSAGE_SCHEMA)
"""The fast path of the message schema: `reference_intake`'s copy, or `Unusual`."""
