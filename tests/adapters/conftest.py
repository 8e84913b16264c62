"""Fixtures shared by the adapter tests."""

from __future__ import annotations

from typing import Any

import pytest

from contextchef.adapters import anthropic as anthropic_module
from contextchef.messages import Message


@pytest.fixture
def anthropic_conversions(monkeypatch: pytest.MonkeyPatch) -> list[Message]:
    """Every message the Anthropic adapter converts from now on, in order (its `_convert`
    spied on, still converting)."""
    converted: list[Message] = []
    real = anthropic_module._convert

    def counting(message: Message) -> Any:
        converted.append(message)
        return real(message)

    monkeypatch.setattr(anthropic_module, "_convert", counting)
    return converted
