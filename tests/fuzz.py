"""How many examples a property test draws: the count it names, times `CONTEXTCHEF_FUZZ`.

The suite's counts keep `make test` inside its time budget; a deep run multiplies them, e.g.
`CONTEXTCHEF_FUZZ=10 .venv/bin/python -m pytest tests/test_intake_differential.py`.
"""

from __future__ import annotations

import os

SCALE = float(os.environ.get("CONTEXTCHEF_FUZZ", "1"))


def examples(count: int) -> int:
    """`count` scaled by `CONTEXTCHEF_FUZZ` (at least 1)."""
    return max(1, round(count * SCALE))
