"""Dynamic state: validate the live task state against its schema and render it as XML.

The schema is a pydantic v2 model class (or any type pydantic can validate: a TypedDict, a
dataclass), given with its data; or a model instance on its own. A dict is refused with a
`DynamicStateError` that says what to pass: a JSON-schema dict is not a Python type pydantic
validates against, and a plain dict of data has no schema at all (wrap it in a TypedDict). A
`typing.TypedDict` works on Python 3.11 too (pydantic there takes only `typing_extensions`'
kind: the class is rebuilt as one). Rendering goes through `object_to_xml`, so the state always
reads back in the same bytes: a set (or frozenset) anywhere in it becomes a list in
`stable_order`, never in the order its hashes give this process.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, is_dataclass
from types import GenericAlias, UnionType
from typing import (
    Any,
    Literal,
    NotRequired,
    Required,
    Union,
    get_args,
    get_origin,
    get_type_hints,
    is_typeddict,
)

from pydantic import BaseModel, PydanticUserError, TypeAdapter, ValidationError
from pydantic_core import SchemaError, to_jsonable_python
from typing_extensions import TypedDict

from contextchef._hosttext import find_surrogate, shown
from contextchef._jsonvalue import MAX_DEPTH, NotJson, stable_order, strict_json
from contextchef.errors import ConfigError, DynamicStateError
from contextchef.placement.xml import object_to_xml

__all__ = ["DynamicState", "StatePlacement", "render_dynamic_state", "schema_path"]

StatePlacement = Literal["last_user", "system"]
STATE_ROOT = "dynamic_state"


@dataclass(frozen=True, slots=True)
class DynamicState:
    """Validated state: the plain JSON data, its XML, and where it goes in the sandwich.

    `schema` is the import path (`module:QualName`) of the type it was validated against, so a
    snapshot restored in another process can validate the data again (None for a type that
    cannot be imported by name, such as a class defined inside a function).
    """

    data: Any
    xml: str
    placement: StatePlacement
    schema: str | None = None


def render_dynamic_state(
    schema_or_model: Any, data: Any = None, *, placement: str = "last_user"
) -> DynamicState:
    """Validate and render; raise `DynamicStateError` (naming the failing fields) if invalid."""
    if placement not in ("last_user", "system"):
        raise ConfigError(f"placement must be 'last_user' or 'system', got {placement!r}")
    if isinstance(schema_or_model, Mapping):
        kind = "a JSON-schema dict" if _looks_like_schema(schema_or_model) else "a plain dict"
        raise DynamicStateError(
            f"set_dynamic_state got {kind}; pass a pydantic model instance, or a schema type "
            "with its data: a pydantic model class, a TypedDict or a dataclass, e.g. "
            "set_dynamic_state(TaskState, {'goal': ...})"
        )
    if is_dataclass(schema_or_model) and not isinstance(schema_or_model, type):
        name = type(schema_or_model).__name__
        raise DynamicStateError(
            f"set_dynamic_state got a {name} instance (a dataclass instance); pass its type "
            f"with the instance as data: set_dynamic_state({name}, instance)"
        )
    schema = schema_path(
        type(schema_or_model) if isinstance(schema_or_model, BaseModel) else schema_or_model
    )
    schema_or_model = _pydantic_typeddict(schema_or_model)
    try:
        if isinstance(schema_or_model, BaseModel):
            if data is not None:
                raise ConfigError("pass either a model instance or a schema with data, not both")
            plain = _plain(schema_or_model.model_dump)
        else:
            adapter: TypeAdapter[Any] = TypeAdapter(schema_or_model)
            validated = adapter.validate_python(data)
            plain = _plain(lambda mode: adapter.dump_python(validated, mode=mode))
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or '(root)'}: {err['msg']}"
            for err in exc.errors()
        )
        raise DynamicStateError(f"dynamic state is invalid: {problems}") from exc
    except RecursionError:
        raise DynamicStateError(
            f"dynamic state is nested more than {MAX_DEPTH} levels deep"
        ) from None
    except (PydanticUserError, SchemaError, TypeError, ValueError, KeyError, AttributeError) as exc:
        # pydantic cannot use the schema
        if isinstance(exc, ConfigError):
            raise
        raise ConfigError(
            f"cannot use {shown(schema_or_model)} as a dynamic state schema: {shown(exc, 300)}"
        ) from exc
    plain = _sendable(plain)
    xml = object_to_xml(plain, STATE_ROOT)
    return DynamicState(plain, xml, placement, schema)  # type: ignore[arg-type]


def _sendable(plain: Any) -> Any:
    """The state if it is strict JSON (no integer too long to print, nothing nested beyond
    `MAX_DEPTH`), else `DynamicStateError` naming where it is not: it is rendered into the
    prompt as it is. (A lone surrogate is refused by `_plain`, before JSON mode garbles it.)"""
    try:
        strict_json(plain)
    except NotJson as exc:
        raise DynamicStateError(f"dynamic state: {exc.describe('the state')}") from None
    return plain


def schema_path(schema: Any) -> str | None:
    """`module:QualName` of a schema class, or None when it cannot be imported by that name."""
    if not isinstance(schema, type):
        return None
    module, qualname = getattr(schema, "__module__", None), getattr(schema, "__qualname__", "")
    if not isinstance(module, str) or not qualname or "<" in qualname:
        return None
    return f"{module}:{qualname}"


def _looks_like_schema(value: Mapping[Any, Any]) -> bool:
    return any(key in value for key in ("type", "properties", "$schema", "$defs", "anyOf"))


def _pydantic_typeddict(schema: Any) -> Any:
    """On Python < 3.12 pydantic refuses a `typing.TypedDict` (it needs `typing_extensions`');
    rebuild such a class, and those its fields name directly or through generics, as one."""
    if sys.version_info >= (3, 12):
        return schema
    return _rebuilt(schema, {})


def _rebuilt(tp: Any, done: dict[int, Any]) -> Any:
    if id(tp) in done:
        return done[id(tp)]
    if is_typeddict(tp) and type(tp).__module__ == "typing":
        hints = get_type_hints(tp, include_extras=True)
        required = tp.__required_keys__
        fields = {
            name: (Required if name in required else NotRequired)[_rebuilt(hint, done)]
            for name, hint in hints.items()
        }
        rebuilt = TypedDict(tp.__name__, fields)  # type: ignore[misc]
        done[id(tp)] = rebuilt
        return rebuilt
    args = get_args(tp)
    origin = get_origin(tp)
    if not args or origin is None:
        return tp
    new_args = tuple(_rebuilt(arg, done) for arg in args)
    if new_args == args:
        return tp
    if origin is UnionType or origin is Union:
        return Union[new_args]  # noqa: UP007
    if isinstance(tp, GenericAlias):
        return GenericAlias(origin, new_args)
    copy_with = getattr(tp, "copy_with", None)
    return copy_with(new_args) if callable(copy_with) else tp


def _plain(dump: Callable[..., Any]) -> Any:
    """The JSON form of the validated state. Pydantic's JSON mode turns a set into a list in
    iteration (hash) order; when the state holds a set, its members are put in `stable_order`
    first and the result made JSON-able the same way."""
    python = dump(mode="python")
    found = find_surrogate(python)  # JSON mode would garble it into U+FFFD, silently
    if found is not None:
        where = NotJson(found[1], [str(step) for step in found[0]])
        raise DynamicStateError(f"dynamic state: {where.describe('the state')}")
    if not _has_set(python):
        return dump(mode="json")
    return to_jsonable_python(_settled(python))


def _has_set(value: Any) -> bool:
    if isinstance(value, set | frozenset):
        return True
    if isinstance(value, Mapping):
        return any(_has_set(item) for item in value.values())
    if isinstance(value, list | tuple):
        return any(_has_set(item) for item in value)
    return False


def _settled(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {key: _settled(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_settled(item) for item in value]
    if isinstance(value, set | frozenset):
        return [_settled(item) for item in stable_order(value)]
    return value
