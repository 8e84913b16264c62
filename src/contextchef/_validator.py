"""The reference reader of the message schema: `validator_for` turns a `MessageSchema` into the
function `validate_message` calls.

It accepts what the rules allow in any `Mapping`, `list` or `str` subclass (the fast path of
`_intake` takes exact built-in types only and leaves the rest to this one), and raises
`MessageError` with the schema's sentence at the field of the nearest rule that has one (see
`_schema` for what each rule means). Built once per schema, at import, by composing closures: a
check per rule, and a second, shorter walk for the `deferred` fields. A failure travels up as
`_Invalid`, collecting its path on the way, so a valid message pays for no path at all.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from contextchef._hosttext import shown
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

__all__ = ["Validator", "validator_for"]


Validator = Callable[[object, "int | None"], None]
_Check = Callable[[Any], None]
_ABSENT: Any = object()


class _Invalid(Exception):
    """A rule failed: `message` once a rule with a sentence claimed the failure, `steps` the
    keys and indexes from that rule down to the value that failed."""

    def __init__(self, message: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.steps: list[str | int] = []


class _Shown:
    """A host value in an error template: `{value!r}` shows `shown(value)`, which never raises
    (an integer too long to print) and is cut short."""

    __slots__ = ("value",)

    def __init__(self, value: object) -> None:
        self.value = value

    def __repr__(self) -> str:
        return shown(self.value)

    __str__ = __repr__


def _say(error: str, value: object) -> str:
    return error.format(type=type(value).__name__, value=_Shown(value))


def _fail(error: str | None, value: object) -> _Invalid:
    return _Invalid(_say(error, value) if error is not None else None)


def _claim(exc: _Invalid, error: str | None, value: object, step: str | int | None) -> None:
    """Record `step` on the way up; a rule with a sentence claims a failure nobody claimed."""
    if step is not None:
        exc.steps.insert(0, step)
    if exc.message is None and error is not None:
        exc.message = _say(error, value)
        exc.steps.clear()


def _field(steps: list[str | int]) -> str:
    text = ""
    for step in steps:
        text += f"[{step}]" if isinstance(step, int) else (f".{step}" if text else step)
    return text


def validator_for(schema: MessageSchema) -> Validator:
    """The reference check of one message against `schema`: returns if it is valid, else raises
    `MessageError` naming the index, the field and the schema's sentence."""
    roles = {
        role: (_record(rule, False, False), _record(rule, True, False))
        for role, rule in schema.roles.items()
    }
    names = frozenset(roles)  # `in` a frozenset, as always: a set is looked up, a list raises

    def validate(message: object, index: int | None) -> None:
        if type(message) is not dict and not isinstance(message, Mapping):
            hint = schema.sdk_hint if callable(getattr(message, "model_dump", None)) else ""
            text = schema.not_a_dict.format(type=type(message).__name__, hint=hint)
            raise MessageError(text, index=index)
        role = message.get("role")
        if not isinstance(role, str) or role not in names:  # a list or dict does not hash
            raise MessageError(_say(schema.role_error, role), index=index, field="role")
        first, then = roles[role]
        try:
            if first is not None:
                first(message)
            if then is not None:
                then(message)
        except _Invalid as exc:
            field = _field(exc.steps)
            raise MessageError(exc.message or "", index=index, field=field or None) from None

    return validate


def _checker(rule: Rule, deferred: bool, claimed: bool) -> _Check | None:
    """A function checking `rule`, or None if it has nothing to check. `deferred`: check only
    the deferred fields (inside values the first pass found sound). `claimed`: an enclosing rule
    has a sentence for failures that this one has none for."""
    error = getattr(rule, "error", None)
    covered = claimed or error is not None
    if isinstance(rule, Json):
        return None
    if not covered and not isinstance(rule, Nullable):
        raise ValueError(f"message schema: {rule!r} can fail with no sentence to say why")
    if isinstance(rule, Record):
        return _record(rule, deferred, covered)
    if isinstance(rule, ListOf):
        return _list_of(rule, deferred, covered)
    if isinstance(rule, Nullable):
        return _nullable(rule, deferred, covered)
    if isinstance(rule, AnyOf):
        return _any_of(rule, deferred, covered)
    if isinstance(rule, Tagged):
        return _tagged(rule, deferred)
    return None if deferred else _leaf(rule)


def _leaf(rule: Str | Flag | OneOf | Forbidden | Attachment) -> _Check:
    error = rule.error
    if isinstance(rule, Str):
        nonempty, problem = rule.nonempty, rule.problem

        def text(value: Any) -> None:
            if not isinstance(value, str) or (nonempty and not value):
                raise _fail(error, value)
            if problem is not None and (found := problem(value)) is not None:
                raise _Invalid(found)

        return text
    if isinstance(rule, Flag):

        def flag(value: Any) -> None:
            if type(value) is not bool:
                raise _fail(error, value)

        return flag
    if isinstance(rule, OneOf):
        values = rule.values

        def one_of(value: Any) -> None:
            if value not in values:
                raise _fail(error, value)

        return one_of
    if isinstance(rule, Forbidden):

        def forbidden(value: Any) -> None:
            if value is not None:
                raise _fail(error, value)

        return forbidden
    return _attachment(rule)


