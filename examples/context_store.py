"""The context store in one screen: namespaces, URIs, content-addressed puts, eviction.

Run: python examples/context_store.py [directory]   (default: a temporary directory)
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from contextchef.store import FileSystemBackend, Store


def main(root: Path) -> None:
    store = Store(FileSystemBackend(root / ".context"), eviction={"vfs": {"max_files": 2}})

    notes = store.namespace("notes")
    print(notes.put("plan.md", "# Plan\n1. Read the failing test\n2. Fix it\n"))
    print(notes.get("plan.md").content, end="")
    print(Store.parse_uri("context://notes/plan.md"))

    vfs = store.namespace("vfs")
    for n in range(3):
        output = f"tool output #{n}\n" * 400
        path, uri = vfs.put_content(output)  # content-addressed: the same output, the same URI
        print(uri, vfs.get_physical_path(path))

    report = store.cleanup("vfs")
    print(f"evicted {len(report.evicted)}: {[(e.path, e.reason) for e in report.evicted]}")
    print([item.path for item in vfs.list()])


if __name__ == "__main__":
    if len(sys.argv) > 1:
        main(Path(sys.argv[1]))
    else:
        with tempfile.TemporaryDirectory() as tmp:
            main(Path(tmp))
