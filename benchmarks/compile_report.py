"""The compile benchmark's report: ratios, the issue's targets as met / not met, the table."""

from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple

RATIOS = {  # name: (numerator, denominator)
    "turn_over_ts": ("turn_append_ms", "ts_turn_append_ms"),
    "turn_over_orjson": ("turn_append_ms", "orjson_ms"),
    "fresh_over_ts": ("turn_fresh_ms", "ts_turn_fresh_ms"),
    "cold_over_ts": ("cold_ms", "ts_cold_ms"),
    "alone_over_orjson": ("compile_alone_ms", "orjson_ms"),
    "cold_compile_over_orjson": ("cold_compile_ms", "orjson_ms"),
    "rss_over_ts": ("rss_mib", "ts_rss_mib"),
    "cold_over_orjson": ("cold_ms", "orjson_ms"),
    "turn_over_json": ("turn_append_ms", "json_ms"),
    "api_over_ts": ("turn_api_append_ms", "ts_turn_append_ms"),
    "floor_over_ts": ("floor_ms", "ts_cold_ms"),
    "cold_over_floor": ("cold_ms", "floor_ms"),
    "shared_floor_over_ts": ("floor_shared_ms", "ts_cold_ms"),
    "cold_over_shared_floor": ("cold_ms", "floor_shared_ms"),
    "containers_over_orjson": ("floor_containers_ms", "orjson_ms"),
    "validated_floor_over_ts": ("floor_validated_ms", "ts_cold_ms"),
    "validated_python_floor_over_ts": ("floor_validated_python_ms", "ts_cold_ms"),
    "python_over_orjson": ("floor_python_ms", "orjson_ms"),
    "cold_compile_over_python": ("cold_compile_ms", "floor_python_ms"),
    "cold_over_validated_floor": ("cold_ms", "floor_validated_ms"),
    "compare_over_ts": ("compare_ms", "ts_turn_append_ms"),
}


def add_ratios(row: dict[str, Any]) -> None:
    for name, (top, bottom) in RATIOS.items():
        if row.get(top) is not None and row.get(bottom):
            row[name] = row[top] / row[bottom]


class Target(NamedTuple):
    """One of the issue's targets: `ratio <= limit` on these targets, at sizes >= `min_size`.
    `floor`: the ratio of the least a pure-Python implementation of this design must do for
    the same result (the intake's compiled validator where it validates, one display per
    container where it builds the payload), measured in the same run; where it alone exceeds
    the limit, the target is out of reach for such a library. The floors of code that builds
    in C (`orjson.loads`) are printed beside it."""

    text: str
    ratio: str
    limit: float
    targets: tuple[str, ...]
    min_size: int
    floor: str | None = None


RESTRUCTURING = ("openai-responses", "anthropic", "gemini")
THREE = ("openai", "anthropic", "gemini")
ISSUE_TARGETS = (  # issue 24's
    Target("cold <= 1x TS cold", "cold_over_ts", 1.0, THREE, 10_000,
           floor="validated_python_floor_over_ts"),
    Target("compile alone, fresh chef <= 3x orjson.dumps", "cold_compile_over_orjson", 3.0,
           THREE, 10_000, floor="python_over_orjson"),
    Target("turn, host appending <= 0.10x TS turn", "turn_over_ts", 0.10, THREE, 10_000,
           floor="compare_over_ts"),
    Target("append_history turn <= 0.05x TS turn", "api_over_ts", 0.05, THREE, 10_000),
    Target("peak RSS <= TS peak RSS", "rss_over_ts", 1.0, THREE, 50_000),
)  # fmt: skip


