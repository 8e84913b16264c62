"""Guardrails: an output-format instruction and a prefill, stored once and applied at compile.

They are stored, not applied, when set, so the order of the setter calls never matters.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from contextchef import prompts
from contextchef.errors import ConfigError

__all__ = ["Guardrails", "make_guardrails"]

_TAG = re.compile(r"^[A-Za-z_][A-Za-z0-9_.\-]*$")


@dataclass(frozen=True, slots=True)
class Guardrails:
    """`output_tag`: the reply must sit inside that XML tag. `prefill`: the reply starts so."""

    output_tag: str | None = None
    prefill: str | None = None

    def instruction(self) -> str | None:
        """The text for the tail of the last user message, if any."""
        return prompts.xml_output_instruction(self.output_tag) if self.output_tag else None


def make_guardrails(enforce_xml: Mapping[str, Any] | str | None, prefill: str | None) -> Guardrails:
    """Check the options of `with_guardrails` and build the stored form."""
    tag: Any = None
    if isinstance(enforce_xml, str):
        tag = enforce_xml
    elif isinstance(enforce_xml, Mapping):
        unknown = set(enforce_xml) - {"output_tag"}
        if unknown:
            raise ConfigError(f"enforce_xml takes only 'output_tag', got {sorted(unknown)}")
        tag = enforce_xml.get("output_tag")
    elif enforce_xml is not None:
        raise ConfigError("enforce_xml must be {'output_tag': 'name'} or None")
    if tag is not None and (not isinstance(tag, str) or not _TAG.match(tag)):
        raise ConfigError(f"output_tag must be a valid XML tag name, got {tag!r}")
    if prefill is not None and (not isinstance(prefill, str) or not prefill):
        raise ConfigError("prefill must be a non-empty string or None")
    return Guardrails(tag, prefill)
