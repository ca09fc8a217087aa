"""An advice (smrlab.advise) as a person reads it: the terminal summary, the report's section
and its figure. The JSON form is the advice itself (``smrlab advise --json``)."""

from __future__ import annotations

import html
from typing import Any

import numpy as np

from smrlab import style
from smrlab.advice_rank import nodes
from smrlab.plots import Plot
from smrlab.progress import format_duration


def label(row: dict[str, Any]) -> str:
    """``hyaline free=amortized jemalloc`` (free left out where it was not varied)."""
    parts = [row["reclaimer"]]
    if row.get("free"):
        parts.append(f"free={row['free']}")
    if row.get("alloc"):
        parts.append(row["alloc"])
    return " ".join(parts)


def headline(advice: dict[str, Any]) -> str:
    """One line: the workload as measured."""
    work = advice["workload"]
    ds = work["ds"] + (f" (for {work['asked_ds']!r})" if work.get("asked_ds") else "")
    parts = [
        ds,
        f"{advice['key_range']:,} keys",
        f"{work['insert']}% insert / {work['erase']}% erase",
        f"{advice['threads']} threads on {advice['machine']['cpus']} CPUs",
        "threads may stall" if work["stalls"] else "no stalls",
    ]
    if work.get("memory_budget_nodes"):
        parts.append(f"memory budget {nodes(work['memory_budget_nodes'])} nodes")
    if work.get("latency_sensitive"):
        parts.append("latency-sensitive")
    return ", ".join(parts)


def _cost(advice: dict[str, Any]) -> str:
    ran = sum(stage["trials"] for stage in advice["stages"])
    stored = sum(stage["stored"] for stage in advice["stages"])
    reused = f", {stored} reused from the store" if stored else ""
    return (
        f"{ran} trials of {advice['trial_seconds']:g} s in "
        f"{format_duration(advice['elapsed_seconds'])} (budget "
        f"{format_duration(advice['budget_seconds'])}){reused}"
    )


def _mops(value: float | None) -> str:
    return "" if value is None else f"{value / 1e6:.2f}"


def _latency(value: float | None) -> str:
    if value is None:
        return ""
    return f"{value / 1e3:.1f} µs" if value >= 1e3 else f"{value:.0f} ns"


def _count(value: float | None) -> str:
    return "" if value is None else nodes(value)


TIES_SHOWN = 4  # configurations named beside the recommendation (the table lists them all)

COLUMNS = (
    "#",
    "group",
    "configuration",
    "Mops/s",
    "vs best (95% CI)",
    "garbage",
    "under a stall",
    "RSS MiB",
    "free p99.9",
)


def _cells(number: int, row: dict[str, Any]) -> list[str]:
    low, high = row["interval"]
    rss = row.get("peak_rss_bytes")
    return [
        str(number),
        str(row["group"]),
        label(row),
        _mops(row["throughput"]),
        f"{row['ratio']:.2f} ({low:.2f}–{high:.2f})",
        _count(row.get("garbage_peak")),
        _count(row.get("garbage_under_stall")),
        "" if rss is None else f"{rss / 2**20:.0f}",
        _latency(row.get("free_latency_p999_ns")),
    ]


def text(advice: dict[str, Any]) -> str:
    """The terminal summary."""
    out = [f"smrlab advise {advice['workload']['name']}: {headline(advice)}", _cost(advice), ""]
    chosen = advice["recommendation"]
    if chosen is None:
        out.append("No candidate meets this workload's requirements (see below).")
    else:
        out.append(f"Recommendation: {label(chosen)}, {_mops(chosen['throughput'])} Mops/s")
        ties = [row for row in advice["ranked"][1:] if row["group"] == 1]
        if ties:
            shown = "; ".join(f"{label(row)} ({row['ratio']:.2f}×)" for row in ties[:TIES_SHOWN])
            more = len(ties) - TIES_SHOWN
            out.append(
                f"  as good within the noise: {shown}" + (f"; and {more} more" if more > 0 else "")
            )
    if advice["ranked"]:
        rows = [list(COLUMNS)] + [
            _cells(number, row) for number, row in enumerate(advice["ranked"], 1)
        ]
        widths = [max(len(row[i]) for row in rows) for i in range(len(COLUMNS))]
        out += [
            "",
            "Ranked by throughput relative to each round's median; vs best: the median of the "
            "rounds' ratios; a group cannot be told from its first member within the noise",
        ]
        for row in rows:
            out.append(
                "  " + "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True))
            )
        slower = [row for row in advice["ranked"] if row["group"] > 1]
        if slower:
            out += ["", "Slower"]
            out += [f"  {label(row)}: {row['verdict']}" for row in slower]
    if advice["screened"]:
        out += ["", "Screened, not refined (3 rounds, batch free, the first allocator)"]
        out += [f"  {label(row)}: {row['verdict']}" for row in advice["screened"]]
    if advice["excluded"]:
        out += ["", "Not recommended"]
        out += [f"  {label(row)}: {row['reason']}" for row in advice["excluded"]]
    out += ["", "Caveats"] + [f"  - {line}" for line in advice["caveats"]]
    return "\n".join(out) + "\n"


