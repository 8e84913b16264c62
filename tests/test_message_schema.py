"""The message schema is the one source of truth for both intake paths.

A walker reads any `MessageSchema` and makes, for every rule in it, values it accepts and values
it refuses, each with the outcome the rules predict: accepted, or the exact sentence and field.
Then, for paths built from that same schema:

- the reference path (`validator_for`, then `strict_json`) says exactly that;
- the fast path (`fast_intake_for`) declines every refused message and copies every accepted one
  exactly as the reference path does.

Run on `MESSAGE_SCHEMA` (every sentence in it must come up), then on edited schemas: a rule made
stricter, one made looser, a required field added. Each edit changes both paths the same way,
so there is nothing to keep in step by hand.
"""

from __future__ import annotations

import dataclasses
import math
import typing
from collections.abc import Iterator
from typing import Any

import pytest

from contextchef._intake import Unusual, fast_intake_for
from contextchef._jsonvalue import MAX_DEPTH, strict_json
from contextchef._schema import (
    AnyOf,
    Attachment,
    Field,
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
from contextchef._validator import validator_for
from contextchef.errors import MessageError
from contextchef.messages import (
    MESSAGE_SCHEMA,
    FunctionCall,
    Message,
    RedactedThinking,
    Thinking,
    ToolCall,
)

OK = ("ok",)
LOOSE = ("loose",)  # refused, for an enclosing rule to say why
Outcome = tuple[Any, ...]  # OK, LOOSE, or ("error", sentence, steps from this value)
Example = tuple[Any, Outcome]

PROBLEM_PROBES = [
    '{"x": NaN}',
    '{"x": 1e999}',
    "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1),
    "{",  # not JSON
    "[1, 2]",  # not an object
    '{"x": "\\ud800"}',  # an escaped lone surrogate
]


def say(template: str, value: Any) -> str:
    return template.format(type=type(value).__name__, value=value)


def refused(rule: Rule, value: Any) -> Outcome:
    """`rule` refuses `value` itself (not something inside it)."""
    error = getattr(rule, "error", None)
    return ("error", say(error, value), []) if error is not None else LOOSE


def lift(outcome: Outcome, rule: Rule, value: Any, step: str | int | None) -> Outcome:
    """An outcome inside `value` (at `step`), as `rule` (holding `value`) reports it."""
    if outcome == OK:
        return OK
    if outcome == LOOSE:
        return refused(rule, value)
    _, sentence, steps = outcome
    return ("error", sentence, ([step] if step is not None else []) + steps)


def examples(rule: Rule) -> Iterator[Example]:
    """Values for `rule`, each with the outcome the rules predict; the first one is accepted."""
    if isinstance(rule, Str):
        # the first example is accepted: a string any `problem` check passes ("{}": arguments)
        yield ("x" if rule.problem is None or rule.problem("x") is None else "{}"), OK
        yield ("", refused(rule, "") if rule.nonempty else OK)
        yield 5, refused(rule, 5)
        for probe in PROBLEM_PROBES if rule.problem is not None else ():
            problem = rule.problem(probe)
            assert problem is not None
            yield probe, ("error", problem, [])
    elif isinstance(rule, Flag):
        yield from ((True, OK), (False, OK))
        yield from ((bad, refused(rule, bad)) for bad in (1, None, "true"))
    elif isinstance(rule, OneOf):
        yield from ((value, OK) for value in sorted(rule.values, key=repr))
        yield from ((bad, refused(rule, bad)) for bad in ("nope", 7))
    elif isinstance(rule, Forbidden):
        yield None, OK
        yield from ((bad, refused(rule, bad)) for bad in ("x", []))
    elif isinstance(rule, Json):
        yield from (({"n": [1, 2.5, None, True], "a": "s"}, OK), ("s", OK), (3, OK))
    elif isinstance(rule, Nullable):
        inner = list(examples(rule.rule))
        yield inner[0]
        yield None, OK
        yield from ((value, outcome) for value, outcome in inner[1:] if value is not None)
    elif isinstance(rule, ListOf):
        yield from list_examples(rule)
    elif isinstance(rule, Record):
        yield from record_examples(rule)
    elif isinstance(rule, Attachment):
        yield from attachment_examples(rule)
    elif isinstance(rule, AnyOf):
        yield from any_of_examples(rule)
    else:
        yield from tagged_examples(rule)


def list_examples(rule: ListOf) -> Iterator[Example]:
    items = list(examples(rule.item))
    yield [items[0][0], items[0][0]], OK
    yield [], OK
    for item, outcome in items[1:]:
        value = [items[0][0], item]
        yield value, lift(outcome, rule, value, 1)
    for bad in ("x", (items[0][0],)):
        yield bad, refused(rule, bad)


def record_examples(rule: Record) -> Iterator[Example]:
    choices = {f.key: list(examples(f.rule)) for f in rule.fields}
    base = {key: found[0][0] for key, found in choices.items()}
    base["extra"] = {"free": [1, None]}  # a key the record does not name: any strict JSON
    yield dict(reversed(base.items())), OK  # in a host's order, not ours
    for f in rule.fields:
        for value, outcome in choices[f.key][1:]:
            record = {**base, f.key: value}
            yield record, lift(outcome, rule, record, f.key)
        if f.required:
            record = {key: value for key, value in base.items() if key != f.key}
            yield record, lift(none_outcome(f.rule), rule, record, f.key)
        else:
            yield {key: value for key, value in base.items() if key != f.key}, OK
    for bad in ("x", ["x"]):
        yield bad, refused(rule, bad)


def none_outcome(rule: Rule) -> Outcome:
    """What a required field's rule says of a missing value (read as None)."""
    return OK if isinstance(rule, Json | Nullable | Forbidden) else refused(rule, None)


def attachment_examples(rule: Attachment) -> Iterator[Example]:
    first, *others = rule.sources
    yield {first: "x", "media_type": "m"}, OK
    for source in others:
        yield {source: "x", "media_type": "m"}, OK
        two = {first: "x", source: "y", "media_type": "m"}
        yield two, ("error", say(rule.error, two), [])
    yield {"media_type": "m"}, ("error", say(rule.error, {}), [])
    yield {first: 5, others[0]: "x"}, OK  # a source that is not a string is not a source
    if "data" in rule.sources:
        bare = {"data": "x"}
        yield bare, ("error", say(rule.media_type_error, bare), [])


def kind_of(rule: Rule) -> type:
    return dict if dict_like(rule) else list if isinstance(rule, ListOf) else str


def any_of_examples(rule: AnyOf) -> Iterator[Example]:
    for option in rule.options:
        for value, outcome in examples(option):
            if type(value) is kind_of(option):  # the option this value's type picks
                yield value, lift(outcome, rule, value, None)
    for bad in (5, True):
        yield bad, refused(rule, bad)


def tagged_examples(rule: Tagged) -> Iterator[Example]:
    for name, variant in rule.variants.items():
        for value, outcome in examples(variant):
            if isinstance(value, dict):
                tagged = {rule.tag: name, **value}
                yield tagged, lift(outcome, rule, tagged, None)
    for tag in ("nope", *rule.hints):
        value = {rule.tag: tag}
        hint = rule.hints.get(tag)
        yield value, ("error", rule.unknown.format(tag=tag, hint=f" ({hint})" if hint else ""), [])
    yield "x", refused(rule, "x")


def message_examples(schema: MessageSchema) -> Iterator[tuple[dict[str, Any], Outcome]]:
    for role, record in schema.roles.items():
        for value, outcome in examples(record):
            if isinstance(value, dict):
                assert outcome != LOOSE, f"a {role} message can be refused with no sentence"
                yield {"role": role, **value}, outcome


def field_name(steps: list[str | int]) -> str:
    text = ""
    for step in steps:
        text += f"[{step}]" if isinstance(step, int) else (f".{step}" if text else step)
    return text


def typed(value: Any) -> Any:
    """The value with every type and key order made explicit, for a strict comparison."""
    if isinstance(value, dict):
        return ("dict", [(type(k), k, typed(v)) for k, v in value.items()])
    if isinstance(value, list):
        return ("list", [typed(item) for item in value])
    if isinstance(value, float) and math.isnan(value):
        return ("nan",)
    return (type(value), value)


def check_both_paths(schema: MessageSchema) -> set[str]:
    """Run every example of `schema` through both paths built from it; the sentences met."""
    validate, fast = validator_for(schema), fast_intake_for(schema)
    said: set[str] = set()
    count = 0
    for message, outcome in message_examples(schema):
        count += 1
        if outcome == OK:
            validate(message, 3)
            expected = typed(strict_json(message))
            assert typed(fast(message)) == expected, message
            continue
        _, sentence, steps = outcome
        with pytest.raises(MessageError) as info:
            validate(message, 3)
        field = field_name(steps)
        assert (info.value.field, str(info.value)) == (
            field,
            f"message 3, field {field!r}: {sentence}",
        ), message
        with pytest.raises(Unusual):
            fast(message)
        said.add(sentence)
    assert count > 100
    return said


def sentences(rule: Rule) -> Iterator[str]:
    """Every `error` template in `rule` (and what is inside it)."""
    for item in dataclasses.fields(rule):
        value = getattr(rule, item.name)
        if item.name in ("error", "media_type_error", "unknown") and value is not None:
            yield value
        elif item.name in ("fields", "options"):
            for each in value:
                yield from sentences(each.rule if isinstance(each, Field) else each)
        elif item.name == "variants":
            for variant in value.values():
                yield from sentences(variant)
        elif item.name in ("rule", "item"):
            yield from sentences(value)


def test_both_paths_follow_every_rule_of_the_message_schema() -> None:
    said = check_both_paths(MESSAGE_SCHEMA)
    templates = {text for record in MESSAGE_SCHEMA.roles.values() for text in sentences(record)}
    # every sentence of the schema was said (as a template, before its `{type}`/`{value!r}`)
    for template in templates:
        head = template.split("{")[0].replace("{{", "{")
        assert any(sentence.startswith(head) for sentence in said), template


def edit(rule: Any, path: tuple[str, ...], change: Any) -> Any:
    """`rule` with the field at `path` (keys through records, lists and nullables) replaced by
    `change(field)`."""
    if isinstance(rule, Nullable):
        return Nullable(edit(rule.rule, path, change))
    if isinstance(rule, ListOf):
        return dataclasses.replace(rule, item=edit(rule.item, path, change))
    assert isinstance(rule, Record)
    fields = tuple(
        (
            change(f)
            if len(path) == 1
            else dataclasses.replace(f, rule=edit(f.rule, path[1:], change))
        )
        if f.key == path[0]
        else f
        for f in rule.fields
    )
    if path[0] not in {f.key for f in rule.fields}:
        fields = (*fields, change(None))
    return dataclasses.replace(rule, fields=fields)


def edited(role: str, path: tuple[str, ...], change: Any) -> MessageSchema:
    roles = {**MESSAGE_SCHEMA.roles, role: edit(MESSAGE_SCHEMA.roles[role], path, change)}
    return dataclasses.replace(MESSAGE_SCHEMA, roles=roles)


def outcomes(schema: MessageSchema, message: dict[str, Any]) -> tuple[str, str]:
    """What each path built from `schema` makes of `message`: "ok" or the error / "declined"."""
    try:
        validator_for(schema)(message, 0)
        reference = "ok"
    except MessageError as exc:
        reference = str(exc)
    try:
        fast_intake_for(schema)(message)
        fast = "ok"
    except Unusual:
        fast = "declined"
    return reference, fast


CALL = {"id": "c1", "type": "other", "function": {"name": "ls", "arguments": "{}"}}


def test_a_stricter_rule_in_the_schema_is_enforced_by_both_paths() -> None:
    message = {"role": "assistant", "content": None, "tool_calls": [CALL]}
    assert outcomes(MESSAGE_SCHEMA, message) == ("ok", "ok")
    strict = edited(
        "assistant",
        ("tool_calls", "type"),
        lambda f: dataclasses.replace(f, rule=OneOf(("function",), "type must be 'function'")),
    )
    assert outcomes(strict, message) == (
        "message 0, field 'tool_calls[0].type': type must be 'function'",
        "declined",
    )
    assert "type must be 'function'" in check_both_paths(strict)


def test_a_looser_rule_in_the_schema_is_accepted_by_both_paths() -> None:
    message = {"role": "assistant", "content": "x", "openai_phase": "draft"}
    assert outcomes(MESSAGE_SCHEMA, message) == (
        "message 0, field 'openai_phase': openai_phase must be 'commentary' or 'final_answer'",
        "declined",
    )
    loose = edited(
        "assistant",
        ("openai_phase",),
        lambda f: dataclasses.replace(f, rule=Nullable(Str("openai_phase must be a string"))),
    )
    assert outcomes(loose, message) == ("ok", "ok")
    check_both_paths(loose)


def test_a_new_required_field_is_required_by_both_paths() -> None:
    message = {"role": "user", "content": "hi"}
    assert outcomes(MESSAGE_SCHEMA, message) == ("ok", "ok")
    named = edited(
        "user", ("author",), lambda _: Field("author", Str("a user message needs an author"), True)
    )
    assert outcomes(named, message) == (
        "message 0, field 'author': a user message needs an author",
        "declined",
    )
    assert outcomes(named, {**message, "author": "ann"}) == ("ok", "ok")
    check_both_paths(named)


def test_a_schema_that_could_refuse_a_message_silently_is_refused() -> None:
    silent = dataclasses.replace(
        MESSAGE_SCHEMA, roles={"user": Record((Field("mood", OneOf(("calm",))),))}
    )
    with pytest.raises(ValueError, match="no sentence"):
        validator_for(silent)


@pytest.mark.parametrize(
    ("typed_dict", "record"),
    [
        (Message, None),
        (ToolCall, ("assistant", "tool_calls")),
        (FunctionCall, ("assistant", "tool_calls", "function")),
        (Thinking, ("user", "thinking")),
        (RedactedThinking, ("user", "redacted_thinking")),
    ],
)
def test_the_typed_dicts_name_the_keys_of_the_schema(
    typed_dict: Any, record: tuple[str, ...] | None
) -> None:
    """The TypedDicts (the static view of the IR) and the schema name the same keys."""
    if record is None:
        keys = {f.key for rule in MESSAGE_SCHEMA.roles.values() for f in rule.fields} | {"role"}
    else:
        rule: Any = MESSAGE_SCHEMA.roles[record[0]]
        for key in record[1:]:
            rule = next(f.rule for f in rule.fields if f.key == key)
            while isinstance(rule, Nullable | ListOf):
                rule = rule.rule if isinstance(rule, Nullable) else rule.item
        keys = {f.key for f in rule.fields}
    assert set(typing.get_type_hints(typed_dict)) == keys
