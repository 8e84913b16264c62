"""Framework keys as path segments: the plain-text shortcut encodes exactly as `quote` does."""

from __future__ import annotations

from urllib.parse import quote

from hypothesis import given, settings
from hypothesis import strategies as st

from contextchef.integrations._keys import decode_segment, encode_segment

ALPHABET = st.sampled_from([*"aZ09_-~.%=/ é日\x00", "\ud800"])


def _quoted(text: str) -> str:
    """The encoding by its definition (`quote`, a leading dot escaped, `%` for nothing)."""
    if text == "":
        return "%"
    encoded = quote(text, safe="", errors="surrogatepass")
    return "%2E" + encoded[1:] if encoded.startswith(".") else encoded


@settings(max_examples=300, deadline=None)
@given(st.text(ALPHABET, max_size=8))
def test_encoding_matches_its_definition_and_round_trips(text: str) -> None:
    encoded = encode_segment(text)
    assert encoded == _quoted(text)
    assert decode_segment(encoded) == text


def test_plain_keys_are_themselves_and_dots_and_marks_are_not() -> None:
    assert encode_segment("user-42_x.y~") == "user-42_x.y~"
    assert encode_segment(".hidden") == "%2Ehidden"
    assert encode_segment("=key") == "%3Dkey"
    assert decode_segment("%2Ehidden") == ".hidden"
