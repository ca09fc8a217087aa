"""Figures of the allocator alone: ``smrbench threadtest`` and ``smrbench layout`` results.

- threadtest (the allocator/STM study's Figure 3): malloc/free pairs per second against the
  block size, one line per allocator, median of trials with min–max bars; one figure per
  thread count × form (the paper's one block at a time, or Hoard's rounds of N objects);
- layout (what the study's Figures 2 and 5 draw): per allocator, the share of consecutive
  blocks that share a versioned lock (one thread) and of the second thread's blocks that
  collide with the first's, at shifts 4 and 5, beside the collisions a random placement would
  give; one figure per block size.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import numpy as np
from matplotlib.patches import Patch

from smrlab import style
from smrlab.plots import Plot, _facet_fields, _note, _Point

# The study's allocators first (glibc, then those with thread caches), then ours.
ALLOCATOR_ORDER = ("glibc", "tcmalloc", "tbbmalloc", "jemalloc", "mimalloc")
SHIFTS = (4, 5)


def _allocator_rank(name: str) -> tuple[int, str]:
    order = ALLOCATOR_ORDER.index(name) if name in ALLOCATOR_ORDER else len(ALLOCATOR_ORDER)
    return order, name


def allocator_color(name: str) -> str:
    """A stable colour per allocator."""
    if name in ALLOCATOR_ORDER:
        return style.PALETTE[ALLOCATOR_ORDER.index(name) % len(style.PALETTE)]
    return style.PALETTE[sum(map(ord, name)) % len(style.PALETTE)]


def other_options(runs: list[dict[str, Any]], shown: set[str]) -> list[str]:
    """Config fields that vary between runs beyond those a figure shows (`shown`): a quick and
    a paper size of one experiment differ in duration, so their runs never share a point."""
    return [key for key in _facet_fields(runs) if key not in shown]


def other_values(run: dict[str, Any], keys: list[str]) -> tuple:
    config = run["result"]["config"]
    return tuple(config.get(key) for key in keys)


def describe_others(keys: list[str], values: tuple) -> tuple[str, str]:
    """A title suffix and a file-name suffix for the other options' values."""
    pairs = list(zip(keys, values, strict=True))
    title = "".join(f" · {key.replace('_', ' ')} {value}" for key, value in pairs)
    stem = "".join(f"-{key}{value}" for key, value in pairs)
    return title, stem


def by_facet(item: tuple[tuple, Any]) -> tuple:
    """Sort order of (facet, ...) items: numbers numerically, anything else as text."""
    return tuple((0, v, "") if isinstance(v, int | float) else (1, 0, str(v)) for v in item[0])


def allocator_lines(ax, by_allocator: dict[str, dict[int, list[float]]]) -> list[int]:
    """One line per allocator: at each x, the median of its values with min–max bars.
    Returns every x drawn, sorted."""
    every_x: set[int] = set()
    for allocator in sorted(by_allocator, key=_allocator_rank):
        points = by_allocator[allocator]
        xs = sorted(points)
        every_x.update(xs)
        stats = [_Point(points[x]) for x in xs]
        medians = np.array([p.median for p in stats])
        yerr = np.array([[p.median - p.low for p in stats], [p.high - p.median for p in stats]])
        ax.errorbar(
            xs,
            medians,
            yerr=yerr,
            label=allocator,
            color=allocator_color(allocator),
            marker="o",
            capsize=3,
            elinewidth=1.0,
            markersize=5,
        )
    return sorted(every_x)


def threadtest_figures(runs: list[dict[str, Any]]) -> list[Plot]:
    """Figure 3: throughput against block size per allocator."""
    others = other_options(runs, {"block_size", "objects"})
    facets: dict[tuple, dict[str, dict[int, list[float]]]] = defaultdict(
        lambda: defaultdict(lambda: defaultdict(list))
    )
    for run in runs:
        config = run["result"]["config"]
        facet = (int(config["threads"]), int(config["objects"]), *other_values(run, others))
        facets[facet][run["alloc"]][int(run["block_size"])].append(run["throughput"] / 1e6)
    plots = []
    for (threads, objects, *values), by_allocator in sorted(facets.items(), key=by_facet):
        suffix, stem = describe_others(others, tuple(values))
        fig = style.figure(6.4, 4.2)
        ax = fig.add_subplot()
        sizes = allocator_lines(ax, by_allocator)
        ax.set_xscale("log", base=2)
        ax.set_xticks(sizes, [_bytes(size) for size in sizes])
        ax.set_xlabel("block size")
        ax.set_ylabel("M malloc/free pairs per second")
        ax.set_ylim(bottom=0)
        form = "one block at a time" if objects == 0 else f"rounds of {objects} blocks"
        title = f"threadtest — {threads} threads, {form}{suffix}"
        ax.set_title(title, loc="left", fontsize=10)
        ax.legend(title="allocator", fontsize=8, title_fontsize=8, frameon=False)
        _note(ax, "median of trials; bars: min–max")
        facet = {"threads": threads, "objects": objects, **dict(zip(others, values, strict=True))}
        name = f"threadtest-t{threads}-o{objects}{stem}"
        plots.append(Plot(name, "threadtest", title, fig, facet))
    return plots


