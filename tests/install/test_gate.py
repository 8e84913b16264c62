"""The user-install gate catches what it is for: a wheel whose code imports a package its
metadata does not declare (the defect that once shipped: `import orjson` in an adapter while
orjson was only a development dependency)."""

from __future__ import annotations

import base64
import hashlib
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.install import gate

PROOF_CACHE = gate.ROOT / ".venv" / "gate-proof"
"""The proof's environments, apart from the gate's own, one folder per test (tests running at
once must not install into one environment)."""


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return gate.build(tmp_path_factory.mktemp("dist"))


def doctored(wheel: Path, out: Path, change: Callable[[str, bytes], bytes]) -> Path:
    """A copy of `wheel` with each member passed through `change(name, data)`, its RECORD
    rewritten to match, so pip installs it as it would a real wheel."""
    target = out / wheel.name
    records: list[str] = []
    with zipfile.ZipFile(wheel) as source, zipfile.ZipFile(target, "w") as copy:
        names = source.namelist()
        (record,) = [n for n in names if n.endswith(".dist-info/RECORD")]
        for name in names:
            if name == record:
                continue
            data = change(name, source.read(name))
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
            records.append(f"{name},sha256={digest.decode()},{len(data)}")
            copy.writestr(name, data)
        copy.writestr(record, "\n".join([*records, f"{record},,"]) + "\n")
    return target


def without_pyyaml(name: str, data: bytes) -> bytes:
    if not name.endswith(".dist-info/METADATA"):
        return data
    lines = data.decode().splitlines(keepends=True)
    kept = [line for line in lines if not line.lower().startswith("requires-dist: pyyaml")]
    assert len(kept) == len(lines) - 1, "the metadata declares pyyaml once"
    return "".join(kept).encode()


def orjson_unguarded(name: str, data: bytes) -> bytes:
    if not name.endswith("contextchef/adapters/json_args.py"):
        return data
    future = b"from __future__ import annotations\n"
    assert future in data
    return data.replace(future, future + b"import orjson\n", 1)


def test_the_built_wheel_passes_the_runtime_only_checks(wheel: Path) -> None:
    report = gate.gate(wheel, extras=(), cache=PROOF_CACHE / "intact", agent_loop=False)
    assert report.failures == []


@pytest.mark.parametrize(
    ("change", "missing"),
    [(without_pyyaml, "yaml"), (orjson_unguarded, "orjson")],
    ids=["a-dependency-dropped-from-the-metadata", "an-undeclared-import-in-the-code"],
)
def test_the_gate_fails_on_an_import_the_metadata_does_not_declare(
    wheel: Path, tmp_path: Path, change: Callable[[str, bytes], bytes], missing: str
) -> None:
    broken = doctored(wheel, tmp_path, change)
    report = gate.gate(broken, extras=(), cache=PROOF_CACHE / missing, agent_loop=False)
    assert report.failures, "the gate passed a wheel that cannot be imported"
    assert any(f"No module named '{missing}'" in failure for failure in report.failures)
