"""The words the message schema is written in: a few frozen dataclasses, and what they mean.

The schema itself (`messages.MESSAGE_SCHEMA`) is data: for each role, the keys a message may
carry, the rule each value follows and the sentence a user reads when it does not. It has three
readers, each built once, at import, from composed closures or pydantic-core schema objects (no
source text is generated, so nothing is `eval`-ed):

- `_validator.validator_for`, the reference path: accepts what the rules allow in any `Mapping`,
  `list` or `str` subclass, and raises `MessageError` with the schema's sentence;
- `_intake.fast_intake_for`, the fast path: the same rules checked on exact built-in types while
  copying; it declines everything else, and the reference path decides;
- `_intake_core.batch_intake_for`, a history's first pass: the rules that have a pydantic-core
  form, compiled into one native validator; it hands back every message it cannot vouch for.

A change of the schema therefore changes every path (tests/test_message_schema.py shows it).

Rules, and how a value they accept is copied (every copy is what `strict_json` makes: dicts with
sorted keys, strict JSON all through):

- `Str`: a string (optionally non-empty, optionally passing a further `problem` check); as is.
- `Flag`: exactly True or False; as is.
- `OneOf`: one of a few values (compared with `in`); as is.
- `Json`: any strict JSON value, checked by the copy alone; a deep copy.
- `Forbidden`: only None (the key may be absent or None); as is.
- `Nullable`: None, or what the rule inside allows; None or that rule's copy.
- `ListOf`: a list whose items follow one rule; a list of the items' copies.
- `AnyOf`: one of several rules, chosen by the value's type (a string, a list, a dict).
- `Record`: a dict whose named `Field`s follow their rules; keys it does not name hold any strict
  JSON. A copy with sorted keys.
- `Tagged`: a dict whose `tag` key picks the rule (a `Record` or an `Attachment`) it follows.
- `Attachment`: a dict holding its content under exactly one of `sources` (a string), with a
  string `media_type` when that source is base64 `data`; a copy with sorted keys.

Errors: a rule's `error` is a `str.format` template (`{type}`: the value's type name, `{value!r}`:
the value). A rule without one reports through the nearest enclosing rule that has one, at that
rule's field, so "thinking must be a dict with a string 'thinking'" covers the dict and the
string inside it. Building a validator refuses a schema in which some rule could fail silently.
Fields are checked in their order; a `deferred` field after every other field of the message
(the order users have always seen errors in: a tool call's passthrough slot comes last).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field

__all__ = [
    "AnyOf",
    "Attachment",
    "Field",
    "Flag",
    "Forbidden",
    "Json",
    "ListOf",
    "MessageSchema",
    "Nullable",
    "OneOf",
    "Record",
    "Rule",
    "Str",
    "Tagged",
    "dict_like",
]


@dataclass(frozen=True, slots=True)
class Str:
    """A string; `nonempty` refuses "", `problem` returns why a string fails (or None)."""

    error: str | None = None
    nonempty: bool = False
    problem: Callable[[str], str | None] | None = None


@dataclass(frozen=True, slots=True)
class Flag:
    """Exactly True or False (a `bool`, even for the reference path: 1 is not a flag)."""

    error: str | None = None


@dataclass(frozen=True, slots=True)
class OneOf:
    """One of `values`, tested with `value in values` (a frozenset hashes the value, a tuple
    compares it)."""

    values: Collection[object]
    error: str | None = None


@dataclass(frozen=True, slots=True)
class Json:
    """Any strict JSON value: no rule beyond what the copy checks."""


@dataclass(frozen=True, slots=True)
class Forbidden:
    """Nothing but None: a key this role does not carry."""

    error: str | None = None


@dataclass(frozen=True, slots=True)
class Nullable:
    """None, or a value `rule` accepts."""

    rule: Rule


@dataclass(frozen=True, slots=True)
class ListOf:
    """A list (not a tuple: the reference path says so) whose every item follows `item`."""

    item: Rule
    error: str | None = None


@dataclass(frozen=True, slots=True)
class Field:
    """A key of a `Record`. Absent, it is checked only if `required` (as None); a `deferred`
    field is checked after every other field of the message."""

    key: str
    rule: Rule
    required: bool = False
    deferred: bool = False


@dataclass(frozen=True, slots=True)
class Record:
    """A dict (any `Mapping` for the reference path) whose `fields` follow their rules, in
    order; other keys hold any strict JSON."""

    fields: tuple[Field, ...] = ()
    error: str | None = None


@dataclass(frozen=True, slots=True)
class Attachment:
    """A dict whose content is under exactly one of `sources` (a string), with a string
    `media_type` when that source is base64 `data`."""

    sources: tuple[str, ...]
    error: str
    media_type_error: str


@dataclass(frozen=True, slots=True)
class AnyOf:
    """One of `options` (each a `Str`, a `ListOf` or a dict rule), chosen by the value's type."""

    options: tuple[Rule, ...]
    error: str | None = None


@dataclass(frozen=True, slots=True)
class Tagged:
    """A dict whose `tag` key names its variant. `error` is for a value that is not a dict,
    `unknown` (with `{tag!r}` and `{hint}`) for a tag that names no variant; `hints` explain
    tags from other formats, shown as " (hint)"."""

    tag: str
    variants: Mapping[str, Record | Attachment]
    error: str
    unknown: str
    hints: Mapping[str, str] = field(default_factory=dict)


Rule = (
    Str | Flag | OneOf | Json | Forbidden | Nullable | ListOf | Record | Attachment | AnyOf | Tagged
)


@dataclass(frozen=True, slots=True)
class MessageSchema:
    """The whole message IR: a `Record` per role, and the sentences for a message that is not a
    dict (`{type}`, then `sdk_hint` for an SDK object) or names no known role (`{value!r}`)."""

    roles: Mapping[str, Record]
    role_error: str
    not_a_dict: str
    sdk_hint: str


def dict_like(rule: Rule) -> bool:
    """Whether `rule` takes a dict (for `AnyOf`, which picks its option by the value's type)."""
    return isinstance(rule, Record | Attachment | Tagged)
