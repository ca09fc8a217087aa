#!/usr/bin/env python3
"""smrbench side by side with the Epochs paper's own artifact, in interleaved pairs.

The artifact is Kim, Brown and Singh's benchmark for "Are Your Epochs Too Epic? Batch Free
Can Be Harmful" (PPoPP 2024, doi:10.1145/3627535.3638491), github ajccosta/amortizedfree-setbench,
a setbench derivative. This script builds its microbenchmark binaries for the DGT BST and the
ABtree from a checkout you point it at (make in its microbench/, skipped for binaries already
built), then runs each cell (structure x threads x reclaimer) as pairs, the artifact and smrbench
one after the other with the order alternating from round to round, so that machine drift hits
both alike. Both run the same workload: keys 1..K prefilled to half by the worker threads, 50 %
inserts and 50 % erases, the same allocator preloaded. It prints a Markdown table: the median
throughput of each (min-max over the rounds), the median of the per-round ratios
smrbench/artifact with their min-max, and each program's median peak RSS.

    scripts/measure/vs_artifact.py --artifact ~/amortizedfree-setbench --rounds 5

The artifact's reclaimers and what smrbench runs against them:

    none      none, batch free            debra_df  debra, amortized free
    debra     debra, batch free           qsbr      qsbr_ibr, batch free (the IBR benchmark's
    token4    token_periodic, amortized             QSBR, which the artifact's qsbr is)

Every artifact run must print "Validation OK." and every smrbench run must validate, or the
script stops with the command that failed. The artifact computes throughput over the requested
time, smrbench over the measured time (about a millisecond longer).
"""

from __future__ import annotations

import argparse
import ctypes.util
import itertools
import json
import os
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

PROG = "vs_artifact.py"

# smrbench structure -> the artifact's ds/ directory.
ARTIFACT_DS = {"dgt_bst": "guerraoui_ext_bst_ticket", "abtree": "brown_ext_abtree_lf"}

# The artifact's reclaimer binary -> (its make target's reclaimer, smrbench reclaimer, free policy).
# The make rule of debra (and none, qsbr) builds the _df (deamortized free) binary too.
RECLAIMERS = {
    "none": ("none", "none", "batch"),
    "debra": ("debra", "debra", "batch"),
    "debra_df": ("debra", "debra", "amortized"),
    "qsbr": ("qsbr", "qsbr_ibr", "batch"),
    "token4": ("token4", "token_periodic", "amortized"),
}

# smrbench allocator name -> the shared library preloaded into the artifact.
ALLOCATOR_LIBRARIES = {"jemalloc": "jemalloc", "tcmalloc": "tcmalloc", "mimalloc": "mimalloc"}


class MeasureError(Exception):
    """One line for stderr, then exit status 1."""


@dataclass(frozen=True)
class Cell:
    ds: str
    threads: int
    reclaimer: str  # the artifact's name (RECLAIMERS)


PROGRAMS = ("artifact", "smrbench")


@dataclass
class Samples:
    """Per program (PROGRAMS): throughput and peak RSS, one entry per round."""

    throughput: dict[str, list[float]] = field(default_factory=lambda: {p: [] for p in PROGRAMS})
    rss: dict[str, list[int]] = field(default_factory=lambda: {p: [] for p in PROGRAMS})

    def ratios(self) -> list[float]:
        pairs = zip(self.throughput["artifact"], self.throughput["smrbench"], strict=True)
        return [s / a for a, s in pairs]


def binary_name(ds: str, reclaimer: str) -> str:
    return f"ubench_{ARTIFACT_DS[ds]}.alloc_new.reclaim_{reclaimer}.pool_none.out"


def make_target(ds: str, reclaimer: str) -> str:
    return binary_name(ds, RECLAIMERS[reclaimer][0])


