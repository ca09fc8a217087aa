"""Figures in the form of Hart, McKenney, Demke Brown and Walpole (JPDC 2007).

Hart et al. plot *time per operation* against the one factor a figure varies: the update
fraction (their Figure 7), the list length (8, 9), the thread count (10-13, 17), or the
structure and synchronization (15, 16); Figure 6 is bars of single-threaded base costs. Their
measure is CPU time (execution time per operation x threads) while the threads fit on the CPUs,
and execution time (the test's duration / all threads' operations) once threads outnumber
CPUs, where CPU time would charge a thread for time it spent preempted. A figure uses one of
the two for all its points: execution time if any of its runs had more threads than CPUs.

Which factor a figure sweeps is found in the stored runs, never declared: the first of threads,
update fraction ((insert + erase) / 100) and list length (the prefill, key_range / 2 for a list
at its steady state) that takes three or more values; with fewer, the figure is Hart's bar form
(Figure 6). Anything else that varies (on_empty, pool_nodes, ...) splits figures, except a
tuning only some schemes read (hp's fence), whose values are series. Series are Hart's names of
the schemes (QSBR, EBR, NEBR, HPBR, LFRC; "HPBR (fence symmetric)" for such a variant),
prefixed by LF (lock-free) or CR (concurrently readable) when a figure holds both kinds of
structure; the spinlock list is
"spinlock" and is drawn only from its runs with ``none``, since no scheme is ever entered.

These figures are built for experiments whose name starts with ``hart_`` (``experiments/``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from smrlab import plots, style
from smrlab.statistics import shown

PREFIX = "hart_"
EXEC_TIME = shown("run", "exec_time_per_op_ns")
CPU_TIME = shown("run", "cpu_time_per_op_ns")

SCHEME_NAMES = {"qsbr": "QSBR", "ebr": "EBR", "nebr": "NEBR", "hp": "HPBR", "lfrc": "LFRC"}
_SCHEME_ORDER = ("none", "qsbr", "nebr", "ebr", "hp", "lfrc")
# Lock-free (LF), concurrently readable (CR) or lock-based: Hart's Section 6.1.
_SYNCHRONIZATION = {
    "hm_list": "LF",
    "hash_set": "LF",
    "ms_queue": "LF",
    "cr_list": "CR",
    "cr_hash_set": "CR",
    "lock_list": "spinlock",
}
_LOCKED = "lock_list"


@dataclass(frozen=True)
class Axis:
    """A factor a figure may sweep: its name, how to read it from a config, its label and the
    config fields that only restate it (not facets)."""

    name: str
    value: Callable[[dict[str, Any]], float]
    label: str
    restates: frozenset[str]


def _update_fraction(config: dict[str, Any]) -> float:
    return (int(config.get("insert", 0)) + int(config.get("erase", 0))) / 100


def _list_length(config: dict[str, Any]) -> float:
    target = config.get("prefill_target")
    if target is None:
        return int(config.get("key_range", 0)) // 2
    return int(target)


AXES = (
    Axis("threads", lambda c: int(c.get("threads", 0)), "threads", frozenset({"threads"})),
    Axis(
        "update_fraction",
        _update_fraction,
        "update fraction",
        frozenset({"insert", "erase", "workload", "contains"}),
    ),
    Axis(
        "list_length",
        _list_length,
        "list length (elements)",
        frozenset({"key_range", "prefill", "prefill_target", "buckets"}),
    ),
)
_MIN_SWEEP = 3  # fewer distinct values: bars, not lines


def applies(experiment: str) -> bool:
    return experiment.startswith(PREFIX)


def series_name(ds: str, reclaimer: str, kinds: set[str]) -> str:
    """'QSBR', or 'LF-QSBR' / 'CR-QSBR' when a figure holds both kinds; 'spinlock'; a
    variant keeps its tunings ('HPBR (fence symmetric)')."""
    if ds == _LOCKED:
        return "spinlock"
    base = style.base_reclaimer(reclaimer)
    scheme = SCHEME_NAMES.get(base, base) + reclaimer[len(base) :]
    kind = _SYNCHRONIZATION.get(ds, ds)
    return f"{kind}-{scheme}" if len(kinds - {"spinlock"}) > 1 else scheme


def measure(runs: list[dict[str, Any]]):
    """Hart's measure for a figure of these runs: execution time if any run had more threads
    than CPUs, else CPU time. Returns (the statistic, its result key)."""
    for run in runs:
        config = plots._config(run)
        cpus = run["result"].get("machine", {}).get("cpus") or run.get("cpus")
        if cpus and int(config.get("threads", 0)) > int(cpus):
            return EXEC_TIME, "exec_time_per_op_ns"
    return CPU_TIME, "cpu_time_per_op_ns"


def _kept(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The spinlock list only with none: under any other scheme it runs the same code."""
    return [
        r
        for r in runs
        if plots._config(r).get("ds") != _LOCKED or plots._config(r).get("reclaimer") == "none"
    ]


