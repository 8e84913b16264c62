"""Running the TypeScript reference (@context-chef/core) from the Python benchmarks.

The reference lives in a scratch install outside the repo (CONTEXTCHEF_TS_REF, default
/tmp/ctxref/node_modules/@context-chef/core); `ts_reference.mjs` drives it. Without Node or the
package, `node_command()` is None and the benchmarks leave the reference's columns empty.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
DEFAULT_REFERENCE = "/tmp/ctxref/node_modules/@context-chef/core"


def run_json(command: list[str], cwd: str) -> dict[str, Any] | None:
    """Run a process that prints one JSON object last; None (and its stderr shown) if it fails."""
    done = subprocess.run(
        command, capture_output=True, text=True, cwd=cwd, timeout=1800, check=False
    )
    if done.returncode != 0:
        print(f"failed: {' '.join(command[:3])}: {done.stderr[-800:]}", file=sys.stderr)
        return None
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def reference_package() -> str:
    return os.environ.get("CONTEXTCHEF_TS_REF", DEFAULT_REFERENCE)


def node_command() -> list[str] | None:
    """How to run ts_reference.mjs, or None when Node or the reference package is missing."""
    node = shutil.which("node")
    if node is None or not (Path(reference_package()) / "dist" / "index.mjs").exists():
        return None
    return [node, str(HERE / "ts_reference.mjs")]


class Reference:
    """One long-lived Node process per size: warmed up once, then one target per request."""

    def __init__(self, node: list[str], workload: Path, count: int, warmups: int) -> None:
        command = [*node, "serve", reference_package(), str(workload), str(count), str(warmups)]
        self.process = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=str(workload.parent),
        )

    def warm_up(self, targets: list[str]) -> None:
        self.ask("warmup:" + ",".join(targets))

    def ask(self, request: str) -> dict[str, Any]:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(request + "\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError(f"the reference process ended (exit {self.process.wait()})")
        answer: dict[str, Any] = json.loads(line)
        return answer

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        self.process.wait(timeout=60)
