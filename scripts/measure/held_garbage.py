#!/usr/bin/env python3
"""Garbage a stalled thread keeps alive, per reclaimer: nothing held vs the first node held.

For each reclaimer safe with the structure, runs smrbench with a fixed number of operations
three ways: no stalled thread, a stalled thread inside an operation holding nothing (--stall),
and one holding the structure's first node (--stall-hold). It reports the garbage (retired,
not yet freed) when the workers finish, while the stalled thread still stalls, as a median
over --reps runs, and as a share of the nodes retired. Scan-based schemes run with a small
batch (--bag-size) so that their own batching does not hide what the stall pins.

Usage: scripts/measure/held_garbage.py [--smrbench PATH] [--ds hm_list] [--key-range 1024]
       [--ops 20000] [--threads 2] [--reps 3] [--reclaimers a,b,...] [-- further options]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MODES = {"none": [], "stall": ["--stall"], "hold": ["--stall-hold"]}


def garbage(smrbench: str, args: list[str]) -> tuple[float, float]:
    """(garbage when the workers finished, retired) of one run."""
    out = subprocess.run(
        [smrbench, *args, "--quiet", "--json"], check=True, capture_output=True, text=True
    ).stdout
    run = json.loads(out)
    if not run["validated"]:
        raise RuntimeError(f"not validated: {args}")
    return float(run["reclaimer"]["garbage_end"]), float(run["reclaimer"]["retired"])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smrbench", default=str(ROOT / "build/release/bench/smrbench"))
    parser.add_argument("--ds", default="hm_list")
    parser.add_argument("--key-range", type=int, default=1024)
    parser.add_argument("--ops", type=int, default=20000)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--bag-size", type=int, default=64)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--reclaimers", default="")
    parser.add_argument("extra", nargs="*", help="further smrbench options, after --")
    options = parser.parse_args()

    listing = json.loads(
        subprocess.run(
            [options.smrbench, "--list", "--json"], check=True, capture_output=True, text=True
        ).stdout
    )
    families = {r["name"]: r["family"] for r in listing["reclaimers"]}
    safe = [c["reclaimer"] for c in listing["combinations"] if c["ds"] == options.ds and c["valid"]]
    reclaimers = options.reclaimers.split(",") if options.reclaimers else safe
    base = [
        "--ds",
        options.ds,
        "--key-range",
        str(options.key_range),
        "--ops",
        str(options.ops),
        "--threads",
        str(options.threads),
        *options.extra,
    ]
    # The batch settings, each given only to the reclaimers that read it (smrbench refuses a
    # reclaimer's tuning given to another).
    readers = {row["key"]: row.get("reclaimers") for row in listing["options"]}
    tunings = {"bag_size": options.bag_size, "hp_scan_factor": 1}

    def tuned(name: str) -> list[str]:
        return [
            arg
            for key, value in tunings.items()
            if name in (readers.get(key) or ())
            for arg in ("--" + key.replace("_", "-"), str(value))
        ]

    print(
        f"# {options.ds}, {options.key_range} keys, {options.threads} threads x "
        f"{options.ops} ops, bag {options.bag_size}; garbage when the workers finish, "
        f"median of {options.reps} (share of retired)"
    )
    print(
        "| reclaimer | family | no stall | stalled, holding nothing | stalled, holding the "
        "first node |"
    )
    print("|---|---|---:|---:|---:|")
    for name in reclaimers:
        cells = []
        for mode, flags in MODES.items():
            runs = [
                garbage(options.smrbench, [*base, "--reclaimer", name, *tuned(name), *flags])
                for _ in range(options.reps)
            ]
            held = statistics.median(g for g, _ in runs)
            retired = statistics.median(r for _, r in runs)
            cells.append(f"{held:,.0f} ({100 * held / max(retired, 1):.0f}%)")
            print(f"{name} {mode}: {held:.0f} of {retired:.0f}", file=sys.stderr, flush=True)
        print(f"| {name} | {families.get(name, '?')} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
