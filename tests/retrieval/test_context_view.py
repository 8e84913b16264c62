"""The `context` tool's reads (view, search) and refusals of bad calls, with exact texts.

Each test runs on every backend of the contract suite (see conftest.py).
"""

from __future__ import annotations

from typing import Any

import pytest

from contextchef.errors import StoreCorruptError
from contextchef.retrieval import ContextTool
from contextchef.store import Store
from contextchef.store.archive import archive_document

READ_ONLY_HINT = "This tool may write to: context://memory/, context://notes/."


def seed(store: Store, ns: str, path: str, content: str) -> None:
    store.namespace(ns).put(path, content)


# -- view -------------------------------------------------------------------------------------


def test_view_entry_shows_numbered_lines(run: Any, store: Store) -> None:
    seed(store, "notes", "plan.md", "# Plan\n1. read the test\n\tindented\n")
    assert run("view", "context://notes/plan.md") == (
        "context://notes/plan.md (3 lines):\n"
        "     1\t# Plan\n"
        "     2\t1. read the test\n"
        "     3\t\tindented"
    )
    assert run("view", "notes/plan.md") == run("view", "/notes/plan.md")
    assert run("view", "  context://notes/plan.md ") == run("view", "notes/plan.md")


def test_view_directory_lists_recursively_sorted(run: Any, store: Store) -> None:
    for path in ("b.md", "a/z.md", "a/b/c.md", "0.txt"):
        seed(store, "notes", path, "x")
    listing = (
        "context://notes/ (4 entries):\n"
        "- context://notes/0.txt\n"
        "- context://notes/a/b/c.md\n"
        "- context://notes/a/z.md\n"
        "- context://notes/b.md"
    )
    assert run("view", "context://notes/") == listing
    assert run("view", "notes") == listing
    assert run("view", "notes/a/") == (
        "context://notes/a/ (2 entries):\n- context://notes/a/b/c.md\n- context://notes/a/z.md"
    )
    # A path without the trailing slash that names a directory lists it too.
    assert run("view", "notes/a") == run("view", "notes/a/")


def test_view_empty_things(run: Any, store: Store) -> None:
    assert run("view", "notes/") == "context://notes/ is empty."
    seed(store, "notes", "blank.md", "")
    assert run("view", "notes/blank.md") == "context://notes/blank.md is empty."


def test_view_missing_entry(run: Any) -> None:
    assert run("view", "notes/dir/missing.md") == (
        "Error: nothing is stored at context://notes/dir/missing.md. View context://notes/dir/ "
        "to see what is there."
    )
    assert run("view", "scratch/x") == (
        "Error: nothing is stored at context://scratch/x. View context://scratch/ to see what is "
        "there."
    )


def test_view_range(run: Any, store: Store) -> None:
    seed(store, "notes", "n.txt", "\n".join(f"line {i}" for i in range(1, 11)))
    assert run("view", "notes/n.txt", view_range=[3, 4]) == (
        "context://notes/n.txt, lines 3-4 of 10:\n     3\tline 3\n     4\tline 4\n"
        "[Showing lines 3-4 of 10. To read on, call again with view_range [5, 10].]"
    )
    assert run("view", "notes/n.txt", view_range=[9, -1]).endswith(
        "     9\tline 9\n    10\tline 10"
    )
    assert run("view", "notes/n.txt", view_range=["9", "99"]) == run(
        "view", "notes/n.txt", view_range=[9, -1]
    )
    assert run("view", "notes/n.txt", view_range="[1, 10]").startswith(
        "context://notes/n.txt (10 lines):"
    )
    assert run("view", "notes/n.txt", view_range=[11, -1]) == (
        "Error: view_range starts at line 11, but context://notes/n.txt has 10 lines. Start "
        "from 1 to 10."
    )
    assert run("view", "notes/n.txt", view_range=[0, 3]) == (
        "Error: view_range starts at 0, before line 1. Pass [first, last] with 1 <= first <= "
        "last, or -1 as last to read to the end."
    )
    assert run("view", "notes/n.txt", view_range=[5, 2]).startswith(
        "Error: view_range ends at 2, before it starts."
    )
    assert run("view", "notes/n.txt", view_range=[1]).startswith(
        "Error: view_range must be a list of two line numbers."
    )
    assert run("view", "notes/n.txt", view_range=["a", 2]).startswith(
        "Error: view_range must hold two whole numbers."
    )


