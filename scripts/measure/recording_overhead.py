#!/usr/bin/env python3
"""The cost of recording a timeline, measured as issue 5 asks.

Runs smrbench with recording off and on, interleaved (off, on, full, off, on, full, ...) so
that machine noise hits every mode alike, and prints a Markdown table: median throughput with
min-max and spread, ratio to "off", and how many events were recorded per thread.

Modes: off (no --timeline); on (--timeline with --timeline-capacity 100000, the default: a
thread's recording stops when its buffer is full); full (a capacity large enough that no buffer
fills, so every free call, batch and epoch change of the whole interval is recorded).

    scripts/measure/recording_overhead.py --smrbench build/release/bench/smrbench --reps 5
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path


def run_once(args: argparse.Namespace, mode: str, rep: int, directory: Path) -> dict:
    command = [
        args.smrbench,
        "--json",
        "--quiet",
        "--ds",
        args.ds,
        "--reclaimer",
        args.reclaimer,
        "--free",
        args.free,
        "--alloc",
        args.alloc,
        "--threads",
        str(args.threads),
        "--key-range",
        str(args.key_range),
        "--duration",
        str(args.duration),
        "--seed",
        str(rep + 1),
    ]
    path = directory / f"{mode}.timeline"
    if mode != "off":
        capacity = args.capacity if mode == "on" else args.full_capacity
        command += ["--timeline", str(path), "--timeline-capacity", str(capacity)]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0 or not json.loads(done.stdout)["validated"]:
        sys.exit(f"recording_overhead.py: {' '.join(command)} failed: {done.stderr.strip()}")
    result = json.loads(done.stdout)
    result["events_per_thread"] = None
    if mode != "off":
        header = json.loads(path.open().readline())
        result["events_per_thread"] = header["events"] / max(1, header["threads"])
        result["truncated"] = header["truncated_threads"]
        path.unlink()
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smrbench", default="build/release/bench/smrbench")
    parser.add_argument("--ds", default="dgt_bst")
    parser.add_argument("--reclaimer", default="debra")
    parser.add_argument("--free", default="batch")
    parser.add_argument("--alloc", default="glibc")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--key-range", type=int, default=100_000)
    parser.add_argument("--duration", type=float, default=1.0)
    parser.add_argument("--capacity", type=int, default=100_000)
    parser.add_argument("--full-capacity", type=int, default=4_000_000)
    parser.add_argument("--reps", type=int, default=5)
    args = parser.parse_args()

    modes = ["off", "on", "full"]
    results: dict[str, list[dict]] = {mode: [] for mode in modes}
    with tempfile.TemporaryDirectory() as directory:
        for rep in range(args.reps):
            for mode in modes:
                results[mode].append(run_once(args, mode, rep, Path(directory)))
                ops = results[mode][-1]["throughput_ops_per_s"] / 1e6
                print(f"rep {rep + 1} {mode}: {ops:.3f} Mops/s", file=sys.stderr)

    base = statistics.median(r["throughput_ops_per_s"] for r in results["off"])
    print(
        f"{args.ds}, {args.reclaimer} ({args.free} free), {args.alloc}, {args.threads} threads, "
        f"{args.key_range} keys, {args.duration} s, {args.reps} interleaved trials per mode\n"
    )
    print(
        "| recording | median Mops/s | min-max | spread (max-min)/median | vs off "
        "| events recorded per thread | buffers full |"
    )
    print("|---|---|---|---|---|---|---|")
    for mode in modes:
        values = [r["throughput_ops_per_s"] / 1e6 for r in results[mode]]
        median = statistics.median(values)
        events = [r["events_per_thread"] for r in results[mode] if r["events_per_thread"]]
        full = sum(1 for r in results[mode] if r.get("truncated"))
        label = {
            "off": "off",
            "on": f"--timeline, capacity {args.capacity:,}",
            "full": f"--timeline, capacity {args.full_capacity:,} (nothing dropped)",
        }[mode]
        print(
            f"| {label} | {median:.3f} | {min(values):.3f}-{max(values):.3f} "
            f"| {(max(values) - min(values)) / median:.1%} | {median * 1e6 / base:.3f} "
            f"| {statistics.median(events):,.0f} | {full}/{len(values)} |"
            if events
            else f"| {label} | {median:.3f} | {min(values):.3f}-{max(values):.3f} "
            f"| {(max(values) - min(values)) / median:.1%} | 1.000 | - | - |"
        )


if __name__ == "__main__":
    main()
