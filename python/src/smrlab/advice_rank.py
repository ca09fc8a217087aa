"""From stored trials to a recommendation: which (reclaimer, free policy, allocator) to use for
a workload, which others are as good within the noise, and why each of the rest lost.

The rules, in the order they apply (a configuration is judged by the first that excludes it):

1. ``none`` frees nothing: it is the leak baseline, never a choice.
2. A scheme the compatibility table refuses on the structure is out, with the table's reason.
3. Where threads may stall, a scheme whose garbage is unbounded under a stalled thread
   (smrbench's ``garbage_bounded``: the epoch family, liburcu) is out, with the garbage it
   was measured to hold after one trial with a stalled thread.
4. Over the memory budget: the garbage peak (under a stall where threads may stall) above
   ``memory_budget_nodes`` is out.
5. A configuration whose trials failed is out, with the failure.
6. The rest are ranked by median throughput: the refined configurations (every free policy
   and allocator, 5 rounds) if the refine stage ran, else the screened ones. Each one's ratio
   to the best is the median of the rounds' ratios with its paired bootstrap interval
   (``smrlab.compare.bootstrap_paired_ratio``: trial k of every configuration ran in one
   round, seconds apart, so a round's drift cancels). Groups are runs of the ranking: a
   configuration joins the group above while its interval against that group's leader covers
   1.0. A latency-sensitive workload puts first, among the first group's members within 10 %
   of the best (LATENCY_NEAR), the one with the shortest free() latency tail (p99.9); the
   head of the first group is the recommendation.
7. A screened candidate the budget did not refine is listed apart, with its ratio to the
   screen's fastest over the screen's rounds (3: a range, not a confidence interval).

Everything here is a pure function of the runs and smrbench's listing, so a planted store
gives a known answer (tests/python/test_advise.py).
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Any

from smrlab.advice_workload import Workload
from smrlab.compare import MIN_TRIALS, Interval, bootstrap_paired_ratio

# A latency-sensitive workload trades at most this much throughput for a shorter free() tail.
LATENCY_NEAR = 0.9

# What a family pays per operation, said once where a slower scheme's line explains its loss.
_FAMILY_COST = {
    "reservation": "announces and validates every node it visits",
    "epoch": "announces every operation to a shared epoch",
    "neutralization": "pays for signals and restarted read phases",
    "reference_count": "increments and decrements a count on every node it visits",
    "external": "pays liburcu's read-side and grace-period costs",
}


@dataclass
class Config:
    """One (reclaimer, free, allocator) and what was measured of it."""

    reclaimer: str
    free: str | None
    alloc: str
    family: str
    rounds: dict[int, float] = field(default_factory=dict)  # trial index → ops/s, no stall
    garbage: list[float] = field(default_factory=list)  # garbage peaks of those trials
    rss: list[float] = field(default_factory=list)
    free_p99: list[float] = field(default_factory=list)
    free_p999: list[float] = field(default_factory=list)
    stall_garbage: float | None = None  # the reclaimer's garbage peak with a stalled thread
    failure: str = ""

    @property
    def label(self) -> str:
        parts = [self.reclaimer]
        if self.free:
            parts.append(f"free={self.free}")
        parts.append(self.alloc)
        return " ".join(parts)

    @property
    def throughput(self) -> list[float]:
        return list(self.rounds.values())

    @property
    def median(self) -> float:
        return statistics.median(self.throughput)

    def versus(self, other: Config, seed: int) -> Interval:
        """This configuration's throughput over ``other``'s, paired round by round."""
        common = sorted(self.rounds.keys() & other.rounds.keys())
        if not common:
            raise ValueError(f"{self.label} and {other.label} share no round")
        mine = [self.rounds[k] for k in common]
        return bootstrap_paired_ratio([other.rounds[k] for k in common], mine, seed=seed)


def _median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def short_reason(text: str) -> str:
    """A compatibility reason cut to its first clause (the table's full text follows a colon,
    a parenthesis or a semicolon)."""
    cut = len(text)
    for mark in (":", " (", ";"):
        at = text.find(mark)
        if 0 < at < cut:
            cut = at
    return text[:cut].rstrip(" .,")


def nodes(count: float) -> str:
    """A node count as a person reads it: 4,052; 26K; 1.2M."""
    if count >= 1e6:
        return f"{count / 1e6:.1f}M"
    if count >= 1e4:
        return f"{count / 1e3:.0f}K"
    return f"{count:,.0f}"


def node_count(count: float) -> str:
    """``nodes`` with its noun: 1 node, 4,052 nodes."""
    return f"{nodes(count)} node" + ("" if count == 1 else "s")


def bounded_garbage(listing: dict[str, Any]) -> dict[str, bool]:
    """Whether each reclaimer bounds its garbage when a thread stalls (smrbench's listing)."""
    return {r["name"]: bool(r.get("garbage_bounded")) for r in listing.get("reclaimers", [])}


def collect(
    runs: list[dict[str, Any]], listing: dict[str, Any], default_alloc: str
) -> list[Config]:
    """The configurations of ``runs`` (one advise's trials, every other option equal), with
    each stall trial's garbage attached to its reclaimer."""
    families = {r["name"]: r.get("family", "") for r in listing.get("reclaimers", [])}
    configs: dict[tuple[str, str | None, str], Config] = {}
    stalled: dict[str, list[float]] = {}
    for run in runs:
        options = run["options"]
        reclaimer = options["reclaimer"]
        counters = run["result"].get("reclaimer") or {}
        if options.get("stall"):
            if counters.get("garbage_peak") is not None:
                stalled.setdefault(reclaimer, []).append(float(counters["garbage_peak"]))
            continue
        key = (reclaimer, options.get("free"), options.get("alloc", default_alloc))
        config = configs.setdefault(key, Config(*key, families.get(reclaimer, "")))
        if run.get("throughput") is not None:
            config.rounds[int(options.get("trial", len(config.rounds)))] = float(run["throughput"])
        for values, value in (
            (config.garbage, counters.get("garbage_peak")),
            (config.rss, run.get("peak_rss_bytes")),
            (config.free_p99, (counters.get("free_latency_ns") or {}).get("p99")),
            (config.free_p999, (counters.get("free_latency_ns") or {}).get("p999")),
        ):
            if value is not None:
                values.append(float(value))
    measured = {reclaimer for reclaimer, _, _ in configs}
    for reclaimer in stalled.keys() - measured:  # probed with a stall, not screened
        configs[(reclaimer, None, default_alloc)] = Config(
            reclaimer, None, default_alloc, families.get(reclaimer, "")
        )
    for config in configs.values():
        config.stall_garbage = _median(stalled.get(config.reclaimer, []))
    return list(configs.values())


def exclusion(config: Config, workload: Workload, bounded: dict[str, bool], duration: float) -> str:
    """Why ``config`` cannot be recommended for ``workload`` whatever its speed ('' if it can)."""
    if config.failure:
        return f"failed: {config.failure}"
    if workload.stalls and not bounded.get(config.reclaimer, False):
        measured = config.stall_garbage
        if config.family == "reference_count":
            # Bounded by what the stalled thread can reach, not by a threshold: a chain of
            # unlinked nodes behind the one it holds stays alive however long it grows.
            here = "" if measured is None else f" ({node_count(measured)} held here)"
            return (
                "garbage not bounded under a stall: a stalled thread keeps alive every node "
                f"reachable from the one it holds{here}"
            )
        held = (
            f"{node_count(measured)} held after {duration:g} s"
            if measured is not None
            else "every node retired while it stalls is held"
        )
        return f"unbounded garbage under a stall: {held} with one thread stalled"
    budget = workload.memory_budget_nodes
    peak = config.stall_garbage if workload.stalls else _median(config.garbage)
    if budget is not None and peak is not None and peak > budget:
        under = " under a stall" if workload.stalls else ""
        return f"over the memory budget: garbage peak {nodes(peak)}{under}, budget {nodes(budget)}"
    return ""


def rank(
    workload: Workload,
    listing: dict[str, Any],
    screen_runs: list[dict[str, Any]],
    refine_runs: list[dict[str, Any]] = (),
    *,
    duration: float,
    failures: dict[str, str] | None = None,
    unmeasured: dict[str, str] | None = None,
) -> dict[str, Any]:
    """The advice for ``workload`` (JSON-ready): ``recommendation``, ``ranked`` (with groups
    and each one's verdict), ``screened`` (candidates the budget did not refine) and
    ``excluded`` (one reason each). ``screen_runs`` hold the stall probe's and the screen's
    trials, ``refine_runs`` the refine stage's; ``failures`` maps a reclaimer to its failed
    trial's message, ``unmeasured`` a candidate the run left out to why."""
    bounded = bounded_garbage(listing)
    default_alloc = workload.allocators[0]
    screen = collect(list(screen_runs), listing, default_alloc)
    refine = collect(list(refine_runs), listing, default_alloc)
    stalled = {config.reclaimer: config.stall_garbage for config in screen}
    excluded = _refused(workload, listing)
    excluded += [{"reclaimer": name, "reason": why} for name, why in (unmeasured or {}).items()]

    def admissible(configs: list[Config]) -> list[Config]:
        kept = []
        for config in configs:
            config.stall_garbage = stalled.get(config.reclaimer, config.stall_garbage)
            config.failure = (failures or {}).get(config.reclaimer, "")
            why = exclusion(config, workload, bounded, duration)
            if not why and len(config.throughput) < MIN_TRIALS and config.rounds:
                why = f"too few trials to place ({len(config.throughput)} of {MIN_TRIALS})"
            if why:
                excluded.append({**_identity(config), "reason": why, **_measures(config)})
            elif config.rounds:
                kept.append(config)
        return kept

    refined = admissible(refine)
    refined_names = {config.reclaimer for config in refine}
    screened = admissible([c for c in screen if c.reclaimer not in refined_names])
    final, rest = (refined, screened) if refined else (screened, [])
    kept = {config.reclaimer for config in refined} | {config.reclaimer for config in screened}
    pool = [c for c in screen if c.rounds and c.reclaimer in kept]  # the screen's admissible
    rows = _groups(final, workload.latency_sensitive)
    return {
        "recommendation": rows[0] if rows else None,
        "ranked": rows,
        "screened": _screened(rest, pool, len({r["reclaimer"] for r in rows})),
        "excluded": excluded,
    }


def _refused(workload: Workload, listing: dict[str, Any]) -> list[dict[str, Any]]:
    """The schemes that are not candidates at all: the leak baseline and refused pairs."""
    out = []
    for entry in listing.get("combinations", []):
        name = entry.get("reclaimer")
        if entry.get("ds") != workload.ds:
            continue
        if workload.reclaimers is not None and name not in workload.reclaimers:
            continue
        if name == "none":
            out.append({"reclaimer": name, "reason": "never frees memory (the leak baseline)"})
        elif not (entry.get("safe", entry.get("valid")) and entry.get("valid")):
            out.append({"reclaimer": name, "reason": "refused: " + short_reason(entry["reason"])})
    return out


def _identity(config: Config) -> dict[str, Any]:
    return {
        "reclaimer": config.reclaimer,
        "free": config.free,
        "alloc": config.alloc,
        "family": config.family,
    }


def _measures(config: Config) -> dict[str, Any]:
    return {
        "trials": len(config.throughput),
        "throughput": _median(config.throughput),
        "garbage_peak": _median(config.garbage),
        "garbage_under_stall": config.stall_garbage,
        "peak_rss_bytes": _median(config.rss),
        "free_latency_p99_ns": _median(config.free_p99),
        "free_latency_p999_ns": _median(config.free_p999),
    }


def by_rounds(configs: list[Config]) -> list[Config]:
    """``configs`` best first, by rounds rather than by medians, which a round's drift moves:
    each trial is divided by its round's median over every configuration, and the median of
    a configuration's shares is its score. (Pairwise medians of ratios are not transitive; the
    shares measure everyone with one yardstick.)"""
    rounds = {k for config in configs for k in config.rounds}
    level = {k: statistics.median(c.rounds[k] for c in configs if k in c.rounds) for k in rounds}

    def score(config: Config) -> float:
        return statistics.median(value / level[k] for k, value in config.rounds.items())

    return sorted(configs, key=score, reverse=True)


def _groups(ranked: list[Config], latency_sensitive: bool) -> list[dict[str, Any]]:
    """Ranked rows, best first: groups of configurations indistinguishable from their group's
    leader."""
    if not ranked:
        return []
    # One seed per configuration, so that its interval against the best is the same one that
    # put it in the first group or kept it out.
    seeds = {id(config): number for number, config in enumerate(ranked)}
    remaining = by_rounds(ranked)
    best = remaining[0]
    remaining = [config for config in remaining if config.rounds.keys() & best.rounds.keys()]
    # Group 1 is the best and whatever cannot be told from it (or beats it: the score and the
    # pairwise ratio may disagree within the noise). Each later group is led by the highest
    # scored configuration left, with whatever cannot be told from that leader.
    groups: list[list[Config]] = []
    while remaining:
        leader = remaining[0]
        members = [leader]
        for config in remaining[1:]:
            tie = config.versus(leader, seeds[id(config)])
            if tie.covers(1.0) or (leader is best and tie.ratio >= 1.0):
                members.append(config)
        groups.append(members)
        remaining = [config for config in remaining if config not in members]
    if latency_sensitive:
        # Among the first group's members within LATENCY_NEAR of the best (a wide interval can
        # put a much slower one in the group), the shortest free() tail comes first.
        def tail(config: Config) -> tuple[bool, bool, float]:
            near = config.versus(best, seeds[id(config)]).ratio >= LATENCY_NEAR
            p999 = _median(config.free_p999)
            return (not near, p999 is None, p999 or 0.0)

        groups[0].sort(key=tail)
    rows: list[dict[str, Any]] = []
    for group, members in enumerate(groups, 1):
        for config in members:
            versus = config.versus(best, seeds[id(config)])
            row = {**_identity(config), "group": group, **_measures(config)}
            row["ratio"], row["interval"] = versus.ratio, [versus.low, versus.high]
            row["verdict"] = _verdict(row, rows, config)
            rows.append(row)
    return rows


def _screened(rest: list[Config], pool: list[Config], refined: int) -> list[dict[str, Any]]:
    """The screened candidates not refined, against the fastest of ``pool`` (the screen's
    admissible configurations)."""
    leader = by_rounds(pool)[0] if pool else None
    rows = []
    for number, config in enumerate(c for c in by_rounds(pool) if c in rest):
        if leader is None or not config.rounds.keys() & leader.rounds.keys():
            continue
        versus = config.versus(leader, number)
        row = {**_identity(config), **_measures(config)}
        row["ratio"], row["interval"] = versus.ratio, [versus.low, versus.high]
        spread = f"{versus.ratio:.2f}× {leader.reclaimer} at the screen"
        spread += f" (rounds {versus.low:.2f}–{versus.high:.2f})"
        if versus.covers(1.0):
            row["verdict"] = (
                f"not refined (the budget refined the {refined} ranked first at the screen): "
                f"{spread}, "
                "within the screen's noise"
            )
        else:
            cost = _FAMILY_COST.get(config.family)
            row["verdict"] = f"slower: {spread}" + (f"; it {cost}" if cost else "")
        rows.append(row)
    return rows


def _verdict(row: dict[str, Any], before: list[dict[str, Any]], config: Config) -> str:
    ratio, (low, high) = row["ratio"], row["interval"]
    versus = f"{ratio:.2f}× the best ({low:.2f}–{high:.2f})"
    if not before:
        return "recommended"
    if row["group"] == 1:
        return f"indistinguishable from the recommendation within the noise: {versus}"
    itself = next((other for other in before if other["reclaimer"] == config.reclaimer), None)
    if itself is not None and itself["group"] < row["group"]:
        better = " and ".join(
            f"{key}={itself[key]}"
            for key in ("free", "alloc")
            if itself[key] != row[key] and itself[key] is not None
        )
        return f"slower: {versus}; {config.reclaimer} does better with {better}"
    cost = _FAMILY_COST.get(config.family)
    return f"slower: {versus}" + (f"; it {cost}" if cost else "")
