"""The filesystem backend: one file per entry under a root directory.

- `backend`: `FileSystemBackend`, the storage protocol over files.
- `dirs`: where each namespace lives, and the link-refusing directory handles.
- `layout`: the on-disk format (where content and meta live).
- `fileio`: atomic writes, locks and permission rules.
"""

from contextchef.store.backends.filesystem.backend import FileSystemBackend
from contextchef.store.backends.filesystem.layout import Layout

__all__ = ["FileSystemBackend", "Layout"]