def build_artifact(microbench: Path, cells: list[Cell], jobs: int, rebuild: bool) -> None:
    """Runs the artifact's make for each binary the cells need that is not built yet."""
    needed = {(c.ds, c.reclaimer) for c in cells}
    targets = sorted(
        {
            make_target(ds, r)
            for ds, r in needed
            if rebuild or not (microbench / "bin" / binary_name(ds, r)).is_file()
        }
    )
    if not targets:
        return
    # The Makefile asks ldconfig for libnuma, which finds the runtime library without its
    # header; link with it only when the header is there too.
    has_numa = int(Path("/usr/include/numa.h").is_file())
    command = ["make", f"-j{jobs}", f"has_libnuma={has_numa}", *targets]
    print(f"{PROG}: building {len(targets)} artifact targets in {microbench}", file=sys.stderr)
    done = subprocess.run(command, cwd=microbench, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        tail = done.stderr.strip().splitlines()[-1:] or ["(no output)"]
        raise MeasureError(f"building the artifact failed ({' '.join(command)}): {tail[0]}")
    for ds, r in sorted(needed):
        if not (microbench / "bin" / binary_name(ds, r)).is_file():
            raise MeasureError(f"the artifact's make did not produce bin/{binary_name(ds, r)}")


def artifact_command(microbench: Path, cell: Cell, args: argparse.Namespace) -> list[str]:
    return [
        str(microbench / "bin" / binary_name(cell.ds, cell.reclaimer)),
        "-nwork", str(cell.threads),
        "-nprefill", str(cell.threads),
        "-i", "50",
        "-d", "50",
        "-rq", "0",
        "-rqsize", "1",
        "-k", str(args.key_range),
        "-t", str(round(args.duration * 1000)),
    ]  # fmt: skip


def smrbench_command(cell: Cell, args: argparse.Namespace, round_index: int) -> list[str]:
    _, reclaimer, free = RECLAIMERS[cell.reclaimer]
    return [
        str(args.smrbench), "--json", "--quiet",
        "--ds", cell.ds,
        "--reclaimer", reclaimer,
        "--free", free,
        "--alloc", args.alloc,
        "--threads", str(cell.threads),
        "--key-range", str(args.key_range),
        "--insert", "50",
        "--erase", "50",
        "--duration", str(args.duration),
        "--trials", "1",
        "--seed", str(round_index + 1),
        *shlex.split(args.smrbench_args),
    ]  # fmt: skip


THROUGHPUT = re.compile(r"^total_throughput=(\d+)\s*$", re.MULTILINE)


def parse_artifact(out: str, command: list[str]) -> float:
    """The artifact's total_throughput, after its own validation passed."""
    if "Validation OK." not in out:
        raise MeasureError(f"the artifact did not validate: {' '.join(command)}")
    found = THROUGHPUT.findall(out)
    if len(found) != 1:
        raise MeasureError(
            f"no single total_throughput= line in the artifact's output: {' '.join(command)}"
        )
    return float(found[0])


def parse_smrbench(out: str, command: list[str]) -> float:
    try:
        result = json.loads(out)
    except json.JSONDecodeError:
        raise MeasureError(f"smrbench printed no JSON: {' '.join(command)}") from None
    if not result.get("validated"):
        raise MeasureError(f"smrbench did not validate: {' '.join(command)}")
    return float(result["throughput_ops_per_s"])


def measure(command: list[str], env: dict[str, str], timeout: float) -> tuple[str, int]:
    """Runs command to its end; returns its stdout and its peak RSS in bytes.

    Output goes to temporary files and the child is reaped with wait4, whose rusage is this
    child's alone (RUSAGE_CHILDREN would be the maximum over every child so far)."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        process = subprocess.Popen(command, stdout=out, stderr=err, text=True, env=env)
        deadline = time.monotonic() + timeout
        while True:
            pid, status, usage = os.wait4(process.pid, os.WNOHANG)
            if pid != 0:
                break
            if time.monotonic() > deadline:
                process.kill()
                os.wait4(process.pid, 0)
                process.returncode = -9
                raise MeasureError(f"no answer within {timeout:.0f} s: {' '.join(command)}")
            time.sleep(0.02)
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    if process.returncode != 0:
        last = (stderr.strip() or stdout.strip()).splitlines()[-1:] or ["(no output)"]
        raise MeasureError(f"exit status {process.returncode}: {' '.join(command)}: {last[0]}")
    return stdout, usage.ru_maxrss * 1024  # Linux reports kilobytes


def allocator_environment(alloc: str) -> dict[str, str]:
    """The environment of the artifact's runs: the allocator preloaded, as smrbench does."""
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    if alloc == "glibc":
        return env
    library = ctypes.util.find_library(ALLOCATOR_LIBRARIES.get(alloc, alloc))
    if library is None:
        raise MeasureError(
            f"--alloc {alloc}: no lib{ALLOCATOR_LIBRARIES.get(alloc, alloc)} on this machine"
        )
    env["LD_PRELOAD"] = library
    return env


def run_pairs(cells: list[Cell], args: argparse.Namespace, microbench: Path) -> dict[Cell, Samples]:
    """Every cell once per round, the two programs back to back, the order alternating by round."""
    artifact_env = allocator_environment(args.alloc)
    smrbench_env = dict(os.environ)
    smrbench_env.pop("LD_PRELOAD", None)  # smrbench preloads --alloc itself
    timeout = args.duration * 20 + 300  # prefill of millions of keys, teardown
    samples = {cell: Samples() for cell in cells}
    total = args.rounds * len(cells)
    for done, (round_index, cell) in enumerate(itertools.product(range(args.rounds), cells), 1):
        print(
            f"{PROG}: round {round_index + 1}/{args.rounds}, pair {done}/{total}: "
            f"{cell.ds} {cell.threads} threads {cell.reclaimer}",
            file=sys.stderr,
        )
        runs = {
            "artifact": (artifact_command(microbench, cell, args), artifact_env, parse_artifact),
            "smrbench": (smrbench_command(cell, args, round_index), smrbench_env, parse_smrbench),
        }
        for program in PROGRAMS if round_index % 2 == 0 else reversed(PROGRAMS):
            command, env, parse = runs[program]
            out, rss = measure(command, env, timeout)
            samples[cell].throughput[program].append(parse(out, command))
            samples[cell].rss[program].append(rss)
    return samples


def spread(values: list[float], scale: float, digits: int) -> str:
    return (
        f"{statistics.median(values) / scale:.{digits}f} "
        f"({min(values) / scale:.{digits}f}–{max(values) / scale:.{digits}f})"
    )


def table(samples: dict[Cell, Samples]) -> str:
    lines = [
        "| structure | threads | artifact | smrbench as | artifact Mops/s | smrbench Mops/s "
        "| smrbench/artifact | RSS MB artifact / smrbench |",
        "|---|---:|---|---|---:|---:|---:|---:|",
    ]
    for cell, s in samples.items():
        _, reclaimer, free = RECLAIMERS[cell.reclaimer]
        rss = " / ".join(f"{statistics.median(s.rss[p]) / 2**20:.0f}" for p in PROGRAMS)
        throughput = " | ".join(spread(s.throughput[p], 1e6, 2) for p in PROGRAMS)
        lines.append(
            f"| {cell.ds} | {cell.threads} | {cell.reclaimer} | {reclaimer} {free} "
            f"| {throughput} | {spread(s.ratios(), 1, 2)} | {rss} |"
        )
    return "\n".join(lines)


def raw_samples(samples: dict[Cell, Samples], args: argparse.Namespace) -> dict:
    cells = [
        {
            "ds": c.ds,
            "threads": c.threads,
            "artifact_reclaimer": c.reclaimer,
            "smrbench_reclaimer": RECLAIMERS[c.reclaimer][1],
            "free": RECLAIMERS[c.reclaimer][2],
            **{f"{p}_ops_per_s": s.throughput[p] for p in PROGRAMS},
            **{f"{p}_peak_rss_bytes": s.rss[p] for p in PROGRAMS},
        }
        for c, s in samples.items()
    ]
    return {
        "key_range": args.key_range,
        "duration": args.duration,
        "alloc": args.alloc,
        "cells": cells,
    }


def parse_arguments(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__.splitlines()[0])
    parser.add_argument(
        "--artifact",
        required=True,
        type=Path,
        help="a checkout of github.com/ajccosta/amortizedfree-setbench",
    )
    parser.add_argument("--smrbench", type=Path, default=Path("build/release/bench/smrbench"))
    parser.add_argument("--ds", nargs="+", default=list(ARTIFACT_DS), choices=list(ARTIFACT_DS))
    parser.add_argument(
        "--reclaimers", nargs="+", default=list(RECLAIMERS), choices=list(RECLAIMERS)
    )
    parser.add_argument("--threads", nargs="+", type=int, default=[2, 8])
    parser.add_argument("--key-range", type=int, default=2_000_000)
    parser.add_argument("--duration", type=float, default=3.0, help="seconds per run")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--alloc", default="jemalloc", choices=["glibc", *ALLOCATOR_LIBRARIES])
    parser.add_argument(
        "--jobs", type=int, default=os.cpu_count() or 1, help="make -j for the artifact"
    )
    parser.add_argument(
        "--rebuild", action="store_true", help="build the artifact's binaries again"
    )
    parser.add_argument("--build-only", action="store_true")
    parser.add_argument(
        "--smrbench-args",
        default="",
        help="more smrbench options for every run, one string: --smrbench-args='--bag-size 16000'",
    )
    parser.add_argument("--json", type=Path, help="also write every sample here")
    args = parser.parse_args(argv)
    if args.rounds < 1 or args.duration <= 0 or args.key_range < 2 or min(args.threads) < 1:
        raise MeasureError(
            "--rounds, --duration, --threads and --key-range (2 or more) must be positive"
        )
    return args


def check_inputs(args: argparse.Namespace) -> Path:
    microbench = args.artifact / "microbench"
    if not (microbench / "Makefile").is_file() or not (microbench / "main.cpp").is_file():
        raise MeasureError(f"--artifact {args.artifact}: no microbench/Makefile and main.cpp there")
    if not args.build_only and not (args.smrbench.is_file() and os.access(args.smrbench, os.X_OK)):
        raise MeasureError(f"--smrbench {args.smrbench}: not an executable (build it first)")
    if shutil.which("make") is None:
        raise MeasureError("make is not installed (the artifact builds with make and g++)")
    return microbench


def main(argv: list[str]) -> int:
    try:
        args = parse_arguments(argv)
        microbench = check_inputs(args)
        cells = [Cell(*c) for c in itertools.product(args.ds, args.threads, args.reclaimers)]
        build_artifact(microbench, cells, args.jobs, args.rebuild)
        if args.build_only:
            return 0
        samples = run_pairs(cells, args, microbench)
    except MeasureError as failure:
        print(f"{PROG}: {failure}", file=sys.stderr)
        return 1
    print(table(samples))
    if args.json is not None:
        args.json.write_text(json.dumps(raw_samples(samples, args), indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
