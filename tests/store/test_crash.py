"""Reliability: SIGKILL a writer mid-stream; every entry is absent or whole, every ack is kept.

A child process overwrites 16 keys in a json namespace (`notes`) and a raw one (`vfs`) with
payloads of up to half a megabyte, printing each sequence number after the write returned. The
parent kills it with SIGKILL at an arbitrary moment, reopens the directory and checks that each
key holds a complete payload whose sequence number is at least the last one acknowledged.
"""

from __future__ import annotations

import hashlib
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from contextchef.store import FileSystemBackend, Store

KEYS = 16
PAYLOAD = """
import hashlib

def payload(seq):
    size = 1024 + (seq * 7919) % (512 * 1024)
    block = hashlib.sha256(str(seq).encode()).hexdigest()
    body = (block * (size // len(block) + 1))[:size]
    return f"{seq}:{hashlib.sha256(body.encode()).hexdigest()}:{body}"
"""
WRITER = (
    PAYLOAD
    + """
import sys
from contextchef.store import FileSystemBackend, Store

store = Store(FileSystemBackend(sys.argv[1]))
notes, vfs = store.namespace("notes"), store.namespace("vfs")
seq = int(sys.argv[2])
while True:
    body = payload(seq)
    notes.put(f"k{seq % 16}.md", body, {"seq": seq})
    vfs.put(f"vfs_k{seq % 16}.txt", body)
    print(seq, flush=True)
    seq += 1
"""
)
namespace: dict[str, object] = {}
exec(PAYLOAD, namespace)  # the very same payload function the writer uses


def payload(seq: int) -> str:
    return namespace["payload"](seq)  # type: ignore[operator, no-any-return]


def _run_and_kill(root: Path, start: int, acks_before_kill: int, rng: random.Random) -> list[int]:
    """Start a writer at `start`, SIGKILL it after some acks; return every ack it printed."""
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(root), str(start)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    acked: list[int] = []
    deadline = time.monotonic() + 20
    try:
        while len(acked) < acks_before_kill:
            line = proc.stdout.readline()
            assert line, f"writer died early with code {proc.poll()}"
            acked.append(int(line))
            assert time.monotonic() < deadline, "writer too slow"
        time.sleep(rng.uniform(0, 0.01))  # land anywhere inside the next write
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
        rest = proc.stdout.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
        proc.stdout.close()
    acked.extend(int(line) for line in rest.splitlines(keepends=True) if line.endswith("\n"))
    assert proc.returncode == -signal.SIGKILL
    return acked


def _check(root: Path, acked: list[int]) -> None:
    last_acked: dict[int, int] = {}
    for seq in acked:
        last_acked[seq % KEYS] = max(seq, last_acked.get(seq % KEYS, -1))
    store = Store(FileSystemBackend(root))
    for ns, name in (("notes", "k{}.md"), ("vfs", "vfs_k{}.txt")):
        view = store.namespace(ns)
        listed = {item.path for item in view.list()}
        for key in range(KEYS):
            entry = view.get(name.format(key))
            if entry is None:
                assert key not in last_acked, f"{ns}/{name.format(key)}: acknowledged, then lost"
                continue
            assert name.format(key) in listed
            seq = int(entry.content.split(":", 1)[0])
            assert entry.content == payload(seq), f"{ns}/{name.format(key)} is torn"
            digest = entry.content.split(":", 2)[1]
            assert hashlib.sha256(entry.content.split(":", 2)[2].encode()).hexdigest() == digest
            assert seq % KEYS == key
            assert seq >= last_acked.get(key, -1), f"{ns}: ack {last_acked[key]} lost for {seq}"
            if ns == "notes":
                assert entry.meta["seq"] == seq  # content and meta changed together


@pytest.mark.slow
def test_sigkill_mid_stream_leaves_only_whole_entries(tmp_path: Path) -> None:
    root = tmp_path / ".context"
    rng = random.Random(20240607)
    acked: list[int] = []
    start = 0
    for acks_before_kill in (5, 23, 41):
        acked += _run_and_kill(root, start, acks_before_kill, rng)
        _check(root, acked)
        start = max(acked) + 2  # the killed write may or may not have landed
