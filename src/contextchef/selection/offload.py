"""The Offloader: tool results too long to keep inline go to `vfs/`, a preview stays.

A tool result longer than `threshold` characters is stored whole under a content-addressed name
(`vfs_<sha256[:16]>.txt`, so offloading the same output again is a no-op and the marker is
byte-stable across turns and processes) and replaced in the payload by a preview: the head and
the tail, snapped to line boundaries, around a notice that gives the `context://vfs/…` URI.

Beyond a plain head/tail cut, lines of the omitted middle that look like errors are kept in the
preview, within a bounded budget: the line a test run failed on is rarely in its last 2000
characters. They are recognised across ecosystems (see `_ERROR_PATTERNS`): Python exceptions
and pytest, JavaScript/TypeScript and npm, Rust, Go, the JVM, C compilers, and shells.
"""

from __future__ import annotations

import heapq
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic_core import CoreConfig, SchemaValidator, core_schema

from contextchef import prompts
from contextchef._config import options
from contextchef._effects import Emit, Flow
from contextchef.errors import ConfigError, InvalidPathError
from contextchef.events import OffloadCreated
from contextchef.store.core import StoreCore
from contextchef.store.offloads import Offloaded
from contextchef.store.paths import URI_PREFIX, content_path, validate_namespace

__all__ = ["ChefOffloader", "OffloadConfig", "offload_uri", "preview"]

_ERROR_PATTERNS = (
    # Python: a traceback's first line, its last (the exception: `ValueError: boom`,
    # `requests.exceptions.HTTPError: …`), and pytest's `E   ` detail lines and `FAILED` summary
    r"^Traceback \(most recent call last\)",
    r"^\s*(?:[A-Za-z_][\w]*\.)*[A-Z]\w*(?:Error|Exception|Exit|Interrupt)\b(?::|$)",
    r"^E\s{2,}\S",
    r"^(?:FAILED|ERROR)\b",
    # JavaScript / TypeScript: `TypeError: …` (above, also after `Uncaught `), tsc's
    # `error TS2345:`, npm's `npm ERR!` / `npm error`
    r"\b(?:Uncaught|Unhandled)\b.*\b\w*(?:Error|Exception)\b",
    r"\berror TS\d+:",
    r"^npm (?:ERR!|error)",
    # Rust: `error[E0382]: …`, `error: …`, `thread 'main' panicked at`
    r"^\s*error(?:\[E\d+\])?:",
    r"\bpanicked at\b",
    # Go: `panic: …`, `fatal error: …`, `--- FAIL: TestX`, `FAIL\tpkg`
    r"^(?:panic|fatal error):",
    r"^\s*--- FAIL\b",
    r"^FAIL\b",
    # Java / JVM: `java.lang.NullPointerException`, `Exception in thread "main" …`, `Caused by:`
    r"\b(?:[a-z_]\w*\.)+[A-Z]\w*(?:Exception|Error)\b",
    r"\bException in thread\b",
    r"^\s*Caused by:",
    # C / C++ / any compiler: `file.c:12:5: error: …`, `fatal error:`
    r"^\S+?:\d+(?::\d+)?:\s*(?:fatal )?error\b",
    # Shells and runners: `command not found`, non-zero exits, crashes
    r"\bcommand not found\b",
    r"\bexit(?:ed)?(?: with)? (?:code|status) [1-9]\d*\b",
    r"\bnon-zero exit\b",
    r"\breturned (?:exit status )?[1-9]\d*\b",
    r"(?i:\b(?:segmentation fault|core dumped)\b)",
    r"\*\*\* .*\bError [1-9]\d*\b",
    # Summaries: `3 failed`, `Build failed`, `2 errors`
    r"\b[1-9]\d* (?:failed|failing|errors?)\b",
    r"(?i:\b(?:build|tests?|command|job|step|compilation|installation) failed\b)",
    # Anything else that says so: `ERROR:`, `[error]`, `Error: …`, `FATAL`, assertion failures
    r"(?:^|[\s\[(])(?:error|fatal|critical)\b[\]:)]",
    r"\bassert(?:ion)?(?:Error| failed)\b",
)
_ERROR_LINE = re.compile("|".join(f"(?:{pattern})" for pattern in _ERROR_PATTERNS))
_ERROR_CANDIDATE = re.compile(_ERROR_LINE.pattern, re.MULTILINE)
"""A line that looks like an error in some ecosystem. Case matters where it tells an error from
noise (`ValueError:` is one, `valueerror` in prose is not); each alternative is anchored or
shaped enough that ordinary progress lines (`Compiling …`, `PASSED`, `ok`) do not match."""


