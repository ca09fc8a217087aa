"""Figures from the result store, in the layouts of the Epochs paper.

- throughput vs threads (Figures 1a, 10a, 11a): median over trials, min–max error bars, one line
  per reclaimer and free policy, one figure per data structure × allocator × workload;
- peak memory vs threads (Figures 1b, 10b; NBR Figure 4c/d);
- remote frees vs threads, for runs that counted them (--count-remote-frees): the share of freed
  nodes another thread had allocated, the frees the Epochs paper's remote batch free is made of;
- batch vs amortized free per reclaimer at the highest thread count (Figure 11b);
- free-call latency percentiles per reclaimer × free policy (log scale; cf. Figure 3);
- garbage per epoch from garbage-series files (Figure 4);
- for an experiment that varies ``min_epoch_us``, time in free and jemalloc's cache flushes
  against the minimum epoch (``rbf_plots``).

Options other than threads, reclaimer and free that vary within an experiment (stall, key range,
free_k, …) split figures rather than being averaged together: a point is only ever the median
of trials of one configuration. A tuning that only some of the reclaimers read (hp's fence) is
no facet: its values are series of their own ("hp (fence symmetric)"), in shades of the
reclaimer's colour. Builders return figures (for tests and the report) and
``plot_store`` saves them as PNG and SVG.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from matplotlib.figure import Figure
from matplotlib.ticker import EngFormatter

from smrlab import frees, style
from smrlab.options import OPTIONS
from smrlab.outputs import write_atomically
from smrlab.provenance import caption
from smrlab.statistics import PEAK_RSS, REMOTE_FREES, THROUGHPUT, Shown
from smrlab.store import Store
from smrlab.timeline import read_garbage_series

# Config fields that are never a figure facet: the x axis and series, per-trial values,
# values smrbench derives from others, and the paths of recorded files (unique per trial).
_NOT_FACETS = {
    "timeline",
    "garbage_series",
    "threads",
    "reclaimer",
    "free",
    "seed",
    "trials",
    "contains",
    "prefill_target",
    "ds",
    "alloc",
    "insert",
    "erase",
}
FREE_SUFFIX = {"batch": "", "amortized": "_af"}


@dataclass
class Plot:
    """A built figure: its file stem, what it shows, and the matplotlib figure."""

    name: str
    # throughput | memory | remote_frees | af_bars | free_latency | garbage | hart | threadtest |
    # layout | stm_throughput | stm_shift | rbf | compare | stamp
    kind: str
    title: str
    figure: Figure
    facet: dict[str, Any] = field(default_factory=dict)
    provenance: str = ""  # the machines and builds its numbers came from (provenance.caption)


@dataclass
class _Point:
    values: list[float]

    @property
    def median(self) -> float:
        return float(np.median(self.values))

    @property
    def low(self) -> float:
        return float(np.min(self.values))

    @property
    def high(self) -> float:
        return float(np.max(self.values))


def series_label(reclaimer: str, free: str) -> str:
    """Series names as in the paper: 'debra' (batch free) and 'debra_af' (amortized free)."""
    return reclaimer + FREE_SUFFIX.get(free, f"_{free}")


def _config(run: dict[str, Any]) -> dict[str, Any]:
    config = dict(run["result"].get("config", {}))
    config["alloc"] = run.get("alloc") or config.get("alloc")
    # Results from before the pool had no such fields: they ran without one, like pool_nodes 0.
    config["pool_nodes"] = config.get("pool_nodes") or 0
    config["on_empty"] = config.get("on_empty") if config["pool_nodes"] else None
    return config


def _facet_fields(runs: list[dict[str, Any]]) -> list[str]:
    """Config fields (beyond the standard facets) that vary, but no reclaimer tuning some
    runs' reclaimers do not read: one value of it is a setting, several are series."""
    values: dict[str, set[str]] = defaultdict(set)
    for run in runs:
        for key, value in _config(run).items():
            if key not in _NOT_FACETS:
                values[key].add(repr(value))
    partly_read = set(_partly_read_tunings(runs))
    return sorted(key for key, seen in values.items() if len(seen) > 1 and key not in partly_read)


