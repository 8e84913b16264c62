"""Reported usage: the provider's input-token figure, tied to the compile it belongs to.

The host calls `report_token_usage(n)` with the input tokens the provider billed for the request
it just sent. That figure describes *that* payload, so it is kept with our own count of the same
payload (and its target and window). On a later compile the budget uses it as a calibration:
`fed = reported + (counted now - counted then)`, i.e. the provider's figure plus our estimate of
what was appended since. `usage_preference` then chooses:

- `"max"` (default): `max(counted, fed)` — whichever is larger, so a report never hides growth
  and an under-counting estimate is corrected;
- `"feed_first"`: `fed` — trust the provider's figure (plus what was appended);
- `"tokenizer_first"`: `counted` — our own count (the report is ignored for the budget).

A report stops applying when the window changes (an overflow landed) or when the next compile
is for another target (a provider's figure says nothing about another provider's payload).
"""

from __future__ import annotations

from dataclasses import dataclass

from contextchef.errors import ConfigError
from contextchef.selection.budget import UsagePreference

__all__ = ["Reported", "Usage"]


@dataclass(frozen=True, slots=True)
class Reported:
    """A reported figure and what we counted for the same payload (None: before any compile)."""

    tokens: int
    counted: int | None
    target: str | None
    window: str | None


@dataclass(frozen=True, slots=True)
class _Compiled:
    target: str
    counted: int
    window: str


class Usage:
    """The last compile's count and the host's report about it."""

    def __init__(self, preference: UsagePreference) -> None:
        self.preference: UsagePreference = preference
        self.reported: Reported | None = None
        self._last: _Compiled | None = None

    def compiled(self, target: str, counted: int, window: str) -> None:
        """Record what the compile that just finished counted (a report will refer to it)."""
        self._last = _Compiled(target, counted, window)

    def report(self, tokens: int) -> None:
        """Tie `tokens` (the provider's input figure) to the last compile."""
        if not isinstance(tokens, int) or isinstance(tokens, bool) or tokens < 0:
            raise ConfigError(f"reported token usage must be a non-negative int, got {tokens!r}")
        last = self._last
        if last is None:
            self.reported = Reported(tokens, None, None, None)
        else:
            self.reported = Reported(tokens, last.counted, last.target, last.window)

    def current(self, counted: int, target: str, window: str) -> int:
        """The usage the budget takes for a payload of `target` we count at `counted`."""
        reported = self.reported
        if reported is None or self.preference == "tokenizer_first":
            return counted
        if reported.window is not None and reported.window != window:
            self.reported = None
            return counted
        if reported.target is not None and reported.target != target:
            return counted
        appended = 0 if reported.counted is None else max(0, counted - reported.counted)
        fed = reported.tokens + appended
        return fed if self.preference == "feed_first" else max(counted, fed)

    def reset(self) -> None:
        self.reported = None
        self._last = None
