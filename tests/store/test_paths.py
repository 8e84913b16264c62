"""Path rules and URIs, including property tests with hostile names against the real filesystem."""

from __future__ import annotations

import hashlib
import os
import unicodedata
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from contextchef.errors import EntryExistsError, InvalidPathError
from contextchef.store import FileSystemBackend, InMemoryBackend, Store
from contextchef.store.backends.filesystem.access import LOG_NAME
from contextchef.store.paths import (
    content_path,
    entry_spellings,
    format_uri,
    non_nfc_paths,
    parse_uri,
    prefix_spellings,
    validate_entry_path,
    validate_namespace,
    validate_prefix,
)


@pytest.mark.parametrize(
    ("path", "part"),
    [
        ("", "empty"),
        ("../x", "'..'"),
        ("a/./b", "'.'"),
        ("a//b", "segment 2"),
        ("/abs", "segment 1"),
        ("a\\b", "backslash"),
        ("a\x00b", "U+0000"),
        ("tab\there", "U+0009"),
        ("del\x7f", "U+007F"),
        ("c1\x85", "U+0085"),
        ("x\u202egpj.exe", "U+202E"),
        (".env", "dot"),
        ("dir/.git/config", "segment 2"),
        ("．．/etc", "NFKC"),
        ("a／b", "NFKC"),
        ("﹒env", "NFKC"),
        ("dir/", "directory"),
        ("é" * 128, "256 UTF-8 bytes"),
        ("a/" * 600 + "b", "limit is 1024"),
        ("surrogate\ud800", "surrogate"),
    ],
)
def test_rejected_paths_name_the_offending_part(path: str, part: str) -> None:
    with pytest.raises(InvalidPathError) as info:
        validate_entry_path(path)
    assert part in str(info.value)
    assert info.value.path == path


@pytest.mark.parametrize(
    "path",
    [
        "plan.md",
        "dir/sub/file.txt",
        "2024-01-01T10:00:00.log",  # ':' is fine inside paths
        "%2e%2e",  # never decoded: a literal name
        "x..%2f..%2fetc",
        "a..b",
        "trailing.",
        "日本語/メモ.txt",
        "👨\u200d👩\u200d👧.md",  # ZWJ sequences are ordinary text
        "x" * 255,
        "ﬁle",  # NFKC changes it, harmlessly
    ],
)
def test_accepted_paths(path: str) -> None:
    assert validate_entry_path(path) == path


def test_prefixes_allow_directories_and_partial_names() -> None:
    for prefix in ("", "dir/", "dir/sub/", "pl", "dir/pa"):
        assert validate_prefix(prefix) == prefix
    for bad in ("../", "a//", "/", ".x", 3):
        with pytest.raises(InvalidPathError):
            validate_prefix(bad)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "ns", ["", ".", "..", "a/b", "a\\b", "a:b", "ns\n", "．．", "a﹕b", "n" * 129]
)
def test_rejected_namespaces(ns: str) -> None:
    with pytest.raises(InvalidPathError, match="namespace"):
        validate_namespace(ns)


def test_non_strings_are_typed_errors() -> None:
    for value in (None, 3, b"bytes", ["a"]):
        with pytest.raises(InvalidPathError, match="must be a str"):
            validate_entry_path(value)  # type: ignore[arg-type]
        with pytest.raises(InvalidPathError, match="must be a str"):
            validate_namespace(value)  # type: ignore[arg-type]


