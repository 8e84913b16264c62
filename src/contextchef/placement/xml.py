"""Render JSON-like values as indented XML for the model to read.

Keys are emitted in sorted order whatever order the dict was built in, and sets in
`stable_order` whatever their hash order, so the same value always renders to the same bytes.
Text is escaped (`< > & ' "`), and keys that are not valid XML names are made into valid ones,
so nothing the user stores can break out of its element.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from contextchef._jsonvalue import stable_order

__all__ = ["escape_xml", "object_to_xml", "xml_name"]

_ESCAPES = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", "'": "&apos;", '"': "&quot;"})
_NOT_NAME = re.compile(r"[^A-Za-z0-9_.\-]")
_INDENT = "  "


def escape_xml(text: str) -> str:
    """Escape the five XML special characters."""
    return text.translate(_ESCAPES)


def xml_name(key: object) -> str:
    """A valid XML element name for `key`: other characters become `_`; never starts with a
    digit, `-`, `.` or the letters `xml`."""
    name = _NOT_NAME.sub("_", str(key)) or "_"
    if not (name[0].isalpha() or name[0] == "_") or name.lower().startswith("xml"):
        name = "_" + name
    return name


def _scalar(value: Any) -> str:
    if value is True:
        return "true"
    if value is False:
        return "false"
    return escape_xml(str(value))


def _render(value: Any, name: str, depth: int, out: list[str]) -> None:
    pad = _INDENT * depth
    if isinstance(value, Mapping):
        items = [(key, value[key]) for key in sorted(value, key=str) if value[key] is not None]
        if not items:
            out.append(f"{pad}<{name}/>")
            return
        out.append(f"{pad}<{name}>")
        for key, item in items:
            _render(item, xml_name(key), depth + 1, out)
        out.append(f"{pad}</{name}>")
    elif isinstance(value, list | tuple | set | frozenset):
        items = stable_order(value) if isinstance(value, set | frozenset) else list(value)
        items = [item for item in items if item is not None]
        if not items:
            out.append(f"{pad}<{name}/>")
            return
        out.append(f"{pad}<{name}>")
        for item in items:
            _render(item, "item", depth + 1, out)
        out.append(f"{pad}</{name}>")
    else:
        text = _scalar(value)
        if "\n" in text:
            inner = "\n".join(f"{pad}{_INDENT}{line}" if line else "" for line in text.split("\n"))
            out.append(f"{pad}<{name}>\n{inner}\n{pad}</{name}>")
        else:
            out.append(f"{pad}<{name}>{text}</{name}>")


def object_to_xml(value: Any, root: str = "data") -> str:
    """Render `value` (dicts, lists, scalars; `None` fields left out) under `<root>`.

    >>> print(object_to_xml({"task": "ship <v2>", "steps": ["build", "test"]}, "state"))
    <state>
      <steps>
        <item>build</item>
        <item>test</item>
      </steps>
      <task>ship &lt;v2&gt;</task>
    </state>
    """
    if value is None:
        return ""
    out: list[str] = []
    _render(value, xml_name(root), 0, out)
    return "\n".join(out)
