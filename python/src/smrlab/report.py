"""One self-contained HTML report: every figure of the store, the runs, timeline viewers.

Self-contained means one file that opens from disk, offline, years later: figures are inlined as
SVG (text kept as text), the viewer's JavaScript and CSS are inlined, and timeline data is
embedded as JSON — no network, no CDN, no side files.
"""

from __future__ import annotations

import html
import io
import json
import re
from collections import defaultdict
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from smrlab import __version__, advice_view, frees, hart, provenance, stamp_plots, stm_plots, style
from smrlab.allocator_plots import by_facet, other_options, other_values
from smrlab.errors import UsageError
from smrlab.outputs import write_atomically
from smrlab.plots import Plot, build_plots, by_machine, series_label
from smrlab.statistics import PEAK_RSS, THROUGHPUT
from smrlab.store import Store
from smrlab.timeline import INSTANT_KINDS, KINDS, FormatError, Timeline, read_timeline
from smrlab.timeline_plot import describe_config

# Above these counts a timeline is downsampled before embedding, to keep the page responsive
# (and its size to a few MB): the longest boxes are kept — long frees are what a timeline is
# read for — and instant events are thinned evenly.
MAX_BOXES = 150_000
MAX_INSTANTS = 60_000
# Timeline files recorded by stored runs that the report embeds without being asked.
MAX_STORED_TIMELINES = 8


def _asset(name: str) -> str:
    return resources.files("smrlab").joinpath("assets", name).read_text(encoding="utf-8")


def _svg(plot: Plot) -> str:
    buffer = io.StringIO()
    plot.figure.savefig(buffer, format="svg", metadata={"Date": None})
    style.close(plot.figure)
    text = buffer.getvalue()
    text = re.sub(r"<\?xml[^>]*\?>\s*", "", text)
    text = re.sub(r"<!DOCTYPE[^>]*>\s*", "", text, flags=re.S)
    text = re.sub(r"<metadata>.*?</metadata>\s*", "", text, flags=re.S)  # RDF: no use inline
    return text.replace("<svg ", f'<svg role="img" aria-label="{html.escape(plot.title)}" ', 1)


def _script_json(value: Any) -> str:
    """JSON safe inside a <script> element."""
    return json.dumps(value, separators=(",", ":")).replace("</", "<\\/")


def timeline_data(timeline: Timeline) -> tuple[dict[str, Any], list[str]]:
    """The viewer's JSON for a timeline (downsampled if huge) and notes saying how."""
    notes: list[str] = []
    is_instant = np.isin(timeline.kind, [KINDS.index(k) for k in INSTANT_KINDS])
    durations = timeline.end - timeline.start
    keep = np.ones(len(timeline), dtype=bool)
    boxes = np.flatnonzero(~is_instant)
    if boxes.size > MAX_BOXES:
        longest = boxes[np.argpartition(durations[boxes], boxes.size - MAX_BOXES)[-MAX_BOXES:]]
        keep[boxes] = False
        keep[longest] = True
        threshold = int(durations[longest].min())
        notes.append(
            f"showing the {MAX_BOXES:,} longest of {boxes.size:,} free events "
            f"(every one ≥ {threshold / 1e3:.1f} µs)"
        )
    instants = np.flatnonzero(is_instant)
    if instants.size > MAX_INSTANTS:
        stride = int(np.ceil(instants.size / MAX_INSTANTS))
        keep[instants] = False
        keep[instants[::stride]] = True
        notes.append(
            f"showing every {stride}th of {instants.size:,} instant events (epoch changes etc.)"
        )
    shown = timeline.select(keep)
    rows = timeline.rows
    events = []
    for thread in rows:
        mask = shown.thread == thread
        starts = shown.start[mask]
        events.append(
            {
                "t": int(thread),
                "s": np.diff(starts, prepend=0).tolist(),  # delta-encoded: smaller JSON
                "d": (shown.end[mask] - starts).tolist(),
                "k": shown.kind[mask].astype(int).tolist(),
                "v": shown.value[mask].tolist(),
            }
        )
    if timeline.truncated_threads:
        notes.append(
            f"threads {', '.join(map(str, timeline.truncated_threads))} filled their "
            f"buffer ({timeline.header.get('capacity_per_thread', '?')} events); their "
            f"recording stops early (marked *)"
        )
    data = {
        "rows": [int(t) for t in rows],
        "end": int(max(timeline.measured_end_ns, int(timeline.end.max(initial=0)))),
        "kinds": list(KINDS),
        "events": events,
        "truncated": timeline.truncated_threads,
        "stalled": timeline.threads if timeline.config.get("stall") else None,
    }
    return data, notes


