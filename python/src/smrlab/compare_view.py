"""A comparison shown: the terminal table, the JSON, and the figure of the report.

The figure draws one row per matched configuration: the ratio B/A as a dot, its confidence
interval as a bar, the control's noise band shaded behind it, and 1.0 (no difference) as a line,
so a reader sees at once which ratios clear both the interval and the noise.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from smrlab import style
from smrlab.compare import CONFIDENCE, METRICS, Comparison, Interval, Pair
from smrlab.plots import Plot
from smrlab.statistics import GARBAGE, PEAK_RSS, THROUGHPUT, Shown

_SHOWN = {
    "throughput": THROUGHPUT,
    "memory": PEAK_RSS,
    "garbage": GARBAGE,
    "time_per_op": Shown("time per operation", "ns"),
}
_VERDICT_COLORS = {"better": "#1b7837", "worse": "#b2182b"}


def _interval(interval: Interval | None) -> str:
    if interval is None:
        return "-"
    return f"[{interval.low:.3f}, {interval.high:.3f}]"


def _name(pair: Pair, keys: list[str]) -> str:
    return ", ".join(f"{key}={pair.config.get(key)}" for key in keys) or "the configuration"


def title(comparison: Comparison) -> str:
    """What is compared with what, on which metric, against which control."""
    control = comparison.control
    against = f"control {control[0]}={control[1]}" if control else "no control"
    return (
        f"{comparison.label_b} (B) vs {comparison.label_a} (A): {comparison.metric}, "
        f"ratio of medians B/A with {CONFIDENCE:.0%} bootstrap intervals, {against}"
    )


def notes(comparison: Comparison) -> list[str]:
    """What a reader must know before trusting the table."""
    said = []
    if comparison.interleaved is False or comparison.interleaved is None:
        said.append(
            "the two sides were not run interleaved (interleave = true in the experiment's "
            "[compare] table): drift of a shared machine between them counts as a difference"
        )
    if comparison.only_a or comparison.only_b:
        said.append(
            f"unmatched configurations left out: {comparison.only_a} measured only on "
            f"{comparison.label_a}, {comparison.only_b} only on {comparison.label_b}"
        )
    if comparison.control is None:
        said.append("no control: an interval that excludes 1.0 may still be the machine's noise")
    return said


def table(comparison: Comparison) -> str:
    """The terminal table, one line per matched configuration."""
    shown = _SHOWN[comparison.metric]
    keys = comparison.varying()
    head = [*keys, "trials A/B", f"A ({shown.unit})", f"B ({shown.unit})", "B/A", "interval"]
    head += ["noise band", "verdict"]
    rows = [head]
    for pair in comparison.pairs:
        ratio = f"{pair.interval.ratio:.3f}" if pair.interval else "-"
        rows.append(
            [
                *(str(pair.config.get(key)) for key in keys),
                f"{len(pair.a)}/{len(pair.b)}",
                f"{shown.scale(float(np.median(pair.a))):.4g}",
                f"{shown.scale(float(np.median(pair.b))):.4g}",
                ratio,
                _interval(pair.interval),
                _interval(pair.band),
                pair.verdict,
            ]
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(head))]
    lines = [title(comparison)]
    lines += [
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        for row in rows
    ]
    lines += [f"note: {note}" for note in notes(comparison)]
    return "\n".join(lines)


def as_json(comparison: Comparison) -> dict[str, Any]:
    """The comparison as one JSON object (``smrlab compare --json``)."""

    def interval(value: Interval | None) -> dict[str, float] | None:
        if value is None:
            return None
        return {"ratio": value.ratio, "low": value.low, "high": value.high}

    return {
        "a": comparison.label_a,
        "b": comparison.label_b,
        "metric": comparison.metric,
        "column": METRICS[comparison.metric][0],
        "confidence": CONFIDENCE,
        "control": dict([comparison.control]) if comparison.control else None,
        "interleaved": comparison.interleaved,
        "unmatched": {"a": comparison.only_a, "b": comparison.only_b},
        "notes": notes(comparison),
        "pairs": [
            {
                "config": pair.config,
                "a": pair.a,
                "b": pair.b,
                "interval": interval(pair.interval),
                "noise_band": interval(pair.band),
                "verdict": pair.verdict,
            }
            for pair in comparison.pairs
        ],
    }


def figure(comparison: Comparison, name: str) -> Plot:
    """The forest plot of the report: a row per configuration, its interval and noise band."""
    keys = comparison.varying()
    pairs = [pair for pair in comparison.pairs if pair.interval is not None]
    fig = style.figure(7.5, 0.9 + 0.28 * max(len(pairs), 1))
    ax = fig.subplots()
    for row, pair in enumerate(pairs):
        assert pair.interval is not None
        if pair.band is not None and pair.band is not pair.interval:
            ax.fill_betweenx(
                [row - 0.35, row + 0.35], pair.band.low, pair.band.high, color="0.85", linewidth=0
            )
        color = _VERDICT_COLORS.get(pair.verdict, "0.3")
        ax.errorbar(
            pair.interval.ratio,
            row,
            xerr=[
                [pair.interval.ratio - pair.interval.low],
                [pair.interval.high - pair.interval.ratio],
            ],
            fmt="o",
            color=color,
            markersize=4,
            capsize=2,
        )
    ax.axvline(1.0, color="0.2", linewidth=0.8)
    ax.set_yticks(range(len(pairs)), [_name(pair, keys) for pair in pairs], fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel(f"{comparison.metric}: {comparison.label_b} / {comparison.label_a}")
    ax.set_title(title(comparison), loc="left", fontsize=8)
    return Plot(name, "compare", title(comparison), fig)


def experiment_figures(
    store: Any, experiment: str, runs: list[dict[str, Any]]
) -> tuple[list[Plot], list[str]]:
    """The comparison figure of an experiment with a [compare] table (none without one), and
    why it could not be drawn."""
    from smrlab.compare import by_option, compare_sides, experiment_spec
    from smrlab.errors import UsageError

    spec = experiment_spec(store, experiment)
    if spec is None:
        return [], []
    try:
        sides = by_option(runs, spec.by, [str(value) for value in spec.sides], spec)
        result = compare_sides(sides)
    except UsageError as error:
        return [], [f"{experiment}: comparison skipped: {error}"]
    if not any(pair.interval is not None for pair in result.pairs):
        return [], [f"{experiment}: comparison skipped: fewer than 3 trials on a side"]
    return [figure(result, f"compare-{spec.by}")], []
