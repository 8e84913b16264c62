"""Framework keys (session ids, namespace labels, item keys) as store path segments, reversibly.

Frameworks allow any string where the store allows one plain path segment (see
`contextchef.store.paths`), so every key is percent-encoded: only ASCII letters, digits and
`_.-~` stay as they are, everything else (including `/`, `%`, `=` and non-ASCII, as UTF-8)
becomes `%XX`; a leading dot becomes `%2E` and the empty string `%`. The result is plain ASCII,
so the Unicode checks of the path rules have nothing to object to, and it decodes back exactly.
"""

from __future__ import annotations

import re
from urllib.parse import quote, unquote

from contextchef.errors import InvalidPathError
from contextchef.store.paths import MAX_SEGMENT_BYTES

__all__ = ["decode_segment", "encode_segment"]

EMPTY = "%"
"""The segment of the empty string (`quote` never makes a lone `%`)."""

_PLAIN = re.compile(r"[A-Za-z0-9_\-~][A-Za-z0-9_.\-~]*")
"""Text that encodes as itself (what `quote` leaves alone, no leading dot): returned as is."""


def encode_segment(text: str, *, what: str = "key") -> str:
    """`text` as one path segment; `InvalidPathError` when the encoding is over the limit."""
    if not isinstance(text, str):
        raise InvalidPathError(f"a {what} must be a str, not {type(text).__name__}")
    if len(text) <= MAX_SEGMENT_BYTES and _PLAIN.fullmatch(text):
        return text
    if text == "":
        return EMPTY
    encoded = quote(text, safe="", errors="surrogatepass")
    if encoded.startswith("."):
        encoded = "%2E" + encoded[1:]
    if len(encoded) > MAX_SEGMENT_BYTES:
        raise InvalidPathError(
            f"the {what} {text[:40]!r}… is {len(encoded)} bytes once percent-encoded; the store "
            f"allows {MAX_SEGMENT_BYTES}"
        )
    return encoded


def decode_segment(segment: str) -> str:
    """The text `encode_segment` was given."""
    if segment == EMPTY:
        return ""
    if "%" not in segment:
        return segment
    return unquote(segment, errors="surrogatepass")