def _number(value: Any, digits: int = 2) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:,.{digits}f}"
    return f"{value:,}" if isinstance(value, int) else str(value)


def _cell(value: Any, text: str | None = None) -> str:
    numeric = isinstance(value, int | float) and not isinstance(value, bool)
    shown = html.escape(text if text is not None else _number(value))
    if numeric:
        return f'<td class="num" data-v="{value}">{shown}</td>'
    return f"<td>{shown}</td>"


RUN_HEADERS = (
    "ds",
    "reclaimer",
    "free",
    "alloc",
    "pool",
    "threads",
    "key range",
    "ins/del",
    "stall",
    "trial",
    THROUGHPUT.unit,
    PEAK_RSS.title,
    "garbage peak",
    "free time (s)",
    "epochs",
    "valid",
    "status",
    "time (UTC)",
)


def _table(headers: tuple[str, ...], rows: list[list[str]]) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in headers)
    body = "".join(f"<tr>{''.join(cells)}</tr>" for cells in rows)
    return (
        f'<div class="table-wrap"><table class="sortable"><thead><tr>{head}</tr></thead>'
        f"<tbody>{body}</tbody></table></div>"
    )


def _runs_table(runs: list[dict[str, Any]]) -> str:
    rows = []
    for run in runs:
        cells = [
            _cell(run["ds"]),
            _cell(run["reclaimer"]),
            _cell(run["free"]),
            _cell(run["alloc"]),
            _cell(f"{run['pool_nodes']} ({run['on_empty']})" if run["pool_nodes"] else "none"),
            _cell(run["threads"]),
            _cell(run["key_range"]),
            _cell(f"{run['insert_pct']}/{run['erase_pct']}"),
            _cell({0: "no", 1: "yes", 2: "holding"}.get(run["stall"] or 0, "yes")),
            _cell(run["trial"]),
            _cell(THROUGHPUT.scale(run["throughput"] or 0)),
            _cell(
                PEAK_RSS.scale(run["peak_rss_bytes"] or 0),
                _number(PEAK_RSS.scale(run["peak_rss_bytes"] or 0), 1),
            ),
            _cell(run["garbage_peak"]),
            _cell(run["free_seconds"], _number(run["free_seconds"], 4)),
            _cell(run["epochs"]),
            _cell("yes" if run["validated"] else "NO"),
            _cell(run["status"]),
            _cell(run["timestamp"]),
        ]
        rows.append(f"<tr{'' if run['validated'] else ' class=bad'}>{''.join(cells)}</tr>")
    head = "".join(f"<th>{html.escape(h)}</th>" for h in RUN_HEADERS)
    return (
        f'<div class="table-wrap"><table class="sortable"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div>"
    )


def _summary_table(runs: list[dict[str, Any]]) -> str:
    """Median over trials per configuration: the numbers behind the figures."""
    groups: dict[tuple, list[dict]] = defaultdict(list)
    for run in runs:
        options = {k: v for k, v in run["options"].items() if k not in {"trial", "seed"}}
        groups[json.dumps(options, sort_keys=True)].append(run)
    headers = (
        "ds",
        "series",
        "alloc",
        "threads",
        "ins/del",
        "other options",
        "trials",
        f"median {THROUGHPUT.unit}",
        "min",
        "max",
        f"median {PEAK_RSS.title}",
    )
    standard = {"ds", "reclaimer", "free", "alloc", "threads", "insert", "erase", "workload"}
    rows = []
    for key, members in groups.items():
        options = json.loads(key)
        first = members[0]
        throughput = [THROUGHPUT.scale(m["throughput"]) for m in members]
        rss = [PEAK_RSS.scale(m["peak_rss_bytes"]) for m in members]
        other = ", ".join(f"{k}={v}" for k, v in sorted(options.items()) if k not in standard)
        cells = [
            _cell(first["ds"]),
            _cell(series_label(first["reclaimer"], first["free"])),
            _cell(first["alloc"]),
            _cell(first["threads"]),
            _cell(f"{first['insert_pct']}/{first['erase_pct']}"),
            _cell(other),
            _cell(len(members)),
            _cell(float(np.median(throughput))),
            _cell(min(throughput)),
            _cell(max(throughput)),
            _cell(float(np.median(rss)), _number(float(np.median(rss)), 1)),
        ]
        rows.append(cells)
    return _table(headers, rows)


