"""What the history importers share: provider objects as dicts, attachments, the repair pass.

Importers accept plain dicts or the provider SDK's pydantic objects (dumped in JSON mode, so
bytes arrive as base64 strings). They return `ImportedHistory(system, history, fixes)` and, by
default, convert only: a piece of a conversation (one reply, whose tool results the host adds
next) is not a broken history, and the chef repairs the whole history it holds at every compile
anyway, reporting each fix in `payload.meta.repairs`. With `repair=True` the history goes
through `ensure_valid_history` here, and every repair is both returned in `fixes` and logged
as a warning, so none is ever silent.
"""

from __future__ import annotations

import logging
import mimetypes
from collections.abc import Mapping
from typing import Any, NamedTuple, cast

from contextchef._repair import HistoryFix, ensure_valid_history
from contextchef.adapters.content import split_data_url
from contextchef.errors import MessageError
from contextchef.messages import DocumentPart, ImagePart, Message

__all__ = ["ImportedHistory", "as_dict", "attachment", "finish"]


class ImportedHistory(NamedTuple):
    """What an importer returns: system messages, the history, and the repairs made to it."""

    system: list[Message]
    history: list[Message]
    fixes: list[HistoryFix]


def as_dict(value: Any, index: int | None = None, what: str = "message") -> dict[str, Any]:
    """A mapping or SDK model as a plain dict; `MessageError` for anything else."""
    if isinstance(value, Mapping):
        return dict(value)
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        result: dict[str, Any] = dump(mode="json", exclude_none=True)
        return result
    raise MessageError(
        f"a {what} must be a dict or an SDK object, got {type(value).__name__}", index=index
    )


def attachment(
    kind: str,
    *,
    url: str | None = None,
    data: str | None = None,
    media_type: str | None = None,
    filename: str | None = None,
) -> ImagePart | DocumentPart:
    """An IR image or document part; a base64 `data:` URL is split into media type and data.

    Raw base64 `data` without a media type gets one guessed from the filename (PDF when unknown,
    the only file type the OpenAI APIs take inline).
    """
    part: dict[str, Any] = {"type": "image" if kind == "image" else "document"}
    split = split_data_url(url) if url is not None else None
    if split is not None:
        media_type, data = split
        url = None
    if data is not None:
        if media_type is None:
            guessed = mimetypes.guess_type(filename or "")[0]
            media_type = guessed or ("image/png" if kind == "image" else "application/pdf")
        part["data"] = data
    elif url is not None:
        part["url"] = url
    if media_type is not None:
        part["media_type"] = media_type
    if filename:
        part["filename"] = filename
    return cast(ImagePart | DocumentPart, part)


def finish(
    system: list[Message], history: list[Message], *, repair: bool, logger: logging.Logger
) -> ImportedHistory:
    """Run the repair pass when asked (`repair=True`), logging each fix."""
    fixes: list[HistoryFix] = []
    if repair:
        history, fixes = ensure_valid_history(history)
        for fix in fixes:
            logger.warning(
                "imported history repaired at message %d: %s (%s)", fix.index, fix.kind, fix.detail
            )
    return ImportedHistory(system, history, fixes)
