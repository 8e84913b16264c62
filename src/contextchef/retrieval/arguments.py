"""Reading a tool call's arguments and `context://` paths, with model-readable refusals.

Tool arguments arrive as the JSON string OpenAI and Anthropic SDKs hand over, or as an already
parsed dict (Anthropic `input`, Gemini `args`); `None` or a blank string counts as `{}`. Every
problem raises `ToolInputError`, whose `text` is the `Error: …` string the model reads back.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from contextchef import prompts
from contextchef.errors import InvalidPathError
from contextchef.store.paths import (
    URI_PREFIX,
    format_uri,
    validate_entry_path,
    validate_namespace,
    validate_prefix,
)

__all__ = [
    "Address",
    "ToolInputError",
    "line_number",
    "optional_text",
    "parse_address",
    "parse_arguments",
    "required_text",
    "text_argument",
    "view_range",
]

_INTEGER = re.compile(r"\s*[+-]?\d{1,18}\s*")


class ToolInputError(Exception):
    """A tool call the model got wrong; `text` is the `Error: …` result to send back."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text


def parse_arguments(arguments: object) -> dict[str, Any]:
    """The arguments as a dict: a JSON object string, a mapping, or None/blank for `{}`."""
    if arguments is None:
        return {}
    if isinstance(arguments, str | bytes | bytearray):
        if not arguments.strip():
            return {}
        try:
            arguments = json.loads(arguments)
        except (ValueError, RecursionError):
            raise ToolInputError(prompts.ARGUMENTS_NOT_JSON) from None
    if isinstance(arguments, Mapping):
        return {str(key): value for key, value in arguments.items()}
    raise ToolInputError(prompts.arguments_not_object(_json_kind(arguments)))


def _json_kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list | tuple):
        return "an array"
    return f"a {type(value).__name__}"


def required_text(args: Mapping[str, Any], name: str) -> str:
    """A non-empty string argument."""
    value = args.get(name)
    if value is None or value == "":
        raise ToolInputError(prompts.missing_argument(name))
    if not isinstance(value, str):
        raise ToolInputError(prompts.wrong_argument(name, "a string"))
    if not value.strip():
        raise ToolInputError(prompts.missing_argument(name))
    return value


def text_argument(args: Mapping[str, Any], name: str) -> str:
    """A string argument that must be present but may be empty."""
    value = args.get(name)
    if value is None:
        raise ToolInputError(prompts.missing_argument(name))
    if not isinstance(value, str):
        raise ToolInputError(prompts.wrong_argument(name, "a string"))
    return value


def optional_text(args: Mapping[str, Any], name: str) -> str | None:
    """A string argument that may be left out (None)."""
    value = args.get(name)
    if value is not None and not isinstance(value, str):
        raise ToolInputError(prompts.wrong_argument(name, "a string"))
    return value


def _as_int(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    if isinstance(value, str) and _INTEGER.fullmatch(value):
        return int(value)
    return None


def line_number(args: Mapping[str, Any], name: str) -> int:
    """An integer argument; numeric strings (`"3"`) are accepted."""
    value = args.get(name)
    if value is None or value == "":
        raise ToolInputError(prompts.missing_argument(name))
    number = _as_int(value)
    if number is None:
        raise ToolInputError(prompts.wrong_argument(name, "a whole number, such as 0 or 12"))
    return number


def view_range(args: Mapping[str, Any]) -> tuple[int, int] | None:
    """`[first, last]` (1-based, inclusive; `last` may be -1) or None when not given."""
    value = args.get("view_range")
    if value is None:
        return None
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except (ValueError, RecursionError):
            value = None
    if not isinstance(value, list | tuple) or len(value) != 2:
        raise ToolInputError(prompts.view_range_invalid("must be a list of two line numbers"))
    first, last = _as_int(value[0]), _as_int(value[1])
    if first is None or last is None:
        raise ToolInputError(prompts.view_range_invalid("must hold two whole numbers"))
    if first < 1:
        raise ToolInputError(prompts.view_range_invalid(f"starts at {first}, before line 1"))
    if last != -1 and last < first:
        raise ToolInputError(prompts.view_range_invalid(f"ends at {last}, before it starts"))
    return first, last


@dataclass(frozen=True, slots=True)
class Address:
    """A checked `context://` address. `path` is `""` for the namespace root and ends in `/`
    for any other directory."""

    ns: str
    path: str

    @property
    def is_directory(self) -> bool:
        return self.path == "" or self.path.endswith("/")

    @property
    def uri(self) -> str:
        return format_uri(self.ns, self.path)

    @property
    def root(self) -> str:
        """The URI of the namespace root, `context://<ns>/`."""
        return format_uri(self.ns, "")

    @property
    def parent(self) -> str:
        """The URI of the directory holding this address."""
        trimmed = self.path.rstrip("/")
        head, slash, _ = trimmed.rpartition("/")
        return format_uri(self.ns, head + slash)

    def as_directory(self) -> Address:
        return self if self.is_directory else Address(self.ns, self.path + "/")


def parse_address(raw: str) -> Address:
    """`context://ns/path`, `ns/path` or `/ns/path` as an `Address`; `ToolInputError` naming
    the part at fault for anything else."""
    text = raw.strip()
    if text.startswith(URI_PREFIX):
        text = text[len(URI_PREFIX) :]
    elif "://" in text:
        raise ToolInputError(prompts.bad_path(raw, "only context:// addresses can be used"))
    text = text.lstrip("/")
    ns, _, path = text.partition("/")
    if not ns:
        raise ToolInputError(prompts.bad_path(raw, "it names no namespace"))
    try:
        validate_namespace(ns)
        if path == "" or path.endswith("/"):
            validate_prefix(path)
        else:
            validate_entry_path(path)
    except InvalidPathError as exc:
        raise ToolInputError(prompts.bad_path(raw, str(exc))) from None
    return Address(ns, path)