def test_long_entries_are_paginated_never_cut(run: Any, store: Store) -> None:
    seed(store, "notes", "big.txt", "\n".join(f"row {i}" for i in range(1, 451)) + "\n")
    first = run("view", "notes/big.txt")
    lines = first.split("\n")
    assert lines[0] == "context://notes/big.txt, lines 1-200 of 450:"
    assert lines[200] == "   200\trow 200"
    assert lines[-1] == (
        "[Showing lines 1-200 of 450. To read on, call again with view_range [201, 400].]"
    )
    rows: list[str] = []
    page = first
    while True:
        rows += [line.split("\t", 1)[1] for line in page.split("\n") if "\t" in line]
        if "view_range [" not in page:
            break
        start, end = page.rsplit("view_range [", 1)[1].split("]")[0].split(", ")
        page = run("view", "notes/big.txt", view_range=[int(start), int(end)])
    assert rows == [f"row {i}" for i in range(1, 451)]


def test_a_page_stops_at_the_character_budget(run: Any, store: Store) -> None:
    seed(store, "notes", "wide.txt", "\n".join("w" * 1000 for _ in range(50)))
    page = run("view", "notes/wide.txt")
    assert page.startswith("context://notes/wide.txt, lines 1-19 of 50:\n")
    assert page.endswith(
        "[Showing lines 1-19 of 50. To read on, call again with view_range [20, 50].]"
    )


def test_a_giant_line_is_cut_with_a_marker(run: Any, store: Store) -> None:
    seed(store, "vfs", "out.txt", "x" * 30_000 + "\nsecond")
    page = run("view", "vfs/out.txt")
    assert page.split("\n")[0] == "context://vfs/out.txt, lines 1-1 of 2:"
    assert page.split("\n")[1] == "     1\t" + "x" * 19_993
    assert page.split("\n")[2:] == [
        "[Line 1 is 30000 characters long; only its first 19993 are shown. Search for a phrase "
        "to find text further along it.]",
        "[Showing lines 1-1 of 2. To read on, call again with view_range [2, 2].]",
    ]


def test_long_listings_are_paginated(run: Any, store: Store) -> None:
    for index in range(205):
        seed(store, "notes", f"n{index:03}", "x")
    page = run("view", "notes/")
    assert page.split("\n")[0] == "context://notes/, entries 1-200 of 205:"
    assert page.split("\n")[-1] == (
        "[Showing entries 1-200 of 205. To read on, call again with view_range [201, 205].]"
    )
    rest = run("view", "notes/", view_range=[201, -1])
    assert rest.split("\n") == [
        "context://notes/, entries 201-205 of 205:",
        *(f"- context://notes/n{index:03}" for index in range(200, 205)),
    ]


def test_view_of_an_archived_span_renders_a_transcript(run: Any, store: Store) -> None:
    span = [
        {"role": "user", "content": "find the bug"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "grep", "arguments": "{}"}}
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "main.py:3: bug"},
    ]
    for ns in ("archive", "vfs"):
        uri = store.namespace(ns).put_content(archive_document(span)).uri
        assert run("view", uri) == (
            f"{uri} (10 lines):\n"
            "     1\t[Archived conversation: 3 messages]\n"
            "     2\t\n"
            "     3\tuser:\n"
            "     4\tfind the bug\n"
            "     5\t\n"
            "     6\tassistant:\n"
            "     7\t[tool call] grep({})\n"
            "     8\t\n"
            "     9\t[tool result for grep]\n"
            "    10\tmain.py:3: bug"
        )
    # Outside the recall namespaces, the same document is shown as stored.
    seed(store, "notes", "doc.json", archive_document(span))
    assert "[Archived conversation" not in run("view", "notes/doc.json")


