#!/usr/bin/env python3
"""Single-thread instructions per operation of each reclaimer, by callgrind.

Instruction counts are deterministic (same binary, inputs and environment),
so unlike timings on a shared 2-core machine they compare reclaimers exactly.
Each reclaimer runs twice under callgrind with one worker thread doing
--ops N and then --ops 2N operations; the difference of the worker thread's
instruction totals divided by N is the per-operation cost with the prefill,
setup and teardown cancelled out. Other threads (the coordinator, the garbage
sampler) are counted separately by --separate-threads and ignored.

The allocator's share (inclusive cost of malloc and free, from
callgrind_annotate) is reported apart: `none` never calls free and its mallocs
always carve fresh memory, so "vs none" mixes the reclaimer's own bookkeeping
with the price of actually freeing. "bookkeeping vs none" compares the
instructions outside malloc and free.

Usage: scripts/measure/instructions_per_op.py [--smrbench PATH] [--ds dgt_bst]
       [--key-range 100000] [--ops 100000] [--reclaimers none,debra,...]
       [-- further smrbench options, e.g. --check-every 64]
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


ALLOCATOR_LINE = re.compile(r"^\s*([\d,]+) \([^)]*\)\s+\S*:(malloc|free) \[")


def allocator_instructions(path: str) -> int:
    """Inclusive instructions of malloc and free in one callgrind output file."""
    annotated = subprocess.run(
        ["callgrind_annotate", "--inclusive=yes", path], check=True, capture_output=True, text=True
    ).stdout
    seen: dict[str, int] = {}
    for line in annotated.splitlines():
        match = ALLOCATOR_LINE.match(line)
        if match and "=>" not in line and match.group(2) not in seen:
            seen[match.group(2)] = int(match.group(1).replace(",", ""))
    return sum(seen.values())


def worker_instructions(smrbench: str, args: list[str], ops: int) -> tuple[int, int]:
    """Instructions executed by the single worker thread (callgrind thread 2):
    (total, inside malloc and free)."""
    with tempfile.TemporaryDirectory() as out_dir:
        prefix = str(Path(out_dir) / "cg.out")
        cmd = [
            "valgrind",
            "--tool=callgrind",
            "--separate-threads=yes",
            f"--callgrind-out-file={prefix}",
            smrbench,
            *args,
            "--threads",
            "1",
            "--ops",
            str(ops),
            "--trials",
            "1",
            "--quiet",
            "--json",
        ]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        # Thread 1 is main; the first thread it creates is the only worker.
        [path] = Path(out_dir).glob("cg.out-02")
        with path.open(encoding="utf-8") as f:
            for line in f:
                match = re.match(r"(?:summary|totals):\s+(\d+)", line)
                if match:
                    return int(match.group(1)), allocator_instructions(str(path))
    raise RuntimeError(f"no instruction total in callgrind output for {args}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smrbench", default=str(ROOT / "build/release/bench/smrbench"))
    parser.add_argument("--ds", default="dgt_bst")
    parser.add_argument("--key-range", type=int, default=100000)
    parser.add_argument("--ops", type=int, default=100000)
    parser.add_argument("--free", default="batch")
    parser.add_argument("--reclaimers", default="")
    parser.add_argument("extra", nargs="*", help="further smrbench options, after --")
    options = parser.parse_args()

    listing = json.loads(
        subprocess.run(
            [options.smrbench, "--list", "--json"], check=True, capture_output=True, text=True
        ).stdout
    )
    # Every reclaimer safe with the structure (smrbench refuses the others), unless named.
    safe = [c["reclaimer"] for c in listing["combinations"] if c["ds"] == options.ds and c["valid"]]
    reclaimers = options.reclaimers.split(",") if options.reclaimers else safe
    base = [
        "--ds",
        options.ds,
        "--key-range",
        str(options.key_range),
        "--free",
        options.free,
        *options.extra,
    ]
    results = {}
    for name in reclaimers:
        args = [*base, "--reclaimer", name]
        once, once_alloc = worker_instructions(options.smrbench, args, options.ops)
        twice, twice_alloc = worker_instructions(options.smrbench, args, 2 * options.ops)
        results[name] = ((twice - once) / options.ops, (twice_alloc - once_alloc) / options.ops)
        print(f"{name:16s} {results[name][0]:9.1f} instructions/op", file=sys.stderr, flush=True)

    baseline = results.get("none")
    print(
        f"# {options.ds}, {options.key_range} keys, 1 thread, {options.free} free, "
        f"{options.ops} ops (difference of {options.ops} and {2 * options.ops})"
        f"{' ' + ' '.join(options.extra) if options.extra else ''}"
    )
    print("| reclaimer | instructions/op | vs none | in malloc+free | bookkeeping vs none |")
    print("|---|---:|---:|---:|---:|")
    for name, (value, alloc) in results.items():
        ratio = own = "n/a"
        if baseline:
            ratio = f"{100.0 * (value / baseline[0] - 1):+.1f}%"
            own = f"{100.0 * ((value - alloc) / (baseline[0] - baseline[1]) - 1):+.1f}%"
        print(f"| {name} | {value:.1f} | {ratio} | {alloc:.1f} | {own} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
