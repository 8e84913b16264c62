"""The window report's HTML: self-contained, escaped, deterministic, and drawing what it is fed.

The browser checks (it renders, no console error, a real screenshot) are in
`test_report_browser.py`; these read the page's text, the way a reviewer or a CI diff would.
"""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from contextchef import ConfigError, ContextChef
from contextchef.cli import app
from contextchef.cli.report import (
    LAYERS,
    ReportEvent,
    ReportFigures,
    ReportTurn,
    payload_layers,
    render_report,
    write_report,
)
from contextchef.cli.report_svg import LAYER_COLOURS, nice_step
from contextchef.tokens import EstimateTokenizer


def _turns(count: int = 30, window: int = 6000) -> list[ReportTurn]:
    return [
        ReportTurn(
            turn,
            {"tools": 900, "system": 200, "memory": 50, "history": 150 * turn, "tail": 40},
            window,
            None if turn == 1 else 0.8,
        )
        for turn in range(1, count + 1)
    ]


EVENTS = [
    ReportEvent(12, "overflow", "overflow: 21 messages summarized", "context://archive/a.txt"),
    ReportEvent(5, "offload", "offloaded 48 KB → context://vfs/log.txt", "context://vfs/log.txt"),
    ReportEvent(2, "memory", "memory: saved test-command", "context://memory/test-command"),
    ReportEvent(9, "context", "context: read context://vfs/log.txt lines 1-20", None),
]


def _path_points(page: str, ident: str) -> list[tuple[float, float]]:
    match = re.search(rf'id="{ident}" d="([^"]+)"', page)
    assert match, f"no {ident}"
    return [(float(x), float(y)) for x, y in re.findall(r"([\d.]+),([\d.]+)", match[1])]


def test_every_layer_the_free_room_and_the_reuse_line_are_series() -> None:
    page = render_report("run", _turns(), EVENTS)
    for name in [*LAYERS, "free"]:
        assert f'id="series-{name}"' in page
    assert 'id="series-reuse"' in page and 'id="window-line"' in page
    assert page.count('class="marker marker-overflow"') == 1
    assert page.count('class="marker marker-offload"') == 1
    assert "<title>turn 12: overflow: 21 messages summarized (context://archive/a.txt)</title>" in (
        page
    )
    assert page.count('<tr id="event-') == len(EVENTS)


def _legend_entries(page: str) -> dict[str, str]:
    """Each legend entry's `data-mark` (what it names) and its markup (with its colour)."""
    legend = re.search(r'<div class="legend" id="legend">(.*?)</div>', page)
    assert legend, "no legend"
    return dict(re.findall(r'<span data-mark="([^"]+)">(.*?)(?=<span data-mark=|$)', legend[1]))


def test_the_legend_names_every_mark_the_chart_draws() -> None:
    """Every kind of mark in the SVG (a layer, the window, the reuse line, each kind of event
    marker) has a legend entry in the colour it is drawn in, and nothing else has one."""
    kinds = ["overflow", "offload", "memory", "context", "note", "exceeded", "repair", "odd"]
    events = [ReportEvent(3 + i, kind, f"{kind} at {3 + i}") for i, kind in enumerate(kinds)]
    page = render_report("run", _turns(), events)
    svg = page[page.index("<svg") : page.index("</svg>")]
    legend = _legend_entries(page)
    drawn = set(re.findall(r'id="(series-[\w-]+|window-line)"', svg))
    marker = r'class="marker (marker-[\w-]+)" id="marker-\d+" data-colour="(#[0-9a-f]{6})"'
    markers = dict(re.findall(marker, svg))
    assert set(markers) == {f"marker-{kind}" for kind in kinds}
    assert set(legend) == drawn | set(markers)
    for name, colour in markers.items():
        assert colour in legend[name], (name, legend[name])
        group = re.search(rf'class="marker {name}".*?</g>', svg)
        painted = set(re.findall(r'(?:fill|stroke)="(#[0-9a-f]{6})"', group[0])) if group else set()
        assert painted - {"#ffffff"} == {colour}, (name, painted)
    assert len(set(markers.values())) == len(markers)  # one colour per kind
    layers = {name for name in drawn if name.startswith("series-") and name != "series-reuse"}
    for name in layers:
        assert LAYER_COLOURS.get(name.removeprefix("series-"), "#a0aec0") in legend[name]
    quiet = render_report("run", [ReportTurn(1, {"history": 10}, 100)], [])
    assert set(_legend_entries(quiet)) == {"series-history", "series-free", "window-line"}


