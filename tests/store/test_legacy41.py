"""`import_from_41` (issue 26, item 5): the TypeScript 4.1 `.context_memory/*.mem` files and the
Offloader's VFS files, written here in 4.1's format, land in the store; re-running changes
nothing; malformed and foreign files are reported as skipped, never imported half-way."""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path
from typing import Any

import pytest

from contextchef.errors import StoreError
from contextchef.memory import Memory
from contextchef.memory.entry import MEMORY_NAMESPACE
from contextchef.store import FileSystemBackend, InMemoryBackend, Store, import_from_41
from contextchef.store.backends.sqlite import SQLiteBackend

T0 = 1_735_689_600_000  # 2025-01-01T00:00:00Z in ms, as 4.1 wrote times
TS_TIME = 1_735_689_600.5  # mtime given to files whose names carry no time


def _mem_name(key: str) -> str:
    """4.1's file name for a key: Node's unpadded base64url, then `.mem`."""
    return base64.urlsafe_b64encode(key.encode()).decode().rstrip("=") + ".mem"


def _write(path: Path, data: bytes | str, *, mtime: float = TS_TIME) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    os.utime(path, (mtime, mtime))
    return path


MEMORIES: dict[str, dict[str, Any]] = {
    "user_name": {
        "value": "Ada Lovelace",
        "description": "preferred name",
        "createdAt": T0,
        "updatedAt": T0 + 60_000,
        "updateCount": 2,
    },
    "lang": {
        "value": "Python",
        "createdAt": T0 + 1000,
        "updatedAt": T0 + 1000,
        "updateCount": 1,
        "importance": 0.5,
        "expiresAtTurn": 40,
    },
    "project/build": {  # 4.1 keys were free text: a slash makes a nested store path
        "value": "make test",
        "createdAt": T0 + 2000,
        "updatedAt": T0 + 2000,
        "updateCount": 1,
        "expiresAt": 4_102_444_800_000,  # 2100
    },
    "日本語": {"value": "こんにちは 🌍", "createdAt": T0, "updatedAt": T0, "updateCount": 1},
}
VFS = {
    "vfs_1735689600123_9f86d081884c7d65.txt": "line 1\n" * 900,  # 4.1 name: time inside
    "vfs_2c26b46b68ffc68f.txt": "content-addressed output\n",  # 4.2 name
    "archive_8af9baa6cc1aad4f.txt": "[archived span — 2 message(s)]\nuser: hi\n",
    "sessions/s1/vfs_1735689700000_aa11.txt": "nested offload\n",
    "sessions/s2/notes.txt": "a file a custom adapter nested\n",
}


def build_41_directory(root: Path) -> Path:
    """A project directory as a 4.1 app leaves it: `.context_memory/` and `.context_vfs/`,
    with the scratch and bookkeeping files 4.1 wrote and a few damaged files."""
    mem = root / ".context_memory"
    for key, entry in MEMORIES.items():
        _write(mem / _mem_name(key), json.dumps(entry))
    _write(mem / "_index.json", json.dumps(sorted(MEMORIES)))
    _write(mem / _mem_name("broken"), '{"value": "cut off by a cra')  # truncated write
    _write(mem / _mem_name("no_value"), json.dumps({"createdAt": T0, "updateCount": 1}))
    _write(mem / _mem_name("bad_time"), json.dumps({"value": "x", "createdAt": "yesterday"}))
    _write(mem / "not-ours.mem", json.dumps({"value": "foreign"}))  # no key encodes to this
    _write(mem / f".tmp_4242_{_mem_name('user_name')}", json.dumps({"value": "half"}))
    _write(mem / _mem_name("../escape"), json.dumps({"value": "x", "updateCount": 1}))
    vfs = root / ".context_vfs"
    for name, content in VFS.items():
        _write(vfs / name, content)
    _write(vfs / "vfs_1735689800000_bb22.txt", b"\xff\xfe binary \x00")
    _write(vfs / ".tmp_4242_vfs_1.txt", "partial")
    return root


