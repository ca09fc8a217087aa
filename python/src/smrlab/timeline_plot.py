"""The Epochs paper's timeline graph (Figures 2, 3, 6-9) of a window of one trial.

Rows are threads, boxes are free events (batch frees, or free calls over a threshold) coloured
so that neighbours differ, dots are epoch changes on the thread that made them, and a strip at
the bottom projects every epoch change so periods without any are visible at a glance.
"""

from __future__ import annotations

import re

import numpy as np
from matplotlib.collections import PolyCollection
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from smrlab import style
from smrlab.errors import UsageError
from smrlab.timeline import KIND_CODE, GarbageSeries, Timeline

# Box kinds: height as a fraction of the row, drawn in this order (free calls on top).
BOX_KINDS = {"batch_free": 0.80, "free_call": 0.50}
INSTANT_MARKERS = {  # kind: (marker, colour, label)
    "token_pass": ("|", "#333333", "token pass"),
    "signal_sent": ("v", "#c0392b", "signal sent"),
    "neutralized_restart": ("x", "#7d3c98", "neutralized restart"),
    "alloc_failure": ("X", "#e74c3c", "allocation failure"),
}
MAX_BOXES = 40_000  # above this, boxes closer than a pixel are merged (indistinguishable)
_RANGE_RE = re.compile(r"^(\d+)(?:-(\d+))?$")


def parse_thread_list(text: str) -> list[int]:
    """'0-19' or '0,2,4-7' → thread indices; raises UsageError on anything else."""
    threads: list[int] = []
    for part in text.split(","):
        match = _RANGE_RE.match(part.strip())
        if not match:
            raise UsageError(
                f"--threads {text!r}: expected indices and ranges like 0-19 or 0,2,4-7"
            )
        low = int(match.group(1))
        high = int(match.group(2)) if match.group(2) else low
        if high < low:
            raise UsageError(f"--threads {text!r}: range {part.strip()} is backwards")
        threads.extend(range(low, high + 1))
    return sorted(set(threads))


def describe_config(config: dict, trial: object = None) -> str:
    """'dgt_bst · debra (batch free) · jemalloc · 8 threads' from a smrbench config."""
    parts = [
        str(config.get("ds", "?")),
        f"{config.get('reclaimer', '?')} ({config.get('free', '?')} free)",
        str(config.get("alloc", "?")),
        f"{config.get('threads', '?')} threads",
    ]
    if config.get("stall"):
        parts.append("stalled thread")
    if trial is not None:
        parts.append(f"trial {trial}")
    return " · ".join(parts)


def _merge_boxes(start: np.ndarray, end: np.ndarray, gap: float) -> tuple[np.ndarray, ...]:
    """Merges consecutive boxes separated by less than ``gap`` (sorted by start)."""
    if start.size == 0:
        return start, end
    running_end = np.maximum.accumulate(end)
    breaks = np.flatnonzero(start[1:] - running_end[:-1] > gap) + 1
    first = np.concatenate(([0], breaks))
    last = np.concatenate((breaks - 1, [start.size - 1]))
    return start[first], running_end[last]


