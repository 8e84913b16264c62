"""Namespace and path rules, `context://` URIs and content-addressed names.

Paths reach the store from model output (the `context` tool addresses entries directly), so every
namespace and path is checked here before any backend sees it. The rules are the same for every
backend, so a key that works against the in-memory backend in tests also works on disk:

- a namespace is one plain segment;
- a path is `/`-separated segments; a trailing `/` (one empty last segment) means "directory";
- no segment is empty, `.` or `..`, starts with a dot (the filesystem backend keeps its scratch
  files there and never lists hidden files), or holds a backslash, a control character, a
  bidirectional-text override or a lone surrogate; a namespace also may not hold `:`;
- the same checks apply to the segment's NFKC form, so fullwidth lookalikes such as `．．` or
  `／` cannot turn into traversal in a tool that normalises Unicode;
- a segment is at most 255 UTF-8 bytes (the common filesystem limit), a namespace at most 128
  (so the content-addressed name still fits), a whole path at most 1024.

Nothing is decoded: `%2e%2e` is a literal name, never traversal.

**One spelling per name.** The store addresses an entry by its path's NFC form
(`entry_spellings`): `café.md` typed with a precomposed `é` or with `e` + U+0301 is one entry,
written under the precomposed spelling. Entries stored before normalisation (or by another
writer) under another spelling stay reachable: when the NFC spelling is not stored, the store
looks the entry up under the caller's own spelling, then under the NFD one, and reads, edits or
deletes the entry it finds there (never making a second one). Listing a prefix lists every
spelling of it. `non_nfc_paths` reports such entries (`contextchef db check` does); the
backends themselves keep whatever spelling they are given, byte for byte.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Callable, Iterable
from functools import lru_cache
from typing import NamedTuple

from contextchef.errors import InvalidPathError

__all__ = [
    "MAX_NAMESPACE_BYTES",
    "MAX_PATH_BYTES",
    "MAX_SEGMENT_BYTES",
    "URI_PREFIX",
    "ContextAddress",
    "content_path",
    "entry_spellings",
    "format_uri",
    "is_directory",
    "non_nfc_paths",
    "parse_uri",
    "prefix_spellings",
    "validate_entry_path",
    "validate_namespace",
    "validate_prefix",
]

URI_PREFIX = "context://"
MAX_SEGMENT_BYTES = 255
MAX_NAMESPACE_BYTES = 128
MAX_PATH_BYTES = 1024

# Bidirectional overrides and isolates reorder how a name is displayed ("Trojan source").
_BIDI_CONTROLS = frozenset(
    "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
)


_ASCII_BAD = re.compile(r"[\x00-\x1f\x7f\\/]")
_ASCII_BAD_NS = re.compile(r"[\x00-\x1f\x7f\\/:]")
_PLAIN_ENTRY_PATH = re.compile(
    rf"(?:(?!\.)[^\x00-\x1f\x7f\\/]{{1,{MAX_SEGMENT_BYTES}}}+/)*+"
    rf"(?!\.)[^\x00-\x1f\x7f\\/]{{1,{MAX_SEGMENT_BYTES}}}+"
)
"""An ASCII entry path every rule accepts: segments of 1-255 allowed characters, none starting
with a dot (which also rules out `.` and `..`); anything else gets the full check and its
message. Possessive quantifiers: a segment ends only at a `/`, so nothing is worth retrying, and
a refused path costs one pass."""


class ContextAddress(NamedTuple):
    """A parsed `context://<ns>/<path>` URI."""

    ns: str
    path: str


def _segment_problem(segment: str, *, namespace: bool) -> str | None:
    """Why `segment` is not allowed, or None when it is fine."""
    if segment == "":
        return "is empty"
    if segment in (".", ".."):
        return f"is {segment!r}, which would leave its directory"
    if segment.startswith("."):
        return "starts with a dot (hidden names are reserved for the backend's own files)"
    limit = MAX_NAMESPACE_BYTES if namespace else MAX_SEGMENT_BYTES
    if (
        segment.isascii()
        and len(segment) <= limit
        and (_ASCII_BAD_NS if namespace else _ASCII_BAD).search(segment) is None
    ):
        return None  # the common case, checked fast; NFKC leaves ASCII unchanged
    for char in segment:
        if char == "\\":
            return "contains a backslash"
        if char == "/" or (namespace and char == ":"):
            return f"contains {char!r}"
        category = unicodedata.category(char)
        if category == "Cc":
            return f"contains the control character U+{ord(char):04X}"
        if category == "Cs":
            return f"contains the lone surrogate U+{ord(char):04X}"
        if char in _BIDI_CONTROLS:
            return f"contains the bidirectional control U+{ord(char):04X}"
    size = len(segment.encode("utf-8"))
    if size > limit:
        return f"is {size} UTF-8 bytes long; the limit is {limit}"
    folded = unicodedata.normalize("NFKC", segment)
    if folded != segment:
        problem = _segment_problem(folded, namespace=namespace)
        if problem is not None:
            return f"normalises (NFKC) to {folded!r}, which {problem}"
    return None


def _check_path(path: str, *, directory_ok: bool, empty_ok: bool, what: str) -> None:
    if path == "":
        if empty_ok:
            return
        raise InvalidPathError(f"the {what} is empty", path=path)
    size = len(path.encode("utf-8", "surrogatepass"))
    if size > MAX_PATH_BYTES:
        raise InvalidPathError(
            f"the {what} is {size} UTF-8 bytes long; the limit is {MAX_PATH_BYTES}", path=path
        )
    segments = path.split("/")
    if segments[-1] == "" and len(segments) > 1:
        if not directory_ok:
            raise InvalidPathError(
                f"{what} {path!r} ends with '/', which names a directory, not an entry", path=path
            )
        segments.pop()
    for index, segment in enumerate(segments):
        problem = _segment_problem(segment, namespace=False)
        if problem is not None:
            raise InvalidPathError(
                f"{what} {path!r}: segment {index + 1} ({segment!r}) {problem}", path=path
            )


def _require_str(value: object, what: str) -> str:
    if not isinstance(value, str):
        raise InvalidPathError(f"a {what} must be a str, not {type(value).__name__}")
    return value


def validate_namespace(ns: str) -> str:
    """Return `ns` when it is one plain segment; raise `InvalidPathError` naming the problem."""
    return _valid_namespace(_require_str(ns, "namespace"))


def validate_entry_path(path: str) -> str:
    """Return `path` when it names an entry (not a directory); else raise `InvalidPathError`."""
    if type(path) is str:  # the common case, one call fewer (checked on every store call)
        return _valid_entry_path(path)
    return _valid_entry_path(_require_str(path, "path"))


def validate_prefix(prefix: str) -> str:
    """Return `prefix` when it is a valid listing prefix (`""`, `dir/`, `dir/na`…)."""
    return _valid_prefix(_require_str(prefix, "prefix"))


# Validation results are cached: the same few paths are checked on every call.


@lru_cache(maxsize=1024)
def _valid_namespace(ns: str) -> str:
    problem = _segment_problem(ns, namespace=True)
    if problem is not None:
        raise InvalidPathError(f"namespace {ns!r} {problem}", namespace=ns)
    return ns


@lru_cache(maxsize=32768)
def _valid_entry_path(path: str) -> str:
    if path.isascii() and len(path) <= MAX_PATH_BYTES and _PLAIN_ENTRY_PATH.fullmatch(path):
        return path  # the common case in one C-level match (NFKC leaves ASCII unchanged)
    _check_path(path, directory_ok=False, empty_ok=False, what="path")
    return path


@lru_cache(maxsize=1024)
def _valid_prefix(prefix: str) -> str:
    _check_path(prefix, directory_ok=True, empty_ok=True, what="prefix")
    return prefix


@lru_cache(maxsize=32768)
def _spellings(path: str, validate: Callable[[str], str]) -> tuple[str, ...]:
    validate(path)
    if path.isascii():
        return (path,)  # the common case: ASCII has one spelling
    forms = (unicodedata.normalize("NFC", path), path, unicodedata.normalize("NFD", path))
    return tuple(form for form in dict.fromkeys(forms) if _valid(form, validate))


def _valid(path: str, validate: Callable[[str], str]) -> bool:
    """Whether `path` passes `validate` (a normal form may be longer than the limits)."""
    try:
        validate(path)
    except InvalidPathError:
        return False
    return True


def entry_spellings(path: str) -> tuple[str, ...]:
    """The spellings an entry path is looked up under: its NFC form first (the one new entries
    are written under), then the caller's own spelling and the NFD form where they differ; a
    1-tuple for ASCII. A form the rules refuse (NFD may pass the byte limits where NFC does
    not) is left out. Raises `InvalidPathError` like `validate_entry_path`."""
    if type(path) is str:
        return _spellings(path, validate_entry_path)
    return _spellings(_require_str(path, "path"), validate_entry_path)


def prefix_spellings(prefix: str) -> tuple[str, ...]:
    """`entry_spellings` of a listing prefix (`validate_prefix`'s rules)."""
    return _spellings(_require_str(prefix, "prefix"), validate_prefix)


def non_nfc_paths(paths: Iterable[str]) -> list[str]:
    """The paths of `paths` that are not in NFC: entries stored under a spelling the store no
    longer writes (see the module's "One spelling per name")."""
    return [p for p in paths if not p.isascii() and not unicodedata.is_normalized("NFC", p)]


def is_directory(path: str) -> bool:
    """A directory is the namespace root (`""`) or a path ending in `/`."""
    return path == "" or path.endswith("/")


def format_uri(ns: str, path: str) -> str:
    """`context://<ns>/<path>`; an empty or `/`-terminated path names a directory."""
    return _valid_uri(validate_namespace(ns), _require_str(path, "path"))


@lru_cache(maxsize=4096)
def _valid_uri(ns: str, path: str) -> str:
    _check_path(path, directory_ok=True, empty_ok=True, what="path")
    return f"{URI_PREFIX}{ns}/{path}"


def parse_uri(uri: object) -> ContextAddress | None:
    """Split a `context://<ns>/<path>` URI; None for anything else.

    "Anything else" includes a foreign scheme, a missing namespace or path
    (`context://notes/` has no path) and any namespace or path the rules above reject.
    """
    if not isinstance(uri, str) or not uri.startswith(URI_PREFIX):
        return None
    rest = uri[len(URI_PREFIX) :]
    ns, slash, path = rest.partition("/")
    if not slash or not ns or not path:
        return None
    try:
        validate_namespace(ns)
        _check_path(path, directory_ok=True, empty_ok=False, what="path")
    except InvalidPathError:
        return None
    return ContextAddress(ns, path)


def content_path(ns: str, content: str) -> str:
    """The content-addressed name `<ns>_<first 16 hex of sha256(UTF-8 content)>.txt`.

    The same scheme as the TypeScript reference, so offload markers and URIs are byte-stable
    across processes and across the two implementations.
    """
    digest = hashlib.sha256(content.encode("utf-8")).hexdigest()
    return f"{ns}_{digest[:16]}.txt"