def _attachment(rule: Attachment) -> _Check:
    sources, error, media_type_error = rule.sources, rule.error, rule.media_type_error

    def attachment(value: Any) -> None:
        found = [key for key in sources if isinstance(value.get(key), str)]
        if len(found) != 1:
            raise _fail(error, value)
        if found[0] == "data" and not isinstance(value.get("media_type"), str):
            raise _fail(media_type_error, value)

    return attachment


def _record(rule: Record, deferred: bool, claimed: bool) -> _Check | None:
    error = rule.error
    fields: list[tuple[str, bool, _Check]] = []
    for item in rule.fields:
        if deferred and item.deferred:  # checked whole now: the first pass skipped it
            check = _checker(item.rule, False, claimed)
        elif item.deferred:
            check = None
        else:
            check = _checker(item.rule, deferred, claimed)
        if check is not None:
            fields.append((item.key, item.required, check))
    if deferred and not fields:
        return None
    by_key = {key: (required, check) for key, required, check in fields}
    order = {key: at for at, (key, _, _) in enumerate(fields)}.__getitem__
    named = frozenset(by_key)
    required_keys = frozenset(key for key, required, _ in fields if required)
    sparse = len(fields) > 4  # a message: a handful of its many fields (sorted: in order)

    def record(value: Any) -> None:
        if sparse and type(value) is dict:  # a dict says which keys it has: visit only those
            todo: Any = named.intersection(value)
            if required_keys:
                todo |= required_keys
            if len(todo) == 2:
                first, second = todo
                todo = (first, second) if order(first) < order(second) else (second, first)
            elif len(todo) > 2:
                todo = sorted(todo, key=order)
            for key in todo:
                required, check = by_key[key]
                try:
                    check(value.get(key))
                except _Invalid as exc:
                    _claim(exc, error, value, key)
                    raise
            return
        if not deferred and not isinstance(value, Mapping):
            raise _fail(error, value)
        for key, required, check in fields:
            item = value.get(key, _ABSENT)
            if item is _ABSENT:
                if not required:
                    continue
                item = None
            try:
                check(item)
            except _Invalid as exc:
                _claim(exc, error, value, key)
                raise

    return record


def _list_of(rule: ListOf, deferred: bool, claimed: bool) -> _Check | None:
    error = rule.error
    item_check = _checker(rule.item, deferred, claimed)
    if item_check is None and deferred:
        return None

    def list_of(value: Any) -> None:
        if not deferred and not isinstance(value, list):
            raise _fail(error, value)
        if item_check is not None:
            for at, item in enumerate(value):
                try:
                    item_check(item)
                except _Invalid as exc:
                    _claim(exc, error, value, at)
                    raise

    return list_of


def _nullable(rule: Nullable, deferred: bool, claimed: bool) -> _Check | None:
    inner = _checker(rule.rule, deferred, claimed)
    if inner is None:
        return None

    def nullable(value: Any) -> None:
        if value is not None:
            inner(value)

    return nullable


def _any_of(rule: AnyOf, deferred: bool, claimed: bool) -> _Check | None:
    error = rule.error
    options: list[tuple[type, _Check | None]] = []
    for option in rule.options:
        kind: type = Mapping if dict_like(option) else list if isinstance(option, ListOf) else str
        if option == Str():  # a string, which `isinstance` has just said: nothing more to check
            options.append((kind, None))
        else:
            options.append((kind, _checker(option, deferred, claimed)))
    if deferred and all(check is None for _, check in options):
        return None

    def any_of(value: Any) -> None:
        for kind, check in options:
            if isinstance(value, kind):
                if check is not None:
                    try:
                        check(value)
                    except _Invalid as exc:
                        _claim(exc, error, value, None)
                        raise
                return
        if not deferred:
            raise _fail(error, value)

    return any_of


def _tagged(rule: Tagged, deferred: bool) -> _Check | None:
    error, tag, unknown, hints = rule.error, rule.tag, rule.unknown, rule.hints
    variants = {name: _checker(variant, deferred, True) for name, variant in rule.variants.items()}
    names = frozenset(variants)
    if deferred and all(check is None for check in variants.values()):
        return None

    def tagged(value: Any) -> None:
        if not deferred and not isinstance(value, Mapping):
            raise _fail(error, value)
        kind = value.get(tag)
        if not isinstance(kind, str) or kind not in names:  # a list or dict does not hash
            hint = hints.get(kind) if isinstance(kind, str) else None
            tag_shown = _Shown(kind)
            raise _Invalid(unknown.format(tag=tag_shown, hint=f" ({hint})" if hint else ""))
        check = variants[kind]
        if check is not None:
            try:
                check(value)
            except _Invalid as exc:
                _claim(exc, error, value, None)
                raise

    return tagged
