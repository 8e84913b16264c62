"""FileSystemBackend specifics: on-disk format, permissions, confinement, corruption, layouts."""

from __future__ import annotations

import errno
import json
import logging
import os
import stat
import time
from pathlib import Path

import pytest

from contextchef.errors import (
    ConfigError,
    EntryExistsError,
    InvalidPathError,
    StoreCorruptError,
    StoreError,
)
from contextchef.store import FileSystemBackend, Layout, Store, StoredEntry


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return tmp_path / ".context"


@pytest.fixture
def fs(root: Path) -> FileSystemBackend:
    return FileSystemBackend(root)


def test_json_envelope_uses_the_reference_format(fs: FileSystemBackend, root: Path) -> None:
    meta = {"tag": "x", "created_at": 1767225600.0, "updated_at": 1767225601.5, "bytes": 99}
    fs.write("notes", "dir/plan.md", StoredEntry("héllo\n", meta))
    raw = (root / "notes" / "dir" / "plan.md").read_bytes()
    assert (
        raw
        == (
            '{"content":"héllo\\n","meta":{"tag":"x","createdAt":1767225600000,'
            '"updatedAt":1767225601500}}'
        ).encode()
    )


def test_raw_namespaces_hold_plain_content(fs: FileSystemBackend, root: Path) -> None:
    Store(fs).namespace("vfs").put("vfs_x.txt", "plain text", {"tool": "grep"})
    Store(fs).namespace("archive").put("span.json", '{"version":1}')
    assert (root / "vfs" / "vfs_x.txt").read_text() == "plain text"
    assert (root / "archive" / "span.json").read_text() == '{"version":1}'
    got = fs.read("vfs", "vfs_x.txt")
    assert got is not None
    assert got.meta["bytes"] == 10
    assert got.meta["updated_at"] == pytest.approx(time.time(), abs=60)
    assert "tool" not in got.meta  # raw files keep content only


def test_layouts_are_configurable(root: Path) -> None:
    fs = FileSystemBackend(root, layouts={"vfs": "json", "logs": Layout(format="raw")})
    fs.write("vfs", "a", StoredEntry("x", {"k": 1}))
    fs.write("logs", "b", StoredEntry("y"))
    assert json.loads((root / "vfs" / "a").read_text())["meta"]["k"] == 1
    assert (root / "logs" / "b").read_text() == "y"
    with pytest.raises(ConfigError):
        FileSystemBackend(root, layouts={"vfs": "yaml"})  # type: ignore[dict-item]
    with pytest.raises(InvalidPathError):
        FileSystemBackend(root, layouts={"../x": "json"})


def test_permissions(fs: FileSystemBackend, root: Path) -> None:
    fs.write("notes", "dir/sub/a.md", StoredEntry("x"))
    for directory in (root, root / "notes", root / "notes" / "dir", root / "notes" / "dir" / "sub"):
        assert stat.S_IMODE(directory.stat().st_mode) == 0o700, directory
    assert stat.S_IMODE((root / "notes" / "dir" / "sub" / "a.md").stat().st_mode) == 0o600


def test_listing_skips_temp_files_dotfiles_symlinks_and_foreign_names(
    fs: FileSystemBackend, root: Path, tmp_path: Path
) -> None:
    fs.write("notes", "a.md", StoredEntry("a"))
    ns = root / "notes"
    (ns / ".tmp_123_leftover").write_text("torn")
    (ns / ".DS_Store").write_text("junk")
    (ns / ".hidden").mkdir()
    (ns / ".hidden" / "x.md").write_text('{"content":"x"}')
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "e.md").write_text('{"content":"e"}')
    (ns / "linkdir").symlink_to(tmp_path / "elsewhere")
    (ns / "link.md").symlink_to(ns / "a.md")
    (ns / "back\\slash").write_text('{"content":"b"}')
    assert [item.path for item in fs.list("notes")] == ["a.md"]
    assert list(fs.read_all("notes")) == ["a.md"]


