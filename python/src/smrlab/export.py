"""`smrlab export`: every stored trial as one flat row, for tools that are not smrlab.

A row holds the trial's provenance (experiment, machine and build identities and their
descriptions), its whole configuration as smrbench resolved it (``config``'s keys, unprefixed),
every statistic smrbench reported (nested objects flattened with dots: ``reclaimer.garbage_peak``,
``allocator.counters.tcache_flushes``, ``machine.cpu_model``), and the free-latency histogram
bucket by bucket: ``free_latency_ns.le_<N>`` counts the timed free() calls of at most N ns (and
above the previous bucket), for every bucket any exported trial used, 0 where a trial used none.
Lists (the load average, the caches) are kept as JSON text in CSV, as lists elsewhere.

CSV and JSON need nothing more; Parquet needs pyarrow (``pip install 'smrlab[parquet]'``).
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

from smrlab.errors import UsageError
from smrlab.outputs import write_atomically
from smrlab.store import Store

FORMATS = ("csv", "json", "parquet")
_HISTOGRAM = "free_latency_histogram"


def _flatten(value: Any, prefix: str, into: dict[str, Any]) -> None:
    if isinstance(value, dict):
        for key, item in value.items():
            _flatten(item, f"{prefix}.{key}" if prefix else str(key), into)
    else:
        into[prefix] = value


def trial_row(run: dict[str, Any]) -> tuple[dict[str, Any], dict[int, int]]:
    """One stored run as a flat row, and its latency histogram as {upper_ns: count}."""
    result = dict(run["result"])
    row: dict[str, Any] = {
        "experiment": run["experiment"],
        "trial": run["trial"],
        "machine_id": run["machine_id"],
        "build_id": run["build_id"],
        "timestamp": run["timestamp"],
    }
    row.update(result.pop("config", {}))
    result.pop("trials", None)  # one trial per stored run: its figures are the run's
    reclaimer = dict(result.pop("reclaimer", None) or {})
    histogram = reclaimer.pop(_HISTOGRAM, None) or {}
    result["reclaimer"] = reclaimer
    _flatten(result, "", row)
    buckets = dict(zip(histogram.get("upper_ns", []), histogram.get("counts", []), strict=True))
    return row, buckets


def rows(store: Store, experiment: str | None, every_build: bool) -> list[dict[str, Any]]:
    """Every exported row, with the histogram's bucket columns over all of them."""
    flat = [trial_row(run) for run in store.runs(experiment, every_build=every_build)]
    uppers = sorted({upper for _, buckets in flat for upper in buckets})
    for row, buckets in flat:
        for upper in uppers:
            row[f"free_latency_ns.le_{upper}"] = buckets.get(upper, 0)
    return [row for row, _ in flat]


def _columns(table: list[dict[str, Any]]) -> list[str]:
    """Every column in first-seen order: provenance and configuration first."""
    return list(dict.fromkeys(key for row in table for key in row))


def _text(value: Any) -> Any:
    return json.dumps(value) if isinstance(value, list | dict) else value


def write(table: list[dict[str, Any]], path: Path, fmt: str) -> None:
    """Writes the rows in ``fmt``; nothing is left half-written (atomic rename)."""
    columns = _columns(table)
    if fmt == "csv":

        def write_csv(temporary: Path) -> None:
            with temporary.open("w", newline="", encoding="utf-8") as file:
                writer = csv.DictWriter(file, fieldnames=columns, restval="")
                writer.writeheader()
                for row in table:
                    writer.writerow({key: _text(value) for key, value in row.items()})

        write_atomically(path, write_csv)
    elif fmt == "json":
        text = json.dumps([{key: row.get(key) for key in columns} for row in table], indent=1)
        write_atomically(path, lambda temporary: temporary.write_text(text + "\n"))
    elif fmt == "parquet":
        try:
            import pyarrow as pa
            import pyarrow.parquet as pq
        except ImportError:
            raise UsageError(
                "--format parquet needs pyarrow: pip install 'smrlab[parquet]'"
            ) from None
        data = {key: [row.get(key) for row in table] for key in columns}
        arrow = pa.table({key: _column(values) for key, values in data.items()})
        write_atomically(path, lambda temporary: pq.write_table(arrow, temporary))
    else:
        raise UsageError(f"--format: {fmt!r} is not one of {', '.join(FORMATS)}")


def _column(values: list[Any]) -> Any:
    """A Parquet column: as pyarrow infers it, or JSON text when the values mix types (a field
    null in old results, numbers in new ones, is still one type)."""
    import pyarrow as pa

    try:
        return pa.array(values)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return pa.array([None if value is None else json.dumps(value) for value in values])