def check_targets(report: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """Each target with the rows it applies to, their ratios and whether it is met; and, for a
    target with a floor, the floor's ratios and the rows where the floor alone exceeds it."""
    verdicts: list[dict[str, Any]] = []
    for goal in ISSUE_TARGETS:

        def rows(ratio: str | None, goal: Target = goal) -> list[tuple[int, str, float]]:
            return [
                (row["messages"], row["target"], row[ratio])
                for row in report.values()
                if ratio is not None
                and row["target"] in goal.targets
                and row["messages"] >= goal.min_size * 0.99
                and ratio in row
            ]

        seen, floors = rows(goal.ratio), rows(goal.floor)
        verdict = "not measured" if not seen else "met"
        if any(value > goal.limit for _, _, value in seen):
            verdict = "NOT met"
        verdicts.append(
            {
                "target": goal.text,
                "verdict": verdict,
                "rows": seen,
                "floor": goal.floor,
                "floor_rows": floors,
                "floor_above_target": [item for item in floors if item[2] > goal.limit],
            }
        )
    return verdicts


# -- printing --------------------------------------------------------------------------------

COLUMNS = (  # header, key, format: the figures
    ("cold", "cold_ms", ".1f"),
    ("·hist", "cold_set_history_ms", ".1f"),
    ("·cmp", "cold_compile_ms", ".1f"),
    ("turn+", "turn_append_ms", ".1f"),
    ("turn~", "turn_fresh_ms", ".1f"),
    ("turn»", "turn_api_append_ms", ".1f"),
    ("alone", "compile_alone_ms", ".1f"),
    ("eq", "compare_ms", ".1f"),
    ("orjson", "orjson_ms", ".2f"),
    ("json", "json_ms", ".1f"),
    ("RSS", "rss_mib", ".0f"),
    ("floor", "floor_ms", ".1f"),
    ("floor=", "floor_shared_ms", ".1f"),
    ("floor✓", "floor_validated_ms", ".1f"),
    ("py", "floor_python_ms", ".1f"),
    ("py✓", "floor_validated_python_ms", ".1f"),
    ("TScold", "ts_cold_ms", ".1f"),
    ("TSturn+", "ts_turn_append_ms", ".1f"),
    ("TSturn~", "ts_turn_fresh_ms", ".1f"),
    ("TS_RSS", "ts_rss_mib", ".0f"),
)
RATIO_COLUMNS = (
    ("turn+/TS", "turn_over_ts", ".2f"),
    ("turn+/orj", "turn_over_orjson", ".2f"),
    ("turn~/TS", "fresh_over_ts", ".2f"),
    ("turn»/TS", "api_over_ts", ".2f"),
    ("eq/TS", "compare_over_ts", ".2f"),
    ("cold/TS", "cold_over_ts", ".2f"),
    ("floor/TS", "floor_over_ts", ".2f"),
    ("cold/flr", "cold_over_floor", ".2f"),
    ("flr=/TS", "shared_floor_over_ts", ".2f"),
    ("cold/flr=", "cold_over_shared_floor", ".2f"),
    ("flr✓/TS", "validated_floor_over_ts", ".2f"),
    ("cold/flr✓", "cold_over_validated_floor", ".2f"),
    ("py✓/TS", "validated_python_floor_over_ts", ".2f"),
    ("py/orj", "python_over_orjson", ".2f"),
    ("cmp/py", "cold_compile_over_python", ".2f"),
    ("cmp/orj", "cold_compile_over_orjson", ".2f"),
    ("alone/orj", "alone_over_orjson", ".2f"),
    ("RSS/TS", "rss_over_ts", ".2f"),
)


def print_table(rows: list[dict[str, Any]]) -> None:
    """The figures, then the ratios the issue's targets are stated in."""
    for columns, width in ((COLUMNS, 8), (RATIO_COLUMNS, 10)):
        head = f"{'msgs':>6} {'target':<16}" + "".join(f"{h:>{width}}" for h, _, _ in columns)
        print(head)
        print("-" * len(head))
        for row in rows:
            cells = "".join(
                f"{format(row[k], f):>{width}}" if row.get(k) is not None else f"{'-':>{width}}"
                for _, k, f in columns
            )
            print(f"{row['messages']:>6} {row['target']:<16}{cells}")
        print()


def print_legend() -> None:
    print(
        "ms, medians. cold = new chef + set_system_prompt + set_history (·hist) + compile (·cmp); "
        "turn+ = set_history(h + 1) + compile, host appending; turn~ = the same, host reloading "
        "fresh dicts; turn» = append_history([one]) + compile; alone = compile of turn+; "
        "orjson/json = dumps of the payload; floor = the physical floor of a cold compile "
        "(orjson.dumps of the history + orjson.loads of the payload's JSON), floor= the same "
        "sharing the host's strings (the payload's containers alone), floor✓ the floor of a "
        "chef that validates and copies the history (the intake's compiled validator with no "
        "Python per message, then the payload's containers); py = the payload's containers "
        "built by the least Python (python_floor.py), py✓ = the validator + py; eq = the host's "
        "list == "
        "the chef's copies (one C call: the least that sees an edit made in place, the floor of "
        "turn+); RSS in MiB "
        "(fresh process); TS = the reference @context-chef/core."
    )


def print_verdicts(verdicts: list[dict[str, Any]]) -> None:
    print("\nIssue 24 targets (at 10k and 50k messages; RSS at 50k):")
    for item in verdicts:
        values = ", ".join(f"{n // 1000}k {t} {v:.2f}" for n, t, v in item["rows"])
        print(f"  [{item['verdict']:^12}] {item['target']}: {values or '-'}")
        if item["floor_rows"]:
            values = ", ".join(f"{n // 1000}k {t} {v:.2f}" for n, t, v in item["floor_rows"])
            above, rows = len(item["floor_above_target"]), len(item["floor_rows"])
            state = (
                f"exceeds the target alone in {above} of {rows} rows" if above else "is within it"
            )
            print(f"  {'':14}its floor ({item['floor']}) {state}: {values}")


# -- the markdown table docs/performance.md shows (written by the benchmark, never typed) ----

TABLE_BEGIN = "<!-- table written by benchmarks/compile.py --docs: begin -->"
TABLE_END = "<!-- table written by benchmarks/compile.py --docs: end -->"
MARKDOWN = (  # header, numerator, denominator (None: a figure, not a ratio)
    ("cold", "cold_ms", None),
    ("TS cold", "ts_cold_ms", None),
    ("cold / TS", "cold_ms", "ts_cold_ms"),
    ("floor / TS cold", "floor_ms", "ts_cold_ms"),
    ("floor, strings shared / TS cold", "floor_shared_ms", "ts_cold_ms"),
    ("floor, validated / TS cold", "floor_validated_ms", "ts_cold_ms"),
    ("… built by Python / TS cold", "floor_validated_python_ms", "ts_cold_ms"),
    ("cold compile / `orjson.dumps`", "cold_compile_ms", "orjson_ms"),
    ("least Python / `orjson.dumps`", "floor_python_ms", "orjson_ms"),
    ("turn, appending", "turn_append_ms", None),
    ("TS turn", "ts_turn_append_ms", None),
    ("turn / TS", "turn_append_ms", "ts_turn_append_ms"),
    ("its floor (`==`) / TS turn", "compare_ms", "ts_turn_append_ms"),
    ("turn, reloading / TS", "turn_fresh_ms", "ts_turn_fresh_ms"),
    ("`append_history` turn / TS", "turn_api_append_ms", "ts_turn_append_ms"),
    ("peak RSS / TS", "rss_mib", "ts_rss_mib"),
)


def _cell(row: dict[str, Any], top: str, bottom: str | None) -> str:
    """`median (min)`: of a figure in ms, or of a ratio (the ratio of the medians, and of the
    minima)."""
    if bottom is None:
        if row.get(top) is None:
            return "-"
        low = row.get(f"min_{top}")
        return f"{row[top]:.1f}" + (f" ({low:.1f})" if low is not None else "")
    if row.get(top) is None or not row.get(bottom):
        return "-"
    text = f"{row[top] / row[bottom]:.2f}"
    low_top, low_bottom = row.get(f"min_{top}"), row.get(f"min_{bottom}")
    if low_top is not None and low_bottom:
        text += f" ({low_top / low_bottom:.2f})"
    return text


def markdown_table(document: dict[str, Any]) -> str:
    """The run as a markdown table with a line saying when, where and under what load."""
    meta = document["meta"]
    loads = sorted(
        {round(r[k], 1) for r in document["rows"].values() for k in ("load_before", "load_after")}
    )
    load = f"{loads[0]}–{loads[-1]}" if loads else "-"
    lines = [
        f"Measured {meta['date']} by `benchmarks/compile.py` ({meta['machine']}; Python "
        f"{meta['python']}, Node {meta['node'] or '-'}; wall clock on both sides, "
        f"{meta['repeats']} interleaved rounds of {meta['turns']} turns; 1-minute load average "
        f"{load}). Each cell: median (minimum) over the rounds, ms or a ratio.",
        "",
        "| messages | target | " + " | ".join(h for h, _, _ in MARKDOWN) + " |",
        "|---|---|" + "---|" * len(MARKDOWN),
    ]
    for row in document["rows"].values():
        cells = " | ".join(_cell(row, top, bottom) for _, top, bottom in MARKDOWN)
        size = f"{round(row['messages'] / 1000)}k" if row["messages"] >= 1000 else row["messages"]
        lines.append(f"| {size} | {row['target']} | {cells} |")
    return "\n".join(lines) + "\n"


def write_page(page: Path, table: str) -> None:
    """Replace the table between the page's markers."""
    text = page.read_text()
    head, found, rest = text.partition(TABLE_BEGIN)
    _, ended, tail = rest.partition(TABLE_END)
    if not (found and ended):
        raise SystemExit(f"{page} lacks the markers {TABLE_BEGIN!r} ... {TABLE_END!r}")
    page.write_text(f"{head}{TABLE_BEGIN}\n{table}{TABLE_END}{tail}")
