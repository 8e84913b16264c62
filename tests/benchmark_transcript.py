"""`transcript()` of benchmarks/compile.py for tests: the deterministic agent history the
benchmarks measure (user text, assistants with tool calls, tool results)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

_PATH = Path(__file__).resolve().parents[1] / "benchmarks" / "compile.py"


def benchmark_transcript(count: int) -> list[dict[str, Any]]:
    spec = importlib.util.spec_from_file_location("benchmark_compile", _PATH)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(_PATH.parent))  # it imports its sibling modules, as a script does
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(_PATH.parent))
    history: list[dict[str, Any]] = module.transcript(count)
    return history