def figure(advice: dict[str, Any]) -> Plot | None:
    """Every ranked configuration's throughput relative to the best, with its interval, and
    where threads may stall, the garbage each candidate held with a stalled thread."""
    ranked = advice["ranked"]
    stalled = [
        row
        for row in ranked + advice["screened"] + advice["excluded"]
        if row.get("garbage_under_stall") is not None
    ]
    stalled = list({row["reclaimer"]: row for row in reversed(stalled)}.values())[::-1]
    if not ranked and not stalled:
        return None
    panels = 1 + bool(stalled)
    height = 1.2 + 0.28 * max(len(ranked), len(stalled))
    fig = style.figure(5.5 * panels, height)
    axes = fig.subplots(1, panels, squeeze=False)[0]
    if ranked:
        y = np.arange(len(ranked))[::-1]
        ratios = np.array([row["ratio"] for row in ranked])
        # The median of the rounds' ratios need not lie inside its bootstrap interval.
        low = np.maximum(0.0, ratios - [row["interval"][0] for row in ranked])
        high = np.maximum(0.0, [row["interval"][1] for row in ranked] - ratios)
        colors = [style.reclaimer_color(row["reclaimer"]) for row in ranked]
        axes[0].barh(y, ratios, color=colors, alpha=0.8)
        axes[0].errorbar(ratios, y, xerr=[low, high], fmt="none", ecolor="black")
        axes[0].axvline(1.0, color="grey", linewidth=0.8)
        axes[0].set_yticks(y, [f"{label(row)} (g{row['group']})" for row in ranked])
        axes[0].set_xlabel("throughput / the best's (median of rounds, 95% interval)")
    if stalled:
        axis = axes[-1]
        y = np.arange(len(stalled))[::-1]
        axis.barh(
            y,
            [row["garbage_under_stall"] for row in stalled],
            color=[style.reclaimer_color(row["reclaimer"]) for row in stalled],
        )
        axis.set_xscale("log")
        axis.set_yticks(y, [row["reclaimer"] for row in stalled])
        axis.set_xlabel("garbage with one thread stalled (nodes)")
        budget = advice["workload"].get("memory_budget_nodes")
        if budget:
            axis.axvline(budget, color="red", linestyle="--", label="memory budget")
            axis.legend(loc="lower right")
    title = f"advice for {advice['workload']['name']}: {headline(advice)}"
    fig.suptitle(title, fontsize="small")
    return Plot(f"advice-{advice['workload']['name']}", "advice", title, fig)


def html_section(advice: dict[str, Any], svg: str) -> str:
    """The report's section for one advice; ``svg`` is its figure, inlined (may be '')."""
    name = html.escape(advice["workload"]["name"])
    chosen = advice["recommendation"]
    verdict = (
        f"<strong>{html.escape(label(chosen))}</strong>, {_mops(chosen['throughput'])} Mops/s"
        if chosen
        else "no candidate meets this workload's requirements"
    )
    head = "".join(f"<th>{html.escape(c)}</th>" for c in (*COLUMNS, "verdict"))
    body = "".join(
        "<tr>"
        + "".join(f"<td>{html.escape(cell)}</td>" for cell in _cells(number, row))
        + f"<td>{html.escape(row['verdict'])}</td></tr>"
        for number, row in enumerate(advice["ranked"], 1)
    )
    excluded = "".join(
        f"<li><code>{html.escape(label(row))}</code>: {html.escape(row['reason'])}</li>"
        for row in advice["excluded"]
    )
    caveats = "".join(f"<li>{html.escape(line)}</li>" for line in advice["caveats"])
    experiments = ", ".join(f"<code>{html.escape(name)}</code>" for name in advice["experiments"])
    screened = "".join(
        f"<li><code>{html.escape(label(row))}</code>: {html.escape(row['verdict'])}</li>"
        for row in advice["screened"]
    )
    screened = f"<h3>Screened, not refined</h3><ul>{screened}</ul>" if screened else ""
    return f"""
<h2 id="advice-{name}">Advice: {name}</h2>
<p class="meta">{html.escape(headline(advice))} · {html.escape(_cost(advice))} ·
 trials in experiments {experiments}</p>
<p>Recommendation: {verdict}</p>
<figure>{svg}</figure>
<div class="table-wrap"><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>
{screened}
<h3>Not recommended</h3><ul>{excluded}</ul>
<h3>Caveats</h3><ul>{caveats}</ul>
"""
