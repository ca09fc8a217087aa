"""Figures and tables of ``smrbench stamp`` results: the STAMP applications on smrlab's STM.

The allocator/STM study (Baldassin, Borin and Araujo, TRANSACT 2014) reports each application's
speedup per allocator, normalized by that allocator's own one-thread time (its Figure 7), and
per application the best and the worst allocator with the gain of the one over the other at the
thread count where it is largest (its Table 5). Both come from the clients' wall time of each
trial (``seconds``), medians over trials.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

import numpy as np

from smrlab import style
from smrlab.allocator_plots import (
    allocator_lines,
    by_facet,
    describe_others,
    other_options,
    other_values,
)
from smrlab.plots import Plot, _note


def applies(runs: list[dict[str, Any]]) -> bool:
    return bool(runs) and runs[0]["benchmark"] == "stamp"


def _seconds(run: dict[str, Any]) -> float:
    return float(run["result"]["seconds"])


def times(runs: list[dict[str, Any]]) -> dict[tuple, dict[str, dict[int, list[float]]]]:
    """Per (app, other options): per allocator, per thread count, the trials' seconds."""
    others = other_options(runs, {"app", "threads"})
    out: dict[tuple, dict[str, dict[int, list[float]]]] = defaultdict(
        lambda: defaultdict(lambda: defaultdict(list))
    )
    for run in runs:
        config = run["result"]["config"]
        facet = (config["app"], *other_values(run, others))
        out[facet][run["alloc"]][int(config["threads"])].append(_seconds(run))
    return out


def speedups(by_threads: dict[int, list[float]]) -> dict[int, list[float]]:
    """Each trial's speedup over the allocator's own median one-thread time (the paper's
    normalization); empty without a one-thread run."""
    if 1 not in by_threads:
        return {}
    base = float(np.median(by_threads[1]))
    return {n: [base / t for t in trials] for n, trials in by_threads.items()}


def figures(runs: list[dict[str, Any]]) -> list[Plot]:
    """Figure 7: speedup against threads, one line per allocator, per application."""
    others = other_options(runs, {"app", "threads"})
    plots = []
    for (app, *values), by_allocator in sorted(times(runs).items(), key=by_facet):
        lines = {alloc: speedups(by_threads) for alloc, by_threads in by_allocator.items()}
        lines = {alloc: points for alloc, points in lines.items() if points}
        if not lines:
            continue
        suffix, stem = describe_others(others, tuple(values))
        fig = style.figure(6.4, 4.2)
        ax = fig.add_subplot()
        threads = allocator_lines(ax, lines)
        ax.set_xticks(threads, [str(n) for n in threads])
        ax.set_xlabel("threads (clients)")
        ax.set_ylabel("speedup over the allocator's 1 thread")
        ax.set_ylim(bottom=0)
        title = f"STAMP {app} — speedup per allocator{suffix}"
        ax.set_title(title, loc="left", fontsize=10)
        ax.legend(title="allocator", fontsize=8, title_fontsize=8, frameon=False)
        _note(ax, "clients' wall time; median of trials, bars: min–max")
        facet = {"app": app, **dict(zip(others, values, strict=True))}
        plots.append(Plot(f"stamp-{app}{stem}", "stamp", title, fig, facet))
    return plots


@dataclass(frozen=True)
class BestWorst:
    """Table 5's row: at the thread count where it is largest, the gain of the best allocator
    (shortest median time) over the worst, in percent (worst / best - 1)."""

    app: str
    others: tuple
    best: str
    worst: str
    gain_pct: float
    threads: int


def best_and_worst(runs: list[dict[str, Any]]) -> list[BestWorst]:
    """Per application: Table 5's best and worst allocator, over the thread counts at which at
    least two allocators ran."""
    rows = []
    for (app, *values), by_allocator in sorted(times(runs).items(), key=by_facet):
        candidates = []
        every_n = sorted({n for by_threads in by_allocator.values() for n in by_threads})
        for n in every_n:
            medians = {
                alloc: float(np.median(by_threads[n]))
                for alloc, by_threads in by_allocator.items()
                if n in by_threads
            }
            if len(medians) < 2:
                continue
            best = min(medians, key=medians.__getitem__)
            worst = max(medians, key=medians.__getitem__)
            gain = 100.0 * (medians[worst] / medians[best] - 1.0)
            candidates.append((gain, n, best, worst))
        if candidates:
            gain, n, best, worst = max(candidates)
            rows.append(BestWorst(app, tuple(values), best, worst, gain, n))
    return rows
