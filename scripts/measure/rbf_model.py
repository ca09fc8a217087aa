#!/usr/bin/env python3
"""Remote batch free on the Epochs paper's 192-thread machine, predicted from free() costs
measured on this one.

Measures with scripts/measure/free_costs.cpp (built here when --free-costs is not given), each
allocator and situation once per round, rounds interleaved, medians over them; then prints the
measured costs and the model's Table 2 (python/src/smrlab/rbf_model.py says how) beside the
paper's.

    scripts/measure/rbf_model.py [--rounds 7] [--blocks 262144] [--owners 64]
        [--flush-share ALLOC=SHARE ...] [--free-costs PATH] [--raw FILE.jsonl]
        [--from-raw FILE.jsonl]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT / "python" / "src"))

from smrlab.rbf_model import (  # noqa: E402
    CALIBRATION_ROW,
    FLUSH_SHARE,
    PAPER_TABLE2,
    AllocatorCosts,
    paper_row,
    predict,
    service_factor_matching,
    station,
)

ALLOCATORS = ("jemalloc", "tcmalloc", "mimalloc")


def situations(owners: int) -> dict[str, list[str]]:
    return {
        "local": ["--owners", "0", "--freers", "1"],
        "local_kept": ["--owners", "0", "--freers", "1", "--mode", "amortized"],
        "local_kept_pair": ["--owners", "0", "--freers", "2", "--mode", "amortized"],
        "kept": ["--owners", str(owners), "--freers", "1", "--mode", "amortized"],
        "remote": ["--owners", str(owners), "--freers", "1"],
        "one_owner": ["--owners", "1", "--freers", "1"],
        "one_owner_pair": ["--owners", "1", "--freers", "2"],
    }


def build(directory: str) -> str:
    compiler = os.environ.get("CXX") or shutil.which("g++") or shutil.which("c++")
    if compiler is None:
        sys.exit("rbf_model.py: no C++ compiler (g++ or $CXX) to build free_costs")
    binary = str(Path(directory) / "free_costs")
    bench = ROOT / "bench"
    command = [
        compiler, "-std=c++20", "-O2", "-DNDEBUG", f"-I{bench}", "-pthread", "-o", binary,
        str(ROOT / "scripts" / "measure" / "free_costs.cpp"),
        str(bench / "allocator.cpp"), str(bench / "allocator_stats.cpp"), "-ldl",
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.exit(f"rbf_model.py: building free_costs failed: {done.stderr.strip()}")
    return binary


def measure(args: argparse.Namespace, binary: str) -> list[dict]:
    env = dict(os.environ)
    # Enough jemalloc arenas for every owner to have its own, as on the paper's machine
    # (4 per CPU there; 8 on two CPUs here).
    env["MALLOC_CONF"] = f"narenas:{4 * (args.owners + 2)}"
    rows = []
    for round_ in range(args.rounds):
        for allocator in ALLOCATORS:
            for name, flags in situations(args.owners).items():
                command = [binary, "--alloc", allocator, "--blocks", str(args.blocks),
                           "--seed", str(round_ + 1), *flags]  # fmt: skip
                done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
                if done.returncode != 0:
                    sys.exit(f"rbf_model.py: {' '.join(command)}: {done.stderr.strip()}")
                row = json.loads(done.stdout)
                row["situation"] = name
                row["round"] = round_
                rows.append(row)
        print(f"rbf_model.py: round {round_ + 1}/{args.rounds} done", file=sys.stderr)
    return rows


def median_of(rows: list[dict], allocator: str, situation: str, key) -> float | None:
    values = [key(r) for r in rows if r["alloc"] == allocator and r["situation"] == situation]
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def spread(rows: list[dict], allocator: str, situation: str) -> str:
    values = [
        r["ns_per_free"] for r in rows if r["alloc"] == allocator and r["situation"] == situation
    ]
    return f"{statistics.median(values):.0f} ({min(values):.0f}–{max(values):.0f})"


def costs_of(rows: list[dict], allocator: str) -> AllocatorCosts:
    def ns(situation: str) -> float:
        return median_of(rows, allocator, situation, lambda r: r["ns_per_free"])

    def counter(situation: str, name: str) -> float | None:
        return median_of(
            rows, allocator, situation,
            lambda r: r["counters"][name] / r["frees"] if r["counters"] else None,
        )  # fmt: skip

    flushes = counter("remote", "tcache_flushes")
    return AllocatorCosts(
        local=ns("local"),
        local_kept=ns("local_kept"),
        local_kept_pair=ns("local_kept_pair"),
        kept=ns("kept"),
        remote=ns("remote"),
        one_owner=ns("one_owner"),
        one_owner_pair=ns("one_owner_pair"),
        flush_size=1 / flushes if flushes else None,
        locks_per_node_many=counter("remote", "bin_lock_acquisitions"),
        locks_per_node_one=counter("one_owner", "bin_lock_acquisitions"),
    )


def print_costs(rows: list[dict], costs: dict[str, AllocatorCosts], owners: int) -> None:
    print(f"ns per free here, median (min–max) of {max(r['round'] for r in rows) + 1} rounds:\n")
    print(
        "| allocator | local, batch | local, amortized | local, amortized, 2 freers "
        "| remote, amortized "
        f"| remote, {owners} owners, batch | one owner | one owner, 2 freers "
        "| shared service per node | stations at 192 thr | own work per node |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for allocator, c in costs.items():
        s = station(allocator, c, 192)
        cells = [spread(rows, allocator, k) for k in situations(owners)]
        print(
            f"| {allocator} | " + " | ".join(cells)
            + f" | {s.service:.1f} | {s.stations} | {s.think:.1f} |"
        )  # fmt: skip
    jemalloc = costs.get("jemalloc")
    if jemalloc and jemalloc.flush_size:
        print(
            f"\njemalloc: {jemalloc.flush_size:.0f} blocks per flush; bin locks per freed node "
            f"{jemalloc.locks_per_node_many:.3f} with {owners} owners, "
            f"{jemalloc.locks_per_node_one:.3f} with one"
        )


def predictions(costs: dict[str, AllocatorCosts], flush_share: dict[str, float]) -> dict:
    """{(allocator, policy): (share bursts, share spread, AF/batch bursts, AF/batch spread,
    ns per free bursts)}, and the calibration."""
    cal, bursts = predict(costs, flush_share, bursts=True)
    _, spread_rows = predict(costs, flush_share, bursts=False)
    b = {(p.allocator, p.policy): p for p in bursts}
    s = {(p.allocator, p.policy): p for p in spread_rows}
    out = {}
    for key, p in b.items():
        batch_b, batch_s = b[(key[0], "batch")], s[(key[0], "batch")]
        out[key] = (
            100 * p.share,
            100 * s[key].share,
            p.ops_per_s / batch_b.ops_per_s,
            s[key].ops_per_s / batch_s.ops_per_s,
            p.free_ns,
        )
    return {"calibration": cal, "rows": out}


def print_predictions(rows: list[dict], flush_share: dict[str, float]) -> None:
    rounds = sorted({r["round"] for r in rows})
    by_round = []
    for round_ in rounds:
        mine = [r for r in rows if r["round"] == round_]
        by_round.append(predictions({a: costs_of(mine, a) for a in ALLOCATORS}, flush_share))
    pooled = predictions({a: costs_of(rows, a) for a in ALLOCATORS}, flush_share)
    cal = pooled["calibration"]
    print(
        f"\nCalibrated on the paper's {' '.join(CALIBRATION_ROW)} row: {cal.work_ns:.0f} ns of "
        f"work per operation outside free(), a free {cal.scale:.1f}x slower than here "
        f"({min(p['calibration'].scale for p in by_round):.1f}–"
        f"{max(p['calibration'].scale for p in by_round):.1f} by round); share of "
        "amortized-freed nodes that reach the shared station: "
        + ", ".join(f"{a} {flush_share[a]:.2f}" for a in ALLOCATORS)
        + f". Model cells: from the medians, then (min–max) of the model run on each of the "
        f"{len(rounds)} rounds alone.\n"
    )
    print(
        "| allocator | free | paper % in free | model % in free, bursts | model, spread "
        "| paper ns per free | model ns per free | paper AF/batch | model AF/batch, bursts "
        "| model, spread |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for (allocator, policy), mine in pooled["rows"].items():
        paper_ops, _, paper_ns = paper_row(allocator, policy)
        per_round = [p["rows"][(allocator, policy)] for p in by_round]

        def model(i: int, digits: int, mine=mine, per_round=per_round) -> str:
            values = [r[i] for r in per_round]
            return f"{mine[i]:.{digits}f} ({min(values):.{digits}f}–{max(values):.{digits}f})"

        paper_ratio = ratio_b = ratio_s = ""
        if policy == "amortized":
            paper_ratio = f"{paper_ops / paper_row(allocator, 'batch')[0]:.2f}"
            ratio_b, ratio_s = model(2, 2), model(3, 2)
        mark = " (calibration)" if (allocator, policy) == CALIBRATION_ROW else ""
        print(
            f"| {allocator} | {policy}{mark} | {PAPER_TABLE2[(allocator, policy)][2]:.1f} "
            f"| {model(0, 1)} | {model(1, 1)} | {paper_ns:.0f} | {model(4, 0)} "
            f"| {paper_ratio} | {ratio_b} | {ratio_s} |"
        )


def print_factors(rows: list[dict], flush_share: dict[str, float]) -> None:
    costs = {a: costs_of(rows, a) for a in ALLOCATORS}
    print(
        "\nThe factor on each allocator's shared service (against the rest of a free) at which "
        "the model gives the paper's batch time in free, and what the model then says:\n"
    )
    print("| allocator | factor | model % in free, batch; amortized | model AF/batch | paper |")
    print("|---|---|---|---|---|")
    for allocator in ALLOCATORS:
        factor = service_factor_matching(costs, flush_share, allocator)
        paper = (
            f"{PAPER_TABLE2[(allocator, 'batch')][2]:.1f}; "
            f"{PAPER_TABLE2[(allocator, 'amortized')][2]:.1f}; "
            f"{paper_row(allocator, 'amortized')[0] / paper_row(allocator, 'batch')[0]:.2f}"
        )
        if factor is None:
            print(f"| {allocator} | none in [0.01, 1000] | | | {paper} |")
            continue
        trial = dict(costs)
        trial[allocator] = replace(costs[allocator], service_factor=factor)
        mine = predictions(trial, flush_share)["rows"]
        batch, amortized = mine[(allocator, "batch")], mine[(allocator, "amortized")]
        print(
            f"| {allocator} | {factor:.2f} | {batch[0]:.1f}; {amortized[0]:.1f} "
            f"| {amortized[2]:.2f} | {paper} |"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--blocks", type=int, default=262144, help="blocks each freer frees")
    parser.add_argument("--owners", type=int, default=64, help="threads that allocated them")
    parser.add_argument(
        "--flush-share", action="append", default=[], metavar="ALLOC=SHARE",
        help="share of amortized-freed nodes that reach the shared station (default "
        + ", ".join(f"{a}={v}" for a, v in FLUSH_SHARE.items()) + ")",
    )  # fmt: skip
    parser.add_argument("--free-costs", help="a built free_costs (else built in a temp dir)")
    parser.add_argument("--raw", help="also write every run's JSON line here")
    parser.add_argument("--from-raw", help="model these runs (a --raw file) instead of measuring")
    args = parser.parse_args()
    if args.rounds < 1 or args.blocks < 1 or args.owners < 2:
        sys.exit("rbf_model.py: --rounds and --blocks want at least 1, --owners at least 2")
    flush_share = dict(FLUSH_SHARE)
    for item in args.flush_share:
        allocator, _, value = item.partition("=")
        try:
            share = float(value)
        except ValueError:
            share = -1.0
        if allocator not in flush_share or not 0 <= share <= 1:
            sys.exit(f"rbf_model.py: --flush-share wants ALLOC=SHARE in [0, 1], got '{item}'")
        flush_share[allocator] = share

    if args.from_raw:
        with Path(args.from_raw).open() as f:
            rows = [json.loads(line) for line in f if line.strip()]
    else:
        with tempfile.TemporaryDirectory() as directory:
            rows = measure(args, args.free_costs or build(directory))
    if args.raw:
        with Path(args.raw).open("w") as f:
            f.writelines(json.dumps(r) + "\n" for r in rows)
    costs = {a: costs_of(rows, a) for a in ALLOCATORS}
    print_costs(rows, costs, args.owners)
    print_predictions(rows, flush_share)
    print_factors(rows, flush_share)


if __name__ == "__main__":
    main()
