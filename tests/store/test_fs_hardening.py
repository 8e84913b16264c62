"""FileSystemBackend hardening: hard links refused like symbolic links, private directories."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from contextchef.errors import InvalidPathError
from contextchef.store import FileSystemBackend, Store, StoredEntry

pytestmark = pytest.mark.skipif(os.name != "posix", reason="POSIX links and modes")

SECRET = '{"content":"secret"}'


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return tmp_path / ".context"


@pytest.fixture
def fs(root: Path) -> FileSystemBackend:
    return FileSystemBackend(root)


@pytest.fixture
def secret(tmp_path: Path) -> Path:
    path = tmp_path / "outside.txt"
    path.write_text(SECRET)
    return path


def test_a_planted_hard_link_is_never_read(fs: FileSystemBackend, root: Path, secret: Path) -> None:
    fs.write("notes", "a.md", StoredEntry("a"))
    os.link(secret, root / "notes" / "evil.md")
    with pytest.raises(InvalidPathError, match="hard link") as info:
        fs.read("notes", "evil.md")
    assert (info.value.namespace, info.value.path) == ("notes", "evil.md")
    with pytest.raises(InvalidPathError, match="hard link"):
        fs.read_versioned("notes", "evil.md")
    with pytest.raises(InvalidPathError, match="hard link"):
        fs.get_physical_path("notes", "evil.md")
    assert fs.exists("notes", "evil.md") is False
    assert [item.path for item in fs.list("notes")] == ["a.md"]
    assert list(fs.read_all("notes")) == ["a.md"]
    assert fs.search("notes", "secret") == []


def test_edits_never_write_through_a_hard_link(
    fs: FileSystemBackend, root: Path, secret: Path
) -> None:
    (root / "notes").mkdir(parents=True, exist_ok=True)
    os.link(secret, root / "notes" / "evil.md")
    store = Store(fs).namespace("notes")
    with pytest.raises(InvalidPathError, match="hard link"):
        store.append("evil.md", " appended")
    with pytest.raises(InvalidPathError, match="hard link"):
        store.update("evil.md", lambda entry: (entry.content + "!", None))
    assert secret.read_text() == SECRET
    # A plain write replaces the name, as over a symbolic link; the outside file is untouched.
    fs.write("notes", "evil.md", StoredEntry("mine"))
    assert fs.read("notes", "evil.md") == StoredEntry("mine", fs.read("notes", "evil.md").meta)
    assert secret.read_text() == SECRET
    assert secret.stat().st_nlink == 1


def test_raw_namespaces_skip_hard_links_when_listing(
    fs: FileSystemBackend, root: Path, secret: Path
) -> None:
    fs.write("vfs", "mine.txt", StoredEntry("mine"))
    os.link(secret, root / "vfs" / "evil.txt")
    assert [item.path for item in fs.list("vfs")] == ["mine.txt"]
    with pytest.raises(InvalidPathError, match="hard link"):
        fs.read("vfs", "evil.txt")


def test_version_files_are_never_appended_through_a_hard_link(
    fs: FileSystemBackend, root: Path, secret: Path
) -> None:
    fs.keep_versions("notes")
    os.link(secret, root / "notes" / ".versions" / ".v_a.md")
    with pytest.raises(InvalidPathError, match="hard link"):
        fs.write("notes", "a.md", StoredEntry("a"))
    assert secret.read_text() == SECRET


def test_a_create_in_flight_is_not_a_hard_link(fs: FileSystemBackend, root: Path) -> None:
    """`create` links its temporary file to the entry's name before unlinking it: for that
    moment (or for ever, if the writer was killed there) the entry's second name is ours."""
    fs.write("notes", "a.md", StoredEntry("a"))
    entry = root / "notes" / "a.md"
    os.link(entry, root / "notes" / f".tmp_{os.getpid()}_abcdef01_0")
    assert entry.stat().st_nlink == 2
    assert fs.read("notes", "a.md").content == "a"
    assert [item.path for item in fs.list("notes")] == ["a.md"]
    assert fs.exists("notes", "a.md")
    # A third name is not ours to explain.
    os.link(entry, root / "notes" / "other")
    with pytest.raises(InvalidPathError, match="hard link"):
        fs.read("notes", "a.md")


@pytest.fixture(params=[0o000, 0o022, 0o277])
def umask(request: pytest.FixtureRequest) -> Iterator[int]:
    previous = os.umask(request.param)
    try:
        yield request.param
    finally:
        os.umask(previous)


def test_created_directories_are_0700_whatever_the_umask(umask: int, tmp_path: Path) -> None:
    root = tmp_path / "a" / "b" / ".context"
    fs = FileSystemBackend(root)
    fs.write("notes", "dir/sub/x.md", StoredEntry("x"))
    fs.keep_versions("notes")
    fs.write("notes", "dir/sub/x.md", StoredEntry("y"))
    made = [tmp_path / "a", tmp_path / "a" / "b", root, root / "notes"]
    made += [root / "notes" / "dir", root / "notes" / "dir" / "sub"]
    made += [root / "notes" / ".versions", root / "notes" / ".versions" / "dir" / "sub"]
    for directory in made:
        assert stat.S_IMODE(directory.stat().st_mode) == 0o700, (oct(umask), directory)
    assert fs.read("notes", "dir/sub/x.md").content == "y"


def test_existing_directories_keep_their_mode(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o755)
    FileSystemBackend(shared / ".context").write("notes", "a.md", StoredEntry("a"))
    assert stat.S_IMODE(shared.stat().st_mode) == 0o755
    assert stat.S_IMODE((shared / ".context").stat().st_mode) == 0o700
