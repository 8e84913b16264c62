"""The processor under test in the vendored pydantic-ai tests: contextchef's `history_processor`
over a chef whose budget the tests' short conversations stay under, with the legacy tool
vocabulary (no `context` tool, so no store instruction is added to the messages). Such a chef
must hand pydantic-ai the history exactly as it came, which is what the no-op tests pin.
`contextchef_async_processor` is the same over an `AsyncContextChef` (it returns an awaitable)."""

from __future__ import annotations

from contextchef import AsyncContextChef, ContextChef
from contextchef.integrations.pydantic_ai import HistoryProcessor, history_processor


def contextchef_processor() -> HistoryProcessor:
    return history_processor(ContextChef(tools="legacy"))


def contextchef_async_processor() -> HistoryProcessor:
    return history_processor(AsyncContextChef(tools="legacy"))