def test_uris() -> None:
    assert format_uri("notes", "plan.md") == "context://notes/plan.md"
    assert Store.uri("notes", "dir/") == "context://notes/dir/"
    assert Store.uri("notes", "") == "context://notes/"
    with pytest.raises(InvalidPathError):
        Store.uri("notes", "../x")
    with pytest.raises(InvalidPathError):
        Store.uri("no/te", "x")
    assert parse_uri("context://notes/plan.md") == ("notes", "plan.md")
    assert parse_uri("context://notes/a/b") == ("notes", "a/b")
    assert parse_uri("context://notes/dir/") == ("notes", "dir/")
    address = Store.parse_uri("context://vfs/vfs_0123456789abcdef.txt")
    assert address is not None and address.ns == "vfs" and address.path.startswith("vfs_")
    for bad in (
        "context://notes/",
        "context://notes",
        "context:///x",
        "context://",
        "http://notes/x",
        "notes/x",
        "context://../x",
        "context://notes/../x",
        "context://notes/a//b",
        "CONTEXT://notes/x",
        None,
        42,
    ):
        assert Store.parse_uri(bad) is None, bad  # type: ignore[arg-type]


def test_content_path_matches_the_reference_scheme() -> None:
    content = "same bytes in any process — ✓"
    digest = hashlib.sha256(content.encode("utf-8")).hexdigest()
    assert content_path("vfs", content) == f"vfs_{digest[:16]}.txt"
    assert content_path("notes", "") == "notes_e3b0c44298fc1c14.txt"


# -- hostile names ----------------------------------------------------------------------------

TOKENS = [
    "..",
    ".",
    "",
    "%2e%2e",
    "%2f",
    "%252e%252e",
    "..%2f",
    "%5c..",
    "．．",
    "．",
    "／",
    "∕",
    "⁄",
    "＼",
    "\\",
    "..\\",
    "\x00",
    "\n",
    "\x7f",
    "\u202e",
    "\u200b",
    "\ufeff",
    "a",
    "A",
    "ß",
    "SS",
    "ǅ",
    "İ",
    "ı",
    "ﬁ",
    "\u212a",  # KELVIN SIGN, casefolds to 'k'
    "e\u0301",
    "é",
    "~",
    "$HOME",
    "C:",
    "con",
    "-",
    " ",
    "...",
]
segments = st.one_of(
    st.from_regex(r"[A-Za-z0-9_-]{1,10}", fullmatch=True),
    st.text(st.characters(codec="utf-8", exclude_categories=("Cc", "Cs")), min_size=1, max_size=10),
    st.sampled_from(TOKENS),
    st.lists(st.sampled_from(TOKENS), min_size=1, max_size=4).map("".join),
    st.text(max_size=12),
    st.text(alphabet=st.sampled_from("aé日🌍."), min_size=60, max_size=140),
)
hostile_paths = st.lists(segments, min_size=1, max_size=4).map("/".join)


def _files_under(root: Path) -> set[str]:
    return {
        os.path.relpath(os.path.join(directory, name), root)
        for directory, _, names in os.walk(root)
        for name in names
    }


def test_hostile_paths_never_escape(tmp_path: Path) -> None:
    root = tmp_path / "root"
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret").write_text("do not touch")
    before_outside = _files_under(tmp_path)
    store = Store(FileSystemBackend(root / ".context", fsync=False))
    mirror = Store(InMemoryBackend())
    notes, twin = store.namespace("notes"), mirror.namespace("notes")
    notes_dir = (root / ".context" / "notes").resolve()

    @settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(hostile_paths)
    def check(path: str) -> None:
        try:
            validate_entry_path(path)
        except InvalidPathError:
            for view in (notes, twin):
                with pytest.raises(InvalidPathError):
                    view.put(path, "x")
            event("rejected")
            return
        try:
            notes.put(path, repr(path))
        except EntryExistsError:
            event("collision")
            return  # an earlier example left a directory (or entry) in this path's way
        twin.put(path, repr(path))
        assert notes.get(path).content == repr(path) == twin.get(path).content
        physical = Path(notes.get_physical_path(path)).resolve()
        assert notes_dir in physical.parents
        # Listed under its NFC spelling, the one the store writes (`paths.entry_spellings`).
        assert unicodedata.normalize("NFC", path) in {item.path for item in notes.list()}
        assert notes.delete(path) and twin.delete(path)
        event("accepted")

    check()
    after = _files_under(tmp_path)
    assert {name for name in after if not name.startswith("root/")} == before_outside
    assert (outside / "secret").read_text() == "do not touch"


