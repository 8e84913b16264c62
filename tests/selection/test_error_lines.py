"""The offload preview keeps the error lines of every ecosystem from the omitted middle of a
long output, and none of the noise around them: each log below is a few hundred lines, built
by a small helper, with the errors far from both its head and its tail."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from contextchef import prompts
from contextchef.prompts import DEFAULT_VOCABULARY
from contextchef.selection.offload import OffloadConfig, preview


def log(
    noise: Callable[[int], str], errors: list[str], *, before: int = 150, after: int = 150
) -> str:
    """`before` noise lines, the `errors`, then `after` noise lines."""
    lines = [noise(i) for i in range(before)] + errors + [noise(before + i) for i in range(after)]
    return "\n".join(lines)


def error_section(content: str) -> list[str]:
    """The lines the preview kept from the middle, without their line numbers."""
    shown = preview(content, "context://vfs/x.txt", OffloadConfig(), DEFAULT_VOCABULARY)
    if prompts.ERROR_LINES_HEADER not in shown:
        return []
    section = shown.split(prompts.ERROR_LINES_HEADER + "\n", 1)[1]
    kept = []
    for line in section.split("\n"):
        number, _, text = line.partition(": ")
        if not number.isdigit():
            break
        kept.append(text)
    return kept


def python_log() -> tuple[str, list[str]]:
    errors = [
        "Traceback (most recent call last):",
        '  File "/app/service.py", line 88, in handle',
        "    result = parse(payload)",
        '  File "/app/parser.py", line 12, in parse',
        "    raise ValueError(f'bad token {token!r}')",
        "ValueError: bad token '}'",
    ]

    def noise(i: int) -> str:
        return f"2024-05-01 12:00:{i % 60:02d} INFO worker-{i % 4} handled request {i} in 3ms"

    return log(noise, errors), [errors[0], errors[-1]]


def pytest_log() -> tuple[str, list[str]]:
    errors = [
        "    def test_parse_empty():",
        ">       assert parse('') == []",
        "E       AssertionError: assert None == []",
        "E        +  where None = parse('')",
        "FAILED tests/test_parser.py::test_parse_empty - AssertionError: assert None == []",
    ]

    def noise(i: int) -> str:
        return f"tests/test_module_{i}.py::test_case_{i} PASSED [{i % 100:3d}%]"

    return log(noise, errors), [errors[2], errors[3], errors[4]]


def typescript_log() -> tuple[str, list[str]]:
    errors = [
        "src/api/client.ts(41,17): error TS2345: Argument of type 'string' is not assignable "
        "to parameter of type 'number'.",
        "TypeError: Cannot read properties of undefined (reading 'map')",
        "    at render (/app/dist/view.js:12:19)",
        "npm ERR! code ELIFECYCLE",
        "npm ERR! errno 2",
    ]

    def noise(i: int) -> str:
        return f"  ✓ renders component {i} ({i % 9 + 1} ms)"

    return log(noise, errors), [errors[0], errors[1], errors[3], errors[4]]


def rust_log() -> tuple[str, list[str]]:
    errors = [
        "error[E0382]: borrow of moved value: `config`",
        "  --> src/main.rs:14:20",
        "thread 'main' panicked at src/lib.rs:88:9:",
        "called `Option::unwrap()` on a `None` value",
    ]

    def noise(i: int) -> str:
        return f"   Compiling crate-{i} v0.{i % 10}.{i % 7}"

    return log(noise, errors), [errors[0], errors[2]]


def go_log() -> tuple[str, list[str]]:
    errors = [
        "--- FAIL: TestParseHeader (0.00s)",
        "    header_test.go:31: got 3 fields, want 4",
        "panic: runtime error: index out of range [5] with length 5",
        "FAIL\tgithub.com/acme/proxy/header\t0.012s",
    ]

    def noise(i: int) -> str:
        return f"=== RUN   TestCase{i}\n--- PASS: TestCase{i} (0.00s)"

    return log(noise, errors, before=100, after=100), [errors[0], errors[2], errors[3]]


def java_log() -> tuple[str, list[str]]:
    errors = [
        'Exception in thread "main" java.lang.NullPointerException: name is null',
        "\tat com.acme.Service.greet(Service.java:42)",
        "\tat com.acme.Main.main(Main.java:7)",
        "Caused by: java.io.FileNotFoundException: /etc/acme.conf (No such file or directory)",
    ]

    def noise(i: int) -> str:
        return f"[INFO] Downloaded from central: org/acme/lib-{i}/1.{i % 5}/lib-{i}.jar"

    return log(noise, errors), [errors[0], errors[3]]


def c_log() -> tuple[str, list[str]]:
    errors = [
        "src/buffer.c:12:5: error: implicit declaration of function 'memcpyy'",
        "src/buffer.c: In function 'grow':",
        "make: *** [Makefile:23: build/buffer.o] Error 1",
    ]

    def noise(i: int) -> str:
        return f"gcc -O2 -Wall -c src/module_{i}.c -o build/module_{i}.o"

    return log(noise, errors), [errors[0], errors[2]]


def shell_log() -> tuple[str, list[str]]:
    errors = [
        "deploy.sh: line 17: kubectl: command not found",
        "error: process exited with code 2",
        "exit status 1",
    ]

    def noise(i: int) -> str:
        return f"+ echo 'step {i} done'"

    return log(noise, errors), errors


ECOSYSTEMS = {
    "python": python_log,
    "pytest": pytest_log,
    "typescript": typescript_log,
    "rust": rust_log,
    "go": go_log,
    "java": java_log,
    "c": c_log,
    "shell": shell_log,
}


@pytest.mark.parametrize("name", sorted(ECOSYSTEMS))
def test_the_error_lines_of_each_ecosystem_are_kept_and_the_noise_is_not(name: str) -> None:
    content, expected = ECOSYSTEMS[name]()
    assert content.count("\n") >= 200
    assert OffloadConfig().wants(content)
    kept = error_section(content)
    for line in expected:
        assert line.strip() in kept, (name, line)
    noise = [line for line in kept if line not in {e.strip() for e in expected}]
    allowed_context = {"header_test.go:31: got 3 fields, want 4"}  # never required, never noise
    assert not [line for line in noise if line not in allowed_context], noise


def test_a_repeated_error_line_is_kept_once() -> None:
    content = log(lambda i: f"INFO tick {i}", ["ERROR: upstream timed out"] * 40)
    assert error_section(content) == ["ERROR: upstream timed out"]


def test_noise_that_merely_mentions_errors_is_left_out() -> None:
    chatter = [
        "INFO error_count=0",
        "0 errors, 0 warnings",
        "Compiling error-chain v0.12.4",
        "handled errors gracefully",
        "--- PASS: TestErrorPath (0.00s)",
        "exit code 0",
    ]
    content = log(lambda i: f"DEBUG step {i}", chatter)
    assert error_section(content) == []
