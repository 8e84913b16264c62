"""What the vendored pydantic-ai tests import from pydantic-ai's own `tests/conftest.py`: the
`dirty_equals` matchers they use (`IsDatetime()`, `IsStr()`, `IsStr(regex=...)`,
`IsInstance(cls)`), written here so the suite needs no extra package. The tests
NOT_APPLICABLE.md lists are skipped with their reason."""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from tests.integrations.upstream.not_applicable import skip_listed


class _Matcher:
    def matches(self, other: Any) -> bool:
        raise NotImplementedError

    def __eq__(self, other: object) -> bool:
        return self.matches(other)

    def __ne__(self, other: object) -> bool:
        return not self.matches(other)

    __hash__ = None  # type: ignore[assignment]


class IsDatetime(_Matcher):
    def matches(self, other: Any) -> bool:
        return isinstance(other, datetime)

    def __repr__(self) -> str:
        return "IsDatetime()"


class IsStr(_Matcher):
    def __init__(self, *, regex: str | None = None) -> None:
        self.regex = regex

    def matches(self, other: Any) -> bool:
        return isinstance(other, str) and (
            self.regex is None or re.fullmatch(self.regex, other) is not None
        )

    def __repr__(self) -> str:
        return f"IsStr(regex={self.regex!r})"


class IsInstance(_Matcher):
    def __init__(self, expected: type) -> None:
        self.expected = expected

    def matches(self, other: Any) -> bool:
        return isinstance(other, self.expected)

    def __repr__(self) -> str:
        return f"IsInstance({self.expected.__name__})"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    skip_listed(items, "pydantic-ai", Path(__file__).parent)
