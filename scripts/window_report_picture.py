"""Draw docs/assets/window-report.svg: the window report's chart for a short demo run, the
picture the README and the site open with.

The demo's scripted agent (seed 7, 60 turns, a 6,000-token window, an in-memory store) is
played through the library, and its turns are drawn by the code that draws `contextchef demo
--report`; the CSS the report page gives the chart is carried inside the SVG. Run it after a
change to the demo or the report (`python scripts/window_report_picture.py`);
tests/test_docs_site.py checks the file is what this script draws.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from contextchef.cli.demo_session import Session, SessionOptions
from contextchef.cli.report_svg import CHART_STYLE, composition_chart
from contextchef.store.backends import InMemoryBackend

PICTURE = Path(__file__).resolve().parents[1] / "docs" / "assets" / "window-report.svg"
OPTIONS = SessionOptions(turns=60, seed=7, window=6000, target="openai")


def picture() -> str:
    """The SVG file's text for a fresh run of the demo."""
    session = Session(OPTIONS, InMemoryBackend())
    records = list(session.run())
    turns = [record.report_turn() for record in records]
    events = [event for record in records for event in record.events]
    chart = composition_chart(turns, events)
    chart = chart.replace("<svg ", '<svg xmlns="http://www.w3.org/2000/svg" ', 1)
    head, _, rest = chart.partition(">")
    return f"{head}>\n<style>{CHART_STYLE}</style>{rest}\n"


def comparable(svg: str) -> str:
    """The picture with what differs between runs blanked: archive names hash a per-run id."""
    return re.sub(r"archive_[0-9a-f]+", "archive_…", svg)


def main() -> None:
    PICTURE.parent.mkdir(parents=True, exist_ok=True)
    PICTURE.write_text(picture(), encoding="utf-8")
    print(f"wrote {PICTURE}", file=sys.stderr)


if __name__ == "__main__":
    main()
