"""Deterministic to the byte: the same logical state compiles to the same payload bytes in
processes with different hash seeds, whatever order its dicts and sets were built in."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).with_name("hashseed_scenarios.py")


def digest(seed: str, variant: int) -> str:
    env = {**os.environ, "PYTHONHASHSEED": seed}
    done = subprocess.run(
        [sys.executable, str(SCRIPT), str(variant)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return done.stdout.strip()


def test_payload_bytes_do_not_depend_on_hash_seed_or_construction_order() -> None:
    runs = [("0", 0), ("1", 1), ("12345", 2), ("random", 3)]
    digests = {(seed, variant): digest(seed, variant) for seed, variant in runs}
    assert len(set(digests.values())) == 1, digests
