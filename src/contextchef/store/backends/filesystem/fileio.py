"""File operations relative to directory handles, for `FileSystemBackend`.

Everything here works on an open directory descriptor (`dir_fd`) and a single name inside it,
with `O_NOFOLLOW`, so a symbolic link is never followed and no path can be swapped between a
check and a use. Errors about links and entry/directory clashes are raised as store errors
naming the entry; other `OSError`s are turned into `StoreError` by `translate_errors`.
"""

from __future__ import annotations

import errno
import io
import os
import stat
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from contextchef.errors import EntryExistsError, InvalidPathError, StoreError
from contextchef.store.backends.filesystem.sweep import TEMP_NAME

__all__ = [
    "DIR_FLAGS",
    "DIR_MODE",
    "atomic_replace",
    "entry_stat",
    "exclusive_create",
    "fsync_dir",
    "hard_link_refused",
    "linked_elsewhere",
    "make_private_dirs",
    "open_child",
    "read_regular",
    "refuse_hard_link",
    "regular_stat",
    "translate_errors",
]

DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_NOATIME = getattr(os, "O_NOATIME", 0)
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_CREATE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
DIR_MODE = 0o700
"""The mode of every directory the backend makes, whatever the umask."""


def _link_refused(where: str, cause: OSError) -> InvalidPathError:
    error = InvalidPathError(
        f"{where!r} is a symbolic link; the filesystem backend never follows links", path=where
    )
    error.__cause__ = cause
    return error


def open_child(parent: int, segment: str, *, create: bool, fsync: bool, where: str) -> int | None:
    """Open directory `segment` inside `parent` (making it, 0700, when `create`).

    None when it is missing (or is an entry) and `create` is false.
    """
    try:
        return os.open(segment, DIR_FLAGS, dir_fd=parent)
    except FileNotFoundError:
        if not create:
            return None
        made = _make_dir(parent, segment)
        if fsync:
            os.fsync(parent)
        fd = os.open(segment, DIR_FLAGS, dir_fd=parent)
        if made:
            _make_private(fd)
        return fd
    except OSError as exc:
        if exc.errno not in (errno.ELOOP, errno.ENOTDIR):
            raise
        if stat.S_ISLNK(os.stat(segment, dir_fd=parent, follow_symlinks=False).st_mode):
            raise _link_refused(where, exc) from exc
        if not create:
            return None
        raise EntryExistsError(
            f"{where!r} is an entry, so it cannot also be a directory", path=where
        ) from exc


def _make_dir(parent: int | None, name: str | Path) -> bool:
    """`mkdir` (mode 0700 before the umask); False when something already stands there."""
    try:
        os.mkdir(name, DIR_MODE, dir_fd=parent)
    except FileExistsError:
        return False  # another process made it first; it chose its mode
    return True


def _make_private(fd: int) -> None:
    """Set the directory open as `fd`, which this process just made, to exactly 0700: `mkdir`'s
    mode passes through the umask, which may have cleared the owner's bits (or, with
    `umask 000`, a parent made by `Path.mkdir(parents=True)` would be 0777)."""
    if hasattr(os, "fchmod") and stat.S_IMODE(os.fstat(fd).st_mode) != DIR_MODE:
        os.fchmod(fd, DIR_MODE)


def make_private_dirs(directory: Path) -> None:
    """Create `directory` (absolute) and every missing parent, each one this call makes 0700
    whatever the umask; existing ones are left as they are. Each new directory is reopened
    without following a link before its mode is set, so a link swapped in is never chmodded."""
    missing: list[Path] = []
    current = directory
    while not os.path.lexists(current):
        missing.append(current)
        if current.parent == current:
            break
        current = current.parent
    for path in reversed(missing):
        if not _make_dir(None, path):
            continue
        fd = os.open(path, DIR_FLAGS)
        try:
            _make_private(fd)
        finally:
            os.close(fd)