def _threadtest_table(runs: list[dict[str, Any]]) -> str:
    """threadtest: median malloc/free pairs per second per allocator × block size × form."""
    others = other_options(runs, {"block_size", "objects"})
    groups: dict[tuple, list[float]] = defaultdict(list)
    for run in runs:
        config = run["result"]["config"]
        key = (run["alloc"], run["block_size"], config["threads"], config["objects"])
        groups[(*key, _others_text(others, run))].append(run["throughput"] / 1e6)
    headers = (
        "alloc",
        "block bytes",
        "threads",
        "objects",
        "other options",
        "trials",
        "median M pairs/s",
        "min",
        "max",
    )
    rows = [
        [
            *(_cell(value) for value in key),
            _cell(len(values)),
            _cell(float(np.median(values))),
            _cell(min(values)),
            _cell(max(values)),
        ]
        for key, values in sorted(groups.items(), key=by_facet)
    ]
    return _table(headers, rows)


def _stamp_tables(runs: list[dict[str, Any]]) -> str:
    """stamp: the clients' seconds per application × allocator × threads, with the speedup
    over the allocator's own one thread (Figure 7), then Table 5's best and worst allocator."""
    others = other_options(runs, {"app", "threads"})
    headers = ("app", "other options", "alloc", "threads", "trials", "median s", "min", "max")
    headers += ("speedup",)
    rows = []
    for (app, *values), by_allocator in sorted(stamp_plots.times(runs).items(), key=by_facet):
        other = ", ".join(f"{k}={v}" for k, v in zip(others, values, strict=True))
        for alloc in sorted(by_allocator):
            by_threads = by_allocator[alloc]
            speedup = stamp_plots.speedups(by_threads)
            for n in sorted(by_threads):
                seconds = by_threads[n]
                cells = [_cell(app), _cell(other), _cell(alloc), _cell(n), _cell(len(seconds))]
                cells += [_cell(float(np.median(seconds)), _number(float(np.median(seconds)), 4))]
                cells += [_cell(min(seconds), _number(min(seconds), 4))]
                cells += [_cell(max(seconds), _number(max(seconds), 4))]
                gain = float(np.median(speedup[n])) if n in speedup else None
                cells.append(_cell(gain, _number(gain, 2)) if gain is not None else _cell("n/a"))
                rows.append(cells)
    best = _table(
        ("app", "other options", "best", "worst", "gain %", "threads"),
        [
            [
                _cell(row.app),
                _cell(", ".join(f"{k}={v}" for k, v in zip(others, row.others, strict=True))),
                _cell(row.best),
                _cell(row.worst),
                _cell(row.gain_pct, _number(row.gain_pct, 1)),
                _cell(row.threads),
            ]
            for row in stamp_plots.best_and_worst(runs)
        ],
    )
    return (
        f"<h3>Clients' time (median over trials)</h3>{_table(headers, rows)}"
        f"<h3>Best and worst allocator per application (Table 5)</h3>{best}"
    )


def _others_text(others: list[str], run: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in zip(others, other_values(run, others), strict=True))


def _layout_table(runs: list[dict[str, Any]]) -> str:
    """layout: distances and lock sharing per allocator × block size (the latest run)."""
    others = other_options(runs, {"block_size"})
    latest = {
        (run["alloc"], run["block_size"], _others_text(others, run)): run["result"] for run in runs
    }
    headers = (
        "alloc",
        "block bytes",
        "other options",
        "apart (one thread)",
        "sharing % shift 4",
        "sharing % shift 5",
        "apart (two threads)",
        "collisions % shift 4",
        "collisions % shift 5",
        "random % (shift 5)",
    )
    rows = []
    for (alloc, size, other), result in sorted(latest.items(), key=by_facet):
        alone, two = result["one_thread"], result["two_threads"]
        sharing = {row["shift"]: row["sharing_pct"] for row in alone["shared_lock"]}
        cross = {row["shift"]: row for row in two["cross_thread"]}
        random_pct = 100 * cross[5]["random_expectation"] / cross[5]["blocks"]
        rows.append(
            [
                _cell(alloc),
                _cell(size),
                _cell(other),
                _cell(alone["distance"]["mode_bytes"]),
                _cell(sharing[4], _number(sharing[4], 1)),
                _cell(sharing[5], _number(sharing[5], 1)),
                _cell(two["distance"]["mode_bytes"]),
                _cell(cross[4]["collisions_pct"], _number(cross[4]["collisions_pct"], 1)),
                _cell(cross[5]["collisions_pct"], _number(cross[5]["collisions_pct"], 1)),
                _cell(random_pct, _number(random_pct, 2)),
            ]
        )
    return _table(headers, rows)


