#!/usr/bin/env python3
"""L1 data-cache miss rate of the transactional list per allocator, by cachegrind.

The allocator/STM study's Table 4 (Baldassin, Borin and Araujo, TRANSACT 2014) gives, beside
the aborted transactions, the L1 data-cache miss rate of the sorted list per allocator, read
from hardware counters (PAPI). These machines have none, so this script simulates the cache
with valgrind's cachegrind (32 KiB, 8-way, 64-byte lines: the paper's L1d) on a shortened run,
and says so wherever its numbers are shown.

What the simulation is and is not: cachegrind runs the threads one at a time on one simulated
cache hierarchy, without coherence, so the misses that false sharing between cores causes are
absent; what it measures is locality, the effect the paper attributes to glibc's 32-byte
chunks (twice the lines for the same 16-byte nodes). Each configuration runs twice, with
--ops N and --ops 2N per thread, and the rate is the difference of misses over the difference
of accesses, so the prefill and the start-up cancel out.

Usage: scripts/measure/stm_cachegrind.py [--smrbench PATH] [--ops 2000] [--threads 1,2]
       [--shift 5] [--allocators glibc,tcmalloc,...]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ALLOCATORS = "glibc,tcmalloc,tbbmalloc,jemalloc,mimalloc"
# The paper's machine (Table 2): 32 KiB, 8-way, 64-byte lines.
L1D = "--D1=32768,8,64"


def counts(path: Path) -> dict[str, int]:
    """The event totals of a cachegrind output file."""
    events: list[str] = []
    totals: list[int] = []
    for line in path.read_text().splitlines():
        if line.startswith("events:"):
            events = line.split()[1:]
        elif line.startswith("summary:"):
            totals = [int(value) for value in line.split()[1:]]
    if not totals:
        raise RuntimeError(f"cachegrind wrote no summary in {path}")
    return dict(zip(events, totals, strict=True))


def preload(smrbench: str, alloc: str) -> dict[str, str]:
    """The environment of smrbench's own re-execution with `alloc` preloaded (valgrind cannot
    follow smrbench's exec of /proc/self/exe, so the script preloads it itself)."""
    if alloc == "glibc":
        return {}
    done = subprocess.run(
        [smrbench, "--alloc", alloc, "--ops", "1", "--json", "--quiet"],
        capture_output=True,
        text=True,
        check=True,
    )
    library = json.loads(done.stdout)["allocator"]["library"]
    return {"LD_PRELOAD": library, "SMRBENCH_ALLOC_REEXEC": alloc}


def run(smrbench: str, alloc: str, threads: int, shift: int, ops: int) -> dict[str, int]:
    with tempfile.TemporaryDirectory() as out_dir:
        out = Path(out_dir) / "cachegrind.out"
        argv = [
            "valgrind",
            "--tool=cachegrind",
            "--cache-sim=yes",
            L1D,
            f"--cachegrind-out-file={out}",
            smrbench,
            "--ds",
            "stm_list",
            "--reclaimer",
            "debra",
            "--alloc",
            alloc,
            "--threads",
            str(threads),
            "--key-range",
            "8192",
            "--insert",
            "30",
            "--erase",
            "30",
            "--alternate",
            "--ort-shift",
            str(shift),
            "--ops",
            str(ops),
            "--json",
            "--quiet",
        ]
        env = {**os.environ, **preload(smrbench, alloc)}
        done = subprocess.run(argv, capture_output=True, text=True, check=False, env=env)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(argv)}: exit {done.returncode}: {done.stderr[-400:]}")
        result = json.loads(done.stdout)
        if not result["validated"] or result["allocator"]["name"] != alloc:
            raise RuntimeError(f"{alloc}: not validated, or another allocator served malloc")
        return counts(out)


def miss_rate(smrbench: str, alloc: str, threads: int, shift: int, ops: int) -> float:
    """D1 misses per data access of the operations between --ops N and --ops 2N, in %."""
    short = run(smrbench, alloc, threads, shift, ops)
    long = run(smrbench, alloc, threads, shift, 2 * ops)
    misses = (long["D1mr"] + long["D1mw"]) - (short["D1mr"] + short["D1mw"])
    accesses = (long["Dr"] + long["Dw"]) - (short["Dr"] + short["Dw"])
    return 100.0 * misses / accesses


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smrbench", default=str(ROOT / "build/release/bench/smrbench"))
    parser.add_argument("--ops", type=int, default=2000, help="operations per thread")
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--shift", type=int, default=5)
    parser.add_argument("--allocators", default=ALLOCATORS)
    options = parser.parse_args()
    allocators = options.allocators.split(",")
    threads = [int(t) for t in options.threads.split(",")]
    print(
        f"# stm_list, 60% updates alternating, shift {options.shift}: simulated L1d miss rate "
        f"(cachegrind, 32 KiB 8-way 64-byte lines; threads serialized, no coherence misses), "
        f"{options.ops} operations per thread beyond a first run"
    )
    print("| threads | " + " | ".join(allocators) + " |")
    print("|---:|" + "---:|" * len(allocators))
    for count in threads:
        rates = []
        for alloc in allocators:
            rate = miss_rate(options.smrbench, alloc, count, options.shift, options.ops)
            print(f"{alloc} {count}t: {rate:.2f}%", file=sys.stderr, flush=True)
            rates.append(f"{rate:.2f}%")
        print(f"| {count} | " + " | ".join(rates) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
