"""`cache_audit=True`: what in a compile's layout costs prompt-cache hits, one finding per problem.

The audit compares the payload with the previous compile of the same chef and target (see
`economics` for the parts and their order) and looks for:

- `state_in_system`: the dynamic state landed in the system part (Anthropic hoists a system
  message there; its text changes every turn, and everything after it is re-sent uncached);
- `timestamp_in_prefix`: a timestamp-looking string (an ISO date, a clock time, an epoch) in the
  tools or the system part, which is fine only as long as it never changes;
- `changed_prefix`: a byte changed since the previous compile before the part where that
  compile's tail began (the part expected to change), when nothing explains it (a first
  compile, an overflow, a new window, a memory refresh are deliberate breaks and are not
  findings);
- `breakpoint_after_volatile`: a breakpoint whose cached prefix holds content that changed since
  the previous compile, or that sits after the part holding the volatile tail.

Findings are for the host's developer, not the model: their text lives here, not in `prompts/`.
The audit never fails a compile.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from contextchef.cache.economics import canonical_text
from contextchef.cache.ledger import LedgerEntry
from contextchef.events import CacheFinding

__all__ = ["TIMESTAMP", "audit", "volatile_start"]

TIMESTAMP = re.compile(
    r"\b(?:19|20)\d\d-[01]\d-[0-3]\d(?:[T ][0-2]\d:[0-5]\d)?"  # ISO date, with a time or not
    r"|\b[0-2]?\d:[0-5]\d:[0-5]\d\b"  # a clock time with seconds
    r"|\b1[5-9]\d{8}(?:\d{3})?\b"  # a Unix time in seconds or milliseconds (2017-2033)
)
_REPORTED_CAP = 1024
"""Digests of scanned parts remembered per target, at most (then forgotten, and rescanned)."""
_TAIL_SEARCH = 8
"""How many parts from the end the tail is looked for in (it sits at or near the very end)."""


def _needle(text: str) -> str:
    """A stretch of `text` as it appears inside a JSON string (escaped, quotes dropped)."""
    return json.dumps(text[:200], ensure_ascii=False)[1:-1]


def volatile_start(entry: LedgerEntry, tail: str) -> int:
    """The index of the part holding the tail (the last part when there is no tail or it is not
    found): where the payload is expected to change next compile."""
    last = entry.count - 1
    if not tail or last < 0:
        return max(last, 0)
    needle = _needle(tail)
    first_message = sum(entry.sections[:3])
    for index in range(last, max(first_message, last - _TAIL_SEARCH) - 1, -1):
        if needle in canonical_text(entry.part(index)):
            return index
    return last


def _static_end(entry: LedgerEntry) -> int:
    """Where the tools and system part end, leading system-role messages included (OpenAI
    Chat keeps the system prompt among its messages)."""
    end = sum(entry.sections[:3])
    while end < entry.count:
        part = entry.part(end)
        if not isinstance(part, dict) or part.get("role") not in ("system", "developer"):
            break
        end += 1
    return end


def _where(entry: LedgerEntry, index: int) -> str:
    section, position = entry.locate(index)
    return f"{section} part {position}"


def audit(
    target: str,
    entry: LedgerEntry,
    previous: int | None,
    *,
    changed: int | None,
    deliberate: bool,
    previous_volatile: int | None,
    volatile: int,
    state_text: str | None,
    reported: set[bytes],
) -> list[CacheFinding]:
    """The findings of one compile (see the module docstring). `previous` is how many parts the
    previous compile had (None: there was none), `changed` the first part that differs from
    it; `deliberate` says the prefix was meant to break; `volatile` and `previous_volatile`
    are where each compile's tail begins; `state_text` is the dynamic state as rendered;
    `reported` holds the digests of parts already reported for a timestamp (it
    is updated), so a stable timestamp is reported once, not every compile."""
    findings: list[CacheFinding] = []
    if len(reported) > _REPORTED_CAP:  # a clock in the prompt makes a new part every compile
        reported.clear()
    static_end = _static_end(entry)
    state_part: int | None = None
    if state_text:
        needle = _needle(state_text)
        for index in range(static_end):
            if needle in canonical_text(entry.part(index)):
                state_part = index
                findings.append(
                    CacheFinding(
                        target,
                        "state_in_system",
                        f"the dynamic state is in the system part ({_where(entry, index)}): it "
                        "changes every turn, so nothing after it is served from the cache; "
                        "place it at the tail (placement='last_user')",
                        *entry.locate(index),
                    )
                )
                break
    drift = None
    if previous is not None and changed is not None and not deliberate:
        drift = _first_real_change(entry, previous, changed, previous_volatile)
    if drift is not None and drift != state_part:
        text = canonical_text(entry.part(drift))
        stamp = TIMESTAMP.search(text)
        if stamp is not None:
            reported.add(entry.digest(drift))
            message = (
                f"{_where(entry, drift)} changed since the previous compile and holds a "
                f"timestamp-looking string ({stamp.group(0)!r}): keep clock time out of the "
                "prefix, or move it to the tail"
            )
            findings.append(
                CacheFinding(target, "timestamp_in_prefix", message, *entry.locate(drift))
            )
        else:
            message = (
                f"{_where(entry, drift)} changed since the previous compile, before the part "
                "expected to change: the cached prefix ends there"
            )
            findings.append(CacheFinding(target, "changed_prefix", message, *entry.locate(drift)))
    if drift is None:
        findings.extend(_stable_timestamps(target, entry, static_end, reported, state_part))
    findings.extend(_late_breakpoints(target, entry, drift, volatile))
    return findings


def _first_real_change(
    entry: LedgerEntry, previous: int, changed: int, previous_volatile: int | None
) -> int | None:
    """`changed` when it lies before the part where the previous compile's tail began (the
    part expected to change); None otherwise."""
    limit = min(entry.count, previous)
    if previous_volatile is not None:
        limit = min(limit, previous_volatile)
    return changed if changed < limit else None


def _stable_timestamps(
    target: str, entry: LedgerEntry, static_end: int, reported: set[bytes], skip: int | None
) -> list[CacheFinding]:
    """A finding for the first tools or system part holding a timestamp not reported yet."""
    for index in range(static_end):
        digest = entry.digest(index)
        if index == skip or digest in reported:
            continue
        stamp = TIMESTAMP.search(canonical_text(entry.part(index)))
        reported.add(digest)
        if stamp is not None:
            message = (
                f"{_where(entry, index)} holds a timestamp-looking string ({stamp.group(0)!r}): "
                "the cached prefix breaks there whenever it changes"
            )
            return [CacheFinding(target, "timestamp_in_prefix", message, *entry.locate(index))]
    return []


def _late_breakpoints(
    target: str, entry: LedgerEntry, drift: int | None, volatile: int
) -> Sequence[CacheFinding]:
    """One finding for the first breakpoint after changed content or after the volatile tail."""
    for index in entry.marked:
        if (drift is not None and index >= drift) or index > volatile:
            why = (
                "content before it changed since the previous compile"
                if drift is not None and index >= drift
                else "it comes after the tail, which changes every turn"
            )
            message = (
                f"the breakpoint on {_where(entry, index)} caches a prefix the next request "
                f"cannot reuse: {why}"
            )
            return [
                CacheFinding(target, "breakpoint_after_volatile", message, *entry.locate(index))
            ]
    return []