# -- search -----------------------------------------------------------------------------------


def test_search(run: Any, store: Store) -> None:
    seed(store, "notes", "plan.md", "First read the failing test.\nThen fix the parser.")
    seed(store, "notes", "log/day1.md", "Parser crashed on empty input.")
    seed(store, "notes", "other.md", "nothing relevant")
    result = run("search", "notes/", query="parser")
    lines = result.split("\n")
    assert lines[0] == '2 matches for "parser" under context://notes/:'
    assert sorted(line.split(":", 2)[1] for line in lines[1:]) == [
        "//notes/log/day1.md",
        "//notes/plan.md",
    ]
    assert all("arser" in line for line in lines[1:])
    assert run("search", "notes/log/", query="parser").split("\n")[0] == (
        '1 match for "parser" under context://notes/log/:'
    )
    assert run("search", "notes/plan.md", query="parser").startswith(
        '1 match for "parser" under context://notes/plan.md:\n- context://notes/plan.md: '
    )
    assert run("search", "notes/", query="zebra") == (
        'No matches for "zebra" under context://notes/.'
    )
    assert run("search", "notes/", query="  ") == (
        'Error: the "query" argument is missing or empty. Call again with "query" set.'
    )


@pytest.mark.parametrize("ns", ["notes", "vfs", "archive", "scratch"])
def test_reads_work_in_every_namespace(run: Any, store: Store, ns: str) -> None:
    seed(store, ns, "logs/build.txt", "compiling\nerror: missing semicolon\n")
    root = f"context://{ns}/"
    assert run("view", f"{ns}/") == f"{root} (1 entry):\n- {root}logs/build.txt"
    assert run("view", f"{root}logs/build.txt", view_range=[2, 2]) == (
        f"{root}logs/build.txt, lines 2-2 of 2:\n     2\terror: missing semicolon"
    )
    assert run("search", root, query="semicolon") == (
        f'1 match for "semicolon" under {root}:\n'
        f"- {root}logs/build.txt: compiling error: missing semicolon"
    )


def test_search_lists_at_most_fifty_hits(run: Any, store: Store) -> None:
    for index in range(55):
        seed(store, "notes", f"n{index:02}", "needle here")
    lines = run("search", "notes/", query="needle").split("\n")
    assert lines[0] == 'More than 50 matches for "needle" under context://notes/; the best 50:'
    assert len(lines) == 52
    assert lines[-1] == (
        "[Only the best 50 matches are shown. Narrow the path or the query to see others.]"
    )


def test_search_of_exactly_fifty_hits_says_how_many(run: Any, store: Store) -> None:
    for index in range(50):
        seed(store, "notes", f"n{index:02}", "needle here")
    lines = run("search", "notes/", query="needle").split("\n")
    assert lines[0] == '50 matches for "needle" under context://notes/:'
    assert len(lines) == 51


def test_search_of_one_file_ignores_its_longer_siblings(run: Any, store: Store) -> None:
    for index in range(60):
        seed(store, "notes", f"log{index:02}", "needle here")
    seed(store, "notes", "log", "needle at last")
    lines = run("search", "notes/log", query="needle").split("\n")
    assert lines == [
        '1 match for "needle" under context://notes/log:',
        "- context://notes/log: needle at last",
    ]


