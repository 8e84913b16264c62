"""Reading entry files and walking a namespace's directory tree, without following links.

Every directory is opened relative to its parent's descriptor (`dir_fd`), so a link planted
inside the store never leads out of it; names that break the path rules (foreign files) and
entries that fail to decode are skipped while listing, with a warning for the latter.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator

from contextchef.errors import InvalidPathError, StoreCorruptError
from contextchef.store.backend import StoredEntry
from contextchef.store.backends.filesystem.fileio import DIR_FLAGS, linked_elsewhere, read_regular
from contextchef.store.backends.filesystem.layout import Layout, decode_entry, stat_meta
from contextchef.store.paths import validate_entry_path

__all__ = ["decode_file", "read_file", "walk_dir"]

logger = logging.getLogger("contextchef.store.backends.filesystem.walk")


def read_file(layout: Layout, dfd: int, name: str, ns: str, path: str) -> StoredEntry | None:
    found = decode_file(layout, dfd, name, ns, path)
    return None if found is None else found[0]


def decode_file(
    layout: Layout, dfd: int, name: str, ns: str, path: str
) -> tuple[StoredEntry, bytes] | None:
    """The entry in file `name` and the bytes it was decoded from (its version's input)."""
    found = read_regular(dfd, name, path)
    if found is None:
        return None
    data, st = found
    try:
        return decode_entry(layout, data, st), data
    except ValueError as exc:
        raise StoreCorruptError(
            f"{ns}/{path} is not a valid {layout.format} entry: {exc}", namespace=ns, path=path
        ) from exc


def walk_dir(
    ns: str, layout: Layout, dfd: int, base: str, prefix: str, stat_only: bool
) -> Iterator[tuple[str, StoredEntry]]:
    with os.scandir(dfd) as scanner:
        names = sorted(scanner, key=lambda item: item.name)
    for item in names:
        relative = base + item.name
        if item.name.startswith(".") or item.is_symlink() or not _listable(relative):
            continue
        if item.is_dir(follow_symlinks=False):
            directory = relative + "/"
            if not (directory.startswith(prefix) or prefix.startswith(directory)):
                continue
            try:
                child = os.open(item.name, DIR_FLAGS, dir_fd=dfd)
            except OSError:
                continue  # vanished or replaced by a link since the scan
            try:
                yield from walk_dir(ns, layout, child, directory, prefix, stat_only)
            finally:
                os.close(child)
            continue
        if not item.is_file(follow_symlinks=False) or not relative.startswith(prefix):
            continue
        if layout.owns is not None and not item.name.startswith(layout.owns):
            continue
        if stat_only:
            st = item.stat(follow_symlinks=False)
            if not _hard_link(dfd, item, st):
                yield relative, StoredEntry("", stat_meta(st))
            continue
        try:
            entry = read_file(layout, dfd, item.name, ns, relative)
        except StoreCorruptError as exc:
            logger.warning("skipping %s while listing: %s", relative, exc)
            continue
        except InvalidPathError as exc:  # a hard link (or a link swapped in since the scan)
            logger.warning("skipping %s while listing: %s", relative, exc)
            continue
        if entry is not None:
            yield relative, entry


def _hard_link(dfd: int, item: os.DirEntry[str], st: os.stat_result) -> bool:
    """Whether a file met while listing is a hard link, skipped like a symbolic link."""
    # `item.stat` is cached, so the second look is a fresh `lstat`.
    if not linked_elsewhere(dfd, st, lambda: os.stat(item.name, dir_fd=dfd, follow_symlinks=False)):
        return False
    logger.warning("skipping %s while listing: it is a hard link", item.name)
    return True


def _listable(path: str) -> bool:
    """Whether a name found on disk obeys the path rules (foreign files may not)."""
    try:
        validate_entry_path(path)
    except InvalidPathError:
        return False
    return True
