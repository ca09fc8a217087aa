#!/usr/bin/env python3
"""False aborts of a transactional structure per allocator, thread count and ORT shift.

The allocator/STM study's mechanism in counts (Baldassin, Borin and Araujo, TRANSACT 2014,
Section 5): stm_list (or --ds stm_hash_set with the paper's 128K buckets, or stm_rbtree) at the
paper's workload (4096 elements over [0, 8192), alternating updates), a fixed number of
operations per thread so that every configuration commits the same number of transactions,
and for each allocator x threads x shift the aborts and the false aborts (lock conflicts on an
object the owner does not write: a neighbour in the stripe, or a stripe that only shares the
table entry). Rounds are interleaved (every configuration once per round, in a rotated order)
so that the machine's drift spreads over all of them; each cell is the median of the rounds
with the range beside it. The last column is the layout that explains them: of 4096 nodes a
second thread allocates, how many share a versioned lock with a first thread's 4096
(smrbench layout; glibc's 64 MB-aligned arenas).

Usage: scripts/measure/stm_false_aborts.py [--smrbench PATH] [--ds stm_list] [--rounds 5]
       [--ops 25000] [--updates 60] [--threads 2,4] [--shifts 5,4]
       [--allocators glibc,jemalloc,...] [--reclaimer debra]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
ALLOCATORS = "glibc,jemalloc,tcmalloc,mimalloc,tbbmalloc"
# Each structure's node size, and its options beyond the workload.
STRUCTURES = {
    "stm_list": (16, []),
    "stm_hash_set": (16, ["--buckets", "131072"]),
    "stm_rbtree": (48, []),
}


def run(smrbench: str, args: list[str]) -> dict[str, Any]:
    """One validated run's JSON."""
    done = subprocess.run(
        [smrbench, *args, "--quiet", "--json"], check=False, capture_output=True, text=True
    )
    if done.returncode != 0:
        raise RuntimeError(f"smrbench {' '.join(args)}: exit {done.returncode}: {done.stderr}")
    result = json.loads(done.stdout)
    if not result["validated"]:
        raise RuntimeError(f"not validated: {args}")
    return result


def collisions(smrbench: str, alloc: str, node_bytes: int, shift: int) -> str:
    """Of a second thread's nodes, how many share a lock with a first thread's (layout)."""
    layout = run(smrbench, ["layout", "--alloc", alloc, "--block-size", str(node_bytes)])
    rows = [r for r in layout["two_threads"]["cross_thread"] if r["shift"] == shift]
    if not rows:
        return "n/a (layout reports shifts 4-6)"
    return f"{rows[0]['collisions']} (random: {rows[0]['random_expectation']:.0f})"


def cell(values: list[float], digits: int = 0) -> str:
    """Median (min-max)."""
    fmt = f"{{:,.{digits}f}}"
    median = fmt.format(statistics.median(values))
    return f"{median} ({fmt.format(min(values))}-{fmt.format(max(values))})"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smrbench", default=str(ROOT / "build/release/bench/smrbench"))
    parser.add_argument("--ds", default="stm_list", choices=sorted(STRUCTURES))
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--ops", type=int, default=25000, help="operations per thread")
    parser.add_argument("--updates", type=int, default=60, help="percent updates (even)")
    parser.add_argument("--threads", default="2,4")
    parser.add_argument("--shifts", default="5,4")
    parser.add_argument("--allocators", default=ALLOCATORS)
    parser.add_argument("--reclaimer", default="debra")
    options = parser.parse_args()
    if options.updates % 2 != 0:
        parser.error("--updates must be even: inserts and erases take turns")

    configs = [
        (alloc, int(threads), int(shift))
        for alloc in options.allocators.split(",")
        for threads in options.threads.split(",")
        for shift in options.shifts.split(",")
    ]
    half = str(options.updates // 2)
    samples: dict[tuple[str, int, int], list[dict[str, float]]] = {c: [] for c in configs}
    for round_index in range(options.rounds):
        shift_by = round_index % len(configs)
        for alloc, threads, shift in configs[shift_by:] + configs[:shift_by]:
            result = run(
                options.smrbench,
                [
                    "--ds",
                    options.ds,
                    *STRUCTURES[options.ds][1],
                    "--reclaimer",
                    options.reclaimer,
                    "--alloc",
                    alloc,
                    "--threads",
                    str(threads),
                    "--key-range",
                    "8192",
                    "--insert",
                    half,
                    "--erase",
                    half,
                    "--alternate",
                    "--ops",
                    str(options.ops),
                    "--ort-shift",
                    str(shift),
                    "--seed",
                    str(round_index + 1),
                ],
            )
            stm = result["stm"]
            samples[(alloc, threads, shift)].append(
                {
                    "commits": stm["commits"],
                    "aborts": stm["aborts"],
                    "aborted_pct": stm["aborted_pct"],
                    "false": stm["false_aborts"],
                    "lock_meet": stm["false_aborts_lock_meet"],
                    "collision": stm["false_aborts_collision"],
                    "false_pct": stm["false_aborts_pct"] or 0.0,
                    "mops": result["throughput_ops_per_s"] / 1e6,
                    "version": result["allocator"]["version"],
                }
            )
            print(
                f"round {round_index + 1}: {alloc} {threads}t shift {shift}: "
                f"{stm['aborts']} aborts, {stm['false_aborts']} false",
                file=sys.stderr,
                flush=True,
            )

    node_bytes = STRUCTURES[options.ds][0]
    print(
        f"# {options.ds}, {options.updates}% updates (alternating), 4096 elements over [0, 8192), "
        f"{options.ops} operations per thread, {options.reclaimer}; median (min-max) of "
        f"{options.rounds} interleaved rounds"
    )
    print(
        "| allocator | threads | shift | commits | aborts | aborted % | false aborts | "
        "of which a lock met | false % of aborts | of which table collisions | Mops/s | "
        f"{node_bytes}-byte nodes colliding across threads |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for (alloc, threads, shift), rows in samples.items():
        column = {key: [row[key] for row in rows] for key in rows[0] if key != "version"}
        print(
            f"| {alloc} {rows[0]['version']} | {threads} | {shift} | "
            f"{statistics.median(column['commits']):,.0f} | {cell(column['aborts'])} | "
            f"{cell(column['aborted_pct'], 2)} | {cell(column['false'])} | "
            f"{cell(column['lock_meet'])} | {cell(column['false_pct'], 1)} | "
            f"{cell(column['collision'])} | "
            f"{cell(column['mops'], 3)} | "
            f"{collisions(options.smrbench, alloc, node_bytes, shift)} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
