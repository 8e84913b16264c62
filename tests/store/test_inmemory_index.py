"""The in-memory backend's directory index answers prefix listings as a full scan would."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from contextchef.errors import EntryExistsError
from contextchef.store import InMemoryBackend, StoredEntry

SEGMENT = st.sampled_from(["a", "ab", "b", "é", "a.md", "b.md"])
PATH = st.lists(SEGMENT, min_size=1, max_size=3).map("/".join)
PREFIX = st.lists(SEGMENT, max_size=3).map("/".join) | PATH.map(lambda p: p + "/")


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.booleans(), PATH), max_size=25), st.lists(PREFIX, max_size=6))
def test_prefix_reads_match_a_scan(steps: list[tuple[bool, str]], prefixes: list[str]) -> None:
    backend = InMemoryBackend()
    held: dict[str, str] = {}
    for write, path in steps:
        if write:
            try:
                backend.write("n", path, StoredEntry(path))
            except EntryExistsError:  # an entry and a directory of one name: refused
                continue
            held[path] = path
        else:
            assert backend.delete("n", path) is (held.pop(path, None) is not None)
    for prefix in ["", *prefixes]:
        expected = sorted(p for p in held if p.startswith(prefix))
        assert [item.path for item in backend.list("n", prefix)] == expected
        assert list(backend.read_all("n", prefix)) == expected
        if prefix == "" or prefix.endswith("/"):
            dirs = sorted({p[: p.rfind("/") + 1] for p in expected})
            assert backend.list_dirs("n", prefix) == dirs
