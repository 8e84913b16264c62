"""`Announcer`: emit a chef event from a synchronous method of a part (outside any flow).

The flows emit through the `Emit` effect, which their driver runs. A part's plain method
(`tools.check_tool_call`) has no driver: it calls the handlers itself, isolating their failures
like the drivers do. On `AsyncContextChef` a coroutine handler is scheduled on the running
event loop (it cannot be awaited from a synchronous method); with no running loop it is closed
and the refusal logged, as `drive_sync` does.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from typing import Any

from contextchef.events import Handlers

__all__ = ["Announcer"]

logger = logging.getLogger("contextchef.effects")


class Announcer:
    """Calls the chef's handlers of one event with its payload (see the module docstring)."""

    __slots__ = ("_asynchronous", "_handlers", "_pending")

    def __init__(self, handlers: Handlers, *, asynchronous: bool) -> None:
        self._handlers = handlers
        self._asynchronous = asynchronous
        self._pending: set[asyncio.Future[Any]] = set()

    def __call__(self, event: str, payload: object) -> None:
        for handler in self._handlers.for_event(event):
            try:
                outcome = handler(payload)
            except Exception as exc:
                logger.warning("event handler %r raised %r; carrying on", handler, exc)
                continue
            if inspect.isawaitable(outcome):
                self._schedule(handler, outcome)

    def _schedule(self, handler: object, outcome: Any) -> None:
        try:
            loop = asyncio.get_running_loop() if self._asynchronous else None
        except RuntimeError:
            loop = None
        if loop is None:
            if inspect.iscoroutine(outcome):
                outcome.close()
            logger.warning(
                "event handler %r returned an awaitable outside a running event loop; "
                "it was not run",
                handler,
            )
            return
        future = asyncio.ensure_future(outcome)
        self._pending.add(future)
        future.add_done_callback(self._done(handler))

    def _done(self, handler: object) -> Any:
        def done(future: asyncio.Future[Any]) -> None:
            self._pending.discard(future)
            if not future.cancelled() and future.exception() is not None:
                logger.warning(
                    "event handler %r raised %r; carrying on", handler, future.exception()
                )

        return done
