"""Guardrails: an output-format instruction and a prefill, stored once and applied at compile.

They are stored, not applied, when set, so the order of the setter calls never matters.

The instruction goes where `placement` says. `"last_user"` (the default) stitches it into the
tail of the last user message, after the dynamic state, where it never changes the cached
prefix on any provider. `"system"` (the TypeScript reference's default, accepted for code that
passes it) makes it a system message at the very end of the messages, after the history; the
Anthropic and Gemini adapters move every system message into their top-level system
parameter, so there a change of guardrail changes the cached prefix. The prefill is
always the reply's opening, whatever the placement.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, get_args

from contextchef import prompts
from contextchef.errors import ConfigError

__all__ = ["GuardrailPlacement", "Guardrails", "make_guardrails"]

GuardrailPlacement = Literal["last_user", "system"]

_TAG = re.compile(r"^[A-Za-z_][A-Za-z0-9_.\-]*$")


@dataclass(frozen=True, slots=True)
class Guardrails:
    """`output_tag`: the reply must sit inside that XML tag. `prefill`: the reply starts so.
    `placement`: where the instruction goes (see the module docstring)."""

    output_tag: str | None = None
    prefill: str | None = None
    placement: GuardrailPlacement = "last_user"

    def instruction(self) -> str | None:
        """The instruction's text, if any."""
        return prompts.xml_output_instruction(self.output_tag) if self.output_tag else None


def make_guardrails(
    enforce_xml: Mapping[str, Any] | str | None,
    prefill: str | None,
    placement: object = None,
) -> Guardrails:
    """Check the options of `with_guardrails` and build the stored form (`placement` None:
    the default)."""
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
    if placement is None:
        placement = "last_user"
    if placement not in get_args(GuardrailPlacement):
        raise ConfigError(f"guardrail placement must be 'last_user' or 'system', got {placement!r}")
    return Guardrails(tag, prefill, placement)  # type: ignore[arg-type]