def _swept(runs: list[dict[str, Any]]) -> Axis | None:
    for axis in AXES:
        if len({axis.value(plots._config(r)) for r in runs}) >= _MIN_SWEEP:
            return axis
    return None


def _facets(runs: list[dict[str, Any]], axis: Axis | None) -> tuple[list[str], list[Axis]]:
    """Config fields and unswept axes that vary: each value combination is a figure."""
    restated = axis.restates if axis else frozenset()
    fields = [
        f
        for f in plots._facet_fields(runs)
        if f not in restated and all(f not in a.restates for a in AXES)
    ]
    others = [
        a for a in AXES if a is not axis and len({a.value(plots._config(r)) for r in runs}) > 1
    ]
    if axis is None:  # bars: the varying axes are the categories, not facets
        others = []
    return fields, others


def _series_key(run: dict[str, Any], tunings: list[str]) -> tuple[str, str]:
    """(structure, series reclaimer): tunings are plots.series_tunings of the figure's runs."""
    config = plots._config(run)
    return str(config.get("ds")), plots.series_reclaimer(config, tunings)


def _series_rank(key: tuple[str, str]) -> tuple:
    ds, reclaimer = key
    kinds = ("LF", "CR", "spinlock")
    kind = _SYNCHRONIZATION.get(ds, ds)
    base = style.base_reclaimer(reclaimer)
    return (
        kinds.index(kind) if kind in kinds else len(kinds),
        kind,
        _SCHEME_ORDER.index(base) if base in _SCHEME_ORDER else len(_SCHEME_ORDER),
        reclaimer,
    )


def _colors(series: list[tuple[str, str]]) -> dict[tuple[str, str], str]:
    """Each series' colour: its scheme's (a variant's a shade of it); the spinlock none's."""
    shades = style.series_colors(reclaimer for _, reclaimer in series)
    return {
        (ds, reclaimer): style.reclaimer_color("none") if ds == _LOCKED else shades[reclaimer]
        for ds, reclaimer in series
    }


def _values(runs: list[dict[str, Any]], key: str) -> list[float]:
    return [float(r["result"][key]) for r in runs if r["result"].get(key) is not None]


def _append_point(values: list[float], medians: list, low: list, high: list) -> None:
    """One plotted point: the median of the trials, and its distance to their min and max
    (matplotlib's asymmetric error bars)."""
    medians.append(float(np.median(values)))
    low.append(medians[-1] - min(values))
    high.append(max(values) - medians[-1])


def _title(facet: dict[str, Any], runs: list[dict[str, Any]]) -> str:
    config = plots._config(runs[0])
    structures = sorted({plots._config(r).get("ds") for r in runs})
    parts = [" vs ".join(str(s) for s in structures), str(config.get("alloc"))]
    parts += [f"{k.replace('_', ' ')} {v}" for k, v in facet.items()]
    return " · ".join(parts)


def _stem(facet: dict[str, Any]) -> str:
    return "-".join(f"{k}{v}" for k, v in facet.items()).replace("/", "_") or "all"


