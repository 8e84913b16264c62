"""The serialized size of a message part, fast: what a cold compile's cache ledger needs.

`economics` defines a part's size by `json.dumps(part, ensure_ascii=False,
separators=(",", ":"), sort_keys=True)`. A first compile needs the size of every part (no text:
sizes are compared first, texts only when they agree), and the `json` module's C encoder is the
largest cost of a cold compile outside the adapters. pydantic-core (a dependency through
pydantic) serializes about 4x faster and spells strings, integers, booleans, null, lists and
dicts byte for byte as `json` does (key order aside, which a size ignores); it spells some floats
differently (`1e-05` vs `0.00001`). So its bytes are used only when they hold no float: with
digits and minus signs deleted, a number that is not an integer leaves `.`, `e`, `E`, `N`(aN) or
`I`(nfinity) right after the `:`, `,` or `[` that opens it (one `translate` and one substring
test; a string that merely looks like that, such as `"a:e"`, only costs the slow path). Parts
holding a `cache_control` key or a lone surrogate (which pydantic-core refuses) are measured by
`part_facts`, and so is everything if a probe at import finds that the installed pydantic-core
spells plain values differently.

Used for the messages section only: message parts are built by the adapters from the chef's
strict-JSON copies, so they hold no type the two serializers could render differently (a set, a
date, a model); tools, system and settings parts keep `part_facts`.
"""

from __future__ import annotations

from typing import Any

from pydantic_core import to_json

from contextchef.cache.economics import Facts, canonical_text, part_facts

__all__ = ["message_facts"]

_OPENS, _FLOATISH, _OTHER = 1, 2, 32
_TABLE = bytes(
    _OPENS if byte in b":,[" else _FLOATISH if byte in b".eENI" else _OTHER for byte in range(256)
)
_DIGITS = b"0123456789-"
_FLOAT_MARK = bytes((_OPENS, _FLOATISH))
_BREAKPOINT = b'"cache_control":'

_PROBE: Any = {
    "": [],
    "a": 'plain "quoted" \\ / \x00\x1f\x7f\b\f\n\r\t \u2028\u2029 é 😀 \U0010ffff',
    "b": [True, False, None, 0, -1, 2**70, -(10**40)],
    "c": {"nested": [{"x": {}}, []]},
    "\u00e9": "key",
}


def _spelled_alike() -> bool:
    try:
        return to_json(_PROBE) == canonical_text(_PROBE).encode("utf-8")
    except Exception:  # an unexpected pydantic-core: never trust it
        return False


_SPELLED_ALIKE = _spelled_alike()


def message_facts(part: Any) -> Facts:
    """`part_facts(part)` for a message part, from pydantic-core's bytes when they are sure to
    have `json`'s length (see the module docstring)."""
    if _SPELLED_ALIKE and type(part) is dict:  # a bare number would have no opener
        try:
            raw = to_json(part)
        except Exception:  # a lone surrogate, a value pydantic-core cannot serialize
            return part_facts(part)
        if _FLOAT_MARK not in raw.translate(_TABLE, _DIGITS) and _BREAKPOINT not in raw:
            return len(raw) + 1
    return part_facts(part)
