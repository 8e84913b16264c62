"""Dynamic state and guardrail options are validated when set."""

from __future__ import annotations

import pytest
from pydantic import BaseModel
from typing_extensions import TypedDict

from contextchef.errors import ConfigError, DynamicStateError
from contextchef.placement.guardrail import make_guardrails
from contextchef.placement.state import render_dynamic_state


class Task(BaseModel):
    goal: str
    done: bool = False


class Plan(TypedDict):
    steps: list[str]


def test_model_class_with_data_and_model_instance_render_the_same() -> None:
    a = render_dynamic_state(Task, {"goal": "g"})
    b = render_dynamic_state(Task(goal="g"))
    assert a == b
    assert a.xml == "<dynamic_state>\n  <done>false</done>\n  <goal>g</goal>\n</dynamic_state>"


def test_typed_dicts_validate_too() -> None:
    assert "<item>a</item>" in render_dynamic_state(Plan, {"steps": ["a"]}).xml
    with pytest.raises(DynamicStateError, match="steps"):
        render_dynamic_state(Plan, {"steps": "nope"})


def test_a_schema_pydantic_cannot_use_is_a_config_error() -> None:
    class Opaque:
        pass

    with pytest.raises(ConfigError, match="cannot use"):
        render_dynamic_state(Opaque, {"x": 1})


def test_invalid_data_names_the_field() -> None:
    with pytest.raises(DynamicStateError, match="goal: Field required"):
        render_dynamic_state(Task, {})


def test_bad_placement_and_ambiguous_calls_are_config_errors() -> None:
    with pytest.raises(ConfigError, match="placement"):
        render_dynamic_state(Task, {"goal": "g"}, placement="middle")
    with pytest.raises(ConfigError, match="not both"):
        render_dynamic_state(Task(goal="g"), {"goal": "h"})


@pytest.mark.parametrize(
    ("enforce_xml", "prefill", "fragment"),
    [
        ({"output_tag": "bad tag"}, None, "valid XML tag name"),
        ({"tag": "x"}, None, "only 'output_tag'"),
        (42, None, "enforce_xml must be"),
        (None, "", "non-empty string"),
    ],
)
def test_guardrail_options_are_checked(enforce_xml: object, prefill: object, fragment: str) -> None:
    with pytest.raises(ConfigError, match=fragment):
        make_guardrails(enforce_xml, prefill)  # type: ignore[arg-type]
