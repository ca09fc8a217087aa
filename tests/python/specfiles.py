"""Writes timeline and garbage-series files exactly as docs/timeline-format.md specifies.

Synthetic files test the readers and plots on exact, known content (files smrbench really wrote
are tested in test_report.py). The data imitates a DEBRA trial: epoch changes by random
threads, each followed by a batch free on every thread whose length grows with the garbage, plus
scattered long free calls.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

CONFIG = {
    "ds": "dgt_bst",
    "reclaimer": "debra",
    "free": "batch",
    "alloc": "jemalloc",
    "threads": 8,
    "key_range": 20000,
    "insert": 50,
    "erase": 50,
    "duration": 0.25,
    "stall": False,
}


def timeline_events(
    threads: int = 8, duration_ns: int = 250_000_000, seed: int = 3, epochs: int = 60
) -> list[tuple[int, str, int, int, int]]:
    """(thread, kind, start_ns, end_ns, value) rows, grouped by thread in time order."""
    rng = np.random.default_rng(seed)
    changes = np.sort(rng.uniform(0, duration_ns, epochs)).astype(np.int64)
    per_thread: dict[int, list[tuple[int, str, int, int, int]]] = {t: [] for t in range(threads)}
    for epoch, when in enumerate(changes, start=2):
        changer = int(rng.integers(threads))
        per_thread[changer].append((changer, "epoch_change", int(when), int(when), epoch))
        for thread in range(threads):
            begin = int(when + rng.uniform(5_000, 400_000))
            length = int(rng.uniform(50_000, 1_500_000) * (1 + epoch / epochs))
            nodes = length // 40
            per_thread[thread].append((thread, "batch_free", begin, begin + length, nodes))
            if rng.random() < 0.3:
                call = begin + int(rng.uniform(0, length * 0.8))
                per_thread[thread].append(
                    (thread, "free_call", call, call + int(rng.uniform(20_000, 200_000)), 1)
                )
    # One prefill event (negative time) that readers drop by default.
    per_thread[0].append((0, "batch_free", -2_000_000, -1_000_000, 10))
    rows = []
    for thread in range(threads):
        rows.extend(sorted(per_thread[thread], key=lambda row: row[2]))
    return rows


def write_timeline(
    path: Path,
    rows: list[tuple[int, str, int, int, int]] | None = None,
    *,
    threads: int = 8,
    truncated: list[int] | None = None,
    config: dict | None = None,
    version: int = 1,
    fmt: str = "smrlab-timeline",
    end_ns: int = 250_000_000,
) -> Path:
    """Writes a timeline file (header line, CSV header row, rows)."""
    rows = timeline_events(threads) if rows is None else rows
    header = {
        "format": fmt,
        "version": version,
        "config": {**CONFIG, **(config or {}), "threads": threads},
        "allocator": {"name": "jemalloc", "version": "5.3.0"},
        "trial": 0,
        "threads": threads,
        "capacity_per_thread": 100000,
        "min_free_ns": 0,
        "measured_start_ns": 0,
        "measured_end_ns": end_ns,
        "truncated_threads": truncated or [],
        "events": len(rows),
    }
    lines = [json.dumps(header, separators=(",", ":")), "thread,kind,start_ns,end_ns,value"]
    lines += [f"{t},{k},{s},{e},{v}" for t, k, s, e, v in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def garbage_totals(points: int, free: str, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Start times and garbage of epochs 1..points (spiky for batch free)."""
    rng = np.random.default_rng(seed)
    times = np.cumsum(rng.uniform(100_000, 900_000, points)).astype(np.int64)
    base = 40_000 + rng.normal(0, 3000, points)
    if free == "batch":
        garbage = base + (rng.random(points) < 0.08) * rng.uniform(50_000, 200_000, points)
    else:
        garbage = base * 1.15 + rng.normal(0, 1500, points)
    return times, np.maximum(garbage, 0).astype(np.int64)


def write_garbage_series(
    path: Path,
    points: int = 400,
    *,
    free: str = "batch",
    seed: int = 5,
    config: dict | None = None,
    version: int = 2,
    threads: int = 4,
) -> Path:
    """Writes a garbage-series file whose epoch e holds garbage_totals()[1][e - 1] nodes:
    version 2 splits it over `threads` threads that begin the epoch 1 us apart (the remainder
    to the last), in time order as smrbench writes them; version 1 has one row per epoch."""
    times, totals = garbage_totals(points, free, seed)
    rows = []
    for epoch, (time, total) in enumerate(zip(times, totals, strict=True), 1):
        if version == 1:
            rows.append(f"{time},{epoch},{total}")
            continue
        share = int(total) // threads
        for thread in range(threads):
            mine = share if thread < threads - 1 else int(total) - share * (threads - 1)
            rows.append(f"{time + 1000 * thread},{epoch},{thread},{mine}")
    header = {
        "format": "smrlab-garbage-series",
        "version": version,
        "config": {**CONFIG, "free": free, **(config or {})},
        "trial": 0,
        "points": len(rows),
    }
    columns = "time_ns,epoch,garbage" if version == 1 else "time_ns,epoch,thread,garbage"
    path.write_text("\n".join([json.dumps(header), columns, *rows]) + "\n", encoding="utf-8")
    return path
