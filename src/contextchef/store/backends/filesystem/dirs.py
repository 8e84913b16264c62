"""`NamespaceDirs`: where each namespace of a `FileSystemBackend` lives, and the directory
handles every operation walks through.

Each namespace has a layout (see `layout`: a declared one, else the default for its name) and a
directory (the layout's own, else `<root>/<ns>`). An entry path is split into its parent
directories and its file name (checked against the path rules and the layout's file prefix);
the parents are opened one segment at a time from the namespace directory with `O_NOFOLLOW`
handles, so no symbolic link below it is ever followed. Missing directories are made on demand
(0700, the root's missing parents included) when the caller asks to create them.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from contextchef.errors import InvalidPathError
from contextchef.store.backends.filesystem.fileio import (
    DIR_FLAGS,
    fsync_dir,
    make_private_dirs,
    open_child,
    translate_errors,
)
from contextchef.store.backends.filesystem.layout import Format, Layout
from contextchef.store.paths import validate_entry_path, validate_namespace

__all__ = ["NamespaceDirs"]


class NamespaceDirs:
    """The layouts and directories of the namespaces under `root`, and handles to open them."""

    def __init__(
        self, root: Path, layouts: Mapping[str, Layout | Format] | None, *, fsync: bool
    ) -> None:
        self.root = root
        self.layouts = {
            validate_namespace(ns): Layout.coerce(layout) for ns, layout in (layouts or {}).items()
        }
        self._ns_dirs: dict[str, Path] = {}
        self._fsync = fsync

    def layout(self, ns: str) -> Layout:
        layout = self.layouts.get(ns)
        if layout is None:
            validate_namespace(ns)
            layout = self.layouts[ns] = Layout.default(ns)
        return layout

    def ns_dir(self, ns: str) -> Path:
        known = self._ns_dirs.get(ns)
        if known is None:
            directory = self.layout(ns).directory
            known = Path(directory).absolute() if directory is not None else self.root / ns
            self._ns_dirs[ns] = known
        return known

    def spot(self, ns: str, path: str) -> tuple[list[str], str]:
        """`(parent directories, file name)` of an entry path, after the path rules."""
        return self.split(self.layout(ns), path)

    @staticmethod
    def split(layout: Layout, path: str) -> tuple[list[str], str]:
        segments = validate_entry_path(path).split("/")
        name = segments.pop()
        if layout.owns is not None and not name.startswith(layout.owns):
            raise InvalidPathError(
                f"{path!r}: this namespace only holds files named {layout.owns}…", path=path
            )
        return segments, name

    @contextmanager
    def located(
        self, ns: str, path: str, action: str, *, create: bool = False
    ) -> Iterator[tuple[Layout, int, str] | None]:
        """`(layout, parent directory handle, file name)` of an entry, None when its directory
        does not exist (and `create` is false); `OSError`s become store errors."""
        layout = self.layout(ns)
        parents, name = self.split(layout, path)
        with translate_errors(ns, path, action), self.dirs(ns, parents, create=create) as fds:
            yield None if fds is None else (layout, fds[-1], name)

    @contextmanager
    def dirs(self, ns: str, parents: list[str], *, create: bool) -> Iterator[list[int] | None]:
        """Open the namespace directory and each parent below it, never following a link."""
        fds: list[int] = []
        try:
            top = self.open_ns_dir(ns, create=create)
            if top is None:
                yield None
                return
            fds.append(top)
            for depth, segment in enumerate(parents):
                where = "/".join(parents[: depth + 1])
                child = open_child(fds[-1], segment, create=create, fsync=self._fsync, where=where)
                if child is None:
                    yield None
                    return
                fds.append(child)
            yield fds
        finally:
            for fd in fds:
                os.close(fd)

    @contextmanager
    def ns_handle(self, ns: str, *, create: bool) -> Iterator[int | None]:
        """`open_ns_dir`, closed on leaving."""
        fd = self.open_ns_dir(ns, create=create)
        try:
            yield fd
        finally:
            if fd is not None:
                os.close(fd)

    def open_ns_dir(self, ns: str, *, create: bool) -> int | None:
        """A handle on the namespace directory (made when `create`), else None when absent."""
        directory = self.ns_dir(ns)
        try:
            return os.open(directory, DIR_FLAGS)
        except FileNotFoundError:
            if not create:
                return None
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                raise InvalidPathError(
                    f"the namespace directory {directory} is a symbolic link or not a directory",
                    namespace=ns,
                ) from exc
            raise
        make_private_dirs(self.root)
        make_private_dirs(directory)
        if self._fsync:
            fsync_dir(directory.parent)
        return os.open(directory, DIR_FLAGS)