def build(runs: list[dict[str, Any]]) -> list[plots.Plot]:
    """Every Hart-form figure of one experiment's runs."""
    runs = _kept(runs)
    if not runs:
        return []
    axis = _swept(runs)
    fields, others = _facets(runs, axis)
    tunings = plots.series_tunings(runs)
    groups: dict[tuple, list[dict[str, Any]]] = defaultdict(list)
    for run in runs:
        config = plots._config(run)
        key = tuple(config.get(f) for f in fields) + tuple(a.value(config) for a in others)
        groups[key].append(run)
    names = fields + [a.name for a in others]
    figures = []
    for key, group in sorted(groups.items(), key=lambda item: repr(item[0])):
        facet = dict(zip(names, key, strict=True))
        if axis is None:
            figures.append(_bars(group, facet, tunings))
            continue
        figures.append(_lines(group, facet, axis, tunings))
        schemes = {plots._config(r).get("reclaimer") for r in group}
        if "lfrc" in schemes and len(schemes - {"lfrc"}) > 1:
            # Hart's Figure 8 is Figure 9 without LFRC, whose cost hides the others'.
            rest = [r for r in group if plots._config(r).get("reclaimer") != "lfrc"]
            figures.append(_lines(rest, facet, axis, tunings, suffix="-without-lfrc"))
    return figures


def _lines(
    runs: list[dict[str, Any]],
    facet: dict[str, Any],
    axis: Axis,
    tunings: list[str],
    suffix: str = "",
) -> plots.Plot:
    stat, key = measure(runs)
    by_series: dict[tuple[str, str], dict[float, list]] = defaultdict(lambda: defaultdict(list))
    for run in runs:
        by_series[_series_key(run, tunings)][axis.value(plots._config(run))].append(run)
    kinds = {_SYNCHRONIZATION.get(ds, ds) for ds, _ in by_series}
    colors = _colors(list(by_series))
    fig = style.figure(6.4, 4.2)
    ax = fig.add_subplot()
    stalled = []
    for ds, reclaimer in sorted(by_series, key=_series_rank):
        points = by_series[(ds, reclaimer)]
        name = series_name(ds, reclaimer, kinds)
        xs, medians, low, high = [], [], [], []
        for x in sorted(points):
            values = _values(points[x], key)
            if not values:
                stalled.append(f"{name} at {x:g}")
                continue
            xs.append(x)
            _append_point(values, medians, low, high)
        ax.errorbar(
            xs,
            medians,
            yerr=[low, high],
            label=name,
            color=colors[(ds, reclaimer)],
            marker="o" if _SYNCHRONIZATION.get(ds) != "CR" else "s",
            linestyle="-" if _SYNCHRONIZATION.get(ds) != "CR" else "--",
            capsize=3,
            elinewidth=1.0,
            markersize=4,
        )
    all_x = sorted({x for points in by_series.values() for x in points})
    if axis.name == "threads" and all_x and all_x[-1] / max(all_x[0], 1) >= 16:
        ax.set_xscale("log", base=2)
    if len(all_x) <= 12:
        ax.set_xticks(all_x)
        ax.set_xticklabels([f"{x:g}" for x in all_x])
    ax.set_xlabel(axis.label)
    ax.set_ylabel(stat.title)
    ax.set_ylim(bottom=0)
    title = _title(facet, runs)
    ax.set_title(f"{stat.label.capitalize()} vs {axis.label} — {title}", loc="left", fontsize=10)
    ax.legend(fontsize=8, frameon=False, loc="center left", bbox_to_anchor=(1.01, 0.5))
    note = "median of trials; bars: min–max"
    if stalled:
        note += "; no operation completed: " + ", ".join(stalled)
    plots._note(ax, note)
    name = f"hart-{axis.name}-{_stem(facet)}{suffix}"
    return plots.Plot(name, "hart", f"{stat.label} vs {axis.label}: {title}", fig, facet)


def _category(config: dict[str, Any], varying: set[str]) -> str:
    """A bar group's label: the structure and workload, and each axis that varies."""
    fraction = _update_fraction(config)
    workload = {0.0: "read-only", 1.0: "update-only"}.get(fraction, f"{fraction:g} updates")
    parts = [str(config.get("ds")), workload]
    if "threads" in varying:
        parts.append(f"{config.get('threads')} threads")
    if "list_length" in varying:
        parts.append(f"{_list_length(config)} elements")
    return ", ".join(parts)


