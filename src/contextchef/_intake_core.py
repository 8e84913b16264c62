"""Batch intake in native code: the message schema's common shapes, copied by a pydantic-core
validator compiled from the schema once, at import.

`batch_intake(messages)` returns, for each message, its copy (exactly the fast path's: keys
sorted, the very strings) or the message itself when it is not one of those shapes, for the
caller to take the one-message path (`_intake.fast_intake`, then the reference path). What it
copies it has checked by the same rules; what it cannot vouch for it hands back.

The validator: per role a `typed_dict` of the record's fields in sorted key order, extra keys
forbidden, strict types. A rule it has no native form for (an attachment, a `Json` value that is
not a string, a forbidden key, a record that names no field) leaves its field out, so a message
carrying it fails and is handed back; a `Str` rule's `problem` (tool-call arguments) is checked
by the rule's own function. Every string is read as UTF-8 (a length constraint makes the
validator do so), so one holding a lone surrogate fails and is handed back; a `str` subclass is
read by its data, as every path reads it (`_jsonvalue.strict_json`), and copied as a plain
`str`. Only the record's own keys pass, so no other key type, no integer and no cycle can: the
validator never meets a value whose reading could differ from the fast path's, and it reads
host objects through the C API only (no host code runs).
"""

from __future__ import annotations

from collections.abc import Callable
from operator import itemgetter
from typing import Any

from pydantic_core import SchemaValidator, ValidationError, core_schema

from contextchef._schema import (
    AnyOf,
    Attachment,
    Flag,
    Json,
    ListOf,
    MessageSchema,
    Nullable,
    OneOf,
    Record,
    Rule,
    Str,
    Tagged,
)
from contextchef.messages import MESSAGE_SCHEMA

__all__ = ["BATCH", "batch_intake", "batch_intake_for"]

BATCH = 512
"""Messages per `batch_intake` call: a bounded list of copies at a time."""

_Schema = core_schema.CoreSchema


def batch_intake_for(
    schema: MessageSchema, *, checks: bool = True
) -> Callable[[list[Any]], list[Any]]:
    """`batch_intake` for `schema`. `checks=False` leaves out the rules' own Python checks (a
    `Str` rule's `problem`): the compiled validator alone, which `benchmarks/compile.py` times
    as the floor of a validated intake (not for taking messages: it lets bad arguments in)."""
    roles: dict[str, _Schema] = {}
    for role, rule in schema.roles.items():
        compiled = _record(rule, {"role": core_schema.literal_schema([role])}, checks)
        if compiled is not None:
            roles[role] = compiled
    message = core_schema.tagged_union_schema(roles, discriminator="role")
    item = core_schema.union_schema([message, core_schema.any_schema()], mode="left_to_right")
    validator = SchemaValidator(core_schema.list_schema(item, strict=True))

    def validate(messages: list[Any]) -> list[Any]:
        try:
            copies: list[Any] = validator.validate_python(messages)
        except ValidationError:  # not a list (each message fails alone: handed back)
            return messages
        return copies

    def batch_intake(messages: list[Any]) -> list[Any]:
        if type(messages) is not list:
            return messages
        if _plain(messages):
            return validate(messages)
        # the rare batch holding another message: only the plain ones are offered
        plain = [_plain([message]) for message in messages]
        copies = iter(
            validate([message for message, ok in zip(messages, plain, strict=True) if ok])
        )
        return [
            next(copies) if ok else message for message, ok in zip(messages, plain, strict=True)
        ]

    return batch_intake


_ROLE = itemgetter("role")


def _plain(messages: list[Any]) -> bool:
    """Whether every message is a `dict` whose role is a `str`, both exactly: the validator's
    tagged union then reads the role without running a host object's code (its hash, its
    repr for an error message) and without an error it could only print (the repr of an
    integer too long to print). Three passes in C."""
    if not set(map(type, messages)) <= _DICT:
        return False
    try:
        return set(map(type, map(_ROLE, messages))) <= _STR
    except KeyError:
        return False


_DICT = frozenset((dict,))
_STR = frozenset((str,))


def _text(min_length: int) -> _Schema:
    """A strict string read as UTF-8: any length constraint, even 0, has pydantic-core read it
    so (a lone surrogate fails), and turns a `str` subclass into a plain `str` of its data."""
    return core_schema.str_schema(strict=True, min_length=min_length)


def _rule(rule: Rule, checks: bool = True) -> _Schema | None:
    """The native form of `rule`, or None when it has none (its values are handed back)."""
    if isinstance(rule, Str):
        text = _text(1 if rule.nonempty else 0)
        problem = rule.problem
        if problem is None or not checks:
            return text

        def passes(value: str) -> str:
            if problem(value) is not None:
                raise ValueError("handed back")
            return value

        return core_schema.no_info_after_validator_function(passes, text)
    if isinstance(rule, Json):
        return _text(0)  # the common case; others are handed back
    if isinstance(rule, Flag):
        return core_schema.bool_schema(strict=True)
    if isinstance(rule, OneOf):
        values = list(rule.values)
        if not values or not all(type(value) is str for value in values):
            return None
        return core_schema.literal_schema(values)
    if isinstance(rule, Nullable):
        inner = _rule(rule.rule, checks)
        return None if inner is None else core_schema.nullable_schema(inner, strict=True)
    if isinstance(rule, ListOf):
        item = _rule(rule.item, checks)
        return None if item is None else core_schema.list_schema(item, strict=True)
    if isinstance(rule, Record):
        return _record(rule, {}, checks)
    if isinstance(rule, AnyOf):
        natives = [
            native for option in rule.options if (native := _rule(option, checks)) is not None
        ]
        if len(natives) < 2:
            return natives[0] if natives else None
        choices: list[_Schema | tuple[_Schema, str]] = list(natives)
        return core_schema.union_schema(choices, mode="left_to_right")
    if isinstance(rule, Tagged):
        variants: dict[str, _Schema] = {}
        for name, variant in rule.variants.items():
            if isinstance(variant, Attachment):
                continue
            compiled = _record(variant, {rule.tag: core_schema.literal_schema([name])}, checks)
            if compiled is not None:
                variants[name] = compiled
        if not variants:
            return None
        return core_schema.tagged_union_schema(variants, discriminator=rule.tag)
    return None  # Forbidden, Attachment: handed back


def _record(rule: Record, tags: dict[str, _Schema], checks: bool = True) -> _Schema | None:
    """A `typed_dict` of the record's fields (and `tags`, required) in sorted key order, extra
    keys forbidden; None when a required field has no native form, or the record names none."""
    if not rule.fields:
        return None  # any dict of strict JSON: its keys' order is the host's
    fields = {key: core_schema.typed_dict_field(tag, required=True) for key, tag in tags.items()}
    for field in rule.fields:
        compiled = _rule(field.rule, checks)
        if compiled is None:
            if field.required:
                return None
            continue  # present, it fails the record (extra keys are forbidden): handed back
        fields[field.key] = core_schema.typed_dict_field(compiled, required=field.required)
    ordered = {key: fields[key] for key in sorted(fields)}
    return core_schema.typed_dict_schema(ordered, extra_behavior="forbid", strict=True)


batch_intake = batch_intake_for(MESSAGE_SCHEMA)
"""For each message of a list: its copy, or the message itself (take the one-message path)."""
