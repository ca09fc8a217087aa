"""smrbench's statistics as smrbench describes them: the names and units plots and tables show.

smrbench --list --json "statistics" (bench/statistics.cpp) gives every reported figure a short
label and a unit; the snapshot smrlab keeps of it (assets/smrbench_description.json, checked
against the smrbench of the same checkout by tests/python/test_grid.py) is read here, so that an
axis or a column is named where the figure is defined and nowhere else.
"""

from __future__ import annotations

from dataclasses import dataclass

from smrlab.options import load_description

# The display unit for a reported unit, and the divisor from one to the other: papers give
# throughput in Mops/s and memory in MiB.
_DISPLAY = {"ops/s": ("Mops/s", 1e6), "bytes": ("MiB", float(2**20))}


@dataclass(frozen=True)
class Shown:
    """A statistic as a plot or table shows it."""

    label: str
    unit: str
    divisor: float = 1.0

    @property
    def title(self) -> str:
        """An axis or column title, e.g. ``throughput (Mops/s)``."""
        return f"{self.label} ({self.unit})"

    def scale(self, value: float) -> float:
        """A reported value in the display unit."""
        return value / self.divisor


def _described() -> dict[tuple[str, str], dict[str, str]]:
    return {(row["object"], row["key"]): row for row in load_description()["statistics"]}


STATISTICS = _described()


def shown(where: str, key: str) -> Shown:
    """How to show statistic ``key`` of object ``where`` (run, trial, reclaimer, pool); a
    KeyError names a statistic smrbench does not report."""
    row = STATISTICS[(where, key)]
    unit, divisor = _DISPLAY.get(row["unit"], (row["unit"], 1.0))
    return Shown(row["label"], unit, divisor)


THROUGHPUT = shown("run", "throughput_ops_per_s")
PEAK_RSS = shown("run", "peak_rss_bytes")
GARBAGE = shown("reclaimer", "garbage_peak")
REMOTE_FREES = shown("reclaimer", "remote_frees_pct")