def _bars(runs: list[dict[str, Any]], facet: dict[str, Any], tunings: list[str]) -> plots.Plot:
    """Figure 6: one group of bars per structure x workload, one bar per scheme."""
    stat, key = measure(runs)
    cells: dict[str, dict[tuple[str, str], list]] = defaultdict(lambda: defaultdict(list))
    varying = {a.name for a in AXES if len({a.value(plots._config(r)) for r in runs}) > 1}
    for run in runs:
        config = plots._config(run)
        cells[_category(config, varying)][_series_key(run, tunings)].append(run)
    categories = sorted(cells)
    series = sorted({s for cell in cells.values() for s in cell}, key=_series_rank)
    kinds = {_SYNCHRONIZATION.get(ds, ds) for ds, _ in series}
    colors = _colors(series)
    fig = style.figure(6.4, 4.2)
    ax = fig.add_subplot()
    # Each group is as wide as the series it holds (the spinlock's group holds one bar).
    present = {c: [s for s in series if s in cells[c]] for c in categories}
    width = 0.8 / max(1, *(len(p) for p in present.values()))
    for ds, reclaimer in series:
        xs, medians, low, high = [], [], [], []
        for c, category in enumerate(categories):
            values = _values(cells[category].get((ds, reclaimer), []), key)
            if not values:
                continue
            i, n = present[category].index((ds, reclaimer)), len(present[category])
            xs.append(c + (i - (n - 1) / 2) * width)
            _append_point(values, medians, low, high)
        ax.bar(
            xs,
            medians,
            width,
            yerr=[low, high],
            capsize=2,
            label=series_name(ds, reclaimer, kinds),
            color=colors[(ds, reclaimer)],
            hatch="//" if ds == _LOCKED else None,
            edgecolor="white",
        )
    ax.set_xticks(range(len(categories)))
    ax.set_xticklabels([c.replace(", ", "\n", 1) for c in categories], fontsize=8)
    ax.set_ylabel(stat.title)
    title = _title(facet, runs)
    ax.set_title(f"Base costs — {title}", loc="left", fontsize=10)
    ax.legend(fontsize=8, frameon=False, loc="center left", bbox_to_anchor=(1.01, 0.5))
    plots._note(ax, "median of trials; bars: min–max")
    name = f"hart-base-{_stem(facet)}"
    return plots.Plot(name, "hart", f"base costs: {title}", fig, facet)


def summary(runs: list[dict[str, Any]]) -> tuple[str, list[dict[str, Any]]]:
    """The numbers behind the Hart-form figures: per facet, series and swept value (or bar
    category), the median of Hart's measure over trials with its min, max and trial count.
    Returns the measure's title and the rows, in figure order."""
    runs = _kept(runs)
    if not runs:
        return "", []
    stat, key = measure(runs)
    axis = _swept(runs)
    fields, others = _facets(runs, axis)
    tunings = plots.series_tunings(runs)
    varying = {a.name for a in AXES if len({a.value(plots._config(r)) for r in runs}) > 1}
    kinds = {_SYNCHRONIZATION.get(ds, ds) for ds, _ in (_series_key(r, tunings) for r in runs)}
    groups: dict[tuple, list[dict[str, Any]]] = defaultdict(list)
    for run in runs:
        config = plots._config(run)
        facet = [f"{f} {config.get(f)}" for f in fields]
        facet += [f"{a.name.replace('_', ' ')} {a.value(config):g}" for a in others]
        where = axis.value(config) if axis else _category(config, varying)
        groups[(", ".join(facet), _series_rank(_series_key(run, tunings)), where)].append(run)
    rows = []
    # (facet, series rank, swept value or category): each part compares with its own kind.
    for (facet, _, where), members in sorted(groups.items(), key=lambda item: item[0]):
        values = _values(members, key)
        ds, reclaimer = _series_key(members[0], tunings)
        rows.append(
            {
                "facet": facet,
                "series": series_name(ds, reclaimer, kinds),
                "at": f"{axis.label} {where:g}" if axis else where,
                "trials": len(members),
                "median": float(np.median(values)) if values else None,
                "min": min(values) if values else None,
                "max": max(values) if values else None,
            }
        )
    return stat.title, rows
