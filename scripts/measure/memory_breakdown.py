#!/usr/bin/env python3
"""Where a trial's peak RSS goes: nodes, garbage, the rest of the heap, the allocator, the process.

For each reclaimer, runs smrbench once with the memory sampler on (--sample-ms) and once as a
near-empty trial of the same configuration (64 keys, one operation per thread: the process's
own floor, its code, libraries, thread stacks and tables), and splits the trial's peak RSS:

    live nodes      (allocated - retired - discarded) x node_bytes, at the end of the trial
    garbage         retired-but-unfreed nodes x node_bytes at the sample of highest RSS (for
                    `none`, every node retired: it never frees); its peak over the trial apart
    rounding+other  the allocator's bytes in use at that sample, less the two above: each node
                    rounded up to its size class (glibc counts its chunk headers too: a 64-byte
                    node takes 80), and smrbench's own allocations (histograms, recorders)
    allocator       RSS - floor - bytes in use at that sample: what the allocator holds beyond
                    what it counts as in use (free lists, thread caches, metadata, pages kept)
    floor           the near-empty trial's peak RSS

node_bytes comes from smrbench --list --json (the node with the reclaimer's header). The last
column is the kernel's peak RSS over live nodes plus peak garbage: 1.10 is a tenth on top.

    scripts/measure/memory_breakdown.py --ds dgt_bst --key-range 2000000 --reclaimers none debra
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

PROG = "memory_breakdown.py"
MB = 2**20


class MeasureError(Exception):
    """One line for stderr, then exit status 1."""


def smrbench_json(smrbench: Path, options: list[str]) -> dict:
    command = [str(smrbench), *options, "--json", "--quiet"]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        last = done.stderr.strip().splitlines()[-1:] or ["(no output)"]
        raise MeasureError(f"exit status {done.returncode}: {' '.join(command)}: {last[0]}")
    try:
        result = json.loads(done.stdout)
    except json.JSONDecodeError:
        raise MeasureError(f"smrbench printed no JSON: {' '.join(command)}") from None
    if "combinations" not in result and not result.get("validated"):
        raise MeasureError(f"smrbench did not validate: {' '.join(command)}")
    return result


def node_bytes(listing: dict, ds: str, reclaimer: str) -> int:
    for combo in listing["combinations"]:
        if combo["ds"] == ds and combo["reclaimer"] == reclaimer:
            return int(combo["node_bytes"])
    raise MeasureError(f"smrbench --list knows no combination {ds} x {reclaimer}")


def breakdown(result: dict, floor: dict, size: int) -> dict[str, float]:
    """The split of the median trial's RSS at its highest sample, in bytes (see the module's
    docstring); peak_rss is the kernel's high-water mark, which a sample may miss."""
    trial = result["trials"][result["median_trial"]]
    stats = trial["reclaimer"]
    samples = [s for s in trial["samples"] if s["allocator_bytes"] >= 0]
    if not samples:
        raise MeasureError(f"--alloc {result['allocator']['name']} reports no bytes in use")
    top = max(samples, key=lambda s: s["rss_bytes"])
    live = (stats["allocated"] - stats["retired"] - stats["discarded"]) * size
    garbage = top["garbage"] * size
    floor_rss = floor["trials"][floor["median_trial"]]["peak_rss_bytes"]
    return {
        "peak_rss": trial["peak_rss_bytes"],
        "sampled_rss": top["rss_bytes"],
        "live_nodes": live,
        "garbage": garbage,
        "garbage_peak": stats["garbage_peak"] * size,
        "other_heap": top["allocator_bytes"] - live - garbage,
        "allocator": top["rss_bytes"] - floor_rss - top["allocator_bytes"],
        "floor": floor_rss,
    }


def run(args: argparse.Namespace) -> list[tuple[str, int, dict[str, float]]]:
    listing = smrbench_json(args.smrbench, ["--list"])
    common = ["--ds", args.ds, "--alloc", args.alloc, "--threads", str(args.threads)]
    rows = []
    for reclaimer in args.reclaimers:
        size = node_bytes(listing, args.ds, reclaimer)
        options = [*common, "--reclaimer", reclaimer]
        print(f"{PROG}: {args.ds} {reclaimer}", file=sys.stderr)
        result = smrbench_json(
            args.smrbench,
            [*options, "--key-range", str(args.key_range), "--duration", str(args.duration),
             "--sample-ms", str(args.sample_ms), "--trials", str(args.trials)],
        )  # fmt: skip
        floor = smrbench_json(args.smrbench, [*options, "--key-range", "64", "--ops", "1"])
        rows.append((reclaimer, size, breakdown(result, floor, size)))
    return rows


def table(rows: list[tuple[str, int, dict[str, float]]]) -> str:
    lines = [
        "| reclaimer | node bytes | peak RSS MB | RSS at top sample | live nodes | garbage "
        "| rounding + other | allocator | floor | garbage peak "
        "| peak RSS / (nodes + garbage peak) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    columns = ("sampled_rss", "live_nodes", "garbage", "other_heap", "allocator", "floor")
    for reclaimer, size, b in rows:
        parts = " | ".join(f"{b[k] / MB:.1f}" for k in (*columns, "garbage_peak"))
        ratio = b["peak_rss"] / (b["live_nodes"] + b["garbage_peak"])
        lines.append(f"| {reclaimer} | {size} | {b['peak_rss'] / MB:.1f} | {parts} | {ratio:.2f} |")
    return "\n".join(lines)


def parse_arguments(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__.splitlines()[0])
    parser.add_argument("--smrbench", type=Path, default=Path("build/release/bench/smrbench"))
    parser.add_argument("--ds", default="dgt_bst")
    parser.add_argument("--key-range", type=int, default=2_000_000)
    parser.add_argument("--reclaimers", nargs="+", default=["none", "debra"])
    parser.add_argument("--alloc", default="jemalloc")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--duration", type=float, default=3.0)
    parser.add_argument("--trials", type=int, default=1)
    parser.add_argument("--sample-ms", type=int, default=10)
    args = parser.parse_args(argv)
    if not args.smrbench.is_file():
        raise MeasureError(f"--smrbench {args.smrbench}: no such file (build it first)")
    return args


def main(argv: list[str]) -> int:
    try:
        args = parse_arguments(argv)
        rows = run(args)
    except MeasureError as error:
        print(f"{PROG}: {error}", file=sys.stderr)
        return 1
    print(f"{args.ds}, {args.key_range} keys, {args.threads} threads, {args.alloc}, 50/50")
    print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