def _hart_table(runs: list[dict[str, Any]]) -> str:
    """Hart's measure per series and swept value: the numbers behind the Hart-form figures,
    with the spread ((max - min) / median) that says whether a difference is noise."""
    title, rows = hart.summary(runs)
    if not rows:
        return ""
    headers = ("figure", "series", "at", "trials", f"median {title}", "min", "max", "spread")
    body = []
    for row in rows:
        median = row["median"]
        spread = (row["max"] - row["min"]) / median if median else None
        cells = [
            _cell(row["facet"]),
            _cell(row["series"]),
            _cell(row["at"]),
            _cell(row["trials"]),
            _cell(median, "no operation" if median is None else None),
            _cell(row["min"]),
            _cell(row["max"]),
            _cell(spread, "" if spread is None else f"{100 * spread:.0f}%"),
        ]
        body.append(f"<tr>{''.join(cells)}</tr>")
    head = "".join(f"<th>{html.escape(h)}</th>" for h in headers)
    return (
        f"<h3>Hart's measure (median over trials)</h3>"
        f'<div class="table-wrap"><table class="sortable"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table></div>"
    )


_HART_INTRO = """
<h2 id="hart">Hart, McKenney, Demke Brown and Walpole (JPDC 2007)</h2>
<p>The experiments named <code>hart_*</code> reproduce the figures of Hart et al.,
"Performance of memory reclamation for lockless synchronization", J. Parallel Distrib. Comput.
67(12), 2007 (doi:10.1016/j.jpdc.2007.04.010). Their figures plot time per operation: CPU time
(execution time &times; threads) while the threads fit on the CPUs, execution time (the test's
duration / all threads' operations) when threads outnumber CPUs. Each experiment below draws
its figure in that form first, then the throughput and memory figures every experiment gets.</p>
"""


_STM_INTRO = """
<h2 id="stm">Baldassin, Borin and Araujo (TRANSACT 2014)</h2>
<p>The experiments named <code>stm_*</code> reproduce Sections 3 and 5 of "On the Impact of
Dynamic Memory Management on Software Transactional Memory Performance" (TRANSACT 2014): Hoard's
threadtest per allocator and block size (Figure 3); where each allocator places blocks and which
of them share a versioned lock of the STM's table, measured (Figures 2 and 5); the throughput of
the transactional list, hash set and red-black tree per allocator (Figure 4) with the best and
worst allocator of each (Table 3); the aborted transactions and false aborts per allocator
(Table 4, whose L1 miss rate needs hardware counters these machines lack:
<code>scripts/measure/stm_cachegrind.py</code> simulates it, and docs/reproductions.md gives its
numbers); and shift 4 against 5 on the list (Figure 6). Hoard, one of the paper's four
allocators, is not packaged by Debian and is absent; jemalloc and mimalloc are added.</p>
"""


def _is_stm(experiment: str) -> bool:
    return experiment.startswith("stm_")


# Studies whose experiments go together under a heading of their own, after the others.
_STUDIES = (
    (hart.applies, _HART_INTRO, '<li><a href="#hart">Hart et al. (JPDC 2007)</a></li>'),
    (_is_stm, _STM_INTRO, '<li><a href="#stm">Baldassin et al. (TRANSACT 2014)</a></li>'),
)


def _study(experiment: str) -> int:
    """1 + the index of the study an experiment belongs to; 0 for none."""
    return next((i + 1 for i, (applies, _, _) in enumerate(_STUDIES) if applies(experiment)), 0)