def _partly_read_tunings(runs: list[dict[str, Any]]) -> dict[str, set[str]]:
    """Reclaimer tunings that some runs' reclaimers do not read (their config holds null,
    as smrbench reports a tuning it ignores), with the values the readers' runs have."""
    values: dict[str, set[str]] = defaultdict(set)
    unread: set[str] = set()
    for run in runs:
        for key, value in _config(run).items():
            option = OPTIONS.get(key)
            if option is None or option.reclaimers is None:
                continue
            if value is None:
                unread.add(key)
            else:
                values[key].add(repr(value))
    return {key: values[key] for key in unread}


def series_tunings(runs: list[dict[str, Any]]) -> list[str]:
    """Reclaimer tunings that take several values among the runs and that some runs'
    reclaimers do not read: each value makes its readers' runs a series of their own
    ("hp (fence symmetric)" beside "hp (fence asymmetric)" and "qsbr"). As a facet, such a
    tuning would split a figure into one per value, each with hp alone, and one of every
    other reclaimer; with one value (Hart's quiescent_every for qsbr beside ebr's
    advance_every) it is neither."""
    return sorted(key for key, seen in _partly_read_tunings(runs).items() if len(seen) > 1)


def series_reclaimer(config: dict[str, Any], tunings: Iterable[str]) -> str:
    """A run's series name: its reclaimer, with the series tunings it reads."""
    reclaimer = str(config.get("reclaimer"))
    read = [f"{key} {config[key]}" for key in tunings if config.get(key) is not None]
    return f"{reclaimer} ({', '.join(read)})" if read else reclaimer


def _facet(run: dict[str, Any], extra: list[str]) -> tuple:
    config = _config(run)
    return (
        config.get("ds"),
        config.get("alloc"),
        config.get("insert"),
        config.get("erase"),
        *(config.get(key) for key in extra),
    )


def _facet_dict(key: tuple, extra: list[str]) -> dict[str, Any]:
    names = ["ds", "alloc", "insert", "erase", *extra]
    return dict(zip(names, key, strict=True))


def _facet_title(facet: dict[str, Any]) -> str:
    insert, erase = facet["insert"], facet["erase"]
    contains = 100 - int(insert or 0) - int(erase or 0)
    parts = [
        str(facet["ds"]),
        str(facet["alloc"]),
        f"{insert}% ins / {erase}% del" + (f" / {contains}% find" if contains else ""),
    ]
    for key, value in facet.items():
        if key in {"ds", "alloc", "insert", "erase"} or value is None:
            continue  # None: the facet's structure has no such parameter
        if isinstance(value, bool):
            parts.append(("" if value else "no ") + key.replace("_", " "))
        else:
            parts.append(f"{key.replace('_', ' ')} {value}")
    return " · ".join(parts)


def _facet_stem(facet: dict[str, Any]) -> str:
    stem = f"{facet['ds']}-{facet['alloc']}-i{facet['insert']}-d{facet['erase']}"
    for key, value in facet.items():
        if key in {"ds", "alloc", "insert", "erase"} or value is None:
            continue
        if isinstance(value, bool):
            stem += f"-{'' if value else 'no'}{key}"
        else:
            stem += f"-{key}{value}"
    return re.sub(r"[^A-Za-z0-9_.=-]+", "_", stem)


