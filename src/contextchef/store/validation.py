"""What a caller may store: content that is valid Unicode text, and meta that is JSON.

Every store operation checks its input here before a backend sees it, so a lone surrogate, a
NaN, a set or a non-string key is a typed error at the call, never a half-written entry. `bytes`
and `accessed_at` are derived by the backend and dropped from caller meta; missing
`created_at`/`updated_at` are filled in with the store's clock.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

from contextchef._jsonvalue import MAX_DEPTH
from contextchef.errors import ConfigError, StoreError
from contextchef.store.backend import StoredEntry
from contextchef.store.paths import validate_entry_path

__all__ = ["DERIVED_META_KEYS", "check_content", "checked_snapshot", "prepare_meta"]

DERIVED_META_KEYS = frozenset({"bytes", "accessed_at"})
"""Meta keys a backend derives itself; callers' values for them are dropped."""


def check_content(content: object, *, ns: str, path: str | None) -> str:
    """Return `content` when it is a `str` that can be stored as UTF-8."""
    if not isinstance(content, str):
        raise ConfigError(f"entry content must be a str, not {type(content).__name__}")
    if not content.isascii():  # an ASCII str always encodes
        try:
            content.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise StoreError(
                f"content holds the lone surrogate U+{ord(content[exc.start]):04X} at index "
                f"{exc.start}; only valid Unicode text can be stored",
                namespace=ns,
                path=path,
            ) from exc
    return content


def _check_text(text: str, what: str) -> None:
    """Refuse a lone surrogate in a meta string (or key), as `check_content` does in content:
    no backend can store it as UTF-8, and the model may send one (a JSON `\\ud800` escape)."""
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise StoreError(
                f"{what} holds the lone surrogate U+{ord(text[exc.start]):04X} at index "
                f"{exc.start}; only valid Unicode text can be stored"
            ) from None


def _check_json(value: object, where: str, depth: int = 0) -> None:
    if depth > MAX_DEPTH:
        raise ConfigError(f"meta {where} is nested more than {MAX_DEPTH} levels deep (or cyclic)")
    if isinstance(value, str):
        _check_text(value, f"meta {where}")
        return
    if value is None or isinstance(value, bool):
        return
    if isinstance(value, int):
        if value.bit_length() > 2000:  # past Python's int-to-str limit, no backend can write it
            try:
                str(value)
            except ValueError:
                raise ConfigError(f"meta {where} is an integer too long to print") from None
        return
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ConfigError(f"meta {where} is {value!r}; JSON has no such number")
        return
    if isinstance(value, list):
        for index, item in enumerate(value):
            _check_json(item, f"{where}[{index}]", depth + 1)
        return
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                raise ConfigError(f"meta {where} has the non-string key {key!r}")
            _check_text(key, f"meta {where} key {key!r}")
            _check_json(item, f"{where}.{key}", depth + 1)
        return
    raise ConfigError(
        f"meta {where} is a {type(value).__name__}; meta values must be JSON "
        "(None, bool, int, float, str, list, dict)"
    )


def prepare_meta(meta: Mapping[str, Any] | None, now: float) -> dict[str, Any]:
    """Validate caller meta, drop derived keys and fill in missing timestamps."""
    if meta is None:
        return {"created_at": now, "updated_at": now}
    if type(meta) is not dict and not isinstance(meta, Mapping):
        raise ConfigError(f"meta must be a mapping, not {type(meta).__name__}")
    out: dict[str, Any] = {}
    for key, value in meta.items():
        if type(key) is not str or not key.isascii():  # else plainly fine: skip the calls
            if not isinstance(key, str):
                raise ConfigError(f"meta keys must be str, got {key!r}")
            _check_text(key, f"meta key {key!r}")
        if key in DERIVED_META_KEYS:
            continue
        if not (type(value) is str and value.isascii()) and not _plain_scalar(value):
            _check_json(value, repr(key))
        out[key] = value
    for key in ("created_at", "updated_at"):
        if key not in out:
            out[key] = now
        elif isinstance(out[key], bool) or not isinstance(out[key], int | float):
            raise ConfigError(f"meta {key!r} must be seconds since the epoch, got {out[key]!r}")
    return out


def _plain_scalar(value: object) -> bool:
    """True for the values `_check_json` certainly accepts without looking further (an ASCII
    str, None, a bool, a short int, a finite float); anything else goes through it, so every
    refusal keeps its one wording."""
    if isinstance(value, str):
        return value.isascii()
    if value is None or isinstance(value, int):
        return value is None or value.bit_length() <= 2000
    return isinstance(value, float) and math.isfinite(value)


def checked_snapshot(ns: str, data: object, clock: Callable[[], float]) -> dict[str, StoredEntry]:
    """`data` as `restore` writes it into `ns`: a mapping of valid entry paths to `StoredEntry`s
    whose content can be stored, each meta prepared (missing times filled in from `clock`)."""
    if not isinstance(data, Mapping):
        raise ConfigError(f"restore() takes a mapping of path to StoredEntry, got {data!r}")
    checked: dict[str, StoredEntry] = {}
    for path, entry in data.items():
        validate_entry_path(path)
        if not isinstance(entry, StoredEntry):
            raise ConfigError(f"snapshot value for {path!r} is not a StoredEntry")
        check_content(entry.content, ns=ns, path=path)
        checked[path] = StoredEntry(entry.content, prepare_meta(entry.meta, clock()))
    return checked