def _failures_table(failures: list[dict[str, Any]]) -> str:
    rows = []
    for failure in failures:
        options = json.loads(failure["config_key"])
        label = " ".join(f"{k}={v}" for k, v in sorted(options.items()))
        stderr = failure["stderr"].strip().splitlines()[-1:] or [""]
        rows.append(
            "<tr class=bad>"
            + "".join(
                _cell(x)
                for x in (
                    failure["kind"],
                    failure["message"],
                    label,
                    stderr[0],
                    failure["timestamp"],
                )
            )
            + "</tr>"
        )
    head = "".join(
        f"<th>{h}</th>"
        for h in ("kind", "what happened", "configuration", "last stderr line", "time (UTC)")
    )
    return (
        f'<div class="table-wrap"><table class="sortable"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div>"
    )


def _timeline_section(index: int, path: Path) -> tuple[str, str, list[str]]:
    timeline = read_timeline(path)
    data, notes = timeline_data(timeline)
    source = f"tl-data-{index}"
    title = describe_config(timeline.config, timeline.header.get("trial"))
    legend = (
        '<div class="tl-legend"><span style="--swatch:#e69f00">batch free / free call '
        '(colours alternate)</span><span style="--swatch:#202020">free call inside a batch'
        '</span><span style="--swatch:#1f4fd1;--radius:50%">epoch change</span></div>'
    )
    note_html = "".join(f'<p class="note warn">{html.escape(n)}</p>' for n in notes)
    section = f"""
<h3 id="timeline-{index}">Timeline: {html.escape(title)}</h3>
<p class="meta">{html.escape(str(path))} · {len(timeline):,} events ·
 {len(timeline.rows)} threads</p>
{note_html}
<div class="timeline" id="tl-{index}" data-source="{source}">
  <div class="tl-controls">
    <button class="tl-zoom-in" title="zoom in">+</button>
    <button class="tl-zoom-out" title="zoom out">−</button>
    <button class="tl-left" title="pan left">◀</button>
    <button class="tl-right" title="pan right">▶</button>
    <button class="tl-reset" title="whole trial">reset</button>
    <span class="tl-window" aria-live="polite"></span>
    <span class="tl-help">wheel: zoom · drag: pan · double-click: zoom in · hover: details</span>
  </div>
  <div class="tl-canvas-wrap"><canvas></canvas><div class="tl-tooltip"></div></div>
  {legend}
</div>"""
    script = f'<script type="application/json" id="{source}">{_script_json(data)}</script>'
    return section, script, [f"timeline {path}: {n}" for n in notes]


def _stm_tables(runs: list[dict[str, Any]]) -> str:
    """The allocator/STM study's Tables 3 and 4 from the transactional structures' runs."""
    best = [
        [
            _cell(row.title),
            _cell(row.best),
            _cell(row.worst),
            _cell(row.speedup_pct, _number(row.speedup_pct, 1) + "%"),
            _cell(row.threads),
            _cell("yes" if row.beyond_spread else "no (inside the trials' spread)"),
        ]
        for row in stm_plots.best_and_worst(runs)
    ]
    aborts = [
        [
            _cell(row.title),
            _cell(row.allocator),
            _cell(row.threads),
            _cell(row.aborted_pct, _number(row.aborted_pct, 2)),
            _cell(row.false_pct, _number(row.false_pct, 1)),
            _cell(row.lock_meet_pct, _number(row.lock_meet_pct, 1)),
            _cell(row.collisions, _number(row.collisions, 0)),
            _cell(row.trials),
        ]
        for row in stm_plots.abort_rows(runs)
    ]
    best_headers = ("structure", "best", "worst", "speedup", "threads", "beyond the spread")
    abort_headers = (
        "structure",
        "alloc",
        "threads",
        "aborted %",
        "false % of aborts",
        "of which a lock met, %",
        "table collisions",
        "trials",
    )
    return (
        "<h3>Best and worst allocator (the paper's Table 3)</h3>"
        + _table(best_headers, best)
        + "<h3>Aborted transactions (the paper's Table 4; medians of trials)</h3>"
        + _table(abort_headers, aborts)
    )


