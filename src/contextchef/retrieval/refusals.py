"""What the model reads when the store refuses a `context` tool call.

`store_refusal` turns a `StoreError` the model can act on (a capability the backend lacks, a bad
path, a busy store, a concurrent change, any other refusal) into `Error: …` text from
`contextchef.prompts`, naming the entry it is about as far as the error says; a corrupt store or
a failed migration is re-raised (the host's problem, not the model's).
"""

from __future__ import annotations

from contextchef import prompts
from contextchef.errors import (
    InvalidPathError,
    MigrationError,
    StoreBusyError,
    StoreCapabilityError,
    StoreConflictError,
    StoreCorruptError,
    StoreError,
)
from contextchef.store.paths import format_uri

__all__ = ["store_refusal"]


def store_refusal(exc: StoreError) -> str:
    """The `Error: …` text for a store error the model can act on; re-raises the others (a
    corrupt store or a failed migration is the host's problem, not the model's)."""
    if isinstance(exc, StoreCorruptError | MigrationError):
        raise exc
    if isinstance(exc, StoreCapabilityError):
        return prompts.capability_missing(f"context://{exc.namespace}/", exc.missing)
    if isinstance(exc, InvalidPathError):
        return prompts.bad_path(exc.path or "", str(exc))
    if isinstance(exc, StoreBusyError):
        return prompts.STORE_BUSY
    if isinstance(exc, StoreConflictError):
        return prompts.changed_concurrently(_target(exc))
    return prompts.store_refused(_target(exc), str(exc))


def _target(exc: StoreError) -> str:
    """The URI a store error is about, as far as it says."""
    if exc.namespace is None:
        return "the store"
    try:
        return format_uri(exc.namespace, exc.path or "")
    except InvalidPathError:
        return f"context://{exc.namespace}/"
