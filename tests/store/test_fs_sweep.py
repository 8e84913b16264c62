"""`FileSystemBackend` removes its own stale temporary files when it opens, and nothing else."""

from __future__ import annotations

import os
import time
from pathlib import Path

from contextchef.store.backends.filesystem import FileSystemBackend
from contextchef.store.backends.filesystem.sweep import GRACE_S


def test_only_our_old_temp_files_are_swept(tmp_path: Path) -> None:
    root = tmp_path / "store"
    deep = root / "notes" / "a" / "b"
    deep.mkdir(parents=True)
    old = time.time() - GRACE_S - 60
    stale = deep / ".tmp_1234_deadbeef_7"
    fresh = deep / ".tmp_1234_deadbeef_8"
    foreign = [deep / ".tmp_upload", root / "notes" / "x.tmp", deep / ".tmp_1_zz_2"]
    kept_link = deep / ".tmp_99_abcd_1"
    for path in (stale, fresh, *foreign):
        path.write_text("partial")
    os.symlink(foreign[0], kept_link)
    for path in (stale, *foreign):
        os.utime(path, (old, old))
    os.utime(kept_link, (old, old), follow_symlinks=False)

    FileSystemBackend(root)

    assert not stale.exists()
    assert fresh.exists() and all(p.exists() for p in foreign)
    assert kept_link.is_symlink()  # a link is never a temp file of ours


def test_opening_a_missing_root_is_fine(tmp_path: Path) -> None:
    backend = FileSystemBackend(tmp_path / "not-yet")
    assert not (tmp_path / "not-yet").exists()
    assert backend.list("notes") == []
