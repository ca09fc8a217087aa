#!/usr/bin/env python3
"""How often smrlab compare's 95 % interval covers 1.0 when both sides are the same run.

An A/A comparison: one smrbench configuration measured as side A and again as side B, the two
interleaved trial by trial as ``interleave = true`` runs them, `--trials` trials a side; the
ratio of medians and its bootstrap interval computed by smrlab.compare exactly as
``smrlab compare`` does. Repeated ``--repetitions`` times, the share of intervals that cover
1.0 is the interval's real coverage on this machine, noise, drift and all (nominal: 95 %).

    scripts/measure/aa_coverage.py [--repetitions 20] [--trials 5] [--duration 0.3]
        [--smrbench PATH] [-- SMRBENCH OPTIONS]

The smrbench options after ``--`` choose the configuration (default: the default experiment's
debra, batch free, DGT BST, 200K keys, 2 threads, jemalloc).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "python" / "src"))

from smrlab.compare import bootstrap_ratio  # noqa: E402

DEFAULT = [
    *("--ds", "dgt_bst", "--reclaimer", "debra", "--free", "batch", "--alloc", "jemalloc"),
    *("--threads", "2", "--key-range", "200000", "--insert", "50", "--erase", "50"),
]


def throughput(smrbench: Path, options: list[str], duration: float, seed: int) -> float:
    argv = [str(smrbench), *options, "--duration", str(duration), "--trials", "1"]
    argv += ["--seed", str(seed), "--json", "--quiet"]
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.exit(f"aa_coverage: smrbench failed: {done.stderr.strip().splitlines()[-1:]}")
    return float(json.loads(done.stdout)["throughput_ops_per_s"])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repetitions", type=int, default=20)
    parser.add_argument("--trials", type=int, default=5)
    parser.add_argument("--duration", type=float, default=0.3)
    parser.add_argument("--smrbench", type=Path, default=REPO / "build/release/bench/smrbench")
    parser.add_argument("options", nargs="*", help="smrbench options (after --)")
    args = parser.parse_args()
    options = args.options or DEFAULT
    covered = 0
    print("repetition  B/A     95% interval       covers 1.0")
    for repetition in range(args.repetitions):
        a: list[float] = []
        b: list[float] = []
        for trial in range(args.trials):
            seed = 1 + trial  # as smrlab seeds trial `trial` of both sides
            first, second = (a, b) if trial % 2 == 0 else (b, a)  # ABBA, as interleave does
            first.append(throughput(args.smrbench, options, args.duration, seed))
            second.append(throughput(args.smrbench, options, args.duration, seed))
        interval = bootstrap_ratio(a, b, seed=repetition)
        covered += interval.covers(1.0)
        print(
            f"{repetition + 1:>10}  {interval.ratio:.3f}  [{interval.low:.3f}, {interval.high:.3f}]"
            f"   {'yes' if interval.covers(1.0) else 'NO'}",
            flush=True,
        )
    share = covered / args.repetitions
    print(f"covered 1.0 in {covered} of {args.repetitions} ({share:.0%}; nominal 95%)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
