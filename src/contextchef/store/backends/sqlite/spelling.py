"""Entries stored under a path that is not in NFC, for `db check` (see `store.paths`).

The store writes every new entry under the NFC spelling of its path and still finds an entry
stored earlier under another spelling (NFD, as macOS file names and some input methods give);
`check` names such entries so they can be renamed to one spelling. They are notes, not
problems: nothing is damaged, and every read and edit reaches them.
"""

from __future__ import annotations

import sqlite3

from contextchef.store.paths import non_nfc_paths

__all__ = ["spelling_notes"]

# Only paths with a character outside printable ASCII can be in another normal form.
_NON_ASCII = (
    "SELECT p.identity, e.namespace, e.path FROM entries e JOIN projects p "
    "ON p.id = e.project_id WHERE e.path GLOB '*[^ -~]*' ORDER BY 1, 2, 3"
)


def spelling_notes(conn: sqlite3.Connection, *, limit: int = 100) -> list[str]:
    """One line per entry whose path is not in NFC (at most `limit`)."""
    notes = []
    for identity, ns, path in conn.execute(_NON_ASCII):
        if non_nfc_paths([path]):
            notes.append(
                f"{identity}: {ns}/{path!r} is not in NFC; the store finds it by either "
                "spelling, but lists it as stored (rename it to its NFC spelling to tidy up)"
            )
            if len(notes) >= limit:
                break
    return notes
