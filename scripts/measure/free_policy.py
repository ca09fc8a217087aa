#!/usr/bin/env python3
"""Batch vs amortized free, measured as the foundation issue asks.

Runs smrbench once per (reclaimer, threads, free policy, repetition), interleaving
the configurations so that machine noise hits all of them alike, and prints a
Markdown table: median throughput with min-max, amortized/batch ratio, time in
free, p99.9 free latency and peak garbage (medians over the repetitions).

    scripts/measure/free_policy.py --smrbench build/release/bench/smrbench \
        --reclaimers debra token_periodic --threads 2 4 8 --reps 5
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import subprocess
import sys


def run_once(args: argparse.Namespace, reclaimer: str, threads: int, free: str, rep: int) -> dict:
    command = [
        args.smrbench,
        "--json",
        "--quiet",
        "--ds",
        args.ds,
        "--reclaimer",
        reclaimer,
        "--free",
        free,
        "--alloc",
        args.alloc,
        "--threads",
        str(threads),
        "--key-range",
        str(args.key_range),
        "--insert",
        "50",
        "--erase",
        "50",
        "--duration",
        str(args.duration),
        "--seed",
        str(rep + 1),
    ]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.exit(f"free_policy.py: {' '.join(command)} failed: {done.stderr.strip()}")
    result = json.loads(done.stdout)
    if not result["validated"]:
        sys.exit(f"free_policy.py: validation failed: {' '.join(command)}")
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smrbench", default="build/release/bench/smrbench")
    parser.add_argument("--ds", default="dgt_bst")
    parser.add_argument("--alloc", default="jemalloc")
    parser.add_argument("--key-range", type=int, default=2_000_000)
    parser.add_argument("--duration", type=float, default=1.0)
    parser.add_argument("--reclaimers", nargs="+", default=["debra", "token_periodic"])
    parser.add_argument("--threads", nargs="+", type=int, default=[2, 4, 8])
    parser.add_argument("--reps", type=int, default=5)
    args = parser.parse_args()

    configs = list(itertools.product(args.reclaimers, args.threads, ["batch", "amortized"]))
    results: dict[tuple, list[dict]] = {c: [] for c in configs}
    for rep in range(args.reps):
        for config in configs:
            results[config].append(run_once(args, *config, rep))
            print(f"rep {rep + 1}/{args.reps} {config} done", file=sys.stderr)

    def med(config: tuple, key) -> float:
        return statistics.median(key(r) for r in results[config])

    print(
        f"{args.ds}, {args.key_range} keys, 50/50, {args.alloc}, {args.duration} s x "
        f"{args.reps} interleaved runs; median (min-max)\n"
    )
    print(
        "| reclaimer | threads | free | Mops/s | af/batch | free s | p99.9 free ns | peak garbage |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for reclaimer, threads, free in configs:
        config = (reclaimer, threads, free)
        tputs = [r["throughput_ops_per_s"] / 1e6 for r in results[config]]
        ratio = ""
        if free == "amortized":
            batch = statistics.median(
                r["throughput_ops_per_s"] for r in results[(reclaimer, threads, "batch")]
            )
            ratio = f"{statistics.median(t * 1e6 for t in tputs) / batch:.2f}"
        print(
            f"| {reclaimer} | {threads} | {free} | {statistics.median(tputs):.2f} "
            f"({min(tputs):.2f}-{max(tputs):.2f}) | {ratio} "
            f"| {med(config, lambda r: r['reclaimer']['free_seconds']):.3f} "
            f"| {med(config, lambda r: r['reclaimer']['free_latency_ns']['p999']):.0f} "
            f"| {med(config, lambda r: r['reclaimer']['garbage_peak']):.0f} |"
        )


if __name__ == "__main__":
    main()
