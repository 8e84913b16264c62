"""What the Agents SDK's own `tests/conftest.py` does that the vendored tests rely on, kept to
the minimum: no trace is exported (no network), and a real model client fails the test instead
of calling out (adapted from openai/openai-agents-python tests/conftest.py, MIT, see LICENSE).
The tests NOT_APPLICABLE.md lists are skipped with their reason."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from agents.models.openai_chatcompletions import OpenAIChatCompletionsModel
from agents.models.openai_responses import OpenAIResponsesModel
from agents.tracing import get_trace_provider

from tests.integrations.upstream.not_applicable import skip_listed


@pytest.fixture(autouse=True)
def no_tracing_export() -> Iterator[None]:
    provider: Any = get_trace_provider()
    before = provider._manual_disabled
    provider.set_disabled(True)
    yield
    provider._manual_disabled = before
    provider._refresh_disabled_flag()


@pytest.fixture(autouse=True)
def disable_real_model_clients(monkeypatch: pytest.MonkeyPatch) -> None:
    def failing_version(*args: Any, **kwargs: Any) -> Any:
        pytest.fail("Real models should not be used in tests!")

    for model in (OpenAIResponsesModel, OpenAIChatCompletionsModel):
        monkeypatch.setattr(model, "get_response", failing_version)
        monkeypatch.setattr(model, "stream_response", failing_version)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    skip_listed(items, "openai-agents", Path(__file__).parent)