def _series_order(keys: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    order = style._RECLAIMER_ORDER

    def rank(key: tuple[str, str]) -> tuple:
        reclaimer, free = key
        base = style.base_reclaimer(reclaimer)
        return (
            order.index(base) if base in order else len(order),
            reclaimer,
            free != "batch",
            free,
        )

    return sorted(keys, key=rank)


def _grouped(runs: list[dict[str, Any]]):
    """{facet: {(series reclaimer, free): {threads: [run, ...]}}} plus the extra facet
    fields."""
    extra = _facet_fields(runs)
    tunings = series_tunings(runs)
    groups: dict[tuple, dict[tuple[str, str], dict[int, list]]] = defaultdict(
        lambda: defaultdict(lambda: defaultdict(list))
    )
    for run in runs:
        config = _config(run)
        series = (series_reclaimer(config, tunings), str(config.get("free")))
        groups[_facet(run, extra)][series][int(config.get("threads", 0))].append(run)
    return groups, extra


def _hardware_threads(runs: Iterable[dict[str, Any]]) -> int | None:
    for run in runs:
        value = run["result"].get("machine", {}).get("hardware_threads")
        if value:
            return int(value)
    return None


@dataclass(frozen=True)
class _Metric:
    """A figure of one value per run against threads: its title and axis, and the value."""

    what: str
    shown: Shown
    value: Any  # (run) -> float, in the unit ``shown`` scales from
    applies: Any = lambda run: True  # (run) -> bool: the runs that have the value


_METRICS = {
    "throughput": _Metric("Throughput", THROUGHPUT, lambda run: run["throughput"]),
    "memory": _Metric("Peak memory", PEAK_RSS, lambda run: run["peak_rss_bytes"]),
    "remote_frees": _Metric(
        "Remote frees",
        REMOTE_FREES,
        frees.remote_free_pct,
        lambda run: frees.remote_free_pct(run) is not None,
    ),
}


def _metric_vs_threads(runs: list[dict[str, Any]], kind: str) -> list[Plot]:
    metric = _METRICS[kind]
    runs = [run for run in runs if metric.applies(run)]
    groups, extra = _grouped(runs)
    plots = []
    for facet_key, by_series in groups.items():
        facet = _facet_dict(facet_key, extra)
        fig = style.figure(6.4, 4.2)
        ax = fig.add_subplot()
        frees = {free for _, free in by_series}
        all_threads: set[int] = {t for points in by_series.values() for t in points}
        span = (max(all_threads) - min(all_threads)) or 1
        ordered = _series_order(by_series)
        colors = style.series_colors(reclaimer for reclaimer, _ in ordered)
        facet_runs = []
        for position, series in enumerate(ordered):
            reclaimer, free = series
            points = by_series[series]
            xs = sorted(points)
            # A small sideways offset per series keeps min-max bars at one x from overlapping.
            dodge = (position - (len(ordered) - 1) / 2) * span * 0.006
            stats = []
            for x in xs:
                facet_runs.extend(points[x])
                values = [metric.shown.scale(metric.value(r)) for r in points[x]]
                stats.append(_Point(values))
            medians = np.array([p.median for p in stats])
            yerr = np.array([[p.median - p.low for p in stats], [p.high - p.median for p in stats]])
            label = series_label(reclaimer, free) if len(frees) > 1 else reclaimer
            ax.errorbar(
                np.array(xs) + dodge,
                medians,
                yerr=yerr,
                label=label,
                color=colors[reclaimer],
                marker=style.FREE_MARKERS.get(free, "^"),
                linestyle=style.FREE_LINESTYLES.get(free, ":") if len(frees) > 1 else "-",
                capsize=3,
                elinewidth=1.0,
                markersize=5,
            )
        hardware = _hardware_threads(facet_runs)
        if hardware and all_threads and min(all_threads) < hardware < max(all_threads):
            ax.axvline(hardware, color="#d62728", linewidth=1.0, alpha=0.7, zorder=0)
            ax.annotate(
                "hardware threads",
                xy=(hardware, 1.0),
                xycoords=("data", "axes fraction"),
                xytext=(3, -3),
                textcoords="offset points",
                ha="left",
                va="top",
                fontsize=8,
                color="#d62728",
            )
        threads = sorted(all_threads)
        if len(threads) <= 12:
            ax.set_xticks(threads)
        ax.set_xlabel("threads")
        ax.set_ylim(bottom=0)
        ax.set_ylabel(metric.shown.title)
        what = metric.what
        title = _facet_title(facet)
        ax.set_title(f"{what} — {title}", loc="left", fontsize=10)
        legend_title = "reclaimer" + (" (_af: amortized free)" if len(frees) > 1 else "")
        ax.legend(
            title=legend_title,
            fontsize=8,
            title_fontsize=8,
            frameon=False,
            loc="center left",
            bbox_to_anchor=(1.01, 0.5),
        )
        _note(ax, "median of trials; bars: min–max")
        plots.append(
            Plot(f"{kind}-{_facet_stem(facet)}", kind, f"{what} vs threads: {title}", fig, facet)
        )
    return plots


def _note(ax, text: str) -> None:
    ax.annotate(
        text,
        xy=(1.0, -0.16),
        xycoords="axes fraction",
        ha="right",
        va="top",
        fontsize=7,
        color="#666666",
    )


def _af_bars(runs: list[dict[str, Any]]) -> list[Plot]:
    """Figure 11b: ORIG (batch) vs AF (amortized) bars per reclaimer at the most threads."""
    groups, extra = _grouped(runs)
    plots = []
    for facet_key, by_series in groups.items():
        if {free for _, free in by_series} < {"batch", "amortized"}:
            continue
        both = [
            reclaimer
            for reclaimer in {r for r, _ in by_series}
            if (reclaimer, "batch") in by_series and (reclaimer, "amortized") in by_series
        ]
        if not both:
            continue
        threads = max(set(by_series[(both[0], "batch")]) & set(by_series[(both[0], "amortized")]))
        for reclaimer in both:
            common = set(by_series[(reclaimer, "batch")]) & set(by_series[(reclaimer, "amortized")])
            if common:
                threads = max(threads, *common)
        reclaimers = [
            r
            for r, _ in _series_order((r, "batch") for r in both)
            if threads in by_series[(r, "batch")] and threads in by_series[(r, "amortized")]
        ]
        if not reclaimers:
            continue
        facet = _facet_dict(facet_key, extra)
        fig = style.figure(max(4.5, 1.1 * len(reclaimers) + 2.2), 4.0)
        ax = fig.add_subplot()
        width = 0.38
        x = np.arange(len(reclaimers))
        for offset, free, label, hatch in (
            (-width / 2, "batch", "ORIG (batch free)", "//"),
            (width / 2, "amortized", "AF (amortized free)", ""),
        ):
            points = [
                _Point([THROUGHPUT.scale(r["throughput"]) for r in by_series[(rec, free)][threads]])
                for rec in reclaimers
            ]
            medians = [p.median for p in points]
            yerr = [[p.median - p.low for p in points], [p.high - p.median for p in points]]
            palette = style.series_colors(reclaimers)
            colors = [palette[rec] for rec in reclaimers]
            ax.bar(
                x + offset,
                medians,
                width,
                yerr=yerr,
                capsize=3,
                label=label,
                color=colors,
                alpha=0.55 if free == "batch" else 1.0,
                hatch=hatch,
                edgecolor="#333333",
                linewidth=0.6,
                error_kw={"elinewidth": 1.0},
            )
        for index, rec in enumerate(reclaimers):
            orig = _Point([r["throughput"] for r in by_series[(rec, "batch")][threads]]).median
            af = _Point([r["throughput"] for r in by_series[(rec, "amortized")][threads]]).median
            if orig > 0:
                top = max(
                    _Point(
                        [THROUGHPUT.scale(r["throughput"]) for r in by_series[(rec, f)][threads]]
                    ).high
                    for f in ("batch", "amortized")
                )
                ax.annotate(
                    f"×{af / orig:.2f}",
                    xy=(index, top),
                    xytext=(0, 4),
                    textcoords="offset points",
                    ha="center",
                    fontsize=8,
                )
        ax.set_xticks(x, reclaimers)
        ax.set_ylabel(THROUGHPUT.title)
        ax.set_ylim(0, ax.get_ylim()[1] * 1.1)
        ax.grid(axis="x", visible=False)
        title = _facet_title(facet)
        ax.set_title(
            f"Batch vs amortized free, {threads} threads — {title}", loc="left", fontsize=10
        )
        ax.legend(frameon=False, fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
        _note(ax, "median of trials; bars: min–max; ×: AF / ORIG")
        plots.append(
            Plot(
                f"af_vs_batch-{_facet_stem(facet)}",
                "af_bars",
                f"Batch vs amortized free at {threads} threads: {title}",
                fig,
                facet,
            )
        )
    return plots


PERCENTILES = (("p50", "p50"), ("p99", "p99"), ("p999", "p99.9"), ("max", "max"))


def _free_latency(runs: list[dict[str, Any]]) -> list[Plot]:
    """Free-call latency percentiles per reclaimer × free policy at the most threads."""
    groups, extra = _grouped(runs)
    plots = []
    for facet_key, by_series in groups.items():
        facet = _facet_dict(facet_key, extra)
        threads = max(t for points in by_series.values() for t in points)
        series = [s for s in _series_order(by_series) if threads in by_series[s]]
        rows = []
        for reclaimer, free in series:
            trials = by_series[(reclaimer, free)][threads]
            latencies = [
                r["result"].get("reclaimer", {}).get("free_latency_ns", {}) for r in trials
            ]
            calls = [r["result"].get("reclaimer", {}).get("free_calls", 0) for r in trials]
            if not any(calls) or not any(latencies):
                continue  # e.g. none: it never frees
            values = []
            for key, _ in PERCENTILES:
                samples = [float(lat.get(key, 0) or 0) for lat in latencies]
                values.append(max(samples) if key == "max" else float(np.median(samples)))
            rows.append((series_label(reclaimer, free), reclaimer, values))
        if not rows:
            continue
        fig = style.figure(max(5.0, 0.9 * len(rows) + 2.8), 4.0)
        ax = fig.add_subplot()
        x = np.arange(len(rows))
        width = 0.8 / len(PERCENTILES)
        shades = ("#c6dbef", "#6baed6", "#2171b5", "#08306b")
        for index, ((_, name), shade) in enumerate(zip(PERCENTILES, shades, strict=True)):
            heights = [max(values[index], 1.0) for _, _, values in rows]
            ax.bar(
                x + (index - 1.5) * width,
                heights,
                width,
                label=name,
                color=shade,
                edgecolor="#333333",
                linewidth=0.4,
            )
        ax.set_yscale("log")
        ax.yaxis.set_major_formatter(_ns_formatter())
        ax.set_xticks(
            x,
            [label for label, _, _ in rows],
            rotation=20 if len(rows) > 5 else 0,
            ha="right" if len(rows) > 5 else "center",
        )
        ax.set_ylabel("free() call latency")
        ax.grid(axis="x", visible=False)
        title = _facet_title(facet)
        ax.set_title(f"Free latency, {threads} threads — {title}", loc="left", fontsize=10)
        ax.legend(
            title="percentile",
            frameon=False,
            fontsize=8,
            title_fontsize=8,
            loc="upper left",
            bbox_to_anchor=(1.01, 1.0),
        )
        _note(ax, "percentiles: median of trials; max: over all trials")
        plots.append(
            Plot(
                f"free_latency-{_facet_stem(facet)}",
                "free_latency",
                f"Free-call latency at {threads} threads: {title}",
                fig,
                facet,
            )
        )
    return plots


def _ns_formatter():
    from matplotlib.ticker import FuncFormatter

    def format_ns(value: float, _pos: object) -> str:
        for unit, scale in (("s", 1e9), ("ms", 1e6), ("µs", 1e3)):
            if value >= scale:
                return f"{value / scale:g} {unit}"
        return f"{value:g} ns"

    return FuncFormatter(format_ns)


def _garbage(entries: list[dict[str, Any]], notes: list[str]) -> list[Plot]:
    """Figure 4: garbage at each epoch, one panel per free policy, from garbage-series files."""
    missing = [entry for entry in entries if not entry["exists"]]
    if missing:
        notes.append(
            f"garbage per epoch: {len(missing)} referenced garbage-series files are "
            f"missing (first: {missing[0]['path']})"
        )
    entries = [entry for entry in entries if entry["exists"]]
    if not entries:
        return []
    extra = [key for key in _facet_fields(entries) if key != "free"]
    tunings = series_tunings(entries)
    groups: dict[tuple, dict[str, dict]] = defaultdict(dict)
    for entry in entries:
        config = _config(entry)
        key = (*_facet(entry, extra), series_reclaimer(config, tunings), config.get("threads"))
        free = str(config.get("free"))
        current = groups[key].get(free)
        if current is None or entry["trial"] < current["trial"]:
            groups[key][free] = entry  # the lowest trial: one representative series
    plots = []
    for key, by_free in groups.items():
        facet = _facet_dict(key[:-2], extra)
        reclaimer, threads = key[-2], key[-1]
        frees = sorted(by_free, key=lambda f: (f != "batch", f))
        fig = style.figure(7.5, 1.9 * len(frees) + 0.9)
        axes = fig.subplots(len(frees), 1, sharey=True, squeeze=False)[:, 0]
        for ax, free in zip(axes, frees, strict=True):
            series = read_garbage_series(by_free[free]["path"])
            ax.plot(
                series.epoch,
                series.garbage,
                color=style.reclaimer_color(str(reclaimer)),
                linewidth=0.9,
                drawstyle="steps-mid",
            )
            ax.fill_between(
                series.epoch,
                series.garbage,
                step="mid",
                alpha=0.25,
                color=style.reclaimer_color(str(reclaimer)),
            )
            # Version 2 files hold the Epochs paper's metric; version 1 a global sum.
            ax.set_ylabel(
                "nodes unreclaimed as\neach thread began it"
                if series.per_thread
                else "nodes unreclaimed\nat the epoch change"
            )
            ax.yaxis.set_major_formatter(EngFormatter(sep=""))
            ax.set_ylim(bottom=0)
            ax.set_title(
                f"{series_label(str(reclaimer), free)}: {free} free "
                f"({len(series)} epochs, trial {by_free[free]['trial']})",
                loc="left",
                fontsize=9,
            )
        axes[-1].set_xlabel("epoch")
        fig.suptitle(
            f"Garbage per epoch — {reclaimer}, {threads} threads, {_facet_title(facet)}",
            x=0.01,
            ha="left",
            fontsize=10,
        )
        name = re.sub(r"[^A-Za-z0-9_.=-]+", "_", str(reclaimer)).strip("_")
        stem = f"garbage-{name}-t{threads}-{_facet_stem(facet)}"
        plots.append(
            Plot(
                stem,
                "garbage",
                f"Garbage per epoch: {reclaimer}, {threads} threads, {_facet_title(facet)}",
                fig,
                facet,
            )
        )
    return plots


def build_plots(store: Store, experiment: str) -> tuple[list[Plot], list[str]]:
    """Every figure of one experiment's stored results, and notes on what was skipped."""
    runs = store.runs(experiment)
    if not runs:
        return [], [f"{experiment}: no stored runs"]
    identities = store.identities(experiment)
    machines = by_machine(runs, identities)
    if len(machines) == 1:
        plots, notes = _figures(store, experiment, runs)
        for plot in plots:
            plot.provenance = caption(identities)
        return plots, notes
    # Several machines' results of one experiment never share a figure: one set per machine.
    plots, notes = [], []
    for label, (machine_id, group) in machines.items():
        some, said = _figures(store, experiment, group, machine_id)
        notes += [f"{note} (on {label})" for note in said]
        mine = [item for item in identities if item["machine_id"] == machine_id]
        stem = re.sub(r"[^A-Za-z0-9_.=-]+", "_", label)
        for plot in some:
            plot.name = f"{plot.name}-on-{stem}"
            plot.title = f"{plot.title} · on {label}"
            plot.facet = {**plot.facet, "machine": label}
            plot.provenance = caption(mine)
        plots += some
    return plots, notes


def by_machine(
    runs: list[dict[str, Any]], identities: list[dict[str, Any]]
) -> dict[str, tuple[str, list[dict[str, Any]]]]:
    """The runs per machine, labelled by host name (with the identity's first characters when
    two machines share a name), in the order of their first run."""
    names = {item["machine_id"]: item["machine"].get("hostname") for item in identities}
    groups: dict[str, list[dict[str, Any]]] = {}
    for run in runs:
        groups.setdefault(run["machine_id"], []).append(run)
    hosts = [names.get(machine_id) or "unrecorded machine" for machine_id in groups]
    labels = {}
    for (machine_id, group), host in zip(groups.items(), hosts, strict=True):
        label = host if hosts.count(host) == 1 else f"{host} {machine_id[:8] or 'unrecorded'}"
        labels[label] = (machine_id, group)
    return labels


def _figures(
    store: Store, experiment: str, runs: list[dict[str, Any]], machine_id: str | None = None
) -> tuple[list[Plot], list[str]]:
    """The figures of ``runs``; ``machine_id`` limits recorded files to that machine's."""
    notes: list[str] = []
    # They build on this module's helpers.
    from smrlab import allocator_plots, compare_view, hart, rbf_plots, stamp_plots, stm_plots

    if runs[0]["benchmark"] == "threadtest":  # an experiment runs one smrbench command
        return allocator_plots.threadtest_figures(runs), notes
    if runs[0]["benchmark"] == "layout":
        return allocator_plots.layout_figures(runs), notes
    if stamp_plots.applies(runs):
        plots = stamp_plots.figures(runs)
        if not plots:
            notes.append(f"{experiment}: no speedup figure (no allocator ran one thread)")
        return plots, notes
    if stm_plots.applies(runs):
        return stm_plots.figures(runs), notes

    plots = [plot for kind in _METRICS for plot in _metric_vs_threads(runs, kind)]
    bars = _af_bars(runs)
    if not bars:
        notes.append(
            f"{experiment}: batch vs amortized bars skipped (no reclaimer ran with "
            f"both free policies)"
        )
    latency = _free_latency(runs)
    if not latency:
        notes.append(f"{experiment}: free-latency figure skipped (no run freed anything)")
    files = store.files(experiment, "garbage_series")
    if machine_id is not None:
        files = [item for item in files if item["machine_id"] == machine_id]
    garbage = _garbage(files, notes)
    if not files:
        notes.append(
            f"{experiment}: garbage per epoch skipped (no garbage-series files in the "
            f"store; set garbage_series = true in the experiment's [fixed] table)"
        )
    hart_figures = hart.build(runs) if hart.applies(experiment) else []
    rbf = rbf_plots.figures(runs) if rbf_plots.applies(runs) else []
    compared, compare_notes = compare_view.experiment_figures(store, experiment, runs)
    notes += compare_notes
    return plots + bars + latency + garbage + hart_figures + rbf + compared, notes


def plot_store(
    store: Store, out: Path, experiment: str | None = None
) -> tuple[list[Path], list[str]]:
    """Writes every figure as PNG and SVG under out/<experiment>/; returns paths and notes."""
    from smrlab.errors import UsageError

    names = store.experiments()
    if experiment is not None:
        if experiment not in names:
            raise UsageError(
                f"no stored runs of experiment {experiment!r} in {store.path} "
                f"(stored: {', '.join(names) or 'none'})"
            )
        names = [experiment]
    written: list[Path] = []
    notes: list[str] = []
    for name in names:
        plots, plot_notes = build_plots(store, name)
        notes += plot_notes
        directory = out / name
        directory.mkdir(parents=True, exist_ok=True)
        for plot in plots:
            for suffix in (".png", ".svg"):
                path = directory / f"{plot.name}{suffix}"
                # The provenance travels with the file a reader takes away.
                metadata: dict[str, Any] = {}
                if plot.provenance:
                    metadata["Description"] = plot.provenance
                if suffix == ".svg":
                    metadata["Date"] = None
                write_atomically(
                    path,
                    lambda temporary, fig=plot.figure, kind=suffix[1:], meta=metadata: fig.savefig(
                        temporary, format=kind, metadata=meta
                    ),
                )
                written.append(path)
            style.close(plot.figure)
    return written, notes
