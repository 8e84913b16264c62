"""Writing a landed overflow back into the chef's history: a mixin of `_ChefBase`.

A compile whose overflow changed the history replaces the chef's history with the compacted
one, and records the replacement so that `set_history` re-applies it to a host that reloads its
full history (by content digests, so fresh dicts match). The compacted history was repaired
before, except the placeholders still standing in for results to come: their fixes stay.
"""

from __future__ import annotations

from dataclasses import replace

from contextchef._chef_parts import Compaction, landed, record
from contextchef._memo import ContentDigests
from contextchef._repair import waiting_placeholders
from contextchef.compiler.pipeline import CompileRuntime, CompileState, Payload
from contextchef.messages import Message

__all__ = ["WriteBack"]


class WriteBack:
    """`_land`, `_same` and `_forget_compactions` of `_ChefBase`."""

    _state: CompileState
    _runtime: CompileRuntime
    _compactions: list[Compaction]
    _digests: ContentDigests

    def _land(self, started: CompileState, payload: Payload) -> Payload:
        """Write a landed overflow result back into the chef's history, and record it for
        `set_history` to re-apply (unless opted out, or the history set while the compile ran
        is not the one it started from: same content, as a retry's `set_history` gives, is)."""
        report = payload.meta.overflow
        runner = self._runtime.janitor
        if report is None or not report.changed or runner is None:
            return payload
        if not runner.overflow.write_back or not self._same(self._state.history, started.history):
            return payload
        prefix, replacement = landed(started.history, report.history)
        if prefix:  # an empty prefix would match every history: nothing to re-apply
            digest = self._digests.of
            self._compactions = record(
                self._compactions,
                [digest(message) for message in prefix],
                replacement,
                tuple(digest(message) for message in replacement),
            )
        waiting = waiting_placeholders(started.history, started.repairs)
        placeholders = {id(started.history[index]): fix for index, fix in waiting.items()}
        repairs = tuple(fix for m in report.history if (fix := placeholders.get(id(m))) is not None)
        self._state = replace(self._state, history=report.history, repairs=repairs)
        return payload

    def _same(self, history: tuple[Message, ...], other: tuple[Message, ...]) -> bool:
        """Whether two histories have the same messages: the same objects, or equal content."""
        if history is other:
            return True
        digest = self._digests.of
        return len(history) == len(other) and all(
            a is b or digest(a) == digest(b) for a, b in zip(history, other, strict=True)
        )

    def _forget_compactions(self) -> None:
        """Drop the compaction records (and the digests memoised for them): a new window."""
        self._compactions = []
        self._digests = ContentDigests()
