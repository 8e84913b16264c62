"""Anthropic's wire form of a `ServerCompaction` request: `context_management` and its betas.

Server-side compaction is a beta of the Messages API: the payload carries a `context_management`
object (a list of *edits*; compaction is the `compact_20260112` edit) and a `betas` list naming
the beta flag of each edit, so it is for `client.beta.messages.create(**payload)`. A request with
a `native` config sends that object verbatim, with the betas its edits need.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from contextchef._jsonvalue import sorted_keys

if TYPE_CHECKING:
    from contextchef.selection.server_compaction import ServerCompaction

__all__ = ["compaction_keys"]

COMPACT_EDIT = "compact_20260112"
_BETA_FOR_EDIT = {COMPACT_EDIT: "compact-2026-01-12"}
_CONTEXT_MANAGEMENT_BETA = "context-management-2025-06-27"


def _edit(request: ServerCompaction) -> dict[str, Any]:
    """The compaction edit, its keys in sorted order."""
    edit: dict[str, Any] = {}
    if request.instructions is not None:
        edit["instructions"] = request.instructions
    if request.pause_after_compaction:
        edit["pause_after_compaction"] = True
    if request.trigger_tokens is not None:
        edit["trigger"] = {"type": "input_tokens", "value": request.trigger_tokens}
    edit["type"] = COMPACT_EDIT
    return edit


def compaction_keys(request: ServerCompaction) -> dict[str, Any]:
    """The request keys (`betas`, `context_management`, in sorted order) that ask for it."""
    if request.native is not None:
        config: dict[str, Any] = sorted_keys(request.native)
    else:
        config = {"edits": [_edit(request)]}
    edits = config.get("edits", [])
    types = [edit.get("type") for edit in edits if isinstance(edit, dict)]
    betas = sorted({_BETA_FOR_EDIT.get(str(t), _CONTEXT_MANAGEMENT_BETA) for t in types})
    return {"betas": betas, "context_management": config}