def test_symlinks_are_never_followed(fs: FileSystemBackend, root: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text('{"content":"secret"}')
    fs.write("notes", "a.md", StoredEntry("a"))
    ns = root / "notes"
    (ns / "evil.md").symlink_to(secret)
    (ns / "evildir").symlink_to(tmp_path)
    with pytest.raises(InvalidPathError, match="symbolic link"):
        fs.read("notes", "evil.md")
    with pytest.raises(InvalidPathError, match="symbolic link") as info:
        fs.read("notes", "evildir/secret.txt")
    assert (info.value.namespace, info.value.path) == ("notes", "evildir")
    with pytest.raises(InvalidPathError, match="symbolic link"):
        fs.write("notes", "evildir/new.md", StoredEntry("x"))
    with pytest.raises(InvalidPathError):
        fs.get_physical_path("notes", "evildir/secret.txt")
    assert not (tmp_path / "new.md").exists()
    assert secret.read_text() == '{"content":"secret"}'
    # Writing over a link replaces the link itself, never its target.
    fs.write("notes", "evil.md", StoredEntry("replaced"))
    assert secret.read_text() == '{"content":"secret"}'
    assert fs.read("notes", "evil.md").content == "replaced"


def test_a_symlinked_namespace_directory_is_refused(root: Path, tmp_path: Path) -> None:
    (tmp_path / "target").mkdir()
    root.mkdir()
    (root / "notes").symlink_to(tmp_path / "target")
    fs = FileSystemBackend(root)
    with pytest.raises(InvalidPathError, match="symbolic link"):
        fs.write("notes", "a.md", StoredEntry("x"))
    with pytest.raises(InvalidPathError):
        fs.get_physical_path("notes", "a.md")
    assert list((tmp_path / "target").iterdir()) == []


def test_physical_path(fs: FileSystemBackend, root: Path) -> None:
    assert fs.get_physical_path("notes", "dir/a.md") == str(root / "notes" / "dir" / "a.md")
    with pytest.raises(InvalidPathError):
        fs.get_physical_path("notes", "../a.md")


def test_directories_are_recreated(fs: FileSystemBackend, root: Path) -> None:
    fs.write("notes", "dir/a.md", StoredEntry("a"))
    for path in sorted(root.rglob("*"), reverse=True):
        path.unlink() if path.is_file() else path.rmdir()
    root.rmdir()
    assert fs.read("notes", "dir/a.md") is None
    assert fs.list("notes") == []
    fs.write("notes", "dir/b.md", StoredEntry("b"))
    assert fs.read("notes", "dir/b.md").content == "b"


def test_entry_directory_conflicts(fs: FileSystemBackend) -> None:
    fs.write("notes", "a", StoredEntry("a"))
    with pytest.raises(EntryExistsError, match="'a' is an entry"):
        fs.write("notes", "a/b", StoredEntry("ab"))
    fs.write("notes", "d/x", StoredEntry("x"))
    with pytest.raises(EntryExistsError, match="is a directory"):
        fs.write("notes", "d", StoredEntry("d"))
    assert fs.read("notes", "a/b") is None
    assert fs.delete("notes", "d") is False
    # Once its entries are gone, an empty directory gives way.
    fs.delete("notes", "d/x")
    fs.write("notes", "d", StoredEntry("now a file"))
    assert fs.read("notes", "d").content == "now a file"


def test_corrupt_entries(
    fs: FileSystemBackend, root: Path, caplog: pytest.LogCaptureFixture
) -> None:
    fs.write("notes", "good.md", StoredEntry("fine"))
    (root / "notes" / "bad.md").write_text("{not json")
    (root / "notes" / "shape.md").write_text('{"content": 3}')
    (root / "notes" / "meta.md").write_text('{"content": "x", "meta": []}')
    (root / "vfs").mkdir()
    (root / "vfs" / "binary.txt").write_bytes(b"\xff\xfe\x00")
    for ns, path in (
        ("notes", "bad.md"),
        ("notes", "shape.md"),
        ("notes", "meta.md"),
        ("vfs", "binary.txt"),
    ):
        with pytest.raises(StoreCorruptError) as info:
            fs.read(ns, path)
        assert info.value.path == path
    with caplog.at_level(logging.WARNING, logger="contextchef.store.backends.filesystem.backend"):
        assert [item.path for item in fs.list("notes")] == ["good.md"]
    assert "bad.md" in caplog.text
    fs.write("notes", "bad.md", StoredEntry("repaired"))
    assert fs.read("notes", "bad.md").content == "repaired"


def test_special_files_are_not_entries(fs: FileSystemBackend, root: Path) -> None:
    fs.write("notes", "a.md", StoredEntry("a"))
    os.mkfifo(root / "notes" / "pipe")
    assert fs.read("notes", "pipe") is None  # and it did not block on the FIFO
    assert fs.exists("notes", "pipe") is False
    assert [item.path for item in fs.list("notes")] == ["a.md"]


def test_meta_keys_reserved_by_the_format(fs: FileSystemBackend) -> None:
    with pytest.raises(ConfigError, match="createdAt"):
        fs.write("notes", "a.md", StoredEntry("x", {"createdAt": 1}))


def test_times_round_trip_at_microsecond_precision(fs: FileSystemBackend) -> None:
    fs.write(
        "notes", "a.md", StoredEntry("x", {"created_at": 1767225600.123456, "updated_at": 2.5})
    )
    got = fs.read("notes", "a.md")
    assert got.meta["created_at"] == pytest.approx(1767225600.123456, abs=1e-6)
    assert got.meta["updated_at"] == 2.5


def test_missing_times_fall_back_to_the_file(fs: FileSystemBackend, root: Path) -> None:
    (root / "notes").mkdir(parents=True)
    (root / "notes" / "bare.md").write_text('{"content":"bare"}')
    got = fs.read("notes", "bare.md")
    assert got.meta["created_at"] == pytest.approx(time.time(), abs=60)
    assert got.meta["bytes"] == 4


def test_own_reads_do_not_move_access_times(fs: FileSystemBackend, root: Path) -> None:
    fs.write("notes", "a.md", StoredEntry("a"))
    file = root / "notes" / "a.md"
    # an atime before the mtime (an entry never touched, or touched by an older build, stands
    # in with its atime): relatime would refresh it on a plain read
    os.utime(file, (1_000_000_000.0, file.stat().st_mtime))
    fs.read("notes", "a.md")
    fs.list("notes")
    fs.search("notes", "a")
    if hasattr(os, "O_NOATIME"):
        assert (root / "notes" / "a.md").stat().st_atime == pytest.approx(1_000_000_000.0)
        assert fs.list("notes")[0].meta["accessed_at"] == pytest.approx(1_000_000_000.0)


def test_flat_legacy_vfs_directory(tmp_path: Path) -> None:
    flat = tmp_path / ".context_vfs"
    flat.mkdir()
    (flat / "vfs_0123456789abcdef.txt").write_text("offloaded")
    (flat / "unrelated.log").write_text("not ours")
    fs = FileSystemBackend(
        tmp_path / ".context", layouts={"vfs": Layout(format="raw", directory=flat, owns="vfs_")}
    )
    assert [item.path for item in fs.list("vfs")] == ["vfs_0123456789abcdef.txt"]
    assert fs.read("vfs", "vfs_0123456789abcdef.txt").content == "offloaded"
    path, _ = Store(fs).namespace("vfs").put_content("new output")
    assert (flat / path).read_text() == "new output"
    with pytest.raises(InvalidPathError, match="vfs_"):
        fs.write("vfs", "unrelated.log", StoredEntry("x"))


def test_os_errors_become_store_errors(
    fs: FileSystemBackend, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fs.write("notes", "a.md", StoredEntry("old"))

    def broken_disk(fd: int) -> None:
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(os, "fsync", broken_disk)
    with pytest.raises(StoreError, match=r"could not write notes/a\.md") as info:
        fs.write("notes", "a.md", StoredEntry("new"))
    assert isinstance(info.value.__cause__, OSError)
    assert info.value.namespace == "notes" and info.value.path == "a.md"
    monkeypatch.undo()
    assert fs.read("notes", "a.md").content == "old"
    assert sorted(os.listdir(root / "notes")) == ["a.md"]  # the temporary file was removed


def test_fsync_off_still_writes_atomically(root: Path) -> None:
    fs = FileSystemBackend(root, fsync=False)
    fs.write("notes", "a.md", StoredEntry("a"))
    fs.write("notes", "a.md", StoredEntry("b"))
    assert fs.read("notes", "a.md").content == "b"
    assert sorted(os.listdir(root / "notes")) == ["a.md"]
