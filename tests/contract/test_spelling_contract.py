"""One entry per name however it is spelled in Unicode, on every backend, through both APIs.

New entries are written under the NFC spelling of their path; an entry stored earlier under the
NFD spelling (by a version that did not normalise, or another writer) stays reachable by the
NFC spelling, and edits reach it instead of making a second entry.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable
from typing import Any

from contextchef.store import StoredEntry
from contextchef.store.paths import non_nfc_paths

NFC = unicodedata.normalize("NFC", "café/résumé.md")
NFD = unicodedata.normalize("NFD", NFC)


def test_the_two_spellings_are_one_entry(store: Any) -> None:
    assert NFC != NFD
    notes = store.namespace("notes")
    assert notes.put(NFD, "one").path == NFC
    notes.put(NFC, "two")
    assert [item.path for item in notes.list()] == [NFC]
    assert notes.get(NFD).content == notes.get(NFC).content == "two"
    assert notes.create(NFD, "three") is False
    notes.append(NFD, "+")
    assert notes.get(NFC).content == "two+"
    assert notes.delete(NFD) is True
    assert notes.list() == []


def test_an_entry_stored_under_nfd_stays_reachable(
    backend: Any, make_store: Callable[..., Any]
) -> None:
    backend.write("notes", NFD, StoredEntry("old", {"created_at": 1.0, "updated_at": 1.0}))
    notes = make_store(backend).namespace("notes")
    assert notes.get(NFC).content == "old"
    assert notes.exists(NFC) is True
    notes.put(NFC, "new")
    notes.append(NFC, "+")
    notes.update(NFC, lambda entry: (entry.content + "!", None))
    assert notes.create(NFC, "dup") is False
    assert [item.path for item in notes.list()] == [NFD]  # still one entry, where it was
    assert notes.get(NFD).content == notes.get(NFC).content == "new+!"
    assert [item.path for item in notes.list("café/")] == [NFD]
    assert list(notes.entries(unicodedata.normalize("NFC", "café/"))) == [NFD]
    assert non_nfc_paths(item.path for item in notes.list()) == [NFD]
    assert notes.delete(NFC) is True
    assert notes.list() == [] and backend.read("notes", NFD) is None