def layout_figures(runs: list[dict[str, Any]]) -> list[Plot]:
    """Figures 2 and 5, measured: lock sharing within a thread and collisions between two."""
    others = other_options(runs, {"block_size"})
    by_size: dict[tuple, dict[str, dict[str, Any]]] = defaultdict(dict)
    for run in runs:  # the latest run per allocator and configuration
        by_size[(int(run["block_size"]), *other_values(run, others))][run["alloc"]] = run["result"]
    plots = []
    for (size, *values), by_allocator in sorted(by_size.items(), key=by_facet):
        suffix, stem = describe_others(others, tuple(values))
        allocators = sorted(by_allocator, key=_allocator_rank)
        fig = style.figure(7.6, 3.8)
        within, across = fig.subplots(1, 2, sharey=True)
        positions = np.arange(len(allocators))
        width = 0.8 / len(SHIFTS)
        for index, shift in enumerate(SHIFTS):
            offset = (index - (len(SHIFTS) - 1) / 2) * width
            sharing = [
                _at_shift(by_allocator[a]["one_thread"]["shared_lock"], shift)["sharing_pct"]
                for a in allocators
            ]
            cross = [
                _at_shift(by_allocator[a]["two_threads"]["cross_thread"], shift) for a in allocators
            ]
            hatch = "" if shift == SHIFTS[0] else "//"
            within.bar(
                positions + offset,
                sharing,
                width,
                label=f"shift {shift}",
                hatch=hatch,
                color=[allocator_color(a) for a in allocators],
                edgecolor="black",
            )
            across.bar(
                positions + offset,
                [c["collisions_pct"] for c in cross],
                width,
                hatch=hatch,
                color=[allocator_color(a) for a in allocators],
                edgecolor="black",
            )
            random = [100 * c["random_expectation"] / c["blocks"] for c in cross]
            across.scatter(
                positions + offset,
                random,
                marker="_",
                color="black",
                s=120,
                zorder=3,
                label="random placement" if index == 0 else None,
            )
        for ax, title in (
            (within, "one thread: consecutive blocks\nsharing a versioned lock"),
            (across, "two threads: the second's blocks\nsharing a lock with the first's"),
        ):
            ax.set_xticks(positions, allocators, rotation=20)
            ax.set_title(title, fontsize=9)
            ax.set_ylim(0, 105)
        within.set_ylabel("% of blocks")
        shift_keys = [
            Patch(
                facecolor="white",
                edgecolor="black",
                hatch="" if i == 0 else "//",
                label=f"shift {shift}",
            )
            for i, shift in enumerate(SHIFTS)
        ]
        within.legend(handles=shift_keys, fontsize=8, frameon=False, loc="upper left")
        across.legend(fontsize=8, frameon=False, loc="upper center")
        bits = next(iter(by_allocator.values()))["config"]["ort_bits"]
        title = f"Address layout — {_bytes(size)} blocks, 2^{bits} versioned locks{suffix}"
        fig.suptitle(title, fontsize=10, x=0.0, ha="left")
        facet = {"block_size": size, **dict(zip(others, values, strict=True))}
        plots.append(Plot(f"layout-{size}B{stem}", "layout", title, fig, facet))
    return plots


def _at_shift(rows: list[dict[str, Any]], shift: int) -> dict[str, Any]:
    return next(row for row in rows if row["shift"] == shift)


def _bytes(size: int) -> str:
    if size >= 1024 and size % 1024 == 0:
        return f"{size // 1024} KiB"
    return f"{size} B"
