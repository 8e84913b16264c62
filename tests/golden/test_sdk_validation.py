"""Every golden scenario, compiled to every built-in target, passes the official SDK's own
request-type validation (plus the API rules the types do not express, for Gemini)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import pytest

from contextchef import ContextChef
from tests.adapters.sdk_anthropic import validate_request as validate_anthropic
from tests.adapters.sdk_gemini import validate_gemini
from tests.adapters.sdk_openai import validate_chat, validate_responses
from tests.golden.scenarios import SCENARIOS, build

VALIDATORS: dict[str, Callable[[Mapping[str, Any]], Any]] = {
    "openai": validate_chat,
    "openai-responses": validate_responses,
    "anthropic": validate_anthropic,
    "gemini": validate_gemini,
}
MODEL_ARGS: dict[str, dict[str, Any]] = {
    "openai": {"model": "gpt-test"},
    "openai-responses": {"model": "gpt-test"},
    "anthropic": {"model": "claude-test", "max_tokens": 1024},
    "gemini": {},
}


@pytest.mark.parametrize("target", sorted(VALIDATORS))
@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_scenario_payload_passes_the_sdk_types(target: str, scenario: str) -> None:
    payload = build(scenario, ContextChef).compile(target=target)
    VALIDATORS[target]({**MODEL_ARGS[target], **payload})