def _frees_evidence_table(runs: list[dict[str, Any]]) -> str:
    """Where freeing went, per configuration (median over trials): the remote frees a run
    counted (--count-remote-frees), its time in free, and the allocator's own counters per
    1,000 freed nodes (jemalloc's cache flushes and contended bin locks). Empty when no run has
    either: the evidence of remote batch free (Epochs paper, Section 3 and Table 2)."""
    if not any(run["remote_frees"] is not None or frees.allocator_counters(run) for run in runs):
        return ""
    groups: dict[str, list[dict]] = defaultdict(list)
    for run in runs:
        options = {k: v for k, v in run["options"].items() if k not in {"trial", "seed"}}
        groups[json.dumps(options, sort_keys=True)].append(run)

    def median(members: list[dict], measure) -> float | None:
        values = [v for v in (measure(m) for m in members) if v is not None]
        return float(np.median(values)) if values else None

    headers = (
        "ds",
        "series",
        "alloc",
        "threads",
        "trials",
        "remote frees (% of freed)",
        "time in free (s)",
        "cache flushes per 1K freed",
        "contended bin locks per 1K freed",
    )
    rows = []
    for members in groups.values():
        first = members[0]
        values = (
            median(members, frees.remote_free_pct),
            median(members, lambda m: m["free_seconds"]),
            median(members, lambda m: frees.per_kilo_freed(m, "tcache_flushes")),
            median(members, lambda m: frees.per_kilo_freed(m, "bin_lock_waits")),
        )
        rows.append(
            [
                _cell(first["ds"]),
                _cell(series_label(first["reclaimer"], first["free"])),
                _cell(first["alloc"]),
                _cell(first["threads"]),
                _cell(len(members)),
                *(_cell(v, _number(v, 2)) if v is not None else _cell("n/a") for v in values),
            ]
        )
    return f"<h3>Where the frees went (median over trials)</h3>{_table(headers, rows)}"


def _tables(runs: list[dict[str, Any]]) -> str:
    """The numbers behind an experiment's figures, in the form of its smrbench command."""
    benchmark = runs[0]["benchmark"] if runs else "set"
    if benchmark == "threadtest":
        return (
            f"<h3>malloc/free pairs per second (median over trials)</h3>{_threadtest_table(runs)}"
        )
    if benchmark == "layout":
        return f"<h3>Address layout</h3>{_layout_table(runs)}"
    if benchmark == "stamp":
        return _stamp_tables(runs)
    stm = _stm_tables(runs) if stm_plots.applies(runs) else ""
    return f"""{stm}<h3>Configurations (median over trials)</h3>
{_summary_table(runs)}
{_frees_evidence_table(runs)}
<details><summary>All {len(runs)} runs</summary>{_runs_table(runs)}</details>"""


def _tables_per_machine(store: Store, name: str, runs: list[dict[str, Any]]) -> str:
    """An experiment's tables, once per machine when its runs come from several: two
    machines' trials never share a median."""
    machines = by_machine(runs, store.identities(name))
    parts = []
    for label, (_, group) in machines.items():
        if len(machines) > 1:
            parts.append(f"<h3>On {html.escape(label)}</h3>")
        parts.append(_hart_table(group) if hart.applies(name) else "")
        parts.append(_tables(group))
    return "\n".join(parts)


def _provenance_table(store: Store, names: list[str]) -> str:
    """The machines and builds the report's numbers were measured on and with, each with how
    many of the shown results it produced."""
    rows: dict[tuple[str, str], list[Any]] = {}
    for name in names:
        for item in store.identities(name):
            key = (item["machine_id"], item["build_id"])
            row = rows.setdefault(key, [item["machine"], item["build"], 0, []])
            row[2] += item["runs"]
            row[3].append(name)
    body = [
        [
            _cell(provenance.describe_machine(machine)),
            _cell(provenance.describe_build(build)),
            _cell(build_id or "unrecorded"),
            _cell(count),
            _cell(", ".join(experiments)),
        ]
        for (_, build_id), (machine, build, count, experiments) in rows.items()
    ]
    headers = ("measured on", "with", "binary", "results", "experiments")
    return '<section class="provenance"><h2>Provenance</h2>' + _table(headers, body) + "</section>"