def test_hostile_namespaces_never_escape(tmp_path: Path) -> None:
    root = tmp_path / ".context"
    store = Store(FileSystemBackend(root, fsync=False))

    @settings(max_examples=150, deadline=None)
    @given(segments)
    def check(ns: str) -> None:
        try:
            view = store.namespace(ns)
        except InvalidPathError:
            return
        view.put("probe.txt", ns)
        physical = Path(view.get_physical_path("probe.txt")).resolve()
        assert physical.parent == (root / ns).resolve()
        assert physical.parent.parent == root.resolve()
        assert view.get("probe.txt").content == ns

    check()
    assert {path.relative_to(tmp_path).parts[0] for path in tmp_path.rglob("*")} <= {".context"}


@given(st.text(min_size=1, max_size=6))
@settings(max_examples=100, deadline=None)
def test_accepted_paths_round_trip_through_uris(segment: str) -> None:
    path = f"dir/{segment}"
    try:
        validate_entry_path(path)
    except InvalidPathError:
        return
    assert parse_uri(format_uri("notes", path)) == ("notes", path)
    for part in path.split("/"):
        assert part not in ("", ".", "..") and "\\" not in part and not part.startswith(".")


def test_case_variants_are_distinct_entries_and_stay_inside(tmp_path: Path) -> None:
    """Case-insensitive lookalikes never alias a different file or leave the namespace; only
    spellings with one NFC form (`K` and the Kelvin sign U+212A) are one entry."""
    backend = FileSystemBackend(tmp_path / ".context", fsync=False)
    notes = Store(backend).namespace("notes")

    @settings(max_examples=60, deadline=None)
    @given(st.text(alphabet=st.sampled_from("aAbBßSsİıiK\u212akéÉ"), min_size=1, max_size=5))
    def check(name: str) -> None:
        variants = sorted({name, name.upper(), name.lower(), name.swapcase(), name.casefold()})
        variants = [v for v in variants if len(v.encode()) <= 255]
        for variant in variants:
            notes.put(f"case/{variant}", variant)
        case_sensitive = not (tmp_path / ".context" / "NOTES").exists()
        for variant in variants:
            got = notes.get(f"case/{variant}").content
            same = unicodedata.normalize("NFC", got) == unicodedata.normalize("NFC", variant)
            assert same or not case_sensitive
        listed = {item.path for item in notes.list("case/")}
        spelled = {unicodedata.normalize("NFC", f"case/{v}") for v in variants}
        assert listed <= spelled | {f"case/{v}" for v in listed}
        for variant in variants:
            notes.delete(f"case/{variant}")
        assert notes.list("case/") == []

    check()
    bookkeeping = {f".context/notes/{LOG_NAME}"}  # the namespace's read times (reads were made)
    assert _files_under(tmp_path) - bookkeeping == set()


def test_entry_spellings_put_nfc_first() -> None:
    nfc = unicodedata.normalize("NFC", "notes/café.md")
    nfd = unicodedata.normalize("NFD", nfc)
    assert entry_spellings("plain/a.md") == ("plain/a.md",)
    assert entry_spellings(nfc) == (nfc, nfd)
    assert entry_spellings(nfd) == (nfc, nfd)
    mixed = nfd + "/" + nfc  # neither form: its own spelling is tried too
    assert entry_spellings(mixed)[0] == unicodedata.normalize("NFC", mixed)
    assert mixed in entry_spellings(mixed)
    assert prefix_spellings(unicodedata.normalize("NFD", "café/")) == (
        unicodedata.normalize("NFC", "café/"),
        unicodedata.normalize("NFD", "café/"),
    )
    with pytest.raises(InvalidPathError):
        entry_spellings("../x")
    with pytest.raises(InvalidPathError):
        entry_spellings(b"a.md")  # type: ignore[arg-type]
    assert non_nfc_paths(["a.md", nfc, nfd]) == [nfd]