def plot_timeline(
    timeline: Timeline,
    *,
    start_ms: float | None = None,
    end_ms: float | None = None,
    threads: list[int] | None = None,
    garbage: GarbageSeries | None = None,
    width_in: float = 12.0,
) -> tuple[Figure, list[str]]:
    """Draws the timeline graph of a window; returns the figure and notes for the user."""
    notes: list[str] = []
    start_ns = 0 if start_ms is None else int(start_ms * 1e6)
    end_ns = timeline.measured_end_ns if end_ms is None else int(end_ms * 1e6)
    if end_ns <= start_ns:
        raise UsageError(
            f"empty window: --start-ms {start_ns / 1e6:g} is not before --end-ms {end_ns / 1e6:g}"
        )
    rows = timeline.rows if threads is None else threads
    unknown = sorted(set(rows) - set(timeline.rows))
    if threads is not None and unknown:
        notes.append(
            f"threads {_ranges(unknown)} are not in the file (it has {_ranges(timeline.rows)})"
        )
        rows = [row for row in rows if row in timeline.rows]
    if not rows:
        raise UsageError("no thread of the file is selected")
    shown = timeline.window(start_ns, end_ns, rows)
    truncated = [t for t in timeline.truncated_threads if t in rows]
    if timeline.truncated_threads:
        notes.append(
            f"threads {_ranges(timeline.truncated_threads)} filled their event buffer "
            f"({timeline.header.get('capacity_per_thread', '?')} events): their "
            f"recording stops early"
        )
    if timeline.ignored_kinds:
        notes.append(
            "ignored unknown event kinds: "
            + ", ".join(
                f"{kind} ({count})" for kind, count in sorted(timeline.ignored_kinds.items())
            )
        )

    row_of = {thread: index for index, thread in enumerate(rows)}
    height_rows = min(max(len(rows) * 0.24, 2.0), 14.0)
    ratios = [height_rows, 0.35] + ([1.6] if garbage is not None else [])
    fig = style.figure(width_in, sum(ratios) + 1.2)
    axes = fig.subplots(len(ratios), 1, sharex=True, gridspec_kw={"height_ratios": ratios})
    ax, strip = axes[0], axes[1]
    to_ms = 1e-6
    pixel_ns = (end_ns - start_ns) / (width_in * 150)

    legend: list = []
    for kind, height in BOX_KINDS.items():
        selected = shown.select(shown.kind_mask(kind))
        if len(selected) == 0:
            continue
        polygons, colors = [], []
        merge = len(selected) > MAX_BOXES
        for thread in rows:
            mask = selected.thread == thread
            starts, ends = selected.start[mask], selected.end[mask]
            if merge:
                starts, ends = _merge_boxes(starts, ends, pixel_ns)
            y = row_of[thread]
            lo, hi = y - height / 2, y + height / 2
            x0 = np.maximum(starts, start_ns) * to_ms
            # At least a hairline, so that an event is visible even if it is shorter than a pixel.
            x1 = np.maximum(np.minimum(ends, end_ns), starts + pixel_ns * 0.6) * to_ms
            for index, (a, b) in enumerate(zip(x0, x1, strict=True)):
                polygons.append(((a, lo), (b, lo), (b, hi), (a, hi)))
                colors.append(style.BOX_COLORS[(index + y) % len(style.BOX_COLORS)])
        if merge:
            notes.append(f"{len(selected)} {kind} boxes: neighbours closer than a pixel merged")
        nested = kind == "free_call" and shown.kind_mask("batch_free").any()
        if nested:  # free calls inside batch-free boxes: one dark colour stands out on any box
            colors = ["#202020"] * len(polygons)
        collection = PolyCollection(polygons, facecolors=colors, edgecolors="none")
        ax.add_collection(collection)
        label = (
            "batch free"
            if kind == "batch_free"
            else (f"free call ≥ {_format_ns(timeline.header.get('min_free_ns', 0))}")
        )
        legend.append(Patch(facecolor="#202020" if nested else style.BOX_COLORS[0], label=label))

    epochs = shown.select(shown.kind_mask("epoch_change"))
    if len(epochs):
        ys = np.array([row_of[int(t)] for t in epochs.thread])
        ax.scatter(epochs.start * to_ms, ys, s=9, color=style.EPOCH_COLOR, zorder=3, linewidths=0)
        legend.append(
            Line2D(
                [],
                [],
                marker="o",
                linestyle="none",
                color=style.EPOCH_COLOR,
                markersize=4,
                label="epoch change",
            )
        )
    all_epochs = timeline.window(start_ns, end_ns)
    all_epochs = all_epochs.select(all_epochs.kind_mask("epoch_change"))
    strip.scatter(
        all_epochs.start * to_ms,
        np.zeros(len(all_epochs)),
        s=9,
        color=style.EPOCH_COLOR,
        linewidths=0,
    )
    for kind, (marker, color, label) in INSTANT_MARKERS.items():
        events = shown.select(shown.kind == KIND_CODE[kind])
        if len(events) == 0:
            continue
        ys = np.array([row_of[int(t)] for t in events.thread])
        ax.scatter(
            events.start * to_ms, ys, s=16, marker=marker, color=color, zorder=4, linewidths=0.8
        )
        legend.append(Line2D([], [], marker=marker, linestyle="none", color=color, label=label))

    ax.set_xlim(start_ns * to_ms, end_ns * to_ms)
    ax.set_ylim(len(rows) - 0.5, -0.5)
    step = max(1, int(np.ceil(len(rows) / 40)))
    ticks = list(range(0, len(rows), step))
    ax.set_yticks(ticks)
    labels = []
    stalled = timeline.threads if timeline.config.get("stall") else None
    for index in ticks:
        thread = rows[index]
        label = f"{thread}*" if thread in truncated else str(thread)
        labels.append("stall" if thread == stalled else label)
    ax.set_yticklabels(labels)
    ax.set_ylabel("thread")
    ax.grid(axis="y", visible=False)
    ax.tick_params(axis="x", labelbottom=False)
    strip.set_yticks([])
    strip.set_ylim(-1, 1)
    strip.set_ylabel("epochs", rotation=0, ha="right", va="center")
    strip.grid(axis="y", visible=False)
    strip.spines["left"].set_visible(False)
    if garbage is not None:
        gax = axes[2]
        mask = (garbage.time_ns >= start_ns) & (garbage.time_ns <= end_ns)
        gax.step(
            garbage.time_ns[mask] * to_ms,
            garbage.garbage[mask],
            where="post",
            color="#444444",
            linewidth=1.0,
        )
        gax.set_ylabel("garbage\n(nodes)")
        gax.yaxis.set_major_formatter(_si_formatter())
        strip.tick_params(axis="x", labelbottom=False)
        gax.set_xlabel("time since the start of the measured interval (ms)")
    else:
        strip.set_xlabel("time since the start of the measured interval (ms)")

    title = describe_config(timeline.config, timeline.header.get("trial"))
    window = f"window {start_ns * to_ms:.3f}–{end_ns * to_ms:.3f} ms"
    subtitle = f"{window}; {len(rows)} of {len(timeline.rows)} threads"
    if truncated:
        subtitle += f"; * = buffer full, recording stopped (threads {_ranges(truncated)})"
    ax.set_title(f"{title}\n{subtitle}", loc="left", fontsize=10)
    if legend:
        ax.legend(
            handles=legend,
            loc="upper right",
            bbox_to_anchor=(1.0, 1.16),
            ncols=4,
            frameon=False,
            fontsize=8,
        )
    return fig, notes


def _format_ns(ns: object) -> str:
    value = float(ns or 0)  # 3 digits: the file's value went through a tick conversion
    if value >= 1e6:
        return f"{value / 1e6:.3g} ms"
    if value >= 1e3:
        return f"{value / 1e3:.3g} µs"
    return f"{value:.3g} ns"


def _si_formatter():
    from matplotlib.ticker import EngFormatter

    return EngFormatter(sep="")


def _ranges(values: list[int]) -> str:
    """[0,1,2,5] → '0-2, 5'."""
    values = sorted(values)
    parts = []
    index = 0
    while index < len(values):
        low = values[index]
        while index + 1 < len(values) and values[index + 1] == values[index] + 1:
            index += 1
        high = values[index]
        parts.append(str(low) if low == high else f"{low}-{high}")
        index += 1
    return ", ".join(parts)