def write_report(
    store: Store, out: Path, timelines: list[Path] | None = None, experiment: str | None = None
) -> tuple[Path, list[str]]:
    """Writes out/index.html; returns its path and notes on what was skipped.

    Timeline viewers are made for the given files and for the timeline files that the stored
    runs recorded (``timeline = true`` in an experiment), the most recent MAX_STORED_TIMELINES
    of them."""
    names = store.experiments()
    if experiment is not None:
        if experiment not in names:
            raise UsageError(f"no stored runs of experiment {experiment!r} in {store.path}")
        names = [experiment]
    for path in timelines or []:
        if not Path(path).is_file():
            raise UsageError(f"timeline file not found: {path}")
    notes: list[str] = []
    body: list[str] = []
    scripts: list[str] = []
    toc: list[str] = []
    total_runs = 0
    for advice in store.advice() if experiment is None else []:
        plot = advice_view.figure(advice)
        body.append(advice_view.html_section(advice, _svg(plot) if plot else ""))
        name = advice["workload"]["name"]
        anchor = html.escape(name)
        toc.append(f'<li><a href="#advice-{anchor}">advice: {anchor}</a></li>')
    # Each study's experiments together, under their own heading.
    names = sorted(names, key=_study)
    for position, name in enumerate(names):
        study = _study(name)
        if study and (position == 0 or _study(names[position - 1]) != study):
            _, intro, entry = _STUDIES[study - 1]
            body.append(intro)
            toc.append(entry)
        runs = store.runs(name)
        total_runs += len(runs)
        info = store.experiment_info(name)
        plots, plot_notes = build_plots(store, name)
        plots.sort(key=lambda plot: plot.kind != "hart")  # Hart's form first, order kept
        notes += plot_notes
        anchor = f"exp-{re.sub(r'[^A-Za-z0-9_-]', '_', name)}"
        toc.append(
            f'<li><a href="#{anchor}">{html.escape(name)}</a> — {len(runs)} runs, '
            f"{len(plots)} figures</li>"
        )
        figures = "".join(
            f"<figure>{_svg(plot)}<figcaption>{html.escape(plot.title)}"
            f'<span class="provenance">{html.escape(plot.provenance)}</span></figcaption></figure>'
            for plot in plots
        )
        skipped = "".join(f'<p class="note">{html.escape(n)}</p>' for n in plot_notes)
        failures = store.failures(name)
        failed_html = (
            f'<h3 class="warn">{len(failures)} failed trials</h3>' + _failures_table(failures)
            if failures
            else ""
        )
        body.append(f"""
<h2 id="{anchor}">{html.escape(name)}</h2>
<p class="meta">{html.escape(info.get("file", ""))}</p>
<pre class="description">{html.escape(info.get("description", ""))}</pre>
<div class="figures">{figures}</div>
{skipped}
{_tables_per_machine(store, name, runs)}
{failed_html}
""")
    timelines = list(timelines or [])
    stored = [item["path"] for name in names for item in store.files(name, "timeline")]
    stored = [path for path in stored if path.is_file()]
    if len(stored) > MAX_STORED_TIMELINES:
        notes.append(
            f"showing the last {MAX_STORED_TIMELINES} of {len(stored)} stored timeline "
            f"files (pass others with --timeline)"
        )
        stored = stored[-MAX_STORED_TIMELINES:]
    known = {Path(path).resolve() for path in timelines}
    asked = len(timelines)
    timelines += [path for path in stored if path.resolve() not in known]
    index = 0
    for position, path in enumerate(timelines):
        try:
            section, script, timeline_notes = _timeline_section(index, Path(path))
        except FormatError as error:
            if position < asked:
                raise  # a file named with --timeline: the user wants to know
            # One damaged recording must not cost the report of everything else.
            notes.append(f"skipping stored timeline: {error}")
            continue
        toc.append(
            f'<li><a href="#timeline-{index}">timeline {html.escape(Path(path).name)}</a></li>'
        )
        body.append(section)
        scripts.append(script)
        notes += timeline_notes
        index += 1
    generated = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    page = f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>smrlab report</title>
<style>{_asset("report.css")}</style>
</head>
<body>
<main>
<h1>smrlab report</h1>
<p class="meta">{total_runs} runs in {len(names)} experiment{"" if len(names) == 1 else "s"}
 from {html.escape(str(store.path))}
 · generated {generated} by smrlab {__version__}</p>
{_provenance_table(store, names)}
<nav><ul>{"".join(toc)}</ul></nav>
{"".join(body)}
</main>
{"".join(scripts)}
<script>{_asset("timeline.js")}</script>
</body>
</html>
"""
    path = out / "index.html"
    write_atomically(path, lambda temporary: temporary.write_text(page, encoding="utf-8"))
    return path, notes
