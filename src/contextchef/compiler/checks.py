"""`pipeline_checks=True`: invariants of an assembled compile, checked for the developer.

After assembly (slots included) three promises are checked:

- `pinned`: every pinned message of the history the compile started from is still there;
- `tool_pairs`: every tool call that had its result in that history still has both, call and
  result (a strategy or a slot that drops one half leaves a payload providers reject);
- `prefix_bytes`: every assembled message before the tail is byte-identical (canonical JSON) to
  the message at the same place in the history after overflow, an automatic cache breakpoint
  aside: only the tail may differ from what the history holds.

A violation is reported, never raised, and the payload is never changed. It is a development
aid (off by default): the checks walk the whole history every compile.
"""

from __future__ import annotations

from collections.abc import Sequence

from contextchef._memo import message_digest
from contextchef.events import PipelineInvariant
from contextchef.messages import Message
from contextchef.placement.breakpoints import AUTO_MARK

__all__ = ["check_assembly"]


def _digest(message: Message) -> bytes:
    if AUTO_MARK in message:
        message = {k: v for k, v in message.items() if k != AUTO_MARK}  # type: ignore[assignment]
    return message_digest(message)


def _calls_and_results(messages: Sequence[Message]) -> tuple[set[str], set[str]]:
    calls: set[str] = set()
    results: set[str] = set()
    for message in messages:
        for call in message.get("tool_calls") or ():
            calls.add(call["id"])
        if message["role"] == "tool":
            results.add(message["tool_call_id"])
    return calls, results


def check_assembly(
    target: str,
    started: Sequence[Message],
    history: Sequence[Message],
    assembled: Sequence[Message],
    tail_index: int | None,
) -> list[PipelineInvariant]:
    """The violations of one compile: `started` is the history the compile began with,
    `history` the one after overflow, `assembled` the messages handed to the adapter (their
    tail at `tail_index`)."""
    found: list[PipelineInvariant] = []
    present = {_digest(message) for message in assembled}
    for index, message in enumerate(started):
        if message.get("pinned") and _digest(message) not in present:
            found.append(
                PipelineInvariant(
                    target, "pinned", f"pinned history message {index} is missing", index
                )
            )
    calls, results = _calls_and_results(started)
    paired = calls & results
    kept_calls, kept_results = _calls_and_results(assembled)
    for call_id in sorted(paired):
        has_call, has_result = call_id in kept_calls, call_id in kept_results
        if has_call != has_result:
            half = "its result" if has_call else "its call"
            found.append(
                PipelineInvariant(target, "tool_pairs", f"tool call {call_id!r} lost {half}", None)
            )
    limit = tail_index if tail_index is not None else len(assembled)
    for index in range(min(limit, len(assembled))):
        message = assembled[index]
        if index < len(history) and (
            message is history[index] or _digest(message) == _digest(history[index])
        ):
            continue
        found.append(
            PipelineInvariant(
                target,
                "prefix_bytes",
                f"assembled message {index}, before the tail, differs from the history's",
                index,
            )
        )
        break
    return found