def fsync_dir(directory: Path) -> None:
    """Flush a directory's entries (a rename or a new name in it) to disk."""
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_all(fd: int, data: bytes, *, fsync: bool) -> None:
    """Write every byte of `data` to `fd` (a short write continues), then flush to disk when
    `fsync`."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
    if fsync:
        os.fsync(fd)


def _write_temp(dfd: int, temp: str, body: bytes, *, fsync: bool) -> None:
    """Write `body` to a new file `temp` (0600) in `dfd`, flushed when `fsync`; a failure
    leaves no temporary file behind."""
    fd = os.open(temp, _CREATE_FLAGS, 0o600, dir_fd=dfd)
    try:
        try:
            write_all(fd, body, fsync=fsync)
        finally:
            os.close(fd)
    except BaseException:
        with suppress(OSError):
            os.unlink(temp, dir_fd=dfd)
        raise


def atomic_replace(dfd: int, name: str, body: bytes, temp: str, *, fsync: bool, where: str) -> None:
    """Write `body` to `temp` (0600), flush it, rename it over `name`, flush the directory.

    An empty directory standing at `name` (left behind by deleted entries) gives way; a
    non-empty one raises `EntryExistsError`. The temporary file never outlives a failure.
    """
    _write_temp(dfd, temp, body, fsync=fsync)
    try:
        try:
            os.replace(temp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
        except OSError as exc:
            if exc.errno not in (errno.EISDIR, errno.ENOTEMPTY, errno.EEXIST):
                raise
            try:
                os.rmdir(name, dir_fd=dfd)
            except OSError:
                raise EntryExistsError(
                    f"{where!r} is a directory (it holds entries), so it cannot also be an entry",
                    path=where,
                ) from exc
            os.replace(temp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
    except BaseException:
        with suppress(OSError):
            os.unlink(temp, dir_fd=dfd)
        raise
    if fsync:
        os.fsync(dfd)


def exclusive_create(
    dfd: int, name: str, body: bytes, temp: str, *, fsync: bool, where: str
) -> bool:
    """Put `body` at `name` only when nothing is there; True when this call created it.

    The finished temporary file is hard-linked to `name` (`linkat`, which fails on an existing
    name), so the entry appears whole or not at all, whoever races. An empty directory left at
    `name` gives way as in `atomic_replace`. Where the filesystem has no hard links, the caller's
    namespace lock makes a check-then-rename just as exclusive.
    """
    _write_temp(dfd, temp, body, fsync=fsync)
    try:
        for _ in range(2):
            try:
                os.link(temp, name, src_dir_fd=dfd, dst_dir_fd=dfd, follow_symlinks=False)
                break
            except FileExistsError as exc:
                st = os.stat(name, dir_fd=dfd, follow_symlinks=False)
                if not stat.S_ISDIR(st.st_mode):
                    return False
                try:
                    os.rmdir(name, dir_fd=dfd)
                except OSError:
                    raise EntryExistsError(
                        f"{where!r} is a directory (it holds entries), so it cannot also be an "
                        "entry",
                        path=where,
                    ) from exc
            except OSError as exc:
                if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV):
                    raise
                if regular_stat(dfd, name) is not None:  # no hard links here: the lock decides
                    return False
                os.replace(temp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
                break
    finally:
        with suppress(OSError):
            os.unlink(temp, dir_fd=dfd)
    if fsync:
        os.fsync(dfd)
    return True


def read_regular(dfd: int, name: str, where: str) -> tuple[bytes, os.stat_result] | None:
    """The bytes and `fstat` of regular file `name`; None when missing or not a regular file.

    Opens with `O_NOATIME` where the platform allows it, so the backend's own reads (listing,
    search) leave the access times that eviction relies on alone, and `O_NONBLOCK`, so a FIFO
    planted under an entry's name cannot hang the read.
    """
    flags = _READ_FLAGS | _NOATIME
    while True:
        try:
            fd = os.open(name, flags, dir_fd=dfd)
            break
        except FileNotFoundError:
            return None
        except OSError as exc:
            if exc.errno == errno.EPERM and flags & _NOATIME:
                flags &= ~_NOATIME  # O_NOATIME needs ownership; fall back to a plain read
                continue
            if exc.errno == errno.ELOOP:
                raise _link_refused(where, exc) from exc
            raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):  # a directory, FIFO or device is not an entry
            return None
        if linked_elsewhere(dfd, st, lambda: os.fstat(fd)):
            raise hard_link_refused(where, st)
        with io.FileIO(fd, "r", closefd=False) as handle:
            return handle.readall(), st
    finally:
        os.close(fd)


def regular_stat(dfd: int, name: str) -> os.stat_result | None:
    """`lstat` of `name` in `dfd` when it is a regular file, else None."""
    try:
        st = os.stat(name, dir_fd=dfd, follow_symlinks=False)
    except FileNotFoundError:
        return None
    return st if stat.S_ISREG(st.st_mode) else None


def entry_stat(dfd: int, name: str) -> os.stat_result | None:
    """`regular_stat` of an entry file, None also for a hard link (see `linked_elsewhere`): like
    a symbolic link, it is not an entry of ours."""
    st = regular_stat(dfd, name)
    if st is None or linked_elsewhere(
        dfd, st, lambda: os.stat(name, dir_fd=dfd, follow_symlinks=False)
    ):
        return None
    return st


def refuse_hard_link(dfd: int, name: str, where: str) -> None:
    """Raise `hard_link_refused` when file `name` in `dfd` is a hard link."""
    st = regular_stat(dfd, name)
    if st is not None and entry_stat(dfd, name) is None:
        raise hard_link_refused(where, st)


def hard_link_refused(where: str, st: os.stat_result) -> InvalidPathError:
    return InvalidPathError(
        f"{where!r} is a hard link (the file has {st.st_nlink} names); the filesystem backend "
        "never reads or writes through links",
        path=where,
    )


def linked_elsewhere(dfd: int, st: os.stat_result, restat: Callable[[], os.stat_result]) -> bool:
    """Whether the regular file `st` in directory `dfd` has another name: a hard link, which
    could expose (or let us change) a file outside the root, so it is refused like a symbolic
    link.

    One exception, our own `create` in flight: `exclusive_create` links its finished temporary
    file to the entry's name, then unlinks the temporary name, so for a moment the entry has two
    names, both in `dfd`. A second name that is one of our temporary files there is ours. If
    none is seen, `restat` (the file again) tells whether that temporary name just went: a
    name present during the whole directory scan is always listed by it.
    """
    if st.st_nlink <= 1:
        return False
    if st.st_nlink == 2 and _temp_twin(dfd, st):
        return False
    return restat().st_nlink > 1


def _temp_twin(dfd: int, st: os.stat_result) -> bool:
    """Whether one of our temporary files in `dfd` is the same file as `st`."""
    try:
        with os.scandir(dfd) as scanner:
            for item in scanner:
                if not TEMP_NAME.fullmatch(item.name):
                    continue
                with suppress(OSError):
                    other = item.stat(follow_symlinks=False)
                    if (other.st_ino, other.st_dev) == (st.st_ino, st.st_dev):
                        return True
    except OSError:
        return False
    return False


@contextmanager
def translate_errors(ns: str, path: str, action: str) -> Iterator[None]:
    """Turn `OSError` into the store's errors and name the namespace on the store's own."""
    try:
        yield
    except StoreError as exc:
        if exc.namespace is None:
            exc.namespace = ns
        raise
    except OSError as exc:
        if exc.errno == errno.ENAMETOOLONG:
            raise InvalidPathError(
                f"{path!r} is too long for this filesystem", namespace=ns, path=path
            ) from exc
        raise StoreError(
            f"could not {action} {ns}/{path}: {exc.strerror or exc}", namespace=ns, path=path
        ) from exc