# -- arguments --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        (
            "{bad",
            "Error: the tool arguments are not valid JSON. Send them as one JSON object of named "
            "fields.",
        ),
        (
            "[1, 2]",
            "Error: the tool arguments must be a JSON object, not an array. Send them as one JSON "
            "object of named fields.",
        ),
        (
            42,
            "Error: the tool arguments must be a JSON object, not a number. Send them as one JSON "
            "object of named fields.",
        ),
        (None, 'Error: the "command" argument is missing or empty. Call again with "command" set.'),
        ("  ", 'Error: the "command" argument is missing or empty. Call again with "command" set.'),
        (
            {"command": "fly"},
            'Error: unknown command "fly". Use one of: view, create, str_replace, insert, delete, '
            "rename, search.",
        ),
        (
            {"command": "view"},
            'Error: the "path" argument is missing or empty. Call again with "path" set.',
        ),
        (
            {"command": "view", "path": "context://../x"},
            "Error: the path \"context://../x\" is not valid: namespace '..' is '..', which would "
            "leave its directory. Write paths as context://<namespace>/<path> with plain names "
            'separated by "/", for example context://notes/plan.md.',
        ),
        (
            {"command": "view", "path": "notes/a//b"},
            "Error: the path \"notes/a//b\" is not valid: path 'a//b': segment 2 ('') is empty. "
            'Write paths as context://<namespace>/<path> with plain names separated by "/", '
            "for example context://notes/plan.md.",
        ),
        (
            {"command": "view", "path": "file:///etc/passwd"},
            'Error: the path "file:///etc/passwd" is not valid: only context:// addresses can be '
            "used. Write paths as context://<namespace>/<path> with plain names separated by "
            '"/", for example context://notes/plan.md.',
        ),
        (
            {"command": "view", "path": "/"},
            'Error: the path "/" is not valid: it names no namespace. Write paths as '
            'context://<namespace>/<path> with plain names separated by "/", for example '
            "context://notes/plan.md.",
        ),
    ],
)
def test_model_mistakes_come_back_as_text(tool: ContextTool, arguments: Any, expected: str) -> None:
    assert tool.run(arguments) == expected


def test_json_string_and_dict_arguments_are_equivalent(tool: ContextTool) -> None:
    assert tool.run('{"command": "create", "path": "notes/a", "file_text": "x"}') == (
        "Created context://notes/a."
    )
    assert tool.run(b'{"command": "view", "path": "notes/a"}') == tool.run(
        {"command": "view", "path": "notes/a"}
    )


@pytest.mark.parametrize(
    "path",
    ["notes/../x", "notes/.hidden", "notes/a\\b", "notes/a\x00b", "notes/\u202ex", "no:tes/x"],
)
def test_hostile_paths_are_refused_with_the_part_named(tool: ContextTool, path: str) -> None:
    result = tool.run({"command": "create", "path": path, "file_text": "x"})
    assert result.startswith("Error: the path ")
    assert "\x00" not in result
    assert "\u202e" not in result


def test_store_failures_the_model_can_act_on_become_text(store: Store) -> None:
    class Busy:
        def __getattr__(self, name: str) -> Any:
            return getattr(store.backend, name)

        def write(self, *args: Any) -> None:
            from contextchef.errors import StoreBusyError

            raise StoreBusyError("locked")

        create = write

        def search(self, *args: Any, **kwargs: Any) -> Any:
            from contextchef.errors import StoreCapabilityError

            raise StoreCapabilityError("notes", ["search"])

        def read(self, ns: str, path: str) -> Any:
            if path == "corrupt":
                raise StoreCorruptError("damaged")
            return store.backend.read(ns, path)  # type: ignore[attr-defined]

    tool = ContextTool(Store(Busy()))
    assert tool.run({"command": "create", "path": "notes/a", "file_text": "x"}) == (
        "Error: the store is busy right now. Make the same call again."
    )
    assert tool.run({"command": "search", "path": "notes/", "query": "x"}) == (
        "Error: the storage behind context://notes/ does not support search, so this command "
        "cannot run there. View the entries directly instead."
    )
    with pytest.raises(StoreCorruptError):
        tool.run({"command": "view", "path": "notes/corrupt"})


def test_lone_surrogates_in_content_are_refused(tool: ContextTool) -> None:
    result = tool.run('{"command": "create", "path": "notes/a", "file_text": "x\\ud800y"}')
    assert result.startswith("Error: the store refused the change to context://notes/a: ")
    assert tool.run({"command": "view", "path": "notes/a"}).startswith("Error: nothing is stored")
