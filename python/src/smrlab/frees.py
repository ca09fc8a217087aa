"""Where a stored run's frees went: the per-run measures of remote batch free (Epochs paper,
Section 3 and Table 2) that the figures and the report share. Each takes a run as Store.runs
gives it and returns None where the run does not have the measure (remote frees not counted, an
allocator without counters, nothing freed)."""

from __future__ import annotations

from typing import Any


def remote_free_pct(run: dict[str, Any]) -> float | None:
    """The freed nodes another thread had allocated, in % (--count-remote-frees)."""
    if run["remote_frees"] is None or not run["freed"]:
        return None
    return 100.0 * run["remote_frees"] / run["freed"]


def allocator_counters(run: dict[str, Any]) -> dict[str, Any] | None:
    """The allocator's counters of the run's median trial (jemalloc's), or None."""
    return (run["result"].get("allocator") or {}).get("counters")


def per_kilo_freed(run: dict[str, Any], counter: str) -> float | None:
    """Allocator counter ``counter`` (tcache_flushes, bin_lock_waits, ...) per 1,000 nodes
    freed."""
    counters = allocator_counters(run)
    if not counters or not run["freed"]:
        return None
    return 1000.0 * counters[counter] / run["freed"]


def time_in_free_pct(run: dict[str, Any]) -> float | None:
    """Time in free() over the worker threads × the median trial's measured interval, in %."""
    trials = run["result"].get("trials") or []
    median = next((t for t in trials if t.get("trial") == run["result"].get("median_trial")), {})
    busy = (median.get("measured_seconds") or 0) * (run["threads"] or 0)
    return None if not busy or run["free_seconds"] is None else 100.0 * run["free_seconds"] / busy