@pytest.fixture(params=["sqlite", "filesystem", "inmemory"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Store:
    """A target store: the machine's database, a 4.2 `.context` directory, or memory."""
    if request.param == "sqlite":
        backend = SQLiteBackend(tmp_path / "context.db", project="test:legacy41")
        request.addfinalizer(backend.close)
        return Store(backend, versioned=[MEMORY_NAMESPACE])
    if request.param == "filesystem":
        return Store(FileSystemBackend(tmp_path / ".context"))
    return Store(InMemoryBackend())


def _everything(store: Store) -> dict[str, dict[str, tuple[str, dict[str, Any]]]]:
    return {
        ns: {p: (e.content, dict(e.meta)) for p, e in store.namespace(ns).entries().items()}
        for ns in (MEMORY_NAMESPACE, "vfs", "archive")
    }


def test_a_41_directory_is_imported_with_its_meta(store: Store, tmp_path: Path) -> None:
    root = build_41_directory(tmp_path / "app")
    report = import_from_41(store, root, memory_namespace=MEMORY_NAMESPACE)

    created = sorted(e.uri for e in report.entries if e.action == "created")
    assert created == sorted(
        [f"context://memory/{key}" for key in MEMORIES]
        + [
            "context://vfs/vfs_1735689600123_9f86d081884c7d65.txt",
            "context://vfs/vfs_2c26b46b68ffc68f.txt",
            "context://archive/archive_8af9baa6cc1aad4f.txt",
            "context://vfs/sessions/s1/vfs_1735689700000_aa11.txt",
            "context://vfs/sessions/s2/notes.txt",
        ]
    )
    skipped = {s.source.name: s.reason for s in report.skipped}
    mem = root / ".context_memory"
    assert set(skipped) == {
        _mem_name("broken"),
        _mem_name("no_value"),
        _mem_name("bad_time"),
        "not-ours.mem",
        f".tmp_4242_{_mem_name('user_name')}",
        _mem_name("../escape"),
        "vfs_1735689800000_bb22.txt",
        ".tmp_4242_vfs_1.txt",
    }
    assert "not valid JSON" in skipped[_mem_name("broken")]
    assert "no string `value`" in skipped[_mem_name("no_value")]
    assert "createdAt" in skipped[_mem_name("bad_time")]
    assert "not the base64url encoding" in skipped["not-ours.mem"]
    assert "refused" in skipped[_mem_name("../escape")]
    assert "UTF-8" in skipped["vfs_1735689800000_bb22.txt"]
    assert all(s.source.exists() for s in report.skipped)  # nothing is deleted
    assert (mem / "_index.json").is_file()

    # The memory layer reads the imported entries as the 4.1 app saw them.
    memory = Memory(store)
    ada = memory.get("user_name")
    assert ada is not None
    assert (ada.value, ada.description, ada.update_count) == ("Ada Lovelace", "preferred name", 2)
    assert ada.created_at == pytest.approx(T0 / 1000)
    assert ada.updated_at == pytest.approx(T0 / 1000 + 60)
    lang = memory.get("lang")
    assert lang is not None and lang.expires_at_turn == 40
    build = memory.get("project/build")
    assert build is not None and build.expires_at == pytest.approx(4_102_444_800)
    assert memory.get("日本語") is not None
    assert store.namespace(MEMORY_NAMESPACE).get("lang").meta["importance"] == 0.5  # type: ignore[union-attr]

    # VFS files keep their content; a 4.1 name gives the creation time, else the file's mtime.
    old = store.namespace("vfs").get("vfs_1735689600123_9f86d081884c7d65.txt")
    assert old is not None and old.content == VFS["vfs_1735689600123_9f86d081884c7d65.txt"]
    new = store.namespace("vfs").get("vfs_2c26b46b68ffc68f.txt")
    assert new is not None and new.content == VFS["vfs_2c26b46b68ffc68f.txt"]
    if not isinstance(store.backend, FileSystemBackend):  # raw files' times come from stat()
        assert old.meta["created_at"] == pytest.approx(1_735_689_600.123)
        assert new.meta["created_at"] == pytest.approx(TS_TIME)
    else:  # a 4.2 `.context` directory: the envelope the TypeScript 4.2 library writes
        envelope = json.loads((tmp_path / ".context" / "memory" / "user_name").read_text())
        assert envelope == {
            "content": "Ada Lovelace",
            "meta": {k: v for k, v in MEMORIES["user_name"].items() if k != "value"},
        }
    assert (
        store.resolve("context://archive/archive_8af9baa6cc1aad4f.txt")
        == (VFS["archive_8af9baa6cc1aad4f.txt"])
    )


def test_running_the_import_again_changes_nothing(store: Store, tmp_path: Path) -> None:
    root = build_41_directory(tmp_path / "app")
    first = import_from_41(store, root, memory_namespace=MEMORY_NAMESPACE)
    before = _everything(store)

    again = import_from_41(store, root, memory_namespace=MEMORY_NAMESPACE)

    assert again.count("created") == again.count("updated") == 0
    assert again.count("unchanged") == first.count("created") == 9
    assert [s.source for s in again.skipped] == [s.source for s in first.skipped]
    assert _everything(store) == before
    if store.supports("history", MEMORY_NAMESPACE):  # no new version was recorded either
        assert len(store.namespace(MEMORY_NAMESPACE).history("user_name")) == 1


def test_a_newer_file_updates_and_a_newer_store_entry_is_kept(store: Store, tmp_path: Path) -> None:
    root = build_41_directory(tmp_path / "app")
    import_from_41(store, root, memory_namespace=MEMORY_NAMESPACE)
    mem = root / ".context_memory"
    newer = {**MEMORIES["user_name"], "value": "Ada King", "updatedAt": T0 + 120_000}
    _write(mem / _mem_name("user_name"), json.dumps(newer))
    Memory(store).set("lang", "Rust")  # edited in the store after the first import (now)

    report = import_from_41(store, root, memory_namespace=MEMORY_NAMESPACE)

    actions = {e.uri: e.action for e in report.entries}
    assert actions["context://memory/user_name"] == "updated"
    assert store.namespace(MEMORY_NAMESPACE).get("user_name").content == "Ada King"  # type: ignore[union-attr]
    assert "context://memory/lang" not in actions
    kept = [s.reason for s in report.skipped if s.source.name == _mem_name("lang")]
    assert kept and "was kept" in kept[0]
    assert store.namespace(MEMORY_NAMESPACE).get("lang").content == "Rust"  # type: ignore[union-attr]


def test_one_41_directory_can_be_named_directly(tmp_path: Path) -> None:
    root = build_41_directory(tmp_path / "app")
    store = Store(InMemoryBackend())
    report = import_from_41(store, root / ".context_memory", memory_namespace=MEMORY_NAMESPACE)
    assert report.count("created") == len(MEMORIES)
    assert all(e.uri.startswith("context://memory/") for e in report.entries)
    custom = import_from_41(
        store, tmp_path, memory_namespace=MEMORY_NAMESPACE, vfs_dir=root / ".context_vfs"
    )
    assert custom.count("created") == 5


def test_a_directory_without_41_data_is_refused(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    with pytest.raises(StoreError, match=r"no 4\.1 data"):
        import_from_41(Store(InMemoryBackend()), tmp_path, memory_namespace=MEMORY_NAMESPACE)