@dataclass(frozen=True, slots=True)
class OffloadConfig:
    """When and how tool results are offloaded (`ContextChef(offload={...})`).

    `threshold`: results longer than this many characters are offloaded (None disables it);
    `head_chars` / `tail_chars`: how much of the start and the end the preview keeps;
    `error_chars`: the budget for error-looking lines from the omitted middle (0 disables);
    `namespace`: where the full outputs go.
    """

    threshold: int | None = 5000
    head_chars: int = 500
    tail_chars: int = 2000
    error_chars: int = 1500
    namespace: str = "vfs"

    def __post_init__(self) -> None:
        for name in ("head_chars", "tail_chars", "error_chars"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 0:
                raise ConfigError(f"offload {name} must be a non-negative int, got {value!r}")
        if self.threshold is not None and (
            not isinstance(self.threshold, int) or self.threshold < 0
        ):
            threshold = self.threshold
            raise ConfigError(
                f"offload threshold must be a non-negative int or None, got {threshold!r}"
            )
        try:
            validate_namespace(self.namespace)
        except InvalidPathError as exc:
            raise ConfigError(f"offload namespace: {exc}") from exc

    @classmethod
    def of(cls, value: OffloadConfig | Mapping[str, Any] | None) -> OffloadConfig:
        return options(cls, value, "offload")

    def wants(self, content: str) -> bool:
        """Whether `content` is long enough to offload (and a preview would be shorter)."""
        return (
            self.threshold is not None
            and len(content) > self.threshold
            and self.head_chars + self.tail_chars < len(content)
        )


def offload_uri(namespace: str, content: str) -> str:
    """The URI `content` is (or will be) stored under."""
    return f"{URI_PREFIX}{namespace}/{content_path(namespace, content)}"


def _head_end(content: str, limit: int) -> int:
    if limit <= 0:
        return 0
    cut = content.rfind("\n", 0, limit)
    return cut + 1 if cut >= 0 else limit


def _tail_start(content: str, limit: int) -> int:
    if limit <= 0:
        return len(content)
    start = len(content) - limit
    newline = content.find("\n", start)
    return newline + 1 if 0 <= newline < len(content) - 1 else start


_KEYWORDS = (
    "error",
    "exception",
    "exit",
    "interrupt",
    "fail",
    "traceback",
    "panic",
    "fatal",
    "critical",
    "assert",
    "returned",
    "command not found",
    "segmentation fault",
    "core dumped",
    "caused by",
    "npm ",
)
"""Every line `_ERROR_LINE` matches holds one of these once lowercased, or starts with `E`
(pytest's detail lines): tests/selection/test_offload_error_scan.py checks it pattern by
pattern. Scanning for a few literals runs at C speed, where the combined pattern would try its
thirty alternatives at every position of the text."""

_FOLDING = ("\u0130", "\u0131", "\u017f", "\u212a")
"""The non-ASCII characters the pattern's case-insensitive parts match with an ASCII letter
(İ ı ſ K): a line holding one is a candidate whatever its keywords."""


_SIFT = SchemaValidator(
    core_schema.str_schema(
        pattern="|".join((*_KEYWORDS, "\ne", "\u0131", "\u017f"))  # letters and spaces only
    ),
    CoreConfig(regex_engine="rust-regex"),
)
"""Whether a lowercased stretch of text holds a keyword, a line starting with `e`/`E` (its
newline included) or one of the folding characters that lowercase to themselves: a search for
many literals at once (pydantic-core's Rust regex, which finds literal alternatives with SIMD
in one pass), where Python's `re` would try every alternative at every position. It only sifts:
the stretches it passes are scanned exactly (`_scan`), so a false alarm costs time, not bytes.
`K` (Kelvin) is not needed here: it lowercases to `k`, and no case-insensitive part of
`_ERROR_LINE` holds a `k`."""

_COARSE, _FINE = 65536, 2048
"""The stretches `_candidate_lines` sifts: about this many characters, cut at line ends."""


def _candidate_lines(content: str, start: int, end: int) -> Iterator[tuple[int, int]]:
    """The (start, end) of each line of `content[start:end]` that may hold an error, in order.

    The middle is lowercased once and sifted (`_SIFT`) in stretches of whole lines, coarse
    then fine; only the stretches that hold a keyword are scanned line by line (`_scan`), so
    the middle of a 10 MiB log is neither split into lines nor searched once per keyword. A
    text whose lowercase form has another length (a rare character that lowercases to two)
    falls back to the pattern itself. The first line is always a candidate (it may begin
    mid-way, where `^` does not match, or with pytest's `E`).
    """
    if start >= end:
        return
    lowered = content.lower()  # whole, not sliced first: one copy, not two
    if len(lowered) != len(content):
        yield from _pattern_candidates(content, start, end)
        return
    line_end = _line_end(content, start, end)
    yield start, line_end
    folding = not lowered.isascii()
    for coarse_lo, coarse_hi in _sifted(content, lowered, line_end + 1, end, _COARSE):
        for lo, hi in _sifted(content, lowered, coarse_lo, coarse_hi, _FINE):
            yield from _scan(content, lowered, lo, hi, folding=folding)


def _sifted(content: str, lowered: str, lo: int, hi: int, size: int) -> Iterator[tuple[int, int]]:
    """The stretches of whole lines of `content[lo:hi]` (`lo` a line start), about `size`
    characters each, whose lowercase text (in `lowered`), with the newline before it, passes
    `_SIFT`."""
    while lo < hi:
        cut = content.find("\n", min(lo + size, hi), hi)
        cut = hi if cut < 0 else cut + 1
        if _SIFT.isinstance_python(lowered[max(lo - 1, 0) : cut]):
            yield lo, cut
        lo = cut


def _scan(
    content: str, lowered: str, lo: int, hi: int, *, folding: bool
) -> Iterator[tuple[int, int]]:
    """The lines of `content[lo:hi]` (`lo` a line start) that hold a keyword once lowercased
    (in `lowered`), start with `E`, or (`folding`) hold a folding character.

    Found by jumping between occurrences of the keywords, a heap giving the nearest."""
    # (text searched, needle, chars of the needle before the line it marks)
    finders: list[tuple[str, str, int]] = [(lowered, word, 0) for word in _KEYWORDS]
    finders.append((content, "\nE", 1))
    if folding:
        finders.extend((content, char, 0) for char in _FOLDING)
    pos = lo

    def look(index: int) -> int:
        """Where finder `index` next marks a line at or after `pos` (-1: nowhere)."""
        text, needle, lead = finders[index]
        found = text.find(needle, max(pos - lead, 0), hi)
        return found + lead if found >= 0 else -1

    upcoming = [(at, index) for index in range(len(finders)) if (at := look(index)) >= 0]
    heapq.heapify(upcoming)
    while upcoming and pos < hi:
        at, index = upcoming[0]
        if at < pos:  # inside a line already given: look again from where we are
            again = look(index)
            if again < 0:
                heapq.heappop(upcoming)
            else:
                heapq.heapreplace(upcoming, (again, index))
            continue
        line_start = content.rfind("\n", pos, at) + 1 or pos
        line_end = _line_end(content, at, hi)
        yield line_start, line_end
        pos = line_end + 1


def _line_end(content: str, at: int, end: int) -> int:
    """Where the line holding `at` ends (its newline), at most `end`."""
    found = content.find("\n", at, end)
    return end if found < 0 else found


def _pattern_candidates(content: str, start: int, end: int) -> Iterator[tuple[int, int]]:
    """`_candidate_lines` by the multi-line pattern itself, jumping from one match to the
    next (slower: it tries every alternative at every position)."""
    pos = start
    if start > 0 and content[start - 1] != "\n":
        line_end = _line_end(content, start, end)
        yield start, line_end
        pos = line_end + 1
    while pos < end and (found := _ERROR_CANDIDATE.search(content, pos, end)) is not None:
        line_start = max(content.rfind("\n", pos, found.start()) + 1, pos)
        line_end = _line_end(content, found.start(), end)
        yield line_start, line_end
        pos = line_end + 1


def _error_lines(content: str, start: int, end: int, first_line: int, budget: int) -> list[str]:
    """The error-looking lines of `content[start:end]`, numbered from `first_line`, in order,
    within `budget` characters; a line repeated word for word is kept once (a retry loop must
    not fill the budget). Each candidate is checked on its own line: a multi-line match may
    span a line break, which a line alone would not allow."""
    return _counted_error_lines(content, start, end, first_line, budget)[0]


def _counted_error_lines(
    content: str, start: int, end: int, first_line: int, budget: int
) -> tuple[list[str], int, int]:
    """`_error_lines`, and how far it counted lines: the number of the line at the offset
    returned (so the caller counts the rest of the text's lines from there, not again)."""
    kept: list[str] = []
    seen: set[str] = set()
    used = 0
    line_no, counted = first_line, start
    for line_start, line_end in _candidate_lines(content, start, end):
        line = content[line_start:line_end]
        if not _ERROR_LINE.search(line):
            continue
        line_no += content.count("\n", counted, line_start)
        counted = line_start
        text = line.strip()[:300]
        if text in seen:
            continue
        seen.add(text)
        entry = f"{line_no}: {text}"
        if used + len(entry) > budget:
            break
        kept.append(entry)
        used += len(entry) + 1
    return kept, line_no, counted


def preview(content: str, uri: str, config: OffloadConfig, vocabulary: prompts.Vocabulary) -> str:
    """The text that replaces an offloaded `content` in the payload (pure and deterministic)."""
    head_end = _head_end(content, config.head_chars)
    tail_start = max(head_end, _tail_start(content, config.tail_chars))
    head, tail = content[:head_end], content[tail_start:]
    first_middle_line = content.count("\n", 0, head_end) + 1
    budget = config.error_chars
    errors: list[str] = []
    line_no, counted = first_middle_line, head_end
    if budget:
        found = _counted_error_lines(content, head_end, tail_start, first_middle_line, budget)
        errors, line_no, counted = found
    shown = prompts.OFFLOAD_SHOWN[(bool(head), bool(tail))]
    notice = vocabulary.offload_notice(
        uri=uri,
        lines=line_no + content.count("\n", counted),
        chars=len(content),
        shown=shown,
        error_lines=len(errors),
    )
    parts = [head.rstrip("\n"), notice]
    if errors:
        parts.append(prompts.ERROR_LINES_HEADER + "\n" + "\n".join(errors))
    parts.append(tail.strip("\n"))
    return "\n".join(part for part in parts if part)


@dataclass(frozen=True, slots=True)
class ChefOffloader:
    """The `Offloader` a chef installs on its store: `store.offload(content)` stores like the
    automatic offloader (`config.namespace`, content-addressed) and returns the same `preview`,
    whatever the content's length (the threshold decides only for tool results); `events` gives
    the chef's handlers of an event by name (`offload:created`)."""

    config: OffloadConfig
    vocabulary: prompts.Vocabulary
    events: Callable[[str], tuple[Callable[[Any], Any], ...]]

    def offload(
        self,
        core: StoreCore,
        content: str,
        name: str | None,
        meta: Mapping[str, Any] | None,
    ) -> Flow[Offloaded]:
        if not isinstance(content, str):
            raise ConfigError(f"offload() takes a string, got {type(content).__name__}")
        if name is not None and not isinstance(name, str):
            raise ConfigError(f"offload() name must be a string, got {name!r}")
        if meta is not None and not isinstance(meta, Mapping):
            raise ConfigError(f"offload() meta must be a dict, got {meta!r}")
        ns = self.config.namespace
        kept = {**(meta or {}), **({"name": name} if name is not None else {})}
        put = yield from core.put(ns, None, content, kept or None)
        marker = preview(content, put.uri, self.config, self.vocabulary)
        if handlers := self.events("offload:created"):
            created = OffloadCreated(put.uri, ns, put.path, len(content), "manual", name)
            yield Emit(handlers, created)
        return Offloaded(put.uri, ns, put.path, marker, len(content))
