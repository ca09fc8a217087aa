#!/usr/bin/env python3
"""The allocator/STM study's Tables 3 and 4 and Figure 6's ratios, in the paper's form, from a
result store that holds runs of experiments/stm_list.toml, stm_hash_set.toml and
stm_rbtree.toml (Baldassin, Borin and Araujo, TRANSACT 2014).

- Table 3: per structure (shift 5), the best and worst allocator at the thread count of the
  highest throughput, the speedup of the best over the worst, and whether it is outside the
  trials' spread (every trial of the best above every trial of the worst);
- Table 4: per thread count, each allocator's aborted transactions on the list (shift 5,
  median of trials); the paper's L1 miss-rate column comes from
  scripts/measure/stm_cachegrind.py, which simulates it;
- Figure 6: per allocator and thread count, median throughput at shift 4 over shift 5, minus
  one, with "~" where the two configurations' trial ranges overlap (inside the noise).

A store may hold an experiment at its quick and its paper size: only the runs of the longest
duration (the paper size) are used.

Usage: scripts/measure/stm_paper_tables.py [--db results/smrlab.db]
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python" / "src"))

from smrlab.allocator_plots import _allocator_rank  # noqa: E402
from smrlab.stm_plots import abort_rows, best_and_worst  # noqa: E402
from smrlab.store import Store  # noqa: E402


def paper_runs(store: Store, experiment: str) -> list[dict]:
    """The experiment's runs of its longest duration."""
    runs = store.runs(experiment)
    longest = max((run["duration"] or 0 for run in runs), default=0)
    return [run for run in runs if (run["duration"] or 0) == longest]


def table_3(store: Store) -> None:
    print("| structure | best | worst | speedup | threads | outside the spread |")
    print("|---|---|---|---:|---:|---|")
    for name in ("stm_list", "stm_hash_set", "stm_rbtree"):
        for row in best_and_worst(paper_runs(store, name)):
            if " · shift 5" not in row.title:
                continue
            print(
                f"| {name} | {row.best} ({row.best_mops:.3f} Mops/s) | {row.worst} "
                f"({row.worst_mops:.3f}) | {row.speedup_pct:.1f}% | {row.threads} | "
                f"{'yes' if row.beyond_spread else 'no'} |"
            )


def table_4(store: Store) -> None:
    rows = [r for r in abort_rows(paper_runs(store, "stm_list")) if " · shift 5" in r.title]
    allocators = sorted({r.allocator for r in rows}, key=_allocator_rank)
    cells: dict[int, dict[str, str]] = defaultdict(dict)
    for r in rows:
        cells[r.threads][r.allocator] = (
            f"{r.aborted_pct:.1f}% ({r.false_pct:.0f}% false, {r.lock_meet_pct:.0f}% lock met)"
        )
    print("| threads | " + " | ".join(allocators) + " |")
    print("|---:|" + "---:|" * len(allocators))
    for threads in sorted(cells):
        print(f"| {threads} | " + " | ".join(cells[threads].get(a, "") for a in allocators) + " |")


def figure_6(store: Store) -> None:
    by: dict[tuple[str, int, int], list[float]] = defaultdict(list)
    for run in paper_runs(store, "stm_list"):
        shift = run["result"]["config"]["ort_shift"]
        by[(run["alloc"], int(run["threads"]), shift)].append(run["throughput"] / 1e6)
    allocators = sorted({key[0] for key in by}, key=_allocator_rank)
    threads = sorted({key[1] for key in by})
    print("| threads | " + " | ".join(allocators) + " |")
    print("|---:|" + "---:|" * len(allocators))
    for count in threads:
        cells = []
        for alloc in allocators:
            fours, fives = by.get((alloc, count, 4)), by.get((alloc, count, 5))
            if not fours or not fives:
                cells.append("")
                continue
            ratio = 100 * (statistics.median(fours) / statistics.median(fives) - 1)
            overlap = min(fours) <= max(fives) and min(fives) <= max(fours)
            cells.append(f"{ratio:+.1f}%{' ~' if overlap else ''}")
        print(f"| {count} | " + " | ".join(cells) + " |")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", default=str(ROOT / "results" / "smrlab.db"))
    options = parser.parse_args()
    with Store(options.db, create=False) as store:
        print("## Table 3: best and worst allocator (shift 5)\n")
        table_3(store)
        print(
            "\n## Table 4: aborted transactions on the list (shift 5; false aborts' share of "
            "them, and the share that met a lock)\n"
        )
        table_4(store)
        print("\n## Figure 6: shift 4 over shift 5, minus one (~: trial ranges overlap)\n")
        figure_6(store)
    return 0


if __name__ == "__main__":
    sys.exit(main())
