"""Setting the history: a mixin of `_ChefBase`.

The host passes its whole history every turn (`set_history`) or only what is new
(`append_history`); either way only new or changed messages are validated, copied and repaired
(`MessageIntake`, `HistoryRepair`), and compactions written back earlier are re-applied. The
collector is paused over this stretch of our own code (see `contextchef._collector`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import Self

from contextchef._chef_parts import Compaction, as_messages
from contextchef._collector import collector_paused
from contextchef._memo import ContentDigests, MessageIntake
from contextchef._repair import HistoryRepair
from contextchef.messages import Message
from contextchef.pipeline import CompileState

__all__ = ["HistorySetters"]


class HistorySetters:
    """`set_history`, `append_history` and what both do with the messages they take."""

    _state: CompileState
    _compactions: list[Compaction]
    _digests: ContentDigests
    _history_intake: MessageIntake
    _history_repair: HistoryRepair

    def set_history(self, messages: Iterable[object]) -> Self:
        """The rolling conversation, as IR messages (see `contextchef.messages`).

        What providers would reject is repaired now (`ensure_valid_history`), and every compile
        reports the repairs in `payload.meta.repairs`. An overflow result written back earlier is
        re-applied when the history starts with the messages it compacted, recognised by their
        content: the same dicts, or fresh ones reloaded from a database or JSON.
        """
        given = as_messages(messages, "history")
        with collector_paused():
            self._hold_history(self._history_intake.take(given))
        return self

    def append_history(self, messages: Iterable[object]) -> Self:
        """Add messages at the end of the history: `set_history(previous + messages)`, where
        `previous` is the list the last `set_history` or `append_history` received, as it was
        then. The cheapest turn: earlier messages are not compared again, so edit one in place
        and `set_history` must see the whole list (which stays fast: it re-validates only
        what is new or changed)."""
        given = as_messages(messages, "history")
        with collector_paused():
            self._hold_history(self._history_intake.extend(given))
        return self

    def _hold_history(self, taken: list[Message]) -> None:
        """Make `taken` (the host's history as private copies) the history: re-apply the
        compactions that landed, then repair (incrementally: see `HistoryRepair`)."""
        for compaction in self._compactions:
            taken = compaction.apply(taken, self._digests)
        self._digests.sweep()
        history, repairs = self._history_repair.run(taken)
        self._state = replace(self._state, history=tuple(history), repairs=tuple(repairs))
