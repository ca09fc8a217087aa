"""Figures and tables of the allocator/STM study (Baldassin, Borin and Araujo, "On the Impact of
Dynamic Memory Management on Software Transactional Memory Performance", TRANSACT 2014,
Section 5) from stored runs of the transactional structures (``stm_list``, ``stm_hash_set``,
``stm_rbtree``):

- Figure 4: throughput against threads, one line per allocator, per structure and ORT shift;
- Figure 6: the relative speedup of shift 4 over shift 5 (minus one), per allocator and
  threads, where an experiment ran both;
- Table 3: per structure, the best and the worst allocator at the thread count of the highest
  throughput, their ratio, and whether the gap is wider than the trials' spread;
- Table 4: per allocator and threads, the aborted transactions' share and the false aborts'
  (the paper's L1 miss rate needs hardware counters; scripts/measure/stm_cachegrind.py
  simulates it, outside smrlab).

A point is the median of a configuration's trials, with min–max bars.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from smrlab import style
from smrlab.allocator_plots import (
    _allocator_rank,
    allocator_color,
    allocator_lines,
    by_facet,
    describe_others,
    other_options,
    other_values,
)
from smrlab.plots import Plot, _note


def applies(runs: list[dict[str, Any]]) -> bool:
    """Whether every run is a transactional structure's (their figures replace the generic
    per-reclaimer ones)."""
    return bool(runs) and all(str(run["ds"] or "").startswith("stm_") for run in runs)


# (ds, ort_shift, insert, erase, alternate, *other options) -> allocator -> threads -> runs
Groups = dict[tuple, dict[str, dict[int, list[dict[str, Any]]]]]


def _groups(runs: list[dict[str, Any]]) -> tuple[Groups, list[str]]:
    """Runs by configuration, and the names of the other options that split them (a quick and
    a paper size differ in duration: their trials never share a point)."""
    others = other_options(runs, {"ort_shift", "alternate"})
    groups: Groups = defaultdict(lambda: defaultdict(lambda: defaultdict(list)))
    for run in runs:
        config = run["result"]["config"]
        key = (
            run["ds"],
            config.get("ort_shift"),
            run["insert_pct"],
            run["erase_pct"],
            bool(config.get("alternate")),
            *other_values(run, others),
        )
        groups[key][run["alloc"]][int(run["threads"])].append(run)
    return groups, others


def _title(key: tuple, others: list[str]) -> str:
    ds, shift, insert, erase, alternate, *values = key
    updates = f"{insert + erase}% updates" + (" alternating" if alternate else "")
    return f"{ds} · {updates} · shift {shift}" + describe_others(others, tuple(values))[0]


def _stem(key: tuple, others: list[str]) -> str:
    return describe_others(others, tuple(key[5:]))[1]


def _mops(runs: list[dict[str, Any]]) -> list[float]:
    return [run["throughput"] / 1e6 for run in runs]


def throughput_figures(runs: list[dict[str, Any]]) -> list[Plot]:
    """Figure 4: throughput against threads per allocator."""
    plots = []
    groups, others = _groups(runs)
    for key, by_allocator in sorted(groups.items(), key=by_facet):
        fig = style.figure(6.4, 4.2)
        ax = fig.add_subplot()
        mops = {
            allocator: {threads: _mops(group) for threads, group in points.items()}
            for allocator, points in by_allocator.items()
        }
        ax.set_xticks(allocator_lines(ax, mops))
        ax.set_xlabel("threads")
        ax.set_ylabel("Mops/s (committed transactions)")
        ax.set_ylim(bottom=0)
        title = f"Throughput — {_title(key, others)}"
        ax.set_title(title, loc="left", fontsize=10)
        ax.legend(title="allocator", fontsize=8, title_fontsize=8, frameon=False)
        _note(ax, "median of trials; bars: min–max")
        ds, shift = key[0], key[1]
        facet = {"ds": ds, "ort_shift": shift}
        name = f"stm-throughput-{ds}-shift{shift}{_stem(key, others)}"
        plots.append(Plot(name, "stm_throughput", title, fig, facet))
    return plots


def shift_figures(runs: list[dict[str, Any]]) -> list[Plot]:
    """Figure 6: median throughput at shift 4 over shift 5, minus one, per allocator."""
    groups, others = _groups(runs)
    plots = []
    for key in sorted(groups, key=lambda key: by_facet((key, None))):
        ds, shift, *rest = key
        other = (ds, 5, *rest)
        if shift != 4 or other not in groups:
            continue
        fig = style.figure(6.4, 4.2)
        ax = fig.add_subplot()
        threads: set[int] = set()
        for allocator in sorted(groups[key], key=_allocator_rank):
            fours, fives = groups[key][allocator], groups[other].get(allocator, {})
            xs = sorted(set(fours) & set(fives))
            threads.update(xs)
            ratios = [
                100 * (statistics.median(_mops(fours[x])) / statistics.median(_mops(fives[x])) - 1)
                for x in xs
            ]
            ax.plot(xs, ratios, marker="o", label=allocator, color=allocator_color(allocator))
        ax.axhline(0, color="black", linewidth=0.8)
        ax.set_xticks(sorted(threads))
        ax.set_xlabel("threads")
        ax.set_ylabel("speedup of shift 4 over shift 5 (%)")
        title = f"Shift 4 against 5 — {_title(key, others).replace(' · shift 4', '')}"
        ax.set_title(title, loc="left", fontsize=10)
        ax.legend(title="allocator", fontsize=8, title_fontsize=8, frameon=False)
        _note(ax, "ratio of medians of trials, minus one")
        name = f"stm-shift-{ds}{_stem(key, others)}"
        plots.append(Plot(name, "stm_shift", title, fig, {"ds": ds}))
    return plots


@dataclass(frozen=True)
class BestWorst:
    """Table 3's row: at the thread count of the structure's highest throughput."""

    title: str
    threads: int
    best: str
    best_mops: float
    worst: str
    worst_mops: float
    beyond_spread: bool  # every trial of the best above every trial of the worst

    @property
    def speedup_pct(self) -> float:
        return 100 * (self.best_mops / self.worst_mops - 1)


def best_and_worst(runs: list[dict[str, Any]]) -> list[BestWorst]:
    """Table 3: per structure, shift and workload."""
    rows = []
    groups, others = _groups(runs)
    for key, by_allocator in sorted(groups.items(), key=by_facet):
        medians = {
            (allocator, threads): statistics.median(_mops(group))
            for allocator, points in by_allocator.items()
            for threads, group in points.items()
        }
        top_threads = max(medians, key=medians.__getitem__)[1]
        at_top = {a: m for (a, t), m in medians.items() if t == top_threads}
        if len(at_top) < 2:
            continue
        best = max(at_top, key=at_top.__getitem__)
        worst = min(at_top, key=at_top.__getitem__)
        beyond = min(_mops(by_allocator[best][top_threads])) > max(
            _mops(by_allocator[worst][top_threads])
        )
        rows.append(
            BestWorst(
                _title(key, others), top_threads, best, at_top[best], worst, at_top[worst], beyond
            )
        )
    return rows


@dataclass(frozen=True)
class Aborts:
    """Table 4's cell: an allocator at a thread count (medians of trials)."""

    title: str
    allocator: str
    threads: int
    aborted_pct: float
    false_pct: float  # false aborts (lock met and validation), in percent of the aborts
    lock_meet_pct: float  # of them, a load or store that met the lock, in percent of the aborts
    collisions: float  # false aborts met in another stripe on the same table entry
    trials: int


