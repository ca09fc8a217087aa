#!/usr/bin/env python3
"""The Epochs paper's Figure 4 in numbers: garbage per epoch of every stored garbage series.

For each run of an experiment that recorded `garbage_series = true`, one table row: the
reclaimer and free policy, how many epochs, how many threads began each, and the median, mean
and maximum garbage per epoch, the epochs above 1.5x the median (the peaks batch free makes and
amortized free removes), and the coefficient of variation (standard deviation over mean).

    scripts/measure/garbage_per_epoch.py [--db results/smrlab.db] [--experiment epochs_timelines]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "python" / "src"))

from smrlab.store import Store  # noqa: E402
from smrlab.timeline import read_garbage_series  # noqa: E402


def row(item: dict) -> str:
    series = read_garbage_series(item["path"])
    garbage = series.garbage.astype(float)
    median = float(np.median(garbage))
    threads = (
        f"{int(series.threads.min())}–{int(series.threads.max())}"
        if series.threads is not None
        else "-"
    )
    peaks = int(np.sum(garbage > 1.5 * median))
    cv = float(np.std(garbage) / np.mean(garbage)) if np.mean(garbage) else 0.0
    config = item["result"]["config"]
    return (
        f"| `{config['reclaimer']}` | {config['free']} | {len(garbage)} | {threads} | "
        f"{median:,.0f} | {float(np.mean(garbage)):,.0f} | {float(np.max(garbage)):,.0f} | "
        f"{peaks} | {cv:.2f} |"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", type=Path, default=REPO / "results" / "smrlab.db")
    parser.add_argument("--experiment", default="epochs_timelines")
    args = parser.parse_args()
    with Store(args.db, write=False) as store:
        items = [item for item in store.files(args.experiment, "garbage_series") if item["exists"]]
    if not items:
        sys.exit(f"garbage_per_epoch: no garbage series of {args.experiment} in {args.db}")
    print(
        "| reclaimer | free | epochs | threads per epoch | median | mean | max "
        "| epochs > 1.5× median | CV |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for item in items:
        print(row(item))
    return 0


if __name__ == "__main__":
    sys.exit(main())
