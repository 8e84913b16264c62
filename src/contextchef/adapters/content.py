"""Content helpers the target adapters share: data URLs, text-only renderings of parts.

Roles that take only text on a provider (system messages, tool results, Responses instructions)
keep an attachment as a short bracketed placeholder, so the model still knows one was there.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from contextchef import prompts

__all__ = ["attachment_placeholder", "data_url", "split_data_url", "text_only"]


def data_url(media_type: str, data: str) -> str:
    """A `data:` URL for base64 `data`."""
    return f"data:{media_type};base64,{data}"


def split_data_url(url: str) -> tuple[str, str] | None:
    """`(media_type, base64 data)` of a base64 `data:` URL, or None for any other URL."""
    if not url.startswith("data:"):
        return None
    header, sep, data = url[5:].partition(",")
    if not sep or not header.endswith(";base64"):
        return None
    return header[: -len(";base64")] or "application/octet-stream", data


def attachment_placeholder(part: Mapping[str, Any]) -> str:
    """The text that stands for an attachment where only text is allowed."""
    label = part.get("filename") or part.get("url") or part.get("media_type") or part["type"]
    return prompts.attachment_placeholder(part["type"], label)


def text_only(content: Any) -> str:
    """Content for roles that take only text: attachments become bracketed placeholders."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return "".join(
        part["text"] if part["type"] == "text" else attachment_placeholder(part) for part in content
    )
