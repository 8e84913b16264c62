"""Cold start: the wall time of a fresh process that imports contextchef or runs the CLI.

Each case is a new interpreter, timed from spawn to exit: `import contextchef`,
`import contextchef.store`, `contextchef --version`, and `contextchef db info` on an empty
home (it exits 1: no database yet). The floors are measured in the same run, in the same
interleaved rounds: `python -c "pass"` (the interpreter alone) and `python -c "import
pydantic"` (our heaviest runtime dependency). The figures are min and median over the rounds,
and each case's ratio to the `pass` floor; the load average is recorded before and after,
since a busy machine moves every figure.

`--baseline-src DIR` adds the same cases for another checkout's `src/` (put first on
`PYTHONPATH`, same interpreter), interleaved with these, to compare before and after a change:

    git archive main src | tar -x -C /tmp/base
    python benchmarks/cold_start.py --baseline-src /tmp/base/src

Bytecode caches are written in the warm-up round and read after, as an installed package
has them (`PYTHONDONTWRITEBYTECODE` is dropped for the children); `--no-bytecode-cache` keeps
every process compiling the sources it imports instead (a source tree run with the flag set).

The CLI runs as `python -m contextchef` (what the console script runs, plus runpy's few
imports), so the baseline runs the same way.

Usage: python benchmarks/cold_start.py [--rounds 20] [--baseline-src DIR] [--no-bytecode-cache]
Writes benchmarks/results/cold_start.json.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).parent / "results"
FLOORS: dict[str, list[str]] = {
    "floor: python -c pass": ["-c", "pass"],
    "floor: import pydantic": ["-c", "import pydantic"],
}
CASES: dict[str, list[str]] = {
    "import contextchef": ["-c", "import contextchef"],
    "import contextchef.store": ["-c", "import contextchef.store"],
    "contextchef --version": ["-m", "contextchef", "--version"],
    "contextchef db info (empty home)": ["-m", "contextchef", "db", "info"],
}


def run_once(args: list[str], env: dict[str, str]) -> tuple[float, int]:
    """Seconds from spawn to exit of `python *args`, and its exit code."""
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, *args], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    return time.perf_counter() - start, done.returncode


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--baseline-src", type=Path, default=None)
    parser.add_argument("--no-bytecode-cache", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        base_env = {**os.environ, "CONTEXTCHEF_HOME": scratch, "NO_COLOR": "1"}
        base_env.pop("PYTHONPATH", None)
        base_env.pop("PYTHONDONTWRITEBYTECODE", None)
        if args.no_bytecode_cache:
            base_env["PYTHONDONTWRITEBYTECODE"] = "1"
            base_env["PYTHONPYCACHEPREFIX"] = scratch  # existing caches are not read either
        runs: dict[str, tuple[list[str], dict[str, str]]] = {
            name: (argv, base_env) for name, argv in {**FLOORS, **CASES}.items()
        }
        if args.baseline_src is not None:
            before = {**base_env, "PYTHONPATH": str(args.baseline_src.resolve())}
            runs |= {f"before: {name}": (argv, before) for name, argv in CASES.items()}
        load_before = os.getloadavg()
        for argv, env in runs.values():  # warm-up: bytecode caches written, files in cache
            run_once(argv, env)
        samples: dict[str, list[float]] = {name: [] for name in runs}
        codes: dict[str, int] = {}
        for _ in range(args.rounds):
            for name, (argv, env) in runs.items():
                seconds, codes[name] = run_once(argv, env)
                samples[name].append(seconds)
        load_after = os.getloadavg()
    floor = min(samples["floor: python -c pass"])
    floor_median = statistics.median(samples["floor: python -c pass"])
    report: dict[str, Any] = {
        "rounds": args.rounds,
        "bytecode_cache": not args.no_bytecode_cache,
        "load_average_before": load_before,
        "load_average_after": load_after,
        "cases": {},
    }
    print(f"load average {load_before[0]:.2f} before, {load_after[0]:.2f} after")
    print(f"{'case':42} {'min ms':>8} {'median ms':>10} {'min/floor':>10} {'med/floor':>10}")
    for name, values in samples.items():
        low, mid = min(values), statistics.median(values)
        report["cases"][name] = {
            "min_ms": low * 1000,
            "median_ms": mid * 1000,
            "min_over_floor": low / floor,
            "median_over_floor": mid / floor_median,
            "exit_code": codes[name],
        }
        print(
            f"{name:42} {low * 1000:8.1f} {mid * 1000:10.1f} {low / floor:10.2f} "
            f"{mid / floor_median:10.2f}"
        )
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "cold_start.json").write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