def _lock_meet_pct(stm: dict[str, Any]) -> float:
    """False aborts that met a lock, in percent of the aborts. Results from before validation
    aborts were classified have no such field: their false aborts were all lock meets."""
    meets = stm.get("false_aborts_lock_meet", stm["false_aborts"])
    return 100.0 * meets / stm["aborts"] if stm["aborts"] else 0.0


def abort_rows(runs: list[dict[str, Any]]) -> list[Aborts]:
    """Table 4: aborted transactions and false aborts per allocator and threads."""
    rows = []
    groups, others = _groups(runs)
    for key, by_allocator in sorted(groups.items(), key=by_facet):
        for allocator in sorted(by_allocator, key=_allocator_rank):
            for threads, group in sorted(by_allocator[allocator].items()):
                stm = [run["result"]["stm"] for run in group]
                rows.append(
                    Aborts(
                        _title(key, others),
                        allocator,
                        threads,
                        statistics.median(s["aborted_pct"] or 0.0 for s in stm),
                        statistics.median(s["false_aborts_pct"] or 0.0 for s in stm),
                        statistics.median(_lock_meet_pct(s) for s in stm),
                        statistics.median(s["false_aborts_collision"] for s in stm),
                        len(group),
                    )
                )
    return rows


def figures(runs: list[dict[str, Any]]) -> list[Plot]:
    """Every figure of an experiment of transactional structures."""
    return throughput_figures(runs) + shift_figures(runs)
