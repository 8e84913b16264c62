"""The host's memory hooks, called through the effect system (so they may be coroutines).

`ask_veto` asks `on_memory_update(key, new_value, old_value)`: False, an exception, or an
awaitable the synchronous API cannot wait for all veto the write. `call_hook` calls a
notification hook (`on_memory_changed`, `on_memory_expired`); one that raises is logged and the
memory operation goes ahead.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from contextchef._effects import Call, Flow
from contextchef.errors import MemoryVetoedError

__all__ = ["UpdateHook", "ask_veto", "call_hook"]

logger = logging.getLogger("contextchef.memory")

UpdateHook = Callable[[str, str | None, str | None], object]


def ask_veto(hook: UpdateHook | None, key: str, value: str | None, old: str | None) -> Flow[None]:
    """Raise `MemoryVetoedError` unless `hook` (when set) lets the write of `key` happen."""
    if hook is None:
        return
    try:
        verdict = yield Call.of(hook, key, value, old, what="on_memory_update hook")
    except Exception:
        logger.warning(
            "on_memory_update raised for key %r; the write is vetoed", key, exc_info=True
        )
        raise MemoryVetoedError(key) from None
    if verdict is False:
        raise MemoryVetoedError(key)


def call_hook(name: str, callback: Callable[[Any], object] | None, argument: object) -> Flow[None]:
    """Call a notification hook; its failure is logged, never raised."""
    if callback is None:
        return
    try:
        yield Call.of(callback, argument, what=name)
    except Exception:
        logger.warning("%s raised; the memory operation went ahead", name, exc_info=True)
