"""Remote batch free against the epoch's length (``experiments/rbf_small_machine.toml``).

The Epochs paper (Kim, Brown and Singh, "Are Your Epochs Too Epic? Batch Free Can Be Harmful",
PPoPP 2024, Section 3 and Tables 2-3) attributes batch free's cost to long epochs: large limbo
bags of nodes other threads allocated, freed at once, overflow the allocator's thread cache. An
experiment that varies ``min_epoch_us`` (smrbench ``--min-epoch-us``) gets one figure per
structure, thread count and reclaimer: per allocator, against the minimum epoch, batch and
amortized free side by side,

- the share of the threads' time spent in ``free()`` (every allocator), and
- the allocator's thread-cache flushes per 1,000 freed nodes (jemalloc's counters; the others
  keep none, and their panel says so).

A bar is the median of a configuration's trials; its whisker spans them.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from typing import Any

from smrlab import frees, style
from smrlab.plots import Plot

_FREES = ("batch", "amortized")
_FREE_COLORS = {"batch": "#4c72b0", "amortized": "#dd8452"}


def applies(runs: list[dict[str, Any]]) -> bool:
    """Whether the runs vary the minimum epoch (more than one value of ``min_epoch_us``)."""
    return len({_min_epoch_ms(run) for run in runs} - {None}) > 1


def _min_epoch_ms(run: dict[str, Any]) -> float | None:
    value = run["result"]["config"].get("min_epoch_us")
    return None if value is None else value / 1000.0


_PANELS = (
    ("time in free() (% of threads × time)", frees.time_in_free_pct),
    (
        "thread-cache flushes per 1,000 freed",
        lambda run: frees.per_kilo_freed(run, "tcache_flushes"),
    ),
)


def figures(runs: list[dict[str, Any]]) -> list[Plot]:
    """One figure per structure × threads × reclaimer of runs that vary the minimum epoch."""
    # (ds, threads, reclaimer) -> alloc -> (min epoch ms, free) -> runs
    groups: dict[tuple, dict[str, dict[tuple, list]]] = defaultdict(
        lambda: defaultdict(lambda: defaultdict(list))
    )
    for run in runs:
        epoch = _min_epoch_ms(run)
        if epoch is not None and run["free"] in _FREES:
            key = (run["ds"], run["threads"], run["reclaimer"])
            groups[key][run["alloc"]][(epoch, run["free"])].append(run)
    return [_figure(key, by_alloc) for key, by_alloc in sorted(groups.items())]


def _figure(key: tuple, by_alloc: dict[str, dict[tuple, list]]) -> Plot:
    ds, threads, reclaimer = key
    allocs = sorted(by_alloc)
    fig = style.figure(3.2 * len(allocs) + 1.0, 5.6)
    axes = fig.subplots(len(_PANELS), len(allocs), squeeze=False, sharex="col")
    for column, alloc in enumerate(allocs):
        cells = by_alloc[alloc]
        epochs = sorted({epoch for epoch, _ in cells})
        for row, (label, value) in enumerate(_PANELS):
            ax = axes[row][column]
            drawn = False
            for offset, free in enumerate(_FREES):
                points = [
                    [
                        v
                        for v in (value(run) for run in cells.get((epoch, free), []))
                        if v is not None
                    ]
                    for epoch in epochs
                ]
                xs = [i + (offset - 0.5) * 0.38 for i, values in enumerate(points) if values]
                shown = [values for values in points if values]
                if not shown:
                    continue
                drawn = True
                medians = [statistics.median(values) for values in shown]
                ax.bar(
                    xs,
                    medians,
                    width=0.36,
                    color=_FREE_COLORS[free],
                    edgecolor="#333333",
                    linewidth=0.5,
                    label=free,
                    yerr=[
                        [m - min(v) for m, v in zip(medians, shown, strict=True)],
                        [max(v) - m for m, v in zip(medians, shown, strict=True)],
                    ],
                    capsize=2,
                    error_kw={"elinewidth": 0.8},
                )
            if not drawn:
                ax.text(
                    0.5,
                    0.5,
                    f"{alloc} keeps\nno such counter",
                    ha="center",
                    va="center",
                    transform=ax.transAxes,
                    fontsize=8,
                    color="#666666",
                )
                ax.set_yticks([])
            ax.set_xticks(range(len(epochs)))
            ax.set_xticklabels([f"{epoch:g}" for epoch in epochs])
            ax.set_ylim(bottom=0)
            if row == 0:
                ax.set_title(alloc, fontsize=10)
            if row == len(_PANELS) - 1:
                ax.set_xlabel("minimum epoch (ms)")
            if column == 0:
                ax.set_ylabel(label, fontsize=8)
    axes[0][-1].legend(title="free", fontsize=8, title_fontsize=8, frameon=False)
    title = f"Remote batch free — {ds} · {reclaimer} · {threads} threads"
    fig.suptitle(title, x=0.02, ha="left", fontsize=10)
    fig.text(
        0.99,
        0.005,
        "median of trials; whiskers: min–max",
        ha="right",
        va="bottom",
        fontsize=7,
        color="#666666",
    )
    stem = f"rbf-{ds}-{reclaimer}-{threads}t"
    return Plot(stem, "rbf", title, fig, {"ds": ds, "threads": threads, "reclaimer": reclaimer})