def test_the_reuse_line_has_a_panel_and_an_axis_of_its_own() -> None:
    """The reuse share (0-100 %) is drawn below the token chart, never over its tokens, where a
    line above the dashed window read as a window exceeded."""
    page = render_report("run", _turns(), [])
    token_floor = max(y for _, y in _path_points(page, "series-tools"))  # the token axis
    reuse = [y for _, y in _path_points(page, "series-reuse")]
    tick = r'y="([\d.]+)"[^>]*class="reuse-tick">(\d+)%</text>'
    ticks = {label: float(y) for y, label in re.findall(tick, page)}
    assert set(ticks) == {"0", "50", "100"}
    assert token_floor < ticks["100"] < ticks["0"]
    assert all(ticks["100"] <= y <= ticks["0"] for y in reuse)
    assert re.search(r'id="reuse-title">prompt bytes reusable from the previous turn', page)
    assert reuse[0] == pytest.approx(ticks["0"] - 0.8 * (ticks["0"] - ticks["100"]), abs=0.1)


def test_the_areas_stack_and_grow_with_the_tokens() -> None:
    page = render_report("run", _turns(), [])
    tail = _path_points(page, "series-tail")
    top = tail[: len(tail) // 2]  # the upper edge, left to right (SVG y grows downwards)
    assert all(later[1] < earlier[1] for earlier, later in itertools.pairwise(top))
    history_top = _path_points(page, "series-history")[:30]
    assert all(t[1] <= h[1] for t, h in zip(top, history_top, strict=True))


def test_over_the_window_the_free_room_is_empty() -> None:
    turns = [ReportTurn(1, {"history": 500}, 1000), ReportTurn(2, {"history": 1500}, 1000)]
    free = _path_points(render_report("run", turns, []), "series-free")
    upper, lower = free[:2], free[2:][::-1]
    assert upper[0][1] < lower[0][1]  # turn 1: room left between 500 and 1000 tokens
    assert upper[1] == lower[1]  # turn 2: none


def test_the_page_is_self_contained() -> None:
    page = render_report("run", _turns(), EVENTS)
    assert "Content-Security-Policy" in page and "default-src 'none'" in page
    for fetching in ("http://", "https://", "<script", "<link", "src=", "@import", "url("):
        assert fetching not in page


def test_every_string_is_escaped() -> None:
    hostile = 'context://vfs/<script>alert("x")</script>&'
    turns = [ReportTurn(1, {"<b>layer</b>": 10}, 100)]
    events = [ReportEvent(1, "<i>kind</i>", f"offloaded → {hostile}", hostile)]
    page = render_report("<title>", turns, events, figures=ReportFigures((("<u>", "<s>"),)))
    for raw in ("<script", "<b>", "<i>", "<u>", "<s>", "<title><title>"):
        assert raw not in page
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;" in page
    assert 'class="kind-_i_kind__i_"' in page


def test_same_input_same_bytes(tmp_path: Path) -> None:
    first = render_report("run", _turns(), EVENTS, figures=ReportFigures((("turns", "30"),)))
    assert first == render_report(
        "run", _turns(), EVENTS, figures=ReportFigures((("turns", "30"),))
    )
    written = write_report(tmp_path / "r.html", "run", _turns(), EVENTS, figures=None)
    assert written.read_text(encoding="utf-8") == render_report("run", _turns(), EVENTS)


def test_one_compile_shows_as_a_band_and_no_turns_says_so() -> None:
    one = render_report("one compile", [ReportTurn(7, {"system": 100, "history": 400}, 2000)], [])
    points = _path_points(one, "series-history")
    assert {x for x, _ in points} == {70.0, 890.0}  # the whole width of the plot
    assert ">7</text>" in one
    assert "Turn 7: the window by layer (500 of 2,000 tokens)" in one
    assert '<td>history</td><td class="num">400</td><td class="num">20.0%</td>' in one
    assert '<td>free</td><td class="num">1,500</td><td class="num">75.0%</td>' in one
    empty = render_report("nothing", [], [])
    assert 'id="no-turns"' in empty and "<svg" not in empty and 'id="no-events"' in empty


@pytest.mark.parametrize(
    ("layers", "window", "reuse", "message"),
    [
        ({"history": -1}, 100, None, "negative"),
        ({"history": 1}, 0, None, "window"),
        ({"history": 1}, 100, 1.5, "reuse"),
    ],
)
def test_bad_figures_are_refused(
    layers: dict[str, int], window: int, reuse: float | None, message: str
) -> None:
    with pytest.raises(ConfigError, match=message):
        ReportTurn(3, layers, window, reuse)


def test_nice_step() -> None:
    assert nice_step(6300, 5) == 2000
    assert nice_step(150, 10) == 20
    assert nice_step(9, 10) == 1


def test_the_demo_writes_its_run_as_a_report(tmp_path: Path) -> None:
    path = tmp_path / "window.html"
    args = ["demo", "--turns", "40", "--store", ":memory:", "--report", str(path), "--json"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    figures = json.loads(result.output)  # --json stays pure JSON
    page = path.read_text(encoding="utf-8")
    assert page.count('class="marker marker-overflow"') == figures["overflows"] >= 1
    assert page.count('class="marker marker-offload"') == figures["offloads"] >= 1
    archive = re.findall(r"context://archive/[\w.]+", page)
    assert archive and all(f"<code>{uri}</code>" in page for uri in archive)
    assert f"{figures['peak_window_tokens']:,}" in page
    assert 'id="series-memory"' in page


def test_a_report_path_that_cannot_be_written_is_refused_before_the_run(tmp_path: Path) -> None:
    for bad in (tmp_path, tmp_path / "missing" / "r.html"):
        result = CliRunner().invoke(app, ["demo", "--store", ":memory:", "--report", str(bad)])
        assert result.exit_code == 2
        assert "--report" in result.output
        assert "turns for" not in result.output


@pytest.mark.parametrize("target", ["openai", "openai-responses", "anthropic", "gemini"])
@pytest.mark.parametrize("placement", ["after_system", "before_history_tail"])
def test_payload_layers_count_the_memory_block_apart(target: str, placement: str) -> None:
    tokenizer = EstimateTokenizer()
    chef = ContextChef(memory={"placement": placement}, tokenizer=tokenizer)
    chef.set_system_prompt("You are terse.").set_history([{"role": "user", "content": "hi"}])
    before = payload_layers(chef.compile(target=target), tokenizer.count_text)
    chef.memory.set("test-command", "python -m pytest -q " + "-p no:cacheprovider " * 20)
    payload = chef.compile(target=target)
    after = payload_layers(payload, tokenizer.count_text)
    assert before["memory"] == 0
    assert after["memory"] > 40
    assert sum(after.values()) == payload.meta.tokens.total
    # A memory write never breaks the cached prefix: it reaches the model at the tail (as the
    # block there, or as the changes since the block in the system part was rendered).
    assert after["system"] == before["system"]
    assert after["tail"] - before["tail"] < after["memory"]
    assert after["tools"] == before["tools"]
    fresh = ContextChef(memory={"placement": placement}, tokenizer=tokenizer)
    fresh.memory.set("test-command", "python -m pytest -q " + "-p no:cacheprovider " * 20)
    fresh.set_system_prompt("You are terse.").set_history([{"role": "user", "content": "hi"}])
    first = fresh.compile(target=target)
    layers = payload_layers(first, tokenizer.count_text)
    assert layers["memory"] > 40 and sum(layers.values()) == first.meta.tokens.total
    moved_from = "system" if placement == "after_system" else "tail"
    assert layers[moved_from] - before[moved_from] < layers["memory"]
    assert abs(after["history"] - before["history"]) <= 2  # the tail's split rounds per part
